// Prefix caching: what a prompt prefix every request shares (a system
// prompt, tool definitions) saves on a deployment. A request that finds it in
// the engine's cache prefills only the rest of its prompt, attending over the
// whole of it; block-sharing engines hold it once for all running sequences.
#pragma once

#include <algorithm>
#include <cmath>

#include "llmroof/deployment.hpp"
#include "llmroof/serving/workload.hpp"

namespace llmroof {

/// A workload's shared prefix on one deployment.
struct prefix_reuse {
  double prefix = 0;  ///< the workload's shared prompt tokens
  /// Prompt tokens a cache hit skips: the prefix in whole cache blocks (vLLM
  /// hashes full blocks of block_size; SGLang's radix tree and llama.cpp's
  /// slots match token by token), never the prompt's last token (every engine
  /// recomputes it to sample the first output token). 0 without caching.
  double cached = 0;
  double hit = 0;     ///< share of requests that find it cached (0 when nothing is cached)
  /// Tokens a running sequence shares on average, one copy in memory: hit x
  /// `cached` on block-sharing engines (the sequences that found the prefix
  /// hold it once, those that missed their own), 0 where each slot keeps its own
  /// (llama.cpp). Hybrid linear-attention models are assumed to keep their
  /// recurrent state at block boundaries, as vLLM's and SGLang's hybrid
  /// caches do.
  double shared = 0;
  /// Mean prompt tokens a request computes: prompt - hit x cached.
  double computed = 0;
  /// Tokens each of a set of identical requests skips (lockstep, a burst):
  /// they all find the prefix (hit 1) or none does.
  [[nodiscard]] double cached_by_all() const { return hit > 0 ? cached : 0; }
};

/// The one place a workload's prefix meets the engine: its prefix_caching
/// setting and the row's shares_prefix_blocks. Throws std::invalid_argument
/// on invalid workload fields.
inline prefix_reuse reuse_of(const deployment& d, const workload& w) {
  validate(w);
  prefix_reuse r;
  r.prefix = w.prefix;
  const double prompt = w.prompt_tokens();
  r.computed = prompt;
  if (w.prefix <= 0 || !d.engine.prefix_caching) return r;
  const bool blocks = engine_row_of(d.engine.id).shares_prefix_blocks;
  const double granule = blocks ? d.engine.block_tokens : 1;
  r.cached = std::floor(std::min(w.prefix, prompt - 1) / granule) * granule;
  if (r.cached <= 0) {
    r.cached = 0;
    return r;
  }
  r.hit = w.prefix_hit.value_or(1.0);
  // The requests that find it share one copy; a request that misses (its
  // prefix another one: a system prompt of another tenant) holds its own.
  // Running sequences share hit x cached tokens apiece on average: all of
  // the prefix at hit 1, nothing at hit 0, and no cliff between.
  r.shared = blocks ? r.hit * r.cached : 0;
  r.computed = prompt - r.hit * r.cached;
  return r;
}

/// Memory of `users` sequences of `context` tokens of workload `w` on `d`:
/// the shared prefix held once where the engine shares its blocks.
inline memory_plan memory_of(const deployment& d, const workload& w, double users, double context) {
  return d.memory(users, context, reuse_of(d, w).shared);
}

/// A request's prefill on a cache hit: the prompt's uncached tokens after the
/// cached ones (attention still reads all of them); the whole prompt when
/// nothing is cached.
inline phase_timing prefill_on_hit(const deployment& d, const workload& w, const prefix_reuse& r) {
  const double prompt = w.prompt_tokens();
  return d.prefill(prompt - r.cached, r.cached);
}

}  // namespace llmroof
