// The roofline: an op's time is the larger of its compute time and its memory
// time. The bound uses the device's peaks; the estimate applies an
// efficiency profile and per-kernel overhead, so estimate >= bound always.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>
#include <string>
#include <vector>

#include "llmroof/detail/enum_names.hpp"
#include "llmroof/hardware/device.hpp"
#include "llmroof/step/ops.hpp"
#include "llmroof/units/units.hpp"

namespace llmroof {

/// The math an engine's GEMM kernels run on quantized weights (weights
/// stored below 16 bits): a trait of the engine and its version, not fitted.
enum class kernel_path : std::uint8_t {
  /// The format's own roof: fp8/int8/fp4 tensor units for W8A8/W4A4 formats,
  /// 16-bit math for weight-only ones (Marlin, Machete). vLLM, SGLang,
  /// TensorRT-LLM.
  native,
  /// Every quantized weight dequantized to 16 bit for a 16-bit GEMM: llama.cpp
  /// builds of 2024 (dequantize + cuBLAS above a few rows), Metal, MLX.
  dequantize,
  /// Quantized weights times activations quantized to 8 bits, as integer dot
  /// products: INT8 tensor cores, or DP4A on cards without them (the catalog's
  /// int8 rate is DP4A there). Current llama.cpp CUDA (MMQ since 2024; the
  /// default for every ggml type and MXFP4 from 2025 builds).
  int8_dot,
};

inline constexpr std::array<std::string_view, 3> kernel_path_names{"native", "dequantize", "int8_dot"};

constexpr std::string_view to_string(kernel_path k) { return detail::enum_name(k, kernel_path_names); }

/// How an engine's host work of a step (per_step: scheduling the batch,
/// preparing its inputs, sampling, detokenizing) meets the kernels of the step.
enum class host_overlap : std::uint8_t {
  /// The host works between steps, the GPU idles: step = kernels + host
  /// (vLLM, llama.cpp, TensorRT-LLM's C++ executor).
  serial,
  /// The host prepares step n+1 while the GPU runs step n: only host work
  /// longer than the kernels costs time, step = max(kernels, host) (SGLang's
  /// overlap scheduler, on by default since v0.4, Dec 2024).
  overlapped,
};

inline constexpr std::array<std::string_view, 2> host_overlap_names{"serial", "overlapped"};

constexpr std::string_view to_string(host_overlap h) { return detail::enum_name(h, host_overlap_names); }

/// What one engine achieves on one class of device. Calibrated profiles
/// (calibrate.hpp) produce the same struct.
struct efficiency_profile {
  std::string name;
  double memory = 0.66;             ///< eta_m: achieved fraction of peak bandwidth, (0, 1]
  double compute = 0.75;            ///< eta_c of a large GEMM, (0, 1]
  double compute_half_rows = 64;    ///< GEMM rows at which eta_c is half of `compute`, >= 0
  double attention = 0.5;           ///< attention kernels' fraction of the compute roof, (0, 1]
  /// Fused attention kernels' achieved fraction of peak bandwidth reading the
  /// KV cache (decode attention), (0, 1]; 0: eta_m. Fitted per device and
  /// engine to the kernel database (src/engine/kernel_fits.inc): FlashAttention-3
  /// decode on an H100 reaches 0.56 where the same engine's GEMMs stream 0.82.
  double kv_stream = 0;
  /// Fixed time of one attention op instance (a layer's attention call:
  /// split-KV kernel and its combine), s: the floor the kernel database
  /// measures at tiny batches and contexts (10-18 us on datacenter GPUs).
  /// The op pays the larger of it and its launches' gaps; 0: launches only.
  seconds attention_floor = make_seconds(0);
  /// Fixed time of one experts op instance (routing, the grouped GEMMs and
  /// the combine of one MoE layer), s: its floor in the kernel database
  /// (30-60 us on datacenter GPUs), paid as attention_floor is.
  seconds expert_floor = make_seconds(0);
  /// Attention kernels' bandwidth relative to eta_m when they read the KV
  /// cache without a fused kernel, (0, 1]: llama.cpp without FlashAttention
  /// reads its cache at a fraction of GEMV speed. Fused kernels read at eta_m.
  double kv_memory = 1.0;
  /// Share of eta_c that GEMMs on an FP8 or FP4 tensor roof reach, relative to
  /// 16-bit GEMMs, (0, 1]: they quantize their activations and scale their
  /// outputs in passes of their own, and the doubled rate runs into the
  /// board's power limit. Class default in src/engine/profiles.cpp.
  double low_precision = 0.7;
  /// Share of eta_m that GEMMs on an FP8 or FP4 roof stream their weights
  /// at, relative to 16-bit GEMMs, (0, 1]: the engines' scaled-FP8 kernels
  /// keep fewer bytes in flight at small M (vLLM's CUTLASS scaled mm on an
  /// H100: 0.64 of peak against cuBLAS BF16's 0.82; kernel database,
  /// src/engine/kernel_fits.inc). 1 where nothing measured it.
  double low_precision_memory = 1.0;
  /// The engine's 16-bit GEMMs accumulate in FP16 (llama.cpp's cuBLAS path
  /// asks for CUBLAS_COMPUTE_16F), which GeForce cards run at twice their
  /// FP32-accumulate rate (see device::fp16_accumulate_speedup).
  bool fp16_accumulate = false;
  /// Attention runs as one fused kernel (FlashAttention and its kin); false
  /// for engines that materialize the score matrix in memory (llama.cpp
  /// without -fa), which adds the op's unfused_bytes_per_flop traffic.
  bool fused_attention = true;
  /// The roof GEMMs on quantized weights run on (see kernel_path).
  kernel_path quantized_path = kernel_path::native;
  /// Highest rate at which the engine's GEMM kernels stream weights from one
  /// device, B/s (0: none). Skinny decode GEMMs are latency-bound: they keep
  /// too few bytes in flight to fill HBM (Little's law), so batch-1 llama.cpp
  /// and TensorRT-LLM 0.5 both top out near 1.1-1.3 TB/s on A100/H100 while
  /// GDDR cards reach ~0.9 of peak in the same engine.
  double stream_cap = 0;
  seconds per_kernel = make_seconds(0);       ///< launch overhead per kernel (per layer op)
  /// Cost of each kernel a PyTorch-based engine launches (op::launches): the
  /// gap a dependent small kernel leaves on the GPU, replayed from a CUDA graph
  /// or launched from Python. A trait of the engine's kernel class, not fitted
  /// (engine_profile.hpp); 0 where a fitted per_kernel stands for it.
  seconds per_launch = make_seconds(0);
  seconds per_step = make_seconds(0.3e-3);    ///< host work per scheduler call (scheduling, sampling)
  /// Whether the host work overlaps the kernels (see host_overlap).
  host_overlap overlap = host_overlap::serial;
  /// Prompt tokens per forward pass of a prefill (llama.cpp's n_ubatch 512,
  /// mlx-lm's prefill_step_size 2048; 0: the whole prompt in one pass). A
  /// kernel trait of the engine class, never fitted: each pass reads the
  /// weights again and its GEMMs have the pass's rows, so a long prompt runs
  /// at the speed of its passes, slowed by attention to the tokens before them.
  double prefill_chunk = 0;
  /// Fixed cost of each hand-off between pipeline stages (a layer split's
  /// boundary), beyond the link's latency and bytes: llama.cpp ends a graph
  /// split there and the next GPU waits for the hidden state (staged through
  /// the host between GeForce cards) and its own graph launch. A kernel trait
  /// of the engine class (0: none), never fitted.
  seconds per_hop = make_seconds(0);
  /// Host work per sequence of a decode step, beyond per_step: vLLM V0's
  /// Python scheduler, sampler and detokenizer visit every running sequence
  /// each step. A kernel trait of the engine class (0: none), never fitted.
  seconds per_sequence = make_seconds(0);
  /// Decode steps run per scheduler call, >= 1: vLLM 0.6's multi-step
  /// scheduling (--num-scheduler-steps, Sep 2024) schedules and prepares inputs
  /// once for n steps, so each step pays per_step / n.
  int scheduler_steps = 1;
  /// Handling of one request outside the model's kernels, paid once before its
  /// first token: HTTP and JSON, tokenization, admission into a scheduler step,
  /// detokenizing and streaming the first token. Counted in TTFT and end-to-end
  /// latency of served requests, never in kernel benchmarks (llama-bench).
  /// A burst (load_model.hpp serve_burst) pays it one request after another: one
  /// server process handles every request.
  seconds per_request = make_seconds(5e-3);
  /// Achieved fraction of link bandwidth in collectives: NCCL's bus bandwidth
  /// reaches ~80% of NVLink peak for large messages (nccl-tests reports).
  double link = 0.8;
  /// Fixed time of one all-reduce among the devices of a node, s (0: the
  /// ring's 2 (n - 1) link latencies): the engines' custom all-reduce reads
  /// every peer's buffer at once, 3-5 us on NVLink in the kernel database
  /// against 21 us for eight GPUs' ring hops (src/engine/kernel_fits.inc).
  seconds collective_latency = make_seconds(0);
  /// Standard errors of the fitted fields (or a nominal spread for unfitted
  /// defaults): the band of every estimate.
  double memory_sd = 0.05;
  double compute_sd = 0.05;
  seconds per_step_sd = make_seconds(0.2e-3);
  seconds per_kernel_sd = make_seconds(0);
  seconds per_launch_sd = make_seconds(0);
  seconds per_request_sd = make_seconds(5e-3);
  std::string source;
  /// Measured points its values rest on: a fit's points, the release3 TPOT
  /// points behind the launch-priced class defaults; 0 when nothing measured
  /// stands behind the profile (plans say so).
  int points = 0;

