// Decoder-only transformer architectures and their exact parameter counts.
//
// Attention is GQA (MHA when kv heads = heads, MQA when 1) or MLA; each layer
// is global, sliding-window or linear (recurrent state) attention; the FFN is
// dense or a Mixture of Experts with optional shared experts and leading
// dense layers.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "llmroof/detail/check.hpp"
#include "llmroof/detail/enum_names.hpp"

namespace llmroof {

enum class attention_kind : std::uint8_t { gqa, mla };
enum class layer_kind : std::uint8_t { global, sliding, linear };
enum class ffn_kind : std::uint8_t { gated, plain };

inline constexpr std::array<std::string_view, 3> layer_kind_names{"global", "sliding", "linear"};

constexpr std::string_view to_string(layer_kind k) { return detail::enum_name(k, layer_kind_names); }

/// Multi-head Latent Attention (DeepSeek-V2/V3, Kimi K2). q_lora_rank 0
/// means a direct Q projection.
struct mla_dims {
  int q_lora_rank = 0;       ///< rank of the compressed query (0: a direct Q projection)
  int kv_lora_rank = 0;      ///< width of the KV latent each token caches per layer
  int qk_nope_head_dim = 0;  ///< query/key dimensions per head without rotary position
  int qk_rope_head_dim = 0;  ///< rotary dimensions per head; the key's, shared by all heads, are cached beside the latent
  int v_head_dim = 0;        ///< value dimensions per head
};

/// Linear attention / Gated DeltaNet layers (Qwen3-Next): a constant state
/// per sequence instead of a KV cache.
struct linear_attention_dims {
  int num_key_heads = 0;    ///< query/key heads of the delta rule
  int num_value_heads = 0;  ///< value heads; each holds a key_head_dim x value_head_dim state
  int key_head_dim = 0;
  int value_head_dim = 0;
  int conv_kernel = 0;  ///< tokens of the short causal convolution, whose last conv_kernel - 1 inputs are kept
};

/// Mixture-of-Experts fields. num_experts 0 means a dense model.
struct moe_dims {
  int num_experts = 0;         ///< routed experts E
  int experts_per_token = 0;   ///< k
  int shared_experts = 0;      ///< s, each of shared_expert_ffn (or expert_ffn when 0)
  int expert_ffn = 0;          ///< f_e
  int shared_expert_ffn = 0;
  int first_dense_layers = 0;  ///< leading dense layers (first_k_dense_replace)
  int mtp_layers = 0;          ///< multi-token-prediction layers: counted apart, not decoded
  bool router_bias = false;    ///< per-expert bias of the router (gpt-oss, DeepSeek correction bias)
  bool expert_bias = false;    ///< biases inside each expert (gpt-oss)
  bool shared_expert_gate = false;  ///< a d x 1 gate on the shared expert (Qwen3-Next)
};

/// One model. All sizes are counts (elements, heads, layers), never bytes.
struct architecture {
  std::string id;      ///< catalog id: `llama-3.1-8b`
  std::string name;    ///< display name
  std::string family;  ///< HF model_type
  std::string source;  ///< where the numbers come from
  std::vector<std::string> aliases;  ///< other names: Instruct and re-packed checkpoints,
                                     ///< fine-tunes that keep this architecture

  int num_layers = 0;
  int hidden_size = 0;   ///< d
  int num_heads = 0;     ///< h
  int num_kv_heads = 0;  ///< g
  int head_dim = 0;      ///< d_h
  int ffn_size = 0;      ///< f of dense layers
  int vocab_size = 0;    ///< V

