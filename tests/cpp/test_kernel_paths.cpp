// Kernel paths (issue 14): which roof a GEMM on quantized weights runs on is a
// trait of the engine and its version, applied per op.
#include <doctest/doctest.h>

#include "llmroof/step/phases.hpp"
#include "llmroof/engine/engine_profile.hpp"
#include "llmroof/search/recommend.hpp"

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

TEST_CASE("GeForce, current llama.cpp: Q4_0 prefill GEMMs run on the INT8 path (MMQ), at its instruction issue") {
  // Llama-2-7B FFN: 3 x 4096 x 11008 = 135,266,304 weights per layer x 32 =
  // 4,328,521,728. pp512: 2 x 512 x 4,328,521,728 = 4.432406e12 FLOP.
  // RTX 4090 INT8 dense 660.6 TOPS: 4.432406e12 / 660.6e12 = 6.70967 ms; but
  // MMQ issues 4.85 warp instructions per 1k MAC for Q4_0 (0.1552 thread
  // instructions per MAC): 2.216203e12 MAC x 0.1552 = 3.43955e11 instructions
  // at 82.6 / 2 = 41.3e12 per s (128 FP32 lanes per SM) = 8.32821 ms, the bound.
  // The 2024 builds dequantized to FP16 for cuBLAS with FP16 accumulate:
  // 2 x 165.2 = 330.4 TFLOPS -> 13.4153 ms.
  const architecture& a = find_model("llama-2-7b");
  const precision pr = precision::of(find_format("q4_0"), find_format("fp16"));
  const device& d = find_device("rtx-4090");
  const phase_timing now = prefill(a, pr, roofline(d, with_traits("llama.cpp-cuda")), 512);
  const phase_timing old = prefill(a, pr, roofline(d, with_traits("llama.cpp-cuda@2024")), 512);
  const std::size_t i = find_op(now, "ffn");
  CHECK(now.counts.ops[i].flop.value() == doctest::Approx(4.432406e12).epsilon(1e-6));
  CHECK(now.times[i].math == math_format::int8);
  CHECK(now.times[i].compute_bound.value() == doctest::Approx(8.32821e-3).epsilon(1e-5));
  CHECK(old.times[i].math == math_format::bf16);
  CHECK(old.times[i].compute_bound.value() == doctest::Approx(13.4153e-3).epsilon(1e-5));
  // The path never changes what is counted, only the roof.
  CHECK(now.counts.total_flop().value() == old.counts.total_flop().value());
  CHECK(now.counts.total_bytes().value() == old.counts.total_bytes().value());
  // 16-bit weights are not quantized: cuBLAS FP16 in both versions.
  const precision f16 = precision::of(find_format("fp16"), find_format("fp16"));
  CHECK(prefill(a, f16, roofline(d, with_traits("llama.cpp-cuda")), 512).times[i].math == math_format::bf16);
}

