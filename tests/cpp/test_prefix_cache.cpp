// Prefix caching (prefix_cache.hpp): what a cache hit skips, what a shared
// prefix costs in memory once, and the load model's prefill under hit rates.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "llmroof/llmroof.hpp"

using namespace llmroof;

namespace {

deployment on_engine(const std::string& engine, const char* model = "llama-3.1-8b") {
  const device& h100 = find_device("h100-sxm");
  return {find_model(model), precision{}, roofline(h100), {}, configure_engine(engine, h100)};
}

workload shaped(double prompt, double prefix, std::optional<double> hit = std::nullopt) {
  workload w;
  w.context = prompt + 200;  // one request fills it (no earlier turns: workload::history)
  w.prompt = prompt;
  w.output = 200;
  w.prefix = prefix;
  w.prefix_hit = hit;
  return w;
}

}  // namespace

TEST_CASE("a cache hit skips the prefix in whole blocks, never the prompt's last token") {
  const deployment vllm = on_engine("vllm");
  REQUIRE(vllm.engine.block_tokens == 16);
  // 1,000 shared tokens in blocks of 16: 62 whole blocks = 992 tokens; the
  // 8 tokens of the 63rd block are computed with the rest.
  prefix_reuse r = reuse_of(vllm, shaped(4096, 1000));
  CHECK(r.cached == 992);
  CHECK(r.hit == 1);
  CHECK(r.shared == 992);
  CHECK(r.computed == 4096 - 992);
  // The whole prompt shared: 4,095 tokens may be skipped, 255 blocks = 4,080.
  CHECK(reuse_of(vllm, shaped(4096, 4096)).cached == 4080);
  // A quarter of the requests hit: 4,096 - 0.25 x 992 = 3,848 tokens computed on average.
  r = reuse_of(vllm, shaped(4096, 1000, 0.25));
  CHECK(r.computed == doctest::Approx(3848));
  // The quarter that hit share one copy, the rest hold their own: 0.25 x 992 = 248 tokens apiece.
  CHECK(r.shared == doctest::Approx(248));
  // Property: no cliff at 0 (issue 60's 1e-300 took all of full sharing's
  // memory); the shared tokens grow with the hit rate, from 0 to the prefix.
  double last = -1;
  for (double h : {0.0, 1e-300, 0.01, 0.5, 0.99, 1.0}) {
    const double now = reuse_of(vllm, shaped(4096, 1000, h)).shared;
    CHECK(now >= last);
    CHECK(now <= h * 992 + 1e-9);
    last = now;
  }
  CHECK(reuse_of(vllm, shaped(4096, 1000, 1e-300)).shared < 1e-200);
  // Shorter than a block: nothing to reuse.
  r = reuse_of(vllm, shaped(4096, 10));
  CHECK(r.cached == 0);
  CHECK(r.hit == 0);
  CHECK(r.computed == 4096);
  // SGLang's radix tree matches token by token (page size 1), one copy shared.
  r = reuse_of(on_engine("sglang"), shaped(4096, 1000));
  CHECK(r.cached == 1000);
  CHECK(r.shared == 1000);
  // llama.cpp: each slot's own last prompt, token by token; no shared copy.
  r = reuse_of(on_engine("llama.cpp"), shaped(4096, 1000));
  CHECK(r.cached == 1000);
  CHECK(r.shared == 0);
  CHECK(reuse_of(on_engine("llama.cpp"), shaped(4096, 4096)).cached == 4095);
}

TEST_CASE("engines and versions without prefix caching prefill every prompt in full") {
  CHECK(find_engine("vllm").prefix_caching);
  CHECK_FALSE(find_engine("vllm@0.6").prefix_caching);  // V0: enable_prefix_caching off
  CHECK_FALSE(find_engine("vllm@0.7.3").prefix_caching);
  CHECK(find_engine("vllm@0.8").prefix_caching);        // V1 by default
  CHECK(find_engine("vllm@0.10").prefix_caching);
  CHECK(find_engine("sglang@2024").prefix_caching);     // the radix cache since v0.1
  CHECK_FALSE(find_engine("tensorrt-llm@2023").prefix_caching);
  CHECK(find_engine("tensorrt-llm").prefix_caching);
  engine_overrides off;
  off.prefix_caching = false;
  const device& h100 = find_device("h100-sxm");
  const deployment d(find_model("llama-3.1-8b"), precision{}, roofline(h100), {}, configure_engine("vllm", h100, off));
  const prefix_reuse r = reuse_of(d, shaped(4096, 1000));
  CHECK(r.cached == 0);
  CHECK(r.shared == 0);
  CHECK(r.computed == 4096);
}

