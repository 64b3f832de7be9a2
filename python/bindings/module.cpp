// The compiled core of the Python package: thin bindings, one register_*
// function per area. Results cross the boundary as dicts of floats in base
// units; the pure-Python layer (python/llmroof) gives them classes and docs.
#include <pybind11/pybind11.h>

#include "bindings.hpp"

PYBIND11_MODULE(_core, m) {
  m.doc() = "llmroof compiled core (use the llmroof package, not this module)";
  m.attr("__version__") = llmroof::version;
  llmroof::python::register_catalog(m);
  llmroof::python::register_estimates(m);
  llmroof::python::register_sweeps(m);
}
