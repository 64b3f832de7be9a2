// Checking the profiles against measured rows: leave-one-source-out
// cross-validation, the conformal band widths, validate's scopes and why a
// row is off.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <stdexcept>
#include <thread>

#include "llmroof/calibration/calibrate.hpp"
#include "llmroof/detail/enum_names.hpp"
#include "llmroof/engine/detail/fitted_row.hpp"

namespace llmroof {

namespace {

// A prediction's band, never narrower than x/÷ exp(w) around it.
void widen_band(cv_prediction& p, double w) {
  const band b = widen({p.low, p.high}, p.predicted, w);
  p.low = b.low;
  p.high = b.high;
}

double width_of(const band_widths& w, const measurement& m) {
  return w[static_cast<std::size_t>(arrival_of(m))][static_cast<std::size_t>(m.what)];
}

}  // namespace

profile_table profile_table::at_scope(profile_scope s) const {
  profile_table t;
  t.scope = s;
  for (const auto& [key, fit] : fits) {
    const profile_scope own = key.empty()                          ? profile_scope::global
                              : key.find('/') != std::string::npos ? profile_scope::engine_and_class
                                                                   : profile_scope::engine;
    if (static_cast<int>(own) <= static_cast<int>(s)) t.fits.emplace(key, fit);
  }
  return t;
}

std::vector<std::vector<cv_prediction>> cross_validate(const std::vector<measurement>& rows,
                                                       const std::vector<profile_scope>& scopes) {
  // Folds: one per source (leave-one-source-out) while rows x folds stays
  // within max_cv_row_folds (and never fewer than min_cv_folds); past that,
  // sources in name order take the folds in turn, so a validation's work is
  // bounded whatever the file holds.
  std::map<std::string, std::size_t> fold_of;
  for (const auto& m : rows) fold_of.emplace(m.source, 0);
  const std::size_t folds = cv_folds(rows.size(), fold_of.size());
  std::size_t next = 0;
  for (auto& [src, fold] : fold_of) fold = next++ % folds;
  std::vector<std::vector<const measurement*>> held(folds);
  for (const auto& m : rows) held[fold_of.at(m.source)].push_back(&m);
  profile_scope finest = profile_scope::defaults;
  for (profile_scope s : scopes) finest = std::max(finest, s);
  // Each fold fits once, at the finest scope (its table holds the coarser
  // scopes' fits too); the folds are independent, so they share the cores.
  std::vector<profile_table> tables(folds);
  const auto fit_fold = [&](std::size_t f) {
    std::vector<measurement> train;
    for (const auto& m : rows) {
      if (fold_of.at(m.source) != f) train.push_back(m);
    }
    tables[f] = fit_profiles(train, finest);
    // Score what would ship: a fit write_profile_rows would leave out gives
    // its rows the class defaults here too (the global fit never ships; it
    // is scored as the global scope).
    std::erase_if(tables[f].fits, [](const auto& kv) { return !kv.first.empty() && !ships(kv.second); });
  };
  const std::size_t workers = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, folds);
  std::atomic<std::size_t> next_fold{0};
  std::vector<std::exception_ptr> failed(workers);
  {
    std::vector<std::jthread> pool;
    for (std::size_t w = 0; w < workers; ++w) {
      pool.emplace_back([&, w] {
        try {
          for (std::size_t f = next_fold++; f < folds; f = next_fold++) fit_fold(f);
        } catch (...) {
          failed[w] = std::current_exception();
        }
      });
    }
  }
  for (const auto& e : failed) {
    if (e) std::rethrow_exception(e);
  }
  // A fold holding a point the launch-priced class default was fitted to
  // predicts as if that default did not exist (the device class's alone).
  std::vector<bool> own_defaults(folds, true);
  for (std::size_t f = 0; f < folds; ++f) {
    for (const measurement* m : held[f]) {
      if (class_default_point(*m)) own_defaults[f] = false;
    }
  }
  std::vector<std::vector<cv_prediction>> out;
  for (profile_scope s : scopes) {
    std::vector<cv_prediction> p;
    std::vector<std::size_t> fold_of_p;
    for (std::size_t f = 0; f < folds; ++f) {
      const profile_table t = tables[f].at_scope(s);
      for (const measurement* m : held[f]) {
        p.push_back(predict_with_band(*m, t.for_row(m->dev, m->engine, own_defaults[f])));
        fold_of_p.push_back(f);
      }
    }
    // Each fold's bands take the conformal widths of the others' predictions.
    for (std::size_t f = 0; f < folds; ++f) {
      std::vector<cv_prediction> others;
      for (std::size_t i = 0; i < p.size(); ++i) {
        if (fold_of_p[i] != f) others.push_back(p[i]);
      }
      const auto w = conformal_widths(others);
      for (std::size_t i = 0; i < p.size(); ++i) {
        if (fold_of_p[i] == f) widen_band(p[i], width_of(w, *p[i].row));
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<cv_prediction> cross_validate(const std::vector<measurement>& rows, profile_scope scope) {
  return std::move(cross_validate(rows, std::vector<profile_scope>{scope}).front());
}

band_widths conformal_widths(const std::vector<cv_prediction>& p) {
  // The 68th percentile: one standard deviation's share of a normal error.
  const auto percentile = [](std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(std::ceil(0.68 * double(v.size()))) - 1)];
  };
  std::array<std::array<std::vector<double>, metric_count>, request_arrival_count> by_metric;
  std::array<std::vector<double>, request_arrival_count> all;
  for (const auto& x : p) {
    const double e = std::fabs(std::log(x.predicted / x.row->value));
    const auto a = static_cast<std::size_t>(arrival_of(*x.row));
    by_metric[a][static_cast<std::size_t>(x.row->what)].push_back(e);
    all[a].push_back(e);
  }
  band_widths w{};
  for (std::size_t a = 0; a < request_arrival_count; ++a) {
    const double pooled = percentile(all[a]);
    for (std::size_t i = 0; i < metric_count; ++i) {
      w[a][i] = by_metric[a][i].size() >= 5 ? percentile(by_metric[a][i]) : pooled;
    }
  }
  // An arrival without points (a fold or a file without bursts) is never
  // narrower than steady loads: it takes their widths.
  const auto steady = static_cast<std::size_t>(request_arrival::steady);
  for (std::size_t a = 0; a < request_arrival_count; ++a) {
    if (all[a].empty()) w[a] = w[steady];
  }
  return w;
}

void write_band_widths(std::ostream& out, const band_widths& w) {
  out << "// metric, arrival, 68th percentile of |ln(predicted / measured)| over leave-one-source-out predictions\n";
  for (std::size_t a = 0; a < request_arrival_count; ++a) {
    for (std::size_t i = 0; i < metric_count; ++i) {
      out << "{metric::" << to_string(static_cast<metric>(i))
          << ", request_arrival::" << to_string(static_cast<request_arrival>(a)) << ", " << w[a][i] << "},\n";
    }
  }
}

double median_ape(const std::vector<cv_prediction>& p, bool decode) {
  std::vector<double> e;
  for (const auto& x : p) {
    if (decode_metric(x.row->what) == decode) e.push_back(x.error());
  }
  return e.empty() ? std::nan("") : median(e);
}

cv_prediction predict_with_band(const measurement& m, const efficiency_profile& e) {
  // The band always holds the estimate: queueing (closed loops) and clamped
  // shares can make the one-sigma profiles land on the same side of it.
  const double p = predict(m, e);
  const double a = predict(m, slower(e));
  const double b = predict(m, faster(e));
  return {&m, p, std::min({a, b, p}), std::max({a, b, p})};
}

std::vector<cv_prediction> predict_shipped(const std::vector<measurement>& rows) {
  std::vector<cv_prediction> out;
  out.reserve(rows.size());
  for (const auto& m : rows) {
    out.push_back(predict_with_band(m, default_profile(m.dev, engine_of_class(m.engine))));
    widen_band(out.back(), band_width(m.what, arrival_of(m)));
  }
  return out;
}

std::vector<metric_summary> summarize_by_metric(const std::vector<cv_prediction>& p) {
  std::map<std::string_view, std::pair<metric_summary, std::vector<double>>> by_name;
  for (const auto& x : p) {
    auto& [sum, errors] = by_name[to_string(x.row->what)];
    sum.what = x.row->what;
    errors.push_back(x.error());
    sum.band_coverage += x.covered() ? 1 : 0;
  }
  std::vector<metric_summary> out;
  for (auto& [name, entry] : by_name) {
    metric_summary sum = entry.first;
    sum.points = entry.second.size();
    sum.mdape = median(entry.second);
    sum.band_coverage /= double(sum.points);
    out.push_back(sum);
  }
  return out;
}

namespace {

validation_scope summarize(std::string name, std::vector<cv_prediction> p) {
  validation_scope s{std::move(name), std::move(p), {}, 0, 0, 0};
  s.metrics = summarize_by_metric(s.predictions);
  std::vector<double> single;
  for (const auto& x : s.predictions) {
    if (single_stream_decode(*x.row)) single.push_back(x.error());
  }
  s.decode = median_ape(s.predictions, true);
  s.single = single.empty() ? std::numeric_limits<double>::quiet_NaN() : median(single);
  s.prefill = median_ape(s.predictions, false);
  return s;
}

}  // namespace

validation validate(const std::vector<measurement>& rows, bool refit) {
  validation v;
  if (!refit) {
    v.scopes.push_back(summarize("shipped", predict_shipped(rows)));
    return v;
  }
  const std::vector<profile_scope> scopes{profile_scope::defaults, profile_scope::global, profile_scope::engine,
                                          profile_scope::engine_and_class};
  std::vector<std::vector<cv_prediction>> held_out = cross_validate(rows, scopes);
  for (std::size_t i = 0; i < scopes.size(); ++i) {
    v.scopes.push_back(summarize(std::string(to_string(scopes[i])), std::move(held_out[i])));
  }
  // Within 0.1 point the lower decode MdAPE, then the finer scope, whose extra
  // groups hold a single source each, which leave-one-source-out cannot score.
  const auto headline = [](const validation_scope& s) {
    return (std::isnan(s.single) ? 0 : s.single) + (std::isnan(s.prefill) ? 0 : s.prefill);
  };
  for (std::size_t i = 1; i < v.scopes.size(); ++i) {
    const double a = headline(v.scopes[i]), b = headline(v.best());
    if (a < b - 1e-3 || (a <= b + 1e-3 && v.scopes[i].decode <= v.best().decode + 1e-3)) v.chosen = i;
  }
  return v;
}

std::string likely_reason(const measurement& m, double ratio) {
  // Tokens/s metrics over-predict above 1; times (TTFT, TPOT, latency) below.
  const bool time_metric = m.what == metric::ttft_ms || m.what == metric::tpot_ms || m.what == metric::e2e_latency_s;
  const bool too_fast = time_metric ? ratio < 1 : ratio > 1;
  if (m.notes.find("uncertain") != std::string::npos || m.notes.find("not clear") != std::string::npos) {
    return "the source marks this reading as uncertain";
  }
  if (m.burst) {
    return too_fast ? "burst of requests: host work per running sequence (scheduling, detokenizing and streaming "
                      "hundreds of answers each step) is not modelled"
                    : "burst of requests: the server handles the requests faster than one at a time";
  }
  if (m.split) {
    return "disaggregated prefill and decode: " + std::to_string(m.split->prefill_instances) + "P" +
           std::to_string(m.split->decode_instances) +
           "D, the KV hand-over and the router's queueing are modelled from no measured split";
  }
  if (m.closed_loop) {
    return too_fast ? "fixed-concurrency benchmark: request handling and prefill interference under in-flight "
                      "batching are not modelled"
                    : "fixed-concurrency benchmark: the queue forms later than the KV slots predict";
  }
  if (m.plan.pp > 1 && !decode_metric(m.what)) {
    return "llama.cpp layer split over " + std::to_string(m.plan.pp) +
           " GPUs: the prompt pipelines far less than micro-batching allows (70B Q4_K_M on 4 GPUs prefills no "
           "faster than on one)";
  }
  if (m.plan.pp > 1) return "llama.cpp layer split over " + std::to_string(m.plan.pp) + " GPUs: per-GPU overheads and PCIe hops beyond the model";
  if (m.includes_prefill) return "throughput over the whole static-batch run (prefill, scheduling) measured end to end";
  if (!decode_metric(m.what) && m.prompt + m.depth >= 4096) {
    return "long prompt: attention cost depends on the kernel (FlashAttention or not) more than on the roofs";
  }
  if (decode_metric(m.what) && m.batch == 1 && too_fast && m.dev.memory_kind_of() == memory_kind::hbm) {
    return "batch-1 decode GEMMs on HBM stream ~1.1 TB/s whatever the peak (llama.cpp on A100/H100, TensorRT-LLM 0.5 "
           "on H100): short kernels keep too few bytes in flight; the points this engine's fit saw do not show it";
  }
  if (m.arch.is_moe()) return "MoE kernels (routing, grouped GEMMs) reach less than dense kernels";
  if (m.dev.vendor == "Apple") return "this Apple GPU reaches a different share of its bandwidth than its class";
  return too_fast ? "predicted too fast: this device/engine pair reaches less than its group's efficiency"
                  : "predicted too slow: this device/engine pair beats its group's efficiency";
}

}  // namespace llmroof
