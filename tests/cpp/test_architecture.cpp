#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <stdexcept>
#include <string>

#include "llmroof/model/architecture.hpp"
#include "llmroof/step/ops.hpp"

using namespace llmroof;

TEST_CASE("Llama-3.1-8B has 8.03B parameters") {
  // Worked in static_units.cpp: 8,030,261,248.
  const auto p = count_parameters(find_model("llama-3.1-8b"));
  CHECK(p.total() == doctest::Approx(8030261248.0).epsilon(1e-12));
  // embedding 128,256 x 4,096 = 525,336,576; lm_head the same (untied).
  CHECK(p.embedding == doctest::Approx(525336576.0));
  CHECK(p.lm_head == doctest::Approx(525336576.0));
}

TEST_CASE("Llama-3.1-70B has 70.6B parameters") {
  // embedding + lm_head 2 x 128,256 x 8,192 = 2,101,346,304;
  // per layer: q,o 2 x 8192^2 = 134,217,728; k,v 2 x 8192 x 1024 = 16,777,216;
  // FFN 3 x 8192 x 28672 = 704,643,072; norms 16,384 -> 855,654,400;
  // x 80 = 68,452,352,000; + final norm 8,192 -> 70,553,706,496.
  const auto p = count_parameters(find_model("llama-3.1-70b"));
  CHECK(p.total() == doctest::Approx(70553706496.0).epsilon(1e-12));
}

TEST_CASE("DeepSeek-V3: MLA and MoE counted exactly, 671B total and ~37B active") {
  const auto& a = find_model("deepseek-v3");
  // MLA per layer: q_a 7168x1536 = 11,010,048; q_norm 1,536; q_b 1536x128x192 = 37,748,736;
  // kv_a 7168x576 = 4,128,768; kv_norm 512; kv_b 512x128x256 = 16,777,216;
  // o 128x128x7168 = 117,440,512 -> 187,107,328.
  CHECK(attention_params(a, layer_kind::global) == doctest::Approx(187107328.0));
  // One expert 3 x 7168 x 2048 = 44,040,192.
  CHECK(expert_params(a) == doctest::Approx(44040192.0));
  // 3 dense layers x (187,107,328 + 396,361,728 + 14,336) = 1,750,450,176;
  // 58 MoE layers x (187,107,328 + 256 x 44,040,192 + 44,040,192 + router
  // 7168 x 256 + 256 bias + 14,336) = 667,422,603,776; embeddings 2 x 129,280
  // x 7168 = 1,853,358,080; final norm 7,168 -> 671,026,419,200.
  const auto p = count_parameters(a);
  CHECK(p.total() == doctest::Approx(671026419200.0).epsilon(1e-12));
  CHECK(p.total() / 1e9 == doctest::Approx(671).epsilon(0.01));
  // Active, without the embedding table: 671,026,419,200 - 926,679,040
  // - 58 x 248 x 44,040,192 = 36,625,618,432 (36.6B; the paper says 37B).
  CHECK(p.active() == doctest::Approx(36625618432.0).epsilon(1e-12));
  CHECK(p.active_with_embedding() / 1e9 == doctest::Approx(37.55).epsilon(0.001));
  // The MTP module is counted apart: about 11.7B (DeepSeek reports 14B with its
  // own embedding and head copies) and is not part of the total.
  CHECK(p.mtp > 11e9);
  CHECK(p.mtp < 14e9);
}

TEST_CASE("gpt-oss-120b: sinks, biases, alternating sliding layers") {
  const auto& a = find_model("gpt-oss-120b");
  CHECK(a.count_layers(layer_kind::sliding) == 18);
  CHECK(a.count_layers(layer_kind::global) == 18);
  CHECK(a.kind_of(0) == layer_kind::sliding);
  CHECK(a.kind_of(1) == layer_kind::global);
  // Per layer: attention 26,550,144 (q 2880x4096+4096, k,v 2x(2880x512+512),
  // o 4096x2880+2880, sinks 64); experts 128 x (3 x 2880^2 + 3 x 2880) =
  // 3,186,155,520; router 2880 x 128 + 128 = 368,768; norms 5,760
  // -> 3,213,080,192 x 36 = 115,670,886,912; + 2 x 201,088 x 2880 + 2880
  // = 116,829,156,672.
  const auto p = count_parameters(a);
  CHECK(p.total() == doctest::Approx(116829156672.0).epsilon(1e-12));
  // Active: 116,829,156,672 - 579,133,440 - 36 x 124 x 24,891,840 = 5,131,452,... (5.1B published)
  CHECK(p.active() / 1e9 == doctest::Approx(5.1).epsilon(0.01));
}

