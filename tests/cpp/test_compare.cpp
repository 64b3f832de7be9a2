#include <doctest/doctest.h>

#include <cmath>

#include "llmroof/search/compare.hpp"
#include "setup.hpp"

using namespace llmroof;
using llmroof::test::on;

TEST_CASE("compare refuses two sides that are one deployment (issue 60: every row a tie, called 'second')") {
  const auto make = [](const char* dev) {
    request q;
    q.model = &find_model("llama-3.1-8b");
    q.dev = &find_device(dev);
    return resolve(q);
  };
  const deployment a = make("h100-sxm");
  CHECK_THROWS_WITH_AS(compare_deployments(a, a, 4096),
                       "compare: both sides are the same deployment (llama-3.1-8b on 1 x h100-sxm): change the model, "
                       "device, engine or a format",
                       std::invalid_argument);
  CHECK_NOTHROW(compare_deployments(a, make("h200"), 4096));
}

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
  const model_comparison c =
      compare_decode(deployment(find_model("glm-4.5-air"), awq, r), deployment(find_model("devstral-small-2-24b"), awq, r), 4096);
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

TEST_CASE("analyze_moe: routing per batch, the dense twin and the weights crossover") {
  const auto [a, pr, r] = on("qwen3-30b-a3b", "h100-sxm");  // 128 routed experts, top-8
  const moe_analysis m = analyze_moe(deployment(a, pr, r), 4096, 1024);
  REQUIRE(m.routing.size() == m.decode.batches.size());
  // One token touches its 8 experts exactly; two touch 128 x (1 - (120/128)^2) = 15.5 on average.
  CHECK(m.routing[0].experts_per_layer == doctest::Approx(8));
  CHECK(m.routing[0].experts_per_layer_sd == doctest::Approx(0).epsilon(1e-9));
  CHECK(m.routing[1].experts_per_layer == doctest::Approx(15.5));
  // The expert bytes read grow with the experts touched: 15.5 / 8 of batch 1's.
  CHECK(m.routing[1].expert_weights.value() / m.routing[0].expert_weights.value() == doctest::Approx(15.5 / 8));
  CHECK(count_parameters(m.dense).total() == doctest::Approx(count_parameters(a).total()).epsilon(0.01));
  REQUIRE(m.weights_crossover);
  const auto weights = [&](const architecture& x, double n) {
    return count_decode_parallel(x, pr, r.dev(), {}, n, 4096).weight_bytes().value();
  };
  const double x = *m.weights_crossover;
  CHECK(weights(a, x) >= 0.99 * weights(m.dense, x));
  CHECK(weights(a, x - 1) < 0.99 * weights(m.dense, x - 1));
  CHECK_THROWS_WITH_AS(analyze_moe(deployment(find_model("llama-3-8b"), pr, r), 4096),
                       "model 'llama-3-8b' is dense: 'moe' needs a Mixture-of-Experts model", std::invalid_argument);
}

TEST_CASE("analyze_moe under expert parallelism: the dense twin is tensor parallel on the same devices") {
  // The dense twin cannot take ep > 1 (validate refuses a dense model there);
  // it used to make every `moe --ep N` question fail.
  const auto [a, pr, r] = on("qwen3-30b-a3b", "h100-sxm");
  parallel_plan ep;
  ep.ep = 2;
  const architecture twin = dense_equivalent(a, true);
  const parallel_plan q = layout_for(twin, ep);
  CHECK(q.tp == 2);
  CHECK(q.ep == 1);
  CHECK(q.devices() == ep.devices());
  CHECK(layout_for(a, ep).ep == 2);  // a MoE model keeps the plan
  // Devices that are no TP degree of the twin: 6 ranks, 32 query / 4 KV heads:
  // TP 6 and 3 split no heads, TP 2 does, so TP 2 x PP 3.
  parallel_plan six;
  six.ep = 6;
  CHECK(layout_for(twin, six).tp == 2);
  CHECK(layout_for(twin, six).pp == 3);
  // DeepSeek-V3 on 18 nodes x 8 (EP 144): 128 MLA heads; the largest divisor
  // of 144 that divides 128 is 16, so TP 16 x PP 9 (61 layers hold 9 stages).
  parallel_plan wide;
  wide.ep = 144;
  const parallel_plan w = layout_for(dense_equivalent(find_model("deepseek-v3"), true), wide);
  CHECK(w.tp == 16);
  CHECK(w.pp == 9);
  const moe_analysis m = analyze_moe(deployment(a, pr, r, {ep, std::nullopt}), 4096, 64);
  CHECK(m.decode.second_layout.tp == q.tp);
  // bf16 twin of ~30.5B split over 2 devices: ~30.5 GB read per device per step.
  const double twin_bytes = m.decode.second[0].counts.weight_bytes().value();
  CHECK(twin_bytes == doctest::Approx(count_decode_parallel(twin, pr, r.dev(), q, 1, 4096).weight_bytes().value()));
  CHECK(twin_bytes == doctest::Approx(count_parameters(twin).total() * 2 / 2).epsilon(0.03));
  // The MoE side is the expert-parallel step itself.
  CHECK(m.decode.first[0].counts.weight_bytes().value() ==
        doctest::Approx(count_decode_parallel(a, pr, r.dev(), ep, 1, 4096).weight_bytes().value()));
}

