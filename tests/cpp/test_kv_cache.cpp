#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <stdexcept>

#include "llmroof/model/kv_cache.hpp"

using namespace llmroof;

TEST_CASE("GQA: Llama-3.1-8B bf16 KV is 128 KiB per token") {
  // 2 (K,V) x 8 heads x 128 dims x 2 B x 32 layers = 131,072 B.
  CHECK(kv_bytes_per_token(find_model("llama-3.1-8b"), find_format("bf16")).value() == 131072.0);
}

TEST_CASE("seed: Devstral-Small-2 bf16 KV is 160 KiB per token, 20 GiB at 128k") {
  // 2 x 8 x 128 x 2 B x 40 layers = 163,840 B; x 131,072 tokens = 20 GiB exactly.
  const auto& a = find_model("devstral-small-2-24b");
  CHECK(kv_bytes_per_token(a, find_format("bf16")).value() == 163840.0);
  CHECK(in_GiB(kv_bytes_per_sequence(a, find_format("bf16"), 131072, 16)) == doctest::Approx(20.0));
}

TEST_CASE("MLA: DeepSeek-V3 caches the latent, 70,272 B per token in bf16") {
  // (kv_lora_rank 512 + rope 64) x 2 B x 61 layers = 70,272 B.
  CHECK(kv_bytes_per_token(find_model("deepseek-v3"), find_format("bf16")).value() == 70272.0);
  // fp8: half of it, 35,136 B.
  CHECK(kv_bytes_per_token(find_model("deepseek-v3"), find_format("fp8-e4m3")).value() == 35136.0);
}

TEST_CASE("sliding window: gpt-oss-120b sliding layers hold at most 128 tokens") {
  const auto& a = find_model("gpt-oss-120b");
  CHECK(tokens_held(a, layer_kind::sliding, 100) == 100);
  CHECK(tokens_held(a, layer_kind::sliding, 128) == 128);
  CHECK(tokens_held(a, layer_kind::sliding, 131072) == 128);
  CHECK(tokens_held(a, layer_kind::global, 131072) == 131072);
  // Per layer per token 2 x 8 x 64 x 2 B = 2,048 B. At 1,000 tokens:
  // 18 global x 1000 x 2048 = 36,864,000 + 18 sliding x 128 x 2048 = 4,718,592
  // = 41,582,592 B.
  CHECK(kv_bytes_per_sequence(a, find_format("bf16"), 1000).value() == 41582592.0);
  // The slope within the window, 36 x 2,048 = 73,728 B, and past it, the 18
  // global layers' 18 x 2,048 = 36,864 B: the rate a long context grows at.
  CHECK(kv_bytes_per_token(a, find_format("bf16")).value() == 73728.0);
  CHECK(kv_bytes_per_token_past_windows(a, find_format("bf16")).value() == 36864.0);
  // d/dc of the sequence's bytes past the window is that slope.
  CHECK(kv_bytes_per_sequence(a, find_format("bf16"), 2000).value() -
            kv_bytes_per_sequence(a, find_format("bf16"), 1000).value() ==
        1000 * 36864.0);
}

TEST_CASE("a model without windows grows at one rate") {
  const auto& a = find_model("llama-3.1-8b");
  CHECK(kv_bytes_per_token_past_windows(a, find_format("bf16")).value() ==
        kv_bytes_per_token(a, find_format("bf16")).value());
}

TEST_CASE("linear attention: Qwen3-Next holds a constant state") {
  const auto& a = find_model("qwen3-next-80b-a3b");
  // State: 32 value heads x 128 x 128 = 524,288 + conv (2 x 16 x 128 + 32 x 128)
  // x (4 - 1) = 24,576 -> 548,864 elements x 2 B = 1,097,728 B per layer.
  CHECK(linear_state_bytes_per_layer(a).value() == 1097728.0);
  // 12 full-attention layers x 2 x 2 heads x 256 x 2 B = 24,576 B per token.
  CHECK(kv_bytes_per_token(a, find_format("bf16")).value() == 24576.0);
  // At context 0 only the 36 linear states remain: 36 x 1,097,728 = 39,518,208 B.
  CHECK(kv_bytes_per_sequence(a, find_format("bf16"), 0).value() == 39518208.0);
}

