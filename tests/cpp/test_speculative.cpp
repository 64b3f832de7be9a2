// Speculative decoding (speculative_step.hpp), computed by hand.
#include <doctest/doctest.h>

#include "llmroof/llmroof.hpp"
#include "setup.hpp"

using namespace llmroof;

namespace {

deployment on(const char* model, const char* dev, int devices = 1) {
  static std::vector<std::unique_ptr<architecture>> models;
  static std::vector<std::unique_ptr<device>> devs;
  models.push_back(std::make_unique<architecture>(find_model(model)));
  devs.push_back(std::make_unique<device>(find_device(dev)));
  request q;
  q.model = models.back().get();
  q.dev = devs.back().get();
  q.layout.devices_per_node = devices;
  return resolve(q);
}

// Llama-3.2-1B drafting 4 tokens at 0.7 each.
speculation draft_1b() {
  speculation s;
  s.method = spec_method::draft;
  s.draft_tokens = 4;
  s.acceptance = {0.7};
  s.draft = find_model("llama-3.2-1b");
  return s;
}

deployment on_engine_for(const char* engine) {
  request q;
  q.model = &find_model("llama-3.1-8b");
  q.dev = &find_device("h100-sxm");
  q.engine = engine;
  return resolve(q);
}

}  // namespace

TEST_CASE("tokens kept per step: 1 + the sum over positions of the cumulative acceptance") {
  speculation s;
  s.method = spec_method::ngram;
  s.draft_tokens = 3;
  s.acceptance = {0.6};
  // i.i.d. 0.6: 1 + 0.6 + 0.36 + 0.216 = 2.176 = (1 - 0.6^4) / (1 - 0.6)
  CHECK(accepted_tokens(s) == doctest::Approx(2.176));
  CHECK(accepted_tokens(s) == doctest::Approx((1 - 0.6 * 0.6 * 0.6 * 0.6) / (1 - 0.6)));
  // Conditional per position 0.76, 0.56/0.76, 0.43/0.56 = cumulative 0.76, 0.56, 0.43
  // (MiniMax-M3 EAGLE-3, vLLM blog): 1 + 0.76 + 0.56 + 0.43 = 2.75.
  s.acceptance = {0.76, 0.56 / 0.76, 0.43 / 0.56};
  CHECK(accepted_tokens(s) == doctest::Approx(2.75));
  // MTP defaults: 0.85 at k = 1 (DeepSeek-V3: 1.85 tokens per step); 0.60 each beyond.
  speculation mtp;
  CHECK(accepted_tokens(mtp) == doctest::Approx(1.85));
  mtp.draft_tokens = 3;
  CHECK(accepted_tokens(mtp) == doctest::Approx(2.176));
  // Property: more acceptance or more drafts never keep fewer tokens.
  for (double a = 0; a <= 1.0; a += 0.125) {
    speculation x;
    x.method = spec_method::ngram;
    x.acceptance = {a};
    double last = 0;
    for (int k = 1; k <= 8; ++k) {
      x.draft_tokens = k;
      const double e = accepted_tokens(x);
      CHECK(e >= last);
      CHECK(e <= k + 1);
      last = e;
    }
  }
  speculation bad;
  bad.method = spec_method::draft;
  CHECK_THROWS_WITH_AS(accepted_tokens(bad),
                       "acceptance must be given for draft speculation (no published default: it depends on the workload)",
                       std::invalid_argument);
  bad.acceptance = {0.5, 0.5};
  CHECK_THROWS_WITH_AS(accepted_tokens(bad), "acceptance must hold one value or one per draft token (1, got 2)",
                       std::invalid_argument);
  bad.acceptance = {1.5};
  CHECK_THROWS_AS(accepted_tokens(bad), std::invalid_argument);
  bad.draft_tokens = 0;
  CHECK_THROWS_AS(accepted_tokens(bad), std::invalid_argument);
}

