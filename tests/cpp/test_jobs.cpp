// The jobs' typed doors (jobs/plan_job.hpp, jobs/users_job.hpp): one
// request, one answer holding everything its report shows.
#include <doctest/doctest.h>

#include <cmath>

#include "llmroof/llmroof.hpp"

using namespace llmroof;

namespace {

deployment llama_8b_h100() {
  const architecture& a = find_model("llama-3.1-8b");
  const device& h100 = find_device("h100-sxm");
  return deployment(a, precision::of(find_format("bf16"), find_format("bf16")), roofline(h100), {parallel_plan{}, {}},
                    configure_engine("vllm", h100));
}

}  // namespace

TEST_CASE("the plan job's answer is the plan, the load and the energy of its request, computed once") {
  const deployment d = llama_8b_h100();
  plan_request q;
  q.work.users = 8;
  q.work.output = 300;
  q.concurrency = 8;
  q.cost.per_device_hour = 2.0;
  const plan_answer a = answer(d, q);
  const plan_result r = plan(d, q.work);
  const served_load load = serve_load(d, q.work, std::nullopt, 8.0);
  REQUIRE(a.load.closed);
  CHECK(a.result.memory.kv_needed.value() == r.memory.kv_needed.value());
  CHECK(a.result.ttft.estimate.value() == r.ttft.estimate.value());
  CHECK(a.load.closed->requests_per_s == load.closed->requests_per_s);
  // The bill divides by the loop's output: R x 300 tokens/s at $2.00 an hour.
  const double served = load.closed->requests_per_s * 300;
  CHECK(a.energy.basis == "closed loop");
  CHECK(a.energy.tokens_per_s == doctest::Approx(served).epsilon(1e-12));
  CHECK(*a.energy.cost_per_million == doctest::Approx(2.0 / (served * 3600 / 1e6)).epsilon(1e-12));
  CHECK_FALSE(a.pd);
  CHECK_FALSE(a.speculative);
  CHECK_FALSE(a.setup.speculative);
}

TEST_CASE("the plan job applies its request's speculation and P/D question to the deployment it answers for") {
  const deployment d = llama_8b_h100();
  plan_request q;
  q.work.users = 4;
  speculation s;
  s.method = spec_method::ngram;
  s.draft_tokens = 3;
  s.acceptance = {0.6};
  q.spec = s;
  const plan_answer a = answer(d, q);
  REQUIRE(a.setup.speculative);
  REQUIRE(a.speculative);
  // The table at the plan's 4 users, against batch up to 2 x 4 = 8.
  CHECK(a.speculative->batch == 4);
  CHECK(a.speculative->batches.back() == 8);
  plan_request p;
  p.work.users = 4;
  p.pd.emplace();  // every P/D default
  const deployment two = resolve([] {
    static const architecture& m = find_model("llama-3.1-8b");
    static const device& h100 = find_device("h100-sxm");
    request r;
    r.model = &m;
    r.dev = &h100;
    r.layout.devices_per_node = 2;
    return r;
  }());
  const plan_answer split = answer(two, p);
  REQUIRE(split.pd);
  CHECK_FALSE(split.pd->rows.empty());
}

TEST_CASE("a plan request's bad field is named") {
  const deployment d = llama_8b_h100();
  plan_request q;
  q.cost.pue = 1.2;  // without electricity
  CHECK_THROWS_WITH_AS(answer(d, q), "pue scales the electricity price: give electricity", std::invalid_argument);
  plan_request r;
  r.rate = 1;
  r.concurrency = 2;
  CHECK_THROWS_WITH_AS(answer(d, r), "concurrency and rate are two load models; give one", std::invalid_argument);
  plan_request t;
  t.pd.emplace().min_tokens_per_s = 0;  // emplace: GCC 12 -O2 warns (falsely) on the optional's move-assignment
  CHECK_THROWS_AS(answer(d, t), std::invalid_argument);
}

TEST_CASE("the users job's answer: the most users and the energy of their closed loop") {
  const deployment d = llama_8b_h100();
  users_request q;
  q.work.context = 8192;
  q.work.output = 300;
  q.min_tokens_per_s = 20;
  const users_answer a = answer(d, q);
  const users_result u = max_users(d, q.work, make_tokens_per_second(20));
  CHECK(a.result.users == u.users);
  CHECK(a.result.users >= 1);
  CHECK(a.energy.basis == "closed loop");
  CHECK(a.energy.tokens_per_s == doctest::Approx(u.tokens_per_s_total()).epsilon(1e-12));
  // J per request = power / (requests/s) = (power / output tokens/s) x 300
  // tokens: the loop serves R requests/s, each of 300 output tokens.
  REQUIRE(a.joules_per_request);
  CHECK(*a.joules_per_request == doctest::Approx(*a.energy.power_w / u.loop.requests_per_s).epsilon(1e-9));
  CHECK(*a.joules_per_request == doctest::Approx(*a.energy.joules_per_token * 300).epsilon(1e-12));
  // A target nobody meets: no users, and no energy drawn for them.
  users_request none = q;
  none.min_tokens_per_s = 1e6;
  const users_answer z = answer(d, none);
  CHECK(z.result.users == 0);
  CHECK(z.energy.tokens_per_s == 0);
  CHECK_FALSE(z.joules_per_request);
}
