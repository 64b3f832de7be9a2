// Calibration: measured points (decode and prefill speeds, TTFT, TPOT,
// end-to-end latency) -> a fitted efficiency profile with uncertainty, by
// bounded nonlinear least squares (Levenberg-Marquardt, Eigen) on log ratios.
//
// The input format is the column layout of data/measured/calibration.csv
// (documented in docs/calibration.md); rows that cannot be mapped to a model,
// device, format and workload are kept with the reason, never dropped.
#pragma once

#include <array>
#include <cmath>
#include <map>
#include <ostream>
#include <optional>
#include <string>
#include <vector>

#include "llmroof/units/metric.hpp"
#include "llmroof/layout/parallel.hpp"
#include "llmroof/serving/capacity_search.hpp"
#include "llmroof/serving/load_model.hpp"
#include "llmroof/engine/engine_profile.hpp"
#include "llmroof/layout/speculative_setup.hpp"

namespace llmroof {

/// Longest prompt-and-answer pair of vLLM's ShareGPT sampler, tokens: a
/// ShareGPT burst's answers spread up to it (serve_burst's context).
inline constexpr double sharegpt_pair_tokens = 2048;

/// A disaggregated deployment as a row names it (Dynamo, SGLang's PD
/// disaggregation, "2P1D"): prefill and decode instances apart, each with
/// its own layout.
struct disaggregated_split {
  parallel_plan prefill;
  int prefill_instances = 1;
  parallel_plan decode;
  int decode_instances = 1;
  [[nodiscard]] int devices() const {
    return prefill_instances * prefill.devices() + decode_instances * decode.devices();
  }
};

/// One measured point, mapped onto llmroof's objects.
struct measurement {
  std::string id;
  std::string source;
  std::string engine;        ///< engine class: llama.cpp-cuda, llama.cpp-metal, tensorrt-llm, vllm, mlx
  architecture arch;
  precision pr;
  device dev;
  parallel_plan plan;
  metric what = metric::decode_tps_per_seq;
  double batch = 1;
  double prompt = 0;         ///< tokens prefilled in the measured step
  double depth = 0;          ///< tokens already cached
  double gen = 0;            ///< tokens generated
  double value = 0;          ///< in the row's own metric and unit (per device when per_device)
  bool per_device = false;   ///< the source reports tokens/s per GPU
  /// The row's own metric when it is `what` under another name and unit:
  /// "total_tps_total" (input + output tokens/s), "requests_per_s" (both
  /// decode_tps_total times `scale`) or "itl_ms" (tpot_ms); empty otherwise.
  std::string reported_metric;
  /// The row's value per unit of `what`'s: (prompt + gen) / gen for total
  /// tokens/s, 1 / gen for requests/s (gen rounded in a loop or burst, whose
  /// answers predict runs whole); 1 otherwise.
  double scale = 1;
  bool includes_prefill = false;  ///< decode_tps_total over the whole run, prefill included (TensorRT-LLM's static batches)
  bool fused_attention = true;    ///< false: llama.cpp without flash attention
  /// Prompt tokens per forward pass the row ran with (llama.cpp `-ub N`,
  /// n_ubatch); 0: the engine class's own (efficiency_profile::prefill_chunk).
  double prefill_chunk = 0;
  /// A fixed-concurrency benchmark: `batch` users, each sending its next
  /// request when the last completes (NIM/AIPerf). Predicted through
  /// serve_closed_loop (queueing, KV slots), never fitted on.
  bool closed_loop = false;
  /// The loop's users run in lockstep (a fixed-length benchmark: identical
  /// requests started together), arrival_pattern::lockstep.
  bool lockstep = false;
  /// A burst: `requests` requests released at once, no concurrency cap (`vllm
  /// bench serve --request-rate inf`): the engine's scheduler simulated over
  /// them (load_model.hpp serve_burst). Predicted, never fitted on (closed_loop is
  /// set too).
  bool burst = false;
  /// Sequences of prompt + gen tokens the engine's KV cache holds at once
  /// (an offline batch beyond it runs in waves); 0: not computed (all).
  double max_concurrent = 0;
  std::string notes;
  /// A row decoding speculatively (a draft model beside the target):
  /// predicted through step_of, never fitted on (its draft length is assumed).
  std::optional<speculation> spec;
  /// A burst's requests, as the source's notes count them ("1000 prompts",
  /// "over 500 requests"); 0 for other rows.
  double requests = 0;
  /// A burst of a chat dataset's prompts (ShareGPT): answers of many lengths
  /// about `gen` (length_spread::exponential, at most 2048 tokens with the
  /// prompt: vLLM's benchmark drops longer pairs); else all `gen` long.
  bool mixed_lengths = false;
  /// Launch settings the row names beyond its engine's defaults (trtllm-bench's
  /// batch tuned up to its largest CUDA graph): engine_of applies them.
  engine_overrides overrides;
  /// A fixed-concurrency row served disaggregated: its split (`plan` is the
  /// decode instance's), predicted through serve_disaggregated_loop.
  std::optional<disaggregated_split> split;

