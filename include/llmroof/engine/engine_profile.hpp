// An engine's profile on a device: the kernel traits each engine class's code
// fixes (never fitted), which fitted profile a class takes, and the profile
// default_profile hands out (src/engine/profiles.cpp, src/engine/profiles_fitted.inc).
#pragma once

#include <algorithm>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llmroof/engine/engine.hpp"
#include "llmroof/step/roofline.hpp"

namespace llmroof {

/// Which kernels an engine version runs on a device family (a row of the
/// engine table, src/engine/engines.cpp): the key of fitted profiles and measured
/// rows, and the kernel traits that are facts of the engine's code, never fitted.
struct kernel_class {
  std::string_view key;      ///< "llama.cpp-cuda@2024"
  engine_id engine;          ///< whose kernels (Ollama runs llama.cpp's)
  std::string_view version;  ///< "" any version
  std::string_view backend;  ///< "" one backend everywhere; "cuda", "metal"
  bool fp16_accumulate = false;
  bool fused_attention = true;
  host_overlap overlap = host_overlap::serial;
  kernel_path quantized_path = kernel_path::native;
  /// Whether its versions differ in kernel traits alone, so that one
  /// version's fitted efficiencies serve another without points of its own.
  bool versions_share_efficiencies = false;
  /// Cost of each kernel the engine's model code launches in a decode or
  /// prefill step, s (efficiency_profile::per_launch; 0: a fitted per_kernel
  /// stands for it), and its spread.
  double per_launch = 0;
  double per_launch_sd = 0;
  /// Prompt tokens per forward pass (efficiency_profile::prefill_chunk; 0:
  /// the whole prompt in one pass).
  double prefill_chunk = 0;
  /// The class whose fitted efficiencies it takes when it has none of its
  /// own ("" none): HIP builds compile CUDA's kernel sources.
  std::string_view efficiencies_of = "";
  /// Fixed cost of each pipeline hand-off, s (efficiency_profile::per_hop).
  double per_hop = 0;
  /// Host work per sequence of a decode step, s (efficiency_profile::per_sequence).
  double per_sequence = 0;
  /// Quantized mat-vec kernels read the weights once per token row
  /// (efficiency_profile::qmv_rows_reread: MLX on M1/M2).
  bool qmv_rows_reread = false;
  /// Flash attention off the matrix units without GQA or past 128-wide
  /// heads on RDNA (efficiency_profile::fa_tile_without_gqa: HIP builds).
  bool fa_tile_without_gqa = false;
};

/// Every kernel class, in the table's order.
const std::vector<kernel_class>& kernel_classes();
/// The class with this key, or null.
const kernel_class* find_kernel_class(std::string_view key);
/// The class an engine version runs on a backend ("" for engines with one), or null.
const kernel_class* find_kernel_class(engine_id engine, std::string_view version, std::string_view backend);
/// The llama.cpp backend a GPU's vendor builds run: metal (Apple), cuda
/// (NVIDIA), hip (AMD), sycl (Intel); "" for CPUs and accelerators llama.cpp
/// has no backend for (Gaudi, TPUs).
std::string_view native_backend(const device& d);
/// Whether a llama.cpp backend runs on `d`: Vulkan on any GPU but Apple's,
/// the others on their vendor's; none on CPUs, Gaudi or TPUs.
bool backend_runs_on(std::string_view backend, const device& d);
/// Whether the backend `e` names (if any) runs on `d` (backend_runs_on).
bool runs_on(const engine_settings& e, const device& d);

/// Engines people run on a device, its default first: vLLM and llama.cpp on
/// NVIDIA GPUs and on datacenter GPUs of other vendors (ROCm builds of
/// vLLM); llama.cpp and mlx-lm on Apple (vLLM has no Metal backend);
/// llama.cpp elsewhere (CPUs, consumer AMD and Intel GPUs, where people run
/// its Vulkan/HIP/SYCL builds); vLLM alone on Gaudi and TPUs (its plugins
/// vllm-gaudi and tpu-inference; llama.cpp has no backend there).
inline std::vector<std::string> engines_for(const device& d) {
  if (d.vendor == "Apple") return {"llama.cpp", "mlx"};
  if (d.klass == device_class::cpu) return {"llama.cpp"};
  if (d.klass == device_class::datacenter && native_backend(d).empty()) return {"vllm"};
  if (d.vendor == "NVIDIA" || d.klass == device_class::datacenter) return {"vllm", "llama.cpp"};
  return {"llama.cpp"};
}

/// The engine a plan on `d` runs when none is named: engines_for(d)'s
/// first. On Apple llama.cpp rather than mlx-lm: it runs every format a
/// Mac user downloads (GGUF's k-quants; mlx-lm's own 4/8-bit formats are not
/// in the format table), and it is the engine of most Apple rows in data
/// release 3 (64 llama.cpp, 50 MLX and 8 Rapid-MLX single-stream rows; on
/// the one Mac and model both measured, an M3 Max with Qwen3-30B-A3B, MLX
/// 68.0 and llama.cpp 57.3 t/s: recommend tries both).
inline std::string default_engine_for(const device& d) { return engines_for(d).front(); }
/// The class an engine runs on a device (its named backend, else the
/// device's own), or null: llama.cpp on a CPU, an engine without the
/// device's backend (Ollama on Intel GPUs). Throws std::invalid_argument when
/// the named backend does not run on the device.
const kernel_class* kernel_class_of(const device& d, const engine_settings& e);
/// The engine name (with its backend and version) a class key belongs to:
/// what find_engine takes (llama.cpp-cuda@2024 -> llama.cpp-cuda@2024,
/// vllm -> vllm); the key itself when no class has it.
std::string engine_of_class(std::string_view key);

/// Sets the kernel traits of kernel class `key` on `e` ("" or an unknown
/// key: native paths, fused attention, serial host work).
inline void apply_kernel_traits(efficiency_profile& e, std::string_view key) {
  const kernel_class* k = find_kernel_class(key);
  const kernel_class none{};
  const kernel_class& c = k != nullptr ? *k : none;
  e.fp16_accumulate = c.fp16_accumulate;
  e.fused_attention = c.fused_attention;
  e.prefill_chunk = c.prefill_chunk;
  e.per_hop = make_seconds(c.per_hop);
  e.per_sequence = make_seconds(c.per_sequence);
  e.qmv_rows_reread = c.qmv_rows_reread;
  e.fa_tile_without_gqa = c.fa_tile_without_gqa;
  e.overlap = c.overlap;
  e.quantized_path = c.quantized_path;
  e.per_launch = make_seconds(c.per_launch);
  e.per_launch_sd = make_seconds(c.per_launch_sd);
}

/// Whether a class's versions share efficiencies (llama.cpp's do: 2024
/// builds dequantized, current ones multiply in int8).
inline bool versions_share_efficiencies(std::string_view key) {
  const kernel_class* k = find_kernel_class(key);
  return k != nullptr && k->versions_share_efficiencies;
}

/// The engine keys whose fit `engine_class` takes, in order: its own; then,
/// where versions share efficiencies, its unversioned base and the base's
/// other versions among `fitted` (keys "engine" or "engine/memory-kind");
/// then the class whose efficiencies it takes (HIP: CUDA's).
inline std::vector<std::string> fit_candidates(const std::string& engine_class,
                                               const std::vector<std::string>& fitted) {
  std::vector<std::string> out{engine_class};
  const std::string base = engine_class.substr(0, engine_class.find('@'));
  if (versions_share_efficiencies(base)) {
    if (base != engine_class) out.push_back(base);
    for (const std::string& key : fitted) {
      const std::string e = key.substr(0, key.find('/'));
      if (e.rfind(base + "@", 0) == 0 && std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
    }
  }
  if (const kernel_class* k = find_kernel_class(base); k != nullptr && !k->efficiencies_of.empty()) {
    out.emplace_back(k->efficiencies_of);
  }
  return out;
}

/// Whether a fit under `key` ("engine[@version][/memory-kind]") belongs to
/// another kernel class than `engine_class` (one taken through
/// efficiencies_of), not to another version of the same one.
inline bool fit_of_another_class(std::string_view engine_class, std::string_view key) {
  const auto base = [](std::string_view k) { return k.substr(0, std::min(k.find('@'), k.find('/'))); };
  return base(key) != base(engine_class);
}

/// The profile of `engine` (vllm, sglang, tensorrt-llm, llama.cpp, ollama,
/// mlx, with a backend or version) on `d`: fitted to the measured points
/// (data/measured/calibration.csv, release3/single_stream.csv) where its
/// kernel class has them (by memory kind, else by class; HIP takes CUDA's),
/// else the class default; `source` says which. Throws
/// std::invalid_argument for an unknown engine or a backend that does not
/// run on `d`.
efficiency_profile default_profile(const device& d, std::string_view engine);

/// Whether `e` is a class default priced from the kernel database
/// (src/engine/kernel_fits.inc: vLLM, SGLang and TensorRT-LLM on NVIDIA parts).
inline bool kernel_fitted(const efficiency_profile& e) { return e.name.rfind("kernel-fitted ", 0) == 0; }

/// The class default of `engine` on `d` with its kernel traits: what
/// default_profile gives where no fit exists. Throws as default_profile.
efficiency_profile class_default_profile(const device& d, std::string_view engine);

/// Ids of the measured rows (release3/serving.csv, GPUStack's performance
/// lab) a class default was fitted to by hand: eta_m 0.81 with each
/// launched kernel priced. A cross-validation fold holding one of them
/// cannot use that default (class_default_point).
std::span<const std::string_view> class_default_points();

}  // namespace llmroof
