#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "llmroof/engine/memory_plan.hpp"

using namespace llmroof;

namespace {
const precision seed_pr = precision::of(find_format("fp8"), find_format("bf16"));
}

TEST_CASE("seed: four users at 128k do not fit beside the weights") {
  const auto& a = find_model("devstral-small-2-24b");
  const auto m = plan_memory(a, seed_pr, find_device("rtx-pro-6000-blackwell"), 4, 131072);
  // Current vLLM: usable 96 GiB x 0.99 (what CUDA sees) x 0.9 = 85.536 GiB; weights ~23.2 GiB;
  // non-torch 0.13 GiB; activation peak = the sampler's, 1024 sequences x 131,072 vocab x 4 B x 9.7
  // copies = 5,207,650,304 B (the forward pass of 8192 tokens is 8192 x (48 x 128 + 3 x 32768 +
  // 2 x 5120) x 2 B = 1,879,048,192 B).
  CHECK(in_GiB(m.usable) == doctest::Approx(85.536));
  CHECK(in_GiB(m.weights) == doctest::Approx(23.21).epsilon(0.001));
  CHECK(m.activations.value() == doctest::Approx(1024.0 * 131072 * 4 * 9.7));
  CHECK(in_GiB(m.reserve) == doctest::Approx(0.13));
  // KV budget 85.536 - 23.21 - 4.85 - 0.13 = 57.35 GiB; each user needs 20 GiB: 80 GiB do not fit.
  CHECK(in_GiB(m.kv_needed) == doctest::Approx(80.0));
  CHECK(m.weights_fit);
  CHECK_FALSE(m.fits);
  CHECK(in_GiB(m.shortfall()) == doctest::Approx(80.0 - in_GiB(m.kv_budget)));
  CHECK(in_GiB(m.kv_budget) == doctest::Approx(57.35).epsilon(0.001));
  CHECK(m.max_sequences == 2);
  // One 128k sequence fits: vLLM starts (max_model_len = the context), 57.35 GiB / 160 KiB = 375,8xx tokens.
  CHECK(m.starts);
  CHECK(m.kv_tokens == std::floor(m.kv_budget.value() / (163840.0 * 16)) * 16);
  // Longest context for 4 users: budget / 4 / 163,840 B, rounded down to blocks of 16.
  const double expect = std::floor(m.kv_budget.value() / 4 / 163840 / 16) * 16;
  CHECK(m.max_context >= expect);
  CHECK(m.max_context < expect + 16);
}

TEST_CASE("a plan that fits reports headroom, not shortfall") {
  const auto m = plan_memory(find_model("llama-3.1-8b"), precision{}, find_device("h100-sxm"), 1, 8192);
  CHECK(m.fits);
  CHECK(m.shortfall().value() == 0);
  CHECK(m.headroom().value() > 0);
}

TEST_CASE("weights that do not fit are an answer with the shortfall, not an exception") {
  const auto m = plan_memory(find_model("llama-3.1-405b"), seed_pr, find_device("h100-sxm"), 1, 4096);
  CHECK_FALSE(m.weights_fit);
  CHECK_FALSE(m.fits);
  CHECK(m.shortfall().value() > 300e9);
  CHECK(m.max_sequences == 0);
}

TEST_CASE("property: more users never need less memory; max users fit and one more does not") {
  for (const auto& a : models()) {
    const auto& d = find_device("h200");
    CAPTURE(a.id);
    const auto m = plan_memory(a, seed_pr, d, 1, 32768);
    if (!m.weights_fit) continue;
    if (m.max_sequences >= 1) {
      CHECK(plan_memory(a, seed_pr, d, m.max_sequences, 32768).fits);
    }
    CHECK_FALSE(plan_memory(a, seed_pr, d, m.max_sequences + 1, 32768).fits);
  }
}

TEST_CASE("bad plan input names the field") {
  const auto& a = find_model("llama-3.1-8b");
  const auto& d = find_device("h100-sxm");
  CHECK_THROWS_WITH_AS(plan_memory(a, seed_pr, d, 0, 100), "users must be in [1, 1000000000] (got 0)",
                       std::invalid_argument);
  engine_settings e;
  e.memory_utilization = 0;
  CHECK_THROWS_WITH_AS(plan_memory(a, seed_pr, d, 1, 100, e), "engine.memory_utilization must be in (0, 1] (got 0)",
                       std::invalid_argument);
}