TEST_CASE("a prefill on a hit computes the uncached tokens and attends over the whole prompt") {
  const deployment d = on_engine("vllm");
  const workload w = shaped(4096, 1000);
  const prefix_reuse r = reuse_of(d, w);
  const phase_timing hit = prefill_on_hit(d, w, r);
  // Linear layers run for 4,096 - 992 = 3,104 tokens: 2 x 3,104 x 6,979,321,856 FLOP.
  const op* proj = nullptr;
  const op* ffn = nullptr;
  const op* attn = nullptr;
  for (const op& x : hit.counts.list()) {
    if (x.name == "attention.proj") proj = &x;
    if (x.name == "ffn") ffn = &x;
    if (x.name == "attention.global") attn = &x;
  }
  REQUIRE((proj && ffn && attn));
  CHECK(proj->flop.value() + ffn->flop.value() == doctest::Approx(2.0 * 3104 * 6979321856.0));
  // Attention pairs: each new token i (993..4096) sees i tokens:
  // sum = (993 + 4096) x 3,104 / 2 = 7,898,128 pairs x 16,384 FLOP x 32 layers.
  CHECK(attn->flop.value() == doctest::Approx(7898128.0 * 16384 * 32));
  // The 992 cached tokens' KV is read once: 992 x 131,072 B.
  CHECK(hit.counts.kv_read_bytes().value() == doctest::Approx(992.0 * 131072));
  CHECK(hit.estimate < d.prefill(4096).estimate);
}

TEST_CASE("property: a longer shared prefix never slows a hit's prefill nor grows the KV of many users") {
  const deployment d = on_engine("vllm");
  double last_ttft = 1e300, last_kv = 1e300;
  for (double prefix = 0; prefix <= 4096; prefix += 256) {
    const workload w = shaped(4096, prefix);
    const prefix_reuse r = reuse_of(d, w);
    const double ttft = prefill_on_hit(d, w, r).estimate.value();
    const double kv = memory_of(d, w, 16, 8192).kv_needed.value();
    CHECK(ttft <= last_ttft);
    CHECK(kv <= last_kv);
    last_ttft = ttft;
    last_kv = kv;
  }
}

TEST_CASE("bytes a shared prefix holds once: full-attention layers all of it, sliding layers what the window still holds") {
  const architecture& llama = find_model("llama-3.1-8b");
  // 32 layers x 2 x 8 heads x 128 x 2 B = 131,072 B per token; 992 tokens: 130,023,424 B.
  CHECK(kv_bytes_shared(llama, find_format("bf16"), 992, 4096).value() == doctest::Approx(130023424.0));
  // A context shorter than the prefix shares all of itself.
  CHECK(kv_bytes_shared(llama, find_format("bf16"), 992, 500).value() == doctest::Approx(500.0 * 131072));
  const architecture& gemma = find_model("gemma-3-1b");
  REQUIRE(gemma.sliding_window == 512);
  REQUIRE(gemma.count_layers(layer_kind::global) == 4);
  REQUIRE(gemma.count_layers(layer_kind::sliding) == 22);
  REQUIRE(kv_bytes_per_token(gemma, layer_kind::global, find_format("bf16")).value() == 1024);  // 2 x 1 x 256 x 2 B
  // At 4,096 tokens the windows hold [3,584, 4,096): none of a 1,000-token
  // prefix; the 4 global layers: 4 x 1,000 x 1,024 = 4,096,000 B.
  CHECK(kv_bytes_shared(gemma, find_format("bf16"), 1000, 4096).value() == doctest::Approx(4096000.0));
  // At 1,200 the windows hold [688, 1,200): 312 prefix tokens in each of 22
  // layers, 22 x 312 x 1,024 = 7,028,736 B, plus the 4,096,000.
  CHECK(kv_bytes_shared(gemma, find_format("bf16"), 1000, 1200).value() == doctest::Approx(11124736.0));
}

