// Power, energy per token and cost (energy.hpp), computed by hand.
#include <doctest/doctest.h>

#include "llmroof/llmroof.hpp"

using namespace llmroof;

namespace {

/// A step of `compute`, `memory` and `overhead` seconds of each kind.
phase_timing step_of(double compute, double memory, double overhead, double tokens) {
  phase_timing p;
  p.compute_time = make_seconds(compute);
  p.memory_time = make_seconds(memory);
  p.overhead_time = make_seconds(overhead);
  p.estimate = make_seconds(compute + memory + overhead);
  p.counts.new_tokens = tokens;
  return p;
}

}  // namespace

TEST_CASE("step power lies between idle and TDP by the step's compute- and memory-bound time") {
  const device& h100 = find_device("h100-sxm");
  REQUIRE(h100.tdp_w == 700);
  // Idle: 13% of 700 W = 91 W; the span to the TDP 609 W.
  CHECK(step_power_w(h100, step_of(0, 0, 1, 1)) == doctest::Approx(91));
  // All memory-bound: 91 + 0.52 x 609 = 407.68 W (Splitwise's H100 token phase: 380 W).
  CHECK(step_power_w(h100, step_of(0, 1, 0, 1)) == doctest::Approx(407.68));
  // All compute-bound: the TDP (Splitwise's prompt phase: 700 W).
  CHECK(step_power_w(h100, step_of(1, 0, 0, 1)) == doctest::Approx(700));
  // 2 ms compute, 6 ms memory, 2 ms launch gaps: 91 + 609 x (2 + 0.52 x 6) / 10 = 91 + 609 x 0.512 = 402.81 W.
  CHECK(step_power_w(h100, step_of(2e-3, 6e-3, 2e-3, 1)) == doctest::Approx(402.808));
  // Two pipeline stages: each device works half the step: 91 + 609 x 0.52 / 2 = 249.34 W.
  CHECK(step_power_w(h100, step_of(0, 1, 0, 1), {}, 2) == doctest::Approx(249.34));
  device apple = find_device("m3-max-40c");
  REQUIRE(apple.tdp_w == 0);
  CHECK_THROWS_WITH_AS(step_power_w(apple, step_of(0, 1, 0, 1)),
                       "device 'm3-max-40c' has no power figure: give its TDP (custom:...,tdp=300W)", std::invalid_argument);
}

TEST_CASE("energy per output token and cost per million tokens of a deployment's step") {
  const architecture& a = find_model("llama-3.1-8b");
  const deployment d(a, precision::of(find_format("bf16"), find_format("bf16")), roofline(find_device("h100-sxm")), {parallel_plan{}, {}},
                     configure_engine("vllm", find_device("h100-sxm")));
  // 10 ms of memory-bound step for 32 sequences: 3,200 tokens/s at 407.68 W:
  // 407.68 / 3,200 = 0.1274 J per token; 3,200 / 0.40768 kW = 7,849 tokens/s per kW.
  const phase_timing step = step_of(0, 10e-3, 0, 32);
  price p;
  p.per_device_hour = 2.0;     // USD per H100-hour
  p.electricity_kwh = 0.15;    // USD per kWh
  p.pue = 1.3;
  const energy_cost e = energy_and_cost(d, step, 3200, p);
  CHECK(*e.power_w == doctest::Approx(407.68));
  CHECK(*e.joules_per_token == doctest::Approx(0.1274));
  CHECK(*e.tokens_per_s_per_kw == doctest::Approx(7849.3).epsilon(1e-4));
  // $2 + 0.40768 kW x 1.3 x $0.15 = $2.0795 per hour; 3,200 tokens/s = 11.52 M tokens/h: $0.1805 per million.
  CHECK(*e.cost_per_hour == doctest::Approx(2.07950));
  CHECK(*e.cost_per_million == doctest::Approx(2.0795 / 11.52).epsilon(1e-4));
  // A $30,000 purchase over 3 years: 30,000 / 26,298 h = $1.1408 per hour.
  price bought;
  bought.purchase = 30000;
  CHECK(*energy_and_cost(d, step, 3200, bought).cost_per_hour == doctest::Approx(30000.0 / (3 * 365.25 * 24)));
  // No price: no cost, power still known.
  const energy_cost free = energy_and_cost(d, step, 3200);
  CHECK((!free.cost_per_hour && free.power_w));
  // Property: more tokens from the same step never cost more per token.
  CHECK(*energy_and_cost(d, step, 6400, p).cost_per_million < *e.cost_per_million);
  price both = p;
  both.purchase = 1;
  CHECK_THROWS_WITH_AS(energy_and_cost(d, step, 3200, both),
                       "price_per_hour and purchase are two prices of the same device: give one", std::invalid_argument);
  price bad_pue;
  bad_pue.pue = 0.5;
  bad_pue.electricity_kwh = 0.2;
  CHECK_THROWS_AS(energy_and_cost(d, step, 3200, bad_pue), std::invalid_argument);
  // An option that changes nothing is refused (issue 60): years without a
  // purchase, beside an hourly price, a PUE without electricity.
  price years;
  years.years = 5;
  CHECK_THROWS_WITH_AS(energy_and_cost(d, step, 3200, years),
                       "years amortises a purchase price: give purchase (an hourly price has no years)",
                       std::invalid_argument);
  years.per_device_hour = 2;
  CHECK_THROWS_AS(energy_and_cost(d, step, 3200, years), std::invalid_argument);
  price pue;
  pue.pue = 2;
  CHECK_THROWS_WITH_AS(energy_and_cost(d, step, 3200, pue), "pue scales the electricity price: give electricity",
                       std::invalid_argument);
  // Given with what they scale, they apply: $30,000 over 5 years = 30,000 / 43,830 h = $0.68447/h.
  price five;
  five.purchase = 30000;
  five.years = 5;
  CHECK(*energy_and_cost(d, step, 3200, five).cost_per_hour == doctest::Approx(30000.0 / (5 * 365.25 * 24)));
}