TEST_CASE("every catalog model is valid, sourced and within 5% of its published size") {
  std::set<std::string> ids;
  for (const auto& a : models()) {
    CAPTURE(a.id);
    CHECK(ids.insert(a.id).second);
    CHECK_FALSE(a.source.empty());
    CHECK_NOTHROW(validate(a));
    const auto p = count_parameters(a);
    CHECK(p.active() <= p.total());
    CHECK(p.active() > 0);
    if (a.published_total_b > 0) {
      // Gemma's published size includes its vision tower (~0.4B of 4.3B).
      const double tol = a.family == "gemma3_text" ? 0.11 : 0.05;
      CHECK(p.total() / 1e9 == doctest::Approx(a.published_total_b).epsilon(tol));
    }
  }
}

TEST_CASE("Pythia-1.4B (GPT-NeoX) has 1,414,647,808 parameters") {
  // Embedding and untied embed_out: 2 x 50,304 x 2,048 = 206,045,184. Per
  // layer: QKV 3 x 2,048^2 + 6,144 bias, output 2,048^2 + 2,048, MLP
  // 2 x 2,048 x 8,192 + 8,192 + 2,048 (GELU, no gate), two LayerNorms
  // 2 x 2 x 2,048 = 50,358,272; x 24 = 1,208,598,528; final LayerNorm 4,096.
  const auto& a = find_model("pythia-1.4b");
  CHECK(a.ffn == ffn_kind::plain);
  CHECK(count_parameters(a).total() == doctest::Approx(1414647808.0).epsilon(1e-12));
  CHECK(count_parameters(find_model("pythia-2.8b")).total() == doctest::Approx(2775208960.0).epsilon(1e-12));
}

TEST_CASE("the catalog holds the models the foundation issue names") {
  for (const char* id :
       {"devstral-small-2-24b", "llama-2-7b", "llama-2-13b", "llama-2-70b", "llama-3-8b", "llama-3-70b",
        "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "llama-3.2-1b", "llama-3.2-3b", "llama-3.3-70b",
        "qwen2.5-7b", "qwen2.5-14b", "qwen2.5-32b", "qwen2.5-72b", "qwen2.5-coder-7b", "qwen2.5-coder-32b",
        "qwen3-4b", "qwen3-8b", "qwen3-14b", "qwen3-32b", "mistral-7b", "gemma-3-4b", "gemma-3-12b",
        "gemma-3-27b", "gpt-j-6b", "falcon-180b", "qwen3-30b-a3b", "qwen3-235b-a22b",
        "qwen3-coder-480b-a35b", "qwen3-next-80b-a3b", "deepseek-v3", "deepseek-r1", "kimi-k2",
        "glm-4.5-air", "minimax-m2", "gpt-oss-20b", "gpt-oss-120b", "mixtral-8x7b"}) {
    CAPTURE(id);
    CHECK_NOTHROW((void)find_model(id));
  }
}

TEST_CASE("MoE active parameters stay near the published figures") {
  // Published active figures are rounded and use different conventions; 10%.
  for (const char* id : {"qwen3-30b-a3b", "qwen3-235b-a22b", "qwen3-coder-480b-a35b", "deepseek-v3",
                         "kimi-k2", "glm-4.5-air", "gpt-oss-20b", "gpt-oss-120b"}) {
    const auto& a = find_model(id);
    CAPTURE(id);
    CHECK(count_parameters(a).active() / 1e9 == doctest::Approx(a.published_active_b).epsilon(0.10));
  }
  // Mixtral's 12.9B counts the embedding table.
  CHECK(count_parameters(find_model("mixtral-8x7b")).active_with_embedding() / 1e9 ==
        doctest::Approx(12.9).epsilon(0.01));
}

