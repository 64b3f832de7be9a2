#include <doctest/doctest.h>

#include <cmath>

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

TEST_CASE("closed loop: N users by Little's law, a queue beyond the engine's slots") {
  // Llama-3.3-70B FP8 with an FP8 KV cache on 2 x H100 under TensorRT-LLM, 5000 in / 500 out:
  // the NIM 1.8.0 concurrency sweep (calibration.csv M0698-M0721).
  const architecture& a = find_model("llama-3.3-70b");
  const precision pr = precision::of(find_format("fp8"), find_format("fp8-e4m3"));
  const device& h100 = find_device("h100-sxm");
  const roofline r(h100, default_profile(h100, "tensorrt-llm"));  // as the command builds it for h100-sxm:2
  scenario s;
  s.prompt = 5000;
  s.output = 500;
  s.context = 5500;
  s.engine = configure_engine("tensorrt-llm", h100);
  s.parallel.tp = 2;
  s.parallel.devices_per_node = 2;
  const closed_loop_result one = serve_closed_loop(a, pr, r, s, 1);
  // One user: one request in the engine; Little: 1 = rate x (TTFT + 500 x TPOT).
  CHECK(one.active == doctest::Approx(1));
  CHECK(one.requests_per_s * (one.ttft.value() + 500 * one.tpot.value()) == doctest::Approx(1).epsilon(1e-3));
  CHECK(one.limit == "none");
  CHECK(one.queue_wait.value() == 0);
  // 25 users: every one inside, each step slower, more served in total.
  const closed_loop_result some = serve_closed_loop(a, pr, r, s, 25);
  CHECK(some.active == doctest::Approx(25));
  CHECK(some.tpot > one.tpot);
  CHECK(some.output_tokens_per_s(500) > one.output_tokens_per_s(500));
  // 250 users: the KV cache holds `slots` requests of 5,500 tokens; the rest wait
  // (250 - slots) / rate, and the engine runs as it would with `slots` users.
  const closed_loop_result many = serve_closed_loop(a, pr, r, s, 250);
  REQUIRE(many.slots > 25);
  REQUIRE(many.slots < 250);
  CHECK(many.limit == "memory");
  CHECK(many.active == doctest::Approx(many.slots));
  CHECK(many.queue_wait.value() == doctest::Approx((250 - many.slots) / many.requests_per_s));
  CHECK(many.ttft.value() == doctest::Approx(many.load.ttft.value() + many.queue_wait.value()));
  const closed_loop_result at_slots = serve_closed_loop(a, pr, r, s, many.slots);
  CHECK(at_slots.tpot.value() == doctest::Approx(many.tpot.value()));
  CHECK_THROWS_WITH_AS(serve_closed_loop(a, pr, r, s, 0), "concurrency must be in [1, 1000000] (got 0)",
                       std::invalid_argument);
}

TEST_CASE("property: closed-loop throughput never falls and TTFT never improves as users are added") {
  const architecture& a = find_model("llama-3.1-8b");
  const device& d = find_device("rtx-4090");
  const roofline r(d);
  scenario s;
  s.prompt = 1000;
  s.output = 200;
  s.context = 1200;
  s.engine = configure_engine("vllm", d);
  double last_total = 0;
  double last_ttft = 0;
  for (double n : {1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0}) {
    const closed_loop_result c = serve_closed_loop(a, precision{}, r, s, n);
    CAPTURE(n);
    CHECK(std::isfinite(c.ttft.value()));
    CHECK(c.output_tokens_per_s(200) >= last_total * (1 - 1e-6));
    CHECK(c.ttft.value() >= last_ttft * (1 - 1e-6));
    last_total = c.output_tokens_per_s(200);
    last_ttft = c.ttft.value();
  }
}
