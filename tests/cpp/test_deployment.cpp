#include <doctest/doctest.h>

#include "llmroof/serving/alternatives.hpp"
#include "llmroof/serving/plan.hpp"
#include "llmroof/deployment.hpp"

using namespace llmroof;

TEST_CASE("infer_layout: tensor parallel over every device unless told otherwise") {
  const auto plan = [](int per_node, int nodes, std::optional<int> tp, std::optional<int> pp, std::optional<int> ep) {
    return infer_layout({per_node, nodes, tp, pp, ep, std::nullopt, std::nullopt});
  };
  CHECK(plan(1, 1, {}, {}, {}).tp == 1);
  CHECK(plan(8, 1, {}, {}, {}).tp == 8);
  CHECK(plan(8, 2, {}, {}, {}).tp == 16);  // 2 nodes x 8
  const parallel_plan pp = plan(8, 1, {}, 2, {});  // pp alone: tp = 8 / 2
  CHECK((pp.tp == 4 && pp.pp == 2));
  // ep 1 splits no experts: the devices are tensor parallel, as with nothing given.
  CHECK(plan(8, 1, {}, {}, 1).tp == 8);
  const parallel_plan pp_ep1 = plan(8, 1, {}, 2, 1);
  CHECK((pp_ep1.tp == 4 && pp_ep1.pp == 2 && pp_ep1.ep == 1));
  const parallel_plan ep = plan(8, 1, {}, {}, 8);
  CHECK((ep.ep == 8 && ep.tp == 1 && ep.devices() == 8));
  CHECK_THROWS_WITH_AS(plan(8, 1, 4, {}, {}), "tp x pp (4 x 1 = 4) must equal the devices (8)", std::invalid_argument);
  CHECK_THROWS_WITH_AS(plan(8, 1, {}, {}, 4), "ep (4) must equal the devices (8)", std::invalid_argument);
  // tp and ep together: TP attention over the 8, experts in ep groups.
  const parallel_plan tp_ep = plan(8, 1, 8, {}, 8);
  CHECK((tp_ep.tp == 8 && tp_ep.ep == 8 && tp_ep.devices() == 8 && !tp_ep.attention_data_parallel()));
  const parallel_plan moe_tp_ep = plan(8, 1, 8, {}, 2);
  CHECK((moe_tp_ep.tp == 8 && moe_tp_ep.ep == 2 && moe_tp_ep.devices() == 8));
  // SGLang's --tp 8 --ep 8 --enable-dp-attention: DP attention beside EP experts, the ep-alone layout.
  const parallel_plan sglang_dp_ep = infer_layout({8, 1, 8, {}, 8, std::nullopt, std::nullopt, true});
  CHECK((sglang_dp_ep.tp == 1 && sglang_dp_ep.ep == 8 && sglang_dp_ep.ep_only()));
  CHECK_THROWS_WITH_AS(plan(1024, 65, {}, {}, {}), "nodes x devices must be <= 65536 (got 65 x 1024)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(plan(0, 1, {}, {}, {}), "devices must be in [1, 1024] (got 0)", std::invalid_argument);
}

TEST_CASE("resolve: formats, engine profile and layout decided once") {
  request q;
  q.model = &find_model("llama-3.1-8b");
  q.dev = &find_device("h100-sxm");
  // Nothing given: BF16 weights and KV, vLLM, the engine's profile on the device.
  const deployment d = resolve(q);
  CHECK(d.pr.weights.name == "bf16");
  CHECK(d.pr.kv.name == "bf16");
  CHECK(d.engine.id == engine_id::vllm);
  CHECK(d.devices() == 1);
  CHECK(d.efficiency().memory == default_profile(*q.dev, "vllm").memory);
  // A file's formats, module by module, unless weights are named; its KV format unless kv is.
  precision file = precision::of(find_format("awq-int4"), find_format("fp8-e4m3"));
  file.lm_head = find_format("bf16");
  q.file_formats = file;
  const deployment f = resolve(q);
  CHECK(f.pr.weights.name == "awq-int4");
  CHECK(f.pr.kv.name == "fp8-e4m3");
  q.weights = find_format("fp8");
  q.kv = find_format("bf16");
  const deployment g = resolve(q);
  CHECK(g.pr.weights.name == "fp8");
  CHECK(g.pr.kv.name == "bf16");
  // The engine's traits come with it: llama.cpp multiplies quantized weights in int8.
  q.engine = "llama.cpp";
  CHECK(resolve(q).efficiency().quantized_path == kernel_path::int8_dot);
  // llama.cpp splits several devices by layers (its default split mode):
  // 6 devices are 6 pipeline stages of 32 / 6 layers, no head split needed.
  q.layout.devices_per_node = 6;
  const deployment split = resolve(q);
  CHECK(split.parallel().pp == 6);
  CHECK(split.parallel().tp == 1);
  // vLLM takes TP over them; a layout nobody asked for says where it came from.
  q.engine = "vllm";
  CHECK_THROWS_WITH_AS(resolve(q),
                       "tp must be a divisor of the 32 attention heads of 'llama-3.1-8b' (got 6); tp defaults to "
                       "the 6 devices: give tp, pp or ep",
                       std::invalid_argument);
  q.model = nullptr;
  CHECK_THROWS_WITH_AS(resolve(q), "model is required", std::invalid_argument);
}

TEST_CASE("resolve: no engine named is the device's own, never vLLM where it does not run") {
  request q;
  q.model = &find_model("qwen3-30b-a3b");
  const auto engine_on = [&q](const char* dev) {
    q.dev = &find_device(dev);
    return resolve(q).engine.id;
  };
  // vLLM has no Metal or CPU path that people serve from: llama.cpp there.
  CHECK(engine_on("m4-max-40c") == engine_id::llama_cpp);
  CHECK(engine_on("m3-ultra-80c") == engine_id::llama_cpp);
  CHECK(engine_on("ryzen-9-7950x") == engine_id::llama_cpp);
  CHECK(engine_on("arc-b580") == engine_id::llama_cpp);
  CHECK(engine_on("h100-sxm") == engine_id::vllm);
  CHECK(engine_on("rtx-4090") == engine_id::vllm);
  CHECK(engine_on("gaudi-3") == engine_id::vllm);
  // One rule: the first engine a search tries there, and its Metal kernels on a Mac.
  for (const device& d : devices()) {
    CAPTURE(d.id);
    CHECK(default_engine_for(d) == engines_for(d).front());
  }
  q.dev = &find_device("m4-max-40c");
  CHECK(resolve(q).engine.qualified_name() == "llama.cpp");
  CHECK(resolve(q).efficiency().quantized_path == default_profile(*q.dev, "llama.cpp").quantized_path);
  // A named engine is taken as named (mlx-lm on the same Mac).
  q.engine = "mlx";
  CHECK(resolve(q).engine.id == engine_id::mlx);
  // Without a device (a KV cache's size): vLLM's blocks.
  q.dev = nullptr;
  q.engine.clear();
  CHECK(resolve(q).engine.id == engine_id::vllm);
}

TEST_CASE("resolve: llama.cpp row-splits dense models only; Ollama splits by layers only") {
  request q;
  q.dev = &find_device("rtx-4090");
  q.layout.devices_per_node = 2;
  q.layout.tp = 2;
  q.engine = "llama.cpp";
  q.model = &find_model("llama-3.1-8b");
  CHECK(resolve(q).parallel().tp == 2);
  CHECK(resolve(q).parallel().row_split);  // llama.cpp's tensor parallelism is its row split
  CHECK(layout_name(resolve(q).parallel()) == "TP 2 (row split)");
  q.model = &find_model("qwen3-30b-a3b");
  CHECK_THROWS_WITH_AS(resolve(q),
                       "tp: llama.cpp's row split (--split-mode row) does not split a Mixture-of-Experts model's "
                       "experts; split 'qwen3-30b-a3b' by layers (pp, the default)",
                       std::invalid_argument);
  q.layout.tp.reset();
  CHECK(resolve(q).parallel().pp == 2);  // the layer split, its default
  q.engine = "ollama";
  q.layout.tp = 2;
  q.model = &find_model("llama-3.1-8b");
  CHECK_THROWS_WITH_AS(resolve(q),
                       "tp: ollama splits a model over devices by layers only (it exposes no --split-mode row); "
                       "give pp or no degree",
                       std::invalid_argument);
}

TEST_CASE("resolve: an engine that runs prompts in passes runs them in passes of its token budget") {
  request q;
  q.model = &find_model("llama-3.1-8b");
  q.dev = &find_device("rtx-4090");
  q.engine = "llama.cpp";
  CHECK(resolve(q).efficiency().prefill_chunk == 512);  // n_ubatch
  q.engine_options.max_batched_tokens = 2048;           // -ub 2048
  const deployment big = resolve(q);
  CHECK(big.efficiency().prefill_chunk == 2048);
  // 4,096 tokens: 2 passes of 2,048 read the layers' weights twice, not 8
  // times (lm_head once either way).
  const auto weights = [](const deployment& d) {
    return d.prefill(4096).counts.sum([](const op& o) {
      return o.kind == op_kind::attention_proj || o.kind == op_kind::ffn ? o.weights : make_bytes(0);
    }).value();
  };
  q.engine_options.max_batched_tokens.reset();
  CHECK(weights(resolve(q)) / weights(big) == doctest::Approx(4).epsilon(0.01));
  q.engine = "vllm";  // one pass up to its budget
  CHECK(resolve(q).efficiency().prefill_chunk == 0);
}

TEST_CASE("resolve: a catalog model without weights named is planned in its publisher's checkpoint") {
  request q;
  q.dev = &find_device("h100-sxm");
  q.model = &find_model("gpt-oss-120b");
  const deployment g = resolve(q);
  CHECK(g.formats_from == "checkpoint");
  CHECK(g.checkpoint == "openai/gpt-oss-120b");
  // MXFP4 experts; attention, router, embedding and lm_head left in bf16 (modules_to_not_convert).
  CHECK(g.pr.experts_format().name == "mxfp4");
  CHECK(g.pr.attention_format().name == "bf16");
  CHECK(g.pr.embedding.name == "bf16");
  CHECK(g.pr.lm_head.name == "bf16");
  CHECK(g.pr.kv.name == "bf16");
  // 114.702e9 expert params x 4.25 / 8 = 60.94 GB; attention 0.956e9, embedding
  // and lm_head 0.579e9 each and routers 0.013e9 at 2 B: 4.25 GB; 65.19 GB in all,
  // 64.38 GiB as vLLM loads it on an H100 (engine_memory.csv ML-013) before its MXFP4 padding.
  CHECK(weight_bytes(g.model, g.pr).value() == doctest::Approx(65.19e9).epsilon(0.001));
  // FP8 with 128 x 128 block scales for DeepSeek-V3 and Kimi K2: 8 + 32/16384 bits.
  q.model = &find_model("deepseek-v3");
  const deployment d = resolve(q);
  CHECK(d.pr.weights.name == "fp8");
  CHECK(d.pr.embedding.name == "bf16");
  CHECK(resolve(q).checkpoint == "deepseek-ai/DeepSeek-V3");
  // Kimi K2.5: INT4 routed experts in groups of 32; attention and dense FFN bf16.
  q.model = &find_model("kimi-k2.5");
  const deployment k = resolve(q);
  CHECK(k.pr.experts_format().name == "int4-g32");
  CHECK(k.pr.attention_format().name == "bf16");
  CHECK(k.pr.ffn_format().name == "bf16");
  // Named weights win; a model published in 16 bits stays bf16.
  q.weights = find_format("bf16");
  CHECK(resolve(q).formats_from == "asked");
  CHECK(resolve(q).pr.experts_format().name == "bf16");
  q.weights.reset();
  q.model = &find_model("llama-3.1-8b");
  CHECK(resolve(q).formats_from == "default");
  CHECK(resolve(q).pr.weights.name == "bf16");
  CHECK(resolve(q).checkpoint.empty());
}

TEST_CASE("what would make it fit: formats the engine runs and a larger memory share") {
  request q;
  q.dev = &find_device("h100-sxm");
  q.model = &find_model("gpt-oss-120b");
  workload w;
  w.users = 1;
  w.context = 4096;
  const deployment g = resolve(q);
  const memory_plan now = g.memory(w.users, w.context);
  // 64.50 GiB of weights (65.19 GB + MXFP4 rows padded 2880 -> 3072) and vLLM's
  // 7.44 GiB profile peak overrun 0.9 x 79.2 GiB: no KV room.
  CHECK_FALSE(now.fits);
  const std::vector<alternative> alts = plan_alternatives(g, w, now);
  const auto find = [&](std::string_view change) -> const alternative* {
    for (const auto& a : alts) {
      if (a.change == change) return &a;
    }
    return nullptr;
  };
  // At 0.95 x 79.2 = 75.2 GiB, 3.2 GiB are left for the KV cache (vLLM reported 3.33, ML-013).
  const alternative* share = find("memory utilisation 0.95");
  REQUIRE(share != nullptr);
  CHECK(share->fits);
  // MXFP4 at 4.25 bits is as small as the engine's formats go: none is offered.
  CHECK(find("weights in awq-int4") == nullptr);
  CHECK(find("weights in fp8") == nullptr);
  // Llama-3.1-70B in bf16 (141 GB): FP8 (70.6 GB = 65.7 GiB) still overruns with
  // the profile peak, AWQ INT4 (36.7 GB) fits.
  q.model = &find_model("llama-3.1-70b");
  const deployment l = resolve(q);
  const auto lalts = plan_alternatives(l, w, l.memory(w.users, w.context));
  bool fp8 = false, awq = false;
  for (const auto& a : lalts) {
    if (a.change == "weights in fp8") fp8 = !a.fits && a.weights == "fp8";
    if (a.change == "weights in awq-int4") awq = a.fits && a.weights == "awq-int4";
  }
  CHECK(fp8);
  CHECK(awq);
  // llama.cpp holds the whole device: no memory share to raise; GGUF quants instead.
  q.engine = "llama.cpp";
  const deployment c = resolve(q);
  bool share_offered = false, q4 = false;
  for (const auto& a : plan_alternatives(c, w, c.memory(w.users, w.context))) {
    share_offered = share_offered || a.change == "memory utilisation 0.95";
    q4 = q4 || a.change == "weights in q4_k_m";
  }
  CHECK_FALSE(share_offered);
  CHECK(q4);
}

TEST_CASE("what would make it fit: a smaller max_num_seqs where the sampler's profiled peak leaves no KV cache") {
  // Issue 55 item 5. gpt-oss-120b on one H100 under vLLM: weights 64.50 GiB
  // and the activation peak at 1,024 profiled sequences 7.44 GiB overrun the
  // 71.28 GiB usable. The peak's sampler part scales with max_num_seqs, so
  // 512 sequences profile 3.72 GiB (half) and leave room for the one user:
  // the largest power of two below 1,024 that fits.
  request q;
  q.dev = &find_device("h100-sxm");
  q.model = &find_model("gpt-oss-120b");
  const deployment d = resolve(q);
  workload w;
  const plan_result r = plan(d, w);
  REQUIRE_FALSE(r.memory.fits);
  const auto fewer_seqs = [](const alternative& a) { return a.change.rfind("max_num_seqs", 0) == 0; };
  const auto it = std::find_if(r.alternatives.begin(), r.alternatives.end(), fewer_seqs);
  REQUIRE(it != r.alternatives.end());
  CHECK(it->change == "max_num_seqs 512");
  CHECK(it->fits);
  engine_settings e = d.engine;
  e.max_sequences = 512;
  const deployment half(d.model, d.pr, d.roof(), d.where, e, d.stored);
  CHECK(half.memory(1, w.context).activations.value() ==
        doctest::Approx(r.memory.activations.value() / 2).epsilon(0.01));
  e.max_sequences = 1024;  // the default: the same plan
  CHECK_FALSE(deployment(d.model, d.pr, d.roof(), d.where, e, d.stored).memory(1, w.context).fits);
  // llama.cpp profiles no sampler batch (one sequence): no such change.
  q.engine = "llama.cpp";
  const plan_result l = plan(resolve(q), w);
  CHECK(std::none_of(l.alternatives.begin(), l.alternatives.end(), fewer_seqs));
}

TEST_CASE("what would make it fit leaves out the layouts the model cannot take (issue 60)") {
  // Phi-4 (40 heads, 10 KV heads) in bf16 (29.3 GB) on a 24 GB RTX 4090:
  // TP 2 splits its KV heads, TP 4 neither divides nor is a multiple of 10.
  request q;
  q.dev = &find_device("rtx-4090");
  q.model = &find_model("phi-4");
  const deployment d = resolve(q);
  workload w;
  const std::vector<alternative> alts = plan_alternatives(d, w, d.memory(w.users, w.context));
  bool two = false;
  for (const alternative& a : alts) {
    CHECK(a.devices != 4);
    two = two || a.change == "2 devices (TP 2)";
  }
  CHECK(two);
  CHECK_NOTHROW(plan(d, w));
  // Qwen2.5-0.5B (14 heads) and SmolLM2-360M (15) with more users than fit: no TP 4 / TP 2 either.
  q.model = &find_model("smollm2-360m");
  q.dev = &find_device("h100-sxm");
  w.users = 2000;
  const deployment s = resolve(q);
  for (const alternative& a : plan(s, w).alternatives) CHECK(a.devices == 1);
}

TEST_CASE("resolve: a quantized checkpoint's name selects its weights and refuses others") {
  CHECK(format_in_name("Qwen/Qwen3-32B-AWQ") == std::optional<std::string>("awq-int4"));
  CHECK(format_in_name("Qwen/Qwen3-30B-A3B-FP8") == std::optional<std::string>("fp8"));
  CHECK(format_in_name("RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic") == std::optional<std::string>("fp8-e4m3"));
  CHECK(format_in_name("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8") == std::optional<std::string>("int8-wo"));
  CHECK(format_in_name("nvidia/Kimi-K2.6-NVFP4") == std::optional<std::string>("nvfp4"));
  CHECK(format_in_name("unsloth/Qwen3-32B-GGUF:Q4_K_M") == std::optional<std::string>("q4_k_m"));
  CHECK_FALSE(format_in_name("meta-llama/Llama-3.1-8B-Instruct").has_value());
  CHECK_FALSE(format_in_name("awqward-7b-q4_k_mx").has_value());  // words, not fragments
  request q;
  q.dev = &find_device("h100-sxm");
  q.model = &find_model("Qwen/Qwen3-32B-AWQ");
  q.name = "Qwen/Qwen3-32B-AWQ";
  const deployment a = resolve(q);
  CHECK(a.pr.weights.name == "awq-int4");
  CHECK(a.pr.lm_head.name == "bf16");  // AWQ checkpoints keep lm_head and the embedding in 16 bits
  CHECK(a.formats_from == "name");
  CHECK(a.checkpoint == "Qwen/Qwen3-32B-AWQ");
  q.weights = find_format("awq-int4");
  CHECK(resolve(q).formats_from == "asked");
  q.weights = find_format("bf16");
  CHECK_THROWS_WITH_AS(resolve(q), "weights 'bf16' contradict the model name 'Qwen/Qwen3-32B-AWQ' (awq-int4)",
                       std::invalid_argument);
  // The name beats the publisher's checkpoint: DeepSeek-V3 in NVIDIA's FP4.
  q.weights.reset();
  q.model = &find_model("deepseek-v3");
  q.name = "nvidia/DeepSeek-V3-NVFP4";
  CHECK(resolve(q).pr.weights.name == "nvfp4");
}

TEST_CASE("decode_estimate: decode()'s estimate without its breakdown, to the bit") {
  struct shape {
    const char* model;
    const char* dev;
    const char* engine;
    int tp, pp, ep;
    bool dp_attention;
  };
  for (const shape& s : {shape{"llama-3.1-8b", "h100-sxm", "vllm", 1, 1, 1, false},
                         shape{"llama-3.1-70b", "h100-sxm", "vllm", 4, 1, 1, false},
                         shape{"llama-3.1-70b", "rtx-4090", "llama.cpp", 1, 4, 1, false},
                         shape{"qwen3-30b-a3b", "h100-sxm", "vllm", 1, 1, 4, false},
                         shape{"deepseek-v3", "h200", "sglang", 8, 1, 1, true}}) {
    CAPTURE(s.model);
    request q;
    q.model = &find_model(s.model);
    q.dev = &find_device(s.dev);
    q.engine = s.engine;
    q.layout.devices_per_node = s.tp * s.pp * s.ep;
    if (s.tp > 1) q.layout.tp = s.tp;
    if (s.pp > 1) q.layout.pp = s.pp;
    if (s.ep > 1) q.layout.ep = s.ep;
    q.layout.dp_attention = s.dp_attention;
    if (std::string_view(s.model) == "deepseek-v3") q.weights = find_format("fp8-e4m3");
    if (std::string_view(s.engine) == "llama.cpp") q.weights = find_format("q4_k_m");
    const deployment d = resolve(q);
    for (double batch : {1.0, 7.0, 64.0}) {
      for (double width : {1.0, 4.0}) {
        CHECK(d.decode_estimate(batch, 4096, width).value() == d.decode(batch, 4096, width).estimate.value());
      }
    }
  }
}

TEST_CASE("resolve: across nodes, replicas where one node holds the model, TP over the nodes where it needs them") {
  request q;
  q.dev = &find_device("h100-sxm");
  q.layout.devices_per_node = 8;
  q.layout.nodes = 2;
  // Llama-3.3-70B in bf16 (141 GB) fits one node of 8 x 80 GB: 2 x TP 8, no
  // collective over InfiniBand.
  q.model = &find_model("llama-3.3-70b");
  const deployment two = resolve(q);
  CHECK(two.replicas() == 2);
  CHECK(two.parallel().tp == 8);
  CHECK(two.devices() == 16);
  CHECK(two.nodes() == 2);
  CHECK(two.instance().devices() == 8);
  // Kimi K2 in FP8 (~1 TB) does not fit 640 GB: TP 16 over both nodes.
  q.model = &find_model("kimi-k2");
  q.weights = find_format("fp8");
  const deployment kimi = resolve(q);
  CHECK(kimi.replicas() == 1);
  CHECK(kimi.parallel().tp == 16);
  // A degree given is the layout asked for.
  q.model = &find_model("llama-3.3-70b");
  q.weights.reset();
  q.layout.tp = 16;
  CHECK(resolve(q).replicas() == 1);
  CHECK(resolve(q).parallel().tp == 16);
  CHECK_THROWS_WITH_AS(two.with_replicas(0), doctest::Contains("replicas"), std::invalid_argument);
}