  /// Floor of eta_c(m) / compute: a GEMV (m = 1) runs on CUDA cores or
  /// dequantizing kernels at a fraction of tensor-core peak, not at 1/64 of it;
  /// batch-1 decode stays memory-bound, as every engine measures it.
  double compute_floor = 0.25;

  /// Quantized GEMMs of few token rows run as mat-vec kernels that read the
  /// weights once per row (MLX's qmv: one threadgroup row per token, weights
  /// re-read per token, KERNELS.md 6.1), on GPUs without qmv_wide for the
  /// engine's affine formats (Apple M1 and M2: qmv_rows_below). A kernel
  /// trait of the engine class, never fitted.
  bool qmv_rows_reread = false;
  /// ggml's flash attention (with -fa; without it attention runs as
  /// ordinary matmuls) on AMD RDNA3/4 takes its WMMA kernel only when
  /// the GQA optimisation applies (2+ query heads per KV head) and heads are
  /// at most 128 wide; else its TILE kernel, which runs on the vector ALUs
  /// (the fp32 roof): fattn.cu ggml_cuda_get_best_fattn_kernel, KERNELS.md
  /// 1.9. A trait of the HIP build (engine_profile.hpp), never fitted.
  bool fa_tile_without_gqa = false;

  /// The fitted efficiencies (their profile fields: "memory", "compute",
  /// "attention") that sit at their upper limit, 1 (to 0.5%): a fit that ran
  /// into the bound asked for the whole roof, which no engine sustains, so
  /// estimates on it may lean optimistic (read them with the band's low
  /// edge). Plans say so. Empty for a profile no points stand behind.
  [[nodiscard]] std::vector<std::string_view> at_limit() const {
    std::vector<std::string_view> out;
    if (points <= 0) return out;
    constexpr double limit = 0.995;
    if (memory >= limit) out.emplace_back("memory");
    if (compute >= limit) out.emplace_back("compute");
    if (attention >= limit) out.emplace_back("attention");
    return out;
  }