  /// Data-parallel replicas of `plan` ("TP4" on 8 devices: 2), each serving
  /// its share of a serving benchmark's users or requests.
  int replicas = 1;

  /// Every device the row ran on (both pools of a split, every replica).
  [[nodiscard]] int devices() const { return split ? split->devices() : replicas * plan.devices(); }

  /// Cached tokens of the mean decode step: llama-bench tg N (and any run of
  /// N generated tokens) averages over a cache growing from depth + prompt to
  /// depth + prompt + N.
  [[nodiscard]] double mean_decode_context() const { return depth + prompt + gen / 2; }
};

/// Whether a point is one stream's decode tokens/s on its own (not a user
/// of a serving loop or burst, not speculative): the headline figure.
inline bool single_stream_decode(const measurement& m) {
  return m.what == metric::decode_tps_per_seq && m.batch == 1 && !m.spec && !m.closed_loop;
}

/// The name of a point's metric as its row gives it (reported_metric, else `what`).
inline std::string_view metric_label(const measurement& m) {
  return m.reported_metric.empty() ? to_string(m.what) : std::string_view(m.reported_metric);
}

/// The engine a point ran: its engine class's engine on its device, with the
/// row's own launch settings.
engine_settings engine_of(const measurement& m);

struct skipped_row {
  std::string id;
  std::string reason;
};

struct measurement_set {
  std::vector<measurement> rows;
  std::vector<skipped_row> skipped;
};

/// Reads a calibration.csv-format file. Throws std::invalid_argument naming
/// the file and line for a malformed file; rows that parse but cannot be
/// mapped land in `skipped` with the reason.
measurement_set read_measurements(const std::string& path);

/// The rows of several such files, read in order (each row keeps its own id
/// and source). Throws std::invalid_argument for an empty list or as the
/// one-file reader does.
measurement_set read_measurements(const std::vector<std::string>& paths);

/// Prediction of a measurement's value (same unit) under a profile.
double predict(const measurement& m, const efficiency_profile& e);

/// The decode step of a measurement's deployment (one device, or its
/// parallel plan) under a profile.
phase_timing measured_decode_step(const measurement& m, const efficiency_profile& e, double batch, double context);

/// Which profile fields a fit moves.
struct fit_fields {
  bool memory = true;     ///< eta_m
  bool compute = true;    ///< eta_c
  bool per_step = true;   ///< per-step overhead
  bool attention = false; ///< attention kernels' share of the compute roof
  bool per_kernel = false; ///< launch overhead per kernel (per layer op)
  bool kv_memory = false;  ///< attention kernels' share of eta_m reading the KV cache
  bool half_rows = false;  ///< GEMM rows at which eta_c is half its peak (batched decode)
  bool stream_cap = false; ///< weight-streaming cap of the GEMM kernels
  bool per_request = false; ///< request handling outside the kernels (TTFT and latency points)
  bool low_precision = false; ///< FP8/FP4 GEMMs' share of eta_c (points on both kinds of roof)
};

struct calibration_result {
  efficiency_profile profile;
  /// Spread of eta_m and eta_c for the band of a new estimate: standard
  /// error and the fitted points' scatter together (calibrate_two_stage; in
  /// calibrate() the standard error alone).
  double memory_sd = 0;
  double compute_sd = 0;
  /// Standard errors of eta_m and eta_c alone (in calibrate_two_stage never
  /// below the stage's in-sample median error): how well the data pin them.
  double memory_se = 0;
  double compute_se = 0;
  double per_step_sd = 0;  ///< s
  double per_kernel_sd = 0;  ///< s
  double per_request_sd = 0;  ///< s
  std::vector<double> residuals;  ///< log(prediction / measurement) per row
  double median_ape = 0;          ///< median absolute percentage error, 0..1
  std::size_t points = 0;

