// Disaggregated prefill and decode (disaggregation.hpp): the KV hand-over,
// the pools' goodput and the comparison with aggregated replicas.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "llmroof/llmroof.hpp"
#include "setup.hpp"

using namespace llmroof;

namespace {

deployment fleet_of(const char* model, const char* weights, int devices, const char* engine = "vllm") {
  const device& h100 = find_device("h100-sxm");
  layout_request lr;
  lr.devices_per_node = devices;
  const efficiency_profile e = default_profile(h100, engine);
  return {find_model(model), precision::of(find_format(weights), find_format("bf16")), roofline(h100, e),
          {infer_layout(lr), std::nullopt}, configure_engine(engine, h100)};
}

}  // namespace

TEST_CASE("KV transfer of a 4k Llama-3.1-70B prompt over NVLink, 400 Gb/s InfiniBand and 100 GbE") {
  const architecture& a = find_model("llama-3.1-70b");
  // 80 layers x 2 x 8 heads x 128 x 2 B = 327,680 B (320 KiB) per token;
  // 4,096 tokens: 1,342,177,280 B.
  const bytes kv = kv_bytes_per_sequence(a, find_format("bf16"), 4096, 1);
  REQUIRE(kv.value() == 1342177280.0);
  kv_transfer t;
  t.efficiency = 1;
  // At line rate: NVLink 4, 450 GB/s each way: 2.98262 ms + 1.5 us = 2.98412 ms.
  t.link = find_link("nvlink4");
  CHECK(kv_transfer_time(t, kv).value() == doctest::Approx(2.984116e-3));
  // InfiniBand NDR, 50 GB/s: 26.8435 ms + 4 us = 26.8475 ms.
  t.link = find_link("ib-ndr");
  CHECK(kv_transfer_time(t, kv).value() == doctest::Approx(26.84755e-3));
  // 100 GbE, 12.5 GB/s: 107.374 ms + 10 us = 107.384 ms.
  t.link = find_link("eth-100g");
  CHECK(kv_transfer_time(t, kv).value() == doctest::Approx(107.3842e-3));
  // At Mooncake's 87%: 1,342,177,280 / (0.87 x 12.5e9) + 10 us = 123.4286 ms;
  // four ranks sending their heads' shares in parallel: 30.8647 ms.
  t.efficiency = default_kv_link_efficiency;
  CHECK(kv_transfer_time(t, kv).value() == doctest::Approx(123.42860e-3));
  CHECK(kv_transfer_time(t, kv, 4).value() == doctest::Approx(30.864650e-3));
  t.efficiency = 0;
  CHECK_THROWS_WITH_AS(kv_transfer_time(t, kv), "kv_link.efficiency must be in [0.01, 1] (got 0)", std::invalid_argument);
}

