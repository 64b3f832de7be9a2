// HuggingFace config.json -> architecture + weight formats.
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common.hpp"
#include "llmroof/units/formats.hpp"

namespace llmroof {

namespace {

using nlohmann::json;
using readers::fail;

// Bounds that no real model reaches; larger values are corrupt files, and
// refusing them keeps allocations (one entry per layer) bounded.
constexpr double max_layers = 10000;
constexpr double max_width = 1e7;

/// The bad value, quoted for a message: scalars as JSON (at most 40
/// characters), arrays and objects by kind, never dumped whole.
std::string preview(const json& v) {
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  if (v.is_string()) {
    const auto& t = v.get_ref<const std::string&>();
    return json(t.substr(0, 40)).dump(-1, ' ', false, json::error_handler_t::replace);
  }
  return v.dump().substr(0, 40);
}

class config {
 public:
  config(const json& j, std::string_view file, std::string prefix)
      : j_(j), file_(file), prefix_(std::move(prefix)) {}

  [[nodiscard]] bool has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }

  [[nodiscard]] std::string where(const char* key) const { return "'" + prefix_ + key + "'"; }

  [[nodiscard]] int integer(const char* key, double max, std::optional<int> fallback = std::nullopt) const {
    if (!has(key)) {
      if (fallback) return *fallback;
      fail(file_, "missing " + where(key));
    }
    const json& v = j_.at(key);
    // 32.0 is accepted as 32; 1e300 and 0.5 are not integers a model can have.
    const bool whole = v.is_number_integer() ||
                       (v.is_number_float() && std::isfinite(v.get<double>()) && std::floor(v.get<double>()) == v.get<double>());
    if (!whole) fail(file_, where(key) + " must be an integer (got " + preview(v) + ")");
    const double x = v.get<double>();
    if (x < 0 || x > max) {
      fail(file_, where(key) + " must be in [0, " + detail::show(max) + "] (got " + detail::show(x) + ")");
    }
    return static_cast<int>(x);
  }

  [[nodiscard]] bool boolean(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_boolean()) fail(file_, where(key) + " must be true or false (got " + preview(v) + ")");
    return v.get<bool>();
  }

  [[nodiscard]] std::string text(const char* key, std::string fallback) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_string()) fail(file_, where(key) + " must be a string (got " + preview(v) + ")");
    return v.get<std::string>();
  }

  [[nodiscard]] const json& array(const char* key) const {
    const json& v = j_.at(key);
    if (!v.is_array()) fail(file_, where(key) + " must be an array");
    return v;
  }

  [[nodiscard]] const json& raw() const { return j_; }

 private:
  const json& j_;
  std::string_view file_;
  std::string prefix_;
};

numeric_format int_format(std::string_view file, int bits, int group, bool zero_point, std::string_view family) {
  if (bits < 1) fail(file, "quantization_config bits must be >= 1 (got " + std::to_string(bits) + ")");
  const double g = group > 0 ? group : 1e9;  // per-channel scales: negligible
  const double b = bits + 16.0 / g + (zero_point ? bits / g : 0.0);
  std::ostringstream name;
  name << family << "-int" << bits << "-g" << (group > 0 ? std::to_string(group) : "channel");
  // Reuse the catalog entry when the layout is one of its own.
  for (const auto& f : formats()) {
    if (f.math == math_format::bf16 && std::fabs(f.bits - b) < 1e-9 && f.name.find("int" + std::to_string(bits)) != std::string_view::npos) {
      return f;
    }
  }
  std::ostringstream desc;
  desc << bits << "-bit integers, 16-bit scale" << (zero_point ? " and zero point" : "") << " per group of "
       << (group > 0 ? std::to_string(group) : "a channel");
  return make_format(name.str(), b, math_format::bf16, desc.str());
}

struct quantization {
  std::optional<numeric_format> weights;
  std::vector<std::string> ignore;
};

