// KV-cache sizes: bytes per token per layer kind, and per sequence at a
// context, for GQA/MHA/MQA, MLA latents, sliding windows and linear-attention
// state, with paged-block rounding.
#pragma once

#include <vector>

#include <algorithm>
#include <cmath>

#include "llmroof/model/architecture.hpp"
#include "llmroof/units/formats.hpp"
#include "llmroof/units/units.hpp"

namespace llmroof {

/// Bits per element of linear-attention (Gated DeltaNet) state: engines keep
/// it in the model dtype (vLLM mamba_ssm_cache_dtype "auto" = bf16), whatever
/// the KV format.
inline constexpr double linear_state_bits = 16.0;

/// Bytes one cached token costs in one layer of kind k; 0 for linear layers.
/// GQA: 2 * g * d_h * b/8 (a global layer's own g and d_h where it has
/// them). MLA: (kv_lora_rank + qk_rope_head_dim) * b/8, the latent the
/// serving engines store.
constexpr bytes kv_bytes_per_token(const architecture& a, layer_kind k, const numeric_format& kv) {
  if (k == layer_kind::linear) return make_bytes(0);
  if (a.attention == attention_kind::mla) {
    return kv.bytes_of(double(a.mla.kv_lora_rank) + a.mla.qk_rope_head_dim);
  }
  return kv.bytes_of(2.0 * kv_heads_of(a, k) * head_dim_of(a, k));
}

/// Bytes one cached token costs over all layers, while the context is below
/// every sliding window (the linear-growth slope).
constexpr bytes kv_bytes_per_token(const architecture& a, const numeric_format& kv) {
  return double(a.count_layers(layer_kind::global)) * kv_bytes_per_token(a, layer_kind::global, kv) +
         double(a.count_layers(layer_kind::sliding)) *
             kv_bytes_per_token(a, layer_kind::sliding, kv);
}

/// Bytes one more cached token costs once the context is past every sliding
/// window: the global layers' alone (the slope the cache keeps growing at).
/// Equal to kv_bytes_per_token(a, kv) for a model without windows.
constexpr bytes kv_bytes_per_token_past_windows(const architecture& a, const numeric_format& kv) {
  if (a.sliding_window <= 0) return kv_bytes_per_token(a, kv);
  return double(a.count_layers(layer_kind::global)) * kv_bytes_per_token(a, layer_kind::global, kv);
}

/// Tokens a layer of kind k holds for a sequence of `context` tokens.
constexpr double tokens_held(const architecture& a, layer_kind k, double context) {
  switch (k) {
    case layer_kind::global: return context;
    case layer_kind::sliding: return context < a.sliding_window ? context : a.sliding_window;
    case layer_kind::linear: return 0.0;
  }
  return 0.0;
}

/// Constant recurrent state of one sequence in one linear-attention layer:
/// (value heads * d_k * d_v + conv channels * (kernel - 1)) elements.
constexpr bytes linear_state_bytes_per_layer(const architecture& a) {
  const auto& l = a.linear;
  const double conv_channels =
      2.0 * l.num_key_heads * l.key_head_dim + double(l.num_value_heads) * l.value_head_dim;
  const double elements = double(l.num_value_heads) * l.key_head_dim * l.value_head_dim +
                          conv_channels * (l.conv_kernel > 0 ? l.conv_kernel - 1 : 0);
  return make_bytes(elements * linear_state_bits / 8.0);
}

/// Rounds tokens up to whole blocks of `block_tokens` (paged engines; vLLM 16).
constexpr double round_to_blocks(double t, int block_tokens) {
  if (block_tokens <= 1) return t;
  const double blocks = static_cast<double>(static_cast<long long>((t + block_tokens - 1) / block_tokens));
  return blocks * block_tokens;
}

/// Cache of one sequence holding `context` tokens: KV of every attention layer
/// (sliding layers capped at the window) plus linear-attention state, each
/// layer's tokens rounded up to whole blocks of `block_tokens`.
/// Throws std::invalid_argument when context < 0 or not finite, or block_tokens < 1.
inline bytes kv_bytes_per_sequence(const architecture& a, const numeric_format& kv, double context,
                                   int block_tokens = 1) {
  detail::require_tokens("context", context);
  detail::require_positive("block_tokens", block_tokens);
  const double g = a.count_layers(layer_kind::global);
  const double s = a.count_layers(layer_kind::sliding);
  const double l = a.count_layers(layer_kind::linear);
  const double c = std::ceil(context);
  return g * round_to_blocks(tokens_held(a, layer_kind::global, c), block_tokens) *
             kv_bytes_per_token(a, layer_kind::global, kv) +
         s * round_to_blocks(tokens_held(a, layer_kind::sliding, c), block_tokens) *
             kv_bytes_per_token(a, layer_kind::sliding, kv) +
         l * linear_state_bytes_per_layer(a);
}

/// Bytes of a sequence at `context` tokens that lie in its first `prefix`
/// tokens and so can be one copy shared by sequences that start alike: every
/// full-attention layer's prefix, a sliding layer's share of it still inside
/// the window (the tokens [context - window, context) it holds), no linear
/// state (each sequence's own). `prefix` is taken in whole blocks already.
inline bytes kv_bytes_shared(const architecture& a, const numeric_format& kv, double prefix, double context) {
  const double p = std::min(prefix, context);
  const double in_window = a.sliding_window > 0 ? std::max(0.0, p - std::max(0.0, context - a.sliding_window)) : p;
  return double(a.count_layers(layer_kind::global)) * p * kv_bytes_per_token(a, layer_kind::global, kv) +
         double(a.count_layers(layer_kind::sliding)) * in_window * kv_bytes_per_token(a, layer_kind::sliding, kv);
}

/// KV read by one decode step of a sequence at `context` cached tokens (the
/// cache without block rounding: padding is allocated, never read).
inline bytes kv_bytes_read(const architecture& a, const numeric_format& kv, double context) {
  return kv_bytes_per_sequence(a, kv, context, 1);
}

/// One kind of layer's share of a sequence's cache.
struct kv_layer_share {
  layer_kind kind = layer_kind::global;
  int layers = 0;
  bytes per_token = make_bytes(0);  ///< per layer
  double tokens_held = 0;           ///< per layer, at the context (sliding: the window)
  bytes state = make_bytes(0);      ///< per layer, linear attention's fixed state
};

/// A sequence's cache at `context` tokens, per kind of layer present.
struct kv_breakdown {
  bytes per_token = make_bytes(0);     ///< all layers
  bytes per_sequence = make_bytes(0);  ///< kv_bytes_per_sequence
  std::vector<kv_layer_share> layers;
};

/// Throws as kv_bytes_per_sequence.
inline kv_breakdown break_down_kv(const architecture& a, const numeric_format& kv, double context, int block_tokens = 1) {
  kv_breakdown out{kv_bytes_per_token(a, kv), kv_bytes_per_sequence(a, kv, context, block_tokens), {}};
  for (layer_kind k : {layer_kind::global, layer_kind::sliding, layer_kind::linear}) {
    if (a.count_layers(k) == 0) continue;
    out.layers.push_back({k, a.count_layers(k), kv_bytes_per_token(a, k, kv), tokens_held(a, k, context),
                          k == layer_kind::linear ? linear_state_bytes_per_layer(a) : make_bytes(0)});
  }
  return out;
}

}  // namespace llmroof
