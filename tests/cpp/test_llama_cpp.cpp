// llama.cpp as it runs (issue 33 item 4): a layer split across GPUs by
// default, one slot that queues the other users, an offloaded prompt whose
// host GEMMs run on the GPU, and the fewest layers to offload.
#include <doctest/doctest.h>

#include <cmath>

#include "llmroof/serving/alternatives.hpp"
#include "llmroof/serving/load_model.hpp"

using namespace llmroof;

namespace {

deployment llama(const char* dev, int n, std::optional<int> tp = std::nullopt) {
  request r;
  r.model = &find_model("qwen3-32b");
  r.dev = &find_device(dev);
  r.layout.devices_per_node = n;
  r.layout.tp = tp;
  r.weights = find_format("q4_k_m");
  r.engine = "llama.cpp";
  return resolve(r);
}

}  // namespace

TEST_CASE("llama.cpp: two GPUs split the layers by default; --tp asks for the row split") {
  const deployment d = llama("rtx-4090", 2);
  CHECK(d.parallel().pp == 2);
  CHECK(d.parallel().tp == 1);
  // The same step as the layer split asked for explicitly.
  request r;
  r.model = &find_model("qwen3-32b");
  r.dev = &find_device("rtx-4090");
  r.layout.devices_per_node = 2;
  r.layout.pp = 2;
  r.weights = find_format("q4_k_m");
  r.engine = "llama.cpp";
  CHECK(resolve(r).decode(1, 4096).estimate.value() == doctest::Approx(d.decode(1, 4096).estimate.value()));
  // One token passes through both halves in turn: a layer split never beats
  // one device holding it all, while the row split (TP) reads half on each.
  const deployment row = llama("rtx-4090", 2, 2);
  CHECK(row.parallel().tp == 2);
  CHECK(row.decode(1, 4096).estimate < d.decode(1, 4096).estimate);
  // vLLM on the same two GPUs takes TP.
  r.layout.pp.reset();
  r.engine = "vllm";
  CHECK(resolve(r).parallel().tp == 2);
}

TEST_CASE("llama.cpp layer split: each boundary adds 0.12 ms to a token, so more GPUs decode slower") {
  // Llama-3-8B Q4_K_M on 2 and 6 RTX 3090 (XiongjieDai, May 2024 builds):
  // 111.67 and 104.17 tokens/s, 8.955 and 9.600 ms per token: +0.645 ms for
  // four more boundaries. Each boundary costs the class's 0.12 ms beyond the
  // link's latency and bytes (engines.cpp, split_hop).
  request r;
  r.model = &find_model("llama-3-8b");
  r.dev = &find_device("rtx-3090");
  r.weights = find_format("q4_k_m");
  r.engine = "llama.cpp@2024";
  r.layout.devices_per_node = 6;
  const deployment six = resolve(r);
  REQUIRE(six.parallel().pp == 6);
  CHECK(six.efficiency().per_hop.value() == doctest::Approx(0.12e-3));
  efficiency_profile none = six.efficiency();
  none.per_hop = make_seconds(0);
  // Five boundaries x 0.12 ms.
  CHECK((six.decode(1, 512).estimate - six.with_efficiency(none).decode(1, 512).estimate).value() ==
        doctest::Approx(5 * 0.12e-3));
  r.layout.devices_per_node = 2;
  const deployment two = resolve(r);
  const double added = (six.decode(1, 512).estimate - two.decode(1, 512).estimate).value();
  CAPTURE(added);
  CHECK(added > 0.4e-3);  // measured +0.645 ms
  CHECK(added < 0.9e-3);
  // vLLM's pipeline stages take no such cost.
  r.engine = "vllm";
  CHECK(resolve(r).efficiency().per_hop.value() == 0);
}

TEST_CASE("llama.cpp: 8 users on its one slot wait for 7 whole requests") {
  const deployment d = llama("rtx-4090", 1);
  workload w;
  w.users = 8;
  w.context = 8192;
  w.prompt = 2048;
  w.output = 512;
  const closed_loop_result c = serve_closed_loop(d, w, 8);
  CHECK(c.slots == 1);
  CHECK(c.limit == serving_limit::max_num_seqs);
  // One request alone: TTFT + 511 x TPOT (its prefill samples the first of
  // 512 tokens); the 7 ahead of a new one take 7 of those.
  const load_result alone = serve_at_rate(d, w, 0, 0);
  const double request_s = alone.ttft.value() + 511 * alone.tpot.value();
  CHECK(c.requests_per_s == doctest::Approx(1 / request_s));
  CHECK(c.queue_wait.value() == doctest::Approx(7 * request_s));
  CHECK(c.ttft.value() == doctest::Approx(alone.ttft.value() + 7 * request_s));
  // About 15 s per request on an RTX 4090 (2,048-token prompt, 512 tokens at
  // ~36 t/s): each user waits ~106 s before its first token.
  CHECK(c.queue_wait.value() > 60);
}