TEST_CASE("a verify step of width k+1 reads the weights and each sequence's KV once") {
  const architecture& a = find_model("llama-3.1-8b");
  const precision pr = precision::of(find_format("bf16"), find_format("bf16"));
  const op_counts one = count_decode(a, pr, 8, 4096);
  const op_counts four = count_decode(a, pr, 8, 4096, 4);
  // The weights once: only the embedding rows of the 24 more tokens are read (24 x 4,096 x 2 B = 196,608 B).
  CHECK(four.weight_bytes().value() - one.weight_bytes().value() == doctest::Approx(196608));
  CHECK(four.kv_read_bytes().value() == doctest::Approx(one.kv_read_bytes().value()));
  CHECK(four.new_tokens == 32);
  // Attention pairs per sequence: width x context + width (width + 1) / 2 =
  // 4 x 4096 + 10 = 16,394 against 4,097 for one token.
  for (std::size_t i = 0; i < one.ops.size(); ++i) {
    if (one.ops[i].kind == op_kind::attention_global) {
      CHECK(four.ops[i].flop.value() / one.ops[i].flop.value() == doctest::Approx(16394.0 / 4097.0));
    }
    if (one.ops[i].kind == op_kind::lm_head) {
      CHECK(four.ops[i].flop.value() == doctest::Approx(4 * one.ops[i].flop.value()));
    }
  }
}

TEST_CASE("speculative steps: MTP drafts one layer and lm_head per token; it pays while the verify is memory-bound") {
  const deployment d = on("deepseek-v3", "h200", 8);
  speculation s;  // MTP, k = 1, acceptance 0.85
  const speculative_step r = speculate(d, s, 1, 4096);
  // Draft: the plain step's ops less lm_head and embedding over 61 layers, plus those two.
  seconds ops = make_seconds(0);
  seconds ends = make_seconds(0);
  for (std::size_t i = 0; i < r.plain.counts.ops.size(); ++i) {
    ops += r.plain.times[i].estimate();
    const op_kind k = r.plain.counts.ops[i].kind;
    if (k == op_kind::lm_head || k == op_kind::embedding) ends += r.plain.times[i].estimate();
  }
  CHECK(r.draft.value() == doctest::Approx(((ops - ends) / 61.0 + ends).value()));
  CHECK(r.verify.value() == doctest::Approx(d.decode(1, 4096, 2).estimate.value()));
  CHECK(r.tokens_per_s_per_user() == doctest::Approx(1.85 / (r.draft + r.verify).value()));
  // DeepSeek-V3 technical report 5.4.3: MTP k = 1 decodes 1.8x faster.
  CHECK(r.speedup() > 1.6);
  CHECK(r.speedup() < 1.85);
  // n-gram drafts cost nothing: the speed-up is at most the tokens kept.
  speculation ng;
  ng.method = spec_method::ngram;
  ng.acceptance = {0.5};
  const speculative_step n = speculate(d, ng, 1, 4096);
  CHECK(n.draft.value() == 0);
  CHECK(n.speedup() <= 1.5);
  // A compute-bound verify stops paying: Llama-3.1-8B BF16 on an L4 (121 TFLOP/s,
  // 300 GB/s) at a short context, where the batch's FLOP reach the ridge.
  const deployment l4 = on("llama-3.1-8b", "l4");
  speculation low;
  low.method = spec_method::ngram;
  low.draft_tokens = 4;
  low.acceptance = {0.3};
  const speculative_table t = speculate_against_batch(l4, low, 1, 128, 256);
  REQUIRE(t.stops_paying);
  CHECK(t.rows.front().speedup() > 1);
  CHECK(t.rows.back().speedup() < 1);
  // Refusals name what is wrong.
  CHECK_THROWS_WITH_AS(speculate(l4, speculation{}, 1, 0),
                       "model 'llama-3.1-8b' has no multi-token-prediction layers (num_nextn_predict_layers): use a "
                       "draft model or n-gram speculation",
                       std::invalid_argument);
  speculation other;
  other.method = spec_method::draft;
  other.acceptance = {0.7};
  other.draft = find_model("qwen3-0.6b");
  CHECK_THROWS_AS(speculate(l4, other, 1, 0), std::invalid_argument);
}

