// The memory plan as a compiled value: typed properties named as the
// command's JSON `memory` object, that JSON as a dict (to_dict), and pickling through
// its fields.
#include <cstdio>
#include <string>
#include <type_traits>

#include "bindings.hpp"
#include "report/json.hpp"

namespace llmroof::python {

namespace {

/// A stored field of memory_plan as Python sees it: its name in the
/// command's JSON, read as a number (bools and counts too), written back
/// from one; `flag` fields are bools in Python.
struct plan_field {
  const char* key;
  double (*get)(const memory_plan& p);
  void (*set)(memory_plan& p, double v);
  bool flag;
};

template <class T>
double as_number(const T& x) {
  if constexpr (requires { x.value(); }) return x.value();
  else return static_cast<double>(x);
}

template <class T>
void assign(T& x, double v) {
  if constexpr (requires { x.value(); }) x = T::from_value(v);
  else if constexpr (std::is_same_v<T, bool>) x = v != 0;
  else x = static_cast<T>(v);
}

#define LLMROOF_PLAN_FIELD(key, member)                                                   \
  plan_field {                                                                             \
    key, [](const memory_plan& p) { return as_number(p.member); },                        \
        [](memory_plan& p, double v) { assign(p.member, v); },                             \
        std::is_same_v<decltype(memory_plan::member), bool>                                \
  }

// Every stored field once: the properties, the pickled state and its order.
const plan_field plan_fields[] = {
    LLMROOF_PLAN_FIELD("devices", devices),
    LLMROOF_PLAN_FIELD("device_memory_bytes", device_memory),
    LLMROOF_PLAN_FIELD("capacity_bytes", capacity),
    LLMROOF_PLAN_FIELD("usable_bytes", usable),
    LLMROOF_PLAN_FIELD("weight_bytes", weights),
    LLMROOF_PLAN_FIELD("reserve_bytes", reserve),
    LLMROOF_PLAN_FIELD("activation_bytes", activations),
    LLMROOF_PLAN_FIELD("kv_budget_bytes", kv_budget),
    LLMROOF_PLAN_FIELD("kv_bytes_per_token", kv_per_token),
    LLMROOF_PLAN_FIELD("kv_bytes_per_token_past_window", kv_per_token_past_window),
    LLMROOF_PLAN_FIELD("kv_bytes_per_sequence", kv_per_sequence),
    LLMROOF_PLAN_FIELD("kv_bytes_needed", kv_needed),
    LLMROOF_PLAN_FIELD("shared_prefix_tokens", shared_tokens),
    LLMROOF_PLAN_FIELD("kv_shared_bytes", kv_shared),
    LLMROOF_PLAN_FIELD("users", users),
    LLMROOF_PLAN_FIELD("context", context),
    LLMROOF_PLAN_FIELD("weights_fit", weights_fit),
    LLMROOF_PLAN_FIELD("fits", fits),
    LLMROOF_PLAN_FIELD("max_users_at_context", max_sequences),
    LLMROOF_PLAN_FIELD("max_context_for_users", max_context),
    LLMROOF_PLAN_FIELD("kv_blocks", kv_blocks),
    LLMROOF_PLAN_FIELD("kv_tokens", kv_tokens),
    LLMROOF_PLAN_FIELD("max_model_len", max_model_len),
    LLMROOF_PLAN_FIELD("max_concurrency", max_concurrency),
    LLMROOF_PLAN_FIELD("starts", starts),
    LLMROOF_PLAN_FIELD("longest_start_context", longest_start),
};

#undef LLMROOF_PLAN_FIELD

}  // namespace

memory_plan memory_from_json(const report::json& j) {
  memory_plan p;
  for (const plan_field& f : plan_fields) {
    const report::json& v = j.at(f.key);
    f.set(p, v.is_boolean() ? double(v.get<bool>()) : v.get<double>());
  }
  return p;
}

void register_memory_plan(py::module_& m) {
  py::class_<memory_plan> cls(m, "MemoryPlan",
                              "Weights, KV cache, activations and reserve against usable memory, bytes per device "
                              "(the `memory` object of `llmroof plan --json`).");
  for (const plan_field& f : plan_fields) {
    cls.def_property_readonly(f.key, [f](const memory_plan& p) -> py::object {
      const double v = f.get(p);
      if (f.flag) return py::bool_(v != 0);
      return py::float_(v);
    });
  }
  // Derived as the command's JSON derives them (report::memory_json).
  cls.def_property_readonly("memory_utilization", [](const memory_plan& p) {
        return p.capacity.value() > 0 ? p.usable.value() / p.capacity.value() : 0.0;
      })
      .def_property_readonly("shortfall_bytes", [](const memory_plan& p) { return p.shortfall().value(); })
      .def_property_readonly("headroom_bytes", [](const memory_plan& p) { return p.headroom().value(); })
      .def("to_dict", [](const memory_plan& p) { return to_python(report::memory_json(p)); })
      .def("__eq__", [](const memory_plan& a, const py::object& b) {
        return py::isinstance<memory_plan>(b) && report::memory_json(a) == report::memory_json(b.cast<const memory_plan&>());
      })
      .def("__repr__", [](const memory_plan& p) {
        constexpr double gib = 1073741824.0;
        char verdict[64] = "fits";
        if (!p.fits) std::snprintf(verdict, sizeof verdict, "does NOT fit (short by %.2f GiB)", p.shortfall().value() / gib);
        char out[400];
        std::snprintf(out, sizeof out,
                      "MemoryPlan(%g users x %.0f tokens %s; weights %.2f GiB, KV %.0f B/token, max users %g, "
                      "max context %.0f)",
                      p.users, p.context, verdict, p.weights.value() / gib, p.kv_per_token.value(), p.max_sequences,
                      p.max_context);
        return std::string(out);
      })
      .def(py::pickle(
          [](const memory_plan& p) {
            py::tuple state(std::size(plan_fields));
            for (std::size_t i = 0; i < std::size(plan_fields); ++i) state[i] = plan_fields[i].get(p);
            return state;
          },
          [](const py::tuple& state) {
            if (state.size() != std::size(plan_fields)) throw std::invalid_argument("MemoryPlan: state of the wrong length");
            memory_plan p;
            for (std::size_t i = 0; i < std::size(plan_fields); ++i) plan_fields[i].set(p, state[i].cast<double>());
            return p;
          }));
}

}  // namespace llmroof::python
