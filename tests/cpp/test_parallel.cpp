#include <doctest/doctest.h>

#include <stdexcept>

#include "llmroof/layout/offload.hpp"
#include "llmroof/layout/parallel.hpp"
#include "llmroof/serving/serving.hpp"
#include "llmroof/engine/engine_profile.hpp"

using namespace llmroof;

namespace {
const precision fp8 = precision::of(find_format("fp8"), find_format("bf16"));
const op& find_op(const op_counts& c, op_kind k) {
  for (const auto& o : c.list()) {
    if (o.kind == k) return o;
  }
  FAIL("missing op");
  return c.ops[0];
}
parallel_plan tp(int n, int per_node = 8) {
  parallel_plan p;
  p.tp = n;
  p.devices_per_node = per_node;
  return p;
}
}  // namespace

TEST_CASE("Llama-3.1-405B in FP8: not on one H100, yes on 8 with TP8") {
  const architecture& a = find_model("llama-3.1-405b");
  const device& h100 = find_device("h100-sxm");
  const memory_plan one = plan_memory_parallel(a, fp8, h100, tp(1, 1), 1, 4096);
  CHECK_FALSE(one.weights_fit);
  CHECK(in_GiB(one.shortfall()) > 300);
  const memory_plan eight = plan_memory_parallel(a, fp8, h100, tp(8), 1, 4096);
  CHECK(eight.weights_fit);
  CHECK(eight.fits);
  // 410 GB of weights over 8 devices: ~47.8 GiB each of 72 GiB usable.
  CHECK(in_GiB(eight.weights) == doctest::Approx(47.76).epsilon(0.01));
  CHECK(in_GiB(eight.kv_budget) > 15);
  // KV per device: 8 KV heads over TP8, one head each: 2 x 128 x 2 B x 126 layers = 64,512 B/token.
  CHECK(eight.kv_per_token.value() == doctest::Approx(64512.0));
}

TEST_CASE("DeepSeek-V3 in FP8 fits 8 x H200; Kimi K2 needs two nodes of 8 x H100") {
  CHECK(plan_memory_parallel(find_model("deepseek-v3"), fp8, find_device("h200"), tp(8), 1, 32768).fits);
  CHECK_FALSE(plan_memory_parallel(find_model("kimi-k2"), fp8, find_device("h100-sxm"), tp(8), 1, 4096).weights_fit);
  const memory_plan two = plan_memory_parallel(find_model("kimi-k2"), fp8, find_device("h100-sxm"), tp(16), 1, 4096);
  CHECK(two.weights_fit);
  CHECK(tp(16).nodes() == 2);
  parallel_plan pp2 = tp(8);
  pp2.pp = 2;
  CHECK(plan_memory_parallel(find_model("kimi-k2"), fp8, find_device("h100-sxm"), pp2, 1, 4096).weights_fit);
}

TEST_CASE("tensor parallel: weights split, all-reduces counted by hand") {
  const architecture& a = find_model("llama-3.1-70b");
  const device& h100 = find_device("h100-sxm");
  const op_counts one = count_decode(a, precision{}, 1, 1024);
  const op_counts four = count_decode_parallel(a, precision{}, h100, tp(4), 1, 1024);
  CHECK(find_op(four, op_kind::ffn).weights.value() == doctest::Approx(find_op(one, op_kind::ffn).weights.value() / 4));
  // Two all-reduces per layer of 1 x 8192 x 2 B = 16,384 B; a ring sends
  // 2 x 3/4 of it per device: 24,576 B x 160 = 3,932,160 B.
  const op& ar = find_op(four, op_kind::all_reduce);
  CHECK(ar.count == 160);
  CHECK(ar.network.value() == doctest::Approx(3932160.0));
  CHECK(ar.link_bandwidth.value() == doctest::Approx(450e9));  // NVLink 4, each way
  // KV: 8 heads over 4 devices, 2 each: a quarter of the cache per device.
  CHECK(find_op(four, op_kind::attention_global).kv_read.value() ==
        doctest::Approx(find_op(one, op_kind::attention_global).kv_read.value() / 4));
  // TP16 over 2 nodes: KV heads replicate (g = 8 < 16), collectives cross InfiniBand.
  const op_counts sixteen = count_decode_parallel(a, precision{}, h100, tp(16), 1, 1024);
  CHECK(find_op(sixteen, op_kind::attention_global).kv_read.value() ==
        doctest::Approx(find_op(one, op_kind::attention_global).kv_read.value() / 8));
  CHECK(find_op(sixteen, op_kind::all_reduce).link_bandwidth.value() == doctest::Approx(50e9));
}