TEST_CASE("speculation's memory: the drafter's weights and KV, k lookahead slots, the users that still fit") {
  const deployment d = on("llama-3.1-8b", "h100-sxm");
  const speculation s = draft_1b();
  const speculative_memory m = speculation_memory(d, s, 4096);
  // The draft model's weights on the same device, as a plan of it counts them.
  CHECK(m.weights.value() == doctest::Approx(weight_bytes(*s.draft, d.pr).value()));
  // Llama-3.2-1B: 16 layers x 2 x 8 heads x 64 x 2 B = 32,768 B per token; 4,096 tokens: 134,217,728 B.
  CHECK(m.kv_per_sequence.value() == doctest::Approx(134217728.0));
  // 4 lookahead slots of the target's 131,072 B per token: 524,288 B.
  CHECK(m.lookahead_per_sequence.value() == doctest::Approx(524288.0));
  // Users: (KV budget - draft weights) / (536,870,912 + 134,217,728 + 524,288) B each.
  const memory_plan plain = d.memory(1, 4096);
  CHECK(m.max_users_plain == plain.max_sequences);
  CHECK(m.max_users == std::floor((plain.kv_budget - m.weights).value() / (536870912.0 + 134217728.0 + 524288.0)));
  CHECK(m.max_users < m.max_users_plain);
  // A step of max_num_batched_tokens (8,192) verifies 8,192 / 5 = 1,638 sequences.
  CHECK(m.batch_budget == 1638);
  // MTP: the modules' parameters in the experts' format over the devices; one
  // MTP attention layer of KV beside the 61 of DeepSeek-V3.
  const deployment ds = on("deepseek-v3", "h200", 8);
  speculation mtp;
  const speculative_memory dm = speculation_memory(ds, mtp, 32768);
  CHECK(dm.weights.value() ==
        doctest::Approx(ds.pr.experts_format().bytes_of(count_parameters(ds.model).mtp).value() / 8));
  CHECK(dm.kv_per_sequence.value() == doctest::Approx(ds.memory(1, 32768).kv_per_sequence.value() / 61));
  // A shared prefix of 992 tokens (one copy for all, the draft's blocks of it
  // too: 1.25 x 992 x 131,072 B): (budget - w - shared) / (per sequence +
  // draft + lookahead - shared).
  const memory_plan sh = d.memory(1, 4096, 992);
  REQUIRE(sh.kv_shared.value() == doctest::Approx(992.0 * 131072));
  CHECK(speculation_memory(d, s, 4096, 992).max_users ==
        std::floor(((sh.kv_budget - m.weights).value() - 1.25 * 992 * 131072) /
                   (536870912.0 + 134217728.0 + 524288.0 - 1.25 * 992 * 131072)));
  CHECK(speculation_memory(d, s, 4096, 992).max_users_plain == sh.max_sequences);
  // n-gram: nothing but the lookahead slots.
  speculation ngram;
  ngram.method = spec_method::ngram;
  ngram.acceptance = {0.5};
  const speculative_memory nm = speculation_memory(d, ngram, 4096);
  CHECK(nm.weights.value() == 0);
  CHECK(nm.kv_per_sequence.value() == 0);
  CHECK(nm.lookahead_per_sequence.value() == doctest::Approx(131072.0));
}

TEST_CASE("a draft model shares the target's tokenizer: embedding tables padded apart are one vocabulary") {
  // Qwen2.5-72B pads its table to 152,064 rows, Qwen2.5-0.5B to 151,936 (0.08% apart).
  const deployment d = on("qwen2.5-72b", "h100-sxm", 4);
  speculation s;
  s.method = spec_method::draft;
  s.acceptance = {0.6};
  s.draft = find_model("qwen2.5-0.5b");
  REQUIRE(d.model.vocab_size != s.draft->vocab_size);
  CHECK_NOTHROW(speculate(d, s, 1, 4096));
  s.draft = find_model("llama-3.2-1b");  // 128,256: another tokenizer
  CHECK_THROWS_WITH_AS(speculate(d, s, 1, 4096),
                       "draft model 'llama-3.2-1b' has another vocabulary (128256 tokens, the target 152064): its "
                       "drafts cannot be verified",
                       std::invalid_argument);
  // Sizes within 1% are not one tokenizer (issue 60): Llama 3's 128,256 tokens
  // against DeepSeek-V3's 129,280 (0.8%), Qwen3's 151,936 against GLM-4.5's 151,552 (0.25%).
  const deployment ds = on("deepseek-v3", "h200", 8);
  CHECK(std::abs(double(find_model("llama-3.2-1b").vocab_size) - ds.model.vocab_size) < 0.01 * ds.model.vocab_size);
  CHECK_THROWS_WITH_AS(speculate(ds, s, 1, 4096),
                       "draft model 'llama-3.2-1b' has another tokenizer (the llama family's; 'deepseek-v3' has the "
                       "deepseek family's): its drafts cannot be verified",
                       std::invalid_argument);
  s.draft = find_model("qwen3-0.6b");
  CHECK_THROWS_AS(speculate(on("glm-4.5-air", "h200", 2), s, 1, 4096), std::invalid_argument);
  CHECK(detail::tokenizer_family("qwen3_moe") == detail::tokenizer_family("qwen2"));
  CHECK(detail::tokenizer_family("mixtral") == "mistral");
  CHECK(detail::tokenizer_family("llama4_text") != detail::tokenizer_family("llama"));
  CHECK(detail::tokenizer_family("").empty());  // a custom model: sizes alone decide
}

