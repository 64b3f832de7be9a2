// Issue 17: limits and layout checks in the library, and a property test:
// every number that reaches a plan is finite and non-negative, over random
// valid and near-limit inputs.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>

#include "llmroof/llmroof.hpp"
#include "llmroof/model/readers.hpp"
#include "llmroof/engine/engine_profile.hpp"
#include "setup.hpp"

using namespace llmroof;
using llmroof::test::on;

TEST_CASE("workload limits: context, users, prompt") {
  const auto [a, pr, r] = on("llama-3.1-8b", "h100-sxm");
  const deployment d(a, pr, r);
  workload s;
  s.context = 1e300;
  CHECK_THROWS_WITH_AS(plan(d, s), "context must be <= 1e9 tokens (got 1e+300)", std::invalid_argument);
  s.context = 0;
  CHECK_THROWS_WITH_AS(plan(d, s), "context must be >= 1 token (got 0)", std::invalid_argument);
  s.context = 4096;
  s.users = 1.5;
  CHECK_THROWS_WITH_AS(plan(d, s), "users must be a whole number (got 1.5)", std::invalid_argument);
  s.users = 1;
  s.prompt = 0.5;
  CHECK_THROWS_WITH_AS(plan(d, s), "prompt must be a whole number (got 0.5)", std::invalid_argument);
}

TEST_CASE("max_model_len beyond the model's positions: refused where the engine refuses to start") {
  // Llama-3.1-8B: 131,072 positions (max_position_embeddings).
  request q;
  q.model = &find_model("llama-3.1-8b");
  q.dev = &find_device("h100-sxm");
  q.engine_options.max_model_len = 1310720;
  CHECK_THROWS_WITH_AS(resolve(q),
                       "max_model_len (1310720) is beyond the 131072 positions of 'llama-3.1-8b' "
                       "(max_position_embeddings): vllm refuses to start",
                       std::invalid_argument);
  q.engine = "sglang";
  CHECK_THROWS_AS(resolve(q), std::invalid_argument);
  q.engine = "llama.cpp";  // warns (n_ctx_train < n_ctx) and runs
  CHECK(resolve(q).engine.max_model_len == 1310720);
  q.engine = "vllm";
  q.engine_options.max_model_len = 131072;  // the model's own length starts
  CHECK_NOTHROW(resolve(q));
  // One rule for the default too (issue 60): max_model_len defaults to the
  // context, so a 1m context on vLLM is refused by plan and users alike.
  q.engine_options.max_model_len.reset();
  const deployment d = resolve(q);
  workload w;
  w.context = 1048576;
  CHECK_THROWS_WITH_AS(plan(d, w),
                       "context (1048576) is beyond the 131072 positions of 'llama-3.1-8b' "
                       "(max_position_embeddings): vllm refuses to start",
                       std::invalid_argument);
  CHECK_THROWS_AS(max_users(d, w, make_tokens_per_second(10)), std::invalid_argument);
  w.context = 131072;
  CHECK_NOTHROW(plan(d, w));
}

TEST_CASE("tensor parallel layouts must split the heads") {
  const architecture& a = find_model("llama-3.1-8b");  // 32 heads, 8 KV heads
  parallel_plan p;
  p.tp = 3;
  CHECK_THROWS_WITH_AS(validate(p, a), "tp must be a divisor of the 32 attention heads of 'llama-3.1-8b' (got 3)",
                       std::invalid_argument);
  p.tp = 64;
  CHECK_THROWS_AS(validate(p, a), std::invalid_argument);
  for (int tp : {1, 2, 4, 8, 16, 32}) {
    p.tp = tp;
    CHECK_NOTHROW(validate(p, a));
  }
}

TEST_CASE("KV formats per role and engine") {
  CHECK(kv_format_supported(engine_id::vllm, find_format("fp8")));
  CHECK_FALSE(kv_format_supported(engine_id::vllm, find_format("q4_0")));
  CHECK_FALSE(kv_format_supported(engine_id::sglang, find_format("q4_0")));
  CHECK(kv_format_supported(engine_id::llama_cpp, find_format("q4_0")));
  CHECK(kv_format_supported(engine_id::tensorrt_llm, find_format("nvfp4")));
  CHECK_FALSE(is_kv_format(find_format("awq-int4")));
  CHECK(is_kv_format(find_format("q5_1")));
  CHECK_THROWS_WITH_AS(validate_kv_format(find_engine("sglang"), find_format("q4_0")),
                       "kv format 'q4_0' is not a KV cache type of engine 'sglang' (it offers fp32, bf16, fp16, fp8, "
                       "fp8-e4m3, fp8-e5m2)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(validate_kv_format(engine_settings{}, find_format("awq-int4")),
                       "kv format 'awq-int4' is a weight format, not a KV cache format (bf16, fp16, fp8, int8, nvfp4, "
                       "q8_0, q4_0 ...)",
                       std::invalid_argument);
}

