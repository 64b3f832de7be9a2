#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "llmroof/llmroof.hpp"
#include "llmroof/engine_profile.hpp"
#include "report/json.hpp"

namespace llmroof::python {

namespace py = pybind11;

void register_catalog(py::module_& m);
void register_deployment(py::module_& m);
void register_memory_plan(py::module_& m);
void register_moe(py::module_& m);
void register_calibrate(py::module_& m);
void register_sweeps(py::module_& m);

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
/// The deployment a compiled `_core.deployment.Deployment` holds (a reference
/// into it). Throws pybind11::cast_error for anything else.
const deployment& deployment_of(const py::handle& compiled);

}  // namespace llmroof::python
