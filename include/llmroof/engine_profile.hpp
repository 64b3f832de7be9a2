// An engine's profile on a device: the kernel traits each engine class's code
// fixes (never fitted), which fitted profile a class takes, and the profile
// default_profile hands out (src/profiles.cpp, src/profiles_fitted.inc).
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "llmroof/roofline.hpp"

namespace llmroof {

/// Sets the kernel traits of an engine class (llama.cpp-cuda,
/// llama.cpp-cuda@2024, llama.cpp-metal, tensorrt-llm, vllm, mlx; "" for
/// none) on `e`: they are facts of the engine's code, never fitted.
///  - llama.cpp on CUDA: 16-bit GEMMs through cuBLAS with CUBLAS_COMPUTE_16F
///    (FP16 accumulate); quantized weights through MMQ, int8 dot products
///    (current builds: ggml-cuda/mmq.cuh, the default wherever INT8 tensor
///    cores or DP4A exist), or dequantized to FP16 for cuBLAS on cards with
///    FP16 tensor cores (2024 builds before MMQ became the default, b3200s).
///  - llama.cpp Metal, MLX: dequantize in the GEMM kernel, 16-bit math.
///  - llama.cpp 2024 builds: attention unfused (-fa was opt-in); measured rows
///    that say "flash-attn on" override it (calibrate.cpp predict).
///  - vLLM, SGLang, TensorRT-LLM: each format on its own roof.
///  - SGLang: host work overlapped with the kernels (host_overlap).
inline void apply_kernel_traits(efficiency_profile& e, std::string_view engine_class) {
  const bool cuda = engine_class.rfind("llama.cpp-cuda", 0) == 0;
  e.fp16_accumulate = cuda;
  // Flash attention was opt-in (-fa) in 2024 builds; current ones turn it on (-fa auto).
  e.fused_attention = engine_class != "llama.cpp-cuda@2024";
  e.overlap = engine_class == "sglang" ? host_overlap::overlapped : host_overlap::serial;
  e.quantized_path = engine_class == "llama.cpp-cuda"                           ? kernel_path::int8_dot
                     : cuda || engine_class == "llama.cpp-metal" || engine_class == "mlx" ? kernel_path::dequantize
                                                                                         : kernel_path::native;
}

/// Whether an engine class's versions differ in kernel traits alone, so that
/// one version's fitted efficiencies serve another without points of its own:
/// llama.cpp's did (2024 builds dequantized, current ones multiply in int8).
/// TensorRT-LLM's 2023 releases also launched kernels one by one and streamed
/// weights at a lower cap: their fit does not carry to current releases.
inline bool versions_share_efficiencies(std::string_view engine_class) {
  return engine_class.rfind("llama.cpp", 0) == 0;
}

/// The engine keys whose fit `engine_class` takes, in order: its own; then,
/// where versions share efficiencies, its unversioned base and the base's
/// other versions among `fitted` (keys "engine" or "engine/memory-kind").
inline std::vector<std::string> fit_candidates(const std::string& engine_class,
                                               const std::vector<std::string>& fitted) {
  std::vector<std::string> out{engine_class};
  const std::string base = engine_class.substr(0, engine_class.find('@'));
  if (!versions_share_efficiencies(base)) return out;
  if (base != engine_class) out.push_back(base);
  for (const std::string& key : fitted) {
    const std::string e = key.substr(0, key.find('/'));
    if (e.rfind(base + "@", 0) == 0 && std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
  }
  return out;
}

/// The profile of `engine` (vllm, sglang, tensorrt-llm, llama.cpp, ollama,
/// mlx) on `d`: fitted to data/measured/calibration.csv where that
/// engine has data (by engine and memory kind, else by engine), else the
/// class default; `source` says which.
efficiency_profile default_profile(const device& d, std::string_view engine);

}  // namespace llmroof
