// The roofline: an op's time is the larger of its compute time and its memory
// time. The bound uses the device's peaks; the estimate applies an
// efficiency profile and per-kernel overhead, so estimate >= bound always.
#pragma once

#include <algorithm>
#include <string_view>
#include <string>

#include "llmroof/device.hpp"
#include "llmroof/ops.hpp"
#include "llmroof/units.hpp"

namespace llmroof {

/// What one engine achieves on one class of device. Calibrated profiles
/// (calibrate.hpp) produce the same struct.
struct efficiency_profile {
  std::string name;
  double memory = 0.66;             ///< eta_m: achieved fraction of peak bandwidth, (0, 1]
  double compute = 0.75;            ///< eta_c of a large GEMM, (0, 1]
  double compute_half_rows = 64;    ///< GEMM rows at which eta_c is half of `compute`, >= 0
  double attention = 0.5;           ///< attention kernels' fraction of the compute roof, (0, 1]
  /// Attention kernels' bandwidth relative to eta_m when they read the KV
  /// cache, (0, 1]: decode attention without a fused kernel (llama.cpp
  /// before FlashAttention) reads its cache at a fraction of GEMV speed.
  double kv_memory = 1.0;
  /// The engine's 16-bit GEMMs accumulate in FP16 (llama.cpp's cuBLAS path
  /// asks for CUBLAS_COMPUTE_16F), which GeForce cards run at twice their
  /// FP32-accumulate rate (see device::fp16_accumulate_speedup).
  bool fp16_accumulate = false;
  /// Attention runs as one fused kernel (FlashAttention and its kin); false
  /// for engines that materialize the score matrix in memory (llama.cpp
  /// without -fa), which adds the op's unfused_bytes_per_flop traffic.
  bool fused_attention = true;
  /// Highest rate at which the engine's GEMM kernels stream weights from one
  /// device, B/s (0: none). Skinny decode GEMMs are latency-bound: they keep
  /// too few bytes in flight to fill HBM (Little's law), so batch-1 llama.cpp
  /// and TensorRT-LLM 0.5 both top out near 1.1-1.3 TB/s on A100/H100 while
  /// GDDR cards reach ~0.9 of peak in the same engine.
  double stream_cap = 0;
  seconds per_kernel = make_seconds(0);       ///< launch overhead per kernel (per layer op)
  seconds per_step = make_seconds(0.3e-3);    ///< scheduler + sampling overhead per step
  /// Achieved fraction of link bandwidth in collectives: NCCL's bus bandwidth
  /// reaches ~80% of NVLink peak for large messages (nccl-tests reports).
  double link = 0.8;
  /// Standard errors of the fitted fields (or a nominal spread for unfitted
  /// defaults): the band of every estimate.
  double memory_sd = 0.05;
  double compute_sd = 0.05;
  seconds per_step_sd = make_seconds(0.2e-3);
  seconds per_kernel_sd = make_seconds(0);
  std::string source;

  /// Floor of eta_c(m) / compute: a GEMV (m = 1) runs on CUDA cores or
  /// dequantizing kernels at a fraction of tensor-core peak, not at 1/64 of it;
  /// batch-1 decode stays memory-bound, as every engine measures it.
  double compute_floor = 0.25;