TEST_CASE("llama.cpp's row split: matrices by rows, attention and KV on the main device") {
  // Llama-3.1-8B on 2 RTX 4090s, --split-mode row: the main device attends
  // over every head (the whole KV read) and holds the whole cache; the
  // matrices' weights split in two.
  const architecture& a = find_model("llama-3.1-8b");
  const device& g = find_device("rtx-4090");
  parallel_plan row = tp(2, 2);
  row.row_split = true;
  const op_counts one = count_decode(a, precision{}, 1, 1024);
  const op_counts two = count_decode_parallel(a, precision{}, g, row, 1, 1024);
  CHECK(find_op(two, op_kind::attention_global).kv_read.value() ==
        find_op(one, op_kind::attention_global).kv_read.value());
  CHECK(find_op(two, op_kind::ffn).weights.value() == doctest::Approx(find_op(one, op_kind::ffn).weights.value() / 2));
  // Four split products per layer, each its input out and its output back,
  // half of both cross: widths (4,096 + 48 x 128) + (4,096 + 4,096) + (4,096 +
  // 2 x 14,336) + (14,336 + 4,096) = 69,632 per token; x 2 B x 1/2 = 69,632 B
  // per layer, 17,408 B per product, 4 x 32 = 128 products: 2,228,224 B.
  const op& rs = find_op(two, op_kind::all_reduce);
  CHECK(rs.name == "comm.row_split");
  CHECK(rs.count == 128);
  CHECK(rs.network.value() == doctest::Approx(2228224.0));
  // Memory: the main device's whole cache, 32 x 2 x 8 x 128 x 2 B = 131,072 B
  // a token, where TP 2 holds half of it.
  const memory_plan m = plan_memory_parallel(a, precision{}, g, row, 1, 4096);
  CHECK(m.kv_per_token.value() == 131072.0);
  CHECK(plan_memory_parallel(a, precision{}, g, tp(2, 2), 1, 4096).kv_per_token.value() == 65536.0);
  // Prefill: attention unsplit, the same transfers per token.
  const pipelined_counts pf = count_prefill_parallel(a, precision{}, g, row, 512);
  CHECK(find_op(pf.counts, op_kind::all_reduce).network.value() == doctest::Approx(512 * 2228224.0));
  CHECK(find_op(pf.counts, op_kind::attention_global).flop.value() ==
        find_op(count_prefill(a, precision{}, 512), op_kind::attention_global).flop.value());
  // Rows of any matrix split, so no heads to divide; never beside pp, nor on a MoE model.
  parallel_plan three = tp(3, 4);
  three.row_split = true;
  CHECK_NOTHROW(validate(three, a));
  row.pp = 2;
  row.tp = 2;
  CHECK_THROWS_WITH_AS(validate(row, a), "row_split needs tp > 1 alone (no pp, ep or dp_attention beside it)",
                       std::invalid_argument);
  parallel_plan moe_rows = tp(2, 2);
  moe_rows.row_split = true;
  CHECK_THROWS_WITH_AS(validate(moe_rows, find_model("qwen3-30b-a3b")),
                       doctest::Contains("does not split a Mixture-of-Experts model's experts"), std::invalid_argument);
}

TEST_CASE("a parallel step costs link time and is faster than one device when weights dominate") {
  const architecture& a = find_model("llama-3.1-70b");
  const device& h100 = find_device("h100-sxm");
  const efficiency_profile e = default_profile(h100);
  const phase_timing one = decode_step_parallel(a, precision{}, h100, e, tp(1, 1), 1, 1024);
  const phase_timing four = decode_step_parallel(a, precision{}, h100, e, tp(4), 1, 1024);
  CHECK(four.estimate < one.estimate);
  CHECK(four.estimate.value() > one.estimate.value() / 4);  // collectives and overhead
  CHECK(four.link_time.value() > 0);
  CHECK(four.bound <= four.estimate);
}