TEST_CASE("disaggregated goodput: the decode pool's rate, or less where the prefill queue and the link break TTFT") {
  const deployment one = fleet_of("llama-3.1-8b", "bf16", 1);
  const workload w = test::requests(4096, 500);
  const double S = one.prefill(4096).estimate.value();
  const double handling = one.efficiency().per_request.value();
  const auto step = [&](double n) { return one.decode(n, 4346).estimate.value(); };
  // 4,096 x 131,072 B = 536,870,912 B over one lane at 0.87 x 50 GB/s: 12.341 ms + 4 us.
  kv_transfer ib{find_link("ib-ndr")};
  const double wire = 536870912.0 / (0.87 * 50e9);
  // TTFT(rate) = handling + prefill queue (M/D/1 at rate / x) + S + transfer + link queue (M/D/1 at rate / min(x, y)).
  const auto ttft = [&](double rate, int x, int y, double w_s) {
    const double rp = rate / x, rl = rate / std::min(x, y);
    return handling + rp * S * S / (2 * (1 - rp * S)) + S + w_s + 4e-6 + rl * w_s * w_s / (2 * (1 - rl * w_s));
  };
  SUBCASE("decode binds: one decode instance at 20 ms per token, three prefill ones with room") {
    const pd_row r = serve_disaggregated(one, 3, one, 1, w, ib, {make_seconds(2.0), make_seconds(0.020)});
    CHECK(r.transfer.value() == doctest::Approx(wire + 4e-6));
    const double n = detail::last_true([&](double m) { return step(m) <= 0.020; }, 1, 2, slots_for(one, w).slots, true);
    REQUIRE(step(n) <= 0.020);
    REQUIRE(step(n + 1) > 0.020);
    // n / (499 x step(n)) requests/s (500 tokens, the first from the prefill
    // pool), and TTFT at that rate within 2 s.
    CHECK(r.requests_per_s == doctest::Approx(n / (499 * step(n))));
    CHECK(r.limit == serving_limit::tokens_per_s);
    CHECK(r.ttft.value() == doctest::Approx(ttft(r.requests_per_s, 3, 1, wire)));
    CHECK(r.ttft.value() <= 2.0);
    CHECK(r.devices == 4);
  }
  SUBCASE("the prefill queue binds: one prefill instance for 7 decode ones under a tight TTFT") {
    const double target = handling + S + wire + 4e-6 + 0.010;  // 10 ms of queueing allowed
    const pd_row r = serve_disaggregated(one, 1, one, 7, w, ib, {make_seconds(target), make_seconds(0)});
    CHECK(r.limit == serving_limit::ttft);
    CHECK(r.ttft.value() == doctest::Approx(target).epsilon(1e-9));
    CHECK(ttft(r.requests_per_s, 1, 7, wire) == doctest::Approx(target).epsilon(1e-9));
  }
  SUBCASE("the link binds: 3 prefill instances hand over to 1 decode instance over 10 GbE") {
    const kv_transfer slow{find_link("eth-10g")};
    const double w10 = 536870912.0 / (0.87 * 1.25e9);  // 493.7 ms on the wire
    const pd_row r = serve_disaggregated(one, 3, one, 1, w, slow, {make_seconds(5.0), make_seconds(0)});
    CHECK(r.limit == serving_limit::link);
    // The link queue fills first: rate x wire is busier than rate / 3 x S.
    CHECK(r.requests_per_s * w10 > r.requests_per_s / 3 * S);
    CHECK(r.requests_per_s < 1 / w10);
    CHECK(r.ttft.value() == doctest::Approx(5.0).epsilon(1e-6));
  }
}

TEST_CASE("Erlang C: the chance of waiting in M/M/c, the prefill queue of data-parallel attention ranks") {
  // c = 1: a itself. c = 2, a = 1 (rho 0.5): (1/2! / 0.5) / (1 + 1 + 1) = 1/3.
  CHECK(detail::erlang_c(1, 0.3) == doctest::Approx(0.3));
  CHECK(detail::erlang_c(2, 1.0) == doctest::Approx(1.0 / 3));
  // c = 4, a = 2: sum_{k<4} 2^k/k! = 1 + 2 + 2 + 4/3 = 6.3333; 2^4/4! / (1 - 0.5) = 1.3333;
  // 1.3333 / 7.6667 = 0.173913.
  CHECK(detail::erlang_c(4, 2.0) == doctest::Approx(0.173913).epsilon(1e-5));
  // More servers at the same utilisation wait less often.
  for (double rho : {0.2, 0.5, 0.9}) {
    CAPTURE(rho);
    CHECK(detail::erlang_c(8, 8 * rho) < detail::erlang_c(2, 2 * rho));
    CHECK(detail::erlang_c(2, 2 * rho) < detail::erlang_c(1, rho));
  }
  // A DeepSeek-V3 prefill instance of 8 H200s with DP attention takes 8 prompts at
  // once: at the same rate its queue waits less than the one-server formula says.
  const device& h200 = find_device("h200");
  parallel_plan dp;
  dp.ep = 8;
  dp.tp = 1;
  const deployment pre(find_model("deepseek-v3"), precision::of(find_format("fp8"), find_format("fp8")),
                       roofline(h200, default_profile(h200, "sglang")), {dp, std::nullopt},
                       configure_engine("sglang", h200));
  const workload w = test::requests(2048, 256);
  const pd_split split(pre, 1, pre, 1, w, kv_transfer{find_link("nvlink4")}, {make_seconds(3600), make_seconds(0)});
  // Alone a prompt takes S; eight at once (one per rank, sharing the experts) Sc each.
  const double S = pre.prefill(2048).estimate.value();
  const double Sc = pre.prefill(2048, 0, 8).estimate.value();
  REQUIRE(Sc > S);
  REQUIRE(Sc < 8 * S);
  // At 4 prompts per Sc (rho = 0.5 over 8 ranks) the queue is Allen-Cunneen's,
  // erlang_c(8, 4) x Sc / (8 x 0.5) (deterministic service: E[S^2] / 2S^2 = 1/2),
  // and the prompt itself takes S + (Sc - S) x 0.5.
  const double rate = 4 / Sc;
  const double queue = detail::erlang_c(8, 4.0) * Sc / (8 * 0.5) / 2;
  const double alone = split.ttft_at(1e-12);
  CHECK(split.ttft_at(rate) - alone == doctest::Approx(queue + (Sc - S) * 0.5).epsilon(1e-6));
  CHECK(std::isinf(split.ttft_at(8.01 / Sc)));  // beyond eight prompts per Sc
  CHECK(std::isfinite(split.ttft_at(7.99 / Sc)));
  // Erlang B's recursion stays finite where a^c / c! does not.
  CHECK(detail::erlang_c(2000, 1900.0) > 0);
  CHECK(detail::erlang_c(2000, 1900.0) < 1);
}