  attention_kind attention = attention_kind::gqa;
  ffn_kind ffn = ffn_kind::gated;
  bool tied_embeddings = false;
  bool qkv_bias = false;
  bool o_bias = false;
  bool mlp_bias = false;
  bool lm_head_bias = false;
  bool qk_norm = false;           ///< per-head RMSNorm on q and k (Qwen3, Gemma 3)
  bool attn_output_gate = false;  ///< q_proj also emits a gate (Qwen3-Next)
  bool attention_sinks = false;   ///< one learned sink logit per head (gpt-oss)
  bool norm_bias = false;         ///< LayerNorm with bias (GPT-J, Falcon)
  int norms_per_layer = 2;

  mla_dims mla;
  linear_attention_dims linear;
  moe_dims moe;

  /// Kind of each layer; empty means every layer is global attention.
  std::vector<layer_kind> layer_kinds;
  int sliding_window = 0;  ///< tokens a sliding layer keeps (0 = none)
  int max_context = 0;     ///< tokens (max_position_embeddings)

  /// Published figures, billions (0 = none), for checks and display.
  double published_total_b = 0;
  double published_active_b = 0;

  /// Full-attention layers with their own geometry (Gemma 4:
  /// num_global_key_value_heads, global_head_dim): KV heads and head width
  /// of the global layers, 0 = the same as every layer's.
  int global_kv_heads = 0;
  int global_head_dim = 0;
  /// The global layers' keys serve as their values (Gemma 4's
  /// attention_k_eq_v): no v_proj there. Engines still cache K and V apart.
  bool global_k_is_v = false;

