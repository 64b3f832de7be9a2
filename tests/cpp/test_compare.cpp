#include <doctest/doctest.h>

#include <cmath>

#include "llmroof/serving.hpp"

using namespace llmroof;

TEST_CASE("DeepSeek-V3: 671B total and 37B active at the published precision") {
  const auto p = count_parameters(find_model("deepseek-v3"));
  CHECK(p.total() / 1e9 == doctest::Approx(671).epsilon(0.001));
  // 36.63B rounds to the published 37B; the relative gap is 1.0%.
  CHECK(std::round(p.active() / 1e9) == 37);
  CHECK(p.active() / 1e9 == doctest::Approx(37).epsilon(0.0135));
}

TEST_CASE("GLM-4.5-Air beats Devstral-Small-2 at batch 1 in AWQ on an RTX Pro 6000, then stops") {
  const precision awq = precision::of(find_format("awq-int4"), find_format("bf16"));
  const roofline r(find_device("rtx-pro-6000-blackwell"));
  const model_comparison c = compare_decode(find_model("glm-4.5-air"), awq, find_model("devstral-small-2-24b"), awq, r, 4096);
  CHECK(c.first[0].estimate < c.second[0].estimate);  // batch 1: GLM faster
  REQUIRE(c.speed_crossover);
  CHECK(*c.speed_crossover > 1);
  CHECK(*c.speed_crossover < 64);
  // Just before the crossover GLM is faster, at it Devstral is as fast or faster.
  const double x = *c.speed_crossover;
  CHECK(decode_step(find_model("glm-4.5-air"), awq, r, x - 1, 4096).estimate <
        decode_step(find_model("devstral-small-2-24b"), awq, r, x - 1, 4096).estimate);
  CHECK(decode_step(find_model("glm-4.5-air"), awq, r, x, 4096).estimate >=
        decode_step(find_model("devstral-small-2-24b"), awq, r, x, 4096).estimate);
}

TEST_CASE("GLM-4.5-Air in FP8 does not fit one RTX Pro 6000") {
  const precision fp8 = precision::of(find_format("fp8"), find_format("bf16"));
  const memory_plan m = plan_memory(find_model("glm-4.5-air"), fp8, find_device("rtx-pro-6000-blackwell"), 1, 4096);
  CHECK_FALSE(m.weights_fit);
  // 106.85B params, mostly at 8 bits: ~100.7 GiB of weights against 86.4 GiB usable.
  CHECK(in_GiB(m.weights) == doctest::Approx(100.7).epsilon(0.005));
  CHECK(m.shortfall().value() > 15 * gibi);
}

TEST_CASE("the dense equivalent has the MoE model's total, and the MoE advantage fades with batch") {
  const architecture& moe = find_model("qwen3-30b-a3b");
  const architecture dense = dense_equivalent(moe, true);
  CHECK(count_parameters(dense).total() == doctest::Approx(count_parameters(moe).total()).epsilon(1e-4));
  CHECK_FALSE(dense.is_moe());
  const architecture small = dense_equivalent(moe, false);
  CHECK(count_parameters(small).total() == doctest::Approx(count_parameters(moe).active_with_embedding()).epsilon(1e-3));
  const precision pr;
  const double w1 = count_decode(moe, pr, 1, 0).weight_bytes().value() / count_decode(dense, pr, 1, 0).weight_bytes().value();
  const double w512 = count_decode(moe, pr, 512, 0).weight_bytes().value() / count_decode(dense, pr, 512, 0).weight_bytes().value();
  CHECK(w1 < 0.15);   // batch 1 reads about the active share
  CHECK(w512 > 0.99); // batch 512 touches every expert
}
