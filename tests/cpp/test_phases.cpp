#include <doctest/doctest.h>

#include <random>

#include "llmroof/step/phases.hpp"
#include "llmroof/engine/engine_profile.hpp"

using namespace llmroof;

TEST_CASE("seed: Devstral FP8 on an RTX Pro 6000 decodes ~50 t/s empty, 20-30 t/s at 128k") {
  const auto& a = find_model("devstral-small-2-24b");
  const precision pr = precision::of(find_format("fp8"), find_format("bf16"));
  const roofline r(find_device("rtx-pro-6000-blackwell"));
  const auto empty = decode_step(a, pr, r, 1, 0);
  // Weights read: 22,229,811,200 linear params x (8 + 32/16384)/8 B + lm_head
  // 671,088,640 x 2 B + norms + one embedding row = ~23.58 GB.
  CHECK(in_GB(empty.counts.weight_bytes()) == doctest::Approx(23.58).epsilon(0.001));
  // Bound: 23.58 GB / 1792 GB/s = 13.16 ms -> 76.0 t/s.
  CHECK(empty.tokens_per_s_bound().value() == doctest::Approx(76.0).epsilon(0.005));
  CHECK(empty.tokens_per_s_estimate().value() == doctest::Approx(50).epsilon(0.05));
  const auto full = decode_step(a, pr, r, 1, 131072);
  // KV read: 131,072 x 163,840 B = 21.47 GB.
  CHECK(in_GB(full.counts.kv_read_bytes()) == doctest::Approx(21.475).epsilon(0.001));
  CHECK(full.tokens_per_s_bound().value() == doctest::Approx(39.8).epsilon(0.01));
  CHECK(full.tokens_per_s_estimate().value() > 20);
  CHECK(full.tokens_per_s_estimate().value() < 30);
  CHECK(empty.limit() == bottleneck::memory);
}

TEST_CASE("the seed model on an RTX 3090 with a 4-bit KV cache: ratio explained by bandwidth and bytes") {
  const auto& a = find_model("devstral-small-2-24b");
  const precision pro_pr = precision::of(find_format("fp8"), find_format("bf16"));
  const precision r3090_pr = precision::of(find_format("fp8"), find_format("q4_0"));
  const auto pro = decode_step(a, pro_pr, roofline(find_device("rtx-pro-6000-blackwell")), 1, 32768);
  const auto r3090 = decode_step(a, r3090_pr, roofline(find_device("rtx-3090")), 1, 32768);
  // Bound ratio = (bytes_3090 / 936 GB/s) / (bytes_pro / 1792 GB/s).
  const double expect = (r3090.counts.total_bytes().value() / 936e9) / (pro.counts.total_bytes().value() / 1792e9);
  CHECK(r3090.bound.value() / pro.bound.value() == doctest::Approx(expect).epsilon(1e-3));
  // The q4_0 cache is 4.5/16 of the bf16 one.
  CHECK(r3090.counts.kv_read_bytes().value() / pro.counts.kv_read_bytes().value() == doctest::Approx(4.5 / 16));
}

TEST_CASE("prefill of a long prompt is compute-bound and fast") {
  const auto& a = find_model("llama-3.1-8b");
  const auto p = prefill(a, precision{}, roofline(find_device("h100-sxm")), 4096);
  CHECK(p.limit() == bottleneck::compute);
  CHECK(p.tokens_per_s_estimate().value() > 1000);
}

TEST_CASE("property: decode time never decreases with context or batch; bound <= estimate") {
  std::mt19937 rng(3);
  const std::vector<const char*> devs{"h100-sxm", "rtx-3090", "m2-ultra-76c", "mi300x", "rtx-pro-6000-blackwell", "a100-40gb-pcie"};
  for (const auto& a : models()) {
    for (const char* dv : devs) {
      CAPTURE(a.id);
      CAPTURE(dv);
      const roofline r(find_device(dv));
      const precision pr = precision::of(find_format("fp8"), find_format("fp8-e4m3"));
      double prev_c = 0;
      for (double c = 0; c <= 262144; c = c * 2 + 512) {
        const auto p = decode_step(a, pr, r, 4, c);
        CHECK(p.bound.value() <= p.estimate.value());
        CHECK(p.estimate.value() >= prev_c);
        prev_c = p.estimate.value();
      }
      double prev_b = 0;
      for (double b = 1; b <= 1024; b *= 2) {
        const auto p = decode_step(a, pr, r, b, 2048);
        CHECK(p.bound.value() <= p.estimate.value());
        CHECK(p.estimate.value() >= prev_b);
        prev_b = p.estimate.value();
      }
      const auto pf = prefill(a, pr, r, 1 + std::floor(std::uniform_real_distribution<double>(0, 8192)(rng)));
      CHECK(pf.bound.value() <= pf.estimate.value());
      for (std::size_t i = 0; i < pf.counts.ops.size(); ++i) {
        CHECK(pf.times[i].bound().value() <= pf.times[i].estimate().value());
      }
    }
  }
}

