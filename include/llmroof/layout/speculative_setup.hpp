// A speculative-decoding setup: who drafts, how many tokens, how often they
// are accepted, and the tokens each verify step keeps. What it costs on a
// deployment is speculative_step.hpp's; a deployment carries one (deployment.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "llmroof/model/architecture.hpp"
#include "llmroof/detail/check.hpp"
#include "llmroof/detail/enum_names.hpp"
#include "llmroof/engine/engine.hpp"
#include "llmroof/layout/parallel.hpp"
#include "llmroof/model/precision.hpp"

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

namespace detail {

/// Whether engine `e` is a release from before 2025: a "2023"/"2024" row or
/// vLLM before 0.8.
inline bool released_before_2025(const engine_settings& e) {
  if (e.version == "2023" || e.version == "2024") return true;
  // vLLM's numbered releases before 0.8 (2024's): the one version rule of engine.hpp.
  return e.id == engine_id::vllm && vllm_v0(e.version);
}

/// The tokenizer lineage of a model family (an HF model_type or a GGUF
/// general.architecture): models of one lineage share a vocabulary (Qwen2.5
/// to Qwen3.5, DeepSeek-V2 to V3.2, GLM-4 to GLM-5, Mistral and Mixtral,
/// Gemma 3 and 4); empty for a custom model. Different lineages never verify
/// each other's drafts.
inline std::string_view tokenizer_family(std::string_view family) {
  static constexpr std::pair<std::string_view, std::string_view> lineages[] = {
      {"qwen", "qwen"},       {"deepseek", "deepseek"}, {"glm", "glm"},     {"chatglm", "glm"},
      {"gemma", "gemma"},     {"mistral", "mistral"},   {"mixtral", "mistral"}, {"minimax", "minimax"},
      {"llama4", "llama4"},   {"llama", "llama"},       {"phi", "phi"},     {"gpt_oss", "gpt-oss"},
      {"gpt-oss", "gpt-oss"}, {"kimi", "kimi"}};
  for (const auto& [prefix, lineage] : lineages) {
    if (family.substr(0, prefix.size()) == prefix) return lineage;
  }
  return family;
}

/// A setup a deployment can run: its acceptance, the engine running the
/// method, the model's MTP layers, the draft's vocabulary, one device or
/// tensor/expert parallel without offload. Throws std::invalid_argument
/// naming what is wrong.
inline void check_speculation(const speculation& s, const architecture& target, const parallel_plan& p,
                              bool offloaded, const engine_settings& e) {
  check_acceptance(s);
  if (p.pp > 1 || offloaded) {  // pipelines and offloads verify stage by stage: not modelled
    throw std::invalid_argument("speculative decoding is modelled on one device or tensor/expert parallel (got " +
                                std::string(offloaded ? "an offload" : "pp " + std::to_string(p.pp)) + ")");
  }
  const auto& runs = engine_row_of(e.id).speculation;
  if (std::find(runs.begin(), runs.end(), to_string(s.method)) == runs.end()) {
    std::string list;
    for (std::string_view m : runs) list += (list.empty() ? "" : ", ") + std::string(m);
    throw std::invalid_argument(std::string(e.name()) + " does not run " + std::string(to_string(s.method)) +
                                " speculation (" + (list.empty() ? "it runs none" : "it runs " + list) + ")");
  }
  // EAGLE-3 heads (2025) and MTP drafting (DeepSeek-V3's, vLLM 0.7.3 and
  // SGLang 0.4.3 of early 2025) are not in the releases before: TensorRT-LLM
  // and SGLang's 2023/2024 rows, vLLM before 0.8.
  if ((s.method == spec_method::eagle || s.method == spec_method::mtp) && released_before_2025(e)) {
    throw std::invalid_argument(std::string(e.name()) + "@" + e.version + " predates " +
                                (s.method == spec_method::eagle ? "EAGLE-3 heads" : "MTP drafting") +
                                " (2025): give a current release");
  }
  if (s.method == spec_method::mtp && target.moe.mtp_layers < 1) {
    throw std::invalid_argument("model '" + target.id +
                                "' has no multi-token-prediction layers (num_nextn_predict_layers): use a draft model "
                                "or n-gram speculation");
  }
  if (s.method == spec_method::draft && !s.draft) throw std::invalid_argument("draft speculation needs a draft model");
  if (s.method != spec_method::draft && s.draft) {
    throw std::invalid_argument("a draft model is for draft speculation (got " + std::string(to_string(s.method)) + ")");
  }
  // One tokenizer, embedding tables padded apart (Qwen2.5-72B 152,064 rows,
  // Qwen2.5-0.5B 151,936, the pair LM Studio and vLLM run): within 1%.
  if (s.draft && std::abs(double(s.draft->vocab_size) - target.vocab_size) > 0.01 * target.vocab_size) {
    throw std::invalid_argument("draft model '" + s.draft->id + "' has another vocabulary (" +
                                std::to_string(s.draft->vocab_size) + " tokens, the target " +
                                std::to_string(target.vocab_size) + "): its drafts cannot be verified");
  }
  // Sizes alone do not make one tokenizer: Llama 3's 128,256 tokens are 0.8%
  // from DeepSeek-V3's 129,280, GLM-4.5's 151,552 0.25% from Qwen's 151,936,
  // Mistral 7B's 32,000 are Llama 2's count. Each lineage trains its own.
  if (s.draft) {
    const std::string_view a = tokenizer_family(s.draft->family), b = tokenizer_family(target.family);
    if (!a.empty() && !b.empty() && a != b) {
      throw std::invalid_argument("draft model '" + s.draft->id + "' has another tokenizer (the " + std::string(a) +
                                  " family's; '" + target.id + "' has the " + std::string(b) +
                                  " family's): its drafts cannot be verified");
    }
  }
}

/// A draft model's layout beside a target laid out as `p`: the target's
/// (layout_for), or one device when its heads do not split that way (vLLM's
/// draft_tensor_parallel_size 1).
inline parallel_plan draft_layout(const architecture& draft, const parallel_plan& p) {
  try {
    parallel_plan q = layout_for(draft, p);
    validate(q, draft);
    return q;
  } catch (const std::invalid_argument&) {
    parallel_plan one = p;
    one.tp = one.pp = one.ep = 1;
    one.dp_attention = false;
    return one;
  }
}

/// What speculation `s` adds to one device's memory, the target `a` in
/// `pr` laid out as `p` on `dev` under engine `e` (plan_memory_parallel's
/// drafter): the MTP modules (engines load them only when MTP is on:
/// DeepSeek-V3's 14B beside its 671B) and their attention layers' KV; an
/// EAGLE-3 head (one decoder layer with a dense FFN of the model's width, the
/// fc fusing three layers' hidden states (3d x d), q/k/v over 2d inputs and a
/// 32,000-row lm_head, in BF16 as yuhuili/EAGLE3-LLaMA3.1-Instruct-8B is
/// published) and one layer of KV; a draft model laid out as the target
/// (layout_for; on one device when its heads do not split that way: vLLM's
/// draft_tensor_parallel_size 1) with its own cache, which under
/// data-parallel attention every device holds for all users; n-gram, none.
/// Every method reserves k lookahead slots per sequence.
inline drafter_load drafter_terms(const speculation& s, const architecture& a, const precision& pr, const device& dev,
                                  const parallel_plan& p, const engine_settings& e) {
  drafter_load out;
  out.lookahead = s.draft_tokens;
  const double n = p.devices();
  if (s.method == spec_method::mtp) {
    const param_counts pc = count_parameters(a);
    const numeric_format& f = a.is_moe() ? pr.experts_format() : pr.weights;
    out.weights = f.bytes_of(pc.mtp) / n;
    out.kv_share = double(a.moe.mtp_layers) / a.num_layers;
  } else if (s.method == spec_method::eagle) {
    const double d = a.hidden_size;
    const double ffn = a.ffn_size > 0 ? dense_ffn_params(a) : 3.0 * d * a.moe.expert_ffn;
    const double head = std::min(eagle_draft_vocab, double(a.vocab_size)) * d;
    // q, k and v read [embedding; fused hidden] (2d inputs): d (h + 2g) d_h more than a layer's.
    const double wide_qkv = d * (a.num_heads + 2.0 * a.num_kv_heads) * a.head_dim;
    out.weights =
        find_format("bf16").bytes_of(attention_params(a, layer_kind::global) + wide_qkv + ffn + 3 * d * d + head) / n;
    out.kv_share = 1.0 / a.num_layers;
  } else if (s.method == spec_method::draft && s.draft) {
    const precision dp = s.draft_pr ? *s.draft_pr : pr;
    const memory_plan dm = plan_memory_parallel(*s.draft, dp, dev, draft_layout(*s.draft, p), 1, 1, e);
    const memory_plan tm = plan_memory_parallel(a, pr, dev, p, 1, 1, e);
    const double replicas = p.attention_data_parallel() ? n : 1;
    out.weights = dm.weights;
    out.kv_share = tm.kv_per_token.value() > 0 ? replicas * dm.kv_per_token.value() / tm.kv_per_token.value() : 0;
  }
  return out;
}

}  // namespace detail

}  // namespace llmroof
