// Calibration (calibrate.hpp): profiles fitted to measured points, and the
// validation of fitted or shipped profiles, as the command's JSON reports.
#include <pybind11/stl.h>

#include <string>

#include "bindings.hpp"
#include "report/json.hpp"

namespace llmroof::python {

void register_calibrate(py::module_& m) {
  m.def(
      "calibrate_report",
      [](const std::string& path, const std::string& scope) {
        const profile_scope sc = scope_from_name(scope);
        const measurement_set set = read_measurements(path);
        return to_python(report::calibrate_json(set, sc, fit_profiles(set.rows, sc)));
      },
      py::arg("path"), py::arg("scope"));

  m.def(
      "validate_report",
      [](const std::string& path, bool refit) {
        const measurement_set set = read_measurements(path);
        if (set.rows.empty()) throw std::invalid_argument(path + ": no row could be mapped (see calibrate's skipped rows)");
        return to_python(report::validate_json(set, validate(set.rows, refit), refit));
      },
      py::arg("path"), py::arg("refit"));
}

}  // namespace llmroof::python