  /// eta_c(m) = compute * max(compute_floor, m / (m + compute_half_rows)):
  /// small GEMMs reach a smaller share of the peak.
  [[nodiscard]] constexpr double compute_efficiency(double rows) const {
    const double shape = rows / (rows + compute_half_rows);
    return compute * (shape > compute_floor ? shape : compute_floor);
  }
};

/// The profile one standard error slower in every field (the low end of the band).
inline efficiency_profile slower(efficiency_profile e) {
  e.memory = std::max(0.01, e.memory - e.memory_sd);
  e.compute = std::max(0.01, e.compute - e.compute_sd);
  e.per_step = e.per_step + e.per_step_sd;
  e.per_kernel = e.per_kernel + e.per_kernel_sd;
  return e;
}

/// The profile one standard error faster in every field (the high end).
inline efficiency_profile faster(efficiency_profile e) {
  e.memory = std::min(1.0, e.memory + e.memory_sd);
  e.compute = std::min(1.0, e.compute + e.compute_sd);
  e.per_step = make_seconds(std::max(0.0, (e.per_step - e.per_step_sd).value()));
  e.per_kernel = make_seconds(std::max(0.0, (e.per_kernel - e.per_kernel_sd).value()));
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
  detail::require_in_open_closed("efficiency.link", e.link, 0, 1);
  detail::require_non_negative("efficiency.per_kernel", e.per_kernel.value());
  detail::require_non_negative("efficiency.stream_cap", e.stream_cap);
  detail::require_non_negative("efficiency.per_step", e.per_step.value());
}

/// Default profile of a device's class (documented with its source).
efficiency_profile default_profile(const device& d);

/// True for engine classes (llama.cpp-cuda, llama.cpp-metal, tensorrt-llm,
/// vllm, mlx) whose 16-bit GEMMs accumulate in FP16: llama.cpp on CUDA.
inline bool engine_accumulates_fp16(std::string_view engine_class) { return engine_class == "llama.cpp-cuda"; }

/// The profile of `engine` (vllm, sglang, tensorrt-llm, llama.cpp, ollama,
/// mlx) on `d`: fitted to data/measured/calibration.csv where that
/// engine has data (by engine and memory kind, else by engine), else the
/// class default; `source` says which.
efficiency_profile default_profile(const device& d, std::string_view engine);

enum class bottleneck : std::uint8_t { memory, compute, overhead, link };

constexpr std::string_view to_string(bottleneck b) {
  switch (b) {
    case bottleneck::memory: return "memory";
    case bottleneck::compute: return "compute";
    case bottleneck::overhead: return "overhead";
    case bottleneck::link: return "link";
  }
  return "?";
}

/// Times of one op.
struct op_time {
  seconds compute_bound = make_seconds(0);  ///< FLOP / peak
  seconds memory_bound = make_seconds(0);   ///< bytes / bandwidth
  seconds compute_est = make_seconds(0);    ///< FLOP / (peak * eta_c)
  seconds memory_est = make_seconds(0);     ///< bytes / (bandwidth * eta_m)
  seconds overhead = make_seconds(0);
  bool communication = false;               ///< memory_* are link times
  [[nodiscard]] constexpr seconds bound() const { return std::max(compute_bound, memory_bound); }
  [[nodiscard]] constexpr seconds estimate() const {
    return std::max(compute_est, memory_est) + overhead;
  }
  [[nodiscard]] constexpr bottleneck limit() const {
    if (communication) return bottleneck::link;
    return compute_est > memory_est ? bottleneck::compute : bottleneck::memory;
  }
};

/// A device with an efficiency profile, spread over `devices` identical
/// devices that share FLOP and bytes evenly (tensor parallel without
/// communication cost; parallel.hpp refines it).
class roofline {
 public:
  /// Throws std::invalid_argument on an invalid device or profile, or devices < 1.
  roofline(const device& d, efficiency_profile e, int devices = 1)
      : device_(d), eff_(std::move(e)), n_(devices), link_(intra_node_link(d, devices)) {
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

  /// The link communication ops cross (parallel plans set it per collective).
  [[nodiscard]] const link_spec& link() const { return link_; }
  void set_link(link_spec l) {
    detail::require_positive("link.bandwidth", l.bandwidth.value());
    detail::require_non_negative("link.latency", l.latency.value());
    link_ = std::move(l);
  }

  [[nodiscard]] op_time time(const op& o) const {
    op_time t;
    if (o.klass == op_class::communication) {
      // Bytes over the link; the bound has no latency, the estimate has it
      // and the achieved share of link bandwidth.
      const bytes_per_second bw = o.link_bandwidth.value() > 0 ? o.link_bandwidth : link_.bandwidth;
      t.memory_bound = o.network / bw;
      t.memory_est = o.network / (eff_.link * bw) + o.count * o.latency;
      t.communication = true;
      return t;
    }
    flops_per_second p = peak(o.math);
    if (eff_.fp16_accumulate && o.klass == op_class::gemm && device_.effective_math(o.math) == math_format::bf16) {
      p = p * device_.fp16_accumulate_speedup();
    }
    const bytes_per_second bw = bandwidth();
    bytes moved = o.total_bytes();
    if (!eff_.fused_attention) moved += make_bytes(o.unfused_bytes_per_flop * o.flop.value());
    t.compute_bound = o.flop / p;
    t.memory_bound = moved / bw;
    const double eta_c = o.klass == op_class::attention ? eff_.attention
                         : o.klass == op_class::gemm    ? eff_.compute_efficiency(o.gemm_rows)
                                                        : eff_.compute;
    t.compute_est = eta_c > 0 ? o.flop / (p * eta_c) : t.compute_bound;
    const double eta_m = o.klass == op_class::attention ? eff_.memory * eff_.kv_memory : eff_.memory;
    bytes_per_second achieved = bw * eta_m;
    if (o.klass == op_class::gemm && eff_.stream_cap > 0) {
      achieved = make_bytes_per_second(std::min(achieved.value(), double(n_) * eff_.stream_cap));
    }
    t.memory_est = moved / achieved;
    t.overhead = o.count * eff_.per_kernel;
    // An estimate never beats the bound, whatever the profile says.
    t.compute_est = std::max(t.compute_est, t.compute_bound);
    return t;
  }

 private:
  device device_;
  efficiency_profile eff_;
  int n_;
  link_spec link_;
};

}  // namespace llmroof
