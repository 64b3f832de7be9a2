// Numeric formats of weights and KV cache: bits per element (block scales
// included) and the math format whose tensor-core roof applies.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "llmroof/detail/check.hpp"
#include "llmroof/detail/enum_names.hpp"
#include "llmroof/units/units.hpp"

namespace llmroof {

/// The arithmetic a kernel runs in, which selects the compute roof.
/// A format's own roof: weight-only formats (AWQ, GPTQ, GGUF) say bf16; the
/// engine's kernel path may pick another (roofline.hpp, kernel_path).
enum class math_format { fp32, bf16, fp8, int8, fp4 };

inline constexpr std::array<std::string_view, 5> math_format_names{"fp32", "bf16", "fp8", "int8", "fp4"};

constexpr std::string_view to_string(math_format m) { return detail::enum_name(m, math_format_names); }

/// A storage format. `bits` counts scales and zero points spread over the
/// elements of their block, so `bits / 8` is the exact bytes per element.
struct numeric_format {
  std::string_view name;         ///< canonical lowercase id
  double bits;                   ///< bits per element, scales included
  math_format math;              ///< roof used when computing with it
  bool mix;                      ///< true for an average over a per-tensor mix (GGUF *_M)
  std::string_view description;  ///< layout of one block, the arithmetic behind `bits`
  std::string_view source;       ///< where the layout or average comes from
  /// Warp instructions per 1,000 multiply-accumulates that ggml's int8 tiled
  /// kernel (MMQ) issues for this type (0: no MMQ kernel): the innermost loop
  /// of `mul_mat_q<type, 128>`, SASS of sm_90 (KERNELS.md 1.7): Q4_0 4.85,
  /// Q8_0 4.06, Q4_K 5.64, Q6_K 6.57, MXFP4 4.71, IQ4_XS 4.56. Types without a
  /// count of their own take their epilogue's kin: the Q8_0-layout
  /// `sum += C*dA*dB` (Q5_0, IQ4_NL as Q4_0) or Q4_K's two-term one (Q4_1,
  /// Q5_1, Q2_K-Q5_K and the K mixes; mmq-vec-dot.cuh:143 and :315); NVFP4
  /// takes MXFP4's. sm_80 and sm_120 differ by 2-5%; sm_120's FP4 MMA for
  /// MXFP4 (1.26) is not modelled.
  double mmq_warp_per_kmac = 0;