  /// eta_c(m) = compute * max(compute_floor, m / (m + compute_half_rows)):
  /// small GEMMs reach a smaller share of the peak.
  [[nodiscard]] constexpr double compute_efficiency(double rows) const {
    const double shape = rows / (rows + compute_half_rows);
    return compute * (shape > compute_floor ? shape : compute_floor);
  }
};

/// The profile one standard error slower in every field (the low end of the band).
inline efficiency_profile slower(efficiency_profile e) {
  // The streaming cap is a bandwidth too: it moves by eta_m's share.
  // The streaming cap and the fused attention's share are bandwidths too:
  // each moves by eta_m's share.
  e.stream_cap *= std::max(0.01, e.memory - e.memory_sd) / e.memory;
  e.kv_stream *= std::max(0.01, e.memory - e.memory_sd) / e.memory;
  e.memory = std::max(0.01, e.memory - e.memory_sd);
  e.compute = std::max(0.01, e.compute - e.compute_sd);
  e.per_step = e.per_step + e.per_step_sd;
  e.per_kernel = e.per_kernel + e.per_kernel_sd;
  e.per_launch = e.per_launch + e.per_launch_sd;
  e.per_request = e.per_request + e.per_request_sd;
  return e;
}

/// The profile one standard error faster in every field (the high end).
inline efficiency_profile faster(efficiency_profile e) {
  e.stream_cap *= std::min(1.0, e.memory + e.memory_sd) / e.memory;
  e.kv_stream = std::min(1.0, e.kv_stream * std::min(1.0, e.memory + e.memory_sd) / e.memory);
  e.memory = std::min(1.0, e.memory + e.memory_sd);
  e.compute = std::min(1.0, e.compute + e.compute_sd);
  e.per_step = make_seconds(std::max(0.0, (e.per_step - e.per_step_sd).value()));
  e.per_kernel = make_seconds(std::max(0.0, (e.per_kernel - e.per_kernel_sd).value()));
  e.per_launch = make_seconds(std::max(0.0, (e.per_launch - e.per_launch_sd).value()));
  e.per_request = make_seconds(std::max(0.0, (e.per_request - e.per_request_sd).value()));
  return e;
}

/// Throws std::invalid_argument naming the first field out of range.
inline void validate(const efficiency_profile& e) {
  detail::require_in_open_closed("efficiency.memory", e.memory, 0, 1);
  detail::require_in_open_closed("efficiency.compute", e.compute, 0, 1);
  detail::require_non_negative("efficiency.compute_half_rows", e.compute_half_rows);
  detail::require_in("efficiency.compute_floor", e.compute_floor, 0, 1);
  detail::require_in_open_closed("efficiency.attention", e.attention, 0, 1);
  detail::require_in_open_closed("efficiency.kv_memory", e.kv_memory, 0, 1);
  detail::require_in("efficiency.kv_stream", e.kv_stream, 0, 1);
  detail::require_in("efficiency.attention_floor", e.attention_floor.value(), 0, 1);
  detail::require_in("efficiency.expert_floor", e.expert_floor.value(), 0, 1);
  detail::require_in_open_closed("efficiency.low_precision", e.low_precision, 0, 1);
  detail::require_in_open_closed("efficiency.low_precision_memory", e.low_precision_memory, 0, 1);
  detail::require_in_open_closed("efficiency.link", e.link, 0, 1);
  detail::require_in("efficiency.collective_latency", e.collective_latency.value(), 0, 1);
  detail::require_non_negative("efficiency.per_kernel", e.per_kernel.value());
  detail::require_non_negative("efficiency.per_launch", e.per_launch.value());
  if (e.prefill_chunk != 0) detail::require_in("efficiency.prefill_chunk", e.prefill_chunk, 1, 1e9);
  detail::require_in("efficiency.per_hop", e.per_hop.value(), 0, 1);
  detail::require_in("efficiency.per_sequence", e.per_sequence.value(), 0, 1);
  detail::require_non_negative("efficiency.stream_cap", e.stream_cap);
  detail::require_non_negative("efficiency.per_step", e.per_step.value());
  detail::require_in("efficiency.scheduler_steps", e.scheduler_steps, 1, 1024);
  detail::require_non_negative("efficiency.per_request", e.per_request.value());
  detail::require_in("efficiency.points", e.points, 0, 1 << 30);
}

/// Default profile of a device's class (documented with its source).
efficiency_profile default_profile(const device& d);

enum class bottleneck : std::uint8_t { memory, compute, overhead, link };

inline constexpr std::array<std::string_view, 4> bottleneck_names{"memory", "compute", "overhead", "link"};

constexpr std::string_view to_string(bottleneck b) { return detail::enum_name(b, bottleneck_names); }

/// Times of one op.
struct op_time {
  seconds compute_bound = make_seconds(0);  ///< FLOP / peak
  seconds memory_bound = make_seconds(0);   ///< bytes / bandwidth
  seconds compute_est = make_seconds(0);    ///< FLOP / (peak * eta_c)
  seconds memory_est = make_seconds(0);     ///< bytes / (bandwidth * eta_m)
  seconds overhead = make_seconds(0);
  math_format math = math_format::bf16;     ///< the roof the op ran on (after kernel path and fallback)
  bool communication = false;               ///< memory_* are link times
  [[nodiscard]] constexpr seconds bound() const { return std::max(compute_bound, memory_bound); }
  [[nodiscard]] constexpr seconds estimate() const {
    return std::max(compute_est, memory_est) + overhead;
  }
  /// The roof the op's work runs against, its launch gaps aside: compute or memory.
  [[nodiscard]] constexpr bottleneck roof() const {
    return compute_est > memory_est ? bottleneck::compute : bottleneck::memory;
  }
  [[nodiscard]] constexpr bottleneck limit() const {
    if (communication) return bottleneck::link;
    // Launch-bound: the gaps between its kernels outlast their work.
    if (overhead > std::max(compute_est, memory_est)) return bottleneck::overhead;
    return roof();
  }
};

/// Token rows below which MLX runs a quantized GEMM as qmv kernels that
/// read the weights once per row, on `d` (0: never). get_qmv_batch_limit
/// (mlx/backend/metal/quantized.cpp:85, KERNELS.md 6.1) for matrices with K
/// or N above 4,096: 12 on Ultra-class ('d') chips, 6 on other M1/M2
/// (architecture gen 13-14); from M3 (gen 15) qmv_wide reuses each weight
/// group across the rows of MLX's affine formats, so none. Smaller matrices
/// have higher limits (18 / 10 up to 4,096, 32 / 14 up to 2,048): the ops
/// carry no K and N, so a model of width 4,096 or less is priced with the
/// large limit, which only matters for 6-18 rows (batched decode, not a
/// verify of a few drafts). The Apple naming (M1 = g13 ... M5 = g17) is
/// KERNELS.md's reading, not the source's.
inline double qmv_rows_below(const device& d) {
  if (d.vendor != "Apple") return 0;
  const bool old = d.family.find(" M1") != std::string::npos || d.family.find(" M2") != std::string::npos;
  if (!old) return 0;
  return d.name.find("Ultra") != std::string::npos ? 12 : 6;
}

/// A device with an efficiency profile, spread over `devices` identical
/// devices that share FLOP and bytes evenly (tensor parallel without
/// communication cost; parallel.hpp refines it).
class roofline {
 public:
  /// Throws std::invalid_argument on an invalid device or profile, or devices < 1.
  roofline(const device& d, efficiency_profile e, int devices = 1)
      : device_(d), eff_(std::move(e)), n_(devices), link_(intra_node_link(d, devices)),
        instruction_rate_(d.instruction_rate()) {
    validate(device_);
    validate(eff_);
    detail::require_in("devices", devices, 1, 65536);
  }
  explicit roofline(const device& d) : roofline(d, default_profile(d)) {}

