// Instructions ggml's quantized GEMM kernels issue per multiply-accumulate,
// by weight type: the roof of llama.cpp's int8 path where the scalar work
// around the int8 MMAs, not the MMAs, sets the pace (KERNELS.md section 1.7).
#pragma once

#include <array>
#include <string_view>

namespace llmroof::detail {

struct mmq_count {
  std::string_view format;  ///< formats.hpp name
  /// Warp instructions per 1,000 multiply-accumulates in the innermost loop of
  /// `mul_mat_q<type, 128>` (I = 128, K = 256, 8 warps), SASS of sm_90.
  double warp_per_kmac;
};

// KERNELS.md section 1.7, "Measured (SASS)" table (ggml-cuda mmq.cuh, sm_90):
// Q4_0 2545, Q8_0 2129, Q4_K 2959, Q6_K 3447, MXFP4 2471, IQ4_XS 2392 warp
// instructions per 524,288-MAC trip = 4.85, 4.06, 5.64, 6.57, 4.71, 4.56 per
// 1k MAC. Types without their own count take their epilogue's kin: the
// Q8_0-layout `sum += C*dA*dB` (Q4_0, Q5_0, IQ4_NL) or the two-term
// `dmA.x*dsB.x*C + dmA.y*dsB.y` of Q4_K (Q4_1, Q5_1, Q2_K-Q5_K and the K mixes,
// mmq-vec-dot.cuh:143 and :315). sm_80 and sm_120 differ by 2-5% (Q4_K 5.78,
// 5.91); sm_120's FP4 MMA for MXFP4 (1.26) is not modelled, and NVFP4 (an
// MMQ type of 2026 builds, section 1.2) takes MXFP4's count.
inline constexpr std::array<mmq_count, 18> mmq_counts{{
    {"q4_0", 4.85},   {"q5_0", 4.85},   {"iq4_nl", 4.85}, {"q8_0", 4.06},   {"q4_1", 5.64},
    {"q5_1", 5.64},   {"q2_k", 5.64},   {"q3_k", 5.64},   {"q4_k", 5.64},   {"q5_k", 5.64},
    {"q4_k_s", 5.64}, {"q4_k_m", 5.64}, {"q5_k_m", 5.64}, {"q3_k_m", 5.64}, {"q6_k", 6.57},
    {"mxfp4", 4.71},  {"iq4_xs", 4.56}, {"nvfp4", 4.71},
}};

/// Thread instructions per multiply-accumulate of ggml's MMQ kernel for a
/// weight format (warp instructions x 32 lanes), 0 for formats it has no
/// kernel for.
constexpr double mmq_instructions_per_mac(std::string_view format) {
  for (const mmq_count& c : mmq_counts) {
    if (c.format == format) return c.warp_per_kmac * 32.0 / 1000.0;
  }
  return 0;
}

/// Tokens up to which ggml takes the mat-vec kernels (MMVQ) instead of MMQ:
/// MMVQ_MAX_BATCH_SIZE (mmvq.cuh:3; a few K-quant limits on Ada and
/// Blackwell consumer parts are lower, KERNELS.md section 1.1).
inline constexpr double mmvq_max_rows = 8;

}  // namespace llmroof::detail
