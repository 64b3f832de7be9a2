// One shipped efficiency profile as a row of src/engine/profiles_fitted.inc: the
// writer (calibrate.hpp, write_profile_rows) and the reader (default_profile)
// share this type, its column order and which profile field each column holds.
#pragma once

#include <ostream>

#include "llmroof/step/roofline.hpp"

namespace llmroof::detail {

struct fitted_row {
  const char* key;  // "engine/memory-kind" or "engine"
  double memory, memory_sd, compute, compute_sd, attention, per_step, per_step_sd, per_kernel, per_kernel_sd,
      kv_memory, compute_half_rows, stream_cap, per_request, per_request_sd, low_precision;
  int points;
  double median_ape;
};

/// Calls visit(column, &efficiency_profile::field) for each number column of
/// `r` in file order: the one list of what a row holds (seconds in seconds).
template <class Row, class Visit>
void for_each_column(Row& r, Visit&& visit) {
  visit(r.memory, &efficiency_profile::memory);
  visit(r.memory_sd, &efficiency_profile::memory_sd);
  visit(r.compute, &efficiency_profile::compute);
  visit(r.compute_sd, &efficiency_profile::compute_sd);
  visit(r.attention, &efficiency_profile::attention);
  visit(r.per_step, &efficiency_profile::per_step);
  visit(r.per_step_sd, &efficiency_profile::per_step_sd);
  visit(r.per_kernel, &efficiency_profile::per_kernel);
  visit(r.per_kernel_sd, &efficiency_profile::per_kernel_sd);
  visit(r.kv_memory, &efficiency_profile::kv_memory);
  visit(r.compute_half_rows, &efficiency_profile::compute_half_rows);
  visit(r.stream_cap, &efficiency_profile::stream_cap);
  visit(r.per_request, &efficiency_profile::per_request);
  visit(r.per_request_sd, &efficiency_profile::per_request_sd);
  visit(r.low_precision, &efficiency_profile::low_precision);
}

inline double column_value(double v) { return v; }
inline double column_value(seconds v) { return v.value(); }
inline void set_from_column(double& field, double v) { field = v; }
inline void set_from_column(seconds& field, double v) { field = make_seconds(v); }

/// The profile fields a row sets, on top of `e`.
inline void apply_row(const fitted_row& r, efficiency_profile& e) {
  for_each_column(r, [&](double v, auto field) { set_from_column(e.*field, v); });
}

/// The row of `e`. A value below 1e-9 (an overhead fitted to less than a
/// nanosecond, a spread of nothing) writes 0.
inline fitted_row row_of(const char* key, const efficiency_profile& e, int points, double median_ape) {
  fitted_row r{};
  r.key = key;
  for_each_column(r, [&](double& v, auto field) {
    v = column_value(e.*field);
    if (v < 1e-9) v = 0;
  });
  r.points = points;
  r.median_ape = median_ape;
  return r;
}

/// The column legend the generated file starts with.
inline constexpr const char* fitted_row_columns =
    "// key, eta_m, sd, eta_c, sd, attention, per_step s, sd, per_kernel s, sd, kv_memory, compute_half_rows,\n"
    "// stream_cap B/s (0: none), per_request s, sd, low_precision,\n"
    "// points, in-sample median APE\n";

/// One row as the C++ initializer the generated file holds (6 significant digits).
inline void write_row(std::ostream& out, const fitted_row& r) {
  out << "{\"" << r.key << '"';
  for_each_column(r, [&](double v, auto) { out << ", " << v; });
  out << ", " << r.points << ", " << r.median_ape << "},\n";
}

}  // namespace llmroof::detail
