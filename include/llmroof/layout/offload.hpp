// Part of a model in host memory: llama.cpp-style layer or expert offload,
// the host's share of the weights, and the step timed on both sides of PCIe.
#pragma once

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "llmroof/layout/parallel.hpp"

namespace llmroof {

namespace detail {

/// The host an offload assumes unless told (a 16-core desktop CPU with
/// dual-channel DDR5) and the bus to it, looked up once.
inline const device& default_offload_host() {
  static const device& host = find_device("ryzen-9-7950x");
  return host;
}
inline const link_spec& default_offload_bus() {
  static const link_spec& bus = find_link("pcie4");
  return bus;
}

}  // namespace detail

/// llama.cpp-style placement: a share of the layers (`layers` in [0, 1],
/// -ngl below the layer count) or every routed expert (`experts`, llama.cpp
/// --cpu-moe / -ot exps=CPU) stays in host RAM and runs on the host CPU at
/// its DRAM bandwidth. Hidden states cross PCIe at each boundary.
struct offload_plan {
  double layers = 0;     ///< share of layers on the host
  bool experts = false;  ///< routed experts on the host (MoE only)
  device host = detail::default_offload_host();
  link_spec bus = detail::default_offload_bus();
};

inline void validate(const offload_plan& o, const architecture& a) {
  detail::require_in("offload.layers", o.layers, 0, 1);
  if (o.experts && !a.is_moe()) {
    throw std::invalid_argument("offload.experts needs a Mixture-of-Experts model ('" + a.id + "' is dense)");
  }
  validate(o.host);
  if (o.host.klass != device_class::cpu) {
    throw std::invalid_argument("offload.host must be a CPU ('" + o.host.id + "' is a " +
                                std::string(to_string(o.host.klass)) + " device)");
  }
}

/// Weights that stay on the host.
inline bytes host_weight_bytes(const architecture& a, const precision& pr, const offload_plan& o) {
  const param_counts pc = count_parameters(a);
  const bytes layers = weight_bytes(a, pr) - pr.embedding.bytes_of(pc.embedding) - pr.lm_head.bytes_of(pc.lm_head);
  if (o.experts) {
    const bytes experts = pr.experts_format().bytes_of(pc.routed_experts);
    return experts + o.layers * (layers - experts);
  }
  return o.layers * layers;
}

/// Tokens per micro-batch of an offloaded prefill (llama.cpp n_ubatch, default
/// 512) and the batch from which host-resident GEMMs run on the GPU
/// (op_offload_min_batch_size, default 32; KERNELS.md 1.11).
inline constexpr double offload_micro_batch = 512;
inline constexpr double offload_min_batch = 32;

/// A phase with part of the model on the host (`all` counted in micro-batches
/// of offload_micro_batch for a prefill: count_prefill_chunked, as
/// prefill_offload does): the device's ops and the
/// host's ops run one after the other (llama.cpp runs layers in order), plus
/// the PCIe crossings of the hidden states. The device's ops run under its
/// configured roofline (the engine's profile), the host's under the host's.
inline phase_timing time_offloaded(const architecture& a, const precision& pr, const roofline& gpu,
                                   const offload_plan& o, const op_counts& all) {
  validate(o, a);
  const double batch = all.new_tokens;
  op_counts on_gpu = all;
  op_counts on_host = all;
  on_gpu.ops.clear();
  on_host.ops.clear();
  const auto scaled = [](op x, double f) {
    x.count *= f;
    x.flop = f * x.flop;
    x.weights = f * x.weights;
    x.kv_read = f * x.kv_read;
    x.kv_written = f * x.kv_written;
    x.activations = f * x.activations;
    return x;
  };
  // A prompt's micro-batches of n >= 32 tokens run their host-resident GEMMs
  // on the GPU: llama.cpp's scheduler copies the weights over the bus once per
  // micro-batch (op_offload, GGML_OP_OFFLOAD_MIN_BATCH 32,
  // ggml-cuda.cu offload_op), only the experts the micro-batch routes to for
  // MoE layers; attention and norms of host layers stay with their KV on the host.
  // `all` is counted in those micro-batches (prefill_offload), so each one's
  // weights are 1/ubatches of an op's.
  const double ubatch = std::min(offload_micro_batch, all.new_tokens);
  const bool stream = all.kind == phase::prefill && ubatch >= offload_min_batch;
  const double ubatches = stream ? std::ceil(all.new_tokens / ubatch) : 0.0;
  double streamed = 0;  // bytes over the bus per micro-batch
  for (const auto& x : all.list()) {
    const bool per_layer = x.kind != op_kind::embedding && x.kind != op_kind::lm_head;
    double host_share = per_layer ? o.layers : 0.0;
    if (o.experts && x.kind == op_kind::experts) host_share = 1.0;
    if (stream && host_share > 0 && x.klass == op_class::gemm && x.weights.value() > 0) {
      streamed += host_share * x.weights.value() / ubatches;
      on_gpu.add(x, x.kind);
      continue;
    }
    if (host_share < 1) on_gpu.add(scaled(x, 1 - host_share), x.kind);
    if (host_share > 0) on_host.add(scaled(x, host_share), x.kind);
  }
  if (streamed > 0) {
    on_gpu.add(detail::comm_op(op_kind::p2p, "comm.pcie.weights", ubatches, streamed, o.bus.speed(), 1), op_kind::p2p);
  }
  // Crossings: one each way per block of host layers; per MoE layer when the
  // experts live on the host.
  const double crossings = (o.layers > 0 ? 2.0 : 0.0) + (o.experts ? 2.0 * a.num_moe_layers() : 0.0);
  if (crossings > 0) {
    on_gpu.add(detail::comm_op(op_kind::p2p, "comm.pcie", crossings,
                               batch * a.hidden_size * pr.activations.bytes_per_element(), o.bus.speed(), 1),
               op_kind::p2p);
  }
  const phase_timing g = time_phase(on_gpu, gpu);
  const phase_timing h = time_phase(on_host, roofline(o.host));
  // One phase: the device's ops, then the host's as one op (their sums), with
  // the per-step overhead once.
  phase_timing out = g;
  op host;
  host.name = "offload.host";
  host.klass = op_class::elementwise;
  host.kind = op_kind::ffn;
  host.count = 0;
  for (const auto& x : on_host.list()) host.add_totals(x);
  op_time ht;
  ht.memory_bound = h.bound;
  ht.memory_est = h.estimate - roofline(o.host).efficiency().per_step;
  if (!on_host.ops.empty() && out.counts.ops.size() < max_ops) {
    out.counts.ops.push_back(host);
    out.times.push_back(ht);
  }
  out.bound += h.bound;
  out.estimate += h.estimate - roofline(o.host).efficiency().per_step;
  out.memory_time += h.memory_time;
  out.compute_time += h.compute_time;
  out.counts.new_tokens = all.new_tokens;
  out.counts.sequences = all.sequences;
  return out;
}

/// Decode step of `batch` sequences at `context` with part of the model on the host.
inline phase_timing decode_step_offload(const architecture& a, const precision& pr, const roofline& gpu,
                                        const offload_plan& o, double batch, double context) {
  return time_offloaded(a, pr, gpu, o, count_decode(a, pr, batch, context));
}

/// Prefill with part of the model on the host: the host layers' GEMMs on the
/// GPU with their weights streamed over the bus per micro-batch, their
/// attention on the host CPU (prompts under 32 tokens: all on the CPU).
inline phase_timing prefill_offload(const architecture& a, const precision& pr, const roofline& gpu,
                                    const offload_plan& o, double prompt, double cached = 0) {
  return time_offloaded(a, pr, gpu, o, count_prefill_chunked(a, pr, prompt, cached, 1, offload_micro_batch));
}

}  // namespace llmroof