  [[nodiscard]] constexpr layer_kind kind_of(int layer) const {
    return layer_kinds.empty() ? layer_kind::global
                               : layer_kinds[static_cast<std::size_t>(layer)];
  }
  [[nodiscard]] constexpr int count_layers(layer_kind k) const {
    if (layer_kinds.empty()) return k == layer_kind::global ? num_layers : 0;
    int n = 0;
    for (int i = 0; i < num_layers; ++i) n += kind_of(i) == k ? 1 : 0;
    return n;
  }
  [[nodiscard]] constexpr bool is_moe() const { return moe.num_experts > 0; }
  [[nodiscard]] constexpr int num_moe_layers() const {
    return is_moe() ? num_layers - moe.first_dense_layers : 0;
  }
  [[nodiscard]] constexpr int num_dense_layers() const { return num_layers - num_moe_layers(); }
};

/// KV heads and head width of the attention layers of kind k.
constexpr int kv_heads_of(const architecture& a, layer_kind k) {
  return k == layer_kind::global && a.global_kv_heads > 0 ? a.global_kv_heads : a.num_kv_heads;
}
constexpr int head_dim_of(const architecture& a, layer_kind k) {
  return k == layer_kind::global && a.global_head_dim > 0 ? a.global_head_dim : a.head_dim;
}

// ---- per-component parameter counts (elements) ------------------------------

/// Projection weights and biases of one attention layer of kind k (no norms).
constexpr double attention_params(const architecture& a, layer_kind k) {
  const double d = a.hidden_size;
  if (k == layer_kind::linear) {
    const auto& l = a.linear;
    const double key = double(l.num_key_heads) * l.key_head_dim;
    const double val = double(l.num_value_heads) * l.value_head_dim;
    return d * (2 * key + 2 * val)           // in_proj_qkvz
           + d * 2.0 * l.num_value_heads     // in_proj_ba
           + (2 * key + val) * l.conv_kernel // depthwise conv1d
           + 2.0 * l.num_value_heads         // dt_bias, A_log
           + l.value_head_dim                // gated RMSNorm
           + val * d;                        // out_proj
  }
  const double h = a.num_heads;
  if (a.attention == attention_kind::mla) {
    const auto& m = a.mla;
    const double qk = double(m.qk_nope_head_dim) + m.qk_rope_head_dim;
    const double q = m.q_lora_rank > 0
                         ? d * m.q_lora_rank + m.q_lora_rank + double(m.q_lora_rank) * h * qk
                         : d * h * qk;
    const double kv = d * (double(m.kv_lora_rank) + m.qk_rope_head_dim) + m.kv_lora_rank +
                      double(m.kv_lora_rank) * h * (double(m.qk_nope_head_dim) + m.v_head_dim);
    return q + kv + h * m.v_head_dim * d;
  }
  const double dh = head_dim_of(a, k);
  const double g = kv_heads_of(a, k);
  const double q_out = h * dh * (a.attn_output_gate ? 2.0 : 1.0);
  const double kv_proj = k == layer_kind::global && a.global_k_is_v ? 1.0 : 2.0;  // k_proj (and v_proj)
  double p = d * q_out + kv_proj * d * g * dh + h * dh * d;
  if (a.qkv_bias) p += q_out + kv_proj * g * dh;
  if (a.o_bias) p += d;
  if (a.qk_norm) p += 2.0 * dh;
  if (a.attention_sinks) p += h;
  return p;
}

/// One FFN of intermediate size f (a dense FFN or one expert).
constexpr double ffn_params(const architecture& a, double f, bool bias) {
  const double d = a.hidden_size;
  if (a.ffn == ffn_kind::gated) return 3.0 * d * f + (bias ? 2.0 * f + d : 0.0);
  return 2.0 * d * f + (bias ? f + d : 0.0);
}

constexpr double dense_ffn_params(const architecture& a) {
  return ffn_params(a, a.ffn_size, a.mlp_bias);
}
constexpr double expert_params(const architecture& a) {
  return ffn_params(a, a.moe.expert_ffn, a.moe.expert_bias);
}
constexpr double shared_experts_params(const architecture& a) {
  const double f = a.moe.shared_expert_ffn > 0 ? a.moe.shared_expert_ffn : a.moe.expert_ffn;
  return a.moe.shared_experts * ffn_params(a, f, a.moe.expert_bias) +
         (a.moe.shared_expert_gate ? double(a.hidden_size) : 0.0);
}
constexpr double router_params(const architecture& a) {
  return double(a.hidden_size) * a.moe.num_experts + (a.moe.router_bias ? a.moe.num_experts : 0);
}
constexpr double layer_norm_params(const architecture& a) {
  return double(a.norms_per_layer) * a.hidden_size * (a.norm_bias ? 2.0 : 1.0);
}

/// Parameter counts by component (elements). `total` excludes MTP layers,
/// which serving engines load only for speculative decoding.
struct param_counts {
  double embedding = 0;       ///< V x d input table
  double attention = 0;       ///< all layers
  double dense_ffn = 0;       ///< dense layers' FFNs
  double routed_experts = 0;  ///< all E experts of all MoE layers
  double shared_experts = 0;
  double router = 0;
  double norms = 0;           ///< per-layer and final norms
  double lm_head = 0;         ///< 0 when tied
  double mtp = 0;             ///< multi-token-prediction layers, not in total
  double routed_active = 0;   ///< k experts per MoE layer

