// JSON reports of the command and the Python bindings (schema: docs/cli-json.md): calibrate and validate.
#include "report/tables.hpp"

#include <cmath>
#include <string>

namespace llmroof::report {
namespace {


json skipped_rows(const measurement_set& set) {
  json skipped = json::array();
  for (const auto& sk : set.skipped) skipped.push_back({{"id", sk.id}, {"reason", sk.reason}});
  return skipped;
}

struct calibrate_view {
  const measurement_set& set;
  profile_scope scope;
  const profile_table& t;
};

const field_table<calibrate_view>& calibrate_fields() {
  using V = calibrate_view;
  static const field_table<V> t = {
      {"schema", "str", "The report's schema (docs/cli-json.md).", [](const V&) { return json("llmroof.calibrate/1"); }},
      {"scope", "str", "Profiles per: global, engine or engine-kind.", [](const V& v) { return json(to_string(v.scope)); }},
      {"points", "int", "Rows mapped onto catalog models and devices.", [](const V& v) { return json(v.set.rows.size()); }},
      {"skipped", "int", "Rows that could not be mapped (skipped_rows says why).",
       [](const V& v) { return json(v.set.skipped.size()); }},
      {"fits", rows_t,
       "One fit per group (key): memory, compute, attention, kv_memory, low_precision, compute_half_rows, "
       "stream_cap_bytes_per_s, the overheads per_step_s, per_kernel_s, per_request_s, the spreads (*_sd), "
       "points, median_ape and residuals.",
       [](const V& v) {
         json fits = json::array();
         for (const auto& [key, r] : v.t.fits) {
           fits.push_back({{"key", key.empty() ? "global" : key}, {"memory", r.profile.memory}, {"memory_sd", r.memory_sd},
                           {"compute", r.profile.compute}, {"compute_sd", r.compute_sd},
                           {"attention", r.profile.attention}, {"per_step_s", r.profile.per_step.value()},
                           {"per_step_sd_s", r.per_step_sd}, {"per_kernel_s", r.profile.per_kernel.value()},
                           {"per_kernel_sd_s", r.per_kernel_sd}, {"kv_memory", r.profile.kv_memory},
                           {"low_precision", r.profile.low_precision},
                           {"compute_half_rows", r.profile.compute_half_rows},
                           {"stream_cap_bytes_per_s", r.profile.stream_cap},
                           {"per_request_s", r.profile.per_request.value()}, {"per_request_sd_s", r.per_request_sd},
                           {"points", r.points}, {"median_ape", r.median_ape}, {"residuals", r.residuals}});
         }
         return fits;
       }},
      {"skipped_rows", rows_t, "Each unmapped row: id and reason.", [](const V& v) { return skipped_rows(v.set); }},
  };
  return t;
}


}  // namespace


json calibrate_json(const measurement_set& set, profile_scope scope, const profile_table& t) {
  return object_json(calibrate_fields(), calibrate_view{set, scope, t});
}

json validate_json(const measurement_set& set, const validation& v, bool refit) {
  const auto num = [](double x) { return std::isnan(x) ? json(nullptr) : json(x); };
  json j = {{"schema", "llmroof.validate/1"}, {"points", set.rows.size()}, {"skipped", set.skipped.size()},
            {"refit", refit}, {"chosen_scope", v.best().name}};
  json scopes = json::array();
  for (const auto& r : v.scopes) {
    scopes.push_back({{"scope", r.name}, {"decode_mdape", num(r.decode)}, {"single_stream_decode_mdape", num(r.single)},
                      {"prefill_mdape", num(r.prefill)}});
  }
  j["scopes"] = scopes;
  json rows = json::array();
  for (const auto& p : v.best().predictions) {
    const measurement& m = *p.row;
    rows.push_back({{"id", m.id}, {"source", m.source}, {"engine", m.engine}, {"device", m.dev.id},
                    {"devices", m.devices()}, {"memory_kind", to_string(m.dev.memory_kind_of())},
                    {"model", m.arch.id}, {"weights", m.pr.weights.name}, {"metric", metric_label(m)},
                    {"batch", m.batch}, {"prompt", m.prompt}, {"measured", m.value}, {"predicted", p.predicted},
                    {"low", num(p.low)}, {"high", num(p.high)}, {"ape", p.error()},
                    {"speculative", m.spec ? json(to_string(m.spec->method)) : json(nullptr)},
                    {"likely_reason", likely_reason(m, p.predicted / m.value)}});
  }
  json metrics = json::object();
  for (const metric_summary& x : v.best().metrics) {
    metrics[std::string(to_string(x.what))] = {{"points", x.points}, {"mdape", x.mdape}, {"band_coverage", x.band_coverage}};
  }
  j["metrics"] = metrics;
  j["rows"] = rows;
  j["skipped_rows"] = skipped_rows(set);
  return j;
}

std::vector<key_doc> calibrate_keys() { return keys(calibrate_fields()); }

}  // namespace llmroof::report
