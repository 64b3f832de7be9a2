// Catalog lookups and the dict round trip of architectures and devices.
#include <pybind11/stl.h>

#include <initializer_list>
#include <limits>
#include <type_traits>

#include "bindings.hpp"
#include "llmroof/readers.hpp"
#include "report/json.hpp"

namespace llmroof::python {

namespace {

template <class T>
const char* kind_name() {
  if constexpr (std::is_same_v<T, bool>) return "a bool";
  else if constexpr (std::is_integral_v<T>) return "an int";
  else if constexpr (std::is_floating_point_v<T>) return "a number";
  else if constexpr (std::is_same_v<T, std::string>) return "a str";
  else return "a list of str";
}

template <class T>
T get(const py::dict& d, const char* key, T fallback) {
  if (!d.contains(key)) return fallback;
  const py::object v = d[key];
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // Whole numbers only (1.5 layers is an error, not 1), and in range.
    if (py::isinstance<py::bool_>(v) || !py::isinstance<py::int_>(v)) {
      throw py::type_error(std::string(key) + " must be an int (got " + std::string(py::str(py::type::of(v).attr("__name__"))) + ")");
    }
    const auto big = v.cast<py::int_>();
    const py::int_ lo(std::numeric_limits<T>::min()), hi(std::numeric_limits<T>::max());
    if (big < lo || big > hi) {
      throw std::invalid_argument(std::string(key) + " must be <= " + std::to_string(std::numeric_limits<T>::max()) +
                                  " (got " + std::string(py::str(v)) + ")");
    }
  }
  if constexpr (std::is_same_v<T, bool>) {
    if (!py::isinstance<py::bool_>(v)) {
      throw py::type_error(std::string(key) + " must be a bool (got " + std::string(py::str(py::type::of(v).attr("__name__"))) + ")");
    }
  }
  try {
    return v.cast<T>();
  } catch (const py::cast_error&) {
    throw py::type_error(std::string(key) + " must be " + kind_name<T>() + " (got " +
                         std::string(py::str(py::type::of(v).attr("__name__"))) + ")");
  }
}

/// Refuses keys a dict of `what` does not have: a misspelt field would
/// otherwise be ignored silently.
void reject_unknown(const py::dict& d, const char* what, std::initializer_list<const char*> known) {
  for (const auto& [k, v] : d) {
    const std::string key = py::str(k);
    bool ok = false;
    for (const char* x : known) ok = ok || key == x;
    if (!ok) {
      std::string list;
      for (const char* x : known) list += (list.empty() ? "" : ", ") + std::string(x);
      throw std::invalid_argument(std::string(what) + ": unknown field '" + key.substr(0, 80) + "' (known: " + list + ")");
    }
  }
}

/// The enumerator named d[key]; else std::invalid_argument listing the names
/// ("key must be a, b or c (got 'x')").
template <class E, std::size_t N>
E enum_named(const py::dict& d, const char* key, const std::array<std::string_view, N>& names) {
  const auto name = get<std::string>(d, key, "");
  if (const auto v = detail::enum_from_name<E>(name, names)) return *v;
  throw std::invalid_argument(std::string(key) + " must be " + detail::enum_choices(names) + " (got '" + name + "')");
}

py::dict format_to_dict(const numeric_format& f) {
  py::dict d;
  d["name"] = std::string(f.name);
  d["bits"] = f.bits;
  d["math"] = std::string(to_string(f.math));
  d["mix"] = f.mix;
  d["description"] = std::string(f.description);
  d["source"] = std::string(f.source);
  return d;
}

layer_kind kind_from(const std::string& s) {
  if (const auto k = detail::enum_from_name<layer_kind>(s, layer_kind_names)) return *k;
  throw std::invalid_argument("layer_kinds entries must be " + detail::enum_choices(layer_kind_names) + " (got '" + s + "')");
}

}  // namespace

