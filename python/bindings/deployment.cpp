// The deployment (deployment.hpp): resolved once (`Deployment`), answering
// decode and prefill with compiled timings and every report of the command
// about it (same schema, same numbers) as JSON text.
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>

#include "bindings.hpp"
#include "llmroof/readers.hpp"
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
/// nodes, devices_per_node, link, inter_link}; without one, `devices` on one node.
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
  l.nodes = degree("nodes").value_or(1);
  l.devices_per_node = degree("devices_per_node").value_or(devices);
  if (d.contains("link")) l.intra = find_link(d["link"].cast<std::string>());
  if (d.contains("inter_link")) l.inter = find_link(d["inter_link"].cast<std::string>());
  return l;
}

// A resolved deployment: the request's model and device held by value, so
// that the deployment's pointers stay valid for the object's life.
struct context {
  architecture model;
  std::optional<device> dev;  // unset: a question without a device (kv)
  report::setup setup;
  std::optional<roofline> roof;
  std::optional<bytes> stored;  // the file's weight bytes, when the model came from one
  py::tuple args;               // what make() was given (copies): the pickled state

  context() = default;
  context(const context&) = delete;  // `setup` points into this object
  context& operator=(const context&) = delete;
  ~context() = default;

  void need_device() const {
    if (!roof) throw std::invalid_argument("device is required for this question");
  }
  [[nodiscard]] const roofline& roofed() const {
    need_device();
    return *roof;
  }
  [[nodiscard]] scenario scenario_of() const {
    scenario sc;
    sc.engine = setup.engine;
    sc.parallel = setup.parallel;
    sc.stored_weights = stored;
    return sc;
  }
  [[nodiscard]] weights_fit fit(double context_tokens) const {
    need_device();
    return fit_weights(model, setup.pr, *setup.dev, setup.parallel, context_tokens, setup.engine, stored);
  }
  [[nodiscard]] phase_timing decode_step_of(double batch, double context_tokens) const {
    return scenario_decode(model, setup.pr, roofed(), setup.parallel, batch, context_tokens);
  }
  [[nodiscard]] phase_timing prefill_of(double prompt, double cached, double batch) const {
    return setup.devices > 1
               ? prefill_parallel(model, setup.pr, *setup.dev, roofed().efficiency(), setup.parallel, prompt, cached,
                                  512, batch)
               : prefill(model, setup.pr, roofed(), prompt, cached, batch);
  }
};

std::unique_ptr<context> make(const py::dict& model, const py::object& dev, const std::string& weights,
                              const std::string& kv, const py::object& lm_head, int devices, const py::object& profile,
                              const py::object& module_formats, const py::object& parallel, const std::string& engine,
                              const py::object& engine_options, const py::object& source) {
  auto c = std::make_unique<context>();
  c->model = arch_from_dict(model);
  if (!dev.is_none()) c->dev = device_from_dict(dev.cast<py::dict>());
  request q;
  q.model = &c->model;
  q.dev = c->dev ? &*c->dev : nullptr;
  q.layout = layout_from(parallel, devices);
  q.kv = find_format(kv);
  if (module_formats.is_none()) {
    q.weights = find_format(weights);
  } else {
    precision file = precision::of(find_format(weights), *q.kv);
    apply_formats(file, module_formats);
    q.file_formats = file;
  }
  if (!lm_head.is_none()) q.lm_head = find_format(lm_head.cast<std::string>());
  q.engine = engine;
  q.engine_options = overrides_from(engine_options);
  if (!profile.is_none() && c->dev) q.efficiency = profile_from_dict(*c->dev, profile, engine);
  c->setup = resolve(q);
  if (c->dev) c->roof.emplace(c->setup.roof());
  if (!source.is_none()) {
    // The weights as the command counts a file's (loaded_weight_bytes): its
    // tensors' bytes unless other weights were named, else the architecture
    // in the formats used plus the vision tower in 16 bits.
    const auto src = source.cast<py::dict>();
    const bool weights_named = module_formats.is_none();
    const bool tensors = src.contains("tensors") && !src["tensors"].is_none();
    if (tensors && !weights_named) {
      c->stored = make_bytes(src["tensors"]["bytes"].cast<double>());
    } else if (!tensors) {
      const double vision = src.contains("vision_params") ? src["vision_params"].cast<double>() : 0.0;
      c->stored = weight_bytes(c->model, c->setup.pr) + make_bytes(vision * 2.0);
    }
  }
  const auto copy = [](const py::object& o) { return o.is_none() ? o : o.attr("copy")(); };
  c->args = py::make_tuple(copy(model), dev.is_none() ? dev : copy(dev), weights, kv, lm_head, devices, copy(profile),
                           copy(module_formats), copy(parallel), engine, copy(engine_options), copy(source));
  return c;
}