TEST_CASE("a P/D split under a fixed number of users: Little's law, one user alone, saturation") {
  const deployment one = fleet_of("llama-3.1-8b", "bf16", 1);
  const workload w = test::requests(2048, 256);
  const pd_split split(one, 1, one, 1, w, kv_transfer{find_link("nvlink4")}, {make_seconds(3600), make_seconds(0)});
  // One user: a request at a time, rate 1 / (TTFT + 255 TPOT), TTFT = handling + S + hand-over, TPOT step(1).
  const pd_loop_result alone = serve_disaggregated_loop(split, w, 1);
  CHECK(alone.ttft.value() == doctest::Approx(split.ttft_at(0)).epsilon(1e-6));
  CHECK(alone.tpot.value() == doctest::Approx(split.step(1)).epsilon(1e-6));
  CHECK(alone.requests_per_s == doctest::Approx(1 / (alone.ttft + 255.0 * alone.tpot).value()).epsilon(1e-6));
  double last_rate = 0, last_tpot = 0;
  for (double users : {1.0, 8.0, 64.0, 256.0}) {
    CAPTURE(users);
    const pd_loop_result c = serve_disaggregated_loop(split, w, users);
    // Little's law over the users inside; the rest wait in TTFT.
    CHECK(c.requests_per_s * (c.ttft - c.queue_wait + 255.0 * c.tpot).value() == doctest::Approx(c.inside).epsilon(1e-6));
    CHECK(c.inside + c.queue_wait.value() * c.requests_per_s == doctest::Approx(users).epsilon(1e-6));
    CHECK(c.requests_per_s >= last_rate);
    CHECK(c.tpot.value() >= last_tpot);
    last_rate = c.requests_per_s;
    last_tpot = c.tpot.value();
  }
  CHECK_THROWS_WITH_AS(serve_disaggregated_loop(split, w, 0.5), "users must be a whole number (got 0.5)",
                       std::invalid_argument);
}