py::dict arch_to_dict(const architecture& a) {
  py::dict d;
  d["id"] = a.id;
  d["name"] = a.name;
  d["family"] = a.family;
  d["source"] = a.source;
  d["num_layers"] = a.num_layers;
  d["hidden_size"] = a.hidden_size;
  d["num_heads"] = a.num_heads;
  d["num_kv_heads"] = a.num_kv_heads;
  d["head_dim"] = a.head_dim;
  d["ffn_size"] = a.ffn_size;
  d["vocab_size"] = a.vocab_size;
  d["attention"] = a.attention == attention_kind::mla ? "mla" : "gqa";
  d["gated_ffn"] = a.ffn == ffn_kind::gated;
  d["tied_embeddings"] = a.tied_embeddings;
  d["qkv_bias"] = a.qkv_bias;
  d["o_bias"] = a.o_bias;
  d["mlp_bias"] = a.mlp_bias;
  d["lm_head_bias"] = a.lm_head_bias;
  d["qk_norm"] = a.qk_norm;
  d["attn_output_gate"] = a.attn_output_gate;
  d["attention_sinks"] = a.attention_sinks;
  d["norm_bias"] = a.norm_bias;
  d["norms_per_layer"] = a.norms_per_layer;
  d["q_lora_rank"] = a.mla.q_lora_rank;
  d["kv_lora_rank"] = a.mla.kv_lora_rank;
  d["qk_nope_head_dim"] = a.mla.qk_nope_head_dim;
  d["qk_rope_head_dim"] = a.mla.qk_rope_head_dim;
  d["v_head_dim"] = a.mla.v_head_dim;
  d["linear_num_key_heads"] = a.linear.num_key_heads;
  d["linear_num_value_heads"] = a.linear.num_value_heads;
  d["linear_key_head_dim"] = a.linear.key_head_dim;
  d["linear_value_head_dim"] = a.linear.value_head_dim;
  d["linear_conv_kernel"] = a.linear.conv_kernel;
  d["num_experts"] = a.moe.num_experts;
  d["experts_per_token"] = a.moe.experts_per_token;
  d["shared_experts"] = a.moe.shared_experts;
  d["expert_ffn"] = a.moe.expert_ffn;
  d["shared_expert_ffn"] = a.moe.shared_expert_ffn;
  d["first_dense_layers"] = a.moe.first_dense_layers;
  d["mtp_layers"] = a.moe.mtp_layers;
  d["router_bias"] = a.moe.router_bias;
  d["expert_bias"] = a.moe.expert_bias;
  d["shared_expert_gate"] = a.moe.shared_expert_gate;
  py::list kinds;
  for (auto k : a.layer_kinds) kinds.append(std::string(to_string(k)));
  d["layer_kinds"] = kinds;
  d["sliding_window"] = a.sliding_window;
  d["max_context"] = a.max_context;
  d["published_total_b"] = a.published_total_b;
  d["published_active_b"] = a.published_active_b;
  py::list aliases;
  for (const auto& x : a.aliases) aliases.append(x);
  d["aliases"] = aliases;
  return d;
}