quantization read_quantization(const json& q, std::string_view file, std::vector<std::string>& warnings) {
  quantization out;
  if (!q.is_object()) fail(file, "'quantization_config' must be an object");
  const config c(q, file, "quantization_config.");
  const std::string method = detail::to_lower(c.text("quant_method", ""));
  for (const char* key : {"modules_to_not_convert", "ignore", "ignored_layers"}) {
    if (!c.has(key)) continue;
    for (const auto& e : c.array(key)) {
      if (!e.is_string()) fail(file, "'quantization_config." + std::string(key) + "' entries must be strings");
      out.ignore.push_back(e.get<std::string>());
    }
  }
  if (method == "fp8") {
    out.weights = c.has("weight_block_size") ? find_format("fp8") : find_format("fp8-e4m3");
  } else if (method == "awq") {
    out.weights = int_format(file, c.integer("bits", 16, 4), c.integer("group_size", 1 << 20, 128),
                             c.boolean("zero_point", true), "awq");
  } else if (method == "gptq") {
    const int group = c.has("group_size") && c.raw().at("group_size").is_number_integer() &&
                              c.raw().at("group_size").get<long long>() < 0
                          ? 0
                          : c.integer("group_size", 1 << 20, 128);
    out.weights = int_format(file, c.integer("bits", 16, 4), group, !c.boolean("sym", true), "gptq");
  } else if (method == "mxfp4") {
    out.weights = find_format("mxfp4");
  } else if (method == "bitsandbytes") {
    if (c.boolean("load_in_4bit", false)) {
      // NF4 with one fp32 absmax per 64 weights, double-quantized to 8 bits:
      // 4 + 8/64 + 32/(64*256) = 4.127 bits (QLoRA paper, section 3).
      out.weights = make_format("nf4", 4.0 + 8.0 / 64 + 32.0 / (64.0 * 256), math_format::bf16,
                                "bitsandbytes NF4, double-quantized absmax per 64");
    } else {
      out.weights = find_format("int8-wo");
    }
  } else if (method == "compressed-tensors" || method == "modelopt") {
    if (c.has("config_groups")) {
      const json& groups = c.raw().at("config_groups");
      if (!groups.is_object()) fail(file, "'quantization_config.config_groups' must be an object");
      for (const auto& [gname, g] : groups.items()) {
        if (!g.is_object() || !g.contains("weights") || !g.at("weights").is_object()) continue;
        const config w(g.at("weights"), file, "quantization_config.config_groups." + gname + ".weights.");
        const int bits = w.integer("num_bits", 64, 8);
        const std::string type = w.text("type", "int");
        const int group = w.has("group_size") ? w.integer("group_size", 1 << 20) : 0;
        if (type == "float" && bits == 4) {
          out.weights = group == 32 ? find_format("mxfp4") : find_format("nvfp4");
        } else if (type == "float" && bits == 8) {
          out.weights = find_format("fp8-e4m3");
        } else if (type == "int" && bits == 8 && g.contains("input_activations") && !g.at("input_activations").is_null()) {
          out.weights = find_format("int8");
        } else {
          out.weights = int_format(file, bits, group, !w.boolean("symmetric", true), "ct");
        }
        break;
      }
    }
    if (!out.weights && detail::to_lower(c.text("quant_algo", "")) == "nvfp4") out.weights = find_format("nvfp4");
    if (!out.weights && detail::to_lower(c.text("quant_algo", "")) == "fp8") out.weights = find_format("fp8-e4m3");
    if (!out.weights) warnings.push_back("quantization_config: no weight format found; assumed bf16");
  } else {
    warnings.push_back("quantization_config: quant_method '" + method + "' is not known; assumed bf16 weights");
  }
  return out;
}

layer_kind kind_from_layer_type(const std::string& s, std::string_view file) {
  if (s == "full_attention" || s == "attention" || s == "global") return layer_kind::global;
  if (s == "sliding_attention" || s == "local" || s == "sliding") return layer_kind::sliding;
  if (s == "linear_attention" || s == "mamba" || s == "linear") return layer_kind::linear;
  fail(file, "'layer_types' entry '" + s.substr(0, 40) + "' is not known");
}

// Vision tower + projector, approximately: per layer 4 h^2 (attention) +
// 2 or 3 h i (FFN), a patch embedding 3 p^2 h, and a projector h x d + d x d.
double vision_params(const json& v, int text_hidden, std::string_view file) {
  if (!v.is_object()) return 0;
  const config c(v, file, "vision_config.");
  const double h = c.integer("hidden_size", max_width, 0);
  const double i = c.integer("intermediate_size", max_width, 0);
  const double layers = c.integer("num_hidden_layers", max_layers, 0);
  const double patch = c.integer("patch_size", 4096, 14);
  const bool gated = c.text("hidden_act", "gelu") == "silu";  // Pixtral: SwiGLU
  return layers * (4.0 * h * h + (gated ? 3.0 : 2.0) * h * i + 2.0 * h) + 3.0 * patch * patch * h +
         h * text_hidden + double(text_hidden) * text_hidden;
}