TEST_CASE("users over aggregated replicas: as evenly as they go, requests/s the sum, times over requests") {
  const deployment one = fleet_of("llama-3.1-8b", "bf16", 1);
  const workload w = test::requests(2048, 256);
  const closed_loop_result two = serve_closed_loop(one, w, 2), three = serve_closed_loop(one, w, 3);
  // 5 users over 2 replicas: q = floor(5 / 2) = 2, 5 - 2 x 2 = 1 replica holds 3.
  // A benchmark's mean is over requests: each replica weighs its requests/s,
  // R2 / (R2 + R3) and R3 / (R2 + R3).
  const pd_loop_result c = serve_replicated_loop(one, 2, w, 5);
  const double r2 = two.requests_per_s, r3 = three.requests_per_s;
  CHECK(c.users == 5);
  CHECK(c.requests_per_s == doctest::Approx(r2 + r3));
  CHECK(c.ttft.value() == doctest::Approx((r2 * two.ttft.value() + r3 * three.ttft.value()) / (r2 + r3)));
  CHECK(c.tpot.value() == doctest::Approx((r2 * two.tpot.value() + r3 * three.tpot.value()) / (r2 + r3)));
  CHECK(c.inside == doctest::Approx(5));
  // The fuller replica sends more requests/s; Little's law holds over every
  // user: inside + wait x rate.
  CHECK(r3 > r2);
  CHECK(c.inside + c.queue_wait.value() * c.requests_per_s == doctest::Approx(5).epsilon(1e-9));
  // Users beyond a replica's slots wait: 41 users of 100k-token prompts on 2
  // replicas (12.2 GiB of KV each beside 15 GiB of weights on 80 GB: a few slots).
  const workload big = test::requests(100000, 256);
  const closed_loop_result q20 = serve_closed_loop(one, big, 20), q21 = serve_closed_loop(one, big, 21);
  REQUIRE(q20.queue_wait.value() > 0);
  const pd_loop_result crowd = serve_replicated_loop(one, 2, big, 41);
  CHECK(crowd.inside == doctest::Approx(q20.active + q21.active));
  CHECK(crowd.inside + crowd.queue_wait.value() * crowd.requests_per_s == doctest::Approx(41).epsilon(1e-9));
  // Even: 8 users over 4 replicas is 4 loops of 2; fewer users than replicas, 3 loops of 1.
  const pd_loop_result even = serve_replicated_loop(one, 4, w, 8);
  CHECK(even.requests_per_s == doctest::Approx(4 * two.requests_per_s));
  CHECK(even.ttft.value() == doctest::Approx(two.ttft.value()));
  const closed_loop_result alone = serve_closed_loop(one, w, 1);
  const pd_loop_result sparse = serve_replicated_loop(one, 4, w, 3);
  CHECK(sparse.requests_per_s == doctest::Approx(3 * alone.requests_per_s));
  CHECK(sparse.tpot.value() == doctest::Approx(alone.tpot.value()));
  // One replica is the closed loop itself.
  const pd_loop_result single = serve_replicated_loop(one, 1, w, 3);
  CHECK(single.ttft.value() == doctest::Approx(three.ttft.value()));
  CHECK(single.requests_per_s == doctest::Approx(three.requests_per_s));
  CHECK_THROWS_WITH_AS(serve_replicated_loop(one, 0, w, 3), "replicas must be in [1, 65536] (got 0)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(serve_replicated_loop(one, 2, w, 2.5), "users must be a whole number (got 2.5)",
                       std::invalid_argument);
}