TEST_CASE("EAGLE-3 and MTP need a 2025 release of the engine") {
  speculation s;
  s.method = spec_method::eagle;
  s.draft_tokens = 3;
  s.acceptance = {0.6};
  const architecture& a = find_model("llama-3.1-8b");
  const parallel_plan one;
  CHECK_THROWS_WITH_AS(detail::check_speculation(s, a, one, false, find_engine("tensorrt-llm@2023")),
                       "tensorrt-llm@2023 predates EAGLE-3 heads (2025): give a current release", std::invalid_argument);
  CHECK_THROWS_AS(detail::check_speculation(s, a, one, false, find_engine("vllm@0.6")), std::invalid_argument);
  CHECK_NOTHROW(detail::check_speculation(s, a, one, false, find_engine("vllm@0.10")));
  CHECK_NOTHROW(detail::check_speculation(s, a, one, false, find_engine("tensorrt-llm")));
  s.method = spec_method::draft;  // draft-target speculation is older
  s.draft = find_model("llama-3.2-1b");
  CHECK_NOTHROW(detail::check_speculation(s, a, one, false, find_engine("tensorrt-llm@2023")));
}

TEST_CASE("EAGLE-3 heads: a published default, one layer and a 32,000-token lm_head per draft, engines that run it") {
  speculation s;
  s.method = spec_method::eagle;
  s.draft_tokens = 3;
  // Cumulative 76%, 56%, 43% (MiniMax-M3, vLLM blog): 1 + 0.76 + 0.56 + 0.43 = 2.75 tokens per step.
  CHECK(accepted_tokens(s) == doctest::Approx(2.75));
  const deployment d = on("llama-3.1-8b", "h100-sxm");
  const speculative_step st = speculate(d, s, 1, 4096);
  // Draft = 3 x (one of 32 layers + embedding + lm_head x 32,000 / 128,256).
  seconds ops = make_seconds(0);
  for (const op_time& t : st.plain.times) ops += t.estimate();
  seconds head = make_seconds(0), embed = make_seconds(0);
  for (std::size_t i = 0; i < st.plain.counts.ops.size(); ++i) {
    if (st.plain.counts.ops[i].kind == op_kind::lm_head) head += st.plain.times[i].estimate();
    if (st.plain.counts.ops[i].kind == op_kind::embedding) embed += st.plain.times[i].estimate();
  }
  const double layer = (ops - head - embed).value() / 32;
  CHECK(st.draft.value() == doctest::Approx(3 * (layer + embed.value() + head.value() * 32000.0 / 128256)));
  // Its memory: attention 4096 x (32 + 2 x 8) x 128 + 4096 x 4096 = 41,943,040, and q/k/v over 2d inputs
  // another 4096 x 48 x 128 = 25,165,824; FFN 3 x 4096 x 14,336 = 176,160,768; fc 3 x 4096^2 = 50,331,648;
  // lm_head 32,000 x 4096 = 131,072,000: 424,673,280 params x 2 B.
  const speculative_memory m = speculation_memory(d, s, 4096);
  CHECK(m.weights.value() == doctest::Approx(2.0 * 424673280));
  CHECK(m.kv_per_sequence.value() == doctest::Approx(4096.0 * 131072 / 32));
  // Engines: Ollama runs none, mlx-lm draft models only.
  CHECK_THROWS_WITH_AS(speculate(on_engine_for("ollama"), s, 1, 4096),
                       "ollama does not run eagle speculation (it runs none)", std::invalid_argument);
  CHECK_THROWS_WITH_AS(speculate(on_engine_for("mlx"), s, 1, 4096), "mlx does not run eagle speculation (it runs draft)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_spec_method("eagel"), "method must be mtp, draft, eagle or ngram (got 'eagel')",
                       std::invalid_argument);
}

