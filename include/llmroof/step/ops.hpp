// Op counts: a prefill chunk or a decode step as a short list of operations,
// each with counted FLOP and bytes by kind (weights, KV read, KV written,
// activations). Counting is exact and checkable by hand; no time here.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include <boost/container/static_vector.hpp>

#include "llmroof/detail/enum_names.hpp"

#include "llmroof/model/architecture.hpp"
#include "llmroof/units/formats.hpp"
#include "llmroof/model/kv_cache.hpp"
#include "llmroof/model/moe.hpp"
#include "llmroof/model/precision.hpp"
#include "llmroof/units/units.hpp"

namespace llmroof {

enum class phase : std::uint8_t { prefill, decode };

inline constexpr std::array<std::string_view, 2> phase_names{"prefill", "decode"};

constexpr std::string_view to_string(phase p) { return detail::enum_name(p, phase_names); }

/// What an op's FLOP run on: a GEMM (efficiency grows with its rows) or an
/// attention kernel.
enum class op_class : std::uint8_t { gemm, attention, elementwise, communication };

/// What an op is, so that parallel plans know how it splits across devices.
enum class op_kind : std::uint8_t {
  embedding, norms, attention_proj, attention_global, attention_sliding, attention_linear,
  ffn, router, experts, shared_experts, lm_head, all_reduce, all_to_all, p2p
};

/// One operation, totalled over the `count` layers (kernels) it stands for.
struct op {
  std::string_view name;
  op_class klass = op_class::gemm;
  double count = 1;            ///< instances: layers (or collectives) the op is totalled over
  flops flop = make_flops(0);
  bytes weights = make_bytes(0);
  bytes kv_read = make_bytes(0);
  bytes kv_written = make_bytes(0);
  bytes activations = make_bytes(0);
  math_format math = math_format::bf16;
  double gemm_rows = 1;        ///< tokens per weight matrix (M of the GEMM), for efficiency
  op_kind kind = op_kind::embedding;
  bytes network = make_bytes(0);       ///< bytes over the device interconnect (communication ops)
  seconds latency = make_seconds(0);   ///< fixed cost per instance (communication ops)
  bytes_per_second link_bandwidth = make_bytes_per_second(0);  ///< 0: the roofline's link
  /// A collective among the devices of one node: the engines' custom
  /// all-reduce runs there (one-shot or two-shot through peer memory), whose
  /// latency the profile's collective_latency prices instead of `latency`.
  bool within_node = false;
  /// Attention ops: bytes per FLOP that an unfused kernel sequence adds by
  /// materializing the score matrix (an intensive figure, so that it
  /// survives parallel splits of `flop`); 0 elsewhere.
  double unfused_bytes_per_flop = 0;
  /// GEMM weights stored below 16 bits (int4/int8/fp8/fp4 or a ggml block
  /// format): the engine's kernel path decides which roof they run on
  /// (roofline.hpp, kernel_path).
  bool quantized = false;
  /// Kernels one instance launches in a PyTorch-based engine's model code
  /// (detail::launches_per_instance); each costs the profile's per_launch.
  double launches = 1;
  /// Of those, the GEMMs on quantized weights: each adds a kernel that
  /// quantizes its activations where it runs on an FP8 or FP4 roof.
  double quantized_gemms = 0;
  /// Thread instructions per multiply-accumulate that ggml's int8 tiled
  /// kernel (MMQ) issues for the op's weight type
  /// (numeric_format::mmq_warp_per_kmac x 32 / 1000); 0: no such kernel.
  double mmq_instructions = 0;
  /// Attention ops: query heads per cached KV head and the dimension of a
  /// cached head (MLA: its latent and rotary key, read as one head by every
  /// query head), which ggml's flash-attention dispatch reads; 0 elsewhere.
  double gqa = 0;
  double head_dim = 0;

