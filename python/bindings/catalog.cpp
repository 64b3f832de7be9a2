// Catalog lookups and the dict round trip of architectures and devices.
#include <pybind11/stl.h>

#include <cmath>
#include <limits>
#include <type_traits>

#include "bindings.hpp"
#include "llmroof/model/readers.hpp"
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
/// otherwise be ignored silently. `known`: key names, or a table of fields.
template <class Known>
void reject_unknown(const py::dict& d, const char* what, const Known& known) {
  const auto name = [](const auto& x) -> std::string {
    if constexpr (std::is_convertible_v<decltype(x), std::string>) return x;
    else return x.key;
  };
  for (const auto& [k, v] : d) {
    const std::string key = py::str(k);
    bool ok = false;
    for (const auto& x : known) ok = ok || key == name(x);
    if (!ok) {
      std::string list;
      for (const auto& x : known) {
        if (!list.empty()) list += ", ";
        list += name(x);
      }
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

namespace {

/// One field of a struct as a Python dict holds it: its key, how to write it
/// and how to read it back (an absent key keeps the struct's value). The
/// table of a struct is the one list of its fields: to_dict, from_dict and
/// the keys from_dict knows all read it.
template <class S>
struct field {
  const char* key;
  void (*put)(const S& s, py::dict& d, const char* key);
  void (*take)(S& s, const py::dict& d, const char* key);
};

/// A member held as it is (int, double, bool, str, list of str) or, for a
/// quantity (bytes, bytes/s, FLOP/s), as its value in SI units; `At` reaches
/// it (a captureless generic lambda: S& -> member&, const S& -> const member&).
template <class S, auto At>
constexpr field<S> member(const char* key) {
  return {key,
          [](const S& s, py::dict& d, const char* k) {
            const auto& m = At(s);
            if constexpr (requires { m.value(); }) d[k] = m.value();
            else d[k] = m;
          },
          [](S& s, const py::dict& d, const char* k) {
            auto& m = At(s);
            using T = std::remove_reference_t<decltype(m)>;
            if constexpr (requires { m.value(); }) m = T::from_value(get<double>(d, k, m.value()));
            else m = get<T>(d, k, m);
          }};
}

#define LLMROOF_MEMBER(S, key, path) member<S, [](auto& x) -> auto& { return x.path; }>(key)

// Defaults that follow other fields (name, num_kv_heads, head_dim) are set
// once the table is read (fields_from_dict, arch_from_dict).
const field<architecture> arch_fields[] = {
    LLMROOF_MEMBER(architecture, "id", id),
    LLMROOF_MEMBER(architecture, "name", name),
    LLMROOF_MEMBER(architecture, "family", family),
    LLMROOF_MEMBER(architecture, "source", source),
    LLMROOF_MEMBER(architecture, "num_layers", num_layers),
    LLMROOF_MEMBER(architecture, "hidden_size", hidden_size),
    LLMROOF_MEMBER(architecture, "num_heads", num_heads),
    LLMROOF_MEMBER(architecture, "num_kv_heads", num_kv_heads),
    LLMROOF_MEMBER(architecture, "head_dim", head_dim),
    LLMROOF_MEMBER(architecture, "ffn_size", ffn_size),
    LLMROOF_MEMBER(architecture, "vocab_size", vocab_size),
    {"attention", [](const architecture& a, py::dict& d, const char* k) { d[k] = a.attention == attention_kind::mla ? "mla" : "gqa"; },
     [](architecture& a, const py::dict& d, const char* k) {
       const auto att = get<std::string>(d, k, "gqa");
       if (att != "gqa" && att != "mla") throw std::invalid_argument("attention must be 'gqa' or 'mla' (got '" + att + "')");
       a.attention = att == "mla" ? attention_kind::mla : attention_kind::gqa;
     }},
    {"gated_ffn", [](const architecture& a, py::dict& d, const char* k) { d[k] = a.ffn == ffn_kind::gated; },
     [](architecture& a, const py::dict& d, const char* k) {
       a.ffn = get<bool>(d, k, true) ? ffn_kind::gated : ffn_kind::plain;
     }},
    LLMROOF_MEMBER(architecture, "tied_embeddings", tied_embeddings),
    LLMROOF_MEMBER(architecture, "qkv_bias", qkv_bias),
    LLMROOF_MEMBER(architecture, "o_bias", o_bias),
    LLMROOF_MEMBER(architecture, "mlp_bias", mlp_bias),
    LLMROOF_MEMBER(architecture, "lm_head_bias", lm_head_bias),
    LLMROOF_MEMBER(architecture, "qk_norm", qk_norm),
    LLMROOF_MEMBER(architecture, "attn_output_gate", attn_output_gate),
    LLMROOF_MEMBER(architecture, "attention_sinks", attention_sinks),
    LLMROOF_MEMBER(architecture, "norm_bias", norm_bias),
    LLMROOF_MEMBER(architecture, "norms_per_layer", norms_per_layer),
    LLMROOF_MEMBER(architecture, "q_lora_rank", mla.q_lora_rank),
    LLMROOF_MEMBER(architecture, "kv_lora_rank", mla.kv_lora_rank),
    LLMROOF_MEMBER(architecture, "qk_nope_head_dim", mla.qk_nope_head_dim),
    LLMROOF_MEMBER(architecture, "qk_rope_head_dim", mla.qk_rope_head_dim),
    LLMROOF_MEMBER(architecture, "v_head_dim", mla.v_head_dim),
    LLMROOF_MEMBER(architecture, "linear_num_key_heads", linear.num_key_heads),
    LLMROOF_MEMBER(architecture, "linear_num_value_heads", linear.num_value_heads),
    LLMROOF_MEMBER(architecture, "linear_key_head_dim", linear.key_head_dim),
    LLMROOF_MEMBER(architecture, "linear_value_head_dim", linear.value_head_dim),
    LLMROOF_MEMBER(architecture, "linear_conv_kernel", linear.conv_kernel),
    LLMROOF_MEMBER(architecture, "num_experts", moe.num_experts),
    LLMROOF_MEMBER(architecture, "experts_per_token", moe.experts_per_token),
    LLMROOF_MEMBER(architecture, "shared_experts", moe.shared_experts),
    LLMROOF_MEMBER(architecture, "expert_ffn", moe.expert_ffn),
    LLMROOF_MEMBER(architecture, "shared_expert_ffn", moe.shared_expert_ffn),
    LLMROOF_MEMBER(architecture, "first_dense_layers", moe.first_dense_layers),
    LLMROOF_MEMBER(architecture, "mtp_layers", moe.mtp_layers),
    LLMROOF_MEMBER(architecture, "router_bias", moe.router_bias),
    LLMROOF_MEMBER(architecture, "expert_bias", moe.expert_bias),
    LLMROOF_MEMBER(architecture, "shared_expert_gate", moe.shared_expert_gate),
    {"layer_kinds",
     [](const architecture& a, py::dict& d, const char* k) {
       py::list kinds;
       for (auto x : a.layer_kinds) kinds.append(std::string(to_string(x)));
       d[k] = kinds;
     },
     [](architecture& a, const py::dict& d, const char* k) {
       for (const auto& x : get<std::vector<std::string>>(d, k, {})) a.layer_kinds.push_back(kind_from(x));
     }},
    LLMROOF_MEMBER(architecture, "sliding_window", sliding_window),
    LLMROOF_MEMBER(architecture, "max_context", max_context),
    LLMROOF_MEMBER(architecture, "published_total_b", published_total_b),
    LLMROOF_MEMBER(architecture, "published_active_b", published_active_b),
    LLMROOF_MEMBER(architecture, "aliases", aliases),
    LLMROOF_MEMBER(architecture, "global_kv_heads", global_kv_heads),
    LLMROOF_MEMBER(architecture, "global_head_dim", global_head_dim),
    LLMROOF_MEMBER(architecture, "global_k_is_v", global_k_is_v),
};

const field<device> device_fields[] = {
    LLMROOF_MEMBER(device, "id", id),
    LLMROOF_MEMBER(device, "name", name),
    LLMROOF_MEMBER(device, "vendor", vendor),
    LLMROOF_MEMBER(device, "family", family),
    {"device_class", [](const device& dv, py::dict& d, const char* k) { d[k] = std::string(to_string(dv.klass)); },
     [](device& dv, const py::dict& d, const char* k) {
       if (d.contains(k)) dv.klass = enum_named<device_class>(d, k, device_class_names);
     }},
    LLMROOF_MEMBER(device, "memory_type", memory_type),
    LLMROOF_MEMBER(device, "memory_bytes", memory),
    LLMROOF_MEMBER(device, "bandwidth_bytes_per_s", bandwidth),
    // Peaks in math_format order (published figures; 0 = not published).
    LLMROOF_MEMBER(device, "fp32_flops_per_s", peaks[0]),
    LLMROOF_MEMBER(device, "bf16_flops_per_s", peaks[1]),
    LLMROOF_MEMBER(device, "fp8_flops_per_s", peaks[2]),
    LLMROOF_MEMBER(device, "int8_ops_per_s", peaks[3]),
    LLMROOF_MEMBER(device, "fp4_flops_per_s", peaks[4]),
    LLMROOF_MEMBER(device, "interconnect", interconnect),
    LLMROOF_MEMBER(device, "link_bandwidth_bytes_per_s", link_bandwidth),
    LLMROOF_MEMBER(device, "tdp_w", tdp_w),
    LLMROOF_MEMBER(device, "aliases", aliases),
    LLMROOF_MEMBER(device, "source", source),
};

#undef LLMROOF_MEMBER

template <class S, std::size_t N>
py::dict fields_to_dict(const S& s, const field<S> (&fields)[N]) {
  py::dict d;
  for (const auto& f : fields) f.put(s, d, f.key);
  return d;
}

/// A catalog entry from a dict: unknown keys refused; id "custom", name = id
/// and source "user-defined" unless given; the rest as the struct's defaults.
template <class S, std::size_t N>
S fields_from_dict(const py::dict& d, const char* what, const field<S> (&fields)[N]) {
  reject_unknown(d, what, fields);
  S s;
  s.id = "custom";
  s.source = "user-defined";
  for (const auto& f : fields) f.take(s, d, f.key);
  if (!d.contains("name")) s.name = s.id;
  return s;
}

}  // namespace

py::dict arch_to_dict(const architecture& a) { return fields_to_dict(a, arch_fields); }

architecture arch_from_dict(const py::dict& d) {
  architecture a = fields_from_dict(d, "model", arch_fields);
  // Defaults that follow other fields.
  if (!d.contains("num_kv_heads")) a.num_kv_heads = a.num_heads;
  if (!d.contains("head_dim")) a.head_dim = a.num_heads > 0 ? a.hidden_size / a.num_heads : 0;
  validate(a);
  return a;
}

py::dict device_to_dict(const device& dv) { return fields_to_dict(dv, device_fields); }

device device_from_dict(const py::dict& d) {
  device dv = fields_from_dict(d, "device", device_fields);
  validate(dv);
  return dv;
}

py::object to_python(const report::json& j) {
  if (j.is_object()) {
    py::dict d;
    for (const auto& [k, v] : j.items()) d[py::str(k)] = to_python(v);
    return d;
  }
  if (j.is_array()) {
    py::list l;
    for (const auto& v : j) l.append(to_python(v));
    return l;
  }
  if (j.is_string()) return py::str(j.get<std::string>());
  if (j.is_boolean()) return py::bool_(j.get<bool>());
  if (j.is_number_integer()) return py::int_(j.get<long long>());
  if (j.is_number()) {
    // As the command's JSON prints them: a NaN or an infinity is null.
    const double v = j.get<double>();
    return std::isfinite(v) ? py::object(py::float_(v)) : py::object(py::none());
  }
  return py::none();
}


// A profile's dict is the `efficiency` object of the command's JSON: one
// list of its fields (report/json.cpp).
py::dict profile_to_dict(const efficiency_profile& e) { return to_python(report::efficiency_json(e)); }

efficiency_profile profile_from_dict(const device& dev, const py::object& o, std::string_view engine) {
  efficiency_profile e = default_profile(dev, engine);
  if (o.is_none()) return e;
  if (!py::isinstance<py::dict>(o)) {
    throw py::type_error("efficiency must be a dict or None (got " + std::string(py::str(py::type::of(o).attr("__name__"))) + ")");
  }
  const auto d = o.cast<py::dict>();
  std::vector<std::string> known;
  const report::json fields = report::efficiency_json(e);
  for (const auto& [k, v] : fields.items()) known.push_back(k);
  reject_unknown(d, "efficiency", known);
  e.name = get<std::string>(d, "name", "custom");
  e.memory = get<double>(d, "memory", e.memory);
  e.compute = get<double>(d, "compute", e.compute);
  e.compute_half_rows = get<double>(d, "compute_half_rows", e.compute_half_rows);
  e.attention = get<double>(d, "attention", e.attention);
  e.per_kernel = make_seconds(get<double>(d, "per_kernel_s", e.per_kernel.value()));
  e.per_launch = make_seconds(get<double>(d, "per_launch_s", e.per_launch.value()));
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
  e.prefill_chunk = get<double>(d, "prefill_chunk_tokens", e.prefill_chunk);
  e.per_hop = make_seconds(get<double>(d, "per_hop_s", e.per_hop.value()));
  e.per_sequence = make_seconds(get<double>(d, "per_sequence_s", e.per_sequence.value()));
  e.kv_stream = get<double>(d, "kv_stream", e.kv_stream);
  e.attention_floor = make_seconds(get<double>(d, "attention_floor_s", e.attention_floor.value()));
  e.expert_floor = make_seconds(get<double>(d, "expert_floor_s", e.expert_floor.value()));
  e.low_precision_memory = get<double>(d, "low_precision_memory", e.low_precision_memory);
  e.collective_latency = make_seconds(get<double>(d, "collective_latency_s", e.collective_latency.value()));
  e.source = get<std::string>(d, "source", "user-defined");
  e.points = get<int>(d, "points", 0);
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
  m.def("parse_tokens", [](const std::string& field, const std::string& text) { return parse_token_count(field, text); },
        py::arg("field"), py::arg("text"));
  m.def("format_names", [] { return names_of(formats(), [](const numeric_format& f) { return f.name; }); });
  m.def("names_a_model_file", [](const std::string& s) { return names_a_model_file(s); }, py::arg("name"),
        "Whether a model name is a file to read rather than a catalog id (readers.hpp), as --model decides.");
  m.def("shorthand_note", [](const std::string& s) { return shorthand_note(s); }, py::arg("name"),
        "Which format a shorthand for several reads as (formats.hpp shorthand_note); empty otherwise.");
  m.def("device_ids", [] { return names_of(devices(), [](const device& d) { return d.id; }); });
  m.def("model_ids", [] { return names_of(models(), [](const architecture& a) { return a.id; }); });
  static constexpr string_lookup lookups[] = {
      {"find_format", "name", [](const std::string& s) -> py::object { return format_to_dict(find_format(s)); }},
      {"find_device", "id", [](const std::string& s) -> py::object { return device_to_dict(configured_device(s)); }},
      {"device_from_spec", "spec", [](const std::string& s) -> py::object { return device_to_dict(device_from_spec(s)); }},
      {"parse_custom_device", "spec",
       [](const std::string& s) -> py::object { return device_to_dict(parse_custom_device(s)); }},
      {"read_device_json", "path", [](const std::string& s) -> py::object { return device_to_dict(read_device_json(s)); }},
      {"match_devices", "name", [](const std::string& s) -> py::object { return py::cast(match_devices(s)); }},
      {"match_models", "name", [](const std::string& s) -> py::object { return py::cast(match_models(s)); }},
      {"find_model", "id", [](const std::string& s) -> py::object { return arch_to_dict(find_model(s)); }},
  };
  for (const string_lookup& l : lookups) m.def(l.name, l.fn, py::arg(l.arg));
  // Any mapping (a TypedDict's dict, a mappingproxy), as the stubs say.
  m.def("validate_model", [](const py::object& d) { return arch_to_dict(arch_from_dict(py::dict(d))); },
        py::arg("fields"));
  m.def("validate_device", [](const py::object& d) { return device_to_dict(device_from_dict(py::dict(d))); },
        py::arg("fields"));
  m.def("default_profile", [](const py::dict& dev) { return profile_to_dict(default_profile(device_from_dict(dev))); },
        py::arg("device"));
  m.def(
      "read_model",
      [](const std::string& path) {
        const model_source src = read_model(path);
        py::dict out;
        out["fields"] = arch_to_dict(src.arch);
        out["source"] = to_python(report::model_source_json(src));
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
