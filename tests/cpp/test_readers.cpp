#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <set>
#include <string>

#include "gguf_writer.hpp"
#include "llmroof/model/readers.hpp"

using namespace llmroof;
namespace fs = std::filesystem;

namespace {
const fs::path configs = fs::path(LLMROOF_TEST_DATA) / "hf-configs";
std::span<const std::uint8_t> as_span(const std::vector<std::uint8_t>& v) { return {v.data(), v.size()}; }
}  // namespace

TEST_CASE("every shipped config.json parses, or is one of the few with a layout the reader does not know") {
  // Copies of the HuggingFace files in tests/data/hf-configs (provenance: SOURCES.md there). Four use layouts
  // the reader does not take yet (Nemotron-NAS per-layer blocks, Nemotron-H's Infinity literal, Hunyuan's
  // per-layer top-k list): each must fail with a message, never crash.
  const std::set<std::string> unsupported = {
      "nvidia__Llama-3_3-Nemotron-Super-49B-v1.json",
      "nvidia__NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4.json", "nvidia__Nemotron-H-56B-Base-8K.json",
      "tencent__Hunyuan-A13B-Instruct.json"};
  int parsed = 0;
  int refused = 0;
  for (const auto& e : fs::directory_iterator(configs)) {
    if (e.path().extension() != ".json") continue;
    CAPTURE(e.path().string());
    if (unsupported.contains(e.path().filename().string())) {
      CHECK_THROWS_AS(read_hf_config(e.path().string()), std::invalid_argument);
      ++refused;
      continue;
    }
    const model_source m = read_hf_config(e.path().string());
    CHECK(m.arch.num_layers > 0);
    CHECK(count_parameters(m.arch).total() > 5e8);  // the smallest is Qwen3-0.6B
    ++parsed;
  }
  CHECK(parsed == 64);
  CHECK(refused == 4);
  // Cross-check: the file and the catalog entry count the same parameters.
  const std::pair<const char*, const char*> pairs[] = {
      {"meta-llama__Llama-3.1-8B.json", "llama-3.1-8b"},   {"deepseek-ai__DeepSeek-V3.json", "deepseek-v3"},
      {"openai__gpt-oss-120b.json", "gpt-oss-120b"},       {"zai-org__GLM-4.5-Air.json", "glm-4.5-air"},
      {"Qwen__Qwen3-Next-80B-A3B-Thinking.json", "qwen3-next-80b-a3b"},
      {"moonshotai__Kimi-K2-Instruct.json", "kimi-k2"},   {"mistralai__Mixtral-8x7B-v0.1.json", "mixtral-8x7b"},
      {"Qwen__Qwen3-Coder-480B-A35B-Instruct.json", "qwen3-coder-480b-a35b"},
      {"nvidia__MiniMax-M2.5-NVFP4.json", "minimax-m2"},
  };
  for (const auto& [file, id] : pairs) {
    CAPTURE(file);
    const auto from_file = count_parameters(read_hf_config((configs / file).string()).arch);
    const auto from_catalog = count_parameters(find_model(id));
    CHECK(from_file.total() == doctest::Approx(from_catalog.total()).epsilon(1e-9));
    CHECK(from_file.active() == doctest::Approx(from_catalog.active()).epsilon(1e-9));
  }
}

TEST_CASE("Devstral AWQ: 40 layers, 8 KV heads, head dim 128, int4 group 32, lm_head bf16, vision apart") {
  const model_source m =
      read_hf_config((configs / "mistralai__Devstral-Small-2-24B-Instruct-2512.AWQ-4bit.patched.json").string());
  CHECK(m.arch.num_layers == 40);
  CHECK(m.arch.num_kv_heads == 8);
  CHECK(m.arch.head_dim == 128);
  CHECK(m.arch.hidden_size == 5120);
  CHECK(m.quantized);
  // int4, bf16 scale per group of 32: 4 + 16/32 = 4.5 bits.
  CHECK(m.pr.weights.name == "int4-g32");
  CHECK(m.pr.weights.bits == doctest::Approx(4.5));
  CHECK(m.pr.lm_head.name == "bf16");
  // Pixtral: 24 x (4 x 1024^2 + 3 x 1024 x 4096 + 2 x 1024) = 402,702,336;
  // patch embedding 3 x 14^2 x 1024 = 602,112; projector 1024 x 5120 + 5120^2
  // = 31,457,280 -> 434,761,728.
  CHECK(m.vision_params == doctest::Approx(434761728.0));
  // The vision tower is not in the decoded model: 23.57B.
  CHECK(count_parameters(m.arch).total() / 1e9 == doctest::Approx(23.57).epsilon(0.001));
}