namespace {

speculation ngram_of(int k, double a) {
  speculation s;
  s.method = spec_method::ngram;
  s.draft_tokens = k;
  s.acceptance = {a};
  return s;
}

}  // namespace

TEST_CASE("a deployment that decodes speculatively: its load model's step drafts, verifies and keeps the accepted tokens") {
  const deployment plain = on("llama-3.1-8b", "h100-sxm");
  const deployment d = plain.with_speculation(ngram_of(3, 0.6));
  // step_of: n-gram drafts cost nothing; the verify is the width-4 step;
  // tokens kept 1 + 0.6 + 0.36 + 0.216 = 2.176.
  const token_step st = step_of(d, 8, 1100);
  CHECK(st.seconds == doctest::Approx(plain.decode(8, 1100, 4).estimate.value()).epsilon(1e-12));
  CHECK(st.tokens == doctest::Approx(2.176));
  CHECK(st.width == 4);
  const token_step none = step_of(plain, 8, 1100);
  CHECK(none.seconds == plain.decode(8, 1100).estimate.value());
  CHECK(none.tokens == 1);
  CHECK(none.width == 1);

  // One user in a closed loop of 1,000-token prompts and 200-token answers:
  // TTFT = h + prefill(1,000) (nobody else), TPOT = verify(1, 1,100, width 4)
  // / 2.176 at the mean context 1,000 + 200 / 2, one request per
  // TTFT + 199 x TPOT (the prefill samples the first token).
  const workload w = test::requests(1000, 200);
  const double h = d.efficiency().per_request.value();
  const double S = d.prefill(1000).estimate.value();
  const double tpot = d.decode(1, 1100, 4).estimate.value() / 2.176;
  const closed_loop_result one = serve_closed_loop(d, w, 1);
  CHECK(one.tokens_per_step == doctest::Approx(2.176));
  CHECK(one.tpot.value() == doctest::Approx(tpot).epsilon(1e-9));
  CHECK(one.ttft.value() == doctest::Approx(h + S).epsilon(1e-9));
  CHECK(one.requests_per_s == doctest::Approx(1 / (h + S + 199 * tpot)).epsilon(1e-9));
  CHECK(serve_closed_loop(plain, w, 1).tokens_per_step == 1);

  // Property: at 32 users speculation at 0.6 still pays on a memory-bound
  // H100 (faster TPOT, more output tokens/s); drafts never accepted only
  // cost the wider verify.
  const closed_loop_result fast = serve_closed_loop(d, w, 32), base = serve_closed_loop(plain, w, 32);
  CHECK(fast.tpot < base.tpot);
  CHECK(fast.output_tokens_per_s(200) > base.output_tokens_per_s(200));
  const closed_loop_result never = serve_closed_loop(plain.with_speculation(ngram_of(3, 0)), w, 32);
  CHECK(never.tpot > base.tpot);
  // The open loop keeps the same accounting: at one request in ten seconds
  // the TPOT is one user's.
  CHECK(serve_at_rate(d, w, 0.1).tpot.value() == doctest::Approx(tpot).epsilon(0.02));
}

