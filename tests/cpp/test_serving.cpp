#include <doctest/doctest.h>

#include "llmroof/serving.hpp"

using namespace llmroof;

TEST_CASE("seed plan: curve from an empty context to 128k, fits flags and TTFT") {
  scenario s;
  s.users = 4;
  s.context = 131072;
  const auto p = plan(find_model("devstral-small-2-24b"), precision::of(find_format("fp8"), find_format("bf16")),
                      roofline(find_device("rtx-pro-6000-blackwell")), s);
  REQUIRE(p.curve.size() >= 3);
  CHECK(p.curve.front().context == 0);
  CHECK(p.curve.back().context == 131072);
  CHECK(p.curve.front().fits);
  CHECK_FALSE(p.curve.back().fits);
  CHECK(p.curve.front().single.tokens_per_s_estimate().value() == doctest::Approx(50).epsilon(0.05));
  CHECK(p.ttft.estimate.value() > 0);
  CHECK(p.prompt == 2048);
}

TEST_CASE("property: per-user tokens/s never rise with more users; total never falls") {
  const auto& a = find_model("llama-3.1-8b");
  const roofline r(find_device("h100-sxm"));
  double prev_user = 1e30;
  double prev_total = 0;
  for (double n = 1; n <= 256; n *= 2) {
    const auto step = decode_step(a, precision{}, r, n, 1024);
    const double per_user = 1.0 / step.estimate.value();
    const double total = n / step.estimate.value();
    CHECK(per_user <= prev_user);
    CHECK(total >= prev_total);
    prev_user = per_user;
    prev_total = total;
  }
}
