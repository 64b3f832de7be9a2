// The compiled core of the Python package: thin bindings, one register_*
// function per area (catalog, deployment, moe, calibrate, sweeps). Results
// cross the boundary as compiled objects (PhaseTiming, Deployment) or as the
// command's JSON; the pure-Python layer (python/llmroof) gives them classes
// and docs.
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