  [[nodiscard]] const device& dev() const { return device_; }
  [[nodiscard]] const efficiency_profile& efficiency() const { return eff_; }
  [[nodiscard]] int devices() const { return n_; }

  [[nodiscard]] flops_per_second peak(math_format m) const { return double(n_) * device_.peak(m); }
  [[nodiscard]] bytes_per_second bandwidth() const { return double(n_) * device_.bandwidth; }

  /// FLOP per byte where the compute and memory roofs meet.
  [[nodiscard]] flops_per_byte ridge(math_format m) const { return peak(m) / bandwidth(); }

  /// Replaces the profile; throws std::invalid_argument as the constructor does.
  void set_efficiency(efficiency_profile e) {
    validate(e);
    eff_ = std::move(e);
  }

  /// The link communication ops cross (parallel plans set it per collective).
  [[nodiscard]] const link_spec& link() const { return link_; }
  void set_link(link_spec l) {
    detail::require_positive("link.bandwidth", l.bandwidth.value());
    detail::require_non_negative("link.latency", l.latency.value());
    link_ = std::move(l);
  }

  /// The math format an op's kernels ask for under the engine's kernel path
  /// (before the device's fallback, device::effective_math).
  [[nodiscard]] math_format kernel_math(const op& o) const {
    if (o.klass != op_class::gemm || !o.quantized) return o.math;
    switch (eff_.quantized_path) {
      case kernel_path::native: return o.math;
      case kernel_path::dequantize:
        // Without 16-bit matrix units the same builds took the int8 path (DP4A on Pascal).
        if (device_.published_peak(math_format::bf16).value() <= 0 &&
            device_.published_peak(math_format::int8).value() > 0) {
          return math_format::int8;
        }
        return math_format::bf16;
      case kernel_path::int8_dot: return math_format::int8;
    }
    return o.math;
  }