  /// The fitted profile with the fit's spreads as its band (the *_sd fields
  /// above; 0 where a field was not fitted).
  [[nodiscard]] efficiency_profile banded() const;
};

/// Fits `start`'s fields in `fields` to `rows`. Throws std::invalid_argument
/// when there are fewer rows than fitted fields.
calibration_result calibrate(const std::vector<measurement>& rows, const efficiency_profile& start,
                             fit_fields fields = {});

/// Absolute percentage error of one prediction, |pred - meas| / meas.
inline double ape(double predicted, double measured) { return std::fabs(predicted - measured) / measured; }

double median(std::vector<double> v);

}  // namespace llmroof

namespace llmroof {

/// True for metrics that decode time decides (fit eta_m and overhead); false
/// for prefill-decided ones (fit eta_c).
constexpr bool decode_metric(metric m) {
  return m == metric::decode_tps_per_seq || m == metric::decode_tps_total || m == metric::tpot_ms ||
         m == metric::e2e_latency_s;
}

/// Fits a profile to a group of points in stages: prefill metrics move eta_c
/// (and attention); decode points of up to 4 sequences move eta_m, the
/// per-step and per-kernel overheads and, where the points show them, the
/// KV-read share and the streaming cap; batched decode points move the
/// small-GEMM half rows; prefill once more. A stage with fewer than 3 points
/// keeps `start`'s values (docs/calibration.md).
calibration_result calibrate_two_stage(const std::vector<measurement>& rows, const efficiency_profile& start);

/// How profiles are shared, from coarse to fine.
enum class profile_scope : std::uint8_t { defaults, global, engine, engine_and_class };

std::string_view to_string(profile_scope s);

/// `defaults`, `global`, `engine` or `engine-kind`; throws std::invalid_argument otherwise.
profile_scope scope_from_name(std::string_view name);

/// Profiles fitted at one scope, keyed "engine/class", "engine" or "" (global).
struct profile_table {
  profile_scope scope = profile_scope::defaults;
  std::map<std::string, calibration_result> fits;
  /// The profile for a device and engine class: the finest fitted key that
  /// exists, else the engine's class default (class_default_profile), or
  /// the device class's alone when `class_defaults` is false (a fold that
  /// holds points the class default was fitted to).
  [[nodiscard]] efficiency_profile for_row(const device& d, const std::string& engine,
                                           bool class_defaults = true) const;
  /// The fit for_row takes (its key in `key` when given), or nullptr.
  [[nodiscard]] const calibration_result* fit_for(const device& d, const std::string& engine,
                                                  std::string* key = nullptr) const;
  /// The table a fit at scope `s` (no finer than this one's) would have
  /// made: the fits of `s` and the scopes coarser than it.
  [[nodiscard]] profile_table at_scope(profile_scope s) const;
};

profile_table fit_profiles(const std::vector<measurement>& rows, profile_scope scope);

/// Whether a fit ships as a default profile: both roofs' shares pinned down
/// (standard errors above 0 and under 25% of the share).
bool ships(const calibration_result& r);
/// ships(r) for a fit under `key`: the global fit ("") never ships.
bool ships(const std::string& key, const calibration_result& r);

/// Whether `m` is one of the rows the serving engines' launch-priced class
/// default was fitted to (class_default_points, read from GPUStack's pages).
bool class_default_point(const measurement& m);

/// Writes the column legend and the shipping fits of `t` as rows of
/// src/engine/profiles_fitted.inc (the file default_profile reads).
void write_profile_rows(std::ostream& out, const profile_table& t);

/// One held-out prediction of cross-validation.
struct cv_prediction {
  const measurement* row = nullptr;
  double predicted = 0;
  double low = std::nan("");   ///< band: the prediction under the profile one standard error slower / faster
  double high = std::nan("");
  [[nodiscard]] double error() const { return ape(predicted, row->value); }
  [[nodiscard]] bool covered() const { return row->value >= low && row->value <= high; }
};

/// A row's prediction under `e`, with its band (slower(e), faster(e)).
cv_prediction predict_with_band(const measurement& m, const efficiency_profile& e);

/// Leave-one-source-out: every source's rows predicted by profiles fitted on
/// the other sources at `scope`, each with the band of its profile widened to
/// the conformal width of the other sources' predictions of its metric (a
/// source never sets its own band). What is scored is what would ship: a
/// fold's fit that ships() refuses is dropped, and a row without a fit takes
/// its engine's class default (class_default_profile), except in a fold
/// holding a class_default_point, which takes the device class's alone
/// where that class default is the launch-priced one fitted to those points
/// (not one priced from the kernel database, kernel_fitted).
std::vector<cv_prediction> cross_validate(const std::vector<measurement>& rows, profile_scope scope);

/// cross_validate at each of `scopes` over the same folds, fitting each fold
/// once (at the finest scope asked for) and the folds in parallel.
std::vector<std::vector<cv_prediction>> cross_validate(const std::vector<measurement>& rows,
                                                       const std::vector<profile_scope>& scopes);

/// Split-conformal band widths (see band_width), indexed [arrival][metric].
using band_widths = std::array<std::array<double, metric_count>, request_arrival_count>;

/// How `m`'s requests arrived: a burst, or steady.
inline request_arrival arrival_of(const measurement& m) {
  return m.burst ? request_arrival::burst : request_arrival::steady;
}

/// Split-conformal band widths of predictions `p`: per arrival and metric the
/// 68th percentile of |ln(predicted / measured)|; a metric with fewer than 5
/// points of an arrival takes the percentile of all that arrival's points
/// pooled, an arrival without points the steady widths (0: no points at all).
band_widths conformal_widths(const std::vector<cv_prediction>& p);

/// Writes `w` as the rows of src/engine/band_widths.inc (the file band_width reads).
void write_band_widths(std::ostream& out, const band_widths& w);

/// Every row predicted with the profiles llmroof ships (default_profile of
/// its device and engine: no fitting, no cross-validation), with the band of
/// the profile one standard error slower and faster, never narrower than the
/// shipped band_width of its metric: what a user sees out of the box on their
/// own measurements.
std::vector<cv_prediction> predict_shipped(const std::vector<measurement>& rows);

/// Errors of the predictions of one metric.
struct metric_summary {
  metric what = metric::decode_tps_per_seq;
  std::size_t points = 0;
  double mdape = 0;          ///< median absolute percentage error, 0..1
  double band_coverage = 0;  ///< share of measurements inside their band, 0..1
};

/// One summary per metric present in `p`, ordered by the metric's name.
std::vector<metric_summary> summarize_by_metric(const std::vector<cv_prediction>& p);

/// One way of predicting a points file and its headline errors.
struct validation_scope {
  std::string name;  ///< a profile_scope name, or "shipped"
  std::vector<cv_prediction> predictions;
  std::vector<metric_summary> metrics;  ///< summarize_by_metric(predictions)
  double decode = 0;   ///< MdAPE over decode-decided metrics
  double single = 0;   ///< MdAPE of single-stream decode tokens/s (NaN: none)
  double prefill = 0;  ///< MdAPE over prefill-decided metrics (NaN: none)
};

/// What `llmroof validate` and llmroof.validate report.
struct validation {
  std::vector<validation_scope> scopes;
  std::size_t chosen = 0;  ///< index into scopes
  [[nodiscard]] const validation_scope& best() const { return scopes[chosen]; }
};

/// refit: leave-one-source-out at every profile scope, choosing the one with
/// the lowest sum of single-stream decode and prefill MdAPE (within 0.1
/// point the lower decode MdAPE, then the finer scope). Otherwise the shipped
/// profiles alone (predict_shipped).
validation validate(const std::vector<measurement>& rows, bool refit);

/// Median absolute percentage error of the predictions whose metric
/// satisfies `pred` (NaN when there are none).
double median_ape(const std::vector<cv_prediction>& p, bool decode);

/// Cross-validation folds: one per source (leave-one-source-out) while rows x
/// folds stays within max_cv_row_folds, else as many as that allows and at
/// least min_cv_folds, sources sharing folds in turn. The shipped data (621
/// rows, 15 sources) and the third release beside them (1,386 rows, ~67
/// sources) keep one fold per source; a file of a row per source does not
/// cost a fit per row.
inline constexpr std::size_t max_cv_row_folds = 150000;
inline constexpr std::size_t min_cv_folds = 16;

inline std::size_t cv_folds(std::size_t rows, std::size_t sources) {
  const std::size_t affordable = std::max<std::size_t>(min_cv_folds, rows > 0 ? max_cv_row_folds / rows : sources);
  return std::max<std::size_t>(1, std::min(sources, affordable));
}

/// Why a row's prediction is off, in a sentence a reader can act on:
/// `ratio` is predicted / measured (tokens/s over-predict above 1, times
/// below). What `validate` reports beside each row.
std::string likely_reason(const measurement& m, double ratio);

}  // namespace llmroof
