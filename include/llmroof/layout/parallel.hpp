// Several devices: tensor, pipeline and expert parallel plans, their
// per-device op counts and memory, and the collectives between devices.
//
// Layouts:
//  * TP x PP (ep = 1): every layer's weights split over tp devices, layers
//    over pp stages. Two all-reduces per layer; a decode step crosses every
//    stage in turn (per-token latency does not shrink with pp; memory does).
//  * EP (ep = n, tp = pp = 1): the DeepSeek/SGLang large-scale layout. Data-
//    parallel attention (each rank decodes batch/n sequences with replicated
//    attention and dense weights), routed experts split by id over the n
//    ranks, an all-to-all dispatch and combine per MoE layer; the step waits
//    for the busiest rank.
// Nodes hold `devices_per_node` devices; collectives that leave a node run at
// the inter-node link's bandwidth.
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "llmroof/engine/memory_plan.hpp"
#include "llmroof/model/moe.hpp"
#include "llmroof/step/phases.hpp"

namespace llmroof {

/// How a model is split over devices. Four shapes:
///  * tp x pp: attention and FFN split by heads and columns over tp devices,
///    layers over pp stages (vLLM/SGLang --tensor/--pipeline-parallel-size);
///  * ep alone (tp = pp = 1): data-parallel attention (each device its own
///    sequences and whole attention weights) beside expert-parallel experts,
///    an all-to-all per MoE layer (SGLang --enable-dp-attention --ep N,
///    vLLM DP + EP, TensorRT-LLM attention DP);
///  * tp and ep together (ep divides tp, pp = 1): tensor-parallel attention
///    over the tp devices with the routed experts split into ep groups of
///    whole experts, each expert tensor-parallel over tp / ep devices; every
///    device holds every token after attention, so the MoE output is
///    all-reduced as under TP (vLLM --tensor-parallel-size N
///    --enable-expert-parallel, SGLang --tp N --ep N: ep = tp; MoE TP x EP
///    when ep < tp);
///  * tp with dp_attention (ep = pp = 1): data-parallel attention (each
///    device its own sequences, their whole KV and the whole attention
///    weights) beside a tensor-parallel FFN and experts over the tp devices,
///    the tokens all-gathered before each FFN and reduce-scattered after
///    (SGLang --tp N --enable-dp-attention): MLA models stop replicating
///    their latent KV on every device.
struct parallel_plan {
  int tp = 1;
  int pp = 1;
  int ep = 1;
  int devices_per_node = 8;
  std::optional<link_spec> intra;  ///< default: the device's own (intra_node_link)
  std::optional<link_spec> inter;  ///< default: default_inter_node_link() (a plan copies none)
  bool dp_attention = false;  ///< with tp > 1: data-parallel attention, tensor-parallel FFN
  /// With tp > 1 (llama.cpp's --split-mode row, dense models): each matrix's
  /// rows split over the devices, attention, the KV cache and intermediate
  /// results on the main device (llama.cpp's --main-gpu: "for intermediate
  /// results and KV (with split-mode = row)"); each split matrix product
  /// sends its input out and gathers its output back, no all-reduce.
  bool row_split = false;