  [[nodiscard]] op_time time(const op& o) const {
    op_time t;
    if (o.klass == op_class::communication) {
      // Bytes over the link; the bound has no latency, the estimate has it
      // and the achieved share of link bandwidth.
      const bytes_per_second bw = o.link_bandwidth.value() > 0 ? o.link_bandwidth : link_.bandwidth;
      t.memory_bound = o.network / bw;
      const bool one_shot = o.kind == op_kind::all_reduce && o.within_node && eff_.collective_latency.value() > 0;
      t.memory_est = o.network / (eff_.link * bw) + o.count * (one_shot ? eff_.collective_latency : o.latency);
      if (o.kind == op_kind::p2p) t.memory_est += o.count * eff_.per_hop;
      t.communication = true;
      return t;
    }
    t.math = device_.effective_math(kernel_math(o));
    if (o.klass == op_class::attention && eff_.fused_attention && eff_.fa_tile_without_gqa &&
        !(o.gqa >= 2 && o.head_dim <= 128) &&
        device_.family.find("RDNA") != std::string::npos && device_.published_peak(math_format::fp32).value() > 0) {
      t.math = math_format::fp32;
    }
    flops_per_second p = double(n_) * device_.published_peak(t.math);
    if (eff_.fp16_accumulate && o.klass == op_class::gemm && t.math == math_format::bf16) {
      p = p * device_.fp16_accumulate_speedup();
    }
    const bytes_per_second bw = bandwidth();
    bytes moved = o.total_bytes();
    if (eff_.qmv_rows_reread && o.klass == op_class::gemm && o.quantized && o.gemm_rows > 1 &&
        o.gemm_rows < qmv_rows_below(device_)) {
      moved += (o.gemm_rows - 1) * o.weights;
    }
    if (!eff_.fused_attention) moved += make_bytes(o.unfused_bytes_per_flop * o.flop.value());
    t.compute_bound = o.flop / p;
    t.memory_bound = moved / bw;
    const bool low = o.klass == op_class::gemm && (t.math == math_format::fp8 || t.math == math_format::fp4);
    const double eta_c = o.klass == op_class::attention ? eff_.attention
                         : o.klass == op_class::gemm    ? eff_.compute_efficiency(o.gemm_rows) * (low ? eff_.low_precision : 1.0)
                                                        : eff_.compute;
    // Up to 8 tokens ggml takes the mat-vec kernels (MMVQ_MAX_BATCH_SIZE,
    // mmvq.cuh:3; a few K-quant limits on Ada and Blackwell consumer parts
    // are lower, KERNELS.md 1.1), whose issue is not modelled.
    if (o.mmq_instructions > 0 && eff_.quantized_path == kernel_path::int8_dot && o.gemm_rows > 8) {
      // ggml's MMQ issues 16-22 scalar instructions (dequantize epilogue,
      // conversions, loads) per int8 MMA: on an H100 that caps it near 1/5
      // of the int8 tensor roof (KERNELS.md section 1.7).
      const double rate = double(n_) * instruction_rate_;
      if (rate > 0) {
        t.compute_bound = std::max(t.compute_bound, make_seconds(o.flop.value() / 2 * o.mmq_instructions / rate));
      }
    }
    t.compute_est = eta_c > 0 ? t.compute_bound / eta_c : t.compute_bound;
    // kv_memory prices the unfused path's slow cache reads (llama.cpp without
    // -fa on Metal: 33.4 -> 9.5 t/s at 32k, T3-0332/0334); a fused kernel
    // streams the cache as fast as the weights.
    // A fused kernel reads it at its own measured share where one is fitted.
    const double eta_m = o.klass != op_class::attention ? eff_.memory
                         : !eff_.fused_attention        ? eff_.memory * eff_.kv_memory
                         : eff_.kv_stream > 0           ? eff_.kv_stream
                                                        : eff_.memory;
    bytes_per_second achieved = bw * (o.klass == op_class::gemm && low ? eta_m * eff_.low_precision_memory : eta_m);
    if (o.klass == op_class::gemm && eff_.stream_cap > 0) {
      achieved = make_bytes_per_second(std::min(achieved.value(), double(n_) * eff_.stream_cap));
    }
    t.memory_est = moved / achieved;
    t.overhead = o.count * eff_.per_kernel;
    if (eff_.per_launch.value() > 0) {
      // FP8/FP4 GEMMs launch an activation-quantizing kernel each.
      seconds gaps = o.count * (o.launches + (low ? o.quantized_gemms : 0.0)) * eff_.per_launch;
      // An attention or MoE call never takes less than its kernels' measured
      // floor (split-KV and combine, routing and the grouped GEMMs).
      const seconds floor = o.klass == op_class::attention ? eff_.attention_floor
                            : o.kind == op_kind::experts   ? eff_.expert_floor
                                                           : make_seconds(0);
      gaps = std::max(gaps, o.count * floor);
      t.overhead += gaps;
    }
    // An estimate never beats the bound, whatever the profile says.
    t.compute_est = std::max(t.compute_est, t.compute_bound);
    return t;
  }

 private:
  device device_;
  efficiency_profile eff_;
  int n_;
  link_spec link_;
  double instruction_rate_;  // the device's, read per op (its family named by string)
};

}  // namespace llmroof