TEST_CASE("quantization_config sets formats module by module") {
  const model_source oss = read_hf_config((configs / "openai__gpt-oss-120b.json").string());
  CHECK(oss.pr.experts_format().name == "mxfp4");
  CHECK(oss.pr.attention_format().name == "bf16");  // modules_to_not_convert: self_attn
  CHECK(oss.pr.lm_head.name == "bf16");
  CHECK(oss.arch.count_layers(layer_kind::sliding) == 18);
  const model_source mm = read_hf_config((configs / "nvidia__MiniMax-M2.5-NVFP4.json").string());
  CHECK(mm.pr.experts_format().name == "nvfp4");
  CHECK(mm.pr.attention_format().name == "bf16");  // every layer's self_attn ignored
  const model_source ds = read_hf_config((configs / "deepseek-ai__DeepSeek-V3.json").string());
  CHECK(ds.pr.weights.name == "fp8");
  CHECK(ds.arch.attention == attention_kind::mla);
  CHECK(ds.arch.moe.mtp_layers == 1);
}

TEST_CASE("config.json errors name the file, the key and the reason") {
  CHECK_THROWS_WITH_AS(parse_hf_config("{", "c.json"),
                       doctest::Contains("c.json: invalid JSON: [json.exception.parse_error.101]"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_hf_config("[1]", "c.json"), "c.json: the top level must be a JSON object",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_hf_config(R"({"model_type": "llama"})", "c.json"), "c.json: missing 'num_hidden_layers'",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_hf_config(R"({"num_hidden_layers": "32"})", "c.json"),
                       "c.json: 'num_hidden_layers' must be an integer (got \"32\")", std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_hf_config(R"({"num_hidden_layers": 1e12})", "c.json"),
                       "c.json: 'num_hidden_layers' must be in [0, 10000] (got 1000000000000)", std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      parse_hf_config(R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10,
                          "intermediate_size": 8, "num_key_value_heads": 0})", "c.json"),
      "c.json: architecture.num_kv_heads must be > 0 (got 0)", std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      parse_hf_config(R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10,
                          "intermediate_size": 8, "layer_types": ["full_attention"]})", "c.json"),
      "c.json: 'layer_types' has 1 entries for 2 layers", std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_hf_config("{\"model_type\": \"\xff\"}", "c.json"),
                       doctest::Contains("c.json: invalid JSON"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(read_hf_config("/nonexistent/config.json"), "/nonexistent/config.json: no such file",
                       std::invalid_argument);
}

TEST_CASE("ignore lists: regex subset, globs and module prefixes") {
  const std::string base =
      R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 8,
          "quantization_config": {"quant_method": "compressed-tensors",
            "config_groups": {"g": {"weights": {"num_bits": 4, "type": "int", "group_size": 128, "symmetric": true}}},
            "ignore": )";
  // "re:.*lm_head" keeps lm_head in bf16; "re:model.layers.\d+.self_attn.*" the attention.
  const model_source m = parse_hf_config(base + R"(["re:.*lm_head", "re:model\\.layers\\.\\d+\\.self_attn.*"]}})", "q.json");
  CHECK(m.pr.lm_head.name == "bf16");
  CHECK(m.pr.attention_format().name == "bf16");
  CHECK(m.pr.ffn_format().name == "gptq-int4");  // 4 + 16/128: the catalog's layout
  const model_source g = parse_hf_config(base + R"(["model.layers.*.self_attn"]}})", "q.json");
  CHECK(g.pr.attention_format().name == "bf16");
  CHECK(g.pr.lm_head.name == "gptq-int4");  // not ignored: quantized with the rest
  // Groups of alternatives expand into one glob each (Kimi K2.5 keeps its dense
  // FFN in bf16 with "re:.*mlp\\.(gate|up|gate_up|down)_proj.*"; experts are
  // "mlp.experts.N.gate_proj", which it does not match).
  const model_source k = parse_hf_config(base + R"(["re:.*mlp\\.(gate|up|gate_up|down)_proj.*"]}})", "q.json");
  CHECK(k.pr.ffn_format().name == "bf16");
  CHECK(k.pr.attention_format().name == "gptq-int4");
  const model_source nc = parse_hf_config(base + R"(["re:^model\\.layers\\.\\d+\\.(?:self_attn|mlp)\\..*$"]}})", "q.json");
  CHECK(nc.pr.attention_format().name == "bf16");
  CHECK(nc.pr.ffn_format().name == "bf16");
  CHECK_THROWS_WITH_AS(parse_hf_config(base + R"(["re:(a*)*b"]}})", "q.json"),
                       "q.json: quantization_config ignore pattern: a quantifier after a group is not supported",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_hf_config(base + R"(["re:a[bc]"]}})", "q.json"),
                       "q.json: quantization_config ignore pattern: unsupported regex construct '[' "
                       "(supported: literals, ., .*, \\., \\d, \\d+, ^, $, (a|b))",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_hf_config(base + R"j(["re:((a|b)|c)"]}})j", "q.json"),
                       "q.json: quantization_config ignore pattern: nested groups are not supported",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_hf_config(base + R"j(["re:(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)"]}})j", "q.json"),
                       "q.json: quantization_config ignore pattern: more than 64 alternatives",
                       std::invalid_argument);
}

TEST_CASE("an unknown model_type with standard fields works, with a warning") {
  const model_source m = parse_hf_config(
      R"({"model_type": "brandnew", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
          "vocab_size": 10, "intermediate_size": 8})", "new.json");
  REQUIRE(m.warnings.size() == 1);
  CHECK(m.warnings[0] == "unknown model_type 'brandnew': assumed a llama-style decoder (gated FFN, no biases; standard field names)");
  // 2 x (4 x 64^2 + 3 x 64 x 8 + 128) + 64 + 2 x 10 x 64 = 36,160.
  CHECK(count_parameters(m.arch).total() == doctest::Approx(2 * (4 * 4096 + 3 * 64 * 8 + 128) + 64 + 1280));
}