  /// Bytes of n elements, rounding nothing: block formats are modelled by
  /// their average, which is exact for tensors that are whole blocks.
  [[nodiscard]] constexpr bytes bytes_of(double n) const { return make_bytes(n * bits / 8.0); }
  [[nodiscard]] constexpr double bytes_per_element() const { return bits / 8.0; }
};

namespace detail {

inline constexpr std::string_view ggml_src =
    "ggml block layouts (ggml-common.h, block_q*); QK_K = 256 super-blocks";

// clang-format off
inline constexpr std::array<numeric_format, 30> format_table{{
  {"fp32", 32.0, math_format::fp32, false, "IEEE binary32", "IEEE 754"},
  {"bf16", 16.0, math_format::bf16, false, "bfloat16 (8-bit exponent, 7-bit mantissa)", "IEEE/Google bfloat16"},
  {"fp16", 16.0, math_format::bf16, false, "IEEE binary16; same tensor-core rate as bf16", "IEEE 754"},
  {"fp8", 8.0 + 32.0 / 16384.0, math_format::fp8, false,
   "e4m3 with one fp32 scale per 128x128 block: 8 + 32/16384 bits (W8A8, fp8 tensor cores)",
   "DeepSeek-V3 quantization_config weight_block_size [128, 128]; vLLM fp8"},
  {"fp8-e4m3", 8.0, math_format::fp8, false, "e4m3 with one per-tensor scale (negligible)", "OCP FP8 spec"},
  {"fp8-e5m2", 8.0, math_format::fp8, false, "e5m2 with one per-tensor scale (negligible)", "OCP FP8 spec"},
  {"int8", 8.0, math_format::int8, false, "W8A8 int8 with per-channel scales (negligible)", "SmoothQuant / vLLM int8 W8A8"},
  {"int8-wo", 8.0 + 16.0 / 128.0, math_format::bf16, false,
   "weight-only int8, fp16 scale per group of 128: 8 + 16/128 bits", "GPTQ 8-bit, group 128"},
  {"awq-int4", 4.0 + 16.0 / 128.0 + 4.0 / 128.0, math_format::bf16, false,
   "int4, fp16 scale and 4-bit zero point per group of 128: 4 + 16/128 + 4/128 = 4.15625 bits",
   "AWQ (Lin et al. 2023), AutoAWQ GEMM layout, group_size 128"},
  {"gptq-int4", 4.0 + 16.0 / 128.0, math_format::bf16, false,
   "int4 symmetric, fp16 scale per group of 128: 4 + 16/128 = 4.125 bits",
   "GPTQ (Frantar et al. 2022), sym=True, group_size 128"},
  {"int4-g32", 4.0 + 16.0 / 32.0, math_format::bf16, false,
   "int4 symmetric, bf16 scale per group of 32: 4 + 16/32 = 4.5 bits",
   "compressed-tensors pack-quantized, group_size 32 (Devstral AWQ config in tests/data/hf-configs)"},
  {"mxfp4", 4.0 + 8.0 / 32.0, math_format::fp4, false,
   "e2m1, one e8m0 scale per block of 32: 4 + 8/32 = 4.25 bits", "OCP Microscaling Formats (MX) v1.0", 4.71},
  {"nvfp4", 4.0 + 8.0 / 16.0, math_format::fp4, false,
   "e2m1, one e4m3 scale per block of 16 (+ a per-tensor fp32): 4 + 8/16 = 4.5 bits",
   "NVIDIA Blackwell NVFP4 (TensorRT Model Optimizer docs)", 4.71},
  {"q8_0", 8.5, math_format::bf16, false, "32 x int8 + fp16 scale = 34 B per 32", ggml_src, 4.06},
  {"q4_0", 4.5, math_format::bf16, false, "32 x 4 bit + fp16 scale = 18 B per 32", ggml_src, 4.85},
  {"q4_1", 5.0, math_format::bf16, false, "32 x 4 bit + fp16 scale + fp16 min = 20 B per 32", ggml_src, 5.64},
  {"q5_0", 5.5, math_format::bf16, false, "32 x 5 bit + fp16 scale = 22 B per 32", ggml_src, 4.85},
  {"q5_1", 6.0, math_format::bf16, false, "32 x 5 bit + fp16 scale + fp16 min = 24 B per 32", ggml_src, 5.64},
  {"q2_k", 2.625, math_format::bf16, false, "84 B per 256: 2-bit quants, 4-bit scales/mins, fp16 d/dmin", ggml_src, 5.64},
  {"q3_k", 3.4375, math_format::bf16, false, "110 B per 256: 3-bit quants, 6-bit scales, fp16 d", ggml_src, 5.64},
  {"q4_k", 4.5, math_format::bf16, false, "144 B per 256: 4-bit quants, 6-bit scales/mins, fp16 d/dmin", ggml_src, 5.64},
  {"q5_k", 5.5, math_format::bf16, false, "176 B per 256: 5-bit quants, 6-bit scales/mins, fp16 d/dmin", ggml_src, 5.64},
  {"q6_k", 6.5625, math_format::bf16, false, "210 B per 256: 6-bit quants, int8 scales, fp16 d", ggml_src, 6.57},
  {"iq4_xs", 4.25, math_format::bf16, false, "136 B per 256: 4-bit non-linear quants, 6-bit scales", ggml_src, 4.56},
  {"iq4_nl", 4.5, math_format::bf16, false, "18 B per 32: 4-bit non-linear quants, fp16 scale", ggml_src, 4.85},
  {"q4_k_m", 4.89, math_format::bf16, true,
   "mix: most tensors q4_k, half of attn_v/ffn_down and output q6_k; 4.89 bits averaged over Llama-3-8B",
   "llama.cpp quantize; Llama-3-8B Q4_K_M 4.58 GiB file (data/measured: ~4.9 bpw). Read the GGUF for exact bytes", 5.64},
  {"q4_k_s", 4.58, math_format::bf16, true,
   "mix: q4_k with a few q5_k tensors; 4.58 bits averaged over Llama-3-8B",
   "llama.cpp quantize table (Llama-3-8B); read the GGUF for exact bytes", 5.64},
  {"q5_k_s", 5.57, math_format::bf16, true,
   "mix: q5_k with output q6_k; 5.57 bits averaged over Llama-3-8B",
   "llama.cpp quantize table (Llama-3-8B Q5_K_S 5.21 GiB); read the GGUF for exact bytes", 5.64},
  {"q5_k_m", 5.69, math_format::bf16, true,
   "mix: q5_k with half of attn_v/ffn_down q6_k; 5.69 bits averaged over Llama-3-8B",
   "llama.cpp quantize table (Llama-3-8B); read the GGUF for exact bytes", 5.64},
  {"q3_k_m", 3.91, math_format::bf16, true,
   "mix: q3_k with attn_v/ffn_down q4_k/q5_k; 3.91 bits averaged over Llama-3-8B",
   "llama.cpp quantize table (Llama-3-8B); read the GGUF for exact bytes", 5.64},
}};
// clang-format on

struct format_alias {
  std::string_view alias;
  std::string_view name;
};

inline constexpr std::array<format_alias, 16> format_aliases{{
    {"bfloat16", "bf16"},   {"float16", "fp16"},  {"f16", "fp16"},       {"half", "fp16"},
    {"f32", "fp32"},        {"float32", "fp32"},  {"e4m3", "fp8-e4m3"},  {"w8a8", "int8"},
    {"awq", "awq-int4"},    {"gptq", "gptq-int4"}, {"int4", "awq-int4"}, {"mx4", "mxfp4"},
    {"q8", "q8_0"},         {"q4", "q4_0"},       {"fp4", "nvfp4"},      {"e5m2", "fp8-e5m2"},
}};

}  // namespace detail

/// Every built-in format, in catalog order.
inline const std::array<numeric_format, detail::format_table.size()>& formats() {
  return detail::format_table;
}

/// Looks a format up by name, case-insensitive, aliases included
/// (`BF16`, `awq`, `Q4_K_M`). Throws std::invalid_argument naming the
/// closest valid names when it is unknown.
inline const numeric_format& find_format(std::string_view name) {
  std::string key = detail::to_lower(name);
  for (const auto& a : detail::format_aliases) {
    if (a.alias == key) key = std::string(a.name);
  }
  for (const auto& f : detail::format_table) {
    if (f.name == key) return f;
  }
  std::vector<std::string> names;
  for (const auto& f : detail::format_table) names.emplace_back(f.name);
  detail::fail_unknown("format", name, names);
}

/// When `name` is a shorthand for one of several formats ("q4": q4_0,
/// q4_1, q4_k_m; "int4": AWQ or GPTQ; "fp4": NVFP4 or MXFP4), the sentence
/// that says which it reads as: "q4 reads as q4_0 (also: q4_1, q4_k_m)";
/// empty for a format's own name or an alias of one format.
inline std::string shorthand_note(std::string_view name) {
  struct family {
    std::string_view alias, others;
  };
  static constexpr std::array<family, 3> families{{
      {"q4", "q4_1, q4_k, q4_k_m, q4_k_s, iq4_xs, iq4_nl"}, {"int4", "gptq-int4, int4-g32"}, {"fp4", "mxfp4"}}};
  const std::string key = detail::to_lower(name);
  for (const family& f : families) {
    if (f.alias == key) {
      return std::string(name) + " reads as " + std::string(find_format(key).name) + " (also: " + std::string(f.others) +
             "; name one to plan it)";
    }
  }
  return {};
}

/// A format that is not in the catalog, such as the measured average of one
/// component of a GGUF file. The name is kept for the life of the program.
/// Throws std::invalid_argument unless 0 < bits <= 64 and the name is not empty.
numeric_format make_format(std::string_view name, double bits, math_format math,
                           std::string_view description);

}  // namespace llmroof
