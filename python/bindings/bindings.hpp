#pragma once

#include <pybind11/pybind11.h>

#include <optional>
#include <string>

#include "llmroof/llmroof.hpp"
#include "llmroof/engine/engine_profile.hpp"
#include "report/json.hpp"

namespace llmroof::python {

namespace py = pybind11;

void register_catalog(py::module_& m);
void register_deployment(py::module_& m);
void register_memory_plan(py::module_& m);
void register_reports(py::module_& m);
void register_moe(py::module_& m);
void register_calibrate(py::module_& m);
void register_sweeps(py::module_& m);
void register_recommend(py::module_& m);

/// An architecture from a dict of its fields (the inverse of arch_to_dict).
architecture arch_from_dict(const py::dict& d);
py::dict arch_to_dict(const architecture& a);
/// A device from a dict of its fields (the inverse of device_to_dict).
device device_from_dict(const py::dict& d);
py::dict device_to_dict(const device& d);
/// The engine's default profile on `dev` (default_profile(dev, engine)), with
/// the fields of `d` (a dict or None) overriding it.
efficiency_profile profile_from_dict(const device& dev, const py::object& d, std::string_view engine);
py::dict profile_to_dict(const efficiency_profile& e);
/// A report (the command's JSON) as Python objects: dict, list, str, int,
/// float, bool, None; what every `*_report` returns, so no JSON text crosses.
py::object to_python(const report::json& j);
/// Engine settings from a dict of {memory_utilization, block_tokens,
/// max_num_seqs, max_num_batched_tokens, max_model_len} (or None): the keys
/// present override the engine's defaults; another key is an error.
engine_overrides overrides_from(const py::object& spec);
/// A decode step or a prefill (`_core.reports.Phase`): the compiled timing,
/// or, unpickled or taken from a report, its JSON (report::phase_json).
struct phase_object {
  std::optional<phase_timing> timing;
  report::json j;
};

/// A report of the command held as its JSON (`_core.reports`: Plan, Users,
/// KvCache, MoeReport, Comparison, Calibration, Speculation, Recommendation), one type per class.
template <int Kind>
struct report_value {
  report::json j;
};
using plan_report = report_value<0>;
using users_report = report_value<1>;
using kv_report = report_value<2>;
using moe_report = report_value<3>;
using comparison_report = report_value<4>;
using calibration_report = report_value<5>;
using speculative_report = report_value<6>;
using recommend_report = report_value<7>;

/// A memory plan from the command's JSON `memory` object (memory_json).
memory_plan memory_from_json(const report::json& j);

/// The deployment a compiled `_core.deployment.Deployment` holds (a reference
/// into it). Throws pybind11::cast_error for anything else.
const deployment& deployment_of(const py::handle& compiled);

}  // namespace llmroof::python