TEST_CASE("GGUF: exact bytes per component from tensor types") {
  testing::gguf_builder b;
  b.str("general.architecture", "llama").u32("llama.block_count", 1).u32("llama.embedding_length", 256)
      .u32("llama.attention.head_count", 4).u32("llama.attention.head_count_kv", 2).u32("llama.feed_forward_length", 512)
      .u32("llama.vocab_size", 1000);
  b.tensor("token_embd.weight", {256, 1000}, 12)   // Q4_K: 256000 / 256 x 144 = 144,000 B
      .tensor("output.weight", {256, 1000}, 14)     // Q6_K: 1000 x 210 = 210,000 B
      .tensor("blk.0.attn_q.weight", {256, 256}, 8) // Q8_0: 65536 / 32 x 34 = 69,632 B
      .tensor("blk.0.attn_norm.weight", {256}, 0);  // F32: 1,024 B
  const auto bytes = b.build();
  const gguf_header h = parse_gguf(as_span(bytes), "t.gguf");
  REQUIRE(h.tensors.size() == 4);
  CHECK(h.tensors[0].bytes == 144000);
  CHECK(h.tensors[1].bytes == 210000);
  const model_source m = model_from_gguf(h, "t.gguf");
  REQUIRE(m.tensors);
  CHECK(m.tensors->total_bytes() == 144000 + 210000 + 69632 + 1024);
  CHECK(m.tensors->bytes_by_type.at("Q6_K") == 210000);
  CHECK(m.pr.lm_head.bits == doctest::Approx(6.5625));
  CHECK(m.arch.num_kv_heads == 2);
  CHECK(m.arch.head_dim == 64);
  CHECK_FALSE(m.arch.tied_embeddings);
}