  [[nodiscard]] constexpr double total() const {
    return embedding + attention + dense_ffn + routed_experts + shared_experts + router + norms +
           lm_head;
  }
  /// Parameters one token computes with: everything but the routed experts,
  /// plus k of them, and not the embedding table (a lookup reads one row).
  /// This is how OpenAI (gpt-oss-120b 5.1B) and Z.ai (GLM-4.5-Air 12B) count.
  [[nodiscard]] constexpr double active() const {
    return total() - embedding - routed_experts + routed_active;
  }
  /// As `active`, with the embedding table (Mistral's Mixtral 12.9B convention).
  [[nodiscard]] constexpr double active_with_embedding() const { return active() + embedding; }
};

constexpr param_counts count_parameters(const architecture& a) {
  param_counts p;
  const double d = a.hidden_size;
  p.embedding = double(a.vocab_size) * d;
  p.lm_head = a.tied_embeddings ? 0.0 : double(a.vocab_size) * d + (a.lm_head_bias ? a.vocab_size : 0);
  // Counted per kind of layer, not per layer (whole numbers: exact).
  p.attention = 0;
  for (layer_kind k : {layer_kind::global, layer_kind::sliding, layer_kind::linear}) {
    const double n = a.count_layers(k);
    if (n > 0) p.attention += n * attention_params(a, k);
  }
  p.norms = a.num_layers * layer_norm_params(a) + d * (a.norm_bias ? 2.0 : 1.0);  // and the final norm
  p.dense_ffn = a.num_dense_layers() * dense_ffn_params(a);
  const double moe_layers = a.num_moe_layers();
  p.routed_experts = moe_layers * a.moe.num_experts * expert_params(a);
  p.routed_active = moe_layers * a.moe.experts_per_token * expert_params(a);
  p.shared_experts = moe_layers * shared_experts_params(a);
  p.router = moe_layers * router_params(a);
  if (a.moe.mtp_layers > 0) {
    // One MTP module: a decoder layer (MoE when the model is) plus the
    // projection of [embedding; hidden] (2d x d) and two norms (DeepSeek-V3 §2.2).
    const double layer = attention_params(a, layer_kind::global) + layer_norm_params(a) +
                         (a.is_moe() ? a.moe.num_experts * expert_params(a) +
                                           shared_experts_params(a) + router_params(a)
                                     : dense_ffn_params(a));
    p.mtp = a.moe.mtp_layers * (layer + 2.0 * d * d + 3.0 * d);
  }
  return p;
}

/// A dense model with the MoE model's attention, embeddings and layer count,
/// whose gated FFN is sized so that its total parameters equal the MoE
/// model's total (`match_total`) or active parameters. The yardstick of "a
/// dense model of the same size" in MoE comparisons.
inline architecture dense_equivalent(const architecture& moe, bool match_total) {
  architecture d = moe;
  const param_counts p = count_parameters(moe);
  const double target = match_total ? p.total() : p.active_with_embedding();
  d.moe = moe_dims{};
  d.ffn = ffn_kind::gated;
  d.mlp_bias = false;
  d.ffn_size = 0;
  const double rest = count_parameters(d).total();
  const double per_unit = 3.0 * d.hidden_size * d.num_layers;  // params per unit of f
  d.ffn_size = std::max(1, static_cast<int>(std::lround((target - rest) / per_unit)));
  d.id = moe.id + (match_total ? "-dense-total" : "-dense-active");
  d.name = "dense " + moe.name + (match_total ? " (same total)" : " (same active)");
  d.source = "derived from " + moe.id + ": FFN sized to match its " + (match_total ? "total" : "active") +
             " parameters";
  d.published_total_b = 0;
  d.published_active_b = 0;
  return d;
}

/// Checks every field. Throws std::invalid_argument naming the first bad
/// field: "architecture.num_kv_heads must be > 0 (got 0)".
void validate(const architecture& a);

/// Every built-in model, in catalog order: the hand-written entries, then one
/// per model family with a config.json in tests/data/hf-configs, parsed from
/// the embedded file.
const std::vector<architecture>& models();

/// Looks a model up by id, name or alias. Names are normalised: case, an
/// `org/` prefix, a parenthesised note, and checkpoint words (Instruct, Chat,
/// it, hf, Base, FP8, AWQ, GGUF, QAT, a YYMM date such as 2507) do not count,
/// so "meta-llama/Llama-3.1-8B-Instruct" and "gemma-3-4b-it-qat" resolve.
/// Fine-tunes resolve to the base architecture their model card names
/// ("DeepSeek-R1-Distill-Qwen-14B" is Qwen2.5-14B). Throws
/// std::invalid_argument listing candidates when ambiguous, the closest ids
/// when unknown.
const architecture& find_model(std::string_view name);

/// Ids of the catalog models `name` matches (one when it resolves).
std::vector<std::string> match_models(std::string_view name);

}  // namespace llmroof