  /// Expert parallelism alone: data-parallel attention, experts split by ep.
  [[nodiscard]] bool ep_only() const { return ep > 1 && tp == 1; }
  /// Data-parallel attention beside a tensor-parallel FFN (dp_attention with tp > 1).
  [[nodiscard]] bool dp_attention_tp() const { return dp_attention && tp > 1 && ep == 1; }
  /// Attention data-parallel: each device its own sequences and their whole KV.
  [[nodiscard]] bool attention_data_parallel() const { return ep_only() || dp_attention_tp(); }
  [[nodiscard]] int devices() const { return ep_only() ? ep : tp * pp; }
  [[nodiscard]] int nodes() const { return (devices() + devices_per_node - 1) / devices_per_node; }
  /// The link between nodes: `inter`, else InfiniBand NDR.
  [[nodiscard]] const link_spec& inter_link() const { return inter ? *inter : default_inter_node_link(); }
};

/// A parallel plan as people write it: "TP 2", "TP 2 x PP 2", "PP 4", "EP 8", "1 device".
inline std::string layout_name(const parallel_plan& p) {
  if (p.ep_only()) return "EP " + std::to_string(p.ep);
  if (p.dp_attention_tp()) return "TP " + std::to_string(p.tp) + " with DP attention";
  if (p.ep > 1) return "TP " + std::to_string(p.tp) + " x EP " + std::to_string(p.ep);
  if (p.tp > 1 && p.row_split) return "TP " + std::to_string(p.tp) + " (row split)";
  if (p.tp > 1 && p.pp > 1) return "TP " + std::to_string(p.tp) + " x PP " + std::to_string(p.pp);
  if (p.tp > 1) return "TP " + std::to_string(p.tp);
  if (p.pp > 1) return "PP " + std::to_string(p.pp);
  return "1 device";
}

/// A layout as asked for: devices per node and nodes, and whichever degrees
/// were given (unset: inferred by infer_layout).
struct layout_request {
  int devices_per_node = 1;  ///< [1, 1024]
  int nodes = 1;             ///< [1, 65536]; nodes x devices_per_node <= 65536
  std::optional<int> tp;
  std::optional<int> pp;
  std::optional<int> ep;
  std::optional<link_spec> intra;  ///< unset: the device's own link
  std::optional<link_spec> inter;  ///< unset: ib-ndr
  bool dp_attention = false;       ///< data-parallel attention beside a tensor-parallel FFN
};

/// The parallel plan of a layout: tensor parallel over every device when no
/// degree is given; tp = devices / pp when only pp (or ep 1) is. Throws
/// std::invalid_argument naming the field when a count is out of range or the
/// degrees do not multiply to the devices.
inline parallel_plan infer_layout(const layout_request& r) {
  detail::require_in("devices", r.devices_per_node, 1, 1024);
  detail::require_in("nodes", r.nodes, 1, 65536);
  if (double(r.devices_per_node) * r.nodes > 65536) {
    throw std::invalid_argument("nodes x devices must be <= 65536 (got " + std::to_string(r.nodes) + " x " +
                                std::to_string(r.devices_per_node) + ")");
  }
  const int total = r.devices_per_node * r.nodes;
  parallel_plan p;
  p.devices_per_node = r.devices_per_node;
  p.tp = r.tp.value_or(1);
  p.pp = r.pp.value_or(1);
  p.ep = r.ep.value_or(1);
  detail::require_in("tp", p.tp, 1, 65536);
  detail::require_in("pp", p.pp, 1, 65536);
  detail::require_in("ep", p.ep, 1, 65536);
  // Tensor parallel over what pipeline stages leave, unless experts are
  // split (ep 1, given or not, splits none: `--ep 1` on 8 devices is TP 8).
  if (!r.tp && p.ep == 1) p.tp = std::max(1, total / p.pp);
  if (p.devices() != total) {
    throw std::invalid_argument(
        p.ep_only() ? "ep (" + std::to_string(p.ep) + ") must equal the devices (" + std::to_string(total) + ")"
                 : "tp x pp (" + std::to_string(p.tp) + " x " + std::to_string(p.pp) + " = " +
                       std::to_string(p.tp * p.pp) + ") must equal the devices (" + std::to_string(total) + ")");
  }
  p.dp_attention = r.dp_attention;
  // SGLang's --tp N --ep N --enable-dp-attention: data-parallel attention
  // beside expert-parallel experts, the ep-alone layout.
  if (p.dp_attention && p.ep > 1 && p.tp == p.ep && p.pp == 1) p.tp = 1;
  if (r.intra) p.intra = *r.intra;
  if (r.inter) p.inter = *r.inter;
  return p;
}

/// Whether tensor parallelism of degree `tp` splits `a`'s attention by heads:
/// every rank needs whole query heads, and KV heads are either split evenly or
/// replicated whole (tp a multiple of the KV heads, as vLLM and SGLang do).
inline bool splits_attention(const architecture& a, int tp) {
  if (a.num_heads % tp != 0) return false;
  if (a.attention != attention_kind::gqa) return true;
  for (int g : {a.num_kv_heads, kv_heads_of(a, layer_kind::global)}) {
    if (g % tp != 0 && tp % g != 0) return false;
  }
  return true;
}

/// Throws std::invalid_argument naming the field: sizes >= 1; ep > 1 only on
/// a Mixture-of-Experts model, no larger than its routed experts, and either
/// alone (tp = pp = 1) or dividing tp with pp = 1; pp no larger than the
/// layers.
inline void validate(const parallel_plan& p, const architecture& a) {
  detail::require_in("tp", p.tp, 1, 4096);
  detail::require_in("pp", p.pp, 1, a.num_layers);
  detail::require_in("ep", p.ep, 1, 65536);
  detail::require_in("devices_per_node", p.devices_per_node, 1, 1024);
  if (p.ep > 1) {
    if (p.pp != 1) {
      throw std::invalid_argument("ep > 1 needs pp = 1 (expert parallelism beside pipeline stages is not modelled)");
    }
    if (p.tp > 1 && p.tp % p.ep != 0) {
      throw std::invalid_argument("ep (" + std::to_string(p.ep) + ") must divide tp (" + std::to_string(p.tp) +
                                  "): each group of tp / ep devices splits its experts by tensor parallelism");
    }
    if (!a.is_moe()) throw std::invalid_argument("ep > 1 needs a Mixture-of-Experts model ('" + a.id + "' is dense)");
    detail::require_in("ep", p.ep, 1, a.moe.num_experts);
  }
  if (p.dp_attention && p.tp > 1 && (p.ep > 1 || p.pp > 1)) {
    throw std::invalid_argument(
        "dp_attention beside tp needs ep = 1 and pp = 1 (with expert parallelism give ep alone: DP attention + EP)");
  }
  if (p.dp_attention && p.tp == 1 && p.ep == 1) {
    throw std::invalid_argument("dp_attention needs tp > 1: the devices whose attention it splits by users");
  }
  if (p.row_split) {
    // llama.cpp's row split: matrices by rows, attention on the main device.
    if (p.tp < 2 || p.pp != 1 || p.ep != 1 || p.dp_attention) {
      throw std::invalid_argument("row_split needs tp > 1 alone (no pp, ep or dp_attention beside it)");
    }
    // Its split buffers do not take the MoE kernels' expert tensors
    // (mul_mat_id): ik_llama.cpp#254, "no support for MoE models with split
    // tensors ... inherited from upstream"; abetlen/llama-cpp-python#1454.
    if (a.is_moe()) {
      throw std::invalid_argument("tp: llama.cpp's row split (--split-mode row) does not split a Mixture-of-Experts "
                                  "model's experts; split '" + a.id + "' by layers (pp, the default)");
    }
    return;  // rows of any matrix split: no heads to divide
  }
  if (!splits_attention(a, p.tp)) {
    if (a.num_heads % p.tp != 0) {
      detail::fail("tp", "a divisor of the " + detail::show(a.num_heads) + " attention heads of '" + a.id + "'", p.tp);
    }
    detail::fail("tp", "a divisor or a multiple of the " + detail::show(a.num_kv_heads) + " KV heads of '" + a.id + "'",
                 p.tp);
  }
}

/// The layout model `a` takes on the devices of plan `p`: `p` itself, or, for
/// a dense model on an expert-parallel plan (which splits only experts), the
/// same devices with the largest tensor-parallel degree that splits its
/// attention and pipeline stages for the rest. How `moe` lays out its dense
/// twin beside the MoE model. Throws std::invalid_argument when no such
/// split exists (more stages than layers).
inline parallel_plan layout_for(const architecture& a, const parallel_plan& p) {
  if (a.is_moe() || p.ep == 1) return p;
  parallel_plan q = p;
  const int n = p.devices();
  q.ep = 1;
  q.tp = 1;
  for (int tp = n; tp > 1; --tp) {
    if (n % tp == 0 && splits_attention(a, tp)) {
      q.tp = tp;
      break;
    }
  }
  q.pp = n / q.tp;
  validate(q, a);
  return q;
}

namespace detail {

inline link_spec link_for(const parallel_plan& p, const device& d, int group) {
  if (group > p.devices_per_node) return p.inter_link();
  return p.intra ? *p.intra : intra_node_link(d, group);
}

/// link_for's speed, without copying the link (per step).
inline link_speed speed_for(const parallel_plan& p, const device& d, int group) {
  if (group > p.devices_per_node) return p.inter_link().speed();
  return p.intra ? p.intra->speed() : intra_node_speed(d, group);
}

/// The speed an all-to-all over `group` ranks runs at: within a node the
/// node's link; spanning nodes, each rank's traffic to the (group - node)
/// ranks of other nodes crosses the inter-node link while the rest crosses
/// the node's link at the same time, so the slower share sets the time:
/// bandwidth = 1 / max(f_inter / B_inter, f_intra / B_intra), f the shares
/// of the (group - 1) peers. Latency: the slower link's, one round (every
/// peer is sent to at once: DeepEP, NCCL's all-to-all).
inline link_speed all_to_all_speed(const parallel_plan& p, const device& d, int group) {
  if (group <= p.devices_per_node) return speed_for(p, d, group);
  const link_speed inter = p.inter_link().speed();
  const link_speed intra = p.intra ? p.intra->speed() : intra_node_speed(d, p.devices_per_node);
  const double peers = group - 1.0;
  const double f_inter = (group - p.devices_per_node) / peers, f_intra = (p.devices_per_node - 1.0) / peers;
  const double per_byte = std::max(f_inter / inter.bandwidth.value(), f_intra / intra.bandwidth.value());
  return {make_bytes_per_second(1 / per_byte), std::max(inter.latency, intra.latency)};
}

/// The link a plan's widest collective crosses: EP's all-to-all, else TP's
/// all-reduce, else the pipeline's hand-offs (what a plan prints as its link).
inline link_spec collective_link(const parallel_plan& p, const device& d) {
  return link_for(p, d, p.ep_only() ? p.ep : p.tp > 1 ? p.tp : p.tp * p.pp);
}

/// Whether a device under data-parallel attention runs `k` for its own
/// sequences only: the attention projections and kernels, and the norms.
constexpr bool own_sequences_op(op_kind k) {
  return k == op_kind::attention_proj || k == op_kind::attention_global || k == op_kind::attention_sliding ||
         k == op_kind::attention_linear || k == op_kind::norms;
}

/// An op's FLOP and bytes as one of `n` devices does its share of them.
inline void share(op& o, double n) {
  o.flop = o.flop / n;
  o.weights = o.weights / n;
  o.kv_read = o.kv_read / n;
  o.kv_written = o.kv_written / n;
  o.activations = o.activations / n;
}

inline op comm_op(op_kind kind, std::string_view name, double count, double bytes_per_instance,
                  const link_speed& l, double hops, bool within_node = false) {
  op o;
  o.within_node = within_node;
  o.name = name;
  o.klass = op_class::communication;
  o.kind = kind;
  o.count = count;
  o.network = make_bytes(count * bytes_per_instance);
  o.latency = hops * l.latency;
  o.link_bandwidth = l.bandwidth;
  return o;
}

/// The transfers of llama.cpp's row split per forward pass of `tokens`:
/// four split products per layer (QKV, output, gate and up, down), each
/// sending its input from the main device to the t - 1 others and their
/// output rows back, (t - 1) / t of both; two hops of latency each, the
/// copy out and the synchronised copy back. `passes` divide the tokens.
inline op row_split_op(const architecture& a, const parallel_plan& p, const device& d, double tokens, double act,
                       double passes) {
  const double t = p.tp, dim = a.hidden_size;
  const double qkv = double(a.num_heads + 2 * a.num_kv_heads) * a.head_dim;
  const double ffn = a.ffn_size;
  // In + out widths of the four products: QKV dim -> qkv, output dim -> dim,
  // gate and up dim -> 2 ffn, down ffn -> dim.
  const double widths = (dim + qkv) + (dim + dim) + (dim + 2 * ffn) + (ffn + dim);
  return comm_op(op_kind::all_reduce, "comm.row_split", 4.0 * a.num_layers * passes,
                 (t - 1) / t * tokens / passes * widths * act / 4.0, speed_for(p, d, p.tp), 2.0,
                 p.tp <= p.devices_per_node);
}

}  // namespace detail

/// Per-device ops of one decode step of `batch` sequences at `context` under
/// plan `p`, including the collectives (op_class::communication).
/// Throws std::invalid_argument on an invalid plan or workload.
inline op_counts count_decode_parallel(const architecture& a, const precision& pr, const device& d,
                                       const parallel_plan& p, double batch, double context, double width = 1) {
  validate(p, a);
  const double step_tokens = batch * width;  // through the layers (width > 1: a speculative verify step)
  const double act = pr.activations.bytes_per_element();
  const double dim = a.hidden_size;
  if (p.ep_only()) {
    const double n = p.ep;
    const double local = std::max(1.0, std::ceil(batch / n));  // sequences on the busiest rank
    op_counts c = count_decode(a, pr, local, context, width);
    // Routed experts: the busiest rank's step_tokens and distinct experts.
    const expert_parallel_load load =
        expert_parallel_uniform(a.moe.num_experts, a.moe.experts_per_token, step_tokens, p.ep);
    const double ep_params = expert_params(a) * a.num_moe_layers();
    for (op& o : c.ops) {
      if (o.kind != op_kind::experts) continue;
      o.weights = pr.experts_format().bytes_of(load.busiest_rank_experts * ep_params);
      o.flop = make_flops(2.0 * load.busiest_rank_tokens * ep_params);
      o.activations = make_bytes(load.busiest_rank_tokens * (2.0 * dim + 3.0 * a.moe.expert_ffn) * a.num_moe_layers() * act);
      o.gemm_rows = load.busiest_rank_experts > 0 ? load.busiest_rank_tokens / load.busiest_rank_experts : 1.0;
    }
    const link_speed l = detail::all_to_all_speed(p, d, p.ep);
    // Per rank and MoE layer: its step_tokens' hidden states go to remote
    // experts and back, to every peer at once (one round each way).
    const double per_layer = all_to_all_bytes(step_tokens, a.moe.experts_per_token, p.ep, a.hidden_size, act) / n;
    c.add(detail::comm_op(op_kind::all_to_all, "comm.all_to_all", 2.0 * a.num_moe_layers(), per_layer / 2,
                          l, 1),
          op_kind::all_to_all);
    c.sequences = batch;
    c.new_tokens = step_tokens;
    return c;
  }

  op_counts c = count_decode(a, pr, batch, context, width);
  const double t = p.tp;
  if (p.dp_attention_tp()) {
    // Attention: the busiest device's own sequences, whole weights and KV.
    // Everything else: the whole batch, split over the tp devices.
    const op_counts local = count_decode(a, pr, std::max(1.0, std::ceil(batch / t)), context, width);
    for (std::size_t i = 0; i < c.ops.size(); ++i) {
      op& o = c.ops[i];
      if (detail::own_sequences_op(o.kind)) {
        o = local.ops[i];
      } else if (o.kind != op_kind::router) {  // the router: replicated, on every token
        detail::share(o, t);
      }
    }
    // Per layer an all-gather of the hidden states before the FFN and a
    // reduce-scatter after: (t - 1) / t of the batch's hidden states each,
    // one all-reduce's bytes (TP's two per layer halve).
    const double msg = step_tokens * dim * act;
    c.add(detail::comm_op(op_kind::all_reduce, "comm.gather_scatter", a.num_layers, 2.0 * (t - 1) / t * msg,
                          detail::speed_for(p, d, p.tp), 2.0 * (t - 1), p.tp <= p.devices_per_node),
          op_kind::all_reduce);
    return c;
  }
  for (op& o : c.ops) {
    double split = t;  // FLOP and bytes shared by the TP group
    if (p.ep > 1 && o.kind == op_kind::experts) {
      // TP attention x EP experts: every device holds every token; the busiest
      // of the ep groups of whole experts sets the step, each of its experts
      // split over tp / ep devices.
      const double et = t / p.ep;
      const expert_parallel_load load =
          expert_parallel_uniform(a.moe.num_experts, a.moe.experts_per_token, step_tokens, p.ep);
      const double ep_params = expert_params(a) * a.num_moe_layers();
      o.weights = (1.0 / et) * pr.experts_format().bytes_of(load.busiest_rank_experts * ep_params);
      o.flop = make_flops(2.0 * load.busiest_rank_tokens * ep_params / et);
      o.activations =
          make_bytes(load.busiest_rank_tokens * (2.0 * dim + 3.0 * a.moe.expert_ffn / et) * a.num_moe_layers() * act);
      o.gemm_rows = load.busiest_rank_experts > 0 ? load.busiest_rank_tokens / load.busiest_rank_experts : 1.0;
      continue;
    }
    switch (o.kind) {
      case op_kind::norms:
      case op_kind::router: split = 1; break;  // replicated
      case op_kind::attention_global:
      case op_kind::attention_sliding: {
        if (p.row_split) continue;  // the main device attends over every head
        // Heads split; K/V heads replicate when g < tp (each kind of layer
        // its own g); MLA latents replicate.
        const double gk =
            kv_heads_of(a, o.kind == op_kind::attention_global ? layer_kind::global : layer_kind::sliding);
        o.flop = o.flop / t;
        o.kv_read = a.attention == attention_kind::mla ? o.kv_read : o.kv_read / std::min(t, gk);
        o.kv_written = a.attention == attention_kind::mla ? o.kv_written : o.kv_written / std::min(t, gk);
        continue;
      }
      default: break;
    }
    detail::share(o, split);
  }
  if (p.tp > 1 && p.row_split) {
    c.add(detail::row_split_op(a, p, d, step_tokens, act, 1), op_kind::all_reduce);
  } else if (p.tp > 1) {
    // Two all-reduces per layer (after attention and after the FFN) of the
    // hidden states; a ring sends 2(t-1)/t of the message per device.
    const double msg = step_tokens * dim * act;
    const link_speed l = detail::speed_for(p, d, p.tp);
    c.add(detail::comm_op(op_kind::all_reduce, "comm.all_reduce", 2.0 * a.num_layers,
                          2.0 * (t - 1) / t * msg, l, 2.0 * (t - 1), p.tp <= p.devices_per_node),
          op_kind::all_reduce);
  }
  if (p.pp > 1) {
    const link_speed l = detail::speed_for(p, d, p.tp * p.pp);
    c.add(detail::comm_op(op_kind::p2p, "comm.pipeline", p.pp - 1.0, step_tokens * dim * act, l, 1), op_kind::p2p);
  }
  return c;
}

/// Timed decode step under a parallel plan, per device.
inline phase_timing decode_step_parallel(const architecture& a, const precision& pr, const device& d,
                                         const efficiency_profile& e, const parallel_plan& p, double batch,
                                         double context) {
  const roofline r(d, e, 1);
  return time_phase(count_decode_parallel(a, pr, d, p, batch, context), r);
}

/// Ops of a phase and the factor a pipeline's fill stretches its time by.
struct pipelined_counts {
  op_counts counts;
  double fill = 1;
};

/// Times pipelined counts on one device's roofline.
inline phase_timing time_pipelined(pipelined_counts c, const roofline& r) {
  phase_timing t = time_phase(std::move(c.counts), r);
  if (c.fill != 1) {
    t.bound = c.fill * t.bound;
    t.estimate = c.fill * t.estimate;
    t.memory_time = c.fill * t.memory_time;
    t.compute_time = c.fill * t.compute_time;
  }
  return t;
}

/// Per-device ops of a prefill under a parallel plan, and the factor its
/// time stretches by while a pipeline fills (1 without one): TP splits like
/// decode; PP pipelines
/// the prompt in micro-batches (llama.cpp n_ubatch 512, the default); under EP
/// one rank prefills the prompt with its experts spread over the ranks.
/// `batch` prompts of `prompt` tokens each go in one pass (each attends to
/// its own tokens); `chunk` > 0 runs them in passes of that many tokens
/// (count_prefill_chunked), each pass with its own collectives. The counts
/// do not depend on the profile: a fit counts once and times many profiles
/// (time_pipelined).
inline pipelined_counts count_prefill_parallel(const architecture& a, const precision& pr, const device& d,
                                               const parallel_plan& p, double prompt, double cached = 0,
                                               double micro_batch = 512, double batch = 1, double chunk = 0) {
  validate(p, a);
  op_counts c = count_prefill_chunked(a, pr, prompt, cached, batch, chunk);
  const double passes = detail::prefill_passes(prompt, batch, chunk);
  const double n = p.ep_only() ? p.ep : p.tp;  // TP x EP splits every op over tp (balanced experts)
  // Pipeline stages hold 1/pp of the layers each; the prompt flows through
  // them in micro-batches of `micro_batch` tokens, so a stage works on one
  // micro-batch while the next stage works on the previous one.
  const double stages = p.pp;
  if (stages > 1) {
    for (op& o : c.ops) {
      if (o.kind == op_kind::embedding || o.kind == op_kind::lm_head) continue;
      o.count /= stages;
      detail::share(o, stages);
    }
  }
  // Under data-parallel attention each device prefills its own prompts'
  // attention (the busiest holds ceil(batch / n) of them); the FFN (TP) or
  // the experts (EP) spread over the devices.
  std::optional<op_counts> own;
  if (p.attention_data_parallel() && batch > 1) {
    own = count_prefill_chunked(a, pr, prompt, cached, std::ceil(batch / n), chunk);
  }
  for (std::size_t i = 0; i < c.ops.size(); ++i) {
    op& o = c.ops[i];
    const bool attends = o.kind == op_kind::attention_global || o.kind == op_kind::attention_sliding;
    const bool split = p.ep_only()          ? o.kind == op_kind::experts
                       : p.dp_attention_tp() ? !detail::own_sequences_op(o.kind) && o.kind != op_kind::router
                       : p.row_split         ? o.kind != op_kind::norms && o.kind != op_kind::router && !attends
                                             : (o.kind != op_kind::norms && o.kind != op_kind::router);
    if (!split) {
      // The router of DP attention beside TP runs on every token after the gather.
      if (own && !(p.dp_attention_tp() && o.kind == op_kind::router)) o = own->ops[i];
      continue;
    }
    o.flop = o.flop / n;
    o.weights = o.weights / n;
    o.activations = o.activations / n;
    if (a.attention != attention_kind::mla || p.ep_only()) {
      o.kv_read = o.kv_read / n;
      o.kv_written = o.kv_written / n;
    }
  }
  const double act = pr.activations.bytes_per_element();
  const double all_tokens = batch * prompt;  // every prompt's tokens cross the links
  if (p.ep_only()) {
    // Per rank, as in decode: the busiest rank sends its own prompts' tokens
    // (ceil(batch / ep) prompts under DP attention) and receives its share
    // of everyone's, whichever is more; one round to every peer at once.
    const double own_tokens = std::ceil(batch / n) * prompt;
    const double rank_tokens = std::max(own_tokens, all_tokens / n);
    c.add(detail::comm_op(op_kind::all_to_all, "comm.all_to_all", 2.0 * a.num_moe_layers() * passes,
                          all_to_all_bytes(rank_tokens, a.moe.experts_per_token, p.ep, a.hidden_size, act) / 2 / passes,
                          detail::all_to_all_speed(p, d, p.ep), 1),
          op_kind::all_to_all);
  } else if (p.tp > 1 && p.row_split) {
    c.add(detail::row_split_op(a, p, d, all_tokens, act, passes), op_kind::all_reduce);
  } else if (p.tp > 1) {
    const double t = p.tp;
    const double per_layer = p.dp_attention_tp() ? 1.0 : 2.0;  // gather + scatter: one all-reduce's bytes
    c.add(detail::comm_op(op_kind::all_reduce, "comm.all_reduce", per_layer * a.num_layers * passes,
                          2.0 * (t - 1) / t * all_tokens * a.hidden_size * act / passes, detail::speed_for(p, d, p.tp),
                          2.0 * (t - 1), p.tp <= p.devices_per_node),
          op_kind::all_reduce);
  }
  if (p.pp > 1) {
    c.add(detail::comm_op(op_kind::p2p, "comm.pipeline", (p.pp - 1.0) * passes, all_tokens * a.hidden_size * act / passes,
                          detail::speed_for(p, d, p.tp * p.pp), 1),
          op_kind::p2p);
  }
  pipelined_counts out{std::move(c)};
  if (stages > 1) {
    // m micro-batches through `stages` stages: (m + stages - 1) stage-slots of
    // 1/m of one stage's work each.
    const double m = std::max(1.0, std::ceil(all_tokens / micro_batch));
    out.fill = (m + stages - 1) / m;
  }
  return out;
}

/// Timed prefill under a parallel plan, per device (count_prefill_parallel),
/// in the passes of `e` (prefill_chunk).
inline phase_timing prefill_parallel(const architecture& a, const precision& pr, const device& d,
                                     const efficiency_profile& e, const parallel_plan& p, double prompt,
                                     double cached = 0, double micro_batch = 512, double batch = 1) {
  return time_pipelined(count_prefill_parallel(a, pr, d, p, prompt, cached, micro_batch, batch, e.prefill_chunk),
                        roofline(d, e, 1));
}

/// Memory of one device under the plan, for `users` sequences of `context`.
/// Weights: TP/PP shards (norms and routers replicated; TP x EP holds the
/// same share), under EP alone the replicated non-expert weights plus 1/ep of
/// the routed experts, under DP attention beside TP the whole attention
/// weights plus 1/tp of the rest. KV: heads split over TP (replicated when
/// g < tp; MLA latents replicated), layers over PP; under data-parallel
/// attention each device holds its own users' whole caches.
/// The result's fields are per device; `max_sequences` counts all devices'.
inline memory_plan plan_memory_parallel(const architecture& a, const precision& pr, const device& d,
                                        const parallel_plan& p, double users, double context,
                                        const engine_settings& e = {},
                                        std::optional<bytes> stored_weights = std::nullopt, double shared = 0,
                                        const drafter_load& drafter = {}) {
  detail::require_in("users", users, 1, 1e9);
  detail::require_tokens("context", context);
  detail::require_tokens("shared", shared);
  validate(p, a);
  validate(e);
  validate_kv_format(e, pr.kv);
  const param_counts pc = count_parameters(a);
  const bytes all = stored_weights ? *stored_weights : weight_bytes(a, pr);
  const bytes replicated = pr.activations.bytes_of(pc.norms + pc.router);
  bytes per_device;
  double kv_share = 1;  // of one sequence's KV on one device
  std::optional<architecture> kv_view;  // per kind of layer, where kinds split apart
  double seqs_per_device = users;
  if (p.ep_only()) {
    const bytes experts = pr.experts_format().bytes_of(pc.routed_experts);
    per_device = all - experts + (1.0 / p.ep) * experts;
    seqs_per_device = std::ceil(users / p.ep);
  } else if (p.dp_attention_tp()) {
    // Whole attention weights on every device, the rest split; each device
    // holds its own sequences' whole KV.
    const bytes attention = pr.attention_format().bytes_of(pc.attention);
    per_device = (1.0 / p.tp) * (all - replicated - attention) + replicated + attention;
    seqs_per_device = std::ceil(users / p.tp);
  } else {
    per_device = (1.0 / (p.tp * p.pp)) * (all - replicated) + replicated;
    // Each kind of layer keeps 1 / min(tp, its KV heads) of its cache on a
    // device (heads replicate past their count); MLA latents replicate whole.
    kv_share = 1.0 / p.pp;
    if (p.row_split) {
      // The main device holds every layer's whole KV cache.
    } else if (a.attention == attention_kind::gqa) {
      const int g = std::min(p.tp, a.num_kv_heads), global = std::min(p.tp, kv_heads_of(a, layer_kind::global));
      if (g == global) {
        kv_share /= g;
      } else {  // Gemma 4's global layers: a device's view of the heads it holds
        kv_view = a;
        kv_view->num_kv_heads /= g;
        kv_view->global_kv_heads /= global;
      }
    }
  }
  const architecture& kv_arch = kv_view ? *kv_view : a;
  // One device's view: its weights, its share of each of its sequences.
  memory_plan m;
  m.devices = p.devices();
  m.users = users;
  m.context = context;
  // Under TP x EP each expert is split tp / ep ways and a device holds 1/tp
  // of them all, as under TP; its tokens are already on every device (no
  // gather for the MoE workspace).
  const int expert_tp = p.ep > 1 ? std::max(1, p.tp / p.ep) : p.tp;
  const bytes padding = (1.0 / p.devices()) * expert_padding_bytes(a, pr, e, expert_tp);
  detail::with_budget(e, context, [&](const engine_settings& es) {
    detail::apply_engine_budget(m, a, d, es, 1, per_device + padding + drafter.weights,
                                rank_split{p.tp, p.ep_only() ? p.ep : 1, p.pp, p.nodes()});
  });
  // A drafter's KV rides on every token (its layers in the same blocks) and
  // each sequence reserves its lookahead slots.
  const double with_drafter = 1 + drafter.kv_share;
  const double token = kv_share * kv_bytes_per_token(kv_arch, pr.kv).value();
  const auto per_sequence = [&](double c) {
    return with_drafter * kv_share * kv_bytes_per_sequence(kv_arch, pr.kv, c, e.block_tokens).value() +
           drafter.lookahead * token;
  };
  const double per_seq = per_sequence(context);
  // A prefix every sequence starts with is one copy on each device's share
  // (a block-sharing prefix cache): n sequences need n x per_seq less
  // (n - 1) copies of it.
  const auto held_once = [&](double c) {
    return with_drafter * kv_share * kv_bytes_shared(kv_arch, pr.kv, shared, c).value();
  };
  const auto needed = [&](double n, double c) {
    return n <= 0 ? 0.0 : n * per_sequence(c) - (n - 1) * held_once(c);
  };
  m.kv_per_token = make_bytes(with_drafter * token);
  m.kv_per_token_past_window =
      make_bytes(with_drafter * kv_share * kv_bytes_per_token_past_windows(kv_arch, pr.kv).value());
  m.kv_per_sequence = make_bytes(per_seq);
  m.shared_tokens = shared;
  m.kv_shared = make_bytes(held_once(context));
  m.kv_needed = make_bytes(needed(seqs_per_device, context));
  detail::apply_startup(m, e, e.max_model_len.value_or(std::max(1.0, context)), m.kv_per_token.value(), per_sequence);
  m.fits = m.starts && context <= m.max_model_len && m.kv_needed <= m.kv_budget;
  const double replicas_of_budget = p.attention_data_parallel() ? p.devices() : 1;
  const double sh = m.kv_shared.value();
  m.max_sequences = m.weights_fit && per_seq > 0
                        ? replicas_of_budget * (per_seq > sh ? std::max(0.0, std::floor((m.kv_budget.value() - sh) / (per_seq - sh)))
                                                             : (m.kv_budget.value() >= per_seq ? 1e9 : 0.0))
                        : 0;
  if (m.weights_fit) {
    m.max_context = std::max(
        0.0, detail::largest_within([&](double c) { return needed(seqs_per_device, c); }, m.kv_budget.value()));
  }
  return m;
}

}  // namespace llmroof