TEST_CASE("offload host must be a CPU") {
  offload_plan o;
  o.layers = 0.5;
  o.host = find_device("h100-sxm");
  CHECK_THROWS_WITH_AS(validate(o, find_model("llama-3.1-8b")),
                       "offload.host must be a CPU ('h100-sxm' is a datacenter device)", std::invalid_argument);
}

TEST_CASE("architecture limits bound per-layer work") {
  architecture a = find_model("llama-3.1-8b");
  a.num_layers = 2147483647;
  CHECK_THROWS_WITH_AS(validate(a), "architecture.num_layers must be <= 10000 (got 2147483647)", std::invalid_argument);
  CHECK_THROWS_AS(zipf_popularity(2147483647, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(simulate_routing(uniform_popularity(2), 1, 10000000, 10000000, 1), std::invalid_argument);
}

TEST_CASE("a long ignore list of module names is matched in linear time") {
  std::string cfg = R"({"model_type": "llama", "num_hidden_layers": 10000, "hidden_size": 64, "num_attention_heads": 4,
    "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 256,
    "quantization_config": {"quant_method": "fp8", "ignore": [)";
  for (int i = 0; i < 100000; ++i) cfg += (i ? ",\"" : "\"") + std::string("model.layers.") + std::to_string(i) + ".mlp\"";
  cfg += "]}}";
  const model_source m = parse_hf_config(cfg, "many.json");
  CHECK(m.pr.ffn->name == "bf16");      // every layer's mlp is ignored
  CHECK(m.pr.attention->name != "bf16");  // attention stays quantized
}

TEST_CASE("property: plans hold finite, non-negative numbers over random valid and near-limit inputs") {
  std::mt19937_64 rng(17);
  const auto pick = [&](auto n) { return static_cast<std::size_t>(rng() % static_cast<std::uint64_t>(n)); };
  const auto log_uniform = [&](double lo, double hi) {
    return std::round(std::exp(std::log(lo) + (std::log(hi) - std::log(lo)) * (double(rng() % 1000001) / 1e6)));
  };
  const auto& ms = models();
  const auto& ds = devices();
  const std::vector<std::string> engines = engine_names();
  const std::vector<std::string> kvs = {"bf16", "fp16", "fp8", "fp8-e4m3", "int8", "nvfp4", "q8_0", "q4_0"};
  const std::vector<std::string> ws = {"bf16", "fp8", "awq-int4", "nvfp4", "q4_k", "mxfp4"};
  int planned = 0;
  int refused = 0;
  for (int i = 0; i < 150; ++i) {
    const architecture& a = ms[pick(ms.size())];
    const device& d = ds[pick(ds.size())];
    if (d.klass == device_class::cpu) continue;
    workload s;
    const engine_settings e = find_engine(engines[pick(engines.size())]);
    s.users = i % 5 == 0 ? 1e9 : log_uniform(1, 1e4);
    s.context = i % 7 == 0 ? 1e9 : log_uniform(1, 1e7);
    const int tp = 1 << pick(4);
    parallel_plan where;
    where.tp = tp;
    where.devices_per_node = 8;
    const precision pr = precision::of(find_format(ws[pick(ws.size())]), find_format(kvs[pick(kvs.size())]));
    try {
      const plan_result p = plan(deployment(a, pr, roofline(d, default_profile(d, e.name())), {where, std::nullopt}, e), s);
      ++planned;
      const memory_plan& m = p.memory;
      for (double v : {m.capacity.value(), m.usable.value(), m.weights.value(), m.reserve.value(),
                       m.activations.value(), m.kv_per_token.value(), m.kv_per_sequence.value(), m.kv_needed.value(),
                       m.max_sequences, m.max_context, m.shortfall().value(), m.headroom().value()}) {
        CHECK(std::isfinite(v));
        CHECK(v >= 0);
      }
      CHECK(std::isfinite(m.kv_budget.value()));
      for (const curve_point& c : p.curve) {
        CHECK(c.context >= 0);
        CHECK(c.context <= 1e9);
        for (const phase_timing* t : {&c.single, &c.all, &p.ttft}) {
          CHECK(std::isfinite(t->estimate.value()));
          CHECK(t->estimate.value() > 0);
          CHECK(t->estimate.value() >= t->bound.value() * (1 - 1e-12));
        }
      }
    } catch (const std::invalid_argument&) {
      ++refused;  // impossible layouts and formats: refused, never planned
    }
  }
  CHECK(planned > 20);
  MESSAGE("planned " << planned << ", refused " << refused);
}
