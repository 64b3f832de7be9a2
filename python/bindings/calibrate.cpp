// Calibration (calibrate.hpp): profiles fitted to measured points, and the
// validation of fitted or shipped profiles, as the command's JSON reports
// (validation: its rows as a pandas DataFrame, the rest in the frame's attrs).
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "report/json.hpp"

namespace llmroof::python {

void register_calibrate(py::module_& m) {
  m.def(
      "calibrate_report",
      [](const std::vector<std::string>& paths, const std::string& scope) {
        const profile_scope sc = scope_from_name(scope);
        const measurement_set set = read_measurements(paths);
        return calibration_report{report::calibrate_json(set, sc, fit_profiles(set.rows, sc))};
      },
      py::arg("paths"), py::arg("scope"));

  m.def(
      "validate_report",
      [](const std::vector<std::string>& paths, bool refit, const std::optional<std::string>& report_dir) {
        const measurement_set set = read_measurements(paths);
        std::string named;
        for (const std::string& p : paths) named += (named.empty() ? "" : " ") + p;
        if (set.rows.empty()) throw std::invalid_argument(named + ": no row could be mapped (see calibrate's skipped rows)");
        const validation val = validate(set.rows, refit);
        if (report_dir) {
          // The command's --report: the same Markdown and CSV.
          report::write_validation_report(*report_dir, report::validation_markdown(set, val, refit, named),
                                          report::predictions_csv(val.best()));
        }
        // One row per point as a DataFrame, the rest of the report in its attrs.
        report::json j = report::validate_json(set, val, refit);
        py::list rows;
        for (const auto& r : j["rows"]) rows.append(to_python(r));
        j.erase("rows");
        py::object frame = py::module_::import("pandas").attr("DataFrame")(rows);
        frame.attr("attrs").attr("update")(to_python(j));
        return frame;
      },
      py::arg("paths"), py::arg("refit"), py::arg("report_dir") = std::nullopt);
}

}  // namespace llmroof::python
