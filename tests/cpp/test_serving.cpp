#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "llmroof/search/compare.hpp"
#include "llmroof/serving/serving.hpp"
#include "llmroof/engine/engine_profile.hpp"
#include "setup.hpp"

using namespace llmroof;
using llmroof::test::on;

TEST_CASE("seed plan: curve from an empty context to 128k, fits flags and TTFT") {
  workload s;
  s.users = 4;
  s.context = 131072;
  const auto p = plan(deployment(find_model("devstral-small-2-24b"), precision::of(find_format("fp8"), find_format("bf16")),
                                 roofline(find_device("rtx-pro-6000-blackwell"))),
                      s);
  REQUIRE(p.curve.size() >= 3);
  CHECK(p.curve.front().context == 0);
  CHECK(p.curve.back().context == 131072);
  CHECK(p.curve.front().fits);
  CHECK_FALSE(p.curve.back().fits);
  CHECK(p.curve.front().single.tokens_per_s_estimate().value() == doctest::Approx(50).epsilon(0.05));
  CHECK(p.ttft.estimate.value() > 0);
  CHECK(p.prompt == 2048);
}

TEST_CASE("deployment memory: the plan's memory alone, and offloaded weights leave the device") {
  const auto [a, pr, r] = on("devstral-small-2-24b", "rtx-pro-6000-blackwell", "fp8");
  const deployment d(a, pr, r);
  workload s;
  s.users = 4;
  s.context = 131072;
  const memory_plan m = d.memory(s.users, s.context);
  // bf16 KV: 40 layers x 8 KV heads x 128 x 2 (K and V) x 2 B = 163,840 B per token.
  CHECK(m.kv_per_token.value() == 163840);
  const memory_plan in_plan = plan(d, s).memory;
  CHECK(m.kv_budget == in_plan.kv_budget);
  CHECK(m.max_context == in_plan.max_context);
  CHECK(m.fits == in_plan.fits);
  // Half the layers in host RAM: the device holds fewer weight bytes.
  offload_plan half;
  half.layers = 0.5;
  const deployment off = d.with_offload(half);
  CHECK(off.memory(s.users, s.context).weights < m.weights);
  // Half of the 24.0B weights in fp8 stay on the host: the device holds the rest.
  CHECK((m.weights - off.memory(s.users, s.context).weights).value() ==
        doctest::Approx(host_weight_bytes(a, pr, half).value()));
  workload none = s;
  none.users = 0;
  CHECK_THROWS_AS(plan(d, none), std::invalid_argument);
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
  parallel_plan tp2;
  tp2.tp = 2;
  tp2.devices_per_node = 2;
  const deployment dep(a, pr, r, {tp2, std::nullopt}, configure_engine("tensorrt-llm", h100));
  workload s;
  s.prompt = 5000;
  s.output = 500;
  s.context = 5500;
  const closed_loop_result one = serve_closed_loop(dep, s, 1);
  // One user: one request in the engine; Little: 1 = rate x (TTFT + 500 x TPOT).
  CHECK(one.active == doctest::Approx(1));
  CHECK(one.requests_per_s * (one.ttft.value() + 500 * one.tpot.value()) == doctest::Approx(1).epsilon(1e-3));
  CHECK(one.limit == serving_limit::none);
  CHECK(one.queue_wait.value() == 0);
  // 25 users: every one inside, each step slower, more served in total.
  const closed_loop_result some = serve_closed_loop(dep, s, 25);
  CHECK(some.active == doctest::Approx(25));
  CHECK(some.tpot > one.tpot);
  CHECK(some.output_tokens_per_s(500) > one.output_tokens_per_s(500));
  // 250 users: the KV cache holds `slots` requests of 5,500 tokens; the rest wait
  // (250 - slots) / rate, and the engine runs as it would with `slots` users.
  const closed_loop_result many = serve_closed_loop(dep, s, 250);
  REQUIRE(many.slots > 25);
  REQUIRE(many.slots < 250);
  CHECK(many.limit == serving_limit::kv_cache);
  CHECK(many.active == doctest::Approx(many.slots));
  CHECK(many.queue_wait.value() == doctest::Approx((250 - many.slots) / many.requests_per_s));
  CHECK(many.ttft.value() == doctest::Approx(many.load.ttft.value() + many.queue_wait.value()));
  const closed_loop_result at_slots = serve_closed_loop(dep, s, many.slots);
  CHECK(at_slots.tpot.value() == doctest::Approx(many.tpot.value()));
  CHECK_THROWS_WITH_AS(serve_closed_loop(dep, s, 0), "concurrency must be in [1, 1000000] (got 0)",
                       std::invalid_argument);
}

TEST_CASE("property: closed-loop throughput never falls and TTFT never improves as users are added") {
  const architecture& a = find_model("llama-3.1-8b");
  const device& d = find_device("rtx-4090");
  const deployment dep(a, precision{}, roofline(d), {}, configure_engine("vllm", d));
  workload s;
  s.prompt = 1000;
  s.output = 200;
  s.context = 1200;
  double last_total = 0;
  double last_ttft = 0;
  for (double n : {1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0}) {
    const closed_loop_result c = serve_closed_loop(dep, s, n);
    CAPTURE(n);
    CHECK(std::isfinite(c.ttft.value()));
    CHECK(c.output_tokens_per_s(200) >= last_total * (1 - 1e-6));
    CHECK(c.ttft.value() >= last_ttft * (1 - 1e-6));
    last_total = c.output_tokens_per_s(200);
    last_ttft = c.ttft.value();
  }
}

namespace {
// Llama-3.1-8B BF16 on one H100 (class-default profile), 2,000 in / 200 out,
// vLLM. Prefill and decode are hand-checked in test_phases/test_roofline; here
// their values are inputs: S = 42.6960 ms (prefill of 2,000 tokens), step(1)
// = 7.21589 ms at the mean context 2,100.
struct served {
  const architecture& a = find_model("llama-3.1-8b");
  const device& d = find_device("h100-sxm");
  roofline r{d};
  deployment dep{a, precision{}, r, {}, configure_engine("vllm", d)};
  workload s;
  served() {
    s.prompt = 2000;
    s.output = 200;
    s.context = 2200;
  }
};
}  // namespace

TEST_CASE("overhead: one closed-loop user pays the request handling and its own prefill, nothing else") {
  served x;
  const double S = x.dep.prefill(2000).estimate.value();
  const double step = x.dep.decode(1, 2100).estimate.value();
  REQUIRE(S == doctest::Approx(42.6960e-3).epsilon(1e-5));
  REQUIRE(step == doctest::Approx(7.21589e-3).epsilon(1e-5));
  REQUIRE(x.r.efficiency().per_request.value() == 5e-3);  // the class default (src/engine/profiles.cpp)
  const closed_loop_result one = serve_closed_loop(x.dep, x.s, 1);
  // TTFT = 5 ms + 42.6960 ms = 47.6960 ms: no queue, no step to wait for.
  CHECK(one.ttft.value() == doctest::Approx(47.6960e-3).epsilon(1e-5));
  // TPOT = step(1) = 7.21589 ms: its own prefill came before its decode.
  CHECK(one.tpot.value() == doctest::Approx(7.21589e-3).epsilon(1e-5));
  // 1 / (47.6960 ms + 199 x 7.21589 ms) = 1 / 1.483658 s = 0.674010 requests/s
  // (200 output tokens: the prefill samples the first, 199 decode steps follow).
  CHECK(one.requests_per_s == doctest::Approx(0.674010).epsilon(1e-5));
  // Without request handling TTFT is the prefill alone.
  efficiency_profile bare = x.r.efficiency();
  bare.per_request = make_seconds(0);
  CHECK(serve_closed_loop(x.dep.with_efficiency(bare), x.s, 1).ttft.value() == doctest::Approx(S));
}

