// The compiled core of the Python package: thin bindings in one submodule per
// area, each filled by its register_* function (catalog, memory_plan,
// reports, deployment, moe, calibrate, sweeps, recommend). Results cross the boundary as
// compiled objects (Deployment, MemoryPlan, the reports of `reports`), as
// numpy arrays (sweeps) or as Python objects of the command's JSON schema built
// in C++; the pure-Python layer (python/llmroof) adds keywords and checks.
#include <pybind11/pybind11.h>

#include "bindings.hpp"

namespace {

namespace py = pybind11;

// The submodules, each filled by its area's register_* function.
struct area {
  const char* name;
  const char* doc;
  void (*fill)(py::module_&);
};

constexpr area areas[] = {
    {"catalog", "Formats, devices and models: lookups, validation, files, parameter counts",
     &llmroof::python::register_catalog},
    {"memory_plan", "memory_plan as a compiled value", &llmroof::python::register_memory_plan},
    {"reports", "The command's reports as compiled values: Phase, Plan, Users, KvCache, MoeReport, Comparison, "
                "Calibration, Speculation, Recommendation", &llmroof::python::register_reports},
    {"deployment", "A resolved deployment and the phase timings it answers", &llmroof::python::register_deployment},
    {"moe", "Expert routing: expected distinct experts, simulation, the MoE table", &llmroof::python::register_moe},
    {"calibrate", "Fitting and validating efficiency profiles on measurement files",
     &llmroof::python::register_calibrate},
    {"sweeps", "Vectorised grids of decode steps and prefills", &llmroof::python::register_sweeps},
    {"recommend", "The deployment search: what to run on a pool of machines under SLOs",
     &llmroof::python::register_recommend},
};

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "llmroof compiled core (use the llmroof package, not this module)";
  m.attr("__version__") = llmroof::version;
  for (const area& a : areas) {
    py::module_ sub = m.def_submodule(a.name, a.doc);
    // Importable by its qualified name (llmroof._core.deployment), as pickle
    // needs to find the classes a submodule holds.
    py::module_::import("sys").attr("modules")[sub.attr("__name__")] = sub;
    a.fill(sub);
  }
}
