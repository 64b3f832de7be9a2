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
#include "llmroof/layout/speculative_setup.hpp"

namespace llmroof {

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

/// The draft model beside `d`, on the same devices in draft_layout.
inline deployment draft_beside(const deployment& d, const speculation& s) {
  return {*s.draft, s.draft_pr ? *s.draft_pr : d.pr, d.roof(), {draft_layout(*s.draft, d.parallel()), std::nullopt},
          d.engine};
}

/// The k draft passes of `s` on `d` for `batch` sequences at `context`, s:
/// MTP and EAGLE, one average decoder layer of `plain` (the step without
/// speculation) and lm_head per draft token; a draft model, k of its own
/// decode steps on the same devices; n-gram, none.
inline seconds draft_time(const deployment& d, const speculation& s, double batch, double context,
                          const phase_timing& plain) {
  const double k = s.draft_tokens;
  if (s.method == spec_method::draft) return k * detail::draft_beside(d, s).decode(batch, context).estimate;
  if (s.method == spec_method::ngram) return make_seconds(0);
  // One decoder layer and lm_head per draft token (an EAGLE-3 head is one
  // layer over the target's fused hidden states, as an MTP module is).
  seconds ops = make_seconds(0);
  for (const op_time& t : plain.times) ops += t.estimate();
  const seconds head = detail::kind_time(plain, op_kind::lm_head);
  const seconds ends = head + detail::kind_time(plain, op_kind::embedding);
  const seconds layer = (ops - ends) / double(d.model.num_layers);
  // An EAGLE-3 head scores a vocabulary of its own, draft_vocab_size 32,000
  // (yuhuili/EAGLE3-LLaMA3.1-Instruct-8B config.json), mapped to the target's.
  const double vocab = s.method == spec_method::eagle ? std::min(1.0, eagle_draft_vocab / d.model.vocab_size) : 1.0;
  // An EAGLE head is BF16 beside a target in fewer bits: its layer reads
  // 16 / b times the bytes of the target's (memory-bound decode).
  const double wider = s.method == spec_method::eagle ? std::max(1.0, 16.0 / d.pr.weights.bits) : 1.0;
  return k * (wider * layer + ends - (1 - vocab) * head);
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
  detail::check_speculation(s, d.model, d.parallel(), d.offload().has_value(), d.engine);
  const double k = s.draft_tokens;
  // The plain step built in place: a phase's op list is a few kB.
  speculative_step out{.tokens_per_step = accepted_tokens(s),
                       .draft = make_seconds(0),
                       .verify = d.decode(batch, context, k + 1).estimate,
                       .plain = d.decode(batch, context)};
  if (s.method != spec_method::ngram) out.draft = detail::draft_time(d, s, batch, context, out.plain);
  return out;
}

/// A decode step as the load model counts it: how long it lasts, the
/// tokens it keeps per sequence and the tokens each sequence puts through
/// the layers (1 and 1 without speculation; accepted_tokens and k + 1 with).
struct token_step {
  double seconds = 0;
  double tokens = 1;
  double width = 1;
  double draft = 0;  ///< of `seconds`, the draft passes: they run before the verify, never beside a prompt's chunk
  /// Of the verify (the plain step without speculation), the time its
  /// compute-limited ops take: what a prompt chunk beside it adds to.
  double compute = 0;
  [[nodiscard]] double per_token() const { return seconds / tokens; }
};

/// The deployment's decode step of `batch` sequences at `context`: its plain
/// step (deployment::decode), or, when it decodes speculatively, the draft
/// and verify of speculate(). The one place the load model asks for a step.
inline token_step step_of(const deployment& d, double batch, double context) {
  if (!d.speculative) {
    const phase_seconds plain = d.decode_seconds(batch, context);
    return {plain.estimate.value(), 1, 1, 0, plain.compute.value()};
  }
  // speculate()'s step without its plain step where the drafts do not need
  // it (n-gram, a draft model): the deployment checked the setup.
  const speculation& s = *d.speculative;
  const double width = s.draft_tokens + 1.0;
  const phase_seconds verify = d.decode_seconds(batch, context, width);
  const seconds draft = s.method == spec_method::mtp || s.method == spec_method::eagle
                            ? detail::draft_time(d, s, batch, context, d.decode(batch, context))
                            : detail::draft_time(d, s, batch, context, phase_timing{});
  return {(draft + verify.estimate).value(), accepted_tokens(s), width, draft.value(), verify.compute.value()};
}

/// A mixed step's seconds: a decode step `st` (its draft passes first) with
/// prompt chunks of `prefill` s beside its verify. One pass reads the
/// weights once for both, so it lasts the longer of the two, but what both
/// spend on compute adds up: at least the verify's compute-limited time
/// (st.compute) plus the chunks' (`prefill_compute`, s: phase_timing's
/// compute_time), which decides once both are compute-bound (large decode
/// batches beside long chunks). The open loop's mixed steps and the step
/// simulation's (detail::run_cohorts) both take it.
inline double mixed_step_seconds(const token_step& st, double prefill, double prefill_compute) {
  return st.draft + std::max({st.seconds - st.draft, prefill, st.compute + prefill_compute});
}

/// The step whose roofs set the devices' power while `d` decodes `batch`
/// sequences at `context`: the plain step, or the verify step of width k + 1
/// when speculative (its draft passes are memory-bound as a plain step is).
inline phase_timing power_step(const deployment& d, double batch, double context) {
  return d.decode(batch, context, d.speculative ? d.speculative->draft_tokens + 1.0 : 1.0);
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
  const deployment with = d.with_speculation(s);
  const memory_plan plain = d.with_speculation(std::nullopt).memory(1, context, shared);
  const drafter_load x = detail::drafter_terms(s, d.model, d.pr, d.dev(), d.parallel(), d.engine);
  speculative_memory out;
  out.weights = x.weights;
  out.kv_per_sequence = x.kv_share * plain.kv_per_sequence;
  out.lookahead_per_sequence = x.lookahead * plain.kv_per_token;
  out.max_users_plain = plain.max_sequences;
  out.max_users = with.memory(1, context, shared).max_sequences;
  out.batch_budget = std::floor(d.engine.max_batched_tokens / (s.draft_tokens + 1.0));
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
  /// Whether `n` sequences of `context` tokens fit with the drafter's
  /// weights, KV and lookahead slots (memory.max_users).
  [[nodiscard]] bool holds(double n) const { return n <= memory.max_users; }
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
