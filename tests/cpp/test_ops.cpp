#include <doctest/doctest.h>

#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "llmroof/engine/memory_plan.hpp"
#include "llmroof/step/ops.hpp"

using namespace llmroof;

namespace {
const op& find_op(const op_counts& c, std::string_view name) {
  for (const auto& o : c.list()) {
    if (o.name == name) return o;
  }
  FAIL("no op " << std::string(name));
  return c.ops[0];
}
}  // namespace

TEST_CASE("decode of Llama-3.1-8B in bf16 reads every weight once") {
  const auto& a = find_model("llama-3.1-8b");
  const auto c = count_decode(a, precision{}, 1, 0);
  // Linear weights 32 x (41,943,040 + 176,160,768) = 6,979,321,856 params x 2 B
  // = 13,958,643,712 B; norms (8,192 x 32 + 4,096) x 2 B = 532,480 B;
  // lm_head 525,336,576 x 2 B = 1,050,673,152 B; one embedding row 4,096 x 2 B
  // = 8,192 B -> 15,009,857,536 B.
  CHECK(c.weight_bytes().value() == doctest::Approx(15009857536.0).epsilon(1e-12));
  // lm_head FLOP: 2 x 1 x 4096 x 128,256 = 1,050,673,152.
  CHECK(find_op(c, "lm_head").flop.value() == doctest::Approx(1050673152.0));
  // Attention at c = 0: one pair per layer, 4 x 32 x 128 FLOP x 32 layers = 524,288.
  CHECK(find_op(c, "attention.global").flop.value() == doctest::Approx(524288.0));
  // One new token's KV written: 131,072 B.
  CHECK(find_op(c, "attention.global").kv_written.value() == doctest::Approx(131072.0));
}

TEST_CASE("decode reads the KV cache of every sequence") {
  const auto& a = find_model("llama-3.1-8b");
  // 4 sequences x 1,000 tokens x 131,072 B = 524,288,000 B.
  const auto c = count_decode(a, precision{}, 4, 1000);
  CHECK(c.kv_read_bytes().value() == doctest::Approx(524288000.0));
  // Ragged contexts: (100 + 900) x 131,072 = 131,072,000 B.
  const std::vector<double> ctx{100, 900};
  CHECK(count_decode(a, precision{}, ctx).kv_read_bytes().value() == doctest::Approx(131072000.0));
  // Attention pairs (101 + 901) x 4 x 32 x 128 FLOP x 32 layers = 525,336,576.
  CHECK(find_op(count_decode(a, precision{}, ctx), "attention.global").flop.value() ==
        doctest::Approx(1002.0 * 4 * 32 * 128 * 32));
}

TEST_CASE("prefill: P(P+1)/2 pairs, lm_head for the last token only") {
  const auto& a = find_model("llama-3.1-8b");
  const auto c = count_prefill(a, precision{}, 2048);
  // 2048 x 2049 / 2 = 2,098,176 pairs x 16,384 FLOP x 32 layers = 1.1001e12.
  CHECK(find_op(c, "attention.global").flop.value() == doctest::Approx(2098176.0 * 16384 * 32));
  // Linear layers: 2 x 2048 x 6,979,321,856 = 2.85873e13 FLOP.
  CHECK(find_op(c, "attention.proj").flop.value() + find_op(c, "ffn").flop.value() ==
        doctest::Approx(2.0 * 2048 * 6979321856.0));
  CHECK(find_op(c, "lm_head").flop.value() == doctest::Approx(2.0 * 4096 * 128256));
  // Prefix of 1,000 cached tokens is read once: 1000 x 131,072 B.
  CHECK(count_prefill(a, precision{}, 10, 1000).kv_read_bytes().value() == doctest::Approx(131072000.0));
}

TEST_CASE("prefill in passes: weights per pass, the same pairs, lm_head once") {
  const auto& a = find_model("llama-3.1-8b");
  // 2,048 tokens in passes of 512 (llama.cpp's n_ubatch): 4 passes.
  const auto c = count_prefill_chunked(a, precision{}, 2048, 0, 1, 512);
  CHECK(c.new_tokens == 2048);
  // Each pass reads the linear weights again: 4 x 6,979,321,856 x 2 B = 55,834,574,848 B.
  CHECK(find_op(c, "attention.proj").weights.value() + find_op(c, "ffn").weights.value() ==
        doctest::Approx(4 * 13958643712.0));
  // Their FLOP are the one pass's, 2 x 2048 x 6,979,321,856, on GEMMs of 512 rows.
  CHECK(find_op(c, "attention.proj").flop.value() + find_op(c, "ffn").flop.value() ==
        doctest::Approx(2.0 * 2048 * 6979321856.0));
  CHECK(find_op(c, "ffn").gemm_rows == 512);
  // Causal pairs add up to the one pass's: 512 x (0 + 512 + 1024 + 1536) +
  // 4 x 512 x 513 / 2 = 1,572,864 + 525,312 = 2,098,176 = 2048 x 2049 / 2.
  CHECK(find_op(c, "attention.global").flop.value() == doctest::Approx(2098176.0 * 16384 * 32));
  // Each pass reads the cache the passes before it wrote: (512 + 1024 + 1536)
  // x 131,072 B = 402,653,184 B (the one pass reads none).
  CHECK(find_op(c, "attention.global").kv_read.value() == doctest::Approx(3072.0 * 131072));
  // 4 x 32 layers of kernels; the logits once, for the last token.
  CHECK(find_op(c, "ffn").count == 4 * 32);
  CHECK(find_op(c, "lm_head").flop.value() == doctest::Approx(2.0 * 4096 * 128256));
  // A prompt within one pass, or no pass size, is count_prefill itself.
  const auto one = count_prefill(a, precision{}, 512, 100);
  for (double chunk : {0.0, 512.0, 4096.0}) {
    CHECK(count_prefill_chunked(a, precision{}, 512, 100, 1, chunk).total_bytes() == one.total_bytes());
  }
  // A MoE model's passes each read the experts their tokens route to: at 512
  // tokens x top-8 of Qwen3-30B-A3B's 128, nearly all of them, every pass.
  const auto& q = find_model("qwen3-30b-a3b");
  const auto moe = count_prefill_chunked(q, precision{}, 8192, 0, 1, 512);
  CHECK(find_op(moe, "moe.experts").weights.value() ==
        doctest::Approx(16 * find_op(count_prefill(q, precision{}, 512), "moe.experts").weights.value()));
  CHECK(find_op(moe, "moe.experts").gemm_rows == doctest::Approx(find_op(count_prefill(q, precision{}, 512), "moe.experts").gemm_rows));
  CHECK_THROWS_WITH_AS(count_prefill_chunked(a, precision{}, 2048, 0, 1, 0.5), "chunk must be in [1, 1000000000] (got 0.5)",
                       std::invalid_argument);
  CHECK_THROWS_AS(count_prefill_chunked(a, precision{}, 2048, 0, 1, -1), std::invalid_argument);
  // More prompts than a pass holds: each pass takes whole prompts (at least a
  // token of each), so 600 one-token prompts are one pass, not a half token each.
  CHECK(count_prefill_chunked(a, precision{}, 1, 0, 600, 512).total_bytes() ==
        count_prefill(a, precision{}, 1, 0, 600).total_bytes());
}