TEST_CASE("invalid architectures name the field") {
  architecture a = find_model("llama-3.1-8b");
  a.num_kv_heads = 0;
  CHECK_THROWS_WITH_AS(validate(a), "architecture.num_kv_heads must be > 0 (got 0)", std::invalid_argument);
  a = find_model("llama-3.1-8b");
  a.num_kv_heads = 5;
  CHECK_THROWS_WITH_AS(validate(a), "architecture.num_heads must be a multiple of num_kv_heads (5) (got 32)",
                       std::invalid_argument);
  a = find_model("llama-3.1-8b");
  a.hidden_size = -4096;
  CHECK_THROWS_WITH_AS(validate(a), "architecture.hidden_size must be > 0 (got -4096)", std::invalid_argument);
  a = find_model("mixtral-8x7b");
  a.moe.experts_per_token = 9;
  CHECK_THROWS_WITH_AS(validate(a), "architecture.moe.experts_per_token must be <= num_experts (8) (got 9)",
                       std::invalid_argument);
  a = find_model("gemma-4-31b");
  a.global_kv_heads = 3;
  CHECK_THROWS_WITH_AS(validate(a), "architecture.global_kv_heads must be a divisor of num_heads (32) (got 3)",
                       std::invalid_argument);
  a.global_kv_heads = 0;
  a.global_head_dim = -1;
  CHECK_THROWS_WITH_AS(validate(a), "architecture.global_head_dim must be in [0, 10000000] (got -1)",
                       std::invalid_argument);
  a = find_model("gpt-oss-20b");
  a.layer_kinds.pop_back();
  CHECK_THROWS_WITH_AS(validate(a), "architecture.layer_kinds size must be num_layers (24) (got 23)",
                       std::invalid_argument);
}

TEST_CASE("unknown model lists the closest ids") {
  CHECK_THROWS_WITH_AS(find_model("llama-3.1-7b"), "unknown model 'llama-3.1-7b'; closest: llama-3.1-70b, llama-3.1-8b, llama-3.2-1b",
                       std::invalid_argument);
}

TEST_CASE("Gemma 4's global layers: their own KV heads and width, keys that serve as values") {
  // google/gemma-4-26B-A4B: 30 layers, 25 sliding (16 heads, 8 KV heads of 256)
  // and 5 global (2 KV heads of 512, attention_k_eq_v), hidden 2816; 128 experts
  // of 704, top 8, beside a dense MLP of 2112 (a shared expert).
  const auto& a = find_model("gemma-4-26b-a4b");
  REQUIRE(a.count_layers(layer_kind::sliding) == 25);
  REQUIRE(a.count_layers(layer_kind::global) == 5);
  CHECK((kv_heads_of(a, layer_kind::global) == 2 && head_dim_of(a, layer_kind::global) == 512));
  CHECK((kv_heads_of(a, layer_kind::sliding) == 8 && head_dim_of(a, layer_kind::sliding) == 256));
  CHECK(a.global_k_is_v);
  // Scores and values per (query, key) pair: 4 x 16 heads x 512 on a global layer, x 256 on a sliding one.
  CHECK(detail::flop_per_pair(a, phase::decode, layer_kind::global) == 4.0 * 16 * 512);
  CHECK(detail::flop_per_pair(a, phase::decode, layer_kind::sliding) == 4.0 * 16 * 256);
  // Sliding: q 2816 x 4096 + k, v 2 x 2816 x 2048 + o 4096 x 2816 + q/k norms 2 x 256 = 34,603,520.
  CHECK(attention_params(a, layer_kind::sliding) == 34603520.0);
  // Global: q 2816 x 8192 + k 2816 x 1024 (no v_proj) + o 8192 x 2816 + 2 x 512 = 49,021,952.
  CHECK(attention_params(a, layer_kind::global) == 49021952.0);
  const auto p = count_parameters(a);
  CHECK(p.attention == 25 * 34603520.0 + 5 * 49021952.0);
  // Experts 30 x 128 x 3 x 2816 x 704 = 22,837,985,280; the dense MLP 30 x 3 x 2816 x 2112.
  CHECK(p.routed_experts == 22837985280.0);
  CHECK(p.shared_experts == 30 * 3.0 * 2816 * 2112);
  // The card's 25.2B total and 3.8B active (SOURCES.md: "about 25B / 3.8B"),
  // which counts the 262,144 x 2816 = 738M embedding table as active.
  CHECK(p.total() / 1e9 == doctest::Approx(25.2).epsilon(0.01));
  CHECK((p.active() + p.embedding) / 1e9 == doctest::Approx(3.8).epsilon(0.02));
}