TEST_CASE("overhead: an open-loop arrival queues behind prefills (M/D/1) and half the running step; chunks ride with decodes") {
  served x;
  const load_result l = serve_at_rate(x.dep, x.s, 2.0);
  REQUIRE(l.stable);
  const double step = x.dep.decode(l.users, 2100).estimate.value();
  // 2 requests/s x 42.6960 ms: rho = 0.0853920 of the device in prefill.
  CHECK(l.prefill_share == doctest::Approx(0.0853920).epsilon(1e-5));
  // Little's law settles at 3.32268 users, 2 x (TTFT + 199 x TPOT) with the
  // times below; step 7.51345 ms.
  CHECK(l.users == doctest::Approx(3.32268).epsilon(1e-5));
  CHECK(step == doctest::Approx(7.51345e-3).epsilon(1e-5));
  // Chunked prefill: the 2,000-token prompts are one chunk each (budget
  // 8,192), 2 mixed steps per second of max(42.6960, 7.51345) ms each, the
  // rest pure decode steps: TPOT = 1 / (2 + (1 - 2 x 0.0426960) / 0.00751345)
  // = 1 / (2 + 121.729) = 8.08215 ms (prefill-first would be 7.51345 /
  // (1 - 0.0853920) = 8.21500 ms).
  CHECK(l.tpot.value() == doctest::Approx(8.08215e-3).epsilon(1e-5));
  // Wait = 0.0853920 x 42.6960 / (2 x 0.914608) + 7.51345 / 2
  //      = 1.99317 + 3.75673 = 5.74990 ms.
  CHECK(l.ttft_wait.value() == doctest::Approx(5.74990e-3).epsilon(1e-5));
  // TTFT = 5 + 5.74990 + 42.6960 + 1 chunk x 7.51345 x 3.32268 / 8192 (0.00305)
  //      = 53.4489 ms.
  CHECK(l.ttft.value() == doctest::Approx(53.4489e-3).epsilon(1e-5));
  // Chunks of 1,000 tokens: two mixed steps of 21.3480 ms per prompt, the same
  // share of the device in mixed steps, more steps per second, a faster TPOT.
  deployment small = x.dep;
  small.engine.max_batched_tokens = 1000;
  CHECK(serve_at_rate(small, x.s, 2.0).tpot < l.tpot);
}

TEST_CASE("open loop: the users reported are a fixed point of Little's law, found in few steps or none") {
  served x;
  const double S = x.dep.prefill(2000).estimate.value();
  for (double rate : {0.5, 2.0, 5.0, 10.0, 20.0}) {
    CAPTURE(rate);
    const load_result l = serve_at_rate(x.dep, x.s, rate);
    REQUIRE(l.keeps_up);
    // N = rate x (TTFT(N) + 199 x TPOT(N)): the times belong to the users
    // reported (0.5/s holds 0.76 on average, a step still runs one sequence).
    const double little = rate * (l.ttft.value() + 199 * l.tpot.value());
    CHECK(l.users == doctest::Approx(little).epsilon(1e-12));
    // The output the arrivals ask for, no more: rate x 200 tokens/s.
    CHECK(l.tokens_per_s_total().value() == doctest::Approx(rate * 200).epsilon(1e-12));
    CHECK(l.decoding <= l.users);
    const load_result again = serve_at_rate(x.dep, x.s, rate);
    CHECK(again.users == l.users);  // deterministic
  }
  // Past rate x S = 1 the prefills alone take the whole device: no fixed point.
  const load_result over = serve_at_rate(x.dep, x.s, 1.01 / S);
  CHECK_FALSE(over.keeps_up);
  CHECK_FALSE(over.stable);
}

TEST_CASE("open loop: the fixed point search never passes the smallest fixed point, so stability falls once with rate") {
  // A found case: Llama-3.1-8B on an MI300X at 0.69 / S requests/s (S the
  // 2,048-token prefill) settles at 362.3 users (303.0 before a mixed step
  // added its decode's and its chunk's compute, 303.9 before a request's first
  // token came from its prefill, 327.4 before kernel launches were priced); an
  // unguarded extrapolation
  // jumped past that fixed point, cycled, and called the load unstable.
  const precision awq = precision::of(find_format("awq-int4"), find_format("bf16"));
  for (const char* dev : {"mi300x", "rtx-4090", "a100-80gb-sxm"}) {
    for (const auto& [model, pr] : {std::pair{"llama-3.1-8b", precision{}}, std::pair{"qwen3-8b", precision{}},
                                    std::pair{"qwen3-30b-a3b", awq}}) {
      CAPTURE(dev);
      CAPTURE(model);
      const architecture& a = find_model(model);
      const device& d = find_device(dev);
      const deployment dep(a, pr, roofline(d, default_profile(d, "vllm")), {}, configure_engine("vllm", d));
      const workload s;
      const double S = dep.prefill(s.prompt_tokens()).estimate.value();
      bool was_stable = true;
      double users = 0;
      for (int i = 0; i <= 200; ++i) {
        const double rate = (0.40 + 0.45 * i / 200) / S;
        const load_result l = serve_at_rate(dep, s, rate);
        CAPTURE(rate * S);
        if (was_stable && l.keeps_up) {
          // More arrivals, more users inside (Little's law with slower steps).
          CHECK(l.users >= users);
          users = l.users;
        } else if (!was_stable) {
          CHECK_FALSE(l.keeps_up);  // once the engine falls behind, faster arrivals do not help
        }
        was_stable = was_stable && l.keeps_up;
      }
    }
  }
  const architecture& a = find_model("llama-3.1-8b");
  const device& d = find_device("mi300x");
  const deployment dep(a, precision{}, roofline(d, default_profile(d, "vllm")), {}, configure_engine("vllm", d));
  const double S = dep.prefill(2048).estimate.value();
  workload one;
  one.context = 2048 + 512;  // each request a conversation of its own (no earlier turns)
  const load_result l = serve_at_rate(dep, one, 0.69 / S);
  CHECK(l.stable);
  CHECK(l.users == doctest::Approx(362.253).epsilon(1e-4));
}

TEST_CASE("saturation: the most a deployment serves and what binds") {
  served x;
  // 190 requests of 2,200 tokens fill the KV cache before the engine saturates.
  const saturation_result kv = saturation(x.dep, x.s);
  CHECK(kv.limit == serving_limit::kv_cache);
  CHECK(kv.users == doctest::Approx(kv.at.slots));
  CHECK(kv.output_tokens_per_s == doctest::Approx(200 * kv.requests_per_s));
  // It is the closed loop at the engine's slots, and more users add nothing.
  const closed_loop_result more = serve_closed_loop(x.dep, x.s, 2 * kv.at.slots);
  CHECK(more.requests_per_s == doctest::Approx(kv.requests_per_s));
  // max_num_seqs 4 binds first.
  deployment four = x.dep;
  four.engine.max_sequences = 4;
  CHECK(saturation(four, x.s).limit == serving_limit::max_num_seqs);
  // 32k-token prompts with one output token: prefill fills the device long
  // before the KV cache (each prefill alone takes most of a second).
  workload longp = x.s;
  longp.prompt = 32000;
  longp.output = 1;
  longp.context = 32001;
  const saturation_result pre = saturation(x.dep, longp);
  CHECK(pre.limit == serving_limit::prefill);
  CHECK(pre.users < pre.at.slots);
}