TEST_CASE("expert parallel: DP attention, experts split, all-to-all") {
  const architecture& a = find_model("deepseek-v3");
  const device& h200 = find_device("h200");
  parallel_plan ep;
  ep.ep = 8;
  const op_counts c = count_decode_parallel(a, fp8, h200, ep, 64, 4096);
  const op& x = find_op(c, op_kind::all_to_all);
  // Per rank and MoE layer: 2 x 64 x 8 x 7/8 x 7168 x 2 B / 8 = 1,605,632 B, in two halves, 58 layers.
  CHECK(x.count == 2 * 58);
  CHECK(x.network.value() == doctest::Approx(58 * 1605632.0));
  // Each of the 116 exchanges sends to the 7 other ranks at once (DeepEP,
  // NCCL's all-to-all): one round of 1.5 us (NVLink 4), 116 x 1.5 us =
  // 0.174 ms, beside 93,126,656 B / (0.8 x 450e9 B/s) = 0.258685 ms of bytes:
  // 0.432685 ms per step (were 7 hops each, 1.477 ms).
  CHECK(x.latency.value() == doctest::Approx(1.5e-6));
  CHECK(roofline(h200).time(x).estimate().value() == doctest::Approx(0.432685e-3).epsilon(1e-6));
  const memory_plan m = plan_memory_parallel(a, fp8, h200, ep, 64, 4096);
  CHECK(m.weights_fit);
  CHECK(m.devices == 8);
  parallel_plan bad = ep;
  bad.tp = 12;
  CHECK_THROWS_WITH_AS(validate(bad, a),
                       "ep (8) must divide tp (12): each group of tp / ep devices splits its experts by tensor parallelism",
                       std::invalid_argument);
  bad.tp = 1;
  bad.pp = 2;
  CHECK_THROWS_WITH_AS(validate(bad, a), "ep > 1 needs pp = 1 (expert parallelism beside pipeline stages is not modelled)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(validate(ep, find_model("llama-3.1-8b")), "ep > 1 needs a Mixture-of-Experts model ('llama-3.1-8b' is dense)",
                       std::invalid_argument);
}

