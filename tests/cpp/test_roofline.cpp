#include <doctest/doctest.h>

#include <stdexcept>

#include "llmroof/step/roofline.hpp"
#include "llmroof/engine/engine_profile.hpp"

using namespace llmroof;

TEST_CASE("ridge point is peak over bandwidth") {
  // H100 SXM: 989.5 TFLOPS / 3,350 GB/s = 295.37 FLOP/B; fp8: 1979 / 3350 = 590.7.
  const roofline r(find_device("h100-sxm"));
  CHECK(r.ridge(math_format::bf16).value() == doctest::Approx(295.373).epsilon(1e-5));
  CHECK(r.ridge(math_format::fp8).value() == doctest::Approx(590.746).epsilon(1e-5));
}

TEST_CASE("an op takes the larger of its compute and memory times") {
  const roofline r(find_device("h100-sxm"));
  op o;
  o.flop = make_flops(989.5e12);  // 1 s of bf16 peak
  o.weights = make_bytes(3.35e12 / 2);  // 0.5 s of bandwidth
  o.gemm_rows = 1e9;
  const op_time t = r.time(o);
  CHECK(t.compute_bound.value() == doctest::Approx(1.0));
  CHECK(t.memory_bound.value() == doctest::Approx(0.5));
  CHECK(t.bound().value() == doctest::Approx(1.0));
  CHECK(t.limit() == bottleneck::compute);
  // Estimate: 1 / eta_c(1e9) ~ 1 / 0.75.
  CHECK(t.estimate().value() == doctest::Approx(1.0 / 0.75).epsilon(1e-6));
}

TEST_CASE("devices in parallel add their roofs") {
  const roofline one(find_device("h100-sxm"));
  const roofline eight(find_device("h100-sxm"), default_profile(find_device("h100-sxm")), 8);
  CHECK(eight.bandwidth().value() == doctest::Approx(8 * one.bandwidth().value()));
}

TEST_CASE("compute efficiency grows with GEMM rows") {
  efficiency_profile e;
  e.compute = 0.8;
  e.compute_half_rows = 64;
  CHECK(e.compute_efficiency(64) == doctest::Approx(0.4));            // 0.8 x 64/128
  CHECK(e.compute_efficiency(1) == doctest::Approx(0.8 * 0.25));       // the GEMV floor
  CHECK(e.compute_efficiency(1) < e.compute_efficiency(1024));
}

TEST_CASE("datacenter class defaults: one GEMM share for NVIDIA, AMD's per generation (MAMF table)") {
  // A100 87%, H100 80%, B200 78%: 0.75 for all; MI300X 51% -> 0.5, MI325X 60%, MI355X 68%.
  for (const char* id : {"a100-80gb-sxm", "h100-sxm", "b200"}) CHECK(default_profile(find_device(id)).compute == 0.75);
  CHECK(default_profile(find_device("mi300x")).compute == 0.5);
  CHECK(default_profile(find_device("mi325x")).compute == 0.60);
  CHECK(default_profile(find_device("mi355x")).compute == 0.68);
  CHECK(default_profile(find_device("mi250x")).compute == 0.5);
}

TEST_CASE("bad profiles name the field") {
  efficiency_profile e;
  e.memory = 1.5;
  CHECK_THROWS_WITH_AS(roofline(find_device("h100-sxm"), e), "efficiency.memory must be in (0, 1] (got 1.5)",
                       std::invalid_argument);
  e = efficiency_profile{};
  e.per_step = make_seconds(-1);
  CHECK_THROWS_WITH_AS(roofline(find_device("h100-sxm"), e), "efficiency.per_step must be >= 0 (got -1)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(roofline(find_device("h100-sxm"), efficiency_profile{}, 0), "devices must be in [1, 65536] (got 0)",
                       std::invalid_argument);
}