TEST_CASE("users in a loop: the plan's users when no load model is given, max_users' answer as a loop") {
  served x;
  workload s = x.s;
  s.users = 4;
  CHECK(loop_concurrency(s, std::nullopt, false) == 4.0);   // the seed: four users in a loop
  CHECK(!loop_concurrency(s, std::nullopt, true));          // an open-loop rate instead
  CHECK(loop_concurrency(s, 9.0, false) == 9.0);            // asked for
  s.users = 1;
  CHECK(!loop_concurrency(s, std::nullopt, false));         // one user: the plan's own TTFT and curve
  const users_result u = max_users(x.dep, x.s, make_tokens_per_second(20));
  REQUIRE(u.users > 1);
  const closed_loop_result loop = serve_closed_loop(x.dep, x.s, u.users);
  CHECK(u.loop.concurrency == u.users);
  CHECK(u.loop.ttft.value() == loop.ttft.value());
  CHECK(u.loop.tpot.value() == loop.tpot.value());
  CHECK(max_users(x.dep, x.s, make_tokens_per_second(1e6)).loop.concurrency == 0);
}

TEST_CASE("users answers one number: the headline is its closed loop, which meets the targets") {
  struct ask {
    const char* model;
    const char* dev;
    int devices;
    const char* engine;
    const char* weights;
    double prompt, output, tps;
  };
  // The DeepSeek-V3 case (8k in, 1k out, 20 t/s), a dense model, a small MoE.
  for (const ask& c : {ask{"deepseek-v3", "h200", 8, "sglang", "fp8", 8192, 1024, 20},
                       ask{"llama-3.1-70b", "h100-sxm", 4, "vllm", "fp8", 2048, 512, 30},
                       ask{"qwen3-30b-a3b", "rtx-4090", 1, "llama.cpp", "q4_k_m", 1024, 256, 10}}) {
    CAPTURE(c.model);
    request q;
    q.model = &find_model(c.model);
    q.dev = &find_device(c.dev);
    q.layout.devices_per_node = c.devices;
    q.engine = c.engine;
    q.weights = find_format(c.weights);
    const deployment d = resolve(q);
    workload w;
    w.prompt = c.prompt;
    w.output = c.output;
    w.context = c.prompt + c.output;
    const users_result u = max_users(d, w, make_tokens_per_second(c.tps));
    REQUIRE(u.users >= 1);
    const closed_loop_result loop = serve_closed_loop(d, w, u.users);
    CHECK(u.tokens_per_s_per_user() == loop.tokens_per_s_per_user().value());
    CHECK(u.tokens_per_s_per_user() >= c.tps);
    CHECK(u.ttft.value() == loop.ttft.value());
    CHECK(u.tokens_per_s_total() == doctest::Approx(loop.output_tokens_per_s(c.output)));
    CHECK(loop.active == u.users);  // every user inside the engine
    // The curve's point at the answer is the same loop.
    bool found = false;
    for (const users_point& p : u.curve) {
      if (p.users != u.users) continue;
      found = true;
      CHECK(p.tokens_per_s_per_user() == u.tokens_per_s_per_user());
    }
    CHECK(found);
    CHECK(u.limit != serving_limit::none);
  }
}

TEST_CASE("served load: one load model at a time, saturation beside it, nothing without load") {
  served x;
  const served_load open = serve_load(x.dep, x.s, 2.0, std::nullopt);
  REQUIRE(open.open);
  CHECK(!open.closed);
  CHECK(open.open->ttft.value() == serve_at_rate(x.dep, x.s, 2.0).ttft.value());
  CHECK(open.max_rate == max_rate(x.dep, x.s));
  CHECK(open.max_rate_at_target == max_rate(x.dep, x.s, make_seconds(1)));
  REQUIRE(open.most);
  CHECK(open.most->requests_per_s == saturation(x.dep, x.s).requests_per_s);
  const served_load loop = serve_load(x.dep, x.s, std::nullopt, 8.0);
  REQUIRE(loop.closed);
  CHECK(loop.closed->tpot.value() == serve_closed_loop(x.dep, x.s, 8).tpot.value());
  CHECK(loop.most);
  const served_load none = serve_load(x.dep, x.s, std::nullopt, std::nullopt);  // one user
  CHECK((!none.open && !none.closed && !none.most));
  CHECK_THROWS_WITH_AS(serve_load(x.dep, x.s, 1.0, 4.0), "concurrency and rate are two load models; give one",
                       std::invalid_argument);
}

TEST_CASE("one search: the last value where a monotone predicate holds") {
  // sqrt(2) = 1.41421 by bisection after bracketing [1, 2].
  CHECK(detail::last_true([](double x) { return x * x <= 2; }, 0, 1, 10, false) == doctest::Approx(1.41421356).epsilon(1e-9));
  CHECK(detail::last_true([](double n) { return n <= 37; }, 1, 2, 1e6, true) == 37);
  CHECK(detail::last_true([](double) { return true; }, 1, 2, 1e6, true) == 1e6);  // holds at the limit
  CHECK(detail::last_true([](double n) { return n < 2; }, 1, 2, 1e6, true) == 1);
  // The first batch where a predicate turns true, none when it never does up to the limit.
  CHECK(detail::first_batch([](double b) { return b >= 13; }, 64) == 13.0);
  CHECK(!detail::first_batch([](double b) { return b >= 100; }, 64));
  CHECK(detail::first_batch([](double b) { return b >= 64; }, 64) == 64.0);
}

TEST_CASE("a workload's prompt fits in its context, and 1 user reads as one") {
  workload w;
  w.context = 4096;
  w.prompt = 4096;
  CHECK_NOTHROW(validate(w));
  w.prompt = 8192;
  CHECK_THROWS_WITH_AS(validate(w), "prompt must be <= the context (4096 tokens) (got 8192)", std::invalid_argument);
  w.prompt = 0;  // the default: min(context, 2048)
  w.context = 1000;
  CHECK(w.prompt_tokens() == 1000);
  CHECK_NOTHROW(validate(w));
}

// Lockstep (identical requests started together): the engine's steps,
// simulated cohort by cohort, checked by hand against the deployment's own
// prefill and decode times.
namespace {
struct lockstep_case {
  deployment dep;
  workload s;
};
lockstep_case small_lockstep(double budget, double prompt, double output) {
  const device& d = find_device("rtx-4090");
  engine_settings e = configure_engine("vllm", d);
  e.max_batched_tokens = budget;
  workload s;
  s.prompt = prompt;
  s.output = output;
  s.context = prompt + output;
  s.arrivals = arrival_pattern::lockstep;
  return {deployment(find_model("llama-3.1-8b"), precision{}, roofline(d), {}, e), s};
}
}  // namespace