TEST_CASE("the comparison under a fixed concurrency: every layout's closed loop beside its goodput, no targets") {
  const workload w = test::requests(4096, 500);
  const deployment eight = fleet_of("llama-3.1-70b", "fp8", 8);
  const serving_targets t{make_seconds(1.0), make_seconds(0.040)};
  const pd_comparison c = compare_disaggregation(eight, w, t, 2, std::nullopt, 64.0);
  const pd_comparison plain = compare_disaggregation(eight, w, t, 2);
  REQUIRE(c.rows.size() == 5);
  CHECK(c.output == 500);
  const deployment tp2 = pd_instance(eight, w, 2);
  for (std::size_t i = 0; i < c.rows.size(); ++i) {
    const pd_row& r = c.rows[i];
    CAPTURE(r.label);
    REQUIRE(r.loop);
    CHECK_FALSE(plain.rows[i].loop);
    CHECK(r.requests_per_s == plain.rows[i].requests_per_s);  // the goodput does not move
    CHECK(r.loop->users == 64);
    // Every user is inside or waiting (Little's law on the wait).
    CHECK(r.loop->inside + r.loop->queue_wait.value() * r.loop->requests_per_s == doctest::Approx(64).epsilon(1e-6));
  }
  // Aggregated: 4 replicas of TP 2 hold 16 users each; the fleet as one TP 8 instance holds all 64.
  CHECK(c.rows[0].loop->requests_per_s == doctest::Approx(4 * serve_closed_loop(tp2, w, 16).requests_per_s));
  CHECK(c.rows[1].loop->ttft.value() == doctest::Approx(serve_closed_loop(eight, w, 64).ttft.value()));
  // 2P2D: its split without targets (a TTFT target of an hour stands for none).
  const pd_split two(tp2, 2, tp2, 2, w, c.link, {make_seconds(3600), make_seconds(0)});
  CHECK(c.rows[3].label == "2P2D");
  CHECK(c.rows[3].loop->tpot.value() == doctest::Approx(serve_disaggregated_loop(two, w, 64).tpot.value()));
  CHECK_THROWS_WITH_AS(compare_disaggregation(eight, w, t, 2, std::nullopt, 0.0), "users must be in [1, 1000000] (got 0)",
                       std::invalid_argument);
}

TEST_CASE("property: more decode instances, a faster link or a layer-wise hand-over never lower the goodput") {
  const deployment one = fleet_of("llama-3.1-8b", "bf16", 1);
  const workload w = test::requests(8192, 300);
  const serving_targets t{make_seconds(3.0), make_seconds(0.025)};
  kv_transfer slow{find_link("eth-10g")};
  kv_transfer fast{find_link("nvlink4")};
  double last = 0;
  for (int y = 1; y <= 6; ++y) {
    const double g = serve_disaggregated(one, 2, one, y, w, fast, t).requests_per_s;
    CHECK(g >= last * (1 - 1e-9));
    last = g;
  }
  CHECK(serve_disaggregated(one, 2, one, 2, w, fast, t).requests_per_s >=
        serve_disaggregated(one, 2, one, 2, w, slow, t).requests_per_s);
  kv_transfer overlap = slow;
  overlap.layerwise = true;
  const pd_row plain = serve_disaggregated(one, 2, one, 2, w, slow, t);
  const pd_row layered = serve_disaggregated(one, 2, one, 2, w, overlap, t);
  CHECK(layered.transfer < plain.transfer);
  CHECK(layered.requests_per_s >= plain.requests_per_s);
  // 8,192 x 131,072 B over 10 GbE at 87%: 987.3 ms whole, which outlasts the
  // prefill: what remains is that excess (transfer - S x 31/32) or a layer's share.
  const double S = one.prefill(8192).estimate.value();
  const double wire = 8192.0 * 131072 / (0.87 * 1.25e9);
  CHECK(layered.transfer.value() == doctest::Approx(30e-6 + std::max(wire / 32, wire - S * 31 / 32)));
}

TEST_CASE("aggregated goodput: the highest rate whose open loop meets both targets") {
  const deployment one = fleet_of("llama-3.1-8b", "bf16", 1);
  const workload w = test::requests(4096, 500);
  const serving_targets t{make_seconds(1.0), make_seconds(0.020)};
  const pd_row r = serve_aggregated(one, 3, w, t);
  const double per = r.requests_per_s / 3;
  const load_result at = serve_at_rate(one, w, per);
  CHECK(at.stable);
  CHECK(at.tpot.value() <= 0.020 * (1 + 1e-9));
  CHECK(at.ttft.value() <= 1.0);
  const load_result past = serve_at_rate(one, w, per * 1.01);
  CHECK((!past.stable || past.tpot.value() > 0.020 || past.ttft.value() > 1.0));
  CHECK(r.label == "aggregated 3 x 1 device");
  CHECK(r.devices == 3);
}