architecture arch_from_dict(const py::dict& d) {
  reject_unknown(d, "model", {"id", "name", "family", "source", "num_layers", "hidden_size", "num_heads", "num_kv_heads",
                              "head_dim", "ffn_size", "vocab_size", "attention", "gated_ffn", "tied_embeddings", "qkv_bias",
                              "o_bias", "mlp_bias", "lm_head_bias", "qk_norm", "attn_output_gate", "attention_sinks",
                              "norm_bias", "norms_per_layer", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
                              "qk_rope_head_dim", "v_head_dim", "linear_num_key_heads", "linear_num_value_heads",
                              "linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel", "num_experts",
                              "experts_per_token", "shared_experts", "expert_ffn", "shared_expert_ffn",
                              "first_dense_layers", "mtp_layers", "router_bias", "expert_bias", "shared_expert_gate",
                              "layer_kinds", "sliding_window", "max_context", "published_total_b", "published_active_b",
                              "aliases"});
  architecture a;
  a.id = get<std::string>(d, "id", "custom");
  a.name = get<std::string>(d, "name", a.id);
  a.family = get<std::string>(d, "family", "");
  a.source = get<std::string>(d, "source", "user-defined");
  a.aliases = get<std::vector<std::string>>(d, "aliases", {});
  a.num_layers = get<int>(d, "num_layers", 0);
  a.hidden_size = get<int>(d, "hidden_size", 0);
  a.num_heads = get<int>(d, "num_heads", 0);
  a.num_kv_heads = get<int>(d, "num_kv_heads", a.num_heads);
  a.head_dim = get<int>(d, "head_dim", a.num_heads > 0 ? a.hidden_size / a.num_heads : 0);
  a.ffn_size = get<int>(d, "ffn_size", 0);
  a.vocab_size = get<int>(d, "vocab_size", 0);
  const auto att = get<std::string>(d, "attention", "gqa");
  if (att != "gqa" && att != "mla") {
    throw std::invalid_argument("attention must be 'gqa' or 'mla' (got '" + att + "')");
  }
  a.attention = att == "mla" ? attention_kind::mla : attention_kind::gqa;
  a.ffn = get<bool>(d, "gated_ffn", true) ? ffn_kind::gated : ffn_kind::plain;
  a.tied_embeddings = get<bool>(d, "tied_embeddings", false);
  a.qkv_bias = get<bool>(d, "qkv_bias", false);
  a.o_bias = get<bool>(d, "o_bias", false);
  a.mlp_bias = get<bool>(d, "mlp_bias", false);
  a.lm_head_bias = get<bool>(d, "lm_head_bias", false);
  a.qk_norm = get<bool>(d, "qk_norm", false);
  a.attn_output_gate = get<bool>(d, "attn_output_gate", false);
  a.attention_sinks = get<bool>(d, "attention_sinks", false);
  a.norm_bias = get<bool>(d, "norm_bias", false);
  a.norms_per_layer = get<int>(d, "norms_per_layer", 2);
  a.mla.q_lora_rank = get<int>(d, "q_lora_rank", 0);
  a.mla.kv_lora_rank = get<int>(d, "kv_lora_rank", 0);
  a.mla.qk_nope_head_dim = get<int>(d, "qk_nope_head_dim", 0);
  a.mla.qk_rope_head_dim = get<int>(d, "qk_rope_head_dim", 0);
  a.mla.v_head_dim = get<int>(d, "v_head_dim", 0);
  a.linear.num_key_heads = get<int>(d, "linear_num_key_heads", 0);
  a.linear.num_value_heads = get<int>(d, "linear_num_value_heads", 0);
  a.linear.key_head_dim = get<int>(d, "linear_key_head_dim", 0);
  a.linear.value_head_dim = get<int>(d, "linear_value_head_dim", 0);
  a.linear.conv_kernel = get<int>(d, "linear_conv_kernel", 0);
  a.moe.num_experts = get<int>(d, "num_experts", 0);
  a.moe.experts_per_token = get<int>(d, "experts_per_token", 0);
  a.moe.shared_experts = get<int>(d, "shared_experts", 0);
  a.moe.expert_ffn = get<int>(d, "expert_ffn", 0);
  a.moe.shared_expert_ffn = get<int>(d, "shared_expert_ffn", 0);
  a.moe.first_dense_layers = get<int>(d, "first_dense_layers", 0);
  a.moe.mtp_layers = get<int>(d, "mtp_layers", 0);
  a.moe.router_bias = get<bool>(d, "router_bias", false);
  a.moe.expert_bias = get<bool>(d, "expert_bias", false);
  a.moe.shared_expert_gate = get<bool>(d, "shared_expert_gate", false);
  for (const auto& k : get<std::vector<std::string>>(d, "layer_kinds", {})) {
    a.layer_kinds.push_back(kind_from(k));
  }
  a.sliding_window = get<int>(d, "sliding_window", 0);
  a.max_context = get<int>(d, "max_context", 0);
  a.published_total_b = get<double>(d, "published_total_b", 0);
  a.published_active_b = get<double>(d, "published_active_b", 0);
  validate(a);
  return a;
}

py::dict device_to_dict(const device& dv) {
  py::dict d;
  d["id"] = dv.id;
  d["name"] = dv.name;
  d["vendor"] = dv.vendor;
  d["family"] = dv.family;
  d["device_class"] = std::string(to_string(dv.klass));
  d["memory_type"] = dv.memory_type;
  d["memory_bytes"] = dv.memory.value();
  d["bandwidth_bytes_per_s"] = dv.bandwidth.value();
  d["fp32_flops_per_s"] = dv.published_peak(math_format::fp32).value();
  d["bf16_flops_per_s"] = dv.published_peak(math_format::bf16).value();
  d["fp8_flops_per_s"] = dv.published_peak(math_format::fp8).value();
  d["int8_ops_per_s"] = dv.published_peak(math_format::int8).value();
  d["fp4_flops_per_s"] = dv.published_peak(math_format::fp4).value();
  d["interconnect"] = dv.interconnect;
  d["link_bandwidth_bytes_per_s"] = dv.link_bandwidth.value();
  d["tdp_w"] = dv.tdp_w;
  py::list aliases;
  for (const auto& a : dv.aliases) aliases.append(a);
  d["aliases"] = aliases;
  d["source"] = dv.source;
  return d;
}