TEST_CASE("lockstep: a wave that fits one step is prefilled together and comes back together") {
  // 4 users, 100-token prompts, 3 output tokens, a 2048-token budget: the
  // engine waits h for the four, prefills all 400 tokens in one step of
  // tau = prefill(100 tokens, batch 4), which yields each its first token;
  // two decode steps of 4 follow (timed as one run at the mean context
  // 100 + 1 + (2 - 1) / 2 = 101.5), the four finish together and send again.
  const auto [dep, s] = small_lockstep(2048, 100, 3);
  const double h = dep.efficiency().per_request.value();
  const double tau = dep.prefill(100, 0, 4).estimate.value();
  const double delta = dep.decode(4, 101.5).estimate.value();
  const closed_loop_result c = serve_closed_loop(dep, s, 4);
  CHECK(c.arrivals == arrival_pattern::lockstep);
  CHECK(c.ttft.value() == doctest::Approx(h + tau).epsilon(1e-12));
  CHECK(c.first_wave_ttft.value() == doctest::Approx(h + tau).epsilon(1e-12));
  CHECK(c.tpot.value() == doctest::Approx(delta).epsilon(1e-12));  // 2 delta over 3 - 1 tokens
  CHECK(c.requests_per_s == doctest::Approx(4 / (h + tau + 2 * delta)).epsilon(1e-9));
  CHECK(c.queue_wait.value() == 0);
  // The mixed loop's new request meets the others at random points instead:
  // its prompt is prefilled alone, so its TTFT is shorter than the cohort's.
  workload mixed = s;
  mixed.arrivals = arrival_pattern::mixed;
  const closed_loop_result m = serve_closed_loop(dep, mixed, 4);
  CHECK(m.arrivals == arrival_pattern::mixed);
  CHECK(m.first_wave_ttft.value() == 0);
  CHECK(m.ttft < c.ttft);
}

TEST_CASE("lockstep: the token budget splits a wave, first come first prefilled") {
  // 4 users, 100-token prompts, 2 output tokens, a 250-token budget.
  // Step 1 (at h): 250 tokens: two whole prompts and 50 of the third, as one
  //   batch of 3 chunks of 250 / 3 = 83 tokens: tau1 = prefill(83, 0, 3). The
  //   two whole ones get their first token at h + tau1.
  // Step 2: the two decode (budget 250 - 2 = 248), then the third's last 50
  //   and the fourth's 100: 2 chunks of 75 tokens after 25 cached on average,
  //   tau2 = prefill(75, 25, 2), the step max(decode(2, 101), tau2); the first
  //   two finish, the last two get their first token.
  // First wave's mean TTFT = h + tau1 + step2 / 2.
  const auto [dep, s] = small_lockstep(250, 100, 2);
  const double h = dep.efficiency().per_request.value();
  const double tau1 = dep.prefill(83, 0, 3).estimate.value();
  const phase_timing decode2 = dep.decode(2, 101), chunk2 = dep.prefill(75, 25, 2);
  const double step2 = std::max({decode2.estimate.value(), chunk2.estimate.value(),
                                 decode2.compute_time.value() + chunk2.compute_time.value()});
  const closed_loop_result c = serve_closed_loop(dep, s, 4);
  CHECK(c.first_wave_ttft.value() == doctest::Approx(h + tau1 + step2 / 2).epsilon(1e-12));
  CHECK(c.ttft.value() > 0);
}

TEST_CASE("lockstep: a prefill-first engine (SGLang) runs prompts in steps of their own and keeps the wave together") {
  // The budget-split case above with mixed_prefill off. 4 users, 100-token
  // prompts, 2 output tokens, a 250-token budget:
  // Step 1 (at h): the same 250 tokens, tau1 = prefill(83, 0, 3); the first
  //   two get their first token at h + tau1.
  // Step 2: prompts wait, so the step is theirs alone: the third's last 50
  //   and the fourth's 100, tau2 = prefill(75, 25, 2); the two first ones do
  //   not decode (their second token waits), the last two get their first
  //   token at h + tau1 + tau2.
  // Step 3: one decode step of 4 at the mean context 101: all four finish
  //   together, so every later wave repeats the first.
  // TTFT = h + tau1 + tau2 / 2; TPOT (last - first) / 1: (tau2 + delta) for
  //   the first two, delta for the last two: delta + tau2 / 2.
  auto [dep, s] = small_lockstep(250, 100, 2);
  engine_settings e = dep.engine;
  e.mixed_prefill = false;
  dep = deployment(find_model("llama-3.1-8b"), precision{}, roofline(find_device("rtx-4090")), {}, e);
  const double h = dep.efficiency().per_request.value();
  const double tau1 = dep.prefill(83, 0, 3).estimate.value();
  const double tau2 = dep.prefill(75, 25, 2).estimate.value();
  const double delta = dep.decode(4, 101).estimate.value();
  const closed_loop_result c = serve_closed_loop(dep, s, 4);
  CHECK(c.first_wave_ttft.value() == doctest::Approx(h + tau1 + tau2 / 2).epsilon(1e-12));
  CHECK(c.ttft.value() == doctest::Approx(h + tau1 + tau2 / 2).epsilon(1e-12));
  CHECK(c.tpot.value() == doctest::Approx(delta + tau2 / 2).epsilon(1e-12));
  CHECK(c.requests_per_s == doctest::Approx(4 / (h + tau1 + tau2 + delta)).epsilon(1e-9));
  // SGLang's own settings say so; vLLM's and TensorRT-LLM's mix.
  CHECK_FALSE(configure_engine("sglang", find_device("h100-sxm")).mixed_prefill);
  CHECK(configure_engine("vllm", find_device("h100-sxm")).mixed_prefill);
  CHECK(configure_engine("tensorrt-llm", find_device("h100-sxm")).mixed_prefill);
}

TEST_CASE("lockstep: under a prefill-first engine, users who start together wait for the whole wave's prompts") {
  // Property: a mixed-step engine lets a synchronised wave drift apart (its
  // settled TTFT falls below the first wave's); a prefill-first one keeps it
  // together (the settled TTFT equals the first wave's), for any wave size.
  for (const double users : {8.0, 16.0, 32.0}) {
    auto [dep, s] = small_lockstep(2048, 1000, 64);
    const closed_loop_result mixed = serve_closed_loop(dep, s, users);
    engine_settings e = dep.engine;
    e.mixed_prefill = false;
    dep = deployment(find_model("llama-3.1-8b"), precision{}, roofline(find_device("rtx-4090")), {}, e);
    const closed_loop_result first = serve_closed_loop(dep, s, users);
    CAPTURE(users);
    CHECK(mixed.ttft < mixed.first_wave_ttft);
    CHECK(first.ttft.value() == doctest::Approx(first.first_wave_ttft.value()).epsilon(1e-9));
    CHECK(first.ttft > mixed.ttft);
  }
}

