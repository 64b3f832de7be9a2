// Speed of one estimate: decode step, prefill, memory plan, KV sizing, MoE
// coverage. Run: cmake --workflow --preset release && build/release/benchmarks/llmroof_benchmarks
#include <benchmark/benchmark.h>

#include <initializer_list>
#include <utility>

#include "llmroof/llmroof.hpp"
#include "llmroof/engine/engine_profile.hpp"

namespace {

using namespace llmroof;

// The benchmarks' formats: fp8 weights, bf16 KV cache.
const precision fp8_weights = precision::of(find_format("fp8"), find_format("bf16"));

/// Times `estimate(x)` with x stepping by `by` from `lo` to `hi` and back: a
/// changing argument defeats constant folding.
template <class Estimate>
void cycle(benchmark::State& state, double lo, double hi, double by, Estimate estimate) {
  double x = lo;
  for (auto _ : state) {
    benchmark::DoNotOptimize(estimate(x));
    x = x < hi ? x + by : lo;
  }
}

void decode_step_70b(benchmark::State& state) {
  const architecture& a = find_model("llama-3.1-70b");
  const roofline r(find_device("h100-sxm"));
  cycle(state, 4096, 100000, 1, [&](double context) { return decode_step(a, fp8_weights, r, 8, context).estimate; });
}
BENCHMARK(decode_step_70b);

void decode_step_moe(benchmark::State& state) {
  const architecture& a = find_model("deepseek-v3");
  const roofline r(find_device("h200"), default_profile(find_device("h200")), 8);
  cycle(state, 1, 256, 1, [&](double batch) { return decode_step(a, fp8_weights, r, batch, 8192).estimate; });
}
BENCHMARK(decode_step_moe);

void prefill_70b(benchmark::State& state) {
  const architecture& a = find_model("llama-3.1-70b");
  const roofline r(find_device("h100-sxm"));
  cycle(state, 2048, 4096, 1, [&](double prompt) { return prefill(a, fp8_weights, r, prompt).estimate; });
}
BENCHMARK(prefill_70b);

void memory_plan_seed(benchmark::State& state) {
  const architecture& a = find_model("devstral-small-2-24b");
  const device& d = find_device("rtx-pro-6000-blackwell");
  cycle(state, 131072, 132072, 1, [&](double context) { return plan_memory(a, fp8_weights, d, 4, context).max_context; });
}
BENCHMARK(memory_plan_seed);

void kv_sizing(benchmark::State& state) {
  const architecture& a = find_model("gpt-oss-120b");
  const numeric_format& kv = find_format("fp8");
  cycle(state, 1, 131072, 1, [&](double c) { return kv_bytes_per_sequence(a, kv, c, 16); });
}
BENCHMARK(kv_sizing);

void moe_coverage(benchmark::State& state) {
  cycle(state, 1, 4096, 1, [](double b) { return expected_distinct_experts(256, 8, b); });
}
BENCHMARK(moe_coverage);

// What a plan of 8 users adds under load: their closed loop and the
// deployment's saturation (a closed loop of all its slots), each a search over
// request rates of fixed points of decode steps.
void plan_load_8_users(benchmark::State& state) {
  const deployment d(find_model("llama-3.1-8b"), precision::of(find_format("bf16"), find_format("bf16")),
                     roofline(find_device("h100-sxm")), {}, configure_engine("vllm", find_device("h100-sxm")));
  workload s;
  s.users = 8;
  cycle(state, 4096, 8192, 1, [&](double context) {
    s.context = context;
    return serve_load(d, s, std::nullopt, std::nullopt).most->requests_per_s;
  });
}
BENCHMARK(plan_load_8_users);

// A fixed-length benchmark's closed loop in lockstep (load_model.hpp): N users of
// 1,000 in / 1,000 out, the engine's steps simulated cohort by cohort over six
// waves (runs of decode steps timed at once).
void lockstep_loop(benchmark::State& state) {
  const device& h100 = find_device("h100-sxm");
  const deployment d(find_model("llama-3.1-8b"), precision::of(find_format("bf16"), find_format("bf16")),
                     roofline(h100), {}, configure_engine("vllm", h100));
  workload s;
  s.prompt = 1000;
  s.output = 1000;
  s.context = 2000;
  s.arrivals = arrival_pattern::lockstep;
  const double users = static_cast<double>(state.range(0));
  cycle(state, 1000, 1010, 1, [&](double prompt) {
    s.prompt = prompt;
    return serve_closed_loop(d, s, users).ttft.value();
  });
}
BENCHMARK(lockstep_loop)->Arg(8)->Arg(64)->Arg(256)->Unit(benchmark::kMicrosecond);

// A burst (load_model.hpp serve_burst): N requests sent at once, the engine's steps
// simulated over them; fixed 1,000 in / 1,000 out (arg 0) or ShareGPT-like
// 220 in / 200 out spread exponentially (arg 1).
void burst(benchmark::State& state) {
  const device& h100 = find_device("h100-sxm");
  const deployment d(find_model("llama-3.1-8b"), precision::of(find_format("bf16"), find_format("bf16")),
                     roofline(h100), {}, configure_engine("vllm", h100));
  const bool chat = state.range(1) == 1;
  workload s;
  s.prompt = chat ? 220 : 1000;
  s.output = chat ? 200 : 1000;
  s.context = chat ? 2048 : 2000;
  const double requests = static_cast<double>(state.range(0));
  const length_spread spread = chat ? length_spread::exponential : length_spread::fixed;
  cycle(state, s.prompt, s.prompt + 10, 1, [&](double prompt) {
    s.prompt = prompt;
    return serve_burst(d, s, requests, spread).duration.value();
  });
}
BENCHMARK(burst)->Args({100, 0})->Args({1000, 0})->Args({100, 1})->Args({1000, 1})->Unit(benchmark::kMillisecond);

// One point of llmroof.sweep_decode: the deployment's step plus
// whether the batch's KV fits the budget.
void sweep_point_70b(benchmark::State& state) {
  const deployment d(find_model("llama-3.1-70b"), fp8_weights, roofline(find_device("h100-sxm")));
  const architecture& a = d.model;
  const double budget = 40e9;
  double context = 0;
  cycle(state, 1, 1000, 1, [&](double batch) {
    context = context < 131072 ? context + 131.0 : 0;
    const bool fits = batch * kv_bytes_per_sequence(a, fp8_weights.kv, context, 16).value() <= budget;
    return std::pair(d.decode(batch, context).estimate, fits);
  });
}
BENCHMARK(sweep_point_70b);

// A speculative decode estimate: MTP with 3 draft tokens on DeepSeek-V3,
// the plain step, the verify step of width 4 and the draft passes.
void speculative_step_mtp(benchmark::State& state) {
  const device& h200 = find_device("h200");
  const deployment d(find_model("deepseek-v3"), fp8_weights, roofline(h200, default_profile(h200, "sglang"), 8), {},
                     configure_engine("sglang", h200));
  speculation s;
  s.draft_tokens = 3;
  cycle(state, 1, 64, 1, [&](double batch) { return speculate(d, s, batch, 8192).tokens_per_s_per_user(); });
}
BENCHMARK(speculative_step_mtp);

// The same for a dense model with n-gram drafts: the plain and the verify step.
void speculative_step_dense(benchmark::State& state) {
  const deployment d(find_model("llama-3.1-70b"), fp8_weights, roofline(find_device("h100-sxm")));
  speculation s;
  s.method = spec_method::ngram;
  s.draft_tokens = 3;
  s.acceptance = {0.6};
  cycle(state, 1, 64, 1, [&](double batch) { return speculate(d, s, batch, 8192).tokens_per_s_per_user(); });
}
BENCHMARK(speculative_step_dense);

void deployment_decode_70b(benchmark::State& state) {
  const deployment d(find_model("llama-3.1-70b"), fp8_weights, roofline(find_device("h100-sxm")));
  cycle(state, 1, 64, 1, [&](double batch) { return d.decode(batch, 8192, 4).estimate; });
}
BENCHMARK(deployment_decode_70b);

// A plan's prefill/decode comparison: Llama-3.1-70B FP8 on 8 x H100 at
// 4k/500, aggregated replicas, the whole fleet, and every split, each a
// goodput search; with a shared prefix and speculation's memory beside it.
void plan_with_pd_and_speculation(benchmark::State& state) {
  const device& h100 = find_device("h100-sxm");
  layout_request lr;
  lr.devices_per_node = 8;
  const deployment fleet(find_model("llama-3.1-70b"), fp8_weights, roofline(h100, default_profile(h100, "vllm")),
                         {infer_layout(lr), std::nullopt}, configure_engine("vllm", h100));
  workload w;
  w.prompt = 4096;
  w.output = 500;
  w.context = 4608;
  w.prefix = 1024;
  speculation s;
  s.method = spec_method::ngram;
  s.draft_tokens = 3;
  s.acceptance = {0.6};
  // The fleet decodes speculatively: the plan's memory, its closed loop and
  // the P/D decode pools all run draft + verify steps (plan --spec --pd).
  const deployment spec_fleet = fleet.with_speculation(s);
  cycle(state, 1, 64, 1, [&](double users) {
    w.users = users;
    const plan_result p = plan(spec_fleet, w);
    const served_load l = serve_load(spec_fleet, w, std::nullopt, std::nullopt, make_seconds(1.0));
    const pd_comparison c = compare_disaggregation(spec_fleet, w, {make_seconds(1.0), make_seconds(1.0 / 60)}, 2);
    return p.curve.back().all.estimate.value() + c.rows[c.best].requests_per_s + (l.closed ? l.closed->tpot.value() : 0) +
           speculate(spec_fleet, s, users, 4608).tokens_per_s_per_user() + speculation_memory(fleet, s, 4608).max_users;
  });
}
BENCHMARK(plan_with_pd_and_speculation);

// The step the load model asks a speculative deployment for (step_of): MTP
// with 3 draft tokens on DeepSeek-V3, draft and verify over the tokens kept.
void speculative_token_step(benchmark::State& state) {
  const device& h200 = find_device("h200");
  speculation s;
  s.draft_tokens = 3;
  const deployment d = deployment(find_model("deepseek-v3"), fp8_weights,
                                  roofline(h200, default_profile(h200, "sglang"), 8), {},
                                  configure_engine("sglang", h200))
                           .with_speculation(s);
  cycle(state, 1, 64, 1, [&](double batch) { return step_of(d, batch, 8192).per_token(); });
}
BENCHMARK(speculative_token_step);

// The deployment search on one thread: four models on five device kinds
// (26 devices), 32 users at 16k, every engine, format, layout, replica count
// and prefill/decode split; the counter is the time per candidate.
void recommend_pool(benchmark::State& state) {
  recommend_input in;
  for (const char* m : {"llama-3.1-8b", "qwen3-30b-a3b", "llama-3.1-70b", "qwen3-32b"}) {
    request q;
    q.model = &find_model(m);
    q.name = m;
    in.models.push_back(resolve(q));
  }
  for (const auto& [name, n] : std::initializer_list<std::pair<const char*, int>>{
           {"h100-sxm", 8}, {"rtx-pro-6000-blackwell", 4}, {"rtx-4090", 4}, {"m3-ultra-80c", 1}, {"a100-sxm-80gb", 8}}) {
    pool_entry e;
    e.dev = find_device(name);
    e.count = n;
    in.pool.push_back(e);
  }
  in.w.users = 32;
  in.w.context = 16384;
  in.w.prompt = 4096;
  in.w.output = 512;
  in.target.min_tokens_per_s = 20;
  in.target.ttft = make_seconds(2);
  in.space.threads = static_cast<int>(state.range(0));
  in.space.disaggregated = state.range(1) != 0;
  std::size_t candidates = 0;
  for (auto _ : state) {
    const recommendation r = recommend(in);
    candidates = r.candidates.size();
    benchmark::DoNotOptimize(r.best);
  }
  state.counters["candidates"] = double(candidates);
  state.counters["per_candidate"] =
      benchmark::Counter(double(candidates) * double(state.iterations()), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(recommend_pool)->Args({1, 0})->Args({1, 1})->Args({2, 1})->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
