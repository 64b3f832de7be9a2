// The compiled core of the Python package: thin bindings, one register_*
// function per area (catalog, memory plan, deployment, moe, calibrate,
// sweeps). Results cross the boundary as compiled objects (PhaseTiming,
// MemoryPlan, Deployment), as numpy arrays (sweeps) or as Python objects of
// the command's JSON schema built in C++; the pure-Python layer
// (python/llmroof) gives them classes and docs.
#include <pybind11/pybind11.h>

#include "bindings.hpp"

PYBIND11_MODULE(_core, m) {
  m.doc() = "llmroof compiled core (use the llmroof package, not this module)";
  m.attr("__version__") = llmroof::version;
  llmroof::python::register_catalog(m);
  llmroof::python::register_memory_plan(m);
  llmroof::python::register_deployment(m);
  llmroof::python::register_moe(m);
  llmroof::python::register_calibrate(m);
  llmroof::python::register_sweeps(m);
}