TEST_CASE("lockstep: one user is the mixed loop's one user; beyond the slots requests queue") {
  const auto [dep, s] = small_lockstep(2048, 1000, 200);
  workload mixed = s;
  mixed.arrivals = arrival_pattern::mixed;
  // One user meets nobody: TTFT = h + prefill(1000), TPOT = step(1) at 1000 + 200 / 2.
  const closed_loop_result one = serve_closed_loop(dep, s, 1);
  const closed_loop_result alone = serve_closed_loop(dep, mixed, 1);
  CHECK(one.ttft.value() == doctest::Approx(alone.ttft.value()).epsilon(1e-12));
  CHECK(one.tpot.value() == doctest::Approx(alone.tpot.value()).epsilon(1e-12));
  // More users than the engine holds: the engine runs its slots' cohort and the
  // rest wait (N - slots) / rate (Little's law), their handling done meanwhile.
  const engine_slots held = slots_for(dep, s);
  REQUIRE(held.slots > 1);
  REQUIRE(held.slots < 200);
  const closed_loop_result many = serve_closed_loop(dep, s, 200);
  CHECK(many.active == doctest::Approx(held.slots));
  CHECK(many.limit == held.limit);
  CHECK(many.queue_wait.value() == doctest::Approx((200 - held.slots) / many.requests_per_s).epsilon(1e-12));
  CHECK(many.ttft.value() == doctest::Approx(many.load.ttft.value() + many.queue_wait.value()).epsilon(1e-12));
}

// A burst: every request sent at once, the engine's steps simulated.
namespace {
// small_lockstep's deployment with the server's handling `h` s per request
// and at most `slots` sequences at once.
deployment burst_deployment(double h, double slots) {
  const device& d = find_device("rtx-4090");
  engine_settings e = configure_engine("vllm", d);
  e.max_batched_tokens = 2048;
  e.max_sequences = slots;
  efficiency_profile eff = default_profile(d);
  eff.per_request = make_seconds(h);
  return deployment(find_model("llama-3.1-8b"), precision{}, roofline(d, eff), {}, e);
}
workload burst_workload(double prompt, double output) {
  workload s;
  s.prompt = prompt;
  s.output = output;
  s.context = prompt + output;
  return s;
}
}  // namespace

TEST_CASE("burst: requests that fit one step are prefilled together and decode together") {
  // 4 requests of 100 prompt and 3 output tokens, handled in no time, a
  // 2048-token budget: one step prefills all 400 tokens in tau = prefill(100
  // tokens, batch 4), which yields each its first token; two decode steps of
  // 4 follow, timed as one run at the mean context 100 + 1 + (2 - 1) / 2 =
  // 101.5. TTFT = tau, TPOT = delta, duration tau + 2 delta, output 12 tokens.
  const deployment dep = burst_deployment(0, 256);
  const double tau = dep.prefill(100, 0, 4).estimate.value();
  const double delta = dep.decode(4, 101.5).estimate.value();
  const burst_result b = serve_burst(dep, burst_workload(100, 3), 4);
  CHECK(b.limit == serving_limit::none);
  CHECK(b.ttft.value() == doctest::Approx(tau).epsilon(1e-12));
  CHECK(b.first_wave_ttft.value() == doctest::Approx(tau).epsilon(1e-12));
  CHECK(b.tpot.value() == doctest::Approx(delta).epsilon(1e-12));
  CHECK(b.duration.value() == doctest::Approx(tau + 2 * delta).epsilon(1e-12));
  CHECK(b.output_tokens_per_s() == doctest::Approx(12 / (tau + 2 * delta)).epsilon(1e-12));
  CHECK(b.requests_per_s() == doctest::Approx(4 / (tau + 2 * delta)).epsilon(1e-12));
}

TEST_CASE("burst: beyond the engine's slots the rest wait for those ahead to complete") {
  // max_num_seqs 2, 4 requests of 100 + 3: the first two run as above with a
  // batch of 2 (tau2 = prefill(100, 0, 2), delta2 = decode(2, 101.5)) and
  // complete at T = tau2 + 2 delta2; the last two are admitted then and
  // complete at 2 T. TTFT: two at tau2, two at T + tau2 (sent at 0): mean
  // (2 tau2 + 2 (T + tau2)) / 4 = tau2 + T / 2.
  const deployment dep = burst_deployment(0, 2);
  const double tau2 = dep.prefill(100, 0, 2).estimate.value();
  const double delta2 = dep.decode(2, 101.5).estimate.value();
  const double T = tau2 + 2 * delta2;
  const burst_result b = serve_burst(dep, burst_workload(100, 3), 4);
  CHECK(b.slots == 2);
  CHECK(b.limit == serving_limit::max_num_seqs);
  CHECK(b.duration.value() == doctest::Approx(2 * T).epsilon(1e-12));
  CHECK(b.ttft.value() == doctest::Approx(tau2 + T / 2).epsilon(1e-12));
  CHECK(b.first_wave_ttft.value() == doctest::Approx(tau2).epsilon(1e-12));
  CHECK(b.tpot.value() == doctest::Approx(delta2).epsilon(1e-12));
}

TEST_CASE("burst: the token budget splits the prompts, first sent first prefilled") {
  // 4 requests of 100 prompt and 2 output tokens, a 250-token budget.
  // Step 1: two whole prompts and 50 of the third, 3 chunks of 250 / 3 = 83
  //   tokens: tau1 = prefill(83, 0, 3); the two whole ones sample their
  //   first token at tau1.
  // Step 2: their decodes (budget 250 - 2 = 248), then the third's last 50
  //   and the fourth's 100: 2 chunks of 75 tokens after 25 cached on
  //   average, step2 = max(decode(2, 101), prefill(75, 25, 2)); the first two
  //   complete, the last two sample their first token at tau1 + step2.
  // Step 3: the last two decode: delta3 = decode(2, 101).
  // TTFT = (2 tau1 + 2 (tau1 + step2)) / 4; TPOT = (step2 + delta3) / 2.
  const device& d = find_device("rtx-4090");
  engine_settings e = configure_engine("vllm", d);
  e.max_batched_tokens = 250;
  efficiency_profile eff = default_profile(d);
  eff.per_request = make_seconds(0);
  const deployment dep(find_model("llama-3.1-8b"), precision{}, roofline(d, eff), {}, e);
  const double tau1 = dep.prefill(83, 0, 3).estimate.value();
  const double step2 = std::max(dep.decode(2, 101).estimate.value(), dep.prefill(75, 25, 2).estimate.value());
  const double delta3 = dep.decode(2, 101).estimate.value();
  const burst_result b = serve_burst(dep, burst_workload(100, 2), 4);
  CHECK(b.ttft.value() == doctest::Approx(tau1 + step2 / 2).epsilon(1e-12));
  CHECK(b.tpot.value() == doctest::Approx((step2 + delta3) / 2).epsilon(1e-12));
  CHECK(b.duration.value() == doctest::Approx(tau1 + step2 + delta3).epsilon(1e-12));
  CHECK(b.prefill_share == doctest::Approx((tau1 + dep.prefill(75, 25, 2).estimate.value()) / b.duration.value())
                               .epsilon(1e-12));
}