  [[nodiscard]] constexpr bytes total_bytes() const {
    return weights + kv_read + kv_written + activations;
  }
  /// Adds `x`'s instances, FLOP and bytes to this op's (one op standing for
  /// several: a prefill's passes, an offload's host layers).
  void add_totals(const op& x) {
    count += x.count;
    flop += x.flop;
    weights += x.weights;
    kv_read += x.kv_read;
    kv_written += x.kv_written;
    activations += x.activations;
  }
  /// FLOP per byte moved; 0 when nothing moves.
  [[nodiscard]] constexpr flops_per_byte intensity() const {
    return total_bytes().value() > 0 ? flop / total_bytes() : make_flops_per_byte(0);
  }
};

inline constexpr std::size_t max_ops = 16;

/// The ops of one phase; a fixed-capacity list so that counting allocates nothing.
struct op_counts {
  phase kind = phase::decode;
  double sequences = 0;  ///< B
  double new_tokens = 0; ///< tokens processed in this step (B for decode, B*P for prefill)
  /// The ops in order; slots past the last are not constructed, so that
  /// counting and copying a step touch only the ops it has.
  boost::container::static_vector<op, max_ops> ops;

  [[nodiscard]] std::span<const op> list() const { return {ops.data(), ops.size()}; }
  /// Throws std::length_error past max_ops (no model reaches it: 11 kinds
  /// of op plus the collectives and an offload's host op).
  void add(op o, op_kind k) {
    o.kind = k;
    if (o.count <= 0) return;
    if (ops.size() == max_ops) throw std::length_error("a phase holds at most " + std::to_string(max_ops) + " ops");
    ops.push_back(o);
  }
  /// Sum of `of(op)` over the ops (FLOP or bytes).
  template <class Of>
  [[nodiscard]] auto sum(Of of) const {
    decltype(of(op{})) total{};
    for (const auto& o : list()) total += of(o);
    return total;
  }
  [[nodiscard]] flops total_flop() const { return sum([](const op& o) { return o.flop; }); }
  [[nodiscard]] bytes total_bytes() const { return sum([](const op& o) { return o.total_bytes(); }); }
  [[nodiscard]] bytes weight_bytes() const { return sum([](const op& o) { return o.weights; }); }
  [[nodiscard]] bytes kv_read_bytes() const { return sum([](const op& o) { return o.kv_read; }); }
};

namespace detail {

/// Query-key pairs of P new tokens after c cached ones in a layer that sees at
/// most w keys (w = 0: unlimited). Token i (1..P) attends to min(c + i, w) keys.
constexpr double attention_pairs(double p, double c, double w) {
  if (w <= 0 || c + p <= w) return p * c + p * (p + 1) / 2;
  const double full = w > c ? std::floor(w - c) : 0.0;  // tokens still below the window
  return full * c + full * (full + 1) / 2 + (p - full) * w;
}

/// Bytes per (query, key) score and head that unfused attention moves: an
/// FP32 score written by the QK^T matmul, read and written by the softmax,
/// read by the PV matmul (llama.cpp's graph without flash attention:
/// mul_mat, soft_max_ext, mul_mat). Fused kernels keep scores on chip.
inline constexpr double unfused_score_bytes = 4.0 * 4.0;

/// FLOP per (query, key) pair per layer of kind k.
constexpr double flop_per_pair(const architecture& a, phase ph, layer_kind k = layer_kind::global) {
  const double h = a.num_heads;
  if (a.attention == attention_kind::mla) {
    const auto& m = a.mla;
    // Decode runs absorbed MLA over the latent; prefill expands K and V.
    if (ph == phase::decode) {
      return 2.0 * h * (double(m.kv_lora_rank) + m.qk_rope_head_dim) + 2.0 * h * m.kv_lora_rank;
    }
    return 2.0 * h * (double(m.qk_nope_head_dim) + m.qk_rope_head_dim) + 2.0 * h * m.v_head_dim;
  }
  return 4.0 * h * head_dim_of(a, k);
}

/// Inputs plus outputs of the projections of one attention layer of kind k, elements per token.
constexpr double attention_io_per_token(const architecture& a, layer_kind k = layer_kind::global) {
  const double d = a.hidden_size;
  if (a.attention == attention_kind::mla) {
    return 2.0 * d + a.num_heads * (double(a.mla.qk_nope_head_dim) + a.mla.qk_rope_head_dim) +
           double(a.num_heads) * a.mla.v_head_dim;
  }
  const double kv_out = k == layer_kind::global && a.global_k_is_v ? 1.0 : 2.0;  // k (and v)
  return 2.0 * d + (2.0 * a.num_heads + kv_out * kv_heads_of(a, k)) * head_dim_of(a, k);
}

/// Kernels one instance of an op launches in vLLM's and SGLang's model code
/// (vllm/model_executor/models/llama.py, qwen3.py, deepseek_v2.py,
/// layers/fused_moe/fused_moe.py; sglang/srt/models/deepseek_v2.py), counted
/// per layer as their forward passes call them:
///  - a norm: one fused add + RMSNorm kernel;
///  - GQA projections: the fused QKV GEMM, rotary embedding, the output GEMM (3);
///  - MLA projections, absorbed for decode: fused q_a/kv_a GEMM, q_a and kv_a
///    norms, q_b GEMM, rotary embedding, the latent split/concat copy, the
///    w_kc and w_vc batched GEMMs, the output GEMM (9);
///  - attention: the KV-cache write and the attention kernel (2);
///  - a Gated DeltaNet layer: in/out projections, causal conv1d, gating, the
///    chunked recurrence and its gated norm (6);
///  - an MLP (dense or shared experts): gate_up GEMM, activation, down GEMM (3);
///  - the router: gate GEMM and the top-k kernel (2);
///  - routed experts: moe_align_block_size, the w13 grouped GEMM, activation,
///    the w2 grouped GEMM, the weighted sum (5);
/// The lm_head is one GEMM (sampling is the per-step host work). FP8 and FP4
/// GEMMs quantize their activations first (per_token_group_quant_fp8,
/// scaled_fp8_quant): quantized_gemms_per_instance counts them.
constexpr double launches_per_instance(op_kind k, const architecture& a) {
  switch (k) {
    case op_kind::attention_proj: return a.attention == attention_kind::mla ? 9.0 : 3.0;
    case op_kind::attention_global:
    case op_kind::attention_sliding: return 2.0;
    case op_kind::attention_linear: return 6.0;
    case op_kind::ffn:
    case op_kind::shared_experts: return 3.0;
    case op_kind::router: return 2.0;
    case op_kind::experts: return 5.0;
    default: return 1.0;
  }
}

/// GEMMs on the op's own weight format per instance (the MLA w_kc/w_vc
/// batched GEMMs and the router stay 16-bit).
constexpr double quantized_gemms_per_instance(op_kind k, const architecture& a) {
  switch (k) {
    case op_kind::attention_proj: return a.attention == attention_kind::mla ? 3.0 : 2.0;
    case op_kind::attention_linear:
    case op_kind::ffn:
    case op_kind::shared_experts:
    case op_kind::experts: return 2.0;
    case op_kind::lm_head: return 1.0;
    default: return 0.0;
  }
}

struct workload {
  phase kind;
  double sequences;   // B
  double new_tokens;  // T: tokens through the linear layers
  double out_tokens;  // tokens through lm_head
  double prompt;      // P per sequence (1 in decode)
  std::span<const double> contexts;  // cached tokens per sequence (or one shared value)
  double shared_context;
};

inline op_counts count(const architecture& a, const precision& pr, const workload& w) {
  op_counts out;
  out.kind = w.kind;
  out.sequences = w.sequences;
  out.new_tokens = w.new_tokens;
  const double t = w.new_tokens;
  const double d = a.hidden_size;
  const double act = pr.activations.bytes_per_element();
  const numeric_format& fa = pr.attention_format();
  const numeric_format& ff = pr.ffn_format();
  const numeric_format& fe = pr.experts_format();

  // Sums over sequences of what depends on each one's context.
  const auto per_seq = [&](auto&& f) {
    if (w.contexts.empty()) return w.sequences * f(w.shared_context);
    double s = 0;
    for (double c : w.contexts) s += f(c);
    return s;
  };

  out.add({"embedding", op_class::elementwise, 1, make_flops(0),
           make_bytes(t * d * pr.embedding.bytes_per_element()), make_bytes(0), make_bytes(0),
           make_bytes(t * d * act), math_format::bf16, t}, op_kind::embedding);

  // Per-layer norms plus the final norm: ~4 FLOP per element (square, sum,
  // scale, weight); each reads and writes the hidden state.
  const double norms = double(a.norms_per_layer) * a.num_layers + 1;
  out.add({"norms", op_class::elementwise, norms, make_flops(4.0 * t * d * norms),
           make_bytes((layer_norm_params(a) * a.num_layers + d * (a.norm_bias ? 2 : 1)) * act),
           make_bytes(0), make_bytes(0), make_bytes(2.0 * t * d * norms * act), math_format::bf16,
           t}, op_kind::norms);

  // Attention projections of global and sliding layers (each kind its own shape).
  const double n_global = a.count_layers(layer_kind::global), n_sliding = a.count_layers(layer_kind::sliding);
  const double n_attn = n_global + n_sliding;
  if (n_attn > 0) {
    const double p = n_global * attention_params(a, layer_kind::global) +
                     n_sliding * attention_params(a, layer_kind::sliding);
    const double io = n_global * attention_io_per_token(a, layer_kind::global) +
                      n_sliding * attention_io_per_token(a, layer_kind::sliding);
    double flop = 2.0 * t * p;
    if (a.attention == attention_kind::mla && w.kind == phase::prefill) {
      // Prefill expands the cached latents of the prefix through kv_b_proj.
      const double kv_b = double(a.mla.kv_lora_rank) * a.num_heads *
                          (double(a.mla.qk_nope_head_dim) + a.mla.v_head_dim);
      flop += 2.0 * kv_b * n_attn * per_seq([](double c) { return c; });
    }
    out.add({"attention.proj", op_class::gemm, n_attn, make_flops(flop),
             fa.bytes_of(p), make_bytes(0), make_bytes(0),
             make_bytes(t * io * act), fa.math, t}, op_kind::attention_proj);
  }

  for (layer_kind k : {layer_kind::global, layer_kind::sliding}) {
    const double n = a.count_layers(k);
    if (n == 0) continue;
    const double fpp = flop_per_pair(a, w.kind, k);
    const double window = k == layer_kind::sliding ? a.sliding_window : 0.0;
    const double pairs = per_seq([&](double c) { return attention_pairs(w.prompt, c, window); });
    const double held = per_seq([&](double c) { return tokens_held(a, k, c); });
    const double kv_tok = kv_bytes_per_token(a, k, pr.kv).value();
    op at{k == layer_kind::global ? "attention.global" : "attention.sliding",
          op_class::attention, n, make_flops(fpp * pairs * n), make_bytes(0),
          make_bytes(held * kv_tok * n), make_bytes(t * kv_tok * n), make_bytes(0),
          math_format::bf16, w.kind == phase::decode ? 1.0 : t};
    at.unfused_bytes_per_flop = unfused_score_bytes * a.num_heads / fpp;
    const bool mla = a.attention == attention_kind::mla;
    at.gqa = mla ? double(a.num_heads) : double(a.num_heads) / std::max(1, kv_heads_of(a, k));
    at.head_dim = mla ? double(a.mla.kv_lora_rank) + a.mla.qk_rope_head_dim : double(head_dim_of(a, k));
    out.add(at, k == layer_kind::global ? op_kind::attention_global : op_kind::attention_sliding);
  }

  if (const double n = a.count_layers(layer_kind::linear); n > 0) {
    const auto& l = a.linear;
    const double p = attention_params(a, layer_kind::linear);
    // Gated DeltaNet per token and value head: decay, rank-1 update and
    // readout of a d_k x d_v state, about 6 FLOP per state element.
    const double state_flop = 6.0 * l.num_value_heads * double(l.key_head_dim) * l.value_head_dim;
    const double state = linear_state_bytes_per_layer(a).value();
    out.add({"attention.linear", op_class::gemm, n, make_flops((2.0 * p + state_flop) * t * n),
             fa.bytes_of(p * n), make_bytes(w.sequences * state * n),
             make_bytes(w.sequences * state * n), make_bytes(t * 2.0 * d * n * act), fa.math, t},
            op_kind::attention_linear);
  }

  if (const double n = a.num_dense_layers(); n > 0) {
    const double p = dense_ffn_params(a);
    out.add({"ffn", op_class::gemm, n, make_flops(2.0 * t * p * n), ff.bytes_of(p * n),
             make_bytes(0), make_bytes(0),
             make_bytes(t * (2.0 * d + (a.ffn == ffn_kind::gated ? 3.0 : 2.0) * a.ffn_size) * n * act),
             ff.math, t}, op_kind::ffn);
  }

  if (const double n = a.num_moe_layers(); n > 0) {
    const auto& m = a.moe;
    out.add({"moe.router", op_class::gemm, n, make_flops(2.0 * t * d * m.num_experts * n),
             make_bytes(router_params(a) * n * act), make_bytes(0), make_bytes(0),
             make_bytes(t * (d + m.num_experts) * n * act), math_format::bf16, t}, op_kind::router);
    const double distinct = expected_distinct_experts(m.num_experts, m.experts_per_token, t);
    const double ep = expert_params(a);
    const double routed = t * m.experts_per_token;  // token-expert assignments
    out.add({"moe.experts", op_class::gemm, n, make_flops(2.0 * routed * ep * n),
             fe.bytes_of(distinct * ep * n), make_bytes(0), make_bytes(0),
             make_bytes(routed * (2.0 * d + 3.0 * m.expert_ffn) * n * act), fe.math,
             distinct > 0 ? routed / distinct : 1.0}, op_kind::experts);
    if (m.shared_experts > 0) {
      const double sp = shared_experts_params(a);
      out.add({"moe.shared", op_class::gemm, n, make_flops(2.0 * t * sp * n),
               fe.bytes_of(sp * n), make_bytes(0), make_bytes(0),
               make_bytes(t * (2.0 * d + 3.0 * m.expert_ffn * m.shared_experts) * n * act), fe.math, t},
              op_kind::shared_experts);
    }
  }

  const double v = a.vocab_size;
  const auto& head = a.tied_embeddings ? pr.embedding : pr.lm_head;
  out.add({"lm_head", op_class::gemm, 1, make_flops(2.0 * w.out_tokens * d * v),
           make_bytes(v * d * head.bytes_per_element()), make_bytes(0), make_bytes(0),
           make_bytes(w.out_tokens * (d + v) * act), head.math, w.out_tokens}, op_kind::lm_head);

  for (op& o : out.ops) {
    const numeric_format* f = nullptr;
    switch (o.kind) {
      case op_kind::attention_proj:
      case op_kind::attention_linear: f = &fa; break;
      case op_kind::ffn: f = &ff; break;
      case op_kind::experts:
      case op_kind::shared_experts: f = &fe; break;
      case op_kind::lm_head: f = &head; break;
      default: break;
    }
    o.quantized = f != nullptr && f->bits < 16;
    o.launches = launches_per_instance(o.kind, a);
    o.quantized_gemms = o.quantized ? quantized_gemms_per_instance(o.kind, a) : 0.0;
    o.mmq_instructions = o.quantized ? f->mmq_warp_per_kmac * 32.0 / 1000.0 : 0.0;
  }
  return out;
}

}  // namespace detail

/// Decode step of `batch` sequences, each with `context` tokens cached: one new
/// token per sequence, or `width` in a speculative verify step. Throws
/// std::invalid_argument unless batch >= 1, context >= 0 and width in [1, 64].
inline op_counts count_decode(const architecture& a, const precision& pr, double batch,
                              double context, double width = 1) {
  detail::require_in("batch", batch, 1, 1e9);
  detail::require_tokens("context", context);
  // `width` tokens per sequence: a speculative verify step (k drafts + 1),
  // every one through lm_head, the KV cache read once per sequence.
  detail::require_in("width", width, 1, 64);
  return detail::count(a, pr, {phase::decode, batch, batch * width, batch * width, width, {}, context});
}

/// Decode step of sequences with their own cached contexts (one per entry).
/// Throws std::invalid_argument on an empty list or a negative context.
inline op_counts count_decode(const architecture& a, const precision& pr,
                              std::span<const double> contexts) {
  if (contexts.empty()) detail::fail("contexts size", ">= 1", 0);
  for (double c : contexts) detail::require_tokens("context", c);
  const double b = static_cast<double>(contexts.size());
  return detail::count(a, pr, {phase::decode, b, b, b, 1, contexts, 0});
}

/// Prefill of `prompt` new tokens in each of `batch` sequences after `cached`
/// tokens already in their caches. lm_head runs only for each sequence's last
/// token. Throws std::invalid_argument unless prompt >= 1, batch >= 1, cached >= 0.
inline op_counts count_prefill(const architecture& a, const precision& pr, double prompt,
                               double cached = 0, double batch = 1) {
  detail::require_in("prompt", prompt, 1, 1e9);
  detail::require_tokens("cached", cached);
  detail::require_in("batch", batch, 1, 1e9);
  return detail::count(a, pr, {phase::prefill, batch, batch * prompt, batch, prompt, {}, cached});
}

namespace detail {

/// Forward passes of a prefill of `batch` prompts of `prompt` tokens in
/// passes of `chunk` tokens (0: one pass); at least one token of each prompt
/// per pass (a pass of more prompts than `chunk` holds them whole).
inline double prefill_passes(double prompt, double batch, double chunk) {
  require_non_negative("chunk", chunk);
  if (chunk == 0 || batch * prompt <= chunk) return 1.0;
  require_in("chunk", chunk, 1, 1e9);
  return std::max(1.0, std::min(std::ceil(batch * prompt / chunk), std::floor(prompt)));
}

}  // namespace detail

/// count_prefill run in forward passes of `chunk` tokens (llama.cpp's
/// n_ubatch, mlx-lm's prefill_step_size; 0 or a prompt that fits: one pass).
/// Each pass reads the weights again (and the experts its tokens route to),
/// attends to the tokens before it and launches its own kernels; the logits
/// are computed once, in the last pass. Returned as one phase: every op
/// summed over the passes, its gemm_rows the token-weighted mean of the
/// passes' rows. `batch` prompts share each pass (chunk / batch tokens of each).
inline op_counts count_prefill_chunked(const architecture& a, const precision& pr, double prompt, double cached,
                                       double batch, double chunk) {
  const double passes = detail::prefill_passes(prompt, batch, chunk);
  if (passes <= 1) return count_prefill(a, pr, prompt, cached, batch);
  const double step = prompt / passes;  // tokens of each prompt per pass, all passes alike
  op_counts out = count_prefill(a, pr, step, cached, batch);
  // Passes differ only in the tokens before them; the attention ops grow with
  // them (linearly below a window), so every pass is counted.
  std::array<double, max_ops> rows{};
  for (std::size_t j = 0; j < out.ops.size(); ++j) rows[j] = out.ops[j].gemm_rows;
  for (double i = 1; i < passes; ++i) {
    const op_counts c = count_prefill(a, pr, step, cached + i * step, batch);
    for (std::size_t j = 0; j < out.ops.size(); ++j) {
      op& o = out.ops[j];
      const op& x = c.ops[j];
      if (o.kind == op_kind::lm_head) continue;
      o.add_totals(x);
      rows[j] += x.gemm_rows;
    }
  }
  for (std::size_t j = 0; j < out.ops.size(); ++j) {
    if (out.ops[j].kind != op_kind::lm_head) out.ops[j].gemm_rows = rows[j] / passes;
  }
  out.new_tokens = batch * prompt;
  return out;
}

}  // namespace llmroof