TEST_CASE("the comparison: P/D wins a strict TPOT target on a large fleet, loses on a small one and at high prefix reuse") {
  const workload w = test::requests(4096, 500);
  // Llama-3.1-70B FP8 on 8 x H100 at 50 tokens/s per user: TP 4 instances
  // are the fewest that decode within 20 ms; 1P1D beats both aggregated
  // layouts (3.14 requests/s against TP 8's 2.52). At 60 tokens/s the
  // aggregated TP 8 now wins: its one-shot all-reduces (3-5 us, the kernel
  // database) no longer pay a ring's 14 link latencies each.
  const deployment eight = fleet_of("llama-3.1-70b", "fp8", 8);
  const pd_comparison big = compare_disaggregation(eight, w, {make_seconds(1.0), make_seconds(1.0 / 50)});
  REQUIRE(big.rows.size() == 3);
  CHECK(big.rows[0].label == "aggregated 2 x TP 4");
  CHECK(big.rows[1].label == "aggregated 1 x TP 8");
  CHECK(big.rows[2].label == "1P1D");
  CHECK(big.rows[big.best].disaggregated);
  CHECK(big.link.link.id == "nvlink4");
  // TP 2 instances at 25 tokens/s: every split from 1P3D to 3P1D.
  const pd_comparison tp2 = compare_disaggregation(eight, w, {make_seconds(1.0), make_seconds(0.040)}, 2);
  CHECK(tp2.rows.size() == 5);
  CHECK(tp2.rows[2].label == "1P3D");
  CHECK(tp2.rows[4].label == "3P1D");
  // Most of every prompt cached: little prefill left to take off the decode devices.
  workload cached = w;
  cached.prefix = 3584;
  const pd_comparison reuse = compare_disaggregation(eight, cached, {make_seconds(1.0), make_seconds(0.040)}, 2);
  CHECK_FALSE(reuse.rows[reuse.best].disaggregated);
  // Two devices: 1P1D halves the decode pool.
  const deployment two = fleet_of("llama-3.1-8b", "bf16", 2);
  const pd_comparison small = compare_disaggregation(two, w, {make_seconds(1.0), make_seconds(1.0 / 60)});
  CHECK_FALSE(small.rows[small.best].disaggregated);
  CHECK(small.why.find("1P1D") != std::string::npos);
}

TEST_CASE("a split no rate serves: a lone request's TTFT, the link named when the hand-over is most of it") {
  // Llama-3.1-8B's 4k prompt (128 KiB a token: 537 MB) over 10 GbE at 1% of
  // its 1.25 GB/s: 537e6 / 12.5e6 = 43 s, beyond a 1 s TTFT at any rate.
  const workload w = test::requests(4096, 500);
  const deployment eight = fleet_of("llama-3.1-8b", "bf16", 8);
  kv_transfer slow;
  slow.link = find_link("eth-10g");
  slow.efficiency = 0.01;
  const pd_comparison c = compare_disaggregation(eight, w, {make_seconds(1.0), make_seconds(0)}, 1, slow);
  bool split = false;
  for (const pd_row& r : c.rows) {
    if (!r.disaggregated) continue;
    split = true;
    CHECK(r.requests_per_s == 0);
    CHECK(r.limit == serving_limit::link);
    CHECK(r.ttft.value() >= r.transfer.value());  // not the 0 it printed
    CHECK(r.transfer.value() == doctest::Approx(4096 * 131072.0 / 12.5e6).epsilon(0.02));
  }
  CHECK(split);
  CHECK(c.why.find("its KV hand-over alone takes") != std::string::npos);
  slow.efficiency = 1e-9;
  CHECK_THROWS_WITH_AS(kv_transfer_time(slow, make_bytes(1e9)), "kv_link.efficiency must be in [0.01, 1] (got 1e-09)",
                       std::invalid_argument);
}