TEST_CASE("the memory plan holds a shared prefix once for all users") {
  const deployment d = on_engine("vllm");
  const workload w = shaped(4096, 1000);
  const memory_plan m = memory_of(d, w, 10, 4096);
  CHECK(m.shared_tokens == 992);
  CHECK(m.kv_shared.value() == doctest::Approx(130023424.0));
  // 10 x 4,096 x 131,072 B = 5,368,709,120 less 9 copies of 130,023,424 = 4,198,498,304 B.
  CHECK(m.kv_needed.value() == doctest::Approx(4198498304.0));
  // The most users: (budget - shared) / (per sequence - shared), and exactly that many fit.
  const memory_plan one = memory_of(d, w, 1, 4096);
  CHECK(one.max_sequences ==
        std::floor((one.kv_budget.value() - 130023424.0) / (536870912.0 - 130023424.0)));
  CHECK(memory_of(d, w, one.max_sequences, 4096).fits);
  CHECK_FALSE(memory_of(d, w, one.max_sequences + 1, 4096).fits);
  CHECK(one.max_sequences > d.memory(1, 4096).max_sequences);
  // llama.cpp keeps one copy per slot: no saving.
  const deployment l = on_engine("llama.cpp");
  CHECK(memory_of(l, w, 1, 4096).kv_needed == l.memory(1, 4096).kv_needed);
}

TEST_CASE("load: a cache hit's prefill in TTFT, the mean prefill and an M/G/1 queue under a hit rate") {
  deployment d = on_engine("vllm");
  const workload all = shaped(4096, 4096);
  const double per_request = d.efficiency().per_request.value();
  const double hit = prefill_on_hit(d, all, reuse_of(d, all)).estimate.value();
  const double miss = d.prefill(4096).estimate.value();
  // One user alone: the request handling and its prefill on a hit.
  CHECK(serve_closed_loop(d, all, 1).ttft.value() == doctest::Approx(per_request + hit));
  // Half the requests hit: the mean prefill (S_hit + S_miss) / 2.
  const workload half = shaped(4096, 4096, 0.5);
  const load_result l = serve_at_rate(d, half, 1.0);
  CHECK(l.prefill.value() == doctest::Approx(0.5 * hit + 0.5 * miss));
  CHECK(l.prefill_share == doctest::Approx(0.5 * hit + 0.5 * miss));
  // M/G/1: the queue's wait is rate x E[S^2] / (2 (1 - rho)) plus half the running step.
  const double S = 0.5 * (hit + miss), S2 = 0.5 * (hit * hit + miss * miss);
  const double step = d.decode(std::max(1.0, l.users), 4096 + 100).estimate.value();
  CHECK(l.ttft_wait.value() == doctest::Approx(1.0 * S2 / (2 * (1 - S)) + 0.5 * step).epsilon(1e-6));
  // More hits: a shorter TTFT and more requests/s at saturation.
  CHECK(serve_at_rate(d, all, 1.0).ttft < l.ttft);
  CHECK(saturation(d, all).requests_per_s > saturation(d, shaped(4096, 0)).requests_per_s);
}

TEST_CASE("a prefix is checked with the workload, naming the field") {
  workload w = shaped(4096, 5000);
  CHECK_THROWS_WITH_AS(validate(w), "prefix must be <= the prompt (4096 tokens) (got 5000)", std::invalid_argument);
  w = shaped(4096, 0, 0.5);
  CHECK_THROWS_WITH_AS(validate(w), "prefix_hit needs a prefix (the prompt tokens every request shares)",
                       std::invalid_argument);
  w = shaped(4096, 1000, 1.5);
  CHECK_THROWS_WITH_AS(validate(w), "prefix_hit must be in [0, 1] (got 1.5)", std::invalid_argument);
  w = shaped(4096, 1000.5);
  CHECK_THROWS_AS(validate(w), std::invalid_argument);
  w = shaped(4096, NAN);
  CHECK_THROWS_AS(validate(w), std::invalid_argument);
  // With the default prompt (min(context, 2048)) a prefix may be up to 2,048.
  workload d;
  d.prefix = 2048;
  CHECK_NOTHROW(validate(d));
}