TEST_CASE("MoE decode reads the expected distinct experts") {
  const auto& a = find_model("qwen3-30b-a3b");
  // One expert: 3 x 2048 x 768 = 4,718,592 params; 48 MoE layers, bf16.
  // B = 1: 8 experts -> 8 x 4,718,592 x 48 x 2 B = 3,623,878,656 B.
  CHECK(find_op(count_decode(a, precision{}, 1, 0), "moe.experts").weights.value() ==
        doctest::Approx(3623878656.0));
  // B = 16: 82.4226 experts per layer.
  CHECK(find_op(count_decode(a, precision{}, 16, 0), "moe.experts").weights.value() ==
        doctest::Approx(82.4226 * 4718592.0 * 48 * 2).epsilon(1e-5));
  // FLOP follow the tokens: 2 x 16 x 8 x 4,718,592 x 48.
  CHECK(find_op(count_decode(a, precision{}, 16, 0), "moe.experts").flop.value() ==
        doctest::Approx(2.0 * 16 * 8 * 4718592.0 * 48));
}

TEST_CASE("property: per-token decode bytes are at least the active weight bytes") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> ctx(0, 131072);
  for (const auto& a : models()) {
    CAPTURE(a.id);
    for (const char* w : {"bf16", "fp8", "awq-int4", "q4_k_m"}) {
      const precision pr = precision::of(find_format(w), find_format("bf16"));
      const auto p = count_parameters(a);
      // Active weights minus lm_head and embedding, in the weight format, plus
      // lm_head in its own: the least a token can read.
      const double active_linear = p.active() - p.lm_head - p.norms - p.router;
      const double least = pr.weights.bytes_of(active_linear).value() +
                           (a.tied_embeddings ? pr.embedding : pr.lm_head).bytes_of(double(a.vocab_size) * a.hidden_size).value();
      const auto c = count_decode(a, pr, 1, std::floor(ctx(rng)));
      CHECK(c.total_bytes().value() >= least * (1 - 1e-12));
    }
  }
}

TEST_CASE("bad workloads name the field") {
  const auto& a = find_model("llama-3.1-8b");
  CHECK_THROWS_WITH_AS(count_decode(a, precision{}, 0, 10), "batch must be in [1, 1000000000] (got 0)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(count_decode(a, precision{}, 1, -5), "context must be >= 0 (got -5)", std::invalid_argument);
  CHECK_THROWS_WITH_AS(count_prefill(a, precision{}, 0), "prompt must be in [1, 1000000000] (got 0)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(count_decode(a, precision{}, std::vector<double>{}), "contexts size must be >= 1 (got 0)",
                       std::invalid_argument);
}

TEST_CASE("precision::of keeps 16-bit embeddings for checkpoint formats, quantizes them for GGUF") {
  CHECK(precision::of(find_format("int8"), find_format("bf16")).lm_head.name == "bf16");
  CHECK(precision::of(find_format("int4-g32"), find_format("bf16")).lm_head.name == "bf16");
  CHECK(precision::of(find_format("fp8"), find_format("bf16")).lm_head.name == "bf16");
  CHECK(precision::of(find_format("q4_k_m"), find_format("bf16")).lm_head.name == "q4_k_m");
  CHECK(precision::of(find_format("iq4_xs"), find_format("bf16")).embedding.name == "iq4_xs");
  CHECK(precision::of(find_format("fp32"), find_format("bf16")).lm_head.name == "fp32");
}

TEST_CASE("a phase holds at most max_ops ops, and says so past it") {
  op_counts c;
  op o;
  o.name = "x";
  for (std::size_t i = 0; i < max_ops; ++i) c.add(o, op_kind::ffn);
  CHECK(c.list().size() == max_ops);
  o.count = 0;
  c.add(o, op_kind::ffn);  // an op that runs no kernel is dropped, even when full
  o.count = 1;
  CHECK_THROWS_WITH_AS(c.add(o, op_kind::ffn), "a phase holds at most 16 ops", std::length_error);
}