TEST_CASE("TP attention x EP experts: TP's bytes once every expert is touched, the busiest group's below") {
  // Qwen3-30B-A3B (128 experts, top 8, 48 layers, hidden 2048, expert FFN
  // 768: 3 x 2048 x 768 = 4,718,592 parameters per expert and layer) in BF16
  // on 4 H100s: TP 4 against TP 4 x EP 4 (4 groups of 32 whole experts) and
  // TP 4 x EP 2 (2 groups of 64, each expert split over 2 devices).
  const architecture& a = find_model("qwen3-30b-a3b");
  const device& h100 = find_device("h100-sxm");
  const precision bf16{};
  parallel_plan tpep = tp(4);
  tpep.ep = 4;
  parallel_plan tp4ep2 = tp(4);
  tp4ep2.ep = 2;
  CHECK(tpep.devices() == 4);
  CHECK(!tpep.attention_data_parallel());
  CHECK(layout_name(tpep) == "TP 4 x EP 4");
  validate(tpep, a);
  // 4,096 tokens touch all 128 experts: a device reads 32 whole experts (EP 4)
  // or 64 halves (EP 2): 32 x 4,718,592 x 48 x 2 B = 14,495,514,624 B, what
  // TP 4 reads (a quarter of each of 128).
  const double all_experts_per_device = 32.0 * 4718592 * 48 * 2;
  // (Counts kept by name: find_op returns a reference into them.)
  const op_counts full_tp = count_decode_parallel(a, bf16, h100, tp(4), 4096, 1024);
  const op_counts full_ep = count_decode_parallel(a, bf16, h100, tpep, 4096, 1024);
  const op_counts full_ep2 = count_decode_parallel(a, bf16, h100, tp4ep2, 4096, 1024);
  CHECK(find_op(full_tp, op_kind::experts).weights.value() == doctest::Approx(all_experts_per_device).epsilon(1e-6));
  CHECK(find_op(full_ep, op_kind::experts).weights.value() == doctest::Approx(all_experts_per_device).epsilon(1e-6));
  CHECK(find_op(full_ep2, op_kind::experts).weights.value() == doctest::Approx(all_experts_per_device).epsilon(1e-6));
  // Attention stays tensor-parallel: the same attention bytes as TP 4.
  CHECK(find_op(count_decode_parallel(a, bf16, h100, tpep, 8, 1024), op_kind::attention_global).kv_read.value() ==
        doctest::Approx(find_op(count_decode_parallel(a, bf16, h100, tp(4), 8, 1024), op_kind::attention_global)
                            .kv_read.value()));
  // One token picks 8 experts: TP 4 reads a quarter of each (2 experts' worth);
  // the busiest EP group reads its picks whole, at least 2 experts' worth.
  const op_counts one_tp = count_decode_parallel(a, bf16, h100, tp(4), 1, 1024);
  const op_counts one_ep = count_decode_parallel(a, bf16, h100, tpep, 1, 1024);
  CHECK(find_op(one_tp, op_kind::experts).weights.value() == doctest::Approx(2.0 * 4718592 * 48 * 2).epsilon(1e-6));
  CHECK(find_op(one_ep, op_kind::experts).weights.value() > find_op(one_tp, op_kind::experts).weights.value());
  // Memory: a device holds a quarter of the experts either way, and TP's KV share.
  const memory_plan m_tp = plan_memory_parallel(a, bf16, h100, tp(4), 16, 8192);
  const memory_plan m_ep = plan_memory_parallel(a, bf16, h100, tpep, 16, 8192);
  CHECK(m_ep.weights.value() == doctest::Approx(m_tp.weights.value()));
  CHECK(m_ep.kv_needed.value() == doctest::Approx(m_tp.kv_needed.value()));
  CHECK(m_ep.max_sequences == doctest::Approx(m_tp.max_sequences));
  // The prefill splits every op over the 4 (experts balanced over many tokens), as TP does.
  CHECK(prefill_parallel(a, bf16, h100, default_profile(h100), tpep, 2048).estimate.value() ==
        doctest::Approx(prefill_parallel(a, bf16, h100, default_profile(h100), tp(4), 2048).estimate.value()));
}