device device_from_dict(const py::dict& d) {
  reject_unknown(d, "device", {"id", "name", "vendor", "family", "device_class", "memory_type", "memory_bytes",
                               "bandwidth_bytes_per_s", "fp32_flops_per_s", "bf16_flops_per_s", "fp8_flops_per_s",
                               "int8_ops_per_s", "fp4_flops_per_s", "interconnect", "link_bandwidth_bytes_per_s", "tdp_w",
                               "aliases", "source"});
  device dv;
  dv.id = get<std::string>(d, "id", "custom");
  dv.name = get<std::string>(d, "name", dv.id);
  dv.vendor = get<std::string>(d, "vendor", "");
  dv.family = get<std::string>(d, "family", "");
  if (d.contains("device_class")) dv.klass = enum_named<device_class>(d, "device_class", device_class_names);
  dv.memory_type = get<std::string>(d, "memory_type", "");
  dv.memory = make_bytes(get<double>(d, "memory_bytes", 0));
  dv.bandwidth = make_bytes_per_second(get<double>(d, "bandwidth_bytes_per_s", 0));
  dv.peaks[0] = make_flops_per_second(get<double>(d, "fp32_flops_per_s", 0));
  dv.peaks[1] = make_flops_per_second(get<double>(d, "bf16_flops_per_s", 0));
  dv.peaks[2] = make_flops_per_second(get<double>(d, "fp8_flops_per_s", 0));
  dv.peaks[3] = make_flops_per_second(get<double>(d, "int8_ops_per_s", 0));
  dv.peaks[4] = make_flops_per_second(get<double>(d, "fp4_flops_per_s", 0));
  dv.interconnect = get<std::string>(d, "interconnect", "");
  dv.link_bandwidth = make_bytes_per_second(get<double>(d, "link_bandwidth_bytes_per_s", 0));
  dv.tdp_w = get<double>(d, "tdp_w", 0);
  dv.source = get<std::string>(d, "source", "user-defined");
  dv.aliases = get<std::vector<std::string>>(d, "aliases", {});
  validate(dv);
  return dv;
}

py::dict profile_to_dict(const efficiency_profile& e) {
  py::dict d;
  d["name"] = e.name;
  d["memory"] = e.memory;
  d["compute"] = e.compute;
  d["compute_half_rows"] = e.compute_half_rows;
  d["attention"] = e.attention;
  d["per_kernel_s"] = e.per_kernel.value();
  d["per_step_s"] = e.per_step.value();
  d["per_request_s"] = e.per_request.value();
  d["kv_memory"] = e.kv_memory;
  d["low_precision"] = e.low_precision;
  d["stream_cap_bytes_per_s"] = e.stream_cap;
  d["fp16_accumulate"] = e.fp16_accumulate;
  d["fused_attention"] = e.fused_attention;
  d["quantized_path"] = std::string(to_string(e.quantized_path));
  d["host_overlap"] = std::string(to_string(e.overlap));
  d["scheduler_steps"] = e.scheduler_steps;
  d["source"] = e.source;
  return d;
}


efficiency_profile profile_from_dict(const device& dev, const py::object& o, std::string_view engine) {
  efficiency_profile e = default_profile(dev, engine);
  if (o.is_none()) return e;
  if (!py::isinstance<py::dict>(o)) {
    throw py::type_error("efficiency must be a dict or None (got " + std::string(py::str(py::type::of(o).attr("__name__"))) + ")");
  }
  const auto d = o.cast<py::dict>();
  reject_unknown(d, "efficiency", {"name", "memory", "compute", "compute_half_rows", "attention", "per_kernel_s", "per_step_s",
                                   "per_request_s", "kv_memory", "low_precision", "stream_cap_bytes_per_s", "fp16_accumulate", "fused_attention", "quantized_path",
                                   "host_overlap", "scheduler_steps", "source"});
  e.name = get<std::string>(d, "name", "custom");
  e.memory = get<double>(d, "memory", e.memory);
  e.compute = get<double>(d, "compute", e.compute);
  e.compute_half_rows = get<double>(d, "compute_half_rows", e.compute_half_rows);
  e.attention = get<double>(d, "attention", e.attention);
  e.per_kernel = make_seconds(get<double>(d, "per_kernel_s", e.per_kernel.value()));
  e.per_step = make_seconds(get<double>(d, "per_step_s", e.per_step.value()));
  e.per_request = make_seconds(get<double>(d, "per_request_s", e.per_request.value()));
  e.kv_memory = get<double>(d, "kv_memory", e.kv_memory);
  e.low_precision = get<double>(d, "low_precision", e.low_precision);
  e.stream_cap = get<double>(d, "stream_cap_bytes_per_s", e.stream_cap);
  e.fp16_accumulate = get<bool>(d, "fp16_accumulate", e.fp16_accumulate);
  e.fused_attention = get<bool>(d, "fused_attention", e.fused_attention);
  if (d.contains("quantized_path")) {
    e.quantized_path = enum_named<kernel_path>(d, "quantized_path", kernel_path_names);
  }
  if (d.contains("host_overlap")) {
    e.overlap = enum_named<host_overlap>(d, "host_overlap", host_overlap_names);
  }
  e.scheduler_steps = get<int>(d, "scheduler_steps", e.scheduler_steps);
  e.source = get<std::string>(d, "source", "user-defined");
  validate(e);
  return e;
}