TEST_CASE("paged blocks round each sequence up") {
  const auto& a = find_model("llama-3.1-8b");
  // 1,000 tokens in blocks of 16 -> 63 blocks = 1,008 tokens x 131,072 B = 132,120,576 B.
  CHECK(kv_bytes_per_sequence(a, find_format("bf16"), 1000, 16).value() == 132120576.0);
  CHECK(kv_bytes_per_sequence(a, find_format("bf16"), 1000, 1).value() == 131072000.0);
}

TEST_CASE("property: KV bytes are linear in tokens below every window") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> tok(0, 127);
  for (const auto& a : models()) {
    CAPTURE(a.id);
    const auto& kv = find_format("fp8-e4m3");
    const double slope = kv_bytes_per_token(a, kv).value();
    const double base = kv_bytes_per_sequence(a, kv, 0).value();  // linear state only
    for (int i = 0; i < 20; ++i) {
      const double c = std::floor(tok(rng));
      CHECK(kv_bytes_per_sequence(a, kv, c).value() == doctest::Approx(base + slope * c));
    }
  }
}

TEST_CASE("property: KV bytes never decrease with context, and grow no faster than the slope") {
  for (const auto& a : models()) {
    CAPTURE(a.id);
    const auto& kv = find_format("bf16");
    double prev = -1;
    for (double c = 0; c < 300000; c = c * 1.7 + 100) {
      const double now = kv_bytes_per_sequence(a, kv, c, 16).value();
      CHECK(now >= prev);
      prev = now;
    }
  }
}

TEST_CASE("bad context or block size names the field") {
  const auto& a = find_model("llama-3.1-8b");
  CHECK_THROWS_WITH_AS(kv_bytes_per_sequence(a, find_format("bf16"), -1), "context must be >= 0 (got -1)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(kv_bytes_per_sequence(a, find_format("bf16"), std::nan("")), "context must be >= 0 (got nan)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(kv_bytes_per_sequence(a, find_format("bf16"), 10, 0), "block_tokens must be > 0 (got 0)",
                       std::invalid_argument);
}

TEST_CASE("Gemma 4's global layers cache their own KV heads and width") {
  // gemma-4-31b: 50 sliding layers (16 KV heads of 256, window 1024) and 10
  // global (4 KV heads of 512). bf16 per token and layer: sliding 2 x 16 x 256
  // x 2 B = 16,384; global 2 x 4 x 512 x 2 B = 8,192 (K and V both cached,
  // though the keys serve as values). At 131,072 tokens:
  // 50 x 1,024 x 16,384 + 10 x 131,072 x 8,192 = 838,860,800 + 10,737,418,240.
  const architecture& a = find_model("gemma-4-31b");
  const numeric_format& bf16 = find_format("bf16");
  REQUIRE((a.count_layers(layer_kind::sliding) == 50 && a.count_layers(layer_kind::global) == 10));
  CHECK(kv_bytes_per_token(a, layer_kind::sliding, bf16).value() == 16384.0);
  CHECK(kv_bytes_per_token(a, layer_kind::global, bf16).value() == 8192.0);
  CHECK(kv_bytes_per_sequence(a, bf16, 131072).value() == 838860800.0 + 10737418240.0);
  // Read as the sliding layers' geometry, the global layers would cache twice that.
  architecture same = a;
  same.global_kv_heads = same.global_head_dim = 0;
  CHECK(kv_bytes_per_sequence(same, bf16, 131072).value() == 838860800.0 + 2 * 10737418240.0);
}
