// The deployment (deployment.hpp): resolved once (`Deployment`), answering
// decode and prefill with compiled timings and every report of the command
// about it (same schema, same numbers) as JSON text.
#include <pybind11/stl.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "bindings.hpp"
#include "llmroof/model/readers.hpp"
#include "report/json.hpp"

namespace llmroof::python {

namespace {

numeric_format format_from(const py::handle& spec) {
  const auto d = spec.cast<py::dict>();
  const auto name = d["name"].cast<std::string>();
  for (const auto& f : formats()) {
    if (f.name == name) return f;
  }
  const auto math = d["math"].cast<std::string>();
  const auto m = detail::enum_from_name<math_format>(math, math_format_names).value_or(math_format::bf16);
  return make_format(name, d["bits"].cast<double>(), m, "from a model file");
}

/// Per-module formats of a model read from a file ({"attention": {name, bits,
/// math}, ...}), applied when the caller named no weight format.
void apply_formats(precision& pr, const py::object& module_formats) {
  if (module_formats.is_none()) return;
  const auto d = module_formats.cast<py::dict>();
  if (d.contains("weights")) pr.weights = format_from(d["weights"]);
  if (d.contains("attention")) pr.attention = format_from(d["attention"]);
  if (d.contains("ffn")) pr.ffn = format_from(d["ffn"]);
  if (d.contains("experts")) pr.experts = format_from(d["experts"]);
  if (d.contains("embedding")) pr.embedding = format_from(d["embedding"]);
  if (d.contains("lm_head")) pr.lm_head = format_from(d["lm_head"]);
}

/// A layout from {tp, pp, ep (None or int: unset degrees are inferred),
/// dp_attention, nodes, devices_per_node, link, inter_link}; without one, `devices` on one node.
layout_request layout_from(const py::object& spec, int devices) {
  layout_request l;
  l.devices_per_node = devices;  // as the command's --device ID:N
  if (spec.is_none()) return l;
  const auto d = spec.cast<py::dict>();
  const auto degree = [&](const char* k) -> std::optional<int> {
    if (!d.contains(k) || d[k].is_none()) return std::nullopt;
    return d[k].cast<int>();
  };
  l.tp = degree("tp");
  l.pp = degree("pp");
  l.ep = degree("ep");
  l.dp_attention = d.contains("dp_attention") && d["dp_attention"].cast<bool>();
  l.nodes = degree("nodes").value_or(1);
  l.devices_per_node = degree("devices_per_node").value_or(devices);
  if (d.contains("link")) l.intra = find_link(d["link"].cast<std::string>());
  if (d.contains("inter_link")) l.inter = find_link(d["inter_link"].cast<std::string>());
  return l;
}

// A resolved deployment (it owns its values) and what it was made of.
struct context {
  deployment setup;
  py::tuple args;  // what make() was given (copies): the pickled state
};

/// The file a model came from, as the Python Model holds it (the command's
/// `model_source` JSON, report::model_source_json): the stored weights
/// resolve() counts, and what the reports print of it.
model_source source_from(const py::dict& src, const architecture& a, const precision& file) {
  model_source m;
  m.arch = a;
  m.pr = file;
  const auto has = [&](const char* k) { return src.contains(k) && !src[k].is_none(); };
  if (has("formats")) {  // the file's own formats, whatever the request re-quantizes them to
    const py::object formats = src["formats"];
    apply_formats(m.pr, formats);
    if (formats.cast<py::dict>().contains("kv")) m.pr.kv = format_from(formats["kv"]);
  }
  if (has("path")) m.path = src["path"].cast<std::string>();
  if (has("quantized")) m.quantized = src["quantized"].cast<bool>();
  if (has("vision_params")) m.vision_params = src["vision_params"].cast<double>();
  if (has("warnings")) m.warnings = src["warnings"].cast<std::vector<std::string>>();
  if (has("tensors")) {
    const auto t = src["tensors"].cast<py::dict>();
    tensor_inventory inv;
    if (t.contains("count")) inv.tensors = t["count"].cast<std::size_t>();
    if (t.contains("by_component")) {
      for (const auto& [k, v] : t["by_component"].cast<py::dict>()) {
        const component c =
            detail::enum_from_name<component>(k.cast<std::string>(), component_names).value_or(component::other);
        inv.bytes[c] += v["bytes"].cast<double>();
        inv.elements[c] += v["elements"].cast<double>();
      }
    } else if (t.contains("bytes")) {
      inv.bytes[component::other] = t["bytes"].cast<double>();
    }
    if (t.contains("by_type")) {
      for (const auto& [k, v] : t["by_type"].cast<py::dict>()) {
        inv.bytes_by_type[k.cast<std::string>()] = v["bytes"].cast<double>();
        inv.elements_by_type[k.cast<std::string>()] = v["elements"].cast<double>();
      }
    }
    m.tensors = inv;
  }
  return m;
}

std::unique_ptr<context> make(const py::dict& model, const py::object& dev, const std::string& weights,
                              const std::string& kv, const py::object& lm_head, int devices, const py::object& profile,
                              const py::object& module_formats, const py::object& parallel, const std::string& engine,
                              const py::object& engine_options, const py::object& source, const std::string& name) {
  const architecture a = arch_from_dict(model);
  std::optional<device> d;
  if (!dev.is_none()) d = device_from_dict(dev.cast<py::dict>());
  request q;
  q.model = &a;
  q.name = name;
  q.dev = d ? &*d : nullptr;
  q.layout = layout_from(parallel, devices);
  q.kv = find_format(kv);
  // No weight format named: resolve() decides (the published checkpoint's, else bf16).
  precision file = precision::of(find_format(weights.empty() ? "bf16" : weights), *q.kv);
  if (module_formats.is_none()) {
    if (!weights.empty()) q.weights = find_format(weights);
  } else {
    apply_formats(file, module_formats);
    q.file_formats = file;
  }
  std::optional<model_source> src;
  if (!source.is_none()) {
    src = source_from(source.cast<py::dict>(), a, file);
    q.source = &*src;
  }
  if (!lm_head.is_none()) q.lm_head = find_format(lm_head.cast<std::string>());
  q.engine = engine;
  q.engine_options = overrides_from(engine_options);
  if (!profile.is_none() && d) q.efficiency = profile_from_dict(*d, profile, engine.empty() ? default_engine_for(*d) : engine);
  deployment resolved = resolve(q);
  const auto copy = [](const py::object& o) { return o.is_none() ? o : o.attr("copy")(); };
  return std::make_unique<context>(context{
      std::move(resolved), py::make_tuple(copy(model), dev.is_none() ? dev : copy(dev), weights, kv, lm_head, devices,
                                 copy(profile), copy(module_formats), copy(parallel), engine, copy(engine_options),
                                 copy(source), name)});
}

// A pickled deployment is resolved again from what it was made of, so that
// it unpickles under the catalogs and profiles of the reading process.
std::unique_ptr<context> unpickle(const py::tuple& t) {
  if (t.size() != 13) throw std::invalid_argument("Deployment state must hold 13 fields (got " + std::to_string(t.size()) + ")");
  return make(t[0].cast<py::dict>(), t[1], t[2].cast<std::string>(), t[3].cast<std::string>(), t[4], t[5].cast<int>(),
              t[6], t[7], t[8], t[9].cast<std::string>(), t[10], t[11], t[12].cast<std::string>());
}

std::optional<double> number(const py::object& v) {
  return v.is_none() ? std::nullopt : std::optional<double>(v.cast<double>());
}

/// The offload host: a catalog id, or a device's fields (a custom or JSON
/// device, as the command's --host takes).
device host_from(const py::object& host) {
  return py::isinstance<py::str>(host) ? find_device(host.cast<std::string>()) : device_from_dict(host.cast<py::dict>());
}

std::optional<offload_plan> offload_from(const py::object& offload, const py::object& host) {
  if (offload.is_none()) return std::nullopt;
  offload_plan op;
  if (py::isinstance<py::str>(offload)) {
    if (offload.cast<std::string>() != "experts") {
      throw std::invalid_argument("offload must be a share of layers in [0, 1], 'experts' or 'auto' (got '" +
                                  offload.cast<std::string>() + "')");
    }
    op.experts = true;
  } else {
    op.layers = offload.cast<double>();
  }
  op.host = host_from(host);
  return op;
}

/// A price from Python's keywords (None: price{}'s default, or no price).
price price_from(const py::object& per_hour, const py::object& purchase, const py::object& years,
                 const py::object& electricity, const py::object& pue) {
  price p;
  p.per_device_hour = number(per_hour);
  p.purchase = number(purchase);
  p.years = number(years);
  p.electricity_kwh = number(electricity);
  p.pue = number(pue);
  return p;
}

}  // namespace

const deployment& deployment_of(const py::handle& compiled) { return compiled.cast<const context&>().setup; }

namespace {

// A speculation as speculate() and plan(speculative=) take it: the draft a compiled deployment.
speculation speculation_from(const std::string& method, int draft_tokens, const std::vector<double>& acceptance,
                             const py::object& draft) {
  speculation spec;
  spec.method = parse_spec_method(method);
  spec.draft_tokens = draft_tokens;
  spec.acceptance = acceptance;
  if (!draft.is_none()) {
    const deployment& dd = deployment_of(draft);
    spec.draft = dd.model;
    spec.draft_pr = dd.pr;
  }
  return spec;
}

// plan(speculative=) and users(speculative=): none when no method is given.
std::optional<speculation> speculation_arg(const py::object& method, int draft_tokens,
                                           const std::vector<double>& acceptance, const py::object& draft) {
  if (method.is_none()) return std::nullopt;
  return speculation_from(method.cast<std::string>(), draft_tokens, acceptance, draft);
}

}  // namespace

engine_overrides overrides_from(const py::object& spec) {
  engine_overrides o;
  if (spec.is_none()) return o;
  for (const auto& [k, v] : spec.cast<py::dict>()) {
    const auto key = k.cast<std::string>();
    if (v.is_none()) continue;
    if (key == "memory_utilization") {
      o.memory_utilization = v.cast<double>();
    } else if (key == "block_tokens") {
      o.block_tokens = v.cast<int>();
    } else if (key == "max_num_seqs") {
      o.max_sequences = v.cast<double>();
    } else if (key == "max_num_batched_tokens") {
      o.max_batched_tokens = v.cast<double>();
    } else if (key == "max_model_len") {
      o.max_model_len = v.cast<double>();
    } else if (key == "prefix_caching") {
      o.prefix_caching = v.cast<bool>();
    } else {
      throw std::invalid_argument("unknown engine setting '" + key + "'");
    }
  }
  return o;
}

namespace {

workload workload_from(double users, double context_tokens, double prompt, double output, double prefix,
                       const py::object& prefix_hit, const std::string& arrivals) {
  workload w;
  w.users = users;
  w.context = context_tokens;
  w.prompt = prompt;
  w.output = output;
  w.prefix = prefix;
  w.prefix_hit = number(prefix_hit);
  w.arrivals = parse_arrival_pattern(arrivals);
  return w;
}

// The jobs' questions (jobs/plan_job.hpp, jobs/users_job.hpp), built from
// keywords only: what the command's options of the job say, spelled as
// Python's keywords (checked and defaulted by the llmroof package).
void register_requests(py::module_& m) {
  py::class_<plan_request>(m, "PlanRequest", "What the plan job is asked (jobs/plan_job.hpp).")
      .def(py::init([](double users, double context_tokens, double prompt, double output, double prefix,
                       const py::object& prefix_hit, const std::string& arrivals, const py::object& rate,
                       const py::object& concurrency, double ttft_target, const py::object& burst,
                       const std::string& burst_lengths, const py::object& offload, const py::object& host,
                       const py::object& price_per_hour, const py::object& purchase, const py::object& years,
                       const py::object& electricity, const py::object& pue, const py::object& pd,
                       const py::object& min_tokens_per_s, const py::object& kv_link,
                       const py::object& kv_link_efficiency, bool kv_overlap, const py::object& spec_method,
                       int draft_tokens, const std::vector<double>& acceptance, const py::object& draft) {
             plan_request q;
             q.work = workload_from(users, context_tokens, prompt, output, prefix, prefix_hit, arrivals);
             q.rate = number(rate);
             q.concurrency = number(concurrency);
             q.ttft_target = make_seconds(ttft_target);
             q.burst = number(burst);
             q.burst_lengths = parse_length_spread(burst_lengths);
             // "auto": the fewest layers in host RAM that hold the workload, as --offload auto.
             if (py::isinstance<py::str>(offload) && offload.cast<std::string>() == "auto") {
               q.offload_auto = true;
               q.offload_host = host_from(host);
             } else {
               q.offload = offload_from(offload, host);
             }
             q.cost = price_from(price_per_hour, purchase, years, electricity, pue);
             if (!pd.is_none()) {
               pd_request r;
               if (!py::isinstance<py::str>(pd)) r.devices = pd.cast<int>();
               else if (pd.cast<std::string>() != "auto") throw std::invalid_argument("pd must be 'auto' or a device count");
               r.min_tokens_per_s = number(min_tokens_per_s);
               if (!kv_link.is_none()) r.kv_link = find_link(kv_link.cast<std::string>());
               r.kv_link_efficiency = number(kv_link_efficiency);
               r.kv_overlap = kv_overlap;
               q.pd = r;
             } else if (!min_tokens_per_s.is_none() || !kv_link.is_none() || !kv_link_efficiency.is_none() || kv_overlap) {
               throw std::invalid_argument("min_tokens_per_s, kv_link, kv_link_efficiency and kv_overlap need pd");
             }
             q.spec = speculation_arg(spec_method, draft_tokens, acceptance, draft);
             return q;
           }),
           py::kw_only(), py::arg("users"), py::arg("context"), py::arg("prompt"), py::arg("output"),
           py::arg("prefix"), py::arg("prefix_hit"), py::arg("arrivals"), py::arg("rate"), py::arg("concurrency"),
           py::arg("ttft_target_s"), py::arg("burst"), py::arg("burst_lengths"), py::arg("offload"), py::arg("host"),
           py::arg("price_per_hour"), py::arg("purchase"), py::arg("years"), py::arg("electricity"), py::arg("pue"),
           py::arg("pd"), py::arg("min_tokens_per_s"), py::arg("kv_link"), py::arg("kv_link_efficiency"),
           py::arg("kv_overlap"), py::arg("spec_method"), py::arg("draft_tokens"), py::arg("acceptance"),
           py::arg("draft"));
  py::class_<users_request>(m, "UsersRequest", "What the users job is asked (jobs/users_job.hpp).")
      .def(py::init([](double context_tokens, double prompt, double output, double prefix, const py::object& prefix_hit,
                       const std::string& arrivals, double min_tokens_per_s, double ttft_target,
                       const py::object& price_per_hour, const py::object& purchase, const py::object& years,
                       const py::object& electricity, const py::object& pue, const py::object& spec_method,
                       int draft_tokens, const std::vector<double>& acceptance, const py::object& draft) {
             users_request q;
             q.work = workload_from(1, detail::require_non_negative("context", context_tokens), prompt, output, prefix,
                                    prefix_hit, arrivals);
             q.min_tokens_per_s = min_tokens_per_s;
             q.ttft_target_s = ttft_target;
             q.cost = price_from(price_per_hour, purchase, years, electricity, pue);
             q.spec = speculation_arg(spec_method, draft_tokens, acceptance, draft);
             return q;
           }),
           py::kw_only(), py::arg("context"), py::arg("prompt"), py::arg("output"), py::arg("prefix"),
           py::arg("prefix_hit"), py::arg("arrivals"), py::arg("min_tokens_per_s"), py::arg("ttft_target_s"),
           py::arg("price_per_hour"), py::arg("purchase"), py::arg("years"), py::arg("electricity"), py::arg("pue"),
           py::arg("spec_method"), py::arg("draft_tokens"), py::arg("acceptance"), py::arg("draft"));
}

}  // namespace

void register_deployment(py::module_& m) {
  // The most requests a simulated burst takes (load_model.hpp), for the Python
  // layer's own check of `burst` before the call.
  m.attr("max_burst_requests") = static_cast<long long>(llmroof::max_burst_requests);
  register_requests(m);
  // The deployment, resolved once; every question about it is a method, so
  // the deployment's arguments are written (and checked) in one place.
  py::class_<context>(m, "Deployment")
      .def(py::init(&make), py::arg("model"), py::arg("device"), py::arg("weights"), py::arg("kv"), py::arg("lm_head"),
           py::arg("devices"), py::arg("profile"), py::arg("module_formats"), py::arg("parallel"), py::arg("engine"),
           py::arg("engine_options"), py::arg("source"), py::arg("name"))
      .def(py::pickle([](const context& c) { return c.args; }, &unpickle))
      .def_property_readonly("weights", [](const context& c) { return std::string(c.setup.pr.weights.name); })
      .def_property_readonly("formats_from", [](const context& c) { return c.setup.formats_from; })
      .def(
          "decode",
          [](const context& c, double batch, double context_tokens) {
            detail::require_in("batch", batch, 1, 1e9);
            detail::require_in("context", context_tokens, 0, 1e9);
            return phase_object{c.setup.decode(batch, context_tokens), {}};
          },
          py::arg("batch"), py::arg("context"))
      .def(
          "prefill",
          [](const context& c, double prompt, double cached, double batch) {
            detail::require_in("prompt", prompt, 1, 1e9);
            detail::require_tokens("cached", cached);
            detail::require_in("batch", batch, 1, 1e9);
            return phase_object{c.setup.prefill(prompt, cached, batch), {}};
          },
          py::arg("prompt"), py::arg("cached"), py::arg("batch"))
      .def(
          "decode_sequences",
          [](const context& c, const std::vector<double>& contexts) {
            // One step of sequences holding different contexts (one device: the ragged batch is not split).
            const deployment& d = c.setup;
            if (d.devices() > 1) {
              throw std::invalid_argument("per-sequence contexts need a single device (got " +
                                          std::to_string(d.devices()) + ")");
            }
            return phase_object{decode_step(d.model, d.pr, d.roof(), contexts), {}};
          },
          py::arg("contexts"))
      .def(
          "kv_report",
          [](const context& c, double context_tokens, double users) {
            detail::require_non_negative("context", context_tokens);
            detail::require_in("users", users, 1, 1e9);
            const kv_breakdown kv = break_down_kv(c.setup.model, c.setup.pr.kv, context_tokens, c.setup.engine.block_tokens);
            return kv_report{report::kv_json(c.setup, context_tokens, users, kv)};
          },
          py::arg("context"), py::arg("users"))
      .def(
          "memory",
          [](const context& c, double users, double context_tokens) {
            // What plan() finds of memory, alone.
            workload w;
            w.users = users;
            w.context = context_tokens;
            validate(w);
            return c.setup.memory(users, context_tokens);
          },
          py::arg("users"), py::arg("context"))
      .def(
          "plan",
          [](const context& c, const plan_request& q) { return plan_report{report::plan_json(answer(c.setup, q))}; },
          py::arg("request"), "The plan job's answer to a PlanRequest (llmroof plan --json).")
      .def(
          "speculate_report",
          [](const context& c, const std::string& method, int draft_tokens, const std::vector<double>& acceptance,
             const py::object& draft, double batch, double context_tokens, double max_batch) {
            detail::require_in("batch", batch, 1, 1e9);
            detail::require_tokens("context", context_tokens);
            const speculation spec = speculation_from(method, draft_tokens, acceptance, draft);
            const speculative_table t = speculate_against_batch(c.setup, spec, batch, context_tokens, max_batch);
            return speculative_report{report::speculative_json(c.setup, spec, t)};
          },
          py::arg("method"), py::arg("draft_tokens"), py::arg("acceptance"), py::arg("draft"), py::arg("batch"),
          py::arg("context"), py::arg("max_batch"))
      .def(
          "users",
          [](const context& c, const users_request& q) { return users_report{report::users_json(answer(c.setup, q))}; },
          py::arg("request"), "The users job's answer to a UsersRequest (llmroof users --json).")
      .def(
          "moe_report",
          [](const context& c, double context_tokens, double max_batch) {
            detail::require_non_negative("context", context_tokens);
            const moe_analysis an = analyze_moe(c.setup, context_tokens, max_batch);
            return moe_report{report::moe_json(c.setup, an, c.setup.fit(context_tokens))};
          },
          py::arg("context"), py::arg("max_batch"))
      .def(
          "compare_report",
          [](const context& a, const context& b, double context_tokens, double max_batch) {
            const deployment second = compared_side(a.setup, b.setup);
            const model_comparison cmp = compare_deployments(a.setup, second, context_tokens, max_batch);
            return comparison_report{report::compare_json(a.setup, second, cmp)};
          },
          py::arg("other"), py::arg("context"), py::arg("max_batch"));
}

}  // namespace llmroof::python