TEST_CASE("deployment fit: the memory plan's answer for the weights alone") {
  const precision pr = precision::of(find_format("bf16"), find_format("bf16"));
  const engine_settings e = find_engine("vllm");
  const roofline h100(find_device("h100-sxm"));
  const weights_fit small = deployment(find_model("llama-3-8b"), pr, h100, {}, e).fit(4096);
  CHECK(small.fits);
  CHECK(small.short_by.value() == 0);
  CHECK(small.max_users > 1);
  const memory_plan m = plan_memory_parallel(find_model("deepseek-v3"), pr, find_device("h100-sxm"), {}, 1, 4096, e);
  const weights_fit big = deployment(find_model("deepseek-v3"), pr, h100, {}, e).fit(4096);
  CHECK_FALSE(big.fits);
  // 1.34 TB of BF16 weights on 80 GB: short by what the KV budget overruns.
  CHECK(big.short_by.value() == doctest::Approx(-m.kv_budget.value()));
  CHECK(big.short_by.value() > 1.2e12);
  // What the deployment holds: up to max_users sequences of the context, none
  // where the weights do not fit, any number of empty ones.
  const double room = std::floor(small.max_users);
  CHECK(small.context == 4096);
  CHECK(small.holds(room));
  CHECK_FALSE(small.holds(room + 1));
  CHECK_FALSE(big.holds(1));
  const weights_fit empty = deployment(find_model("llama-3-8b"), pr, h100, {}, e).fit(0);
  CHECK(empty.holds(1e6));
}

TEST_CASE("compare_deployments: one model on two machines, two engines, two models on one machine") {
  const auto make = [](std::string_view model, std::string_view dev, int n, std::string_view engine, int ep = 1) {
    request q;
    q.model = &find_model(model);
    q.dev = &find_device(dev);
    q.layout.devices_per_node = n;
    if (ep > 1) q.layout.ep = ep;
    q.engine = std::string(engine);
    return resolve(q);
  };
  const deployment h100 = make("llama-3.1-8b", "h100-sxm", 1, "vllm");
  const deployment pro = make("llama-3.1-8b", "rtx-pro-6000-blackwell", 1, "vllm");
  CHECK_FALSE(same_devices(h100, pro));
  const model_comparison m = compare_deployments(h100, pro, 4096, 8);
  REQUIRE(m.batches.size() == 4);  // 1, 2, 4, 8
  for (std::size_t i = 0; i < m.batches.size(); ++i) {
    // Each machine decodes under its own roofs; the bytes are the model's on both.
    CHECK(m.first[i].estimate == h100.decode(m.batches[i], 4096).estimate);
    CHECK(m.second[i].estimate == pro.decode(m.batches[i], 4096).estimate);
    CHECK(m.first[i].counts.total_bytes() == m.second[i].counts.total_bytes());
  }
  // At batch 1 the step is memory-bound: the bound's ratio is the bandwidths'
  // ratio, 3.35 TB/s / 1.792 TB/s = 1.869 (accelerators.csv), to within the
  // compute and launch terms of a 16 GB read.
  CHECK(m.second[0].bound.value() / m.first[0].bound.value() == doctest::Approx(3.35 / 1.792).epsilon(0.02));
  CHECK_FALSE(m.speed_crossover);  // the H100 stays faster per user
  CHECK_FALSE(m.bytes_crossover);  // the same model in the same formats reads the same bytes

  // vLLM and llama.cpp on the same two GPUs: each keeps its own layout (TP 2
  // against llama.cpp's layer split), not the first's device plan.
  const deployment tp = make("llama-3.1-8b", "rtx-4090", 2, "vllm");
  const deployment split = make("llama-3.1-8b", "rtx-4090", 2, "llama.cpp");
  CHECK(same_devices(tp, split));
  const model_comparison e = compare_deployments(tp, split, 4096, 1);
  CHECK(e.first_layout.tp == 2);
  CHECK(e.second_layout.pp == 2);
  CHECK(e.second_layout.tp == 1);

  // Two models on one machine under one engine: the second on the first's
  // device plan (a dense model beside an expert-parallel MoE one takes TP).
  const deployment moe = make("qwen3-30b-a3b", "h100-sxm", 4, "vllm", 4);
  const deployment dense = make("qwen3-32b", "h100-sxm", 4, "vllm");
  const model_comparison t = compare_deployments(moe, dense, 4096, 1);
  CHECK(t.first_layout.ep == 4);
  CHECK(t.second_layout.ep == 1);
  CHECK(t.second_layout.tp * t.second_layout.pp == 4);
}