TEST_CASE("a streaming cap limits GEMM weight reads, not attention's KV reads") {
  const device& d = find_device("h100-sxm");  // 3,350 GB/s
  efficiency_profile e = default_profile(d);
  e.memory = 0.8;
  e.stream_cap = 1e12;
  op w{"w", op_class::gemm, 1, make_flops(1), make_bytes(1e9)};
  op kv{"kv", op_class::attention, 1, make_flops(1), make_bytes(0), make_bytes(1e9)};
  const roofline capped(d, e);
  // 1 GB at min(0.8 x 3,350 GB/s, 1,000 GB/s) = 1 ms; the KV read stays at
  // 1 GB / 2,680 GB/s = 0.373 ms.
  CHECK(capped.time(w).memory_est.value() == doctest::Approx(1e-3));
  CHECK(capped.time(kv).memory_est.value() == doctest::Approx(1e9 / 2.68e12));
  CHECK(capped.time(w).memory_bound.value() == doctest::Approx(1e9 / 3.35e12));  // the bound keeps the peak
  // Two devices stream twice as fast; a cap above the achieved rate changes nothing.
  CHECK(roofline(d, e, 2).time(w).memory_est.value() == doctest::Approx(0.5e-3));
  e.stream_cap = 5e12;
  CHECK(roofline(d, e).time(w).memory_est.value() == doctest::Approx(1e9 / 2.68e12));
  e.stream_cap = -1;
  CHECK_THROWS_WITH_AS(roofline(d, e), "efficiency.stream_cap must be >= 0 (got -1)", std::invalid_argument);
}

TEST_CASE("the band's ends move every share by its spread, the streaming cap with eta_m") {
  efficiency_profile e = default_profile(find_device("h100-sxm"));
  // Class defaults carry 20% of each share: 0.66 +- 0.132, 0.75 +- 0.15.
  CHECK(e.memory_sd == doctest::Approx(0.132));
  CHECK(e.compute_sd == doctest::Approx(0.15));
  e.stream_cap = 1.2e12;
  // Slower: eta_m 0.66 - 0.132 = 0.528, cap 1.2 TB/s x 0.528 / 0.66 = 0.96 TB/s.
  CHECK(slower(e).memory == doctest::Approx(0.528));
  CHECK(slower(e).stream_cap == doctest::Approx(0.96e12));
  CHECK(slower(e).compute == doctest::Approx(0.6));
  // Faster: 0.792, cap 1.2 x 0.792 / 0.66 = 1.44 TB/s; shares stop at 1.
  CHECK(faster(e).stream_cap == doctest::Approx(1.44e12));
  e.memory_sd = 0.5;
  CHECK(faster(e).memory == 1.0);
  CHECK(faster(e).stream_cap == doctest::Approx(1.2e12 / 0.66));
  CHECK(slower(e).memory == doctest::Approx(0.16));
}

TEST_CASE("an engine without a fit of its own: llama.cpp versions borrow each other's, TensorRT-LLM's do not") {
  using v = std::vector<std::string>;
  CHECK(fit_candidates("llama.cpp-cuda@2024", v{"llama.cpp-cuda", "mlx"}) == v{"llama.cpp-cuda@2024", "llama.cpp-cuda"});
  CHECK(fit_candidates("llama.cpp-cuda", v{"llama.cpp-cuda@2024/hbm", "mlx"}) == v{"llama.cpp-cuda", "llama.cpp-cuda@2024"});
  CHECK(fit_candidates("tensorrt-llm", v{"tensorrt-llm@2023", "tensorrt-llm@2023/hbm"}) == v{"tensorrt-llm"});
  CHECK(fit_candidates("mlx", v{}) == v{"mlx"});
}

TEST_CASE("FP8 and FP4 GEMMs reach the low-precision share of eta_c on their own roof") {
  op o;
  o.klass = op_class::gemm;
  o.flop = make_flops(1979e12);  // 1 s of the H100's FP8 roof
  o.gemm_rows = 1e9;
  o.math = math_format::fp8;
  const roofline h100(find_device("h100-sxm"));
  CHECK(h100.efficiency().low_precision == doctest::Approx(0.7));  // class default (src/engine/profiles.cpp)
  // 1 / (eta_c 0.75 x 0.7) = 1.90476 s against a 1 s bound.
  CHECK(h100.time(o).compute_bound.value() == doctest::Approx(1.0));
  CHECK(h100.time(o).estimate().value() == doctest::Approx(1.0 / (0.75 * 0.7)).epsilon(1e-6));
  // The same FLOP in BF16: 2 s of its roof, 2 / 0.75 = 2.66667 s; FP8 is 1.4x faster, not 2x.
  o.math = math_format::bf16;
  CHECK(h100.time(o).estimate().value() == doctest::Approx(2.0 / 0.75).epsilon(1e-6));
  // An A100 has no FP8 roof: the GEMM runs in BF16 (312 TFLOPS) without the share.
  o.math = math_format::fp8;
  const roofline a100(find_device("a100-80gb-sxm"));
  CHECK(a100.time(o).estimate().value() == doctest::Approx(1979.0 / 312.0 / 0.75).epsilon(1e-3));
  // Attention and elementwise ops keep their own shares.
  o.klass = op_class::attention;
  CHECK(h100.time(o).estimate().value() == doctest::Approx(1.0 / 0.5).epsilon(1e-6));
  efficiency_profile bad = h100.efficiency();
  bad.low_precision = 0;
  CHECK_THROWS_WITH_AS(validate(bad), "efficiency.low_precision must be in (0, 1] (got 0)", std::invalid_argument);
}

