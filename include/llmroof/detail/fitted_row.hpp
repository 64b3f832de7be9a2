// One shipped efficiency profile as a row of src/profiles_fitted.inc: the
// writer (calibrate.hpp, write_profile_rows) and the reader (default_profile)
// share this type and its column order.
#pragma once

#include <ostream>

namespace llmroof::detail {

struct fitted_row {
  const char* key;  // "engine/memory-kind" or "engine"
  double memory, memory_sd, compute, compute_sd, attention, per_step, per_step_sd, per_kernel, per_kernel_sd,
      kv_memory, compute_half_rows, stream_cap, per_request, per_request_sd, low_precision;
  int points;
  double median_ape;
};

/// The column legend the generated file starts with.
inline constexpr const char* fitted_row_columns =
    "// key, eta_m, sd, eta_c, sd, attention, per_step s, sd, per_kernel s, sd, kv_memory, compute_half_rows,\n"
    "// stream_cap B/s (0: none), per_request s, sd, low_precision,\n"
    "// points, in-sample median APE\n";

/// One row as the C++ initializer the generated file holds (6 significant digits).
inline void write_row(std::ostream& out, const fitted_row& r) {
  out << "{\"" << r.key << "\", " << r.memory << ", " << r.memory_sd << ", " << r.compute << ", " << r.compute_sd
      << ", " << r.attention << ", " << r.per_step << ", " << r.per_step_sd << ", " << r.per_kernel << ", "
      << r.per_kernel_sd << ", " << r.kv_memory << ", " << r.compute_half_rows << ", " << r.stream_cap << ", "
      << r.per_request << ", " << r.per_request_sd << ", " << r.low_precision << ", " << r.points << ", " << r.median_ape << "},\n";
}

}  // namespace llmroof::detail