TEST_CASE("disaggregation is refused where the engine or the fleet cannot do it") {
  const workload w = test::requests(4096, 500);
  CHECK_THROWS_WITH_AS(pd_instance(fleet_of("llama-3.1-8b", "bf16", 2, "llama.cpp"), w),
                       "llama.cpp does not serve prefill and decode apart (vLLM, SGLang and TensorRT-LLM do)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(pd_instance(fleet_of("llama-3.1-8b", "bf16", 4), w, 3),
                       "instance devices must divide the fleet's 4 devices (got 3)", std::invalid_argument);
  CHECK_THROWS_AS(pd_instance(fleet_of("llama-3.1-405b", "bf16", 2), w), std::invalid_argument);
  const deployment one = fleet_of("llama-3.1-8b", "bf16", 1);
  const serving_targets t{make_seconds(1), make_seconds(0)};
  CHECK_THROWS_WITH_AS(serve_disaggregated(one, 0, one, 1, w, {}, t), "prefill instances must be in [1, 65536] (got 0)",
                       std::invalid_argument);
  const deployment other = fleet_of("qwen3-8b", "bf16", 1);
  CHECK_THROWS_AS(serve_disaggregated(one, 1, other, 1, w, {}, t), std::invalid_argument);
  CHECK_THROWS_WITH_AS(serve_disaggregated(one, 1, one, 1, w, {}, {}), "ttft_target must be > 0 s for a goodput (got 0)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(pd_instance(one, w), "disaggregation needs at least 2 devices (got 1)", std::invalid_argument);
}

TEST_CASE("a row's power counts every device of both pools") {
  const deployment one = fleet_of("llama-3.1-8b", "bf16", 1);
  const workload w = test::requests(4096, 500);
  const serving_targets t{make_seconds(1.0), make_seconds(0.020)};
  const pd_row r = serve_disaggregated(one, 1, one, 3, w, kv_transfer{find_link("ib-ndr")}, t);
  const device& h100 = one.dev();
  // Prefill device: the prefill's power for its busy share, 13% of 700 W = 91 W idle otherwise;
  // three decode devices at their step's power.
  const double prefill_w = step_power_w(h100, one.prefill(4096));
  const double decode_w = step_power_w(h100, one.decode(std::max(1.0, r.decode_users), 4096 + 250));
  REQUIRE(r.power_w);
  CHECK(*r.power_w == doctest::Approx(r.prefill_utilisation * prefill_w + (1 - r.prefill_utilisation) * 91 + 3 * decode_w));
  CHECK(*r.joules_per_output_token() == doctest::Approx(*r.power_w / r.output_tokens_per_s));
  // Aggregated: each device prefills its share of the time and decodes the rest.
  const pd_row a = serve_aggregated(one, 2, w, t);
  const double busy = a.prefill_utilisation;
  const double step_w = step_power_w(h100, one.decode(std::max(1.0, serve_at_rate(one, w, a.requests_per_s / 2).decoding),
                                                      4096 + 250));
  CHECK(*a.power_w == doctest::Approx(2 * (busy * prefill_w + (1 - busy) * step_w)));
}

TEST_CASE("root_increasing: regula falsi with the Illinois step, bracketed, infinite ends halved") {
  int calls = 0;
  // An affine function: its root 3.25 in one step.
  const double a = detail::root_increasing([&](double x) { ++calls; return 4 * x - 13; }, 0, 10, 1e-12);
  CHECK(a == doctest::Approx(3.25).epsilon(1e-12));
  CHECK(calls <= 4);
  // x^2 - 2 on [0, 2]: sqrt(2) = 1.41421356237 to 1e-12 of the bracket's end.
  calls = 0;
  const double r = detail::root_increasing([&](double x) { ++calls; return x * x - 2; }, 0, 2, 1e-12);
  CHECK(r == doctest::Approx(1.41421356237).epsilon(1e-11));
  CHECK(calls < 30);  // bisection would take 41
  // Infinite above 5 (a queue that does not keep up): halves into the finite part.
  const double q = detail::root_increasing(
      [](double x) { return x > 5 ? std::numeric_limits<double>::infinity() : x - 4; }, 0, 100, 1e-12);
  CHECK(q == doctest::Approx(4).epsilon(1e-11));
  // Roots at an end: the end itself.
  CHECK(detail::root_increasing([](double x) { return x; }, 0, 1, 1e-9) == 0);
  CHECK(detail::root_increasing([](double x) { return x - 2; }, 0, 1, 1e-9) == 1);
}
