#include <doctest/doctest.h>

#include <stdexcept>

#include "llmroof/memory_plan.hpp"

using namespace llmroof;

namespace {
const precision seed_pr = precision::of(find_format("fp8"), find_format("bf16"));
}

TEST_CASE("seed: four users at 128k do not fit beside the weights") {
  const auto& a = find_model("devstral-small-2-24b");
  const auto m = plan_memory(a, seed_pr, find_device("rtx-pro-6000-blackwell"), 4, 131072);
  // usable 96 GiB x 0.9 = 86.4 GiB; weights ~23.2 GiB; reserve 1 GiB; activations
  // 8192 x (3 x 5120 + 2 x 32768) x 2 B + 256 x 131,072 x 4 B = 1.46 GB.
  CHECK(in_GiB(m.usable) == doctest::Approx(86.4));
  CHECK(in_GiB(m.weights) == doctest::Approx(23.21).epsilon(0.001));
  CHECK(m.activations.value() == doctest::Approx(8192.0 * (3 * 5120 + 2 * 32768) * 2 + 256.0 * 131072 * 4));
  // Each user needs 20 GiB: 80 GiB > ~60.8 GiB budget.
  CHECK(in_GiB(m.kv_needed) == doctest::Approx(80.0));
  CHECK(m.weights_fit);
  CHECK_FALSE(m.fits);
  CHECK(in_GiB(m.shortfall()) == doctest::Approx(80.0 - in_GiB(m.kv_budget)));
  CHECK(m.max_sequences == 3);
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