TEST_CASE("DP attention beside a TP FFN: each device its own sequences' latent KV, one gather-scatter per layer") {
  // DeepSeek-V3 in FP8 on 8 H200s, 64 users at 4,096 tokens: TP 8 keeps
  // every user's MLA latent on every device; with DP attention a device holds
  // its 8 users' whole latents and the whole attention weights.
  const architecture& a = find_model("deepseek-v3");
  const device& h200 = find_device("h200");
  parallel_plan dp = tp(8);
  dp.dp_attention = true;
  validate(dp, a);
  CHECK(dp.attention_data_parallel());
  CHECK(dp.devices() == 8);
  CHECK(layout_name(dp) == "TP 8 with DP attention");
  const memory_plan m_tp = plan_memory_parallel(a, fp8, h200, tp(8), 64, 4096);
  const memory_plan m_dp = plan_memory_parallel(a, fp8, h200, dp, 64, 4096);
  CHECK(m_dp.kv_needed.value() == doctest::Approx(m_tp.kv_needed.value() / 8));
  // Weights: 7/8 of the attention weights more on each device.
  const double attention = fp8.attention_format().bytes_of(count_parameters(a).attention).value();
  CHECK(m_dp.weights.value() - m_tp.weights.value() == doctest::Approx(attention * 7 / 8).epsilon(1e-9));
  CHECK(m_dp.max_sequences > 4 * m_tp.max_sequences);
  // Decode: attention on the device's own 8 sequences (a TP 8 device reads all
  // 64 latents); per layer an all-gather and a reduce-scatter of the batch's
  // hidden states: 2 x 7/8 x 64 x 7,168 x 2 B = 1,605,632 B, 61 layers.
  const op_counts c = count_decode_parallel(a, fp8, h200, dp, 64, 4096);
  const op_counts t = count_decode_parallel(a, fp8, h200, tp(8), 64, 4096);
  const op_counts own = count_decode(a, fp8, 8, 4096);
  CHECK(find_op(c, op_kind::attention_global).kv_read.value() ==
        doctest::Approx(find_op(own, op_kind::attention_global).kv_read.value()));
  CHECK(find_op(t, op_kind::attention_global).kv_read.value() ==
        doctest::Approx(8 * find_op(own, op_kind::attention_global).kv_read.value()));
  const op& x = find_op(c, op_kind::all_reduce);
  CHECK(x.count == 61);
  CHECK(x.network.value() == doctest::Approx(61 * 1605632.0));
  CHECK(find_op(t, op_kind::all_reduce).count == 2 * 61);
  // The experts stay tensor-parallel: TP 8's bytes.
  CHECK(find_op(c, op_kind::experts).weights.value() == doctest::Approx(find_op(t, op_kind::experts).weights.value()));
  parallel_plan bad = dp;
  bad.ep = 8;
  CHECK_THROWS_WITH_AS(
      validate(bad, a),
      "dp_attention beside tp needs ep = 1 and pp = 1 (with expert parallelism give ep alone: DP attention + EP)",
      std::invalid_argument);
  // A prompt's attention runs on one device; the FFN and experts over the 8.
  const efficiency_profile e = default_profile(h200);
  CHECK(prefill_parallel(a, fp8, h200, e, dp, 4096).estimate > prefill_parallel(a, fp8, h200, e, tp(8), 4096).estimate);
  // 64 prompts: each device prefills the attention of its own 8.
  const op_counts batch64 = count_prefill_parallel(a, fp8, h200, dp, 1000, 0, 512, 64).counts;
  const op_counts own8 = count_prefill_chunked(a, fp8, 1000, 0, 8, 0);
  CHECK(find_op(batch64, op_kind::attention_global).flop.value() ==
        doctest::Approx(find_op(own8, op_kind::attention_global).flop.value()));
  CHECK(find_op(batch64, op_kind::attention_proj).weights.value() ==
        doctest::Approx(find_op(own8, op_kind::attention_proj).weights.value()));
  parallel_plan lone = tp(1);
  lone.dp_attention = true;
  CHECK_THROWS_WITH_AS(validate(lone, a), "dp_attention needs tp > 1: the devices whose attention it splits by users",
                       std::invalid_argument);
}