TEST_CASE("at_limit: the fitted efficiencies that ran into their bound of 1") {
  efficiency_profile e;  // class-default values: 0.66, 0.75, 0.5
  e.points = 15;
  CHECK(e.at_limit().empty());
  e.memory = 0.996;  // within 0.5% of the roof: at the limit
  e.attention = 1.0;
  CHECK(e.at_limit() == std::vector<std::string_view>{"memory", "attention"});
  e.memory = 0.99;
  CHECK(e.at_limit() == std::vector<std::string_view>{"attention"});
  e.points = 0;  // a profile no points stand behind was not fitted into its limit
  CHECK(e.at_limit().empty());
  // The shipped llama.cpp Metal fit asks for the whole compute roof in its
  // attention kernels; MLX's (80 points since the third release joined the
  // fit, eta_m 0.78) and vLLM's class default on an H100 do not sit at a limit.
  CHECK(default_profile(find_device("m4-max-40c"), "llama.cpp").at_limit() == std::vector<std::string_view>{"attention"});
  CHECK(default_profile(find_device("m4-max-40c"), "mlx").at_limit().empty());
  CHECK(default_profile(find_device("h100-sxm"), "vllm").at_limit().empty());
}

TEST_CASE("kernel families: one GEMM, one decode attention call, one MoE call, one all-reduce, by hand") {
  // H100 SXM under vLLM prices its ops with its own row of src/engine/kernel_fits.inc
  // (scripts/fit_kernels.py on AIConfigurator 0.12.0's kernel database).
  const device h100 = find_device("h100-sxm");
  const efficiency_profile e = default_profile(h100, "vllm");
  REQUIRE(kernel_fitted(e));
  CHECK(e.compute == doctest::Approx(0.786537));
  CHECK(e.compute_half_rows == doctest::Approx(10.1747));
  CHECK(e.memory == doctest::Approx(0.820662));
  CHECK(e.per_launch.value() == doctest::Approx(3.08064e-06));
  CHECK(e.low_precision == doctest::Approx(0.530639));
  CHECK(e.low_precision_memory == doctest::Approx(0.775652));
  CHECK(e.kv_stream == doctest::Approx(0.55811));
  CHECK(e.attention_floor.value() == doctest::Approx(1.39495e-05));
  CHECK(e.expert_floor.value() == doctest::Approx(5.59282e-05));
  CHECK(e.link == doctest::Approx(0.667234));
  CHECK(e.collective_latency.value() == doctest::Approx(4.75286e-06));
  const roofline r(h100, e);

  SUBCASE("a bf16 GEMM of M = 4,096 rows, N = K = 8,192: compute-bound, M / (M + M_half) of eta_c") {
    op g;
    g.klass = op_class::gemm;
    g.flop = make_flops(2.0 * 4096 * 8192 * 8192);  // 5.4976e11 FLOP
    g.weights = make_bytes(2.0 * 8192 * 8192);      // 134.2 MB of bf16 weights
    g.gemm_rows = 4096;
    const op_time t = r.time(g);
    // Bound: 5.4976e11 / 989.5e12 = 555.59 us. Share: 0.786537 x 4096 / (4096 + 10.1747) = 0.783588.
    // Estimate 555.59 / 0.783588 = 709.03 us, plus one launch of 3.08 us.
    CHECK(t.compute_bound.value() == doctest::Approx(5.49756e11 / 989.5e12).epsilon(1e-5));
    CHECK(t.compute_est.value() == doctest::Approx(709.03e-6).epsilon(1e-4));
    CHECK(t.overhead.value() == doctest::Approx(3.08064e-06).epsilon(1e-6));
    CHECK(t.estimate().value() == doctest::Approx(712.11e-6).epsilon(1e-4));
    // One row, FP8: the weights stream at eta_m x low_precision_memory = 0.820662 x 0.775652 = 0.636550
    // of 3.35 TB/s; 67.1 MB of FP8 weights: 67.1089e6 / (3.35e12 x 0.636550) = 31.470 us; two
    // launches (the GEMM and its activation quantizer): 6.16 us.
    g.gemm_rows = 1;
    g.flop = make_flops(2.0 * 8192 * 8192);
    g.weights = make_bytes(8192.0 * 8192);
    g.math = math_format::fp8;
    g.quantized_gemms = 1;
    const op_time f = r.time(g);
    CHECK(f.memory_est.value() == doctest::Approx(31.470e-6).epsilon(1e-4));
    CHECK(f.overhead.value() == doctest::Approx(2 * 3.08064e-06).epsilon(1e-6));
  }
  SUBCASE("a decode attention call over 32 sequences of 4k: the KV at kv_stream, never under the floor") {
    op a;
    a.klass = op_class::attention;
    a.kind = op_kind::attention_global;
    // Llama-3.1-8B's GQA cache: 8 KV heads x 128 x 2 (K and V) x 2 B = 4,096 B per token per layer;
    // 32 x 4,096 tokens: 536.9 MB. At 0.55811 x 3.35 TB/s: 287.16 us.
    a.kv_read = make_bytes(4096.0 * 32 * 4096);
    a.flop = make_flops(4.0 * 32 * 32 * 128 * 4096);  // 2.1 GFLOP: far under the ridge
    const op_time t = r.time(a);
    CHECK(t.memory_est.value() == doctest::Approx(536.871e6 / (3.35e12 * 0.55811)).epsilon(1e-5));
    CHECK(t.memory_est.value() == doctest::Approx(287.16e-6).epsilon(1e-4));
    CHECK(t.overhead.value() == doctest::Approx(1.39495e-05).epsilon(1e-6));  // max(1 launch, the floor)
    // One short sequence: 4,096 B x 64 tokens at the same share is 0.14 us: the 13.95 us floor is the call.
    a.kv_read = make_bytes(4096.0 * 64);
    a.flop = make_flops(0);
    CHECK(r.time(a).estimate().value() == doctest::Approx(1.39495e-05 + 262144.0 / (3.35e12 * 0.55811)).epsilon(1e-6));
  }
  SUBCASE("an MoE call at one token: its 55.9 us floor, not one launch") {
    op m;
    m.klass = op_class::gemm;
    m.kind = op_kind::experts;
    m.count = 48;  // 48 layers
    m.launches = 4;
    // 4 launches x 3.08 us = 12.3 us < 55.93 us: 48 x 55.9282 us = 2.6846 ms.
    CHECK(r.time(m).overhead.value() == doctest::Approx(48 * 5.59282e-05).epsilon(1e-6));
  }
  SUBCASE("an all-reduce within a node: the one-shot latency, not the ring's") {
    op c;
    c.klass = op_class::communication;
    c.kind = op_kind::all_reduce;
    c.count = 2;
    c.network = make_bytes(1e6);
    c.latency = make_seconds(20e-6);
    c.within_node = true;
    // 1 MB over NVLink 4's 450 GB/s each way (900 GB/s bidirectional) at eta_link 0.667234:
    // 3.33050 us; plus 2 x 4.75286 us: 12.8362 us.
    CHECK(r.link().bandwidth.value() == doctest::Approx(450e9));
    CHECK(r.time(c).memory_est.value() == doctest::Approx(1e6 / (450e9 * 0.667234) + 2 * 4.75286e-06).epsilon(1e-6));
    CHECK(r.time(c).memory_est.value() == doctest::Approx(12.8362e-6).epsilon(1e-4));
    // Across nodes the op's own latency stands: 3.33050 + 2 x 20 = 43.3305 us.
    c.within_node = false;
    CHECK(r.time(c).memory_est.value() == doctest::Approx(43.3305e-6).epsilon(1e-4));
  }
}