namespace {

template <class Range, class Name>
py::list names_of(const Range& all, Name name) {
  py::list out;
  for (const auto& x : all) out.append(std::string(name(x)));
  return out;
}

// Lookups from one string: (Python name, argument name, function).
struct string_lookup {
  const char* name;
  const char* arg;
  py::object (*fn)(const std::string&);
};

}  // namespace

void register_catalog(py::module_& m) {
  m.def("format_names", [] { return names_of(formats(), [](const numeric_format& f) { return f.name; }); });
  m.def("device_ids", [] { return names_of(devices(), [](const device& d) { return d.id; }); });
  m.def("model_ids", [] { return names_of(models(), [](const architecture& a) { return a.id; }); });
  static constexpr string_lookup lookups[] = {
      {"find_format", "name", [](const std::string& s) -> py::object { return format_to_dict(find_format(s)); }},
      {"find_device", "id", [](const std::string& s) -> py::object { return device_to_dict(find_device(s)); }},
      {"device_from_spec", "spec", [](const std::string& s) -> py::object { return device_to_dict(device_from_spec(s)); }},
      {"parse_custom_device", "spec",
       [](const std::string& s) -> py::object { return device_to_dict(parse_custom_device(s)); }},
      {"read_device_json", "path", [](const std::string& s) -> py::object { return device_to_dict(read_device_json(s)); }},
      {"match_devices", "name", [](const std::string& s) -> py::object { return py::cast(match_devices(s)); }},
      {"match_models", "name", [](const std::string& s) -> py::object { return py::cast(match_models(s)); }},
      {"find_model", "id", [](const std::string& s) -> py::object { return arch_to_dict(find_model(s)); }},
  };
  for (const string_lookup& l : lookups) m.def(l.name, l.fn, py::arg(l.arg));
  m.def("validate_model", [](const py::dict& d) { return arch_to_dict(arch_from_dict(d)); }, py::arg("fields"));
  m.def("validate_device", [](const py::dict& d) { return device_to_dict(device_from_dict(d)); }, py::arg("fields"));
  m.def("default_profile", [](const py::dict& dev) { return profile_to_dict(default_profile(device_from_dict(dev))); },
        py::arg("device"));
  m.def(
      "read_model",
      [](const std::string& path) {
        const model_source src = read_model(path);
        py::dict out;
        out["fields"] = arch_to_dict(src.arch);
        out["source"] = report::model_source_json(src).dump();
        out["loaded_weight_bytes"] = loaded_weight_bytes(src, src.pr).value();
        return out;
      },
      py::arg("path"));

  m.def("count_parameters", [](const py::dict& d) {
    const auto p = count_parameters(arch_from_dict(d));
    py::dict out;
    out["embedding"] = p.embedding;
    out["attention"] = p.attention;
    out["dense_ffn"] = p.dense_ffn;
    out["routed_experts"] = p.routed_experts;
    out["shared_experts"] = p.shared_experts;
    out["router"] = p.router;
    out["norms"] = p.norms;
    out["lm_head"] = p.lm_head;
    out["mtp"] = p.mtp;
    out["total"] = p.total();
    out["active"] = p.active();
    out["active_with_embedding"] = p.active_with_embedding();
    return out;
  }, py::arg("model"));
}

}  // namespace llmroof::python