TEST_CASE("a mixed step lasts the longer of its decode and its chunks, or both's compute added") {
  // Decode 10 ms (8 of it compute-limited: a large batch), chunks 12 ms (11 of
  // it compute): one pass, 8 + 11 = 19 ms of compute.
  const token_step big{0.010, 1, 1, 0, 0.008};
  CHECK(mixed_step_seconds(big, 0.012, 0.011) == doctest::Approx(0.019).epsilon(1e-15));
  // A memory-bound decode (no compute-limited op) hides under the chunks: max(10, 12, 0 + 11) = 12 ms.
  const token_step light{0.010, 1, 1, 0, 0};
  CHECK(mixed_step_seconds(light, 0.012, 0.011) == doctest::Approx(0.012).epsilon(1e-15));
  // A short chunk rides in the decode's weight read: max(10, 3, 8 + 1) = 10 ms.
  CHECK(mixed_step_seconds(big, 0.003, 0.001) == doctest::Approx(0.010).epsilon(1e-15));
  // Speculative: 3 ms of drafts run first, then the 10 ms verify (8 compute)
  // beside the chunks: 3 + max(10, 12, 8 + 11) = 22 ms.
  const token_step spec{0.013, 2.2, 4, 0.003, 0.008};
  CHECK(mixed_step_seconds(spec, 0.012, 0.011) == doctest::Approx(0.022).epsilon(1e-15));
  // step_of carries the verify's compute-limited time: a large batch's
  // decode on a 4090 is mostly compute, one sequence's none.
  const deployment dep = burst_deployment(0, 1024);
  CHECK(step_of(dep, 512, 9).compute == doctest::Approx(dep.decode(512, 9).compute_time.value()).epsilon(1e-12));
  CHECK(step_of(dep, 512, 9).compute > 0.5 * step_of(dep, 512, 9).seconds);
  CHECK(step_of(dep, 1, 9).compute == 0);
}

TEST_CASE("burst: a large decode batch beside prompt chunks adds their compute") {
  // 600 requests of 8 prompt and 2 output tokens, handled in no time, a
  // 4,096-token budget, 600 slots, an 8B model on a 4090.
  // Step 1: 512 whole prompts (4,096 tokens): tau1 = prefill(8, 0, 512); they
  //   sample their first token.
  // Step 2: their 512 decodes at 9 cached tokens (8 TFLOP: compute-bound)
  //   and the other 88 prompts (704 tokens, compute-bound too) in one pass:
  //   max(decode, chunks, decode's compute + chunks' compute); the first 512
  //   complete, the last 88 sample their first token.
  // Step 3: the 88 decode at 9: delta3 = decode(88, 9).
  const device& d = find_device("rtx-4090");
  engine_settings e = configure_engine("vllm", d);
  e.max_batched_tokens = 4096;
  e.max_sequences = 600;
  efficiency_profile eff = default_profile(d);
  eff.per_request = make_seconds(0);
  const deployment dep(find_model("llama-3.1-8b"), precision{}, roofline(d, eff), {}, e);
  const double tau1 = dep.prefill(8, 0, 512).estimate.value();
  const phase_timing decode2 = dep.decode(512, 9), chunks2 = dep.prefill(8, 0, 88);
  const double step2 = std::max({decode2.estimate.value(), chunks2.estimate.value(),
                                 decode2.compute_time.value() + chunks2.compute_time.value()});
  CHECK(step2 > 1.2 * std::max(decode2.estimate.value(), chunks2.estimate.value()));  // the compute sum decides
  const double delta3 = dep.decode(88, 9).estimate.value();
  const burst_result b = serve_burst(dep, burst_workload(8, 2), 600);
  CHECK(b.duration.value() == doctest::Approx(tau1 + step2 + delta3).epsilon(1e-12));
  CHECK(b.ttft.value() == doctest::Approx((512 * tau1 + 88 * (tau1 + step2)) / 600).epsilon(1e-12));
}

TEST_CASE("burst: one request is the closed loop's one user; the server handles requests one at a time") {
  const deployment dep = burst_deployment(5e-3, 256);
  const workload s = burst_workload(1000, 200);
  const burst_result one = serve_burst(dep, s, 1);
  const closed_loop_result alone = serve_closed_loop(dep, s, 1);
  CHECK(one.ttft.value() == doctest::Approx(alone.ttft.value()).epsilon(1e-12));
  CHECK(one.tpot.value() == doctest::Approx(alone.tpot.value()).epsilon(1e-12));
  // The i-th request reaches the scheduler (i + 1) x 5 ms after the send:
  // 64 requests take at least 320 ms, and the last one's first token comes
  // after it arrives.
  const burst_result many = serve_burst(dep, burst_workload(100, 3), 64);
  CHECK(many.duration.value() > 64 * 5e-3);
  CHECK(many.ttft.value() > 0.5 * (64 + 1) * 5e-3);  // the mean arrival alone
}

TEST_CASE("property: a burst's tokens/s rise with its requests up to the slots, then level off") {
  const deployment dep = burst_deployment(0, 16);
  const workload s = burst_workload(500, 100);
  double last = 0;
  for (double n : {1.0, 2.0, 4.0, 8.0, 16.0}) {
    CAPTURE(n);
    const burst_result b = serve_burst(dep, s, n);
    CHECK(b.output_tokens_per_s() > last);
    CHECK(b.output_tokens == n * 100);
    last = b.output_tokens_per_s();
  }
  // Twice the slots run in two waves of the slots' throughput.
  const burst_result twice = serve_burst(dep, s, 32);
  CHECK(twice.output_tokens_per_s() == doctest::Approx(last).epsilon(0.02));
}

TEST_CASE("property: joining a burst's indistinguishable requests into cohorts changes no figure") {
  // Every request walked on its own is the reference: 600 requests through 64
  // slots with 5 ms handling each (arrivals spread over the steps), a budget
  // that splits prompts, fixed and exponential answers, and one speculative
  // deployment.
  const deployment dep = burst_deployment(5e-3, 64);
  workload s = burst_workload(300, 40);
  s.context = 2048;
  speculation ngram;
  ngram.method = spec_method::ngram;
  ngram.draft_tokens = 3;
  ngram.acceptance = {0.6};
  const deployment spec = dep.with_speculation(ngram);
  for (const deployment* d : {&dep, &spec}) {
    for (length_spread spread : {length_spread::fixed, length_spread::exponential}) {
      CAPTURE(static_cast<int>(spread));
      const auto sent = detail::burst_requests(s, 600, spread);
      const detail::burst_run joined = detail::run_burst(*d, 0, 5e-3, 64, sent);
      const detail::burst_run apart = detail::run_burst(*d, 0, 5e-3, 64, sent, false);
      CHECK(joined.duration == doctest::Approx(apart.duration).epsilon(1e-12));
      CHECK(joined.ttft == doctest::Approx(apart.ttft).epsilon(1e-12));
      CHECK(joined.tpot == doctest::Approx(apart.tpot).epsilon(1e-12));
      CHECK(joined.first_wave_ttft == doctest::Approx(apart.first_wave_ttft).epsilon(1e-12));
      CHECK(joined.prefill_share == doctest::Approx(apart.prefill_share).epsilon(1e-12));
    }
  }
}