TEST_CASE("a plan's energy is its users' decode step at its context") {
  const deployment d = resolve([] {
    static const architecture a = find_model("llama-3.1-70b");
    static const device h100 = find_device("h100-sxm");
    request q;
    q.model = &a;
    q.dev = &h100;
    q.weights = find_format("fp8");
    q.layout.devices_per_node = 4;
    return q;
  }());
  workload w;
  w.users = 32;
  const plan_result r = plan(d, w);
  const energy_cost e = plan_energy(d, r);
  const phase_timing& step = r.curve.back().all;
  CHECK(e.devices == 4);
  CHECK(e.tokens_per_s == doctest::Approx(32 / step.estimate.value()));
  CHECK(*e.power_w == doctest::Approx(4 * step_power_w(find_device("h100-sxm"), step)));
  CHECK(*e.power_w > 4 * 91);
  CHECK(*e.power_w < 4 * 700);
}

TEST_CASE("a plan's cost divides by the load it serves: price / served output tokens per hour") {
  // Issue 55 item 4. 8 users of Llama-3.1-8B on one H100 at $2.00 per hour in
  // a closed loop (2,048 + 512 tokens): the loop serves R requests/s, so
  // R x 512 output tokens/s and cost per million = 2.00 / (R x 512 x 3600 / 1e6).
  // All 8 decoding at once run faster (8 / step) than the loop, whose steps
  // also carry the prompts: the old figure was optimistic.
  const architecture& a = find_model("llama-3.1-8b");
  const device& h100 = find_device("h100-sxm");
  const deployment d(a, precision::of(find_format("bf16"), find_format("bf16")), roofline(h100), {parallel_plan{}, {}},
                     configure_engine("vllm", h100));
  workload w;
  w.users = 8;
  const plan_result r = plan(d, w);
  price p;
  p.per_device_hour = 2.0;
  const served_load load = serve_load(d, w, std::nullopt, 8.0);
  REQUIRE(load.closed);
  const double served = load.closed->requests_per_s * 512;
  const energy_cost e = plan_energy(d, r, p, &load, 512);
  CHECK(e.basis == "closed loop");
  CHECK(e.fits);
  CHECK(e.tokens_per_s == doctest::Approx(served).epsilon(1e-12));
  CHECK(*e.cost_per_million == doctest::Approx(2.0 / (served * 3600 / 1e6)).epsilon(1e-12));
  CHECK(*e.cost_per_month() == doctest::Approx(2.0 * 730.5).epsilon(1e-12));  // 365.25 x 24 / 12 hours
  const energy_cost all = plan_energy(d, r, p);
  CHECK(all.basis == "decoding");
  CHECK(all.tokens_per_s > e.tokens_per_s);
  CHECK(*all.cost_per_million < *e.cost_per_million);
  // An open loop serves its rate x output; a plan whose users do not fit says so.
  const served_load open = serve_load(d, w, 0.5, std::nullopt);
  REQUIRE(open.open);
  REQUIRE(open.open->stable);
  CHECK(plan_energy(d, r, p, &open, 512).tokens_per_s == doctest::Approx(0.5 * 512).epsilon(1e-12));
  workload many = w;
  many.users = 4000;
  CHECK_FALSE(plan_energy(d, plan(d, many), p).fits);
}

TEST_CASE("input tokens: the prompt's prefill energy and device time, blended over prefix-cache hits") {
  const architecture& a = find_model("llama-3.1-8b");
  const deployment d(a, precision::of(find_format("bf16"), find_format("bf16")), roofline(find_device("h100-sxm")),
                     {parallel_plan{}, {}}, configure_engine("vllm", find_device("h100-sxm")));
  // A miss prefills in 100 ms, a hit in 20 ms, both compute-bound (700 W); 3 of 4 requests hit.
  const phase_timing miss = step_of(0.1, 0, 0, 4096);
  const phase_timing hit = step_of(0.02, 0, 0, 1024);
  price p;
  p.per_device_hour = 2.0;
  p.electricity_kwh = 0.15;
  p.pue = 1.3;
  const energy_cost e = with_prefill_energy(energy_cost{}, d, 4096, miss, &hit, 0.75, p);
  // 0.75 x 700 W x 0.02 s + 0.25 x 700 W x 0.1 s = 10.5 + 17.5 = 28 J per prompt; / 4,096 = 0.0068359 J per token.
  CHECK(*e.joules_per_input_token == doctest::Approx(28.0 / 4096));
  // Device time 0.75 x 0.02 + 0.25 x 0.1 = 0.04 s at $2/h = $2.2222e-5, plus 28 J x 1.3 x $0.15/kWh
  // = $1.5167e-6: $2.37389e-5 per prompt, $0.0057956 per million input tokens.
  CHECK(*e.cost_per_million_input == doctest::Approx(0.0057956).epsilon(1e-4));
  // No hit: the miss alone, 700 W x 0.1 s = 70 J.
  CHECK(*with_prefill_energy(energy_cost{}, d, 4096, miss).joules_per_input_token == doctest::Approx(70.0 / 4096));
  // No price: no cost; no prompt: nothing.
  CHECK_FALSE(with_prefill_energy(energy_cost{}, d, 4096, miss).cost_per_million_input);
  CHECK_FALSE(with_prefill_energy(energy_cost{}, d, 0, miss).joules_per_input_token);
}
