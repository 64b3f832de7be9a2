// The built-in model catalog. Values come from each model's HuggingFace
// config.json (copies in tests/data/hf-configs are cited by file)
// or its model card; `source` says which.
#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "llmroof/model/architecture.hpp"
#include "llmroof/detail/check.hpp"
#include "llmroof/model/readers.hpp"

namespace llmroof {

namespace {

constexpr const char* hf = "tests/data/hf-configs/";

architecture gqa(std::string id, std::string name, std::string family, int layers, int d, int h,
                 int g, int dh, int f, int vocab, int ctx, std::string source) {
  architecture a;
  a.id = std::move(id);
  a.name = std::move(name);
  a.family = std::move(family);
  a.num_layers = layers;
  a.hidden_size = d;
  a.num_heads = h;
  a.num_kv_heads = g;
  a.head_dim = dh;
  a.ffn_size = f;
  a.vocab_size = vocab;
  a.max_context = ctx;
  a.source = std::move(source);
  return a;
}

architecture with_published(architecture a, double total_b, double active_b = 0) {
  a.published_total_b = total_b;
  a.published_active_b = active_b > 0 ? active_b : total_b;
  return a;
}

architecture renamed(architecture a, std::string id, std::string name, std::string source) {
  a.id = std::move(id);
  a.name = std::move(name);
  a.source = std::move(source);
  return a;
}

// Every `period`-th layer (1-based) is `every`, the others `rest`.
std::vector<layer_kind> pattern(int layers, int period, layer_kind every, layer_kind rest) {
  std::vector<layer_kind> out(static_cast<std::size_t>(layers), rest);
  for (int i = period - 1; i < layers; i += period) out[static_cast<std::size_t>(i)] = every;
  return out;
}

architecture qwen3(std::string id, std::string name, int layers, int d, int h, int g, int f,
                   bool tied, double published, std::string source) {
  auto a = gqa(std::move(id), std::move(name), "qwen3", layers, d, h, g, 128, f, 151936, 40960,
               std::move(source));
  a.qk_norm = true;
  a.tied_embeddings = tied;
  return with_published(std::move(a), published);
}

architecture qwen25(std::string id, std::string name, int layers, int d, int h, int g, int f,
                    double published, std::string source) {
  auto a = gqa(std::move(id), std::move(name), "qwen2", layers, d, h, g, d / h, f, 152064, 131072,
               std::move(source));
  a.qkv_bias = true;
  return with_published(std::move(a), published);
}

architecture gemma3(std::string id, std::string name, int layers, int d, int h, int g, int dh,
                    int f, double published) {
  std::string src = "google/" + name + " config.json (text_config) and Gemma 3 technical report "
               "(5 local : 1 global layers, window 1024); published total includes the "
               "~0.42B SigLIP vision tower";
  auto a = gqa(std::move(id), std::move(name), "gemma3_text", layers, d, h, g, dh, f, 262208,
               131072, std::move(src));
  a.tied_embeddings = true;
  a.qk_norm = true;
  a.norms_per_layer = 4;
  a.sliding_window = 1024;
  a.layer_kinds = pattern(layers, 6, layer_kind::global, layer_kind::sliding);
  return with_published(std::move(a), published);
}

architecture deepseek(std::string id, std::string name, std::string family, int heads,
                      int experts, int dense, int mtp, int vocab, int ctx, std::string source) {
  auto a = gqa(std::move(id), std::move(name), std::move(family), 61, 7168, heads, heads, 128,
               18432, vocab, ctx, std::move(source));
  a.attention = attention_kind::mla;
  a.mla = {1536, 512, 128, 64, 128};
  a.moe = {.num_experts = experts, .experts_per_token = 8, .shared_experts = 1, .expert_ffn = 2048,
           .first_dense_layers = dense, .mtp_layers = mtp};
  a.moe.router_bias = true;  // e_score_correction_bias (noaux_tc routing)
  return a;
}

architecture qwen3_moe(std::string id, std::string name, int layers, int d, int h, int g,
                       int experts, int fe, int ctx, double total, double active,
                       std::string source) {
  auto a = gqa(std::move(id), std::move(name), "qwen3_moe", layers, d, h, g, 128, 0, 151936, ctx,
               std::move(source));
  a.qk_norm = true;
  a.moe = {.num_experts = experts, .experts_per_token = 8, .expert_ffn = fe};
  return with_published(std::move(a), total, active);
}

architecture gpt_oss(std::string id, std::string name, int layers, int experts, double total,
                     double active, std::string source) {
  auto a = gqa(std::move(id), std::move(name), "gpt_oss", layers, 2880, 64, 8, 64, 0, 201088,
               131072, std::move(source));
  a.qkv_bias = true;
  a.o_bias = true;
  a.attention_sinks = true;
  a.sliding_window = 128;
  a.layer_kinds = pattern(layers, 2, layer_kind::global, layer_kind::sliding);
  a.moe = {.num_experts = experts, .experts_per_token = 4, .expert_ffn = 2880, .router_bias = true,
           .expert_bias = true};
  return with_published(std::move(a), total, active);
}

struct config_row {
  const char* id;
  const char* name;     // empty: a hand-written entry has this id
  const char* aliases;  // '|'-separated
  const char* file;     // in tests/data/hf-configs
  const char* note;
  const char* json;     // the file, minified
};

// clang-format off
const config_row config_rows[] = {
#include "catalog_hf_models.inc"
};
// clang-format on

/// A dense decoder from data/models_recalled.csv (its config.json as recalled).
struct recalled_row {
  const char* id;
  const char* name;
  const char* family;
  int layers, hidden, heads, kv_heads, head_dim, ffn, vocab, context;
  bool qkv_bias, tied_embeddings;
  double published_b;
  const char* source;
};

// clang-format off
const recalled_row recalled_rows[] = {
#include "catalog_recalled_models.inc"
};
// clang-format on

std::vector<std::string> split_bars(std::string_view s) {
  std::vector<std::string> out;
  while (!s.empty()) {
    const auto bar = s.find('|');
    out.emplace_back(s.substr(0, bar));
    s = bar == std::string_view::npos ? std::string_view{} : s.substr(bar + 1);
  }
  return out;
}

/// One entry per config file family: a hand-written entry with the id gains
/// the file's aliases; any other id is parsed from the embedded file.
void add_config_models(std::vector<architecture>& m) {
  for (const auto& r : config_rows) {
    auto aliases = split_bars(r.aliases);
    auto it = std::find_if(m.begin(), m.end(), [&](const architecture& a) { return a.id == r.id; });
    if (it != m.end()) {
      it->aliases.insert(it->aliases.end(), aliases.begin(), aliases.end());
      continue;
    }
    architecture a = parse_hf_config(r.json, r.file).arch;
    a.id = r.id;
    a.name = r.name;
    a.aliases = std::move(aliases);
    a.source = std::string(hf) + r.file + " (embedded and parsed; provenance in SOURCES.md there)" +
               (std::string_view(r.note).empty() ? "" : std::string("; ") + r.note);
    m.push_back(std::move(a));
  }
}

std::vector<architecture> build() {
  std::vector<architecture> m;
  const std::string llama2_src = "meta-llama/Llama-2-*-hf config.json; Llama 2 paper (Touvron et al. 2023)";
  const std::string llama3_src = "meta-llama Llama-3/3.1 config.json; Llama 3 herd paper (Dubey et al. 2024) table 3";

  m.push_back(with_published(gqa("llama-2-7b", "Llama-2-7B", "llama", 32, 4096, 32, 32, 128, 11008, 32000, 4096,
                                 std::string(hf) + "meta-llama__Llama-2-7b-hf.json"), 6.74));
  m.push_back(with_published(gqa("llama-2-13b", "Llama-2-13B", "llama", 40, 5120, 40, 40, 128, 13824, 32000, 4096, llama2_src), 13.0));
  m.push_back(with_published(gqa("llama-2-70b", "Llama-2-70B", "llama", 80, 8192, 64, 8, 128, 28672, 32000, 4096, llama2_src), 69.0));
  m.push_back(with_published(gqa("llama-3-8b", "Llama-3-8B", "llama", 32, 4096, 32, 8, 128, 14336, 128256, 8192, llama3_src), 8.03));
  m.push_back(with_published(gqa("llama-3-70b", "Llama-3-70B", "llama", 80, 8192, 64, 8, 128, 28672, 128256, 8192, llama3_src), 70.6));
  m.push_back(with_published(gqa("llama-3.1-8b", "Llama-3.1-8B", "llama", 32, 4096, 32, 8, 128, 14336, 128256, 131072,
                                 std::string(hf) + "meta-llama__Llama-3.1-8B.json"), 8.03));
  m.push_back(with_published(gqa("llama-3.1-70b", "Llama-3.1-70B", "llama", 80, 8192, 64, 8, 128, 28672, 128256, 131072,
                                 std::string(hf) + "meta-llama__Llama-3.1-70B.json"), 70.6));
  m.push_back(with_published(gqa("llama-3.1-405b", "Llama-3.1-405B", "llama", 126, 16384, 128, 8, 128, 53248, 128256, 131072, llama3_src), 405.0));
  {
    auto a = gqa("llama-3.2-1b", "Llama-3.2-1B", "llama", 16, 2048, 32, 8, 64, 8192, 128256, 131072,
                 "meta-llama/Llama-3.2-1B config.json (tied embeddings); model card 1.23B");
    a.tied_embeddings = true;
    m.push_back(with_published(std::move(a), 1.23));
    auto b = gqa("llama-3.2-3b", "Llama-3.2-3B", "llama", 28, 3072, 24, 8, 128, 8192, 128256, 131072,
                 "meta-llama/Llama-3.2-3B config.json (tied embeddings); model card 3.21B");
    b.tied_embeddings = true;
    m.push_back(with_published(std::move(b), 3.21));
  }
  m.push_back(renamed(m[6], "llama-3.3-70b", "Llama-3.3-70B",
                      std::string(hf) + "meta-llama__Llama-3.1-70B.json (same architecture; SOURCES.md)"));

  m.push_back(qwen25("qwen2.5-7b", "Qwen2.5-7B", 28, 3584, 28, 4, 18944, 7.61, "Qwen/Qwen2.5-7B config.json; model card 7.61B"));
  m.push_back(qwen25("qwen2.5-14b", "Qwen2.5-14B", 48, 5120, 40, 8, 13824, 14.7, "Qwen/Qwen2.5-14B config.json; model card 14.7B"));
  m.push_back(qwen25("qwen2.5-32b", "Qwen2.5-32B", 64, 5120, 40, 8, 27648, 32.5, std::string(hf) + "Qwen__Qwen2.5-32B.json; model card 32.5B"));
  m.push_back(qwen25("qwen2.5-72b", "Qwen2.5-72B", 80, 8192, 64, 8, 29568, 72.7, "Qwen/Qwen2.5-72B config.json; model card 72.7B"));
  m.push_back(qwen25("qwen2.5-coder-7b", "Qwen2.5-Coder-7B", 28, 3584, 28, 4, 18944, 7.61, "Qwen/Qwen2.5-Coder-7B config.json (Qwen2.5-7B shape); model card 7.61B"));
  m.push_back(qwen25("qwen2.5-coder-32b", "Qwen2.5-Coder-32B", 64, 5120, 40, 8, 27648, 32.5,
                     std::string(hf) + "Qwen__Qwen2.5-32B.json (same shape; SOURCES.md); model card 32.5B"));

  m.push_back(qwen3("qwen3-4b", "Qwen3-4B", 36, 2560, 32, 8, 9728, true, 4.02, "Qwen/Qwen3-4B config.json; model card 4.0B"));
  m.push_back(qwen3("qwen3-8b", "Qwen3-8B", 36, 4096, 32, 8, 12288, false, 8.19, std::string(hf) + "Qwen__Qwen3-8B.json; model card 8.2B"));
  m.push_back(qwen3("qwen3-14b", "Qwen3-14B", 40, 5120, 40, 8, 17408, false, 14.8, "Qwen/Qwen3-14B config.json; model card 14.8B"));
  m.push_back(qwen3("qwen3-32b", "Qwen3-32B", 64, 5120, 64, 8, 25600, false, 32.8, std::string(hf) + "Qwen__Qwen3-32B.json; model card 32.8B"));

  m.push_back(with_published(gqa("mistral-7b", "Mistral-7B-v0.3", "mistral", 32, 4096, 32, 8, 128, 14336, 32768, 32768,
                                 "mistralai/Mistral-7B-v0.3 config.json (no sliding window; v0.1 had 4096)"), 7.25));
  {
    auto a = gqa("devstral-small-2-24b", "Devstral-Small-2-24B", "mistral3", 40, 5120, 32, 8, 128, 32768, 131072, 393216,
                 std::string(hf) + "mistralai__Devstral-Small-2-24B-Instruct-2512.AWQ-4bit.patched.json "
                 "(text_config; the Pixtral vision tower is not decoded and not counted here)");
    m.push_back(with_published(std::move(a), 24.0));
  }
  m.push_back(gemma3("gemma-3-4b", "gemma-3-4b", 34, 2560, 8, 4, 256, 10240, 4.3));
  m.push_back(gemma3("gemma-3-12b", "gemma-3-12b", 48, 3840, 16, 8, 256, 15360, 12.2));
  m.push_back(gemma3("gemma-3-27b", "gemma-3-27b", 62, 5376, 32, 16, 128, 21504, 27.4));
  {
    auto a = gqa("gpt-j-6b", "GPT-J-6B", "gptj", 28, 4096, 16, 16, 256, 16384, 50400, 2048,
                 "EleutherAI/gpt-j-6b config.json (n_embd 4096, n_head 16, rotary, parallel block, "
                 "one LayerNorm per layer, lm_head bias); model card 6.05B");
    a.ffn = ffn_kind::plain;
    a.mlp_bias = true;
    a.lm_head_bias = true;
    a.norm_bias = true;
    a.norms_per_layer = 1;
    m.push_back(with_published(std::move(a), 6.05));
    auto b = gqa("falcon-180b", "Falcon-180B", "falcon", 80, 14848, 232, 8, 64, 59392, 65024, 2048,
                 "tiiuae/falcon-180B config.json (new_decoder_architecture, 8 KV groups, "
                 "two LayerNorms per layer, no biases); model card 180B");
    b.ffn = ffn_kind::plain;
    b.norm_bias = true;
    m.push_back(with_published(std::move(b), 180.0));
    // DistServe's (OSDI 2024) chatbot model, for its placement example (issue 31).
    auto c = gqa("opt-13b", "OPT-13B", "opt", 40, 5120, 40, 40, 128, 20480, 50272, 2048,
                 "facebook/opt-13b config.json (OPTForCausalLM: 40 layers, hidden 5120, 40 heads, ffn_dim 20480, "
                 "ReLU, biases on every linear layer, do_layer_norm_before, vocab 50272, 2048 positions, tied "
                 "embeddings) as recalled, not shipped here [unverified here]; its learned positions (2,050 x 5,120 "
                 "= 10.5M) are not counted; model card 13B");
    c.ffn = ffn_kind::plain;
    c.qkv_bias = c.o_bias = c.mlp_bias = true;
    c.norm_bias = true;
    c.tied_embeddings = true;
    m.push_back(with_published(std::move(c), 13.0));
    // Pythia (GPT-NeoX): the ggml CI's V100 ladder over one model's quants
    // (release3 single_stream.csv, build 4246). A parallel attention + MLP
    // block with two LayerNorms (the same ops as in sequence), rotary on a
    // quarter of each head (no cost of its own), GELU MLP, biases on every
    // linear layer, untied embed_out without bias.
    for (const auto& [id, name, layers, hidden, heads, ffn, published] :
         {std::tuple{"pythia-1.4b", "Pythia-1.4B", 24, 2048, 16, 8192, 1.41},
          std::tuple{"pythia-2.8b", "Pythia-2.8B", 32, 2560, 32, 10240, 2.78}}) {
      auto p = gqa(id, name, "gpt_neox", layers, hidden, heads, heads, hidden / heads, ffn, 50304, 2048,
                   std::string("EleutherAI/") + id + " config.json (GPTNeoXForCausalLM: " + std::to_string(layers) +
                       " layers, hidden " + std::to_string(hidden) + ", " + std::to_string(heads) +
                       " heads, intermediate " + std::to_string(ffn) +
                       ", vocab 50304, 2048 positions, rotary_pct 0.25, use_parallel_residual) as recalled, not "
                       "shipped here [unverified here]; counted 1,414,647,808 / 2,775,208,960 parameters = the "
                       "model cards' 1.41B / 2.78B (\"1.4B\", \"2.8B\")");
      p.ffn = ffn_kind::plain;
      p.qkv_bias = p.o_bias = p.mlp_bias = true;
      p.norm_bias = true;
      m.push_back(with_published(std::move(p), published));
    }
  }

  // ---- Mixture of Experts ----
  m.push_back(qwen3_moe("qwen3-30b-a3b", "Qwen3-30B-A3B", 48, 2048, 32, 4, 128, 768, 40960, 30.5, 3.3,
                        std::string(hf) + "Qwen__Qwen3-30B-A3B.json; model card 30.5B / 3.3B"));
  m.push_back(qwen3_moe("qwen3-235b-a22b", "Qwen3-235B-A22B", 94, 4096, 64, 4, 128, 1536, 40960, 235, 22,
                        std::string(hf) + "Qwen__Qwen3-235B-A22B.json; model card 235B / 22B"));
  m.push_back(qwen3_moe("qwen3-coder-480b-a35b", "Qwen3-Coder-480B-A35B", 62, 6144, 96, 8, 160, 2560, 262144, 480, 35,
                        std::string(hf) + "Qwen__Qwen3-Coder-480B-A35B-Instruct.json; model card 480B / 35B"));
  {
    auto a = gqa("qwen3-next-80b-a3b", "Qwen3-Next-80B-A3B", "qwen3_next", 48, 2048, 16, 2, 256, 5120, 151936, 262144,
                 std::string(hf) + "Qwen__Qwen3-Next-80B-A3B-Thinking.json (Instruct shares the "
                 "architecture); model card 80B / 3B");
    a.qk_norm = true;
    a.attn_output_gate = true;
    a.linear = {16, 32, 128, 128, 4};
    a.layer_kinds = pattern(48, 4, layer_kind::global, layer_kind::linear);
    a.moe = {.num_experts = 512, .experts_per_token = 10, .shared_experts = 1, .expert_ffn = 512,
             .shared_expert_ffn = 512, .shared_expert_gate = true};
    m.push_back(with_published(std::move(a), 80, 3));
  }
  m.push_back(with_published(deepseek("deepseek-v3", "DeepSeek-V3", "deepseek_v3", 128, 256, 3, 1, 129280, 163840,
                                      std::string(hf) + "deepseek-ai__DeepSeek-V3.json; paper: 671B total, 37B active (MTP 14B apart)"),
                             671, 37));
  m.push_back(with_published(deepseek("deepseek-r1", "DeepSeek-R1", "deepseek_v3", 128, 256, 3, 1, 129280, 163840,
                                      std::string(hf) + "deepseek-ai__DeepSeek-R1.json; 671B / 37B"),
                             671, 37));
  m.push_back(with_published(deepseek("kimi-k2", "Kimi-K2-Instruct", "kimi_k2", 64, 384, 1, 0, 163840, 131072,
                                      std::string(hf) + "moonshotai__Kimi-K2-Instruct.json; model card 1T total (1.04T), 32B active"),
                             1040, 32));
  {
    auto a = gqa("glm-4.5-air", "GLM-4.5-Air", "glm4_moe", 46, 4096, 96, 8, 128, 10944, 151552, 131072,
                 std::string(hf) + "zai-org__GLM-4.5-Air.json (printed Glm4MoeConfig); model card 106B / 12B");
    a.qkv_bias = true;  // attention_bias applies to q, k, v (o_proj has none)
    a.moe = {.num_experts = 128, .experts_per_token = 8, .shared_experts = 1, .expert_ffn = 1408,
             .first_dense_layers = 1, .mtp_layers = 1, .router_bias = true};
    m.push_back(with_published(std::move(a), 106, 12));
  }
  {
    // GLM-4.7 keeps GLM-4.5's shape (zai-org model card); glm-4.5 itself is
    // parsed from tests/data/hf-configs/zai-org__GLM-4.5.json below.
    auto a = gqa("glm-4.7", "GLM-4.7", "glm4_moe", 92, 5120, 96, 8, 128, 12288, 151552, 131072,
                 std::string(hf) + "zai-org__GLM-4.5.json (GLM-4.7 keeps the GLM-4.5 shape per the zai-org model "
                 "card [unverified here]: 92 layers, hidden 5120, 96 heads, 8 KV heads, 160 experts top-8 + 1 "
                 "shared, expert FFN 1536, 3 dense layers); model card 355B / 32B");
    a.qkv_bias = true;
    a.qk_norm = true;
    a.moe = {.num_experts = 160, .experts_per_token = 8, .shared_experts = 1, .expert_ffn = 1536,
             .first_dense_layers = 3, .mtp_layers = 1, .router_bias = true};
    m.push_back(with_published(std::move(a), 355, 32));
  }
  {
    auto a = gqa("minimax-m2", "MiniMax-M2", "minimax_m2", 62, 3072, 48, 8, 128, 1536, 200064, 196608,
                 std::string(hf) + "nvidia__MiniMax-M2.5-NVFP4.json (same minimax_m2 architecture as "
                 "M2; SOURCES.md); model card 230B / 10B");
    a.qk_norm = true;
    a.moe = {.num_experts = 256, .experts_per_token = 8, .expert_ffn = 1536, .mtp_layers = 3, .router_bias = true};
    m.push_back(with_published(std::move(a), 230, 10));
  }
  m.push_back(gpt_oss("gpt-oss-20b", "gpt-oss-20b", 24, 32, 20.9, 3.6,
                      std::string(hf) + "openai__gpt-oss-20b.json; model card 21B / 3.6B (20.9B total)"));
  m.push_back(gpt_oss("gpt-oss-120b", "gpt-oss-120b", 36, 128, 116.8, 5.1,
                      std::string(hf) + "openai__gpt-oss-120b.json; model card 116.8B / 5.1B"));
  {
    auto a = gqa("mixtral-8x7b", "Mixtral-8x7B", "mixtral", 32, 4096, 32, 8, 128, 14336, 32000, 32768,
                 std::string(hf) + "mistralai__Mixtral-8x7B-v0.1.json; Mixtral paper 46.7B / 12.9B (with embeddings)");
    a.moe = {.num_experts = 8, .experts_per_token = 2, .expert_ffn = 14336};
    m.push_back(with_published(std::move(a), 46.7, 12.9));
  }
  // Well-known dense decoders without a shipped config.json: each published
  // size checks the recalled shape (the architecture test counts parameters
  // against it).
  for (const recalled_row& r : recalled_rows) {
    auto a = gqa(r.id, r.name, r.family, r.layers, r.hidden, r.heads, r.kv_heads, r.head_dim, r.ffn, r.vocab,
                 r.context, r.source);
    a.qkv_bias = r.qkv_bias;
    a.tied_embeddings = r.tied_embeddings;
    m.push_back(with_published(std::move(a), r.published_b));
  }
  {
    // Qwen3-Coder-30B-A3B: the Qwen3-30B-A3B shape (48 layers, 128 experts,
    // top-8) with a 256k context (Qwen model card).
    auto it = std::find_if(m.begin(), m.end(), [](const architecture& a) { return a.id == "qwen3-30b-a3b"; });
    auto a = renamed(*it, "qwen3-coder-30b-a3b", "Qwen3-Coder-30B-A3B",
                     std::string(hf) + "Qwen__Qwen3-30B-A3B.json (same shape; 262,144-token context per the "
                     "Qwen3-Coder-30B-A3B-Instruct model card [unverified here]); model card 30.5B / 3.3B");
    a.max_context = 262144;
    m.push_back(std::move(a));
  }
  add_config_models(m);
  for (const auto& a : m) validate(a);
  return m;
}

}  // namespace

void validate(const architecture& a) {
  using detail::require_positive;
  using detail::require_non_negative;
  require_positive("architecture.num_layers", a.num_layers);
  require_positive("architecture.hidden_size", a.hidden_size);
  require_positive("architecture.num_heads", a.num_heads);
  require_positive("architecture.vocab_size", a.vocab_size);
  require_non_negative("architecture.sliding_window", a.sliding_window);
  if (a.attention == attention_kind::gqa) {
    require_positive("architecture.num_kv_heads", a.num_kv_heads);
    require_positive("architecture.head_dim", a.head_dim);
    if (a.num_heads % a.num_kv_heads != 0) {
      detail::fail("architecture.num_heads", "a multiple of num_kv_heads (" +
                       detail::show(a.num_kv_heads) + ")", a.num_heads);
    }
  } else {
    require_non_negative("architecture.mla.q_lora_rank", a.mla.q_lora_rank);
    require_positive("architecture.mla.kv_lora_rank", a.mla.kv_lora_rank);
    require_positive("architecture.mla.qk_nope_head_dim", a.mla.qk_nope_head_dim);
    require_non_negative("architecture.mla.qk_rope_head_dim", a.mla.qk_rope_head_dim);
    require_positive("architecture.mla.v_head_dim", a.mla.v_head_dim);
  }
  if (!a.layer_kinds.empty()) {
    if (a.layer_kinds.size() != static_cast<std::size_t>(a.num_layers)) {
      detail::fail("architecture.layer_kinds size", "num_layers (" + detail::show(a.num_layers) + ")",
                   static_cast<double>(a.layer_kinds.size()));
    }
    if (a.count_layers(layer_kind::sliding) > 0) {
      require_positive("architecture.sliding_window", a.sliding_window);
    }
    if (a.count_layers(layer_kind::linear) > 0) {
      require_positive("architecture.linear.num_key_heads", a.linear.num_key_heads);
      require_positive("architecture.linear.num_value_heads", a.linear.num_value_heads);
      require_positive("architecture.linear.key_head_dim", a.linear.key_head_dim);
      require_positive("architecture.linear.value_head_dim", a.linear.value_head_dim);
      require_non_negative("architecture.linear.conv_kernel", a.linear.conv_kernel);
    }
  }
  if (a.is_moe()) {
    require_positive("architecture.moe.experts_per_token", a.moe.experts_per_token);
    if (a.moe.experts_per_token > a.moe.num_experts) {
      detail::fail("architecture.moe.experts_per_token",
                   "<= num_experts (" + detail::show(a.moe.num_experts) + ")",
                   a.moe.experts_per_token);
    }
    require_positive("architecture.moe.expert_ffn", a.moe.expert_ffn);
    require_non_negative("architecture.moe.shared_experts", a.moe.shared_experts);
    detail::require_in("architecture.moe.first_dense_layers", a.moe.first_dense_layers, 0,
                       a.num_layers - 1);
    if (a.moe.first_dense_layers > 0) require_positive("architecture.ffn_size", a.ffn_size);
  } else {
    require_non_negative("architecture.moe.num_experts", a.moe.num_experts);
    require_positive("architecture.ffn_size", a.ffn_size);
  }
  require_non_negative("architecture.moe.mtp_layers", a.moe.mtp_layers);
  require_non_negative("architecture.max_context", a.max_context);
  // Limits no real model reaches (the file readers use the same): they bound
  // per-layer allocations and keep every count far from integer overflow.
  using detail::require_at_most;
  require_at_most("architecture.num_layers", a.num_layers, 10000);
  require_at_most("architecture.hidden_size", a.hidden_size, 1e7);
  require_at_most("architecture.num_heads", a.num_heads, 1e7);
  require_at_most("architecture.head_dim", a.head_dim, 1e7);
  detail::require_in("architecture.global_kv_heads", a.global_kv_heads, 0, 1e7);
  detail::require_in("architecture.global_head_dim", a.global_head_dim, 0, 1e7);
  if (a.global_kv_heads > 0 && a.num_heads % a.global_kv_heads != 0) {
    detail::fail("architecture.global_kv_heads", "a divisor of num_heads (" + detail::show(a.num_heads) + ")",
                 a.global_kv_heads);
  }
  require_at_most("architecture.ffn_size", a.ffn_size, 1e7);
  require_at_most("architecture.vocab_size", a.vocab_size, 1e8);
  require_at_most("architecture.sliding_window", a.sliding_window, 1e9);
  require_at_most("architecture.max_context", a.max_context, 1e9);
  require_at_most("architecture.moe.num_experts", a.moe.num_experts, 1e6);
  require_at_most("architecture.moe.expert_ffn", a.moe.expert_ffn, 1e7);
  require_at_most("architecture.moe.shared_experts", a.moe.shared_experts, 1e6);
  require_at_most("architecture.moe.shared_expert_ffn", a.moe.shared_expert_ffn, 1e7);
  require_at_most("architecture.moe.mtp_layers", a.moe.mtp_layers, 64);
  require_at_most("architecture.mla.q_lora_rank", a.mla.q_lora_rank, 1e7);
  require_at_most("architecture.mla.kv_lora_rank", a.mla.kv_lora_rank, 1e7);
  require_at_most("architecture.mla.qk_nope_head_dim", a.mla.qk_nope_head_dim, 1e7);
  require_at_most("architecture.mla.qk_rope_head_dim", a.mla.qk_rope_head_dim, 1e7);
  require_at_most("architecture.mla.v_head_dim", a.mla.v_head_dim, 1e7);
  require_at_most("architecture.linear.num_key_heads", a.linear.num_key_heads, 1e7);
  require_at_most("architecture.linear.num_value_heads", a.linear.num_value_heads, 1e7);
  require_at_most("architecture.linear.key_head_dim", a.linear.key_head_dim, 1e7);
  require_at_most("architecture.linear.value_head_dim", a.linear.value_head_dim, 1e7);
  require_at_most("architecture.linear.conv_kernel", a.linear.conv_kernel, 4096);
}

const std::vector<architecture>& models() {
  static const std::vector<architecture> all = build();
  return all;
}

namespace {

/// "meta-llama/Llama-3.1-8B-Instruct" -> "llama-3.1-8b": lowercase words
/// joined by '-', without the org prefix, parenthesised notes and checkpoint
/// words (see find_model).
std::string model_key(std::string_view name, bool strip = true) {
  std::string s(name);
  if (const auto slash = s.rfind('/'); slash != std::string::npos) s = s.substr(slash + 1);
  if (const auto org = s.find("__"); org != std::string::npos) s = s.substr(org + 2);
  if (s.size() > 5 && s.ends_with(".json")) s.resize(s.size() - 5);
  std::string cleaned;
  int depth = 0;
  for (char c : s) {
    if (c == '(') ++depth;
    else if (c == ')') depth = std::max(0, depth - 1);
    else if (depth == 0) cleaned.push_back(c);
  }
  // Quantization words (vendors' quantized checkpoints too: AMD's "-FP8-KV"
  // and "-MXFP4-Preview", Neural Magic's "quantized.w4a16", "-W8A8"), after
  // which a "vN" is the checkpoint's own revision ("-FP4-v2"), not the
  // model's ("DeepSeek-V2", "Mistral-7B-Instruct-v2").
  static const std::set<std::string> quantized = {"fp8",   "fp4",   "nvfp4", "mxfp4", "awq",   "gptq",     "int4",
                                                  "int8",  "w4a16", "w8a8",  "w8a16", "kv",    "preview", "quantized"};
  // The other checkpoint words; "thinking": a post-trained variant of the
  // same architecture ("Qwen3-235B-A22B-Thinking-2507").
  static const std::set<std::string> checkpoint = {
      "instruct", "chat", "it", "hf", "base", "gguf", "bf16", "fp16", "4bit", "8bit", "qat", "dynamic",
      "patched", "mlx", "exl2", "q4", "q8", "k", "m", "thinking"};
  std::vector<std::string> words;
  std::string cur;
  bool after_quantized = false;
  const auto flush = [&] {
    if (cur.empty()) return;
    const bool date = cur.size() == 4 && std::all_of(cur.begin(), cur.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    const bool revision = after_quantized && cur.size() >= 2 && cur[0] == 'v' &&
                          std::all_of(cur.begin() + 1, cur.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    after_quantized = quantized.count(cur) > 0;
    const bool dropped = after_quantized || checkpoint.count(cur) > 0 || date || revision;
    if (!strip || (!dropped && !(words.empty() && cur == "meta"))) words.push_back(cur);
    cur.clear();
  };
  for (std::size_t i = 0; i < cleaned.size(); ++i) {
    const char c = cleaned[i];
    // '.' only inside a version number ("3.1", "2.5"), not before "AWQ"
    const bool dot = c == '.' && !cur.empty() && std::isdigit(static_cast<unsigned char>(cur.back())) &&
                     i + 1 < cleaned.size() && std::isdigit(static_cast<unsigned char>(cleaned[i + 1]));
    if (std::isalnum(static_cast<unsigned char>(c)) || dot) {
      cur.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else {
      flush();
    }
  }
  flush();
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : "-") + w;
  return out;
}

/// A fine-tune whose model card names its base architecture (from
/// data/models_fine_tunes.csv): a fragment of the normalised name -> base id.
struct fine_tune {
  const char* fragment;
  const char* base;
  const char* card;
};

// clang-format off
constexpr fine_tune fine_tunes[] = {
#include "catalog_fine_tunes.inc"
};
// clang-format on

}  // namespace

std::vector<std::string> match_models(std::string_view name) {
  const auto& all = models();
  const std::string lower = detail::to_lower(name);
  for (const auto& a : all) {
    if (a.id == lower) return {a.id};
  }
  // The name as written, then without checkpoint words (Instruct, FP8, ...).
  for (const bool strip : {false, true}) {
    const std::string key = model_key(name, strip);
    if (key.empty()) return {};
    std::vector<std::string> out;
    for (const auto& a : all) {
      bool hit = model_key(a.id, strip) == key || model_key(a.name, strip) == key;
      for (const auto& al : a.aliases) hit = hit || model_key(al, strip) == key;
      if (hit) out.push_back(a.id);
    }
    if (!out.empty()) return out;
  }
  const std::string key = model_key(name);
  // A fine-tune named after its base: the longest fragment wins. Fragments
  // are normalised as the name is ("command-r-08-2024" loses its date).
  const fine_tune* best = nullptr;
  std::size_t longest = 0;
  for (const auto& f : fine_tunes) {
    const std::string fragment = model_key(f.fragment);
    if (!fragment.empty() && key.find(fragment) != std::string::npos && fragment.size() > longest) {
      best = &f;
      longest = fragment.size();
    }
  }
  if (best != nullptr) return {best->base};
  return {};
}

const architecture& find_model(std::string_view name) {
  const auto& all = models();
  const auto ids = match_models(name);
  if (ids.size() == 1) {
    for (const auto& a : all) {
      if (a.id == ids.front()) return a;
    }
  }
  if (ids.size() > 1) {
    std::string msg = "model '" + std::string(name) + "' is ambiguous: it matches ";
    for (std::size_t i = 0; i < ids.size(); ++i) msg += (i ? ", " : "") + ids[i];
    throw std::invalid_argument(msg);
  }
  std::vector<std::string> all_ids;
  all_ids.reserve(all.size());
  for (const auto& a : all) all_ids.push_back(a.id);
  detail::fail_unknown("model", name, all_ids);
}

namespace {

// The publishers' own quantized checkpoints: each quantization_config is
// copied from the repository's config.json (copies in tests/data/hf-configs,
// named by the repository; test_model_catalog reads each file and checks
// that it gives the same formats). Models published in 16 bits are absent.
struct checkpoint_row {
  const char* model;
  const char* repo;
  const char* quantization_config;
};

constexpr const char* deepseek_fp8 =
    R"({"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [128, 128]})";
constexpr const char* gpt_oss_mxfp4 =
    R"({"modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"], "quant_method": "mxfp4"})";

constexpr checkpoint_row checkpoints[] = {
    {"deepseek-v3", "deepseek-ai/DeepSeek-V3", deepseek_fp8},
    {"deepseek-r1", "deepseek-ai/DeepSeek-R1", deepseek_fp8},
    {"deepseek-v3.1", "deepseek-ai/DeepSeek-V3.1", deepseek_fp8},  // plus "scale_fmt": "ue8m0": the same bytes
    {"deepseek-v3.2", "deepseek-ai/DeepSeek-V3.2", deepseek_fp8},  // likewise
    {"kimi-k2", "moonshotai/Kimi-K2-Instruct", deepseek_fp8},
    {"kimi-k2.5", "moonshotai/Kimi-K2.5",
     R"({"config_groups": {"group_0": {"input_activations": null, "targets": ["Linear"], "weights": {"group_size": 32, "num_bits": 4, "strategy": "group", "symmetric": true, "type": "int"}}}, "ignore": ["lm_head", "re:.*self_attn.*", "re:.*shared_experts.*", "re:.*mlp\\.(gate|up|gate_up|down)_proj.*"], "quant_method": "compressed-tensors"})"},
    {"gpt-oss-20b", "openai/gpt-oss-20b", gpt_oss_mxfp4},
    {"gpt-oss-120b", "openai/gpt-oss-120b", gpt_oss_mxfp4},
};

}  // namespace

std::optional<published_checkpoint> published_formats(const architecture& a) {
  for (const checkpoint_row& c : checkpoints) {
    if (a.id != c.model) continue;
    if (auto pr = quantization_formats(c.quantization_config, a, c.repo)) return published_checkpoint{c.repo, *pr};
  }
  return std::nullopt;
}

std::optional<std::string> format_in_name(std::string_view name) {
  std::string s(name);
  if (const auto slash = s.rfind('/'); slash != std::string::npos) s = s.substr(slash + 1);
  s = detail::to_lower(s);
  // GGUF quant types as file and repository names carry them (Q4_K_M, IQ4_XS).
  for (const char* q : {"q4_k_m", "q4_k_s", "q5_k_m", "q3_k_m", "q8_0", "q6_k", "q5_0", "q5_1", "q4_0", "q4_1",
                        "q2_k", "iq4_xs", "iq4_nl"}) {
    const auto at = s.find(q);
    const std::size_t end = at + std::string_view(q).size();
    if (at != std::string::npos && (at == 0 || !std::isalnum(static_cast<unsigned char>(s[at - 1]))) &&
        (end == s.size() || !std::isalnum(static_cast<unsigned char>(s[end])))) {
      return std::string(q);
    }
  }
  std::set<std::string> words;
  std::string cur;
  for (char c : s + "-") {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      cur.push_back(c);
    } else if (!cur.empty()) {
      words.insert(cur);
      cur.clear();
    }
  }
  // How quantized repositories name themselves: Qwen's -AWQ (4-bit, group 128)
  // and -GPTQ-Int4/-Int8, -FP8 (Qwen and DeepSeek: 128 x 128 block scales),
  // Red Hat's -FP8-dynamic (per-channel), -MXFP4 and NVIDIA's -NVFP4.
  if (words.count("nvfp4")) return "nvfp4";
  if (words.count("mxfp4")) return "mxfp4";
  if (words.count("awq")) return "awq-int4";
  if (words.count("gptq")) return words.count("int8") ? "int8-wo" : "gptq-int4";
  if (words.count("fp8")) return words.count("dynamic") ? "fp8-e4m3" : "fp8";
  return std::nullopt;
}

}  // namespace llmroof
