// Speed of one estimate: decode step, prefill, memory plan, KV sizing, MoE
// coverage. Run: cmake --workflow --preset release && build/release/benchmarks/llmroof_benchmarks
#include <benchmark/benchmark.h>

#include "llmroof/llmroof.hpp"
#include "llmroof/engine_profile.hpp"

namespace {

using namespace llmroof;

void decode_step_70b(benchmark::State& state) {
  const architecture& a = find_model("llama-3.1-70b");
  const precision pr = precision::of(find_format("fp8"), find_format("bf16"));
  const roofline r(find_device("h100-sxm"));
  double context = 4096;
  for (auto _ : state) {
    const phase_timing p = decode_step(a, pr, r, 8, context);
    benchmark::DoNotOptimize(p.estimate);
    context = context < 100000 ? context + 1 : 4096;  // defeat constant folding
  }
}
BENCHMARK(decode_step_70b);

void decode_step_moe(benchmark::State& state) {
  const architecture& a = find_model("deepseek-v3");
  const precision pr = precision::of(find_format("fp8"), find_format("bf16"));
  const roofline r(find_device("h200"), default_profile(find_device("h200")), 8);
  double batch = 1;
  for (auto _ : state) {
    const phase_timing p = decode_step(a, pr, r, batch, 8192);
    benchmark::DoNotOptimize(p.estimate);
    batch = batch < 256 ? batch + 1 : 1;
  }
}
BENCHMARK(decode_step_moe);

void prefill_70b(benchmark::State& state) {
  const architecture& a = find_model("llama-3.1-70b");
  const precision pr = precision::of(find_format("fp8"), find_format("bf16"));
  const roofline r(find_device("h100-sxm"));
  double prompt = 2048;
  for (auto _ : state) {
    const phase_timing p = prefill(a, pr, r, prompt);
    benchmark::DoNotOptimize(p.estimate);
    prompt = prompt < 4096 ? prompt + 1 : 2048;
  }
}
BENCHMARK(prefill_70b);

void memory_plan_seed(benchmark::State& state) {
  const architecture& a = find_model("devstral-small-2-24b");
  const precision pr = precision::of(find_format("fp8"), find_format("bf16"));
  const device& d = find_device("rtx-pro-6000-blackwell");
  for (auto _ : state) {
    const memory_plan m = plan_memory(a, pr, d, 4, 131072);
    benchmark::DoNotOptimize(m.max_context);
  }
}
BENCHMARK(memory_plan_seed);

void kv_sizing(benchmark::State& state) {
  const architecture& a = find_model("gpt-oss-120b");
  const numeric_format& kv = find_format("fp8");
  double c = 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(kv_bytes_per_sequence(a, kv, c, 16));
    c = c < 131072 ? c + 1 : 1;
  }
}
BENCHMARK(kv_sizing);

void moe_coverage(benchmark::State& state) {
  double b = 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(expected_distinct_experts(256, 8, b));
    b = b < 4096 ? b + 1 : 1;
  }
}
BENCHMARK(moe_coverage);

// One point of llmroof.sweep_decode: the step of the scenario's plan plus
// whether the batch's KV fits the budget.
void sweep_point_70b(benchmark::State& state) {
  const architecture& a = find_model("llama-3.1-70b");
  const precision pr = precision::of(find_format("fp8"), find_format("bf16"));
  const roofline r(find_device("h100-sxm"));
  const parallel_plan p{};
  const double budget = 40e9;
  double batch = 1;
  double context = 0;
  for (auto _ : state) {
    const phase_timing t = scenario_decode(a, pr, r, p, batch, context);
    const bool fits = batch * kv_bytes_per_sequence(a, pr.kv, context, 16).value() <= budget;
    benchmark::DoNotOptimize(t.estimate);
    benchmark::DoNotOptimize(fits);
    batch = batch < 1000 ? batch + 1 : 1;
    context = context < 131072 ? context + 131.0 : 0;
  }
}
BENCHMARK(sweep_point_70b);

}  // namespace

BENCHMARK_MAIN();