TEST_CASE("burst: exponential answers keep the mean, and their long tail drains slower than fixed lengths") {
  workload s = burst_workload(200, 200);
  s.context = 2048;  // vLLM's ShareGPT sampler: prompt + output <= 2048
  const std::vector<detail::request_shape> r = detail::burst_requests(s, 1000, length_spread::exponential);
  double sum = 0, longest = 0, shortest = 1e9;
  for (const auto& x : r) {
    sum += x.output;
    longest = std::max(longest, x.output);
    shortest = std::min(shortest, x.output);
    CHECK(x.prompt == 200);
    CHECK(x.output == std::round(x.output));
  }
  CHECK(sum / 1000 == doctest::Approx(200).epsilon(0.005));  // whole tokens: within half a token
  CHECK(longest <= 2048 - 200);
  CHECK(longest > 1000);  // about 200 ln(2000) = 1520: the tail
  CHECK(shortest >= 1);
  // Fixed lengths: every one 200; one exponential request is the mean itself.
  for (const auto& x : detail::burst_requests(s, 10, length_spread::fixed)) CHECK(x.output == 200);
  CHECK(detail::burst_requests(s, 1, length_spread::exponential).front().output == 200);
  const deployment dep = burst_deployment(0, 256);
  const burst_result fixed = serve_burst(dep, s, 200);
  const burst_result spread = serve_burst(dep, s, 200, length_spread::exponential);
  CHECK(spread.output_tokens == doctest::Approx(fixed.output_tokens).epsilon(0.01));
  CHECK(spread.duration > fixed.duration);
  CHECK(spread.output_tokens_per_s() < fixed.output_tokens_per_s());
}

TEST_CASE("burst: a clear error for what cannot be sent") {
  const deployment dep = burst_deployment(0, 256);
  const workload s = burst_workload(100, 3);
  CHECK_THROWS_WITH_AS(serve_burst(dep, s, 0), "requests must be in [1, 100000] (got 0)", std::invalid_argument);
  CHECK_THROWS_WITH_AS(serve_burst(dep, s, 2.5), "requests must be a whole number (got 2.5)", std::invalid_argument);
  workload half = s;
  half.output = 2.5;
  CHECK_THROWS_AS(serve_burst(dep, half, 4), std::invalid_argument);
  // Exponential answers spread up to the context: their mean must fit below it.
  workload tight = burst_workload(100, 50);
  tight.context = 120;
  CHECK_NOTHROW(serve_burst(dep, tight, 4));
  CHECK_THROWS_WITH_AS(serve_burst(dep, tight, 4, length_spread::exponential),
                       "output must be <= context - prompt (20 tokens) with exponential lengths: the answers spread "
                       "up to the context (got 50)",
                       std::invalid_argument);
  // A budget that chops long prompts into a great many steps is refused, not run for minutes.
  const device& gpu = find_device("rtx-4090");
  engine_settings tiny = configure_engine("vllm", gpu);
  tiny.max_batched_tokens = 16;
  const deployment slow(find_model("llama-3.2-1b"), precision{}, roofline(gpu), {}, tiny);
  // (10,000 x 8,192 / 16 + 10,000 + 16 + 10,000 x 16 / 16) steps x (16 + 4 joined cohorts +
  // 300) = 5,140,016 x 320 = 1,644,805,120 cohort-steps.
  CHECK_THROWS_WITH_AS(serve_burst(slow, burst_workload(8192, 16), 10000),
                       "requests must be fewer for a simulated burst: 10000 prompts of 8192 tokens in steps of 16 and "
                       "answers of 16 tokens take 1644805120 cohort-steps (at most 400000000) (got 10000)",
                       std::invalid_argument);
  // Short prompts, long answers: the answers' tokens alone need 80,000 x 2,000 / 16 = 1e7 steps.
  CHECK_THROWS_WITH_AS(serve_burst(slow, burst_workload(8, 2000), 80000),
                       doctest::Contains("requests must be fewer for a simulated burst: 80000 prompts of 8 tokens"),
                       std::invalid_argument);
  // Decodes that fill the whole budget hold the prompts back until one finishes
  // (those steps run as one stretch): 100 requests of 8 + 20 tokens through a
  // 16-token budget need at least 100 x 20 / 16 = 125 steps of at least one sequence.
  const burst_result starved = serve_burst(slow, burst_workload(8, 20), 100);
  CHECK(starved.output_tokens == 2000);
  CHECK(starved.duration.value() >= 125 * step_of(slow, 1, 8).seconds);
  // Not one request fits beside the weights: nothing is served, no time made up.
  const deployment big(find_model("llama-3.1-70b"), precision{}, roofline(gpu), {}, configure_engine("vllm", gpu));
  const burst_result none = serve_burst(big, s, 4);
  CHECK(none.slots == 0);
  CHECK(none.limit == serving_limit::kv_cache);
  CHECK(none.duration.value() == 0);
  CHECK(none.output_tokens_per_s() == 0);
  workload shared = burst_workload(1000, 3);
  shared.prefix = 500;
  shared.prefix_hit = 0.5;
  CHECK_THROWS_WITH_AS(
      serve_burst(dep, shared, 4),
      "prefix_hit must be 0 or 1 in a burst (identical prompts all find the prefix or none does) (got 0.5)",
      std::invalid_argument);
}

TEST_CASE("property: in lockstep a larger cohort waits longer for its first token and serves more") {
  const auto [dep, s] = small_lockstep(2048, 100, 64);
  double last_ttft = 0, last_total = 0;
  for (double n : {1.0, 2.0, 4.0, 8.0, 16.0}) {  // 16 x 100 tokens still fit one 2048-token step
    const closed_loop_result c = serve_closed_loop(dep, s, n);
    CAPTURE(n);
    CHECK(c.ttft.value() > last_ttft);
    CHECK(c.output_tokens_per_s(64) > last_total);
    CHECK(c.first_wave_ttft.value() == doctest::Approx(c.ttft.value()).epsilon(1e-9));  // one step: no chain
    last_ttft = c.ttft.value();
    last_total = c.output_tokens_per_s(64);
  }
}

TEST_CASE("lockstep: identical requests or a clear error") {
  auto [dep, s] = small_lockstep(2048, 100, 3);
  s.output = 2.5;
  CHECK_THROWS_WITH_AS(serve_closed_loop(dep, s, 4), "output must be a whole number (got 2.5)", std::invalid_argument);
  s.output = 3;
  s.prefix = 64;
  s.prefix_hit = 0.5;
  CHECK_THROWS_WITH_AS(serve_closed_loop(dep, s, 4),
                       "prefix_hit must be 0 or 1 in lockstep (identical requests all find the prefix or none does) "
                       "(got 0.5)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_arrival_pattern("sync"), "arrivals must be mixed or lockstep (got 'sync')",
                       std::invalid_argument);
  s.prefix = 0;
  s.prefix_hit.reset();
  CHECK_THROWS_WITH_AS(serve_load(dep, s, 2.0, std::nullopt),
                       "arrivals: lockstep is a closed loop of identical requests; a rate is an open loop",
                       std::invalid_argument);
  // One user and no concurrency: no loop for lockstep to shape (issue 60).
  workload alone = s;
  alone.users = 1;
  CHECK_THROWS_WITH_AS(serve_load(dep, alone, std::nullopt, std::nullopt),
                       "arrivals: lockstep shapes a closed loop, and none runs: give users > 1 or concurrency",
                       std::invalid_argument);
  CHECK_NOTHROW(serve_load(dep, alone, std::nullopt, 4.0));
  // Not one request fits: nothing is served, and the result still says which loop was asked.
  const device& h100 = find_device("h100-sxm");
  const deployment too_big(find_model("llama-3.1-70b"), precision{}, roofline(h100), {}, configure_engine("vllm", h100));
  const closed_loop_result none = serve_closed_loop(too_big, s, 4);
  CHECK(none.slots < 1);
  CHECK(none.arrivals == arrival_pattern::lockstep);
  CHECK(to_string(arrival_pattern::lockstep) == "lockstep");
}

