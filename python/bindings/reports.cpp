// The command's reports as compiled values (`_core.reports`). A class's
// properties, their Python types and docstrings come from the report's key
// table (report/json.cpp, `keys_of`), so a key is written once, in C++:
// to_dict() is the command's JSON, a list of rows has a `<key>_frame()`, and
// pickling carries the JSON. The stubs (_core/reports.pyi) are generated
// from the same tables (scripts/gen_report_stubs.py; a test checks them).
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "bindings.hpp"

namespace llmroof::python {

namespace {

using report::json;

/// A list of rows as a pandas DataFrame (imported on first use), without
/// the list-valued columns (a fit's residuals).
py::object frame_of(const json& rows) {
  py::list records;
  for (const json& r : rows) {
    py::dict d;
    for (const auto& [k, v] : r.items()) {
      if (!v.is_array()) d[py::str(k)] = to_python(v);
    }
    records.append(d);
  }
  return py::module_::import("pandas").attr("DataFrame")(records);
}

/// The frame method of a rows key: `<key>_frame`; a plan's decode curve is `curve_frame`.
std::string frame_name(std::string_view key) {
  return key == "decode_curve" ? "curve_frame" : std::string(key) + "_frame";
}

std::string fixed(const char* format, double a, double b = 0, double c = 0) {
  char out[96];
  std::snprintf(out, sizeof out, format, a, b, c);
  return out;
}

std::string text(const json& j, const char* key) { return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : ""; }
double number(const json& j, const char* key) { return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0; }

/// Binds a report class: a property per key of `keys`, read through
/// `value(obj, index, key)`; `all(obj)` is the whole JSON.
template <class T, class Value, class All>
void bind_keys(py::class_<T>& cls, std::string_view schema, Value value, All all) {
  const std::vector<report::key_doc>& keys = report::keys_of(schema);
  py::list listed;
  py::list frames;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const report::key_doc k = keys[i];
    const std::string key(k.key);
    listed.append(py::make_tuple(key, std::string(k.type), std::string(k.doc)));
    py::cpp_function get;
    if (k.type == "MemoryPlan") {
      get = py::cpp_function([value, i, key](const T& o) { return memory_from_json(value(o, i, key)); });
    } else if (k.type == "Phase") {
      get = py::cpp_function([value, i, key](const T& o) { return phase_object{std::nullopt, value(o, i, key)}; });
    } else {
      get = py::cpp_function([value, i, key](const T& o) {
        const json v = value(o, i, key);
        return v.is_discarded() ? py::object(py::none()) : to_python(v);
      });
    }
    cls.def_property_readonly(key.c_str(), get, std::string(k.doc).c_str());
    if (k.type == report::rows_type) {
      const std::string name = frame_name(key);
      frames.append(name);
      cls.def(
          name.c_str(), [value, i, key](const T& o) { return frame_of(value(o, i, key)); },
          ("The " + key + " as a pandas DataFrame, one row each.").c_str());
    }
  }
  cls.attr("_keys") = listed;
  cls.attr("_frames") = frames;
  cls.def("to_dict", [all](const T& o) { return to_python(all(o)); }, "The report as the command's JSON (a copy).")
      .def(
          "__getitem__",
          [all](const T& o, const std::string& key) {
            const json j = all(o);
            if (!j.contains(key)) throw py::key_error(key);
            return to_python(j[key]);
          },
          "A key of the command's JSON (to_dict()[key]).")
      .def("__eq__", [all](const T& a, const py::object& b) {
        if (!py::isinstance<T>(b)) return false;
        return all(a) == all(b.cast<const T&>());
      });
  cls.attr("__hash__") = py::none();
}

/// Reads one key of a report held as its JSON.
template <class T>
json key_of(const T& o, std::size_t /*index*/, const std::string& key) {
  return o.j.contains(key) ? o.j[key] : json(json::value_t::discarded);
}

template <class T>
json all_of(const T& o) {
  return o.j;
}

template <class T>
py::class_<T> bind_report(py::module_& m, const char* name, std::string_view schema, const char* doc) {
  py::class_<T> cls(m, name, doc);
  bind_keys(cls, schema, &key_of<T>, &all_of<T>);
  cls.def(py::pickle([](const T& o) { return o.j.dump(); },
                     [](const std::string& state) { return T{json::parse(state)}; }));
  return cls;
}

std::string setup_text(const json& j) {
  return text(j, "model") + " on " + report::thousands(number(j, "devices")) + " x " + text(j, "device") + ", weights " +
         text(j, "weights") + ", KV " + text(j, "kv");
}

std::string against_batch_repr(const char* name, const json& j) {
  const json& rows = j["batches"];
  const std::string span = rows.empty() ? "no batches"
                                        : "batch " + fixed("%g", rows.front()["batch"].get<double>()) + "-" +
                                              fixed("%g", rows.back()["batch"].get<double>());
  return std::string(name) + "(" + text(j, "schema") + ", " + span + " at " + report::thousands(number(j, "context")) + " tokens)";
}

/// A plan as the package prints it: the memory verdict, TTFT and the decode curve.
std::string plan_text(const json& j) {
  constexpr double gib = 1073741824.0;
  const json& m = j["memory"];
  const double users = number(j, "users");
  const std::string at = report::thousands(number(m, "context")) + " tokens";
  const double replicas = number(j["parallel"], "replicas");
  std::string out = "llmroof plan: " + setup_text(j) +
                    (replicas > 1 ? fixed(" (%g replicas, the fullest with ", replicas) +
                                        report::thousands(number(j, "users_per_replica")) +
                                        (number(j, "users_per_replica") == 1 ? " user)" : " users)")
                                  : std::string()) +
                    "\n";
  out += "  KV cache per token: " + report::thousands(number(m, "kv_bytes_per_token")) + " B" +
         report::kv_past_windows_text(number(m, "kv_bytes_per_token"), number(m, "kv_bytes_per_token_past_window")) +
         "; per user at " + at + ": " +
         fixed("%.2f GiB\n", number(m, "kv_bytes_per_sequence") / gib);
  out += fixed("  weights %.2f GiB, KV budget %.2f GiB of %.2f GiB usable\n", number(m, "weight_bytes") / gib,
               number(m, "kv_budget_bytes") / gib, number(m, "usable_bytes") / gib);
  out += fixed("  %g users at ", users) + at +
         (m["fits"].get<bool>() ? std::string(" fit\n")
                                : fixed(" do NOT fit: short by %.2f GiB\n", number(m, "shortfall_bytes") / gib));
  out += "  most users at " + at + fixed(": %g; longest context for %g users: ", number(m, "max_users_at_context"), users) +
         report::thousands(number(m, "max_context_for_users")) + " tokens\n";
  out += "  time to first token (" + report::thousands(number(j, "prompt_tokens")) + " tokens): " +
         fixed("%.1f ms (bound %.1f ms)\n", 1e3 * number(j["ttft"], "estimate_s"), 1e3 * number(j["ttft"], "bound_s"));
  out += "  context   fits  1 user t/s est (bound)   per user est   total est";
  for (const json& pt : j["decode_curve"]) {
    std::string ctx = report::thousands(number(pt, "context"));
    ctx.insert(0, ctx.size() < 7 ? 7 - ctx.size() : 0, ' ');
    out += "\n  " + ctx + (pt["fits"].get<bool>() ? "    yes" : "    no ") +
           fixed("  %8.1f (%6.1f)", number(pt, "single_user_tokens_per_s_estimate"),
                 number(pt, "single_user_tokens_per_s_bound")) +
           fixed("   %12.1f   %9.1f", number(pt, "per_user_tokens_per_s_estimate"),
                 number(pt, "total_tokens_per_s_estimate"));
  }
  return out;
}

/// A comparison as the package prints it: both sides, the table with what a
/// side cannot hold marked, and the conclusion drawn from what both hold
/// (the command's, from the same fields).
std::string compare_text(const json& j) {
  const json &a = j["first"], &b = j["second"];
  const auto label = [&](const json& s) {
    for (const char* k : {"model", "device", "engine", "weights", "kv"}) {
      if (a[k] != b[k]) return k == std::string("device") ? report::thousands(number(s, "devices")) + " x " + text(s, k)
                                                          : k == std::string("kv") ? "KV " + text(s, k) : text(s, k);
    }
    return text(s, "model");
  };
  const std::string na = label(a), nb = label(b);
  std::string out = "llmroof compare: " + na + " vs " + nb + ", every sequence at " +
                    report::thousands(number(j, "context")) + " tokens\n";
  for (const json* s : {&a, &b}) {
    const json& f = (*s)["fit"];
    out += "  " + setup_text(*s) + ": " +
           (f["weights_fit"].get<bool>() ? "fits, KV room for " + report::thousands(number(f, "max_users_at_context")) +
                                               " sequences"
                                         : fixed("does NOT fit, short by %.2f GiB", number(f, "short_bytes") / 1073741824.0)) +
           "\n";
  }
  out += "   batch   " + na + " t/s/user   " + nb + " t/s/user   faster";
  for (const json& r : j["batches"]) {
    const bool ha = r["first_holds"].get<bool>(), hb = r["second_holds"].get<bool>();
    const double ta = number(r, "first_per_user_tokens_per_s_estimate"), tb = number(r, "second_per_user_tokens_per_s_estimate");
    out += fixed("\n  %6g", number(r, "batch")) + fixed("   %9.1f", ta) + (ha ? " " : "*") + fixed("   %9.1f", tb) +
           (hb ? " " : "*") + "   " + (!ha || !hb ? "-" : std::abs(ta - tb) <= 1e-9 * std::max(ta, tb) ? "tie" : ta > tb ? na : nb);
  }
  out += "\n  (* a batch that side does not hold at this context)\n";
  const double held = number(j, "held_batch");
  const json& x = j["held_speed_crossover_batch"];
  if (held == 0) {
    out += "  no conclusion: a side does not fit";
  } else if (!x.is_null() && x.get<double>() <= 1) {
    out += "  " + na + " is not faster than " + nb + " even at batch 1";
  } else if (!x.is_null()) {
    out += "  " + na + " decodes faster per user up to batch " + report::thousands(x.get<double>() - 1) + "; from batch " +
           report::thousands(x.get<double>()) + " on, " + nb + " is as fast or faster";
  } else if (j["speed_crossover_batch"].is_null() && held == number(j["batches"].back(), "batch")) {
    out += "  " + na + " stays faster per user up to batch " + report::thousands(held);
  } else {
    out += "  " + na + " stays faster per user up to batch " + report::thousands(held) + ", the most both hold";
  }
  return out;
}

}  // namespace