TEST_CASE("MMQ's scalar work: Q4_K prefill on an H100 runs at a fifth of its INT8 tensor roof, on an A100 at a third") {
  // KERNELS.md 1.7: Q4_K's MMQ loop issues 5.64 warp instructions per 1k MAC
  // (0.18048 thread instructions per MAC). Llama-2-7B FFN pp512: 2.216203e12
  // MAC x 0.18048 = 3.999803e11 instructions.
  //  - H100 SXM (128 FP32 lanes per SM): 67.0 / 2 = 33.5e12 per s -> 11.93971 ms,
  //    where the INT8 roof says 4.432406e12 / 1979e12 = 2.23973 ms (5.33x).
  //  - A100 (GA100: 64 FP32 lanes, 128 issue slots per SM): 19.5e12 per s ->
  //    20.51181 ms, where INT8 624 TOPS says 7.10322 ms (2.89x).
  //  - Q8_0 (4.06 per 1k MAC) on the H100: 2.216203e12 x 0.12992 / 33.5e12 = 8.59483 ms.
  // Decode (one row per GEMM) takes the mat-vec kernels: no such term. Nor
  // does AMD (no instruction counts of its kernels) or a dequantizing build.
  const architecture& a = find_model("llama-2-7b");
  const precision q4k = precision::of(find_format("q4_k"), find_format("fp16"));
  const precision q8 = precision::of(find_format("q8_0"), find_format("fp16"));
  const efficiency_profile mmq = with_traits("llama.cpp-cuda");
  const auto ffn_bound = [&](const precision& pr, const char* dev, const efficiency_profile& e, double tokens) {
    const phase_timing p = prefill(a, pr, roofline(find_device(dev), e), tokens);
    return p.times[find_op(p, "ffn")].compute_bound.value();
  };
  CHECK(ffn_bound(q4k, "h100-sxm", mmq, 512) == doctest::Approx(11.93971e-3).epsilon(1e-5));
  CHECK(ffn_bound(q4k, "a100-80gb-sxm", mmq, 512) == doctest::Approx(20.51181e-3).epsilon(1e-5));
  CHECK(ffn_bound(q8, "h100-sxm", mmq, 512) == doctest::Approx(8.59483e-3).epsilon(1e-5));
  CHECK(ffn_bound(q4k, "h100-sxm", with_traits("llama.cpp-cuda@2024"), 512) ==
        doctest::Approx(4.432406e12 / 989.5e12).epsilon(1e-5));
  // Property: the instruction roof scales with the MACs, never below the tensor roof.
  CHECK(ffn_bound(q4k, "h100-sxm", mmq, 1024) == doctest::Approx(2 * 11.93971e-3).epsilon(1e-5));
  const phase_timing step = decode_step(a, q4k, roofline(find_device("h100-sxm"), mmq), 1, 512);
  const std::size_t i = find_op(step, "ffn");
  CHECK(step.times[i].compute_bound.value() == doctest::Approx(step.counts.ops[i].flop.value() / 1979e12).epsilon(1e-9));
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

TEST_CASE("llama.cpp backends: the device's own unless named; a named one must run on the device") {
  // llama.cpp's build docs per vendor: Metal on Apple, CUDA on NVIDIA, HIP
  // (ROCm) on AMD, SYCL on Intel GPUs; Vulkan on any but Apple's.
  const auto class_of = [](const char* dev, const char* engine) {
    const kernel_class* k = kernel_class_of(find_device(dev), find_engine(engine));
    return k == nullptr ? std::string("none") : std::string(k->key);
  };
  CHECK(class_of("h100-sxm", "llama.cpp") == "llama.cpp-cuda");
  CHECK(class_of("h100-sxm", "llama.cpp@2024") == "llama.cpp-cuda@2024");
  CHECK(class_of("m3-ultra-80c", "llama.cpp") == "llama.cpp-metal");
  CHECK(class_of("rx-7900-xtx", "llama.cpp") == "llama.cpp-hip");
  CHECK(class_of("ryzen-ai-max-395", "ollama") == "llama.cpp-hip");
  CHECK(class_of("arc-b580", "llama.cpp") == "llama.cpp-sycl");
  CHECK(class_of("rx-7900-xtx", "llama.cpp-vulkan") == "llama.cpp-vulkan");
  CHECK(class_of("rtx-4090", "llama.cpp-vulkan") == "llama.cpp-vulkan");
  CHECK(class_of("ryzen-ai-max-395", "llama.cpp-rocm") == "llama.cpp-hip");
  CHECK(class_of("h100-sxm", "vllm") == "vllm");
  // Names round-trip: what qualified_name prints, find_engine reads.
  const engine_settings v = find_engine("LLaMA.cpp-Vulkan@2024");
  CHECK(v.id == engine_id::llama_cpp);
  CHECK(v.backend == "vulkan");
  CHECK(v.version == "2024");
  CHECK(v.qualified_name() == "llama.cpp-vulkan@2024");
  CHECK(find_engine(v.qualified_name()).qualified_name() == v.qualified_name());
  CHECK(find_engine("llama.cpp").qualified_name() == "llama.cpp");
  CHECK(engine_of_class("llama.cpp-cuda@2024") == "llama.cpp-cuda@2024");
  CHECK(find_engine(engine_of_class("llama.cpp-hip")).backend == "hip");
  // Refusals name the field.
  CHECK_THROWS_WITH_AS(find_engine("llama.cpp-opencl"),
                       "engine backend 'opencl' is not one of llama.cpp's (llama.cpp-cuda, llama.cpp-hip, "
                       "llama.cpp-vulkan, llama.cpp-sycl, llama.cpp-metal)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(find_engine("ollama-vulkan"),
                       "engine backend 'vulkan' is not one of ollama's (ollama-cuda, ollama-hip, ollama-metal)",
                       std::invalid_argument);
  CHECK_THROWS_AS(find_engine("vllm-hip"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(kernel_class_of(find_device("h100-sxm"), find_engine("llama.cpp-hip")),
                       "engine backend 'hip' does not run on NVIDIA GPUs (device 'h100-sxm')", std::invalid_argument);
  CHECK_THROWS_WITH_AS(kernel_class_of(find_device("m3-ultra-80c"), find_engine("llama.cpp-vulkan")),
                       "engine backend 'vulkan' does not run on Apple GPUs (device 'm3-ultra-80c')", std::invalid_argument);
}

TEST_CASE("llama.cpp backends' kernel traits: HIP multiplies in int8, Vulkan and SYCL on the 16-bit roof, SYCL unfused") {
  // Llama-2-7B Q4_0 FFN pp512 (4.432406e12 FLOP) on an RX 7900 XTX: the
  // catalog lists no INT8 rate, so HIP's int8 path takes the 16-bit roof
  // (122.8 TFLOPS): 36.0945 ms; AMD's kernels have no instruction counts
  // here, so no issue term. Arc B580 under SYCL dequantizes to FP16 for
  // oneDNN (109.4 TFLOPS): 40.5156 ms; its int8 rate (218.7 TOPS) is unused.
  const architecture& a = find_model("llama-2-7b");
  const precision pr = precision::of(find_format("q4_0"), find_format("fp16"));
  const auto ffn = [&](const char* dev, const char* cls) {
    const phase_timing p = prefill(a, pr, roofline(find_device(dev), with_traits(cls)), 512);
    return p.times[find_op(p, "ffn")];
  };
  CHECK(ffn("rx-7900-xtx", "llama.cpp-hip").compute_bound.value() == doctest::Approx(4.432406e12 / 122.8e12).epsilon(1e-5));
  CHECK(ffn("arc-b580", "llama.cpp-sycl").math == math_format::bf16);
  CHECK(ffn("arc-b580", "llama.cpp-sycl").compute_bound.value() == doctest::Approx(4.432406e12 / 109.4e12).epsilon(1e-5));
  // Vulkan's integer dot products run on the vector ALUs, not XMX: the 16-bit matrix roof stands in.
  CHECK(ffn("arc-b580", "llama.cpp-vulkan").math == math_format::bf16);
  CHECK(ffn("arc-b580", "llama.cpp-vulkan").compute_bound.value() == doctest::Approx(4.432406e12 / 109.4e12).epsilon(1e-5));
  // HIP compiles CUDA's kernels: without a fit of its own it takes CUDA's
  // efficiencies (with its own traits); Vulkan has its own fit, SYCL none.
  CHECK(fit_candidates("llama.cpp-hip", {}) == std::vector<std::string>{"llama.cpp-hip", "llama.cpp-cuda"});
  CHECK(fit_candidates("llama.cpp-vulkan", {}) == std::vector<std::string>{"llama.cpp-vulkan"});
  // Another class's fit (HIP taking CUDA's) drops its streaming cap; another
  // version's of the same class (2024 builds taking current ones') keeps it.
  CHECK(fit_of_another_class("llama.cpp-hip", "llama.cpp-cuda/hbm"));
  CHECK_FALSE(fit_of_another_class("llama.cpp-cuda@2024", "llama.cpp-cuda"));
  CHECK_FALSE(fit_of_another_class("llama.cpp-cuda@2024", "llama.cpp-cuda@2024/gddr"));
  const efficiency_profile hip = default_profile(find_device("rx-7900-xtx"), "llama.cpp");
  CHECK(hip.name == "fitted llama.cpp-cuda");
  CHECK(hip.source.find("taken by llama.cpp-hip") != std::string::npos);
  CHECK_FALSE(hip.fp16_accumulate);  // HIP's traits, CUDA's efficiencies
  CHECK(default_profile(find_device("rx-7900-xtx"), "llama.cpp-vulkan").name == "fitted llama.cpp-vulkan");
  CHECK(default_profile(find_device("arc-b580"), "llama.cpp").points == 0);
  CHECK_FALSE(with_traits("llama.cpp-sycl").fused_attention);
  CHECK(with_traits("llama.cpp-hip").fused_attention);
  CHECK(with_traits("llama.cpp-vulkan").prefill_chunk == 512);
}

TEST_CASE("llama.cpp backends stay on GPUs; a search skips a named backend on another vendor's devices") {
  // Gaudi and TPUs have no llama.cpp backend; a CPU runs llama.cpp's CPU
  // backend, which has no kernel class (class defaults).
  CHECK(native_backend(find_device("gaudi-3")).empty());
  CHECK(native_backend(find_device("tpu-v6e")).empty());
  CHECK(native_backend(find_device("arc-b580")) == "sycl");
  CHECK_FALSE(runs_on(find_engine("llama.cpp-vulkan"), find_device("gaudi-3")));
  CHECK(runs_on(find_engine("llama.cpp"), find_device("gaudi-3")));
  CHECK(kernel_class_of(find_device("gaudi-3"), find_engine("llama.cpp")) == nullptr);
  // Ollama ships no SYCL runner: on an Intel GPU it has no kernel class.
  CHECK(kernel_class_of(find_device("arc-b580"), find_engine("ollama")) == nullptr);
  CHECK(engines_for(find_device("gaudi-3")) == std::vector<std::string>{"vllm"});
}

TEST_CASE("ggml's flash attention on RDNA: WMMA with GQA and heads up to 128, else the TILE kernel on the vector ALUs") {
  // pp512 after 32,768 cached tokens on a Ryzen AI Max+ 395 (RDNA 3.5: fp32
  // 29.7 TFLOPS, WMMA fp16 59.4). Llama-2-7B has no GQA (32 query heads, 32
  // KV heads, head 128): fattn.cu takes the TILE kernel, the fp32 roof.
  // Llama-3-8B (32 / 8 heads, head 128) meets the GQA optimisation: WMMA.
  // Attention FLOP = 4 x 128 x 32 heads x 32 layers = 524,288 per pair;
  // pairs = 512 x (32,768 + (512 + 1) / 2) = 16,908,544: 8.864948e12 FLOP,
  // / 29.7e12 = 298.483 ms against / 59.4e12 = 149.242 ms on WMMA.
  const device& d = find_device("ryzen-ai-max-395");
  const precision pr = precision::of(find_format("q4_0"), find_format("fp16"));
  const roofline hip(d, with_traits("llama.cpp-hip"));
  const phase_timing mha = prefill(find_model("llama-2-7b"), pr, hip, 512, 32768);
  const std::size_t i = find_op(mha, "attention.global");
  CHECK(mha.counts.ops[i].gqa == 1);
  CHECK(mha.counts.ops[i].head_dim == 128);
  CHECK(mha.counts.ops[i].flop.value() == doctest::Approx(8.864948e12).epsilon(1e-6));
  CHECK(mha.times[i].math == math_format::fp32);
  CHECK(mha.times[i].compute_bound.value() == doctest::Approx(298.483e-3).epsilon(1e-5));
  const phase_timing gqa = prefill(find_model("llama-3-8b"), pr, hip, 512, 32768);
  const std::size_t j = find_op(gqa, "attention.global");
  CHECK(gqa.counts.ops[j].gqa == 4);
  CHECK(gqa.times[j].math == math_format::bf16);
  CHECK(gqa.times[j].compute_bound.value() == doctest::Approx(gqa.counts.ops[j].flop.value() / 59.4e12).epsilon(1e-9));
  // The same MHA prompt through CUDA's build (the MMA kernel for every
  // prefill on Turing and later) and on CDNA (MFMA: MMA for prefill) stays
  // on the matrix roof; so does Vulkan's own FA (coopmat).
  CHECK(prefill(find_model("llama-2-7b"), pr, roofline(d, with_traits("llama.cpp-vulkan")), 512, 32768).times[i].math ==
        math_format::bf16);
  CHECK(prefill(find_model("llama-2-7b"), pr, roofline(find_device("mi300x"), with_traits("llama.cpp-hip")), 512, 32768)
            .times[i]
            .math == math_format::bf16);
  // Without -fa ggml runs attention as matmuls, not through that dispatch.
  efficiency_profile no_fa = with_traits("llama.cpp-hip");
  no_fa.fused_attention = false;
  CHECK(prefill(find_model("llama-2-7b"), pr, roofline(d, no_fa), 512, 32768).times[i].math == math_format::bf16);
  // Heads wider than 128 take TILE even with GQA (Gemma 4 31B: head 256).
  const architecture& g = find_model("gemma-4-31b");
  REQUIRE(g.head_dim > 128);
  REQUIRE(g.num_heads / g.num_kv_heads >= 2);
  const phase_timing wide = prefill(g, pr, hip, 512, 32768);
  CHECK(wide.times[find_op(wide, "attention.global")].math == math_format::fp32);
  // MLA: every query head reads the one 576-wide latent (gqa = heads).
  const phase_timing mla = prefill(find_model("deepseek-v2-lite"), pr, hip, 512, 4096);
  const std::size_t k = find_op(mla, "attention.global");
  CHECK(mla.counts.ops[k].head_dim == 576);
  CHECK(mla.counts.ops[k].gqa == find_model("deepseek-v2-lite").num_heads);
  CHECK(mla.times[k].math == math_format::fp32);
}