// JSON text as the readers take it: depth-guarded, a parse error naming the file.
json parse_json(std::string_view text, std::string_view name) {
  readers::require_json_depth(name, text);
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    fail(name, std::string("invalid JSON: ") + e.what());
  }
}

// The formats a quantization leaves a model of `layers` layers in: its
// weight format for the linear layers, bf16 for the modules it ignores (by
// the names HF checkpoints give them) and, unless quantized, for the
// embedding table and lm_head. Empty when it names no weight format.
std::optional<precision> formats_of(const quantization& q, int layers, std::string_view name,
                                    std::vector<std::string>& warnings) {
  if (!q.weights) return std::nullopt;
  precision pr = precision::of(*q.weights, find_format("bf16"));
  pr.embedding = find_format("bf16");
  pr.lm_head = find_format("bf16");
  const readers::ignore_list ignore(name, q.ignore);
  const auto share = [&](auto&& module_name) {
    int hit = 0;
    for (int i = 0; i < layers; ++i) {
      if (ignore.matches(module_name(i))) ++hit;
    }
    return layers > 0 ? double(hit) / layers : 0.0;
  };
  const auto bf16 = find_format("bf16");
  const double attn = share([](int i) { return "model.layers." + std::to_string(i) + ".self_attn.q_proj"; });
  const double ffn = share([](int i) { return "model.layers." + std::to_string(i) + ".mlp.gate_proj"; });
  const double experts = share([](int i) { return "model.layers." + std::to_string(i) + ".mlp.experts.0.gate_proj"; });
  if (attn > 0.5) pr.attention = bf16;
  if (ffn > 0.5) pr.ffn = bf16;
  if (experts > 0.5) pr.experts = bf16;
  for (double s : {attn, ffn, experts}) {
    if (s > 0 && s < 1) {
      warnings.push_back("quantization_config ignores a module in some layers only; the majority format is used");
      break;
    }
  }
  // Quantizers leave lm_head alone unless told otherwise; an ignore list
  // without it means lm_head was quantized (compressed-tensors, modelopt).
  if (!ignore.matches("lm_head") && !ignore.empty()) pr.lm_head = *q.weights;
  return pr;
}

}  // namespace