// A pickled deployment is resolved again from what it was made of, so that
// it unpickles under the catalogs and profiles of the reading process.
std::unique_ptr<context> unpickle(const py::tuple& t) {
  if (t.size() != 12) throw std::invalid_argument("Deployment state must hold 12 fields (got " + std::to_string(t.size()) + ")");
  return make(t[0].cast<py::dict>(), t[1], t[2].cast<std::string>(), t[3].cast<std::string>(), t[4], t[5].cast<int>(),
              t[6], t[7], t[8], t[9].cast<std::string>(), t[10], t[11]);
}

std::optional<double> number(const py::object& v) {
  return v.is_none() ? std::nullopt : std::optional<double>(v.cast<double>());
}

std::optional<offload_plan> offload_from(const py::object& offload, const std::string& host, const architecture& a) {
  if (offload.is_none()) return std::nullopt;
  offload_plan op;
  if (py::isinstance<py::str>(offload)) {
    if (offload.cast<std::string>() != "experts") {
      throw std::invalid_argument("offload must be a share of layers in [0, 1] or 'experts' (got '" +
                                  offload.cast<std::string>() + "')");
    }
    op.experts = true;
  } else {
    op.layers = offload.cast<double>();
  }
  op.host = find_device(host);
  validate(op, a);
  return op;
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
    } else {
      throw std::invalid_argument("unknown engine setting '" + key + "'");
    }
  }
  return o;
}