TEST_CASE("unfused attention moves the FP32 score matrix; fused attention does not") {
  const architecture& a = find_model("llama-3.1-8b");
  const precision pr = precision::of(find_format("bf16"), find_format("bf16"));
  const device& d = find_device("a100-80gb-sxm");
  efficiency_profile fused = default_profile(d);
  efficiency_profile unfused = fused;
  unfused.fused_attention = false;
  const phase_timing f = prefill(a, pr, roofline(d, fused), 512);
  const phase_timing u = prefill(a, pr, roofline(d, unfused), 512);
  // Scores of 512 new tokens: 512 * 513 / 2 = 131,328 pairs per head and
  // layer; x 32 heads x 32 layers x 16 B (FP32 written by QK^T, read and
  // written by softmax, read by PV) = 2,151,677,952 B more over 2,039 GB/s.
  double extra = 0;
  for (std::size_t i = 0; i < f.counts.ops.size(); ++i) {
    extra += u.times[i].memory_bound.value() - f.times[i].memory_bound.value();
  }
  CHECK(extra == doctest::Approx(2151677952.0 / 2039e9).epsilon(1e-9));
  CHECK(u.estimate > f.estimate);
  CHECK(u.bound >= f.bound);
}

TEST_CASE("FP16-accumulate GEMMs run at twice the listed 16-bit rate on GeForce cards only") {
  const architecture& a = find_model("llama-3.1-8b");
  const precision pr = precision::of(find_format("bf16"), find_format("bf16"));
  CHECK(find_device("rtx-4090").fp16_accumulate_speedup() == 2.0);
  CHECK(find_device("rtx-6000-ada").fp16_accumulate_speedup() == 1.0);
  CHECK(find_device("a100-80gb-sxm").fp16_accumulate_speedup() == 1.0);
  for (const char* id : {"rtx-4090", "a100-80gb-sxm"}) {
    const device& d = find_device(id);
    efficiency_profile e = default_profile(d);
    efficiency_profile h = e;
    h.fp16_accumulate = true;
    const phase_timing plain = prefill(a, pr, roofline(d, e), 4096);
    const phase_timing half = prefill(a, pr, roofline(d, h), 4096);
    double gemm_plain = 0, gemm_half = 0;
    for (std::size_t i = 0; i < plain.counts.ops.size(); ++i) {
      if (plain.counts.ops[i].klass != op_class::gemm) continue;
      gemm_plain += plain.times[i].compute_bound.value();
      gemm_half += half.times[i].compute_bound.value();
    }
    CAPTURE(id);
    CHECK(gemm_half == doctest::Approx(gemm_plain / d.fp16_accumulate_speedup()));
  }
}

TEST_CASE("host work of a step: serial adds it, multi-step shares it, overlapped hides what the kernels cover") {
  const auto& a = find_model("llama-3-8b");
  const precision pr = precision::of(find_format("bf16"), find_format("bf16"));
  const device& d = find_device("h100-sxm");
  efficiency_profile e = default_profile(d);
  e.per_kernel = make_seconds(0);
  e.per_step = make_seconds(0);
  const double kernels = decode_step(a, pr, roofline(d, e), 8, 1024).estimate.value();
  // 16.1311 GB of weights and KV / (3,350 GB/s x 0.66) = 7.2958 ms.
  CHECK(kernels == doctest::Approx(7.2958e-3).epsilon(1e-4));
  // Serial: kernels + 2 ms.
  e.per_step = make_seconds(2e-3);
  CHECK(decode_step(a, pr, roofline(d, e), 8, 1024).estimate.value() == doctest::Approx(kernels + 2e-3).epsilon(1e-12));
  // vLLM 0.6 multi-step, 8 steps per scheduler call: kernels + 2 ms / 8 = kernels + 0.25 ms.
  e.scheduler_steps = 8;
  const auto multi = decode_step(a, pr, roofline(d, e), 8, 1024);
  CHECK(multi.estimate.value() == doctest::Approx(kernels + 0.25e-3).epsilon(1e-12));
  CHECK(multi.overhead_time.value() == doctest::Approx(0.25e-3).epsilon(1e-12));
  // Overlapped: the 2 ms hide under the 7.30 ms of kernels, nothing is added...
  e.scheduler_steps = 1;
  e.overlap = host_overlap::overlapped;
  CHECK(kernels > 2e-3);
  CHECK(decode_step(a, pr, roofline(d, e), 8, 1024).estimate.value() == doctest::Approx(kernels).epsilon(1e-12));
  // ... until the host takes longer than the kernels: step = host = 30 ms.
  e.per_step = make_seconds(30e-3);
  const auto slow_host = decode_step(a, pr, roofline(d, e), 8, 1024);
  CHECK(slow_host.estimate.value() == doctest::Approx(30e-3).epsilon(1e-12));
  CHECK(slow_host.limit() == bottleneck::overhead);
  // SGLang's overlap scheduler is the engine's trait; vLLM's and llama.cpp's are serial.
  CHECK(default_profile(d, "sglang").overlap == host_overlap::overlapped);
  CHECK(default_profile(d, "vllm").overlap == host_overlap::serial);
  CHECK(default_profile(d, "llama.cpp").overlap == host_overlap::serial);
  e.scheduler_steps = 0;
  CHECK_THROWS_WITH_AS(roofline(d, e), "efficiency.scheduler_steps must be in [1, 1024] (got 0)", std::invalid_argument);
}
