// Storage formats of one deployment: weights (per module where a checkpoint
// mixes them), KV cache, embedding table, lm_head and activations; the bytes
// a model's weights take in them.
#pragma once

#include <optional>

#include "llmroof/model/architecture.hpp"
#include "llmroof/units/formats.hpp"
#include "llmroof/units/units.hpp"

namespace llmroof {

/// Storage formats of a deployment. Quantized checkpoints (FP8, AWQ, GPTQ,
/// NVFP4) keep the embedding table and lm_head in 16 bit, as HF and vLLM
/// checkpoints do; GGUF files quantize them too (their mix averages cover it).
struct precision {
  numeric_format weights = find_format("bf16");     ///< linear layers, unless overridden below
  numeric_format kv = find_format("bf16");          ///< KV cache
  numeric_format embedding = find_format("bf16");   ///< input table
  numeric_format lm_head = find_format("bf16");     ///< output projection
  numeric_format activations = find_format("bf16");
  /// Per-module overrides, e.g. gpt-oss keeps attention in bf16 beside MXFP4
  /// experts; a config.json's quantization_config sets them.
  std::optional<numeric_format> attention;
  std::optional<numeric_format> ffn;      ///< dense FFN layers
  std::optional<numeric_format> experts; ///< routed and shared experts

  [[nodiscard]] const numeric_format& attention_format() const { return attention ? *attention : weights; }
  [[nodiscard]] const numeric_format& ffn_format() const { return ffn ? *ffn : weights; }
  [[nodiscard]] const numeric_format& experts_format() const { return experts ? *experts : weights; }

  /// The usual deployment of `weights` with a `kv` cache (see above).
  static precision of(const numeric_format& weights, const numeric_format& kv) {
    precision p;
    p.weights = weights;
    p.kv = kv;
    // GGUF block formats: q4_0 ... q6_k, the q*_k_* mixes and iq4_*.
    const bool gguf = weights.name.rfind('q', 0) == 0 || weights.name.rfind("iq", 0) == 0;
    // mlx-lm's convert quantizes every layer with to_quantized, Embedding
    // included (nn.quantize's default predicate), so the table and a tied or
    // separate head are stored like the linear layers.
    const bool mlx = weights.name.rfind("mlx-", 0) == 0;
    const bool wide = weights.bits >= 16;
    if (gguf || mlx || wide) {
      p.embedding = weights;
      p.lm_head = weights;
    }
    return p;
  }
};

/// Stored weight bytes: linear layers in the weight format, embedding and
/// lm_head in theirs, norms and routers in 16 bit. MTP layers are not loaded.
inline bytes weight_bytes(const architecture& a, const precision& pr) {
  const param_counts p = count_parameters(a);
  return pr.attention_format().bytes_of(p.attention) + pr.ffn_format().bytes_of(p.dense_ffn) +
         pr.experts_format().bytes_of(p.routed_experts + p.shared_experts) +
         pr.embedding.bytes_of(p.embedding) + pr.lm_head.bytes_of(p.lm_head) +
         pr.activations.bytes_of(p.norms + p.router);
}

}  // namespace llmroof