model_source parse_hf_config(std::string_view json_text, std::string_view name) {
  const json root = parse_json(json_text, name);
  if (!root.is_object()) fail(name, "the top level must be a JSON object");
  model_source out;
  out.path = std::string(name);
  const bool nested = root.contains("text_config") && root.at("text_config").is_object();
  const json& t = nested ? root.at("text_config") : root;
  const config c(t, name, nested ? "text_config." : "");
  const config top(root, name, "");
  std::string family = c.text("model_type", top.text("model_type", ""));
  if (family.empty()) {
    out.warnings.push_back("no model_type: assumed a llama-style decoder");
  }
  static const std::set<std::string> known = {
      "llama", "mistral", "mistral3", "ministral3", "qwen2", "qwen3", "qwen3_moe", "qwen3_next",
      "deepseek_v3", "deepseek_v2", "kimi_k2", "glm4_moe", "gpt_oss", "mixtral", "gemma3", "gemma3_text",
      "gemma4", "gemma4_text", "minimax_m2", "falcon", "gptj", "qwen2_moe"};
  if (!family.empty() && known.count(family) == 0) {
    out.warnings.push_back("unknown model_type '" + family.substr(0, 40) +
                           "': assumed a llama-style decoder (gated FFN, no biases; standard field names)");
  }
  architecture& a = out.arch;
  a.family = family;
  a.id = std::filesystem::path(std::string(name)).stem().string();
  a.name = a.id;
  a.source = "config.json: " + std::string(name);

  const bool gptj = family == "gptj";
  const bool falcon = family == "falcon";
  const bool gemma = family == "gemma3" || family == "gemma3_text" || family == "gemma4" || family == "gemma4_text";
  const bool mla = c.has("kv_lora_rank");

  a.num_layers = c.integer(gptj ? "n_layer" : (falcon && !c.has("num_hidden_layers") ? "n_layer" : "num_hidden_layers"), max_layers);
  a.hidden_size = c.integer(gptj ? "n_embd" : "hidden_size", max_width);
  a.num_heads = c.integer(gptj ? "n_head" : (falcon && !c.has("num_attention_heads") ? "n_head" : "num_attention_heads"), max_width);
  a.vocab_size = c.integer("vocab_size", 1e8);
  if (falcon) {
    const bool new_arch = c.boolean("new_decoder_architecture", false);
    a.num_kv_heads = new_arch ? c.integer(c.has("num_kv_heads") ? "num_kv_heads" : "n_head_kv", max_width, 1)
                              : (c.boolean("multi_query", true) ? 1 : a.num_heads);
    a.norms_per_layer = new_arch ? 2 : 1;
    a.ffn_size = c.integer("ffn_hidden_size", max_width, 4 * a.hidden_size);
    a.ffn = ffn_kind::plain;
    a.norm_bias = true;
    a.qkv_bias = a.o_bias = a.mlp_bias = c.boolean("bias", false);
  } else {
    a.num_kv_heads = c.integer("num_key_value_heads", max_width, a.num_heads);
    a.ffn_size = gptj ? c.integer("n_inner", max_width, 4 * a.hidden_size) : c.integer("intermediate_size", max_width, 0);
  }
  a.head_dim = c.integer("head_dim", max_width, a.num_heads > 0 ? a.hidden_size / a.num_heads : 0);
  // Gemma 4: full-attention layers with KV heads and a width of their own,
  // whose keys serve as their values.
  a.global_kv_heads = c.integer("num_global_key_value_heads", max_width, 0);
  a.global_head_dim = c.integer("global_head_dim", max_width, 0);
  a.global_k_is_v = c.boolean("attention_k_eq_v", false);
  // Gemma 4's small models (E2B, E4B) share KV between layers and add
  // per-layer inputs: not modelled, said.
  if (c.has("num_kv_shared_layers") && c.integer("num_kv_shared_layers", max_layers, 0) > 0) {
    out.warnings.push_back("num_kv_shared_layers: layers that reuse another's KV are counted with a cache of their own");
  }
  if (c.has("hidden_size_per_layer_input") && c.integer("hidden_size_per_layer_input", max_width, 0) > 0) {
    out.warnings.push_back("hidden_size_per_layer_input: per-layer input embeddings are not counted");
  }
  if (c.boolean("use_double_wide_mlp", false)) {
    out.warnings.push_back("use_double_wide_mlp: MLPs counted at intermediate_size, not doubled");
  }
  a.max_context = c.integer(gptj ? "n_positions" : "max_position_embeddings", 1e9, 0);
  a.tied_embeddings = c.boolean("tie_word_embeddings", top.boolean("tie_word_embeddings", gemma || falcon));
  if (nested && root.contains("tie_word_embeddings") && !t.contains("tie_word_embeddings")) {
    a.tied_embeddings = top.boolean("tie_word_embeddings", false);
  }

  if (gptj) {
    a.ffn = ffn_kind::plain;
    a.mlp_bias = true;
    a.lm_head_bias = true;
    a.norm_bias = true;
    a.norms_per_layer = 1;
  }
  const bool attention_bias = c.boolean("attention_bias", false);
  if (family == "qwen2" || family == "qwen2_moe") a.qkv_bias = c.boolean("qkv_bias", true);
  if (family == "glm4_moe") a.qkv_bias = attention_bias;  // q, k, v only
  if (!falcon && family != "qwen2" && family != "glm4_moe" && attention_bias) a.qkv_bias = a.o_bias = true;
  a.mlp_bias = a.mlp_bias || c.boolean("mlp_bias", false);
  a.qk_norm = family == "qwen3" || family == "qwen3_moe" || family == "qwen3_next" || gemma ||
              c.boolean("use_qk_norm", false);
  a.attn_output_gate = family == "qwen3_next" && c.boolean("attn_output_gate", true);
  a.attention_sinks = family == "gpt_oss";
  if (gemma) a.norms_per_layer = 4;

  if (mla) {
    a.attention = attention_kind::mla;
    a.mla.q_lora_rank = c.integer("q_lora_rank", max_width, 0);
    a.mla.kv_lora_rank = c.integer("kv_lora_rank", max_width);
    a.mla.qk_nope_head_dim = c.integer("qk_nope_head_dim", max_width);
    a.mla.qk_rope_head_dim = c.integer("qk_rope_head_dim", max_width);
    a.mla.v_head_dim = c.integer("v_head_dim", max_width);
  }

  // Layer pattern.
  const int layers = a.num_layers;
  if (c.has("layer_types")) {
    const json& lt = c.array("layer_types");
    if (lt.size() != static_cast<std::size_t>(layers)) {
      fail(name, "'layer_types' has " + std::to_string(lt.size()) + " entries for " + std::to_string(layers) + " layers");
    }
    for (const auto& e : lt) {
      if (!e.is_string()) fail(name, "'layer_types' entries must be strings");
      a.layer_kinds.push_back(kind_from_layer_type(e.get<std::string>(), name));
    }
  } else if (family == "qwen3_next") {
    const int every = c.integer("full_attention_interval", max_layers, 4);
    if (every < 1) fail(name, "'full_attention_interval' must be >= 1 (got 0)");
    for (int i = 0; i < layers; ++i) a.layer_kinds.push_back((i + 1) % every == 0 ? layer_kind::global : layer_kind::linear);
  } else if (gemma) {
    const int every = c.integer("sliding_window_pattern", max_layers, 6);
    if (every < 1) fail(name, "'sliding_window_pattern' must be >= 1 (got 0)");
    for (int i = 0; i < layers; ++i) a.layer_kinds.push_back((i + 1) % every == 0 ? layer_kind::global : layer_kind::sliding);
  } else if (c.has("attn_type_list")) {
    const json& lt = c.array("attn_type_list");
    if (lt.size() != static_cast<std::size_t>(layers)) fail(name, "'attn_type_list' length differs from the layer count");
    bool any_linear = false;
    for (const auto& e : lt) {
      if (!e.is_number_integer()) fail(name, "'attn_type_list' entries must be integers");
      any_linear = any_linear || e.get<long long>() == 0;
    }
    if (any_linear) out.warnings.push_back("attn_type_list: lightning-attention layers counted as full attention");
  } else if (c.has("sliding_window") && c.raw().at("sliding_window").is_number() &&
             (family == "mistral" || family == "mixtral") && c.integer("sliding_window", 1e9) > 0) {
    a.layer_kinds.assign(static_cast<std::size_t>(layers), layer_kind::sliding);
  }
  if (c.has("sliding_window") && c.raw().at("sliding_window").is_number()) {
    a.sliding_window = c.integer("sliding_window", 1e9);
  }
  bool any_sliding = false;
  for (auto k : a.layer_kinds) any_sliding = any_sliding || k == layer_kind::sliding;
  if (!any_sliding) a.sliding_window = 0;
  if (a.count_layers(layer_kind::linear) > 0) {
    a.linear.num_key_heads = c.integer("linear_num_key_heads", max_width);
    a.linear.num_value_heads = c.integer("linear_num_value_heads", max_width);
    a.linear.key_head_dim = c.integer("linear_key_head_dim", max_width);
    a.linear.value_head_dim = c.integer("linear_value_head_dim", max_width);
    a.linear.conv_kernel = c.integer("linear_conv_kernel_dim", 4096, 4);
  }

  // Mixture of Experts.
  const char* experts_key = c.has("n_routed_experts") ? "n_routed_experts"
                            : c.has("num_experts")     ? "num_experts"
                            : c.has("num_local_experts") ? "num_local_experts"
                                                          : nullptr;
  if (experts_key != nullptr && c.integer(experts_key, 1e6) > 0) {
    auto& m = a.moe;
    m.num_experts = c.integer(experts_key, 1e6);
    m.experts_per_token = c.integer(c.has("num_experts_per_tok") ? "num_experts_per_tok"
                                    : c.has("top_k_experts")     ? "top_k_experts"
                                                                 : "experts_per_token",
                                    1e6);
    const bool ffn_is_expert = family == "mixtral" || family == "gpt_oss" || family == "minimax_m2" ||
                               !c.has("moe_intermediate_size");
    m.expert_ffn = ffn_is_expert ? a.ffn_size : c.integer("moe_intermediate_size", max_width);
    if (ffn_is_expert) a.ffn_size = 0;
    if (c.has("n_shared_experts")) {
      m.shared_experts = c.integer("n_shared_experts", 1e6);
    } else if (c.has("shared_expert_intermediate_size") && c.integer("shared_expert_intermediate_size", max_width) > 0) {
      m.shared_experts = 1;
      m.shared_expert_ffn = c.integer("shared_expert_intermediate_size", max_width);
      m.shared_expert_gate = true;
    } else if (c.has("shared_intermediate_size") && c.integer("shared_intermediate_size", max_width) > 0) {
      m.shared_experts = 1;
      m.shared_expert_ffn = c.integer("shared_intermediate_size", max_width);
    } else if (c.boolean("enable_moe_block", false) && a.ffn_size > 0) {
      // Gemma 4's MoE layers run their dense MLP beside the routed experts:
      // one always-on FFN of intermediate_size, counted as a shared expert.
      m.shared_experts = 1;
      m.shared_expert_ffn = a.ffn_size;
    }
    m.first_dense_layers = c.integer("first_k_dense_replace", max_layers, 0);
    if (c.has("mlp_only_layers") && !c.array("mlp_only_layers").empty()) {
      out.warnings.push_back("mlp_only_layers: dense layers inside the stack are counted as MoE layers");
    }
    if (c.integer("decoder_sparse_step", max_layers, 1) > 1) {
      out.warnings.push_back("decoder_sparse_step > 1: every layer counted as MoE");
    }
    m.mtp_layers = c.integer("num_nextn_predict_layers", 64, 0);
    if (family == "minimax_m2" && c.boolean("use_mtp", false)) m.mtp_layers = c.integer("num_mtp_modules", 64, 0);
    m.router_bias = family == "glm4_moe" || family == "gpt_oss" || c.text("topk_method", "") == "noaux_tc" ||
                    c.boolean("use_routing_bias", false);
    m.expert_bias = family == "gpt_oss";
  } else if (c.has("num_nextn_predict_layers")) {
    a.moe.mtp_layers = c.integer("num_nextn_predict_layers", 64, 0);
  }

  try {
    validate(a);
  } catch (const std::invalid_argument& e) {
    fail(name, e.what());
  }

  if (nested && root.contains("vision_config")) {
    out.vision_params = vision_params(root.at("vision_config"), a.hidden_size, name);
  }

  // Weight formats: multimodal checkpoints (Kimi K2.5) keep them in text_config.
  const json* qc = root.contains("quantization_config") ? &root.at("quantization_config")
                   : nested && t.contains("quantization_config") ? &t.at("quantization_config")
                                                                   : nullptr;
  if (qc != nullptr && !qc->is_null()) {
    if (auto pr = formats_of(read_quantization(*qc, name, out.warnings), a.num_layers, name, out.warnings)) {
      out.quantized = true;
      out.pr = *pr;
    }
  }
  if (const char* dt = root.contains("torch_dtype") ? "torch_dtype" : (root.contains("dtype") ? "dtype" : nullptr)) {
    const std::string d = top.text(dt, "bfloat16");
    if (!out.quantized && (d == "float32" || d == "float16")) {
      out.pr = precision::of(find_format(d == "float32" ? "fp32" : "fp16"), find_format("bf16"));
      out.pr.kv = find_format("bf16");
    }
  }
  return out;
}

model_source read_hf_config(const std::string& path) {
  std::filesystem::path p(path);
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec)) p /= "config.json";
  std::uint64_t size = 0;
  constexpr std::uint64_t limit = 64ull << 20;  // config.json files are kilobytes
  const auto buf = readers::read_prefix(p.string(), limit + 1, &size);
  if (size > limit) fail(p.string(), "larger than 64 MiB: not a config.json");
  std::string_view text(reinterpret_cast<const char*>(buf.data()), buf.size());
  // Name the model after its folder when the file is the usual config.json.
  const std::string label = p.filename() == "config.json" && p.has_parent_path() ? p.parent_path().filename().string() : p.string();
  model_source m = parse_hf_config(text, p.string());
  if (!label.empty() && label != p.string()) {
    m.arch.id = label;
    m.arch.name = label;
  }
  return m;
}

std::optional<precision> quantization_formats(std::string_view quantization_config, const architecture& a,
                                              std::string_view name) {
  std::vector<std::string> warnings;
  return formats_of(read_quantization(parse_json(quantization_config, name), name, warnings), a.num_layers, name,
                    warnings);
}

}  // namespace llmroof
