#include <doctest/doctest.h>

#include <stdexcept>

#include "llmroof/roofline.hpp"
#include "llmroof/engine_profile.hpp"

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
  CHECK(h100.efficiency().low_precision == doctest::Approx(0.7));  // class default (src/profiles.cpp)
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
