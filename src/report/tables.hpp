// What the report files share: the Python types of their keys, the
// deployment's keys every report opens with, and each report's key list for
// keys_of (one report per file: plan.cpp, steps.cpp, users.cpp, compare.cpp,
// recommend.cpp, calibration.cpp; json.cpp the shared pieces and the registry).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "report/json.hpp"

namespace llmroof::report {

// Python types of the keys (the generated stubs' annotations).
inline constexpr std::string_view rows_t = rows_type;
inline constexpr std::string_view object_t = "dict[str, Any]";
inline constexpr std::string_view maybe_object_t = "dict[str, Any] | None";
inline constexpr std::string_view maybe_float_t = "float | None";

/// A number or null.
json optional(const std::optional<double>& x);
/// The deployment's keys (model, formats, device, layout, engine, ...).
const field_table<setup>& setup_fields();
json fit_json(const weights_fit& f);
json params_json(const architecture& a, const param_counts& p);

/// `own` after the report's schema and the deployment's keys (`V::s`).
template <class V>
field_table<V> report_table(std::string_view schema, field_table<V> own) {
  field_table<V> t;
  t.push_back({"schema", "str", "The report's schema (docs/cli-json.md).", [schema](const V&) { return json(schema); }});
  for (const field<setup>& f : setup_fields()) {
    t.push_back({f.key, f.type, f.doc, [g = f.get](const V& v) { return g(v.s); }});
  }
  for (field<V>& f : own) t.push_back(std::move(f));
  return t;
}

/// A table's keys, types and docstrings (keys_of; the generated stubs).
template <class V>
std::vector<key_doc> keys(const field_table<V>& t) {
  std::vector<key_doc> out;
  for (const field<V>& f : t) out.push_back({f.key, f.type, f.doc});
  return out;
}

// Each report's keys, from its own file.
std::vector<key_doc> plan_keys();
std::vector<key_doc> decode_keys();
std::vector<key_doc> prefill_keys();
std::vector<key_doc> speculative_keys();
std::vector<key_doc> kv_keys();
std::vector<key_doc> users_keys();
std::vector<key_doc> moe_keys();
std::vector<key_doc> compare_keys();
std::vector<key_doc> calibrate_keys();
std::vector<key_doc> recommend_keys();

}  // namespace llmroof::report