void register_reports(py::module_& m) {
  py::class_<phase_object> phase(m, "Phase",
                                 "Time of a decode step or a prefill: bound and estimate, op by op (the `step` of "
                                 "`llmroof decode --json`, the `prefill` of `llmroof prefill --json`).");
  bind_keys(
      phase, "phase",
      [](const phase_object& p, std::size_t i, const std::string& key) {
        if (p.timing) return report::phase_value(*p.timing, i);
        return p.j.contains(key) ? p.j[key] : json(json::value_t::discarded);
      },
      [](const phase_object& p) { return p.timing ? report::phase_json(*p.timing) : p.j; });
  phase
      .def(py::pickle([](const phase_object& p) { return (p.timing ? report::phase_json(*p.timing) : p.j).dump(); },
                      [](const std::string& state) { return phase_object{std::nullopt, json::parse(state)}; }))
      .def("__repr__", [](const phase_object& p) {
        const json j = p.timing ? report::phase_json(*p.timing) : p.j;
        return "Phase(" + text(j, "phase") + ", " + fixed("%g", number(j, "new_tokens")) + " tokens: estimate " +
               fixed("%.2f ms, bound %.2f ms, ", 1e3 * number(j, "estimate_s"), 1e3 * number(j, "bound_s")) +
               text(j, "bottleneck") + "-bound, " + fixed("%.1f tokens/s)", number(j, "tokens_per_s_estimate"));
      });

  bind_report<plan_report>(m, "Plan", "llmroof.plan/1",
                           "A serving plan (`llmroof plan --json`): memory, time to first token, the decode curve, "
                           "what would make it fit, and the load when one is asked for.")
      .def("__repr__", [](const plan_report& p) { return plan_text(p.j); });
  bind_report<users_report>(m, "Users", "llmroof.users/1",
                            "The most users one deployment serves at a tokens/s and a TTFT target (`llmroof users "
                            "--json`): one answer, those users in a closed loop of the stated prompt and output.")
      .def("__repr__", [](const users_report& u) {
        const json& j = u.j;
        return "Users(" + fixed("%g users at %g t/s each, ", number(j, "max_users"), number(j, "min_tokens_per_s_per_user")) +
               report::thousands(number(j, "context")) + " tokens; limit " + text(j, "limit") + ")";
      });
  bind_report<kv_report>(m, "KvCache", "llmroof.kv/1", "KV-cache bytes per token and per sequence, by layer kind (`llmroof kv --json`).")
      .def("__repr__", [](const kv_report& k) {
        const json& j = k.j;
        return "KvCache(" + text(j, "model") + ", " + text(j, "kv") + ": " + report::thousands(number(j, "kv_bytes_per_token")) +
               " B/token, " + fixed("%.2f GiB per sequence at ", number(j, "kv_bytes_per_sequence") / 1073741824.0) +
               report::thousands(number(j, "context")) + " tokens)";
      });
  bind_report<moe_report>(m, "MoeReport", "llmroof.moe/1",
                          "A MoE model against batch beside the dense model of its total size (`llmroof moe --json`): "
                          "experts touched per layer, bytes per step and tokens/s.")
      .def("__repr__", [](const moe_report& r) { return against_batch_repr("MoeReport", r.j); });
  bind_report<comparison_report>(m, "Comparison", "llmroof.compare/1",
                                 "Two models decoding side by side against batch (`llmroof compare --json`).")
      .def("__repr__", [](const comparison_report& r) { return against_batch_repr("Comparison", r.j); })
      .def("__str__", [](const comparison_report& r) { return compare_text(r.j); });
  bind_report<speculative_report>(m, "Speculation", "llmroof.speculative/1",
                                  "Speculative decoding of one deployment (`llmroof speculate --json`): tokens kept "
                                  "per step, draft and verify time, and the speed-up against batch.")
      .def("__repr__", [](const speculative_report& r) {
        const json& j = r.j;
        return "Speculation(" + text(j, "model") + ", " + text(j, "method") + fixed(" k=%g: %.2f tokens per step, ", number(j, "draft_tokens"), number(j, "tokens_per_step")) +
               fixed("%.1f vs %.1f tokens/s per user at batch %g", number(j, "tokens_per_s_per_user"),
                     number(j, "plain_tokens_per_s_per_user"), number(j, "batch")) +
               fixed(", x%.2f)", number(j, "speedup"));
      });
  bind_report<recommend_report>(m, "Recommendation", "llmroof.recommend/1",
                                "What to run (`llmroof recommend --json`): every candidate searched with its figures "
                                "and first reason, the recommended one, the front, the best per device kind and the "
                                "closest misses.")
      .def(
          "frame", [](const recommend_report& r) { return frame_of(r.j["candidates"]); },
          "Every candidate as a pandas DataFrame, one row each (candidates_frame()).")
      .def("__repr__", [](const recommend_report& r) {
        const json& j = r.j;
        std::string best = "nothing meets the targets";
        if (j["best"].is_object()) {
          const json& b = j["best"];
          best = report::thousands(number(b, "devices")) + " x " + text(b, "device") + " (" + text(b, "layout") + ", " +
                 text(b, "engine") + ", weights " + text(b, "weights") + ", KV " + text(b, "kv") +
                 fixed("): %.1f tokens/s per user", number(b, "tokens_per_s_per_user"));
        }
        return "Recommendation(" + fixed("%g candidates: ", number(j, "searched")) + best + ")";
      });
  bind_report<calibration_report>(m, "Calibration", "llmroof.calibrate/1",
                                  "Efficiency profiles fitted to measured points (`llmroof calibrate --json`).")
      .def("__repr__", [](const calibration_report& c) {
        const json& j = c.j;
        return "Calibration(" + text(j, "scope") + ": " + fixed("%g fits of %g points, %g skipped)",
                                                                static_cast<double>(j["fits"].size()),
                                                                number(j, "points"), number(j, "skipped"));
      });

}

}  // namespace llmroof::python