TEST_CASE("GGUF: broken files are rejected with the offset and the reason") {
  const std::vector<std::uint8_t> bad_magic{'G', 'G', 'M', 'L', 3, 0, 0, 0};
  CHECK_THROWS_WITH_AS(parse_gguf(as_span(bad_magic), "x.gguf"), "x.gguf: offset 0: wrong magic: not a GGUF file",
                       std::invalid_argument);
  std::vector<std::uint8_t> v{'G', 'G', 'U', 'F', 9, 0, 0, 0};
  CHECK_THROWS_WITH_AS(parse_gguf(as_span(v), "x.gguf"), "x.gguf: offset 4: GGUF version 9 is not supported (2 or 3)",
                       std::invalid_argument);
  const std::vector<std::uint8_t> short_file{'G', 'G', 'U'};
  CHECK_THROWS_WITH_AS(parse_gguf(as_span(short_file), "x.gguf"), "x.gguf: offset 0: truncated: 4 bytes needed, 3 left",
                       std::invalid_argument);
  testing::gguf_builder b;
  b.tensors = 99999999999ull;  // a count no file can hold
  auto huge = b.build();
  CHECK_THROWS_WITH_AS(parse_gguf(as_span(huge), "x.gguf"), "x.gguf: offset 8: tensor count 99999999999 exceeds the file",
                       std::invalid_argument);
  testing::gguf_builder t;
  t.tensor("w", {32}, 4);  // type 4 no longer exists
  auto unknown = t.build();
  CHECK_THROWS_WITH_AS(parse_gguf(as_span(unknown), "x.gguf"), "x.gguf: offset 24: tensor 'w': unknown ggml type 4",
                       std::invalid_argument);
  testing::gguf_builder q;
  q.tensor("w", {33}, 2);  // Q4_0 blocks of 32
  auto ragged = q.build();
  CHECK_THROWS_WITH_AS(parse_gguf(as_span(ragged), "x.gguf"),
                       "x.gguf: offset 24: tensor 'w': first dimension 33 is not a multiple of the Q4_0 block of 32",
                       std::invalid_argument);
  testing::gguf_builder u;
  u.str("general.name", "\xc3\x28");
  auto utf = u.build();
  // header 24 B + key (8 + 12 B) + type 4 B: the value starts at offset 48.
  CHECK_THROWS_WITH_AS(parse_gguf(as_span(utf), "x.gguf"), "x.gguf: offset 48: string value is not valid UTF-8",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(read_gguf("/nonexistent.gguf"), "/nonexistent.gguf: no such file", std::invalid_argument);
}

TEST_CASE("safetensors: exact bytes, and broken headers rejected") {
  const std::string header =
      R"({"model.embed_tokens.weight":{"dtype":"BF16","shape":[10,4],"data_offsets":[0,80]},)"
      R"("lm_head.weight":{"dtype":"F32","shape":[10,4],"data_offsets":[80,240]},"__metadata__":{"format":"pt"}})";
  std::vector<std::uint8_t> v(8);
  const std::uint64_t n = header.size();
  std::memcpy(v.data(), &n, 8);
  v.insert(v.end(), header.begin(), header.end());
  v.resize(v.size() + 240);
  const auto ts = parse_safetensors(as_span(v), "m.safetensors");
  REQUIRE(ts.size() == 2);
  const tensor_inventory inv = inventory(ts);
  CHECK(inv.total_bytes() == 240);
  CHECK(inv.bytes.at(component::embedding) == 80);
  CHECK(inv.bytes.at(component::lm_head) == 160);

  std::vector<std::uint8_t> absurd(16, 0);
  const std::uint64_t big = 1ull << 40;
  std::memcpy(absurd.data(), &big, 8);
  CHECK_THROWS_WITH_AS(parse_safetensors(as_span(absurd), "m.safetensors"),
                       "m.safetensors: offset 0: header length 1099511627776 is absurd (limit 100 MiB)", std::invalid_argument);
  auto trunc = v;
  trunc.resize(8 + header.size() + 100);
  CHECK_THROWS_WITH_AS(parse_safetensors(as_span(trunc), "m.safetensors"),
                       "m.safetensors: tensor 'lm_head.weight': data_offsets [80, 240] outside the 100 data bytes",
                       std::invalid_argument);
  std::string wrong = header;
  wrong.replace(wrong.find("[10,4],\"data_offsets\":[0,80]"), 28, "[10,5],\"data_offsets\":[0,80]");
  std::vector<std::uint8_t> w(8);
  const std::uint64_t wn = wrong.size();
  std::memcpy(w.data(), &wn, 8);
  w.insert(w.end(), wrong.begin(), wrong.end());
  w.resize(w.size() + 240);
  CHECK_THROWS_WITH_AS(parse_safetensors(as_span(w), "m.safetensors"),
                       "m.safetensors: tensor 'model.embed_tokens.weight': 80 bytes for 50 elements of BF16",
                       std::invalid_argument);
}

TEST_CASE("the committed corpus of broken files is rejected cleanly") {
  const fs::path corpus = fs::path(LLMROOF_SOURCE_DIR) / "tests" / "corpus";
  int n = 0;
  for (const auto& e : fs::recursive_directory_iterator(corpus)) {
    if (!e.is_regular_file()) continue;
    CAPTURE(e.path().string());
    CHECK_THROWS_AS((void)read_model(e.path().string()), std::invalid_argument);
    ++n;
  }
  CHECK(n >= 10);
}