TEST_CASE("llama.cpp: an offloaded prompt runs its host layers' GEMMs on the GPU, weights streamed per micro-batch") {
  const deployment gpu = llama("rtx-4090", 1);
  offload_plan half;
  half.layers = 0.5;
  const deployment d = gpu.with_offload(half);
  const phase_timing p = d.prefill(2048);
  // 2,048 tokens in micro-batches of 512: the host half's GEMM weights cross
  // PCIe 4 times. Their bytes: half of the attention projections' and MLPs',
  // which the all-GPU prefill reads 4 times too (once per pass).
  double gemm_weights = 0;
  for (const op& o : gpu.prefill(2048).counts.ops) {
    if (o.kind == op_kind::attention_proj || o.kind == op_kind::ffn) gemm_weights += o.weights.value();
  }
  double streamed = -1;
  for (const op& o : p.counts.ops) {
    if (o.name == "comm.pcie.weights") streamed = o.network.value();
  }
  CHECK(streamed == doctest::Approx(0.5 * gemm_weights));
  CHECK(gemm_weights == doctest::Approx(4 * llama("rtx-4090", 1).prefill(512).counts.sum([](const op& o) {
    return o.kind == op_kind::attention_proj || o.kind == op_kind::ffn ? o.weights : make_bytes(0);
  }).value()));
  // Prefill speed lies between all-GPU and the CPU-computed prompt (a prompt
  // under 32 tokens stays on the CPU, per token far slower).
  const double tps = 2048 / p.estimate.value();
  CHECK(tps < 2048 / gpu.prefill(2048).estimate.value());
  const double cpu_tps = 16 / d.prefill(16).estimate.value();
  CHECK(tps > 5 * cpu_tps);
  // Decode still reads the host half on the CPU, every token.
  CHECK(d.decode(1, 2048).estimate > gpu.decode(1, 2048).estimate);
}

TEST_CASE("llama.cpp: the fewest layers to offload fit, one fewer does not") {
  const deployment d = llama("rtx-4090", 1);
  const auto o = smallest_offload(d, 1, 32768);
  REQUIRE(o);
  const int layers = d.model.num_layers;
  const long k = std::lround(o->layers * layers);
  CHECK(k > 0);
  CHECK(d.with_offload(*o).memory(1, 32768).fits);
  offload_plan fewer = *o;
  fewer.layers = double(k - 1) / layers;
  CHECK_FALSE(d.with_offload(fewer).memory(1, 32768).fits);
  // Already fitting: no layer leaves; beyond every layer: none fits.
  CHECK(smallest_offload(d, 1, 4096)->layers == 0);
  CHECK_FALSE(smallest_offload(d, 1, 4 * 1048576));
  workload w;
  w.context = 32768;
  CHECK(with_offload_auto(d, w).offload()->layers == doctest::Approx(o->layers));
  w.context = 4 * 1048576;
  CHECK_THROWS_WITH_AS(with_offload_auto(d, w), "offload auto: 1 x 4194304 tokens do not fit even with every layer in host RAM",
                       std::invalid_argument);
}

TEST_CASE("llama.cpp Metal at 32k: flash attention reads the cache at the weights' speed, the unfused path slower") {
  // mlx-examples issue 1029 (T3-0332/0334 of data/measured/release3): Llama-3.1-8B
  // Q4_K_M, M3 Max, after a 32,163-token prompt: 33.40 t/s with -fa 1, 9.48 with -fa 0.
  request r;
  r.model = &find_model("llama-3.1-8b");
  r.dev = &find_device("m3-max-40c");
  r.weights = find_format("q4_k_m");
  r.kv = find_format("fp16");
  r.engine = "llama.cpp";
  const deployment fa = resolve(r);
  REQUIRE(fa.efficiency().fused_attention);
  const double with_fa = fa.decode(1, 32163 + 400).tokens_per_s_estimate().value();
  efficiency_profile off = fa.efficiency();
  off.fused_attention = false;
  const double without = fa.with_efficiency(off).decode(1, 32163 + 400).tokens_per_s_estimate().value();
  CAPTURE(with_fa);
  CAPTURE(without);
  CHECK(std::abs(with_fa / 33.40 - 1) < 0.15);
  // The fit over every unfused Metal row (calibration.csv and the third
  // release: 2023-24 builds at -fa 0, this pair among them) reads the cache
  // at 0.335 of eta_m, where this pair alone says ~1/8: 15.0 t/s predicted
  // for 9.48 measured. The unfused path stays twice as slow at 32k.
  CHECK(without < with_fa / 1.8);
  CHECK(std::abs(without / 9.48 - 1) < 0.6);
}

TEST_CASE("vLLM's V0 engine (vllm@0.6) pays 82 us of host work per sequence per decode step; V1 none") {
  // 64 sequences: 64 x 82 us = 5.248 ms more per step than V1's, the same
  // kernels; a prefill is not a decode step (its host work is per request).
  request r;
  r.model = &find_model("qwen3-8b");
  // A part without kernel fits, where both versions share the class default
  // and differ in that trait alone (on NVIDIA parts V1 is priced from the
  // kernel database, V0 keeps the launch-priced default).
  r.dev = &find_device("mi300x");
  r.engine = "vllm";
  const deployment v1 = resolve(r);
  r.engine = "vllm@0.6";
  const deployment v0 = resolve(r);
  CHECK(v0.efficiency().per_sequence.value() == doctest::Approx(82e-6));
  CHECK(v1.efficiency().per_sequence.value() == 0);
  CHECK((v0.decode(64, 1024).estimate - v1.decode(64, 1024).estimate).value() == doctest::Approx(64 * 82e-6));
  CHECK((v0.decode(1, 1024).estimate - v1.decode(1, 1024).estimate).value() == doctest::Approx(82e-6));
  CHECK(v0.prefill(2048).estimate.value() == doctest::Approx(v1.prefill(2048).estimate.value()));
  CHECK(find_kernel_class(engine_id::vllm, "0.7.3", "")->key == "vllm@v0");
  CHECK(find_kernel_class(engine_id::vllm, "0.8", "")->key == "vllm");
  CHECK(engine_of_class("vllm@v0") == "vllm@0.6");
}
