// Speculative decoding: a drafter proposes k tokens per sequence, the target
// verifies them in one step of width k + 1, and the accepted ones (plus the
// target's own next token) are kept.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "llmroof/deployment.hpp"

namespace llmroof {

/// Who drafts: the model's own multi-token-prediction layers (DeepSeek-V3,
/// GLM-4.5, Qwen3-Next: `num_nextn_predict_layers`), a separate draft model,
/// an EAGLE/EAGLE-3 head (one decoder layer trained on the target's hidden
/// states), or n-gram / prompt lookup (no GPU work).
enum class spec_method : std::uint8_t { mtp, draft, eagle, ngram };

inline constexpr std::array<std::string_view, 4> spec_method_names{"mtp", "draft", "eagle", "ngram"};

constexpr std::string_view to_string(spec_method m) { return detail::enum_name(m, spec_method_names); }

/// A method by name. Throws std::invalid_argument "<field> must be mtp,
/// draft, eagle or ngram (got '...')".
inline spec_method parse_spec_method(std::string_view name, std::string_view field = "method") {
  if (const auto m = detail::enum_from_name<spec_method>(name, spec_method_names)) return *m;
  throw std::invalid_argument(std::string(field) + " must be mtp, draft, eagle or ngram (got '" + std::string(name) + "')");
}

/// The vocabulary an EAGLE-3 head drafts from (draft_vocab_size, 32,000 in
/// yuhuili/EAGLE3-LLaMA3.1-Instruct-8B's config.json).
inline constexpr double eagle_draft_vocab = 32000;

/// A speculative-decoding setup. `acceptance` holds the conditional
/// acceptance of each draft position (the chance the i-th draft token is
/// accepted once the ones before it were), one value for all positions, or
/// nothing for the method's published default (MTP only, below).
struct speculation {
  spec_method method = spec_method::mtp;
  int draft_tokens = 1;                 ///< k
  std::vector<double> acceptance;       ///< conditional, per position (or one for all)
  std::optional<architecture> draft;    ///< spec_method::draft: the draft model
  std::optional<precision> draft_pr;    ///< its formats (default: the target's)
};

namespace detail {

// The checks of position_acceptance, allocating nothing (speculate runs per estimate).
inline void check_acceptance(const speculation& s) {
  detail::require_in("draft_tokens", s.draft_tokens, 1, 16);
  const auto k = static_cast<std::size_t>(s.draft_tokens);
  if (s.acceptance.empty() && s.method != spec_method::mtp && s.method != spec_method::eagle) {
    throw std::invalid_argument("acceptance must be given for " + std::string(to_string(s.method)) +
                                " speculation (no published default: it depends on the workload)");
  }
  if (s.acceptance.size() > 1 && s.acceptance.size() != k) {
    throw std::invalid_argument("acceptance must hold one value or one per draft token (" + std::to_string(k) +
                                ", got " + std::to_string(s.acceptance.size()) + ")");
  }
  for (double x : s.acceptance) detail::require_in("acceptance", x, 0, 1);
}

// EAGLE-3's conditional acceptance of the first three positions: cumulative
// 76%, 56%, 43% (MiniMax-M3, k = 3; vLLM blog 2026-07-13); beyond, their mean.
inline constexpr std::array<double, 3> eagle_acceptance{0.76, 0.56 / 0.76, 0.43 / 0.56};
inline constexpr double eagle_acceptance_beyond = (0.76 + 0.56 / 0.76 + 0.43 / 0.56) / 3;

// The i-th position's conditional acceptance, the default filled in (checked first).
inline double acceptance_at(const speculation& s, std::size_t i) {
  if (s.acceptance.empty() && s.method == spec_method::eagle) {
    return i < eagle_acceptance.size() ? eagle_acceptance[i] : eagle_acceptance_beyond;
  }
  if (s.acceptance.empty()) return s.draft_tokens == 1 ? 0.85 : 0.60;
  return s.acceptance.size() == 1 ? s.acceptance.front() : s.acceptance[i];
}

}  // namespace detail

/// The conditional acceptance of each of the k positions, the default
/// filled in. MTP defaults: k = 1: 0.85 (DeepSeek-V3 technical report,
/// section 5.4.3: second-token acceptance 85-90%, the low end); k > 1: 0.60
/// at every position (SGLang's DeepSeek-V3 MTP with 3 draft tokens, accept
/// length 2.18 (SGLang blog 2025-07-17): 1 + a + a^2 + a^3 = 2.18 at
/// a = 0.60). EAGLE: 0.76, 0.737, 0.768 (cumulative 76/56/43%, MiniMax-M3
/// EAGLE-3 at k = 3, vLLM blog 2026-07-13), 0.755 beyond. Draft models and
/// n-grams have no default (their acceptance is the workload's):
/// std::invalid_argument naming the field.
inline std::vector<double> position_acceptance(const speculation& s) {
  detail::check_acceptance(s);
  std::vector<double> a(static_cast<std::size_t>(s.draft_tokens));
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = detail::acceptance_at(s, i);
  return a;
}

/// Tokens each verify step keeps per sequence: the target's own token plus
/// the expected accepted drafts, 1 + sum_i prod_{j<=i} a_j (i.i.d. rate a:
/// (1 - a^(k+1)) / (1 - a)).
inline double accepted_tokens(const speculation& s) {
  detail::check_acceptance(s);
  double total = 1;
  double reach = 1;
  for (std::size_t i = 0; i < static_cast<std::size_t>(s.draft_tokens); ++i) {
    reach *= detail::acceptance_at(s, i);
    total += reach;
  }
  return total;
}

/// One speculative step of `batch` sequences at `context` cached tokens.
struct speculative_step {
  double tokens_per_step = 1;  ///< per sequence (accepted_tokens)
  seconds draft = make_seconds(0);   ///< the k draft passes
  seconds verify = make_seconds(0);  ///< the target's step of width k + 1
  phase_timing plain;                ///< the same batch decoding without speculation
  [[nodiscard]] seconds step() const { return draft + verify; }
  [[nodiscard]] double tokens_per_s_per_user() const { return tokens_per_step / step().value(); }
  [[nodiscard]] double speedup() const { return tokens_per_s_per_user() * plain.estimate.value(); }
};

namespace detail {

/// Time of one op kind in a phase (its estimates summed).
inline seconds kind_time(const phase_timing& p, op_kind k) {
  seconds t = make_seconds(0);
  for (std::size_t i = 0; i < p.counts.ops.size(); ++i) {
    if (p.counts.ops[i].kind == k) t += p.times[i].estimate();
  }
  return t;
}

/// The draft model beside `d`: laid out as the target (layout_for), or on
/// one device when its heads do not split that way (vLLM's
/// draft_tensor_parallel_size 1).
inline deployment draft_beside(const deployment& d, const speculation& s) {
  const precision pr = s.draft_pr ? *s.draft_pr : d.pr;
  try {
    return d.with_model(*s.draft, pr);
  } catch (const std::invalid_argument&) {
    parallel_plan one = d.parallel();
    one.tp = one.pp = one.ep = 1;
    return {*s.draft, pr, d.roof(), {one, std::nullopt}, d.engine};
  }
}

}  // namespace detail

/// Speculative decoding on deployment `d` (one device or tensor/expert
/// parallel; not pipeline-parallel or offloaded: std::invalid_argument).
///  - verify: a decode step of width k + 1 per sequence (weights read once;
///    FLOP, activations, lm_head and KV writes x (k + 1); each sequence's KV
///    cache read once, as FlashMLA/FlashInfer verify kernels do);
///  - draft, MTP and EAGLE: k passes of one block (one average decoder layer
///    of the target's decode step, with its collectives) and lm_head; a draft model:
///    k of its own decode steps on the same devices; n-gram: none.
inline speculative_step speculate(const deployment& d, const speculation& s, double batch, double context) {
  d.require_device();
  if (d.parallel().pp > 1 || d.offload()) {  // pipelines and offloads verify stage by stage: not modelled
    throw std::invalid_argument("speculative decoding is modelled on one device or tensor/expert parallel (got " +
                                std::string(d.offload() ? "an offload" : "pp " + std::to_string(d.parallel().pp)) + ")");
  }
  const auto& runs = engine_row_of(d.engine.id).speculation;
  if (std::find(runs.begin(), runs.end(), to_string(s.method)) == runs.end()) {
    std::string list;
    for (std::string_view m : runs) list += (list.empty() ? "" : ", ") + std::string(m);
    throw std::invalid_argument(std::string(d.engine.name()) + " does not run " + std::string(to_string(s.method)) +
                                " speculation (" + (list.empty() ? "it runs none" : "it runs " + list) + ")");
  }
  if (s.method == spec_method::mtp && d.model.moe.mtp_layers < 1) {
    throw std::invalid_argument("model '" + d.model.id +
                                "' has no multi-token-prediction layers (num_nextn_predict_layers): use a draft model "
                                "or n-gram speculation");
  }
  if (s.method == spec_method::draft && !s.draft) throw std::invalid_argument("draft speculation needs a draft model");
  if (s.method != spec_method::draft && s.draft) {
    throw std::invalid_argument("a draft model is for draft speculation (got " + std::string(to_string(s.method)) + ")");
  }
  // One tokenizer, embedding tables padded apart (Qwen2.5-72B 152,064 rows,
  // Qwen2.5-0.5B 151,936, the pair LM Studio and vLLM run): within 1%.
  if (s.draft && std::abs(double(s.draft->vocab_size) - d.model.vocab_size) > 0.01 * d.model.vocab_size) {
    throw std::invalid_argument("draft model '" + s.draft->id + "' has another vocabulary (" +
                                std::to_string(s.draft->vocab_size) + " tokens, the target " +
                                std::to_string(d.model.vocab_size) + "): its drafts cannot be verified");
  }
  const double k = s.draft_tokens;
  // The plain step built in place: a phase's op list is a few kB.
  speculative_step out{.tokens_per_step = accepted_tokens(s),
                       .draft = make_seconds(0),
                       .verify = d.decode(batch, context, k + 1).estimate,
                       .plain = d.decode(batch, context)};
  if (s.method == spec_method::mtp || s.method == spec_method::eagle) {
    // One decoder layer and lm_head per draft token (an EAGLE-3 head is one
    // layer over the target's fused hidden states, as an MTP module is).
    const phase_timing& p = out.plain;
    seconds ops = make_seconds(0);
    for (const op_time& t : p.times) ops += t.estimate();
    const seconds head = detail::kind_time(p, op_kind::lm_head);
    const seconds ends = head + detail::kind_time(p, op_kind::embedding);
    const seconds layer = (ops - ends) / double(d.model.num_layers);
    // An EAGLE-3 head scores a vocabulary of its own, draft_vocab_size 32,000
    // (yuhuili/EAGLE3-LLaMA3.1-Instruct-8B config.json), mapped to the target's.
    const double vocab = s.method == spec_method::eagle ? std::min(1.0, eagle_draft_vocab / d.model.vocab_size) : 1.0;
    // An EAGLE head is BF16 beside a target in fewer bits: its layer reads
    // 16 / b times the bytes of the target's (memory-bound decode).
    const double wider = s.method == spec_method::eagle ? std::max(1.0, 16.0 / d.pr.weights.bits) : 1.0;
    out.draft = k * (wider * layer + ends - (1 - vocab) * head);
  } else if (s.method == spec_method::draft) {
    out.draft = k * detail::draft_beside(d, s).decode(batch, context).estimate;
  }
  return out;
}

/// What speculation costs in one device's memory at a context, and the
/// sequences that still fit.
struct speculative_memory {
  /// Weights the drafter adds per device: the MTP modules (engines load them
  /// only when MTP is on: DeepSeek-V3's 14B beside its 671B), a draft model
  /// on the same devices, or none (n-gram).
  bytes weights = make_bytes(0);
  /// The drafter's KV per sequence at the context, per device (an MTP
  /// module's one attention layer, or the draft model's whole cache).
  bytes kv_per_sequence = make_bytes(0);
  /// Token slots reserved per sequence for the drafts (vLLM allocates k
  /// lookahead slots), per device.
  bytes lookahead_per_sequence = make_bytes(0);
  double max_users_plain = 0;  ///< sequences at the context without speculation
  double max_users = 0;        ///< with it
  /// Sequences a step of max_num_batched_tokens holds: each verifies k + 1 tokens.
  double batch_budget = 0;
};

/// `shared`: prompt-prefix tokens every sequence shares (prefix_cache.hpp).
/// Throws std::invalid_argument as speculate() on the method's inputs.
inline speculative_memory speculation_memory(const deployment& d, const speculation& s, double context,
                                             double shared = 0) {
  detail::require_tokens("context", context);
  const double k = s.draft_tokens;
  detail::require_in("draft_tokens", k, 1, 16);
  const memory_plan m = d.memory(1, context, shared);
  speculative_memory out;
  if (s.method == spec_method::mtp) {
    const param_counts pc = count_parameters(d.model);
    const numeric_format& f = d.model.is_moe() ? d.pr.experts_format() : d.pr.weights;
    out.weights = f.bytes_of(pc.mtp) / double(d.devices());
    out.kv_per_sequence = double(d.model.moe.mtp_layers) / d.model.num_layers * m.kv_per_sequence;
  } else if (s.method == spec_method::eagle) {
    // One decoder layer with a dense FFN of the model's width, the fc fusing
    // three layers' hidden states (3d x d) and a 32,000-row lm_head, in BF16
    // as EAGLE-3 heads are published (yuhuili/EAGLE3-LLaMA3.1-Instruct-8B);
    // its q/k/v take 2d inputs.
    const architecture& a = d.model;
    const double dd = a.hidden_size;
    const double ffn = a.ffn_size > 0 ? dense_ffn_params(a) : 3.0 * dd * a.moe.expert_ffn;
    const double head = std::min(eagle_draft_vocab, double(a.vocab_size)) * dd;
    // q, k and v read [embedding; fused hidden] (2d inputs): d (h + 2g) d_h more than a layer's.
    const double wide_qkv = dd * (a.num_heads + 2.0 * a.num_kv_heads) * a.head_dim;
    out.weights = find_format("bf16").bytes_of(attention_params(a, layer_kind::global) + wide_qkv + ffn + 3 * dd * dd +
                                               head) /
                  double(d.devices());
    out.kv_per_sequence = m.kv_per_sequence / double(a.num_layers);
  } else if (s.method == spec_method::draft) {
    if (!s.draft) throw std::invalid_argument("draft speculation needs a draft model");
    const memory_plan dm = detail::draft_beside(d, s).memory(1, context);
    out.weights = dm.weights;
    out.kv_per_sequence = dm.kv_per_sequence;
  }
  out.lookahead_per_sequence = k * m.kv_per_token;
  out.max_users_plain = m.max_sequences;
  // n sequences: n x (per + drafter + lookahead) less n - 1 copies of a shared prefix.
  const double per = (m.kv_per_sequence + out.kv_per_sequence + out.lookahead_per_sequence - m.kv_shared).value();
  const double budget = (m.kv_budget - out.weights - m.kv_shared).value();
  const double replicas = d.parallel().attention_data_parallel() ? d.parallel().devices() : 1;
  out.max_users = m.weights_fit && budget > 0 && per > 0 ? replicas * std::floor(budget / per) : 0;
  out.batch_budget = std::floor(d.engine.max_batched_tokens / (k + 1));
  return out;
}

/// A speculative setup against batch: the step at `batch`, and at 1, 2, 4,
/// ... max_batch with and without speculation (`llmroof speculate`).
struct speculative_table {
  double batch = 1;
  double context = 0;
  std::vector<double> acceptance;       ///< per position, defaults filled in
  speculative_step at;                  ///< at `batch`
  std::vector<double> batches;
  std::vector<speculative_step> rows;   ///< one per batch
  std::optional<double> stops_paying;   ///< first batch with speedup <= 1
  speculative_memory memory;            ///< at `context`
};

/// `shared` as speculation_memory's. Throws std::invalid_argument as
/// speculate(), and on max_batch < 1.
inline speculative_table speculate_against_batch(const deployment& d, const speculation& s, double batch,
                                                 double context, double max_batch = 1024, double shared = 0) {
  detail::require_in("max_batch", max_batch, 1, 1e6);
  speculative_table t;
  t.batch = batch;
  t.context = context;
  t.acceptance = position_acceptance(s);
  t.at = speculate(d, s, batch, context);
  t.memory = speculation_memory(d, s, context, shared);
  for (double b = 1; b <= max_batch; b *= 2) {
    t.batches.push_back(b);
    t.rows.push_back(speculate(d, s, b, context));
    if (!t.stops_paying && t.rows.back().speedup() <= 1) t.stops_paying = b;
  }
  return t;
}

}  // namespace llmroof