void register_deployment(py::module_& m) {
  py::class_<phase_timing>(m, "PhaseTiming")
      .def_property_readonly("bound_s", [](const phase_timing& p) { return p.bound.value(); })
      .def_property_readonly("estimate_s", [](const phase_timing& p) { return p.estimate.value(); })
      .def_property_readonly("tokens_per_s_bound", [](const phase_timing& p) { return p.tokens_per_s_bound().value(); })
      .def_property_readonly("tokens_per_s_estimate",
                             [](const phase_timing& p) { return p.tokens_per_s_estimate().value(); })
      .def_property_readonly("bytes", [](const phase_timing& p) { return p.counts.total_bytes().value(); })
      .def_property_readonly("flop", [](const phase_timing& p) { return p.counts.total_flop().value(); })
      .def_property_readonly("sequences", [](const phase_timing& p) { return p.counts.sequences; })
      .def_property_readonly("bottleneck", [](const phase_timing& p) { return std::string(to_string(p.limit())); });

  // The deployment, resolved once; every question about it is a method, so
  // the deployment's arguments are written (and checked) in one place.
  py::class_<context>(m, "Deployment")
      .def(py::init(&make), py::arg("model"), py::arg("device"), py::arg("weights"), py::arg("kv"), py::arg("lm_head"),
           py::arg("devices"), py::arg("profile"), py::arg("module_formats"), py::arg("parallel"), py::arg("engine"),
           py::arg("engine_options"), py::arg("source"))
      .def(py::pickle([](const context& c) { return c.args; }, &unpickle))
      .def(
          "decode",
          [](const context& c, double batch, double context_tokens) {
            detail::require_in("batch", batch, 1, 1e9);
            detail::require_in("context", context_tokens, 0, 1e9);
            return c.decode_step_of(batch, context_tokens);
          },
          py::arg("batch"), py::arg("context"))
      .def(
          "prefill",
          [](const context& c, double prompt, double cached, double batch) {
            detail::require_in("prompt", prompt, 1, 1e9);
            detail::require_tokens("cached", cached);
            detail::require_in("batch", batch, 1, 1e9);
            return c.prefill_of(prompt, cached, batch);
          },
          py::arg("prompt"), py::arg("cached"), py::arg("batch"))
      .def(
          "decode_report",
          [](const context& c, double batch, const std::vector<double>& contexts) {
            if (contexts.size() != 1 && c.setup.devices > 1) {
              throw std::invalid_argument("per-sequence contexts need a single device (got " +
                                          std::to_string(c.setup.devices) + ")");
            }
            const phase_timing p = contexts.size() == 1 ? c.decode_step_of(batch, contexts[0])
                                                        : decode_step(c.model, c.setup.pr, c.roofed(), contexts);
            double sum = 0;
            for (double x : contexts) sum += x;
            const double mean = contexts.empty() ? 0 : sum / static_cast<double>(contexts.size());
            return to_python(report::decode_json(c.setup, c.roofed(), p.counts.sequences, mean, p));
          },
          py::arg("batch"), py::arg("contexts"))
      .def(
          "prefill_report",
          [](const context& c, double prompt, double cached, double batch) {
            return to_python(report::prefill_json(c.setup, batch, prompt, cached, c.prefill_of(prompt, cached, batch)));
          },
          py::arg("prompt"), py::arg("cached"), py::arg("batch"))
      .def(
          "kv_report",
          [](const context& c, double context_tokens, double users) {
            detail::require_non_negative("context", context_tokens);
            detail::require_in("users", users, 1, 1e9);
            const kv_breakdown kv = break_down_kv(c.model, c.setup.pr.kv, context_tokens, c.setup.engine.block_tokens);
            return to_python(report::kv_json(c.setup, context_tokens, users, kv));
          },
          py::arg("context"), py::arg("users"))
      .def(
          "memory",
          [](const context& c, double users, double context_tokens) {
            // What plan() finds of memory, alone.
            scenario sc = c.scenario_of();
            sc.users = users;
            sc.context = context_tokens;
            return scenario_memory(c.model, c.setup.pr, c.roofed(), sc);
          },
          py::arg("users"), py::arg("context"))
      .def(
          "plan_report",
          [](const context& c, double users, double context_tokens, double prompt, const py::object& rate, double output,
             double ttft_target, const py::object& offload, const std::string& host, const py::object& concurrency) {
            scenario sc = c.scenario_of();
            sc.users = users;
            sc.context = context_tokens;
            sc.prompt = prompt;
            sc.offload = offload_from(offload, host, c.model);
            const plan_result res = plan(c.model, c.setup.pr, c.roofed(), sc);
            sc.output = output;
            const served_load load = serve_load(c.model, c.setup.pr, c.roofed(), sc, number(rate), number(concurrency),
                                                make_seconds(ttft_target));
            return py::make_tuple(to_python(report::plan_json(c.setup, c.roofed(), res, load, output)), res.memory);
          },
          py::arg("users"), py::arg("context"), py::arg("prompt"), py::arg("rate"), py::arg("output"),
          py::arg("ttft_target"), py::arg("offload"), py::arg("host"), py::arg("concurrency"))
      .def(
          "users_report",
          [](const context& c, double context_tokens, double prompt, double min_tokens_per_s, double ttft_target,
             double output) {
            scenario sc = c.scenario_of();
            sc.context = detail::require_non_negative("context", context_tokens);
            sc.prompt = prompt;
            sc.output = output;
            const users_result u = max_users(c.model, c.setup.pr, c.roofed(), sc,
                                             make_tokens_per_second(min_tokens_per_s), make_seconds(ttft_target));
            return to_python(report::users_json(c.setup, context_tokens, min_tokens_per_s, ttft_target, u, sc.output));
          },
          py::arg("context"), py::arg("prompt"), py::arg("min_tokens_per_s"), py::arg("ttft_target"), py::arg("output"))
      .def(
          "moe_report",
          [](const context& c, double context_tokens, double max_batch) {
            detail::require_non_negative("context", context_tokens);
            const moe_analysis an = analyze_moe(c.model, c.setup.pr, c.roofed(), context_tokens, max_batch, c.setup.parallel);
            return to_python(report::moe_json(c.setup, an, c.fit(context_tokens)));
          },
          py::arg("context"), py::arg("max_batch"))
      .def(
          "compare_report",
          [](const context& a, const context& b, double context_tokens, double max_batch) {
            // Both sides decode on the first's device plan and engine, as the command's compare does.
            b.need_device();
            const model_comparison cmp = compare_decode(a.model, a.setup.pr, b.model, b.setup.pr, a.roofed(),
                                                        context_tokens, max_batch, a.setup.parallel);
            return to_python(report::compare_json(a.setup, b.setup, cmp, a.fit(context_tokens), b.fit(context_tokens)));
          },
          py::arg("other"), py::arg("context"), py::arg("max_batch"));
}

}  // namespace llmroof::python
