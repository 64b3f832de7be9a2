// Kernel paths (issue 14): which roof a GEMM on quantized weights runs on is a
// trait of the engine and its version, applied per op.
#include <doctest/doctest.h>

#include "llmroof/phases.hpp"
#include "llmroof/engine_profile.hpp"

using namespace llmroof;

namespace {

// The op of a phase by name.
std::size_t find_op(const phase_timing& p, std::string_view name) {
  for (std::size_t i = 0; i < p.counts.ops.size(); ++i) {
    if (p.counts.ops[i].name == name) return i;
  }
  FAIL("no op " << name);
  return 0;
}

efficiency_profile with_traits(std::string_view engine_class) {
  efficiency_profile e;
  apply_kernel_traits(e, engine_class);
  return e;
}

}  // namespace

TEST_CASE("GeForce, current llama.cpp: Q4_0 prefill GEMMs run on the INT8 tensor roof (MMQ)") {
  // Llama-2-7B FFN: 3 x 4096 x 11008 = 135,266,304 weights per layer x 32 =
  // 4,328,521,728. pp512: 2 x 512 x 4,328,521,728 = 4.432406e12 FLOP.
  // RTX 4090 INT8 dense 660.6 TOPS: 4.432406e12 / 660.6e12 = 6.70967 ms.
  // The 2024 builds dequantized to FP16 for cuBLAS with FP16 accumulate:
  // 2 x 165.2 = 330.4 TFLOPS -> 13.4153 ms, twice as long.
  const architecture& a = find_model("llama-2-7b");
  const precision pr = precision::of(find_format("q4_0"), find_format("fp16"));
  const device& d = find_device("rtx-4090");
  const phase_timing now = prefill(a, pr, roofline(d, with_traits("llama.cpp-cuda")), 512);
  const phase_timing old = prefill(a, pr, roofline(d, with_traits("llama.cpp-cuda@2024")), 512);
  const std::size_t i = find_op(now, "ffn");
  CHECK(now.counts.ops[i].flop.value() == doctest::Approx(4.432406e12).epsilon(1e-6));
  CHECK(now.times[i].math == math_format::int8);
  CHECK(now.times[i].compute_bound.value() == doctest::Approx(6.70967e-3).epsilon(1e-5));
  CHECK(old.times[i].math == math_format::bf16);
  CHECK(old.times[i].compute_bound.value() == doctest::Approx(13.4153e-3).epsilon(1e-5));
  // The path never changes what is counted, only the roof.
  CHECK(now.counts.total_flop().value() == old.counts.total_flop().value());
  CHECK(now.counts.total_bytes().value() == old.counts.total_bytes().value());
  // 16-bit weights are not quantized: cuBLAS FP16 in both versions.
  const precision f16 = precision::of(find_format("fp16"), find_format("fp16"));
  CHECK(prefill(a, f16, roofline(d, with_traits("llama.cpp-cuda")), 512).times[i].math == math_format::bf16);
}

TEST_CASE("Pascal without tensor cores: quantized GEMMs run on DP4A, not FP32") {
  // Tesla P40: no 16-bit matrix units (FP16 is 1/64 rate), FP32 11.76 TFLOPS,
  // DP4A INT8 47 TOPS. Q4_0 FFN of Llama-2-7B pp512: 4.432406e12 / 47e12 =
  // 94.307 ms, where the FP32 roof would say 4.432406e12 / 11.76e12 = 376.91 ms.
  // Both llama.cpp versions took MMQ there (dequantize needs FP16 tensor cores).
  const architecture& a = find_model("llama-2-7b");
  const precision pr = precision::of(find_format("q4_0"), find_format("fp16"));
  const device& d = find_device("p40");
  for (const char* cls : {"llama.cpp-cuda", "llama.cpp-cuda@2024"}) {
    CAPTURE(cls);
    const phase_timing p = prefill(a, pr, roofline(d, with_traits(cls)), 512);
    const std::size_t i = find_op(p, "ffn");
    CHECK(p.times[i].math == math_format::int8);
    CHECK(p.times[i].compute_bound.value() == doctest::Approx(94.307e-3).epsilon(1e-4));
  }
  const phase_timing f16 = prefill(a, precision::of(find_format("fp16"), find_format("fp16")),
                                   roofline(d, with_traits("llama.cpp-cuda")), 512);
  CHECK(f16.times[find_op(f16, "ffn")].math == math_format::fp32);
}

TEST_CASE("MXFP4 experts: llama.cpp's int8 path, not the FP4 tensor roof vLLM uses") {
  // DGX Spark (GB10): the catalog lists FP4 500 TFLOPS dense, and derives
  // FP8 250 and BF16 125 from it (Blackwell halves the rate per doubling of
  // width); no INT8 rate is published. gpt-oss-20b expert GEMMs under
  // llama.cpp (MMQ, int8 dot products) take the next roof the chip lists,
  // BF16: 500 / 125 = 4x slower than the FP4 roof a native engine gets.
  const architecture& a = find_model("gpt-oss-20b");
  precision pr = precision::of(find_format("bf16"), find_format("bf16"));
  pr.experts = find_format("mxfp4");
  const device& d = find_device("dgx-spark");
  const phase_timing lc = prefill(a, pr, roofline(d, with_traits("llama.cpp-cuda")), 2048);
  const phase_timing native = prefill(a, pr, roofline(d, with_traits("vllm")), 2048);
  const std::size_t i = find_op(lc, "moe.experts");
  CHECK(lc.times[i].math == math_format::bf16);
  CHECK(native.times[i].math == math_format::fp4);
  CHECK(lc.times[i].compute_bound.value() / native.times[i].compute_bound.value() ==
        doctest::Approx(500.0 / 125.0).epsilon(1e-6));
  // Expert GEMMs are as wide as the tokens each expert receives: 2048 x 4 / 32
  // = 256 rows when every expert is touched, not 2048.
  CHECK(lc.counts.ops[i].gemm_rows == doctest::Approx(2048.0 * 4 / 32).epsilon(1e-3));
  // Attention projections stay bf16 (not quantized): no path applies.
  CHECK(lc.times[find_op(lc, "attention.proj")].math == native.times[find_op(native, "attention.proj")].math);
}

TEST_CASE("kernel path properties: native keeps the format's roof; the path never makes a bound exceed the estimate") {
  const architecture& a = find_model("llama-3.1-8b");
  for (const char* dev : {"h100-sxm", "rtx-4090", "p40", "dgx-spark", "m3-max-40c", "mi300x"}) {
    for (const char* w : {"bf16", "fp8", "q4_0", "q4_k_m", "awq-int4", "mxfp4"}) {
      for (const char* cls : {"vllm", "llama.cpp-cuda", "llama.cpp-cuda@2024", "llama.cpp-metal"}) {
        CAPTURE(dev);
        CAPTURE(w);
        CAPTURE(cls);
        const device& d = find_device(dev);
        const roofline r(d, with_traits(cls));
        const phase_timing p = prefill(a, precision::of(find_format(w), find_format("bf16")), r, 1024);
        for (std::size_t i = 0; i < p.counts.ops.size(); ++i) {
          const op& o = p.counts.ops[i];
          const op_time& t = p.times[i];
          CHECK(t.estimate().value() >= t.bound().value());
          CHECK(d.published_peak(t.math).value() > 0);  // a roof the device has
          if (!o.quantized || std::string_view(cls) == "vllm") CHECK(t.math == d.effective_math(o.math));
        }
      }
    }
  }
}