TEST_CASE("a speculative deployment's memory holds the drafter: fewer slots, the draft's KV and lookahead per sequence") {
  const deployment plain = on("llama-3.1-8b", "h100-sxm");
  const speculation s = draft_1b();
  const deployment d = plain.with_speculation(s);
  const workload w = test::requests(3000, 1096);  // 4,096 tokens per request
  const memory_plan m = memory_of(d, w, 10, 4096), p = plain.memory(10, 4096);
  const speculative_memory x = speculation_memory(plain, s, 4096);
  // Weights: the target's and the draft's; per sequence 536,870,912 +
  // 134,217,728 (the draft's KV) + 524,288 (4 lookahead slots) B.
  CHECK(m.weights.value() == doctest::Approx((p.weights + x.weights).value()));
  CHECK(m.kv_budget.value() == doctest::Approx((p.kv_budget - x.weights).value()));
  CHECK(m.kv_per_sequence.value() == doctest::Approx(536870912.0 + 134217728.0 + 524288.0));
  CHECK(m.kv_needed.value() == doctest::Approx(10 * (536870912.0 + 134217728.0 + 524288.0)));
  // (budget - draft weights) / 671,612,928 B per sequence.
  CHECK(m.max_sequences == std::floor((p.kv_budget - x.weights).value() / 671612928.0));
  CHECK(m.max_sequences == x.max_users);
  CHECK(m.max_sequences < p.max_sequences);
  // The engine's KV pool in tokens: each holds 1.25 x 131,072 B (the draft's
  // layers beside the target's), in blocks of 16.
  CHECK(m.kv_per_token.value() == doctest::Approx(1.25 * 131072));
  CHECK(m.kv_tokens == 16 * std::floor((p.kv_budget - x.weights).value() / (16 * 1.25 * 131072)));
  CHECK(m.starts);
  CHECK(m.fits);
  // The longest context 10 users hold: 10 x (1.25 x 131,072 x c + 524,288) within the budget.
  CHECK(m.max_context == doctest::Approx(std::floor(((p.kv_budget - x.weights).value() / 10 - 524288.0) /
                                                    (1.25 * 131072) / 16) * 16).epsilon(1e-3));
  // The engine's slots for the loop are those sequences.
  CHECK(slots_for(d, w).slots == std::min(x.max_users, d.engine.max_sequences));
  // No speculation: the plain plan.
  CHECK(memory_of(plain, w, 10, 4096).kv_per_sequence == p.kv_per_sequence);
  // A deployment refuses what speculate() refuses, naming it.
  CHECK_THROWS_WITH_AS(plain.with_speculation(speculation{}),
                       "model 'llama-3.1-8b' has no multi-token-prediction layers (num_nextn_predict_layers): use a "
                       "draft model or n-gram speculation",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(plain.with_speculation(ngram_of(0, 0.5)), "draft_tokens must be in [1, 16] (got 0)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(plain.with_speculation(ngram_of(2, 1.5)), "acceptance must be in [0, 1] (got 1.5)",
                       std::invalid_argument);
}

TEST_CASE("lockstep with speculation: each decode step keeps the accepted tokens and verifies k + 1 per sequence") {
  // 4 users, 100-token prompts, 5 output tokens, n-gram k = 1 always
  // accepted (2 tokens per step): one prefill step of the four yields the
  // first token; two decode steps of width 2 keep 2 tokens each (1 + 2 + 2
  // = 5), timed as one run at the mean context 100 + 1 + (2 - 1) x 2 / 2 = 102.
  const device& dev = find_device("rtx-4090");
  engine_settings e = configure_engine("vllm", dev);
  const deployment d =
      deployment(find_model("llama-3.1-8b"), precision{}, roofline(dev), {}, e).with_speculation(ngram_of(1, 1));
  workload w = test::requests(100, 5);
  w.arrivals = arrival_pattern::lockstep;
  const double h = d.efficiency().per_request.value();
  const double tau = d.prefill(100, 0, 4).estimate.value();
  const double delta = d.decode(4, 102, 2).estimate.value();
  const closed_loop_result c = serve_closed_loop(d, w, 4);
  CHECK(c.ttft.value() == doctest::Approx(h + tau).epsilon(1e-12));
  CHECK(c.tpot.value() == doctest::Approx(2 * delta / 4).epsilon(1e-12));  // 2 steps over 5 - 1 tokens
  CHECK(c.requests_per_s == doctest::Approx(4 / (h + tau + 2 * delta)).epsilon(1e-9));
}

TEST_CASE("a verify step turns compute-bound k + 1 times sooner: Llama-3.1-8B BF16 on an H100, by hand") {
  // The FFN of all 32 layers: 32 x 3 x 4,096 x 14,336 = 5,637,144,576
  // parameters, 11,274,289,152 B of BF16 weights; per token row 2 FLOP per
  // parameter and 32 x 2 B x (4,096 + 28,672 + 14,336 + 4,096) = 3,276,800 B
  // of activations. On 989.5 TFLOP/s and 3.35 TB/s it is compute-bound once
  //   11,274,289,152 n / 989.5e12 >= (11,274,289,152 + 3,276,800 n) / 3.35e12
  //   n >= 11,274,289,152 x 989.5 / (11,274,289,152 x 3.35 - 3,276,800 x 989.5)
  //     = 11,155,909,115,904 / 34,526,475,059.2 = 323.11 rows:
  // batch 324 decoding plainly, batch 81 verifying k = 3 drafts (4 rows each).
  const architecture& a = find_model("llama-3.1-8b");
  const precision pr = precision::of(find_format("bf16"), find_format("bf16"));
  const roofline r(find_device("h100-sxm"));
  const auto ffn_compute_bound = [&](double batch, double width) {
    for (const op& o : count_decode(a, pr, batch, 0, width).ops) {
      if (o.kind != op_kind::ffn) continue;
      CHECK(o.weights.value() == doctest::Approx(11274289152.0));
      CHECK(o.flop.value() == doctest::Approx(11274289152.0 * batch * width));
      CHECK(o.activations.value() == doctest::Approx(3276800.0 * batch * width));
      const op_time t = r.time(o);
      return t.compute_bound > t.memory_bound;
    }
    FAIL("no ffn op");
    return false;
  };
  CHECK_FALSE(ffn_compute_bound(80, 4));
  CHECK(ffn_compute_bound(81, 4));
  CHECK_FALSE(ffn_compute_bound(323, 1));
  CHECK(ffn_compute_bound(324, 1));
}

TEST_CASE("a speculative plan that does not fit lists its fixes with the drafter, never an offload it cannot run") {
  // llama.cpp on one RTX 4090: Llama-3.1-8B BF16 (16 GB) with 16 users at 32k does not fit.
  request q;
  q.model = &find_model("llama-3.1-8b");
  q.dev = &find_device("rtx-4090");
  q.engine = "llama.cpp";
  const deployment plain = resolve(q);
  const deployment d = plain.with_speculation(ngram_of(3, 0.6));
  workload w;
  w.users = 16;
  w.context = 32768;
  const plan_result r = plan(d, w);
  CHECK_FALSE(r.memory.fits);
  REQUIRE_FALSE(r.alternatives.empty());
  for (const alternative& a : r.alternatives) CHECK(a.change.rfind("offload", 0) != 0);
  // Its own memory holds 3 lookahead slots per sequence more than the plain plan's.
  const memory_plan p = plain.memory(16, 32768);
  CHECK(r.memory.kv_per_sequence.value() == doctest::Approx(p.kv_per_sequence.value() + 3 * p.kv_per_token.value()));
  CHECK(r.memory.max_sequences <= p.max_sequences);
}

TEST_CASE("MTP under data-parallel attention: each device holds its own users' MTP KV") {
  // DeepSeek-V3 FP8 on 8 H200s, EP 8 with DP attention: 64 users, 8 per
  // device, each with 61 + 1 layers of MLA latents (the MTP module's one).
  request q;
  q.model = &find_model("deepseek-v3");
  q.dev = &find_device("h200");
  q.layout.devices_per_node = 8;
  q.layout.ep = 8;
  q.layout.dp_attention = true;
  q.engine = "sglang";
  const deployment plain = resolve(q);
  REQUIRE(plain.parallel().attention_data_parallel());
  const deployment d = plain.with_speculation(speculation{});
  const memory_plan m = d.memory(64, 4096), p = plain.memory(64, 4096);
  CHECK(m.kv_per_sequence.value() == doctest::Approx(p.kv_per_sequence.value() * 62 / 61 + p.kv_per_token.value()));
  CHECK(m.kv_needed.value() == doctest::Approx(8 * m.kv_per_sequence.value()));
  const double mtp = plain.pr.experts_format().bytes_of(count_parameters(plain.model).mtp).value();
  CHECK(m.weights.value() == doctest::Approx(p.weights.value() + mtp / 8));
}