TEST_CASE("engines turn memory into KV budgets their own way") {
  const architecture& a = find_model("llama-3.1-8b");
  const device& h100 = find_device("h100-sxm");
  const memory_plan v = plan_memory(a, precision{}, h100, 1, 0, find_engine("vllm"));
  const memory_plan trt = plan_memory(a, precision{}, h100, 1, 0, find_engine("tensorrt-llm"));
  const memory_plan lc = plan_memory(a, precision{}, h100, 1, 0, find_engine("llama.cpp"));
  // CUDA sees 0.99 x 80 GiB = 79.2 GiB of an H100.
  // TensorRT-LLM: 0.9 x (79.2 GiB - weights - 1 GiB - activations).
  CHECK(trt.kv_budget.value() ==
        doctest::Approx(0.9 * (79.2 * gibi - trt.weights.value() - gibi - trt.activations.value())));
  // Its activations: the forward pass of 8192 tokens, (32 + 2 x 8) x 128 QKV + 3 x 14336 FFN +
  // 2 x 4096 hidden = 57,344 elements x 2 B x 8192 = 939,524,096 B (above 256 x 128,256 x 4 B logits).
  CHECK(trt.activations.value() == doctest::Approx(939524096.0));
  // llama.cpp allocates exactly: everything but weights, 0.5 GiB and its compute buffer.
  CHECK(lc.kv_budget.value() == doctest::Approx(79.2 * gibi - lc.weights.value() - 0.5 * gibi - lc.activations.value()));
  CHECK(lc.kv_budget > v.kv_budget);
  CHECK(find_engine("Ollama").id == engine_id::ollama);
  CHECK_THROWS_WITH_AS(find_engine("sglang@0.4"), "engine version of sglang must be 2024 or 'current' (got '0.4')",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(find_engine("llama.cpp@2023"), "engine version of llama.cpp must be 2024 or 'current' (got '2023')",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(find_engine("vlm"), "unknown engine 'vlm'; closest: vllm, mlx, ollama", std::invalid_argument);
  // Apple: Metal wires about 75% of unified memory: 192 GiB -> 144 GiB.
  const memory_plan mac = plan_memory(a, precision{}, find_device("m2-ultra-76c"), 1, 0, find_engine("mlx"));
  CHECK(in_GiB(mac.capacity) == doctest::Approx(144));
}

TEST_CASE("load: light traffic sees the bare prefill; capacity grows with the TTFT target") {
  const architecture& a = find_model("llama-3.1-8b");
  const deployment d(a, precision{}, roofline(find_device("h100-sxm")));
  workload s;
  s.prompt = 1024;
  s.output = 256;
  const load_result light = serve_at_rate(d, s, 0.01);
  CHECK(light.stable);
  CHECK(light.ttft.value() == doctest::Approx(light.prefill.value()).epsilon(0.01));
  // Little's law: N = rate x (TTFT + (output - 1) x TPOT).
  CHECK(light.users == doctest::Approx(0.01 * (light.ttft.value() + 255 * light.tpot.value())).epsilon(1e-12));
  CHECK(light.users < 0.1);  // 0.01/s x ~2 s in the system: a fiftieth of a user
  // 0.01 requests/s of 256 tokens: 2.56 output tokens/s, not one user's step rate.
  CHECK(light.tokens_per_s_total().value() == doctest::Approx(2.56).epsilon(1e-12));
  // Idle: no users, no tokens, the bare prefill as the first token's time.
  const load_result idle = serve_at_rate(d, s, 0);
  CHECK(idle.stable);
  CHECK(idle.users == 0);
  CHECK(idle.tokens_per_s_total().value() == 0);
  CHECK(idle.ttft.value() == doctest::Approx(idle.prefill.value() + d.efficiency().per_request.value()));
  const double cap_tight = max_rate(d, s, make_seconds(0.1));
  const double cap_loose = max_rate(d, s, make_seconds(2.0));
  CHECK(cap_tight > 0);
  CHECK(cap_loose >= cap_tight);
  CHECK_FALSE(serve_at_rate(d, s, cap_loose * 4).stable);
}

TEST_CASE("max users meets the targets in its closed loop, and one more does not") {
  const architecture& a = find_model("llama-3.1-8b");
  const roofline r(find_device("h100-sxm"));
  workload s;
  s.context = 8192;
  const deployment d(a, precision{}, r);
  // At 25 t/s the KV cache at 8,192 tokens binds (51 users of 1 GiB each); at
  // 80 t/s the speed does. Each request a turn decoding up to 8,192 tokens
  // (5,632 from earlier turns): 35 t/s now stops at 40 users, by speed.
  for (double target : {25.0, 80.0}) {
    CAPTURE(target);
    const users_result u = max_users(d, s, make_tokens_per_second(target), make_seconds(1));
    REQUIRE(u.users > 1);
    // One answer: the headline is those users' closed loop (2,048-token prompts, 512-token answers).
    const closed_loop_result loop = serve_closed_loop(d, s, u.users);
    CHECK(u.tokens_per_s_per_user() == loop.tokens_per_s_per_user().value());
    CHECK(u.tokens_per_s_per_user() >= target);
    CHECK(u.ttft.value() <= 1.0);
    CHECK(u.tokens_per_s_total() == doctest::Approx(loop.requests_per_s * 512));
    if (target == 25) {
      CHECK(u.users == 51);
      CHECK(u.limit == serving_limit::memory);
      CHECK_FALSE(d.memory(52, 8192).fits);
    } else {
      // One more user decodes below the target in the loop: decode speed or the others' prefills.
      CHECK(serve_closed_loop(d, s, u.users + 1).tokens_per_s_per_user().value() < target);
      CHECK((u.limit == serving_limit::tokens_per_s || u.limit == serving_limit::prefill));
    }
  }
}

TEST_CASE("property: per-user tokens/s never rise with users, total never falls, under TP too") {
  const architecture& a = find_model("llama-3.1-70b");
  const device& h100 = find_device("h100-sxm");
  for (int n : {1, 2, 4, 8}) {
    double prev_user = 1e30;
    double prev_total = 0;
    for (double users = 1; users <= 512; users *= 2) {
      const phase_timing step = decode_step_parallel(a, fp8, h100, default_profile(h100), tp(n), users, 2048);
      CHECK(1.0 / step.estimate.value() <= prev_user);
      CHECK(users / step.estimate.value() >= prev_total);
      prev_user = 1.0 / step.estimate.value();
      prev_total = users / step.estimate.value();
    }
  }
}

TEST_CASE("offload: host layers at host bandwidth, experts in RAM, CPU-only devices") {
  const architecture& a = find_model("qwen3-30b-a3b");
  const precision q4 = precision::of(find_format("q4_k_m"), find_format("fp16"));
  const device& gpu = find_device("rtx-3060");
  offload_plan none;
  offload_plan half;
  half.layers = 0.5;
  offload_plan experts;
  experts.experts = true;
  const double t0 = decode_step_offload(a, q4, roofline(gpu), none, 1, 1024).estimate.value();
  const double t50 = decode_step_offload(a, q4, roofline(gpu), half, 1, 1024).estimate.value();
  const double tall = decode_step(a, q4, roofline(find_device("ryzen-9-7950x")), 1, 1024).estimate.value();
  CHECK(t0 < t50);
  CHECK(t50 < tall + t0);
  // Half the layer weights move to the host: (weights - embedding - lm_head) / 2.
  const param_counts pc = count_parameters(a);
  CHECK(host_weight_bytes(a, q4, half).value() ==
        doctest::Approx(0.5 * (weight_bytes(a, q4) - q4.embedding.bytes_of(pc.embedding) - q4.lm_head.bytes_of(pc.lm_head)).value()));
  // Experts on the host: all routed expert weights there.
  CHECK(host_weight_bytes(a, q4, experts).value() == doctest::Approx(q4.experts_format().bytes_of(pc.routed_experts).value()));
  // Experts on the host cross PCIe twice per MoE layer: 96 crossings.
  const phase_timing pe = decode_step_offload(a, q4, roofline(gpu), experts, 1, 1024);
  bool crossed = false;
  for (const auto& o : pe.counts.list()) {
    if (o.kind == op_kind::p2p) {
      crossed = true;
      CHECK(o.count == 96);
    }
  }
  CHECK(crossed);
  // A plan with the experts offloaded fits a 12 GiB card the model alone does not.
  workload s;
  s.context = 8192;
  const deployment whole(a, q4, roofline(gpu), {}, find_engine("llama.cpp"));
  CHECK_FALSE(plan(whole, s).memory.weights_fit);
  CHECK(plan(whole.with_offload(experts), s).memory.fits);
  offload_plan bad;
  bad.layers = 1.5;
  CHECK_THROWS_WITH_AS(validate(bad, a), "offload.layers must be in [0, 1] (got 1.5)", std::invalid_argument);
}

TEST_CASE("collectives at small messages: latency per hop, per layer, by hand") {
  // Llama-3.1-70B decode of one sequence on 4 x H100 (NVLink 4: 450 GB/s each
  // way, 1.5 us per hop). Each of the 160 all-reduces is a 16 KiB message: a
  // ring of 4 takes 2 x 3 = 6 hops, 6 x 1.5 us = 9 us, so 160 x 9 us = 1.44 ms;
  // the bytes add 3,932,160 B / (0.8 x 450e9 B/s) = 10.92 us. The latency, not
  // the bandwidth, decides: 1.44 + 0.0109 = 1.4509 ms per step.
  const device& h100 = find_device("h100-sxm");
  const op_counts four = count_decode_parallel(find_model("llama-3.1-70b"), precision{}, h100, tp(4), 1, 1024);
  const op& ar = find_op(four, op_kind::all_reduce);
  CHECK(ar.latency.value() == doctest::Approx(9e-6));
  const op_time t = roofline(h100).time(ar);
  CHECK(t.estimate().value() == doctest::Approx(1.44e-3 + 3932160.0 / (0.8 * 450e9)).epsilon(1e-9));
  CHECK(t.estimate().value() == doctest::Approx(1.4509e-3).epsilon(1e-4));
}

TEST_CASE("TP keeps each kind of layer's own share of the KV: Gemma 4's 4 global KV heads replicate past TP 4") {
  // gemma-4-31b, bf16 KV, TP 8: sliding layers split their 16 KV heads two a
  // device, global layers' 4 heads one a device on each pair (1/4, not 1/8).
  // Per device at 131,072 tokens (vLLM blocks of 16 divide both):
  // 50 x 1,024 x 16,384 / 8 + 10 x 131,072 x 8,192 / 4
  // = 104,857,600 + 2,684,354,560 = 2,789,212,160 B.
  const architecture& a = find_model("gemma-4-31b");
  const precision bf16 = precision::of(find_format("bf16"), find_format("bf16"));
  const memory_plan m = plan_memory_parallel(a, bf16, find_device("h100-sxm"), tp(8), 1, 131072);
  CHECK(m.kv_per_sequence.value() == doctest::Approx(2789212160.0));
  // Per token below the window: 50 x 16,384 / 8 + 10 x 8,192 / 4 = 122,880 B.
  CHECK(m.kv_per_token.value() == doctest::Approx(122880.0));
  // At TP 4 both kinds split evenly: a quarter of the whole, 10,737,418,240 + 838,860,800 over 4.
  const memory_plan four = plan_memory_parallel(a, bf16, find_device("h100-sxm"), tp(4), 1, 131072);
  CHECK(four.kv_per_sequence.value() == doctest::Approx((10737418240.0 + 838860800.0) / 4));
  // A decode step reads the same shares.
  const op_counts c = count_decode_parallel(a, bf16, find_device("h100-sxm"), tp(8), 1, 131072);
  CHECK(find_op(c, op_kind::attention_global).kv_read.value() == doctest::Approx(10 * 131072 * 8192.0 / 4));
  CHECK(find_op(c, op_kind::attention_sliding).kv_read.value() == doctest::Approx(50 * 1024 * 16384.0 / 8));
}

TEST_CASE("batched prefill under EP32 over 4 nodes: each rank's own all-to-all bytes, at the slower link's share") {
  // DeepSeek-V3 on 4 nodes of 8 x H200, DP attention and EP32 (SGLang's
  // large-scale layout), 40 prompts of 1,024 tokens in one batch.
  const architecture& a = find_model("deepseek-v3");
  const device& h200 = find_device("h200");
  parallel_plan ep;
  ep.ep = 32;
  const pipelined_counts pc = count_prefill_parallel(a, fp8, h200, ep, 1024, 0, 512, 40);
  const op& x = find_op(pc.counts, op_kind::all_to_all);
  // The busiest rank holds ceil(40 / 32) = 2 prompts, 2,048 tokens (more than
  // its share of all 40,960, 1,280). Per MoE layer, out and back:
  // 2 x 2,048 x 8 experts x 31/32 x 7,168 x 2 B = 455,081,984 B; 58 MoE layers.
  // (Charging every rank the whole batch's 40,960 tokens, as before, was 20x this.)
  const double total = x.network.value();  // summed over its 2 x 58 halves
  CHECK(x.count == 2 * 58);
  CHECK(total == doctest::Approx(58 * 455081984.0));
  // 24 of the 31 peers sit on other nodes (InfiniBand NDR, 50 GB/s), 7 on
  // NVLink 4 (450 GB/s), sent at once: 1 / max(24/31 / 50e9, 7/31 / 450e9) = 64.583 GB/s.
  const link_speed s = detail::all_to_all_speed(ep, h200, 32);
  CHECK(s.bandwidth.value() == doctest::Approx(50e9 * 31 / 24).epsilon(1e-9));
  CHECK(s.latency.value() == doctest::Approx(4e-6));  // the slower link's, one round
  // Within one node: the node's link alone.
  CHECK(detail::all_to_all_speed(ep, h200, 8).bandwidth.value() == doctest::Approx(450e9));
  // Property: more prompts never send fewer bytes per rank.
  double last = 0;
  for (double batch : {1.0, 8.0, 32.0, 33.0, 64.0, 200.0}) {
    const pipelined_counts each = count_prefill_parallel(a, fp8, h200, ep, 1024, 0, 512, batch);
    const op& y = find_op(each.counts, op_kind::all_to_all);
    CHECK(y.network.value() >= last);
    last = y.network.value();
  }
}
