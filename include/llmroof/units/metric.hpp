// What a benchmark measures, and how far llmroof's estimates of it have been
// from measurements it was not fitted on (the floor of every band).
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "llmroof/detail/enum_names.hpp"

namespace llmroof {

enum class metric : std::uint8_t { decode_tps_per_seq, decode_tps_total, prefill_tps, ttft_ms, tpot_ms, e2e_latency_s };

inline constexpr std::size_t metric_count = 6;

/// The metric column of calibration.csv.
inline constexpr std::array<std::string_view, metric_count> metric_names{
    "decode_tps_per_seq", "decode_tps_total", "prefill_tps", "ttft_ms", "tpot_ms", "e2e_latency_s"};

constexpr std::string_view to_string(metric m) { return detail::enum_name(m, metric_names); }

/// How a measurement's requests arrived: steady (one stream, a fixed
/// concurrency, a static batch) or a burst (every request sent at once,
/// `--request-rate inf`). A burst's scheduler storm is predicted far less
/// well than a steady load, so each has its own bands.
enum class request_arrival : std::uint8_t { steady, burst };

inline constexpr std::size_t request_arrival_count = 2;

inline constexpr std::array<std::string_view, request_arrival_count> request_arrival_names{"steady", "burst"};

constexpr std::string_view to_string(request_arrival a) { return detail::enum_name(a, request_arrival_names); }

/// Split-conformal half-width of the band of an estimate of `m` under
/// `arrival`, in log space: the 68th percentile of |ln(estimate / measured)|
/// over the leave-one-source-out predictions of the shipped measurements
/// (data/measured/calibration.csv and release3; src/engine/band_widths.inc, written
/// by `llmroof validate --write-bands`). A band of estimate x exp(-w) ..
/// x exp(+w) holds about two thirds of measurements of sources the profiles
/// never saw, whatever a fit's own standard errors say; an arrival without
/// rows takes the steady width; 0 for a metric without points.
double band_width(metric m, request_arrival arrival = request_arrival::steady);

/// A range of values of one metric, low <= high.
struct band {
  double low = 0;
  double high = 0;
};

/// [estimate x exp(-w), estimate x exp(+w)] joined with `b`: a band never
/// narrower than the metric's cross-validated spread `w`.
inline band widen(band b, double estimate, double w) {
  const double lo = estimate * std::exp(-w), hi = estimate * std::exp(w);
  return {b.low < lo ? b.low : lo, b.high > hi ? b.high : hi};
}

}  // namespace llmroof