TEST_CASE("closed loop: the fixed point just below a step that jumps with the batch is kept") {
  // Qwen3-30B-A3B on 4 H100s under EP 4 (vLLM): each rank decodes
  // ceil(batch / 4) sequences, so the step jumps just above 32 (8 per rank
  // -> 9). The open loop at the closed loop's rate holds the 32 users just
  // below the jump; the damped iteration's extrapolated jumps leapt that
  // fixed point and settled above the jump (32.4), so the exact search
  // reported 31.7 users inside and a slot queue (TTFT 157 ms against 86).
  request q;
  q.model = &find_model("qwen3-30b-a3b");
  q.dev = &find_device("h100-sxm");
  q.engine = "vllm";
  q.layout.ep = 4;
  q.layout.devices_per_node = 4;
  const deployment d = resolve(q);
  workload w = llmroof::test::requests(4096, 512);
  w.context = 16384;
  w.users = 32;
  const closed_loop_result exact = serve_closed_loop(d, w, 32);
  const closed_loop_result fast = detail::serve_closed_loop(d, w, 32, 1e-4);
  CHECK(exact.active == 32);
  CHECK(exact.limit == serving_limit::none);
  CHECK(exact.load.users == doctest::Approx(32).epsilon(1e-5));
  CHECK(exact.ttft.value() == doctest::Approx(fast.ttft.value()).epsilon(1e-3));
  CHECK(exact.tpot.value() == doctest::Approx(fast.tpot.value()).epsilon(1e-3));
  CHECK(exact.requests_per_s == doctest::Approx(fast.requests_per_s).epsilon(1e-3));
  // No iterate passes a fixed point: at the loop's rate, from below, the open
  // loop stops at 32 users, never past the jump.
  const load_result at = detail::serve_at_rate(d, w, exact.requests_per_s, 31.0 / 32, false);
  CHECK(at.users <= 32 * (1 + 1e-6));
}

TEST_CASE("a context longer than one request is a conversation that grows to it (issue 55)") {
  // 8,192 tokens a user, 2,048-token prompts and 512-token answers: each
  // request a turn over 8,192 - 2,048 - 512 = 5,632 tokens of earlier turns,
  // its decode steps reading 5,632 + 2,048 + 256 = 7,936 tokens on average.
  workload w;
  w.context = 8192;
  CHECK(w.history() == 5632);
  CHECK(w.request_end() == 8192);
  CHECK(w.mean_decode_context() == 7936);
  workload one = w;
  one.context = 2048 + 512;  // one request fills it
  CHECK(one.history() == 0);
  CHECK(one.mean_decode_context() == 2048 + 256);
  const device& h100 = find_device("h100-sxm");
  const deployment d(find_model("llama-3.1-8b"), precision{}, roofline(h100), {}, configure_engine("vllm", h100));
  const detail::open_loop t(d, w);
  CHECK(t.mean_context == 7936);
  CHECK(t.alone == doctest::Approx(step_of(d, 1, 7936).per_token()));
  // vLLM's prefix cache holds the earlier turns: the prompt prefilled over them.
  CHECK(t.S == doctest::Approx(d.prefill(2048, 5632).estimate.value()));
  CHECK(t.chunks == std::ceil(2048 / d.engine.max_batched_tokens));
  // Without a prefix cache the whole conversation is prefilled again.
  deployment plain = d;
  plain.engine.prefix_caching = false;
  CHECK(detail::open_loop(plain, w).S == doctest::Approx(d.prefill(7680).estimate.value()));
  // The loop's speed is at the context: slower than the same users' one-request loop.
  const double at_context = serve_closed_loop(d, w, 8).tokens_per_s_per_user().value();
  CHECK(at_context < serve_closed_loop(d, one, 8).tokens_per_s_per_user().value());
  // And no faster than the plain decode step of 8 users at the context's mean.
  CHECK(at_context <= 1.0 / d.decode(8, 7936).estimate.value() * (1 + 1e-9));
  // The slots are sequences of the whole context.
  CHECK(slots_for(d, w).slots == std::min(d.memory(1, 8192).max_sequences, d.engine.max_sequences));
}

TEST_CASE("replicas: each its share of the users; the plan's figures are one replica's, its totals all of them") {
  request q;
  q.dev = &find_device("h100-sxm");
  q.layout.devices_per_node = 8;
  q.model = &find_model("llama-3.3-70b");
  const deployment one = resolve(q);
  const deployment two = one.with_replicas(2);
  workload w;
  w.context = 4096;
  w.users = 64;
  workload half = w;
  half.users = 32;
  // 64 users on 2 replicas: each user sees one replica of 32; the total is two of them.
  const plan_result p2 = plan(two, w), p1 = plan(one, half);
  CHECK(p2.replicas == 2);
  CHECK(p2.memory.kv_needed.value() == p1.memory.kv_needed.value());
  CHECK(p2.memory.max_sequences == 2 * p1.memory.max_sequences);
  CHECK(p2.curve.back().per_user_estimate().value() == doctest::Approx(p1.curve.back().per_user_estimate().value()));
  CHECK(p2.curve.back().total_estimate().value() == doctest::Approx(2 * p1.curve.back().total_estimate().value()));
  // The closed loop: 32 per replica, requests/s twice one replica's.
  const served_load l2 = serve_load(two, w, std::nullopt, std::nullopt);
  const closed_loop_result c1 = serve_closed_loop(one, w, 32);
  REQUIRE(l2.closed);
  CHECK(l2.closed->requests_per_s == doctest::Approx(2 * c1.requests_per_s));
  CHECK(l2.closed->ttft.value() == doctest::Approx(c1.ttft.value()));
  CHECK(l2.closed->tpot.value() == doctest::Approx(c1.tpot.value()));
  CHECK(l2.closed->active == doctest::Approx(64));
  // 3 users on 2 replicas: groups of 1 and 2, requests/s summed.
  workload three = w;
  three.users = 3;
  const served_load l3 = serve_load(two, three, std::nullopt, std::nullopt);
  CHECK(l3.closed->requests_per_s ==
        doctest::Approx(serve_closed_loop(one, w, 1).requests_per_s + serve_closed_loop(one, w, 2).requests_per_s));
  // The open loop: half the rate on each.
  const served_load o2 = serve_load(two, w, 4.0, std::nullopt);
  CHECK(o2.open->ttft.value() == doctest::Approx(serve_at_rate(one, w, 2.0).ttft.value()));
  CHECK(o2.max_rate == doctest::Approx(2 * max_rate(one, w)));
  // Energy: all 16 devices over both replicas' output.
  const energy_cost e = plan_energy(two, p2, {}, &l2, w.output);
  CHECK(e.devices == 16);
  CHECK(e.tokens_per_s == doctest::Approx(l2.closed->output_tokens_per_s(w.output)));
  // The most users at a target: one replica's, twice.
  const users_result u1 = max_users(one, w, make_tokens_per_second(30)), u2 = max_users(two, w, make_tokens_per_second(30));
  CHECK(u2.users == 2 * u1.users);
  CHECK(u2.tokens_per_s_per_user() == doctest::Approx(u1.tokens_per_s_per_user()));
}