TEST_CASE("Apple: the Metal working set is 2/3 of RAM up to 32 GiB, 3/4 above") {
  // 16 GiB M1: 16 x 2/3 = 10.67 GiB (exo PR 1672 reports 10.67 GB on a 16 GB M4);
  // 64 GiB M1 Max: 64 x 3/4 = 48 GiB (llama.cpp issue 1870: 49,152 MiB).
  CHECK(gpu_visible_fraction(find_device("m1-8c")) == doctest::Approx(2.0 / 3.0));
  CHECK(gpu_visible_fraction(find_device("m4-10c")) == doctest::Approx(2.0 / 3.0));   // 32 GiB
  CHECK(gpu_visible_fraction(find_device("m3-pro-18c")) == doctest::Approx(0.75));    // 36 GiB
  CHECK(gpu_visible_fraction(find_device("m1-max-32c")) == doctest::Approx(0.75));
  const memory_plan m = plan_memory(find_model("qwen3-8b"), precision{}, find_device("m1-max-32c"), 1, 4096);
  CHECK(m.device_memory.value() == doctest::Approx(64.0 * gibi));
  CHECK(m.capacity.value() == doctest::Approx(48.0 * gibi));
  // Property: the working set never exceeds the RAM, on every Apple part.
  for (const device& d : devices()) {
    if (d.vendor != "Apple") continue;
    CAPTURE(d.id);
    const double f = gpu_visible_fraction(d);
    CHECK((f > 0.6 && f <= 0.75));
  }
}

TEST_CASE("largest_within: the bisection's answer in a few interpolations") {
  int calls = 0;
  // Affine: 3c + 7 <= 100 up to c = 31 (3 x 31 + 7 = 100).
  const auto affine = [&](double c) { ++calls; return 3 * c + 7; };
  CHECK(detail::largest_within(affine, 100) == 31);
  CHECK(calls <= 5);
  // KV in 16-token blocks of 131,072 B per token (Llama-3.1-8B BF16): 10 GiB =
  // 10,737,418,240 B hold 81,920 tokens = 5,120 blocks exactly.
  calls = 0;
  const auto blocks = [&](double c) { ++calls; return std::ceil(c / 16) * 16 * 131072.0; };
  CHECK(detail::largest_within(blocks, 10737418240.0) == 81920);
  CHECK(calls <= 20);  // bisection over [0, 1e9] takes 32
  CHECK(detail::largest_within(blocks, 10737418240.0 - 1) == 81904);  // one byte short: a block fewer
  // Nothing fits; everything fits.
  CHECK(detail::largest_within([](double c) { return c + 1; }, 0.5) == -1);
  CHECK(detail::largest_within([](double c) { return c; }, 2e9) == 1e9);
  // Property: bisecting the predicate gives the same whole number, for
  // concave, convex, windowed and stepped values.
  const auto bisect = [](const auto& value, double budget) {
    if (!(value(0.0) <= budget)) return -1.0;
    return detail::last_true([&](double c) { return value(c) <= budget; }, 0, 1e9, 1e9, true);
  };
  const auto check_all = [&](const auto& value) {
    for (double budget : {0.0, 1.0, 1e3, 12345.678, 1e6, 7.7e8, 3e9, 1e12}) {
      CAPTURE(budget);
      calls = 0;
      const double found = detail::largest_within(value, budget);
      CHECK(calls <= 64);  // at most two steps per halving of [0, 1e9], and the two ends
      CHECK(found == bisect(value, budget));
    }
  };
  check_all([&](double c) { ++calls; return std::sqrt(c) * 1e3; });
  check_all([&](double c) { ++calls; return c * c * 1e-6; });
  check_all([&](double c) { ++calls; return 40.0 * std::min(c, 4096.0) + 2.0 * c; });  // a sliding window beside global layers
  check_all([&](double c) { ++calls; return 1e4 * std::floor(c / 1e5) + 1e-3 * c; });
}
