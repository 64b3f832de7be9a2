// Estimates: KV cache, decode, prefill, memory plan and plan. Each returns the
// JSON report of the command (same schema, same numbers) as a string.
#include <pybind11/stl.h>

#include <memory>
#include <optional>

#include "bindings.hpp"
#include "llmroof/readers.hpp"
#include "report/json.hpp"

namespace llmroof::python {

namespace {

struct context {
  architecture model;
  device dev;
  report::setup setup;
  std::optional<roofline> roof;
};

engine_settings engine_from(double memory_utilization, int block_tokens) {
  engine_settings e;
  e.memory_utilization = memory_utilization;
  e.block_tokens = block_tokens;
  validate(e);
  return e;
}

numeric_format format_from(const py::handle& spec) {
  const auto d = spec.cast<py::dict>();
  const auto name = d["name"].cast<std::string>();
  for (const auto& f : formats()) {
    if (f.name == name) return f;
  }
  const auto math = d["math"].cast<std::string>();
  math_format m = math_format::bf16;
  for (auto x : {math_format::fp32, math_format::bf16, math_format::fp8, math_format::int8, math_format::fp4}) {
    if (to_string(x) == math) m = x;
  }
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

/// Engine knobs from {memory_utilization, block_tokens, max_num_seqs, max_num_batched_tokens,
/// max_model_len}: only the keys present override the engine's defaults; others are an error.
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

std::unique_ptr<context> make(const py::dict& model, const py::dict& dev, const std::string& weights,
                              const std::string& kv, const py::object& lm_head, int devices,
                              const py::object& profile, const py::object& engine_options = py::none(),
                              const py::object& module_formats = py::none(),
                              const py::object& parallel = py::none(), const std::string& engine = "vllm") {
  auto c = std::make_unique<context>();
  c->model = arch_from_dict(model);
  c->dev = device_from_dict(dev);
  request q;
  q.model = &c->model;
  q.dev = &c->dev;
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
  if (!profile.is_none()) q.efficiency = profile_from_dict(c->dev, profile, engine);
  c->setup = resolve(q);
  c->roof.emplace(c->setup.roof());
  return c;
}

}  // namespace

void register_estimates(py::module_& m) {
  // A resolved deployment that answers repeatedly without re-resolving: the
  // fast path for searches, optimisers and simulators (docs in python/llmroof).
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
  py::class_<context>(m, "Estimator")
      .def(py::init([](const py::dict& model, const py::dict& dev, const std::string& weights, const std::string& kv,
                       const py::object& lm_head, int devices, const py::object& profile,
                       const py::object& module_formats, const py::object& parallel, const std::string& engine) {
             return make(model, dev, weights, kv, lm_head, devices, profile, py::none(), module_formats, parallel,
                         engine);
           }),
           py::arg("model"), py::arg("device"), py::arg("weights"), py::arg("kv"), py::arg("lm_head"),
           py::arg("devices"), py::arg("profile"), py::arg("module_formats"), py::arg("parallel"), py::arg("engine"))
      .def(
          "decode",
          [](const context& c, double batch, double context_tokens) {
            detail::require_in("batch", batch, 1, 1e9);
            detail::require_in("context", context_tokens, 0, 1e9);
            return scenario_decode(c.model, c.setup.pr, *c.roof, c.setup.parallel, batch, context_tokens);
          },
          py::arg("batch"), py::arg("context"))
      .def(
          "prefill",
          [](const context& c, double prompt, double cached, double batch) {
            detail::require_in("prompt", prompt, 1, 1e9);
            detail::require_in("cached", cached, 0, 1e9);
            detail::require_in("batch", batch, 1, 1e9);
            return c.setup.devices > 1 ? prefill_parallel(c.model, c.setup.pr, c.dev, c.roof->efficiency(),
                                                          c.setup.parallel, prompt, cached, 512, batch)
                                       : prefill(c.model, c.setup.pr, *c.roof, prompt, cached, batch);
          },
          py::arg("prompt"), py::arg("cached"), py::arg("batch"))
      .def(
          "decode_report",
          [](const context& c, double batch, double context_tokens) {
            const phase_timing p = scenario_decode(c.model, c.setup.pr, *c.roof, c.setup.parallel, batch, context_tokens);
            return report::decode_json(c.setup, *c.roof, batch, context_tokens, p).dump();
          },
          py::arg("batch"), py::arg("context"));

  m.def(
      "kv_report",
      [](const py::dict& model, const std::string& kv, double context, double users, int block_tokens) {
        const architecture a = arch_from_dict(model);
        report::setup s;
        s.model = &a;
        s.pr = precision::of(find_format("bf16"), find_format(kv));
        s.engine = engine_from(0.9, block_tokens);
        detail::require_non_negative("context", context);
        detail::require_in("users", users, 1, 1e9);
        return report::kv_json(s, context, users, break_down_kv(a, s.pr.kv, context, block_tokens)).dump();
      },
      py::arg("model"), py::arg("kv"), py::arg("context"), py::arg("users"), py::arg("block_tokens"));

  m.def(
      "decode_report",
      [](const py::dict& model, const py::dict& dev, const std::string& weights, const std::string& kv,
         const py::object& lm_head, int devices, const py::object& profile, double batch,
         const std::vector<double>& contexts, const py::object& module_formats, const py::object& parallel,
         const std::string& engine) {
        auto c = make(model, dev, weights, kv, lm_head, devices, profile, py::none(), module_formats, parallel, engine);
        if (contexts.size() != 1 && c->setup.devices > 1) {
          throw std::invalid_argument("per-sequence contexts need a single device (got " +
                                      std::to_string(c->setup.devices) + ")");
        }
        const phase_timing p = contexts.size() == 1
                                   ? scenario_decode(c->model, c->setup.pr, *c->roof, c->setup.parallel, batch, contexts[0])
                                   : decode_step(c->model, c->setup.pr, *c->roof, contexts);
        const double mean = contexts.empty() ? 0 : [&] {
          double s = 0;
          for (double x : contexts) s += x;
          return s / static_cast<double>(contexts.size());
        }();
        return report::decode_json(c->setup, *c->roof, p.counts.sequences, mean, p).dump();
      },
      py::arg("model"), py::arg("device"), py::arg("weights"), py::arg("kv"), py::arg("lm_head"),
      py::arg("devices"), py::arg("profile"), py::arg("batch"), py::arg("contexts"),
      py::arg("module_formats") = py::none(), py::arg("parallel") = py::none(), py::arg("engine") = "vllm");

  m.def(
      "prefill_report",
      [](const py::dict& model, const py::dict& dev, const std::string& weights, const std::string& kv,
         const py::object& lm_head, int devices, const py::object& profile, double batch, double prompt,
         double cached, const py::object& module_formats, const py::object& parallel, const std::string& engine) {
        auto c = make(model, dev, weights, kv, lm_head, devices, profile, py::none(), module_formats, parallel, engine);
        const phase_timing p =
            c->setup.devices > 1
                ? prefill_parallel(c->model, c->setup.pr, c->dev, c->roof->efficiency(), c->setup.parallel, prompt, cached,
                                   512, batch)
                : prefill(c->model, c->setup.pr, *c->roof, prompt, cached, batch);
        return report::prefill_json(c->setup, batch, prompt, cached, p).dump();
      },
      py::arg("model"), py::arg("device"), py::arg("weights"), py::arg("kv"), py::arg("lm_head"),
      py::arg("devices"), py::arg("profile"), py::arg("batch"), py::arg("prompt"), py::arg("cached"),
      py::arg("module_formats") = py::none(), py::arg("parallel") = py::none(), py::arg("engine") = "vllm");

  m.def(
      "plan_report",
      [](const py::dict& model, const py::dict& dev, const std::string& weights, const std::string& kv,
         const py::object& lm_head, int devices, const py::object& profile, double users, double context,
         double prompt, const py::object& engine_options, const py::object& module_formats,
         const py::object& stored_weight_bytes, const py::object& parallel, const std::string& engine,
         const py::object& rate, double output, double ttft_target, const py::object& offload,
         const std::string& host, const py::object& concurrency) {
        auto c = make(model, dev, weights, kv, lm_head, devices, profile, engine_options, module_formats, parallel,
                      engine);
        scenario sc;
        sc.users = users;
        sc.context = context;
        sc.prompt = prompt;
        sc.engine = c->setup.engine;
        sc.parallel = c->setup.parallel;
        if (!stored_weight_bytes.is_none()) sc.stored_weights = make_bytes(stored_weight_bytes.cast<double>());
        if (!offload.is_none()) {
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
          validate(op, c->model);
          sc.offload = op;
        }
        const plan_result res = plan(c->model, c->setup.pr, *c->roof, sc);
        sc.output = output;
        const auto number = [](const py::object& v) {
          return v.is_none() ? std::nullopt : std::optional<double>(v.cast<double>());
        };
        const served_load load =
            serve_load(c->model, c->setup.pr, *c->roof, sc, number(rate), number(concurrency), make_seconds(ttft_target));
        return report::plan_json(c->setup, *c->roof, res, load, output).dump();
      },
      py::arg("model"), py::arg("device"), py::arg("weights"), py::arg("kv"), py::arg("lm_head"),
      py::arg("devices"), py::arg("profile"), py::arg("users"), py::arg("context"), py::arg("prompt"),
      py::arg("engine_options"), py::arg("module_formats") = py::none(),
      py::arg("stored_weight_bytes") = py::none(), py::arg("parallel") = py::none(), py::arg("engine") = "vllm",
      py::arg("rate") = py::none(), py::arg("output") = 512.0, py::arg("ttft_target") = 1.0,
      py::arg("offload") = py::none(), py::arg("host") = "ryzen-9-7950x", py::arg("concurrency") = py::none());

  m.def(
      "users_report",
      [](const py::dict& model, const py::dict& dev, const std::string& weights, const std::string& kv, int devices,
         const py::object& profile, double context, double prompt, double min_tokens_per_s, double ttft_target,
         const py::object& module_formats, const py::object& stored_weight_bytes, const py::object& parallel,
         const std::string& engine, const py::object& engine_options, double output) {
        auto c = make(model, dev, weights, kv, py::none(), devices, profile, engine_options, module_formats, parallel,
                      engine);
        scenario sc;
        sc.context = detail::require_non_negative("context", context);
        sc.prompt = prompt;
        sc.output = output;
        sc.engine = c->setup.engine;
        sc.parallel = c->setup.parallel;
        if (!stored_weight_bytes.is_none()) sc.stored_weights = make_bytes(stored_weight_bytes.cast<double>());
        const users_result u = max_users(c->model, c->setup.pr, *c->roof, sc, make_tokens_per_second(min_tokens_per_s),
                                         make_seconds(ttft_target));
        return report::users_json(c->setup, context, min_tokens_per_s, ttft_target, u, sc.output).dump();
      },
      py::arg("model"), py::arg("device"), py::arg("weights"), py::arg("kv"), py::arg("devices"), py::arg("profile"),
      py::arg("context"), py::arg("prompt"), py::arg("min_tokens_per_s"), py::arg("ttft_target"),
      py::arg("module_formats") = py::none(), py::arg("stored_weight_bytes") = py::none(),
      py::arg("parallel") = py::none(), py::arg("engine") = "vllm", py::arg("engine_options") = py::none(),
      py::arg("output") = 512.0);

  m.def(
      "moe_report",
      [](const py::dict& model, const py::dict& dev, const std::string& weights, const std::string& kv,
         int devices, const py::object& profile, double context, double max_batch, const py::object& module_formats,
         const py::object& parallel, const std::string& engine) {
        auto c = make(model, dev, weights, kv, py::none(), devices, profile, py::none(), module_formats, parallel, engine);
        detail::require_non_negative("context", context);
        const moe_analysis an = analyze_moe(*c->setup.model, c->setup.pr, *c->roof, context, max_batch, c->setup.parallel);
        return report::moe_json(c->setup, an, c->setup.fit(context)).dump();
      },
      py::arg("model"), py::arg("device"), py::arg("weights"), py::arg("kv"), py::arg("devices"),
      py::arg("profile"), py::arg("context"), py::arg("max_batch"), py::arg("module_formats") = py::none(),
      py::arg("parallel") = py::none(), py::arg("engine") = "vllm");

  m.def("moe_table_report", [] { return report::moe_table_json(moe_catalog()).dump(); });

  m.def(
      "compare_report",
      [](const py::dict& first, const py::dict& second, const py::dict& dev, const std::string& weights_first,
         const std::string& weights_second, const std::string& kv, int devices, const py::object& profile,
         double context, double max_batch, const py::object& parallel, const std::string& engine) {
        auto a = make(first, dev, weights_first, kv, py::none(), devices, profile, py::none(), py::none(), parallel, engine);
        auto b = make(second, dev, weights_second, kv, py::none(), devices, profile, py::none(), py::none(), parallel, engine);
        const model_comparison cmp = compare_decode(*a->setup.model, a->setup.pr, *b->setup.model, b->setup.pr, *a->roof,
                                                    context, max_batch, a->setup.parallel);
        return report::compare_json(a->setup, b->setup, cmp, a->setup.fit(context), b->setup.fit(context)).dump();
      },
      py::arg("first"), py::arg("second"), py::arg("device"), py::arg("weights_first"),
      py::arg("weights_second"), py::arg("kv"), py::arg("devices"), py::arg("profile"), py::arg("context"),
      py::arg("max_batch"), py::arg("parallel") = py::none(), py::arg("engine") = "vllm");

  m.def(
      "simulate_routing",
      [](const std::vector<double>& popularity, int experts_per_token, int tokens, int trials, std::uint64_t seed,
         int ranks) {
        const routing_sample r = simulate_routing(popularity, experts_per_token, tokens, trials, seed, ranks);
        py::dict d;
        d["mean_distinct"] = r.mean_distinct;
        d["variance_distinct"] = r.variance_distinct;
        d["mean_busiest_rank_tokens"] = r.mean_busiest_rank_tokens;
        d["mean_busiest_rank_experts"] = r.mean_busiest_rank_experts;
        return d;
      },
      py::arg("popularity"), py::arg("experts_per_token"), py::arg("tokens"), py::arg("trials"), py::arg("seed"),
      py::arg("ranks"));

  m.def("expected_distinct_experts_skewed",
        py::overload_cast<const std::vector<double>&, int, double>(&expected_distinct_experts),
        py::arg("popularity"), py::arg("experts_per_token"), py::arg("tokens"));
  m.def("zipf_popularity", &zipf_popularity, py::arg("num_experts"), py::arg("alpha"));

  m.def(
      "calibrate_report",
      [](const std::string& path, const std::string& scope) {
        const profile_scope sc = scope_from_name(scope);
        const measurement_set set = read_measurements(path);
        return report::calibrate_json(set, sc, fit_profiles(set.rows, sc)).dump();
      },
      py::arg("path"), py::arg("scope"));

  m.def(
      "validate_report",
      [](const std::string& path, bool refit) {
        const measurement_set set = read_measurements(path);
        if (set.rows.empty()) throw std::invalid_argument(path + ": no row could be mapped (see calibrate's skipped rows)");
        return report::validate_json(set, validate(set.rows, refit), refit).dump();
      },
      py::arg("path"), py::arg("refit"));

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

  m.def("expected_distinct_experts",
        py::overload_cast<int, int, double>(&expected_distinct_experts), py::arg("num_experts"),
        py::arg("experts_per_token"), py::arg("tokens"));
}

}  // namespace llmroof::python
