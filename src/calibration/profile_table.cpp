// Fitted profiles by scope: the table a row's profile is looked up in, what
// ships in src/engine/profiles_fitted.inc, and the fits per group.
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
// What the command's --scope takes, and what a report says of each scope.
constexpr std::array<std::string_view, 4> scope_names{"defaults", "global", "engine", "engine-kind"};
}  // namespace

std::string_view to_string(profile_scope s) {
  static constexpr std::array<std::string_view, 4> descriptions{
      "class defaults (no fit)", "one global fit", "one fit per engine",
      "one fit per engine and memory kind (HBM, GDDR, unified)"};
  return detail::enum_name(s, descriptions);
}

profile_scope scope_from_name(std::string_view name) {
  if (const auto s = detail::enum_from_name<profile_scope>(name, scope_names)) return *s;
  throw std::invalid_argument("scope must be " + detail::enum_choices(scope_names) + " (got '" + std::string(name) + "')");
}

namespace {
std::string key_of(profile_scope s, const device& d, const std::string& engine) {
  switch (s) {
    case profile_scope::defaults: return "-";
    case profile_scope::global: return "";
    case profile_scope::engine: return engine;
    case profile_scope::engine_and_class: return engine + "/" + std::string(to_string(d.memory_kind_of()));
  }
  return "";
}
}  // namespace

const calibration_result* profile_table::fit_for(const device& d, const std::string& engine, std::string* key) const {
  // An engine version without its own points (llama.cpp-cuda@2024) takes its
  // engine's other version's fit before the global one: the version changes
  // kernel traits, which predict() applies per row, not the efficiencies on
  // each path.
  std::vector<std::string> keys;
  for (const auto& kv : fits) keys.push_back(kv.first);
  const std::vector<std::string> candidates = fit_candidates(engine, keys);
  for (profile_scope s : {profile_scope::engine_and_class, profile_scope::engine, profile_scope::global}) {
    if (static_cast<int>(s) > static_cast<int>(scope)) continue;
    // The one global fit is mostly llama.cpp's points: an engine of its own
    // without a fit keeps its class defaults rather than another engine's.
    if (s == profile_scope::global && scope != profile_scope::global) break;
    for (const std::string& e : candidates) {
      auto it = fits.find(key_of(s, d, e));
      if (it == fits.end()) continue;
      if (key != nullptr) *key = it->first;
      return &it->second;
    }
  }
  return nullptr;
}

efficiency_profile profile_table::for_row(const device& d, const std::string& engine, bool class_defaults) const {
  std::string key;
  if (const auto* f = fit_for(d, engine, &key)) {
    efficiency_profile e = f->banded();
    // As default_profile: another class's streaming cap is not carried.
    if (!key.empty() && fit_of_another_class(engine, key)) e.stream_cap = 0;
    return e;
  }
  // What default_profile(d, engine) gives without the shipped fits. A class
  // default priced from the kernel database rests on none of the measured
  // rows, so even a fold holding the launch-priced default's points keeps it.
  if (find_kernel_class(engine) != nullptr) {
    efficiency_profile c = class_default_profile(d, engine_of_class(engine));
    if (class_defaults || kernel_fitted(c)) return c;
  }
  return default_profile(d);
}

efficiency_profile calibration_result::banded() const {
  efficiency_profile e = profile;
  e.memory_sd = memory_sd;
  e.compute_sd = compute_sd;
  e.per_step_sd = make_seconds(per_step_sd);
  e.per_kernel_sd = make_seconds(per_kernel_sd);
  e.per_request_sd = make_seconds(per_request_sd);
  return e;
}

bool ships(const std::string& key, const calibration_result& r) { return !key.empty() && ships(r); }

bool class_default_point(const measurement& m) {
  const auto ids = class_default_points();
  return m.source.rfind("github.com/gpustack/gpustack", 0) == 0 && std::find(ids.begin(), ids.end(), m.id) != ids.end();
}

bool ships(const calibration_result& r) {
  // The others keep the class defaults: a share known to no better than a
  // quarter of its value is not a default anyone should inherit. A standard
  // error of 0 means the share was not fitted (no points for it).
  const auto pinned = [](double se, double v) { return se > 0 && se <= 0.25 * v; };
  return pinned(r.memory_se, r.profile.memory) && pinned(r.compute_se, r.profile.compute);
}

void write_profile_rows(std::ostream& out, const profile_table& t) {
  out << detail::fitted_row_columns;
  for (const auto& [key, r] : t.fits) {
    if (!ships(key, r)) continue;
    detail::write_row(out, detail::row_of(key.c_str(), r.banded(), static_cast<int>(r.points), r.median_ape));
  }
}

profile_table fit_profiles(const std::vector<measurement>& rows, profile_scope scope) {
  profile_table t;
  t.scope = scope;
  if (scope == profile_scope::defaults || rows.empty()) return t;
  // Fit every coarser scope too, so that rows of unseen groups fall back.
  for (profile_scope s : {profile_scope::global, profile_scope::engine, profile_scope::engine_and_class}) {
    if (static_cast<int>(s) > static_cast<int>(scope)) break;
    std::map<std::string, std::vector<measurement>> groups;
    for (const auto& m : rows) {
      // Closed-loop points mix queueing into the kernel times: predicted, not
      // fitted; one user alone queues behind nobody (a burst is never alone).
      if ((!m.closed_loop || (m.batch == 1 && !m.burst)) && !m.spec) groups[key_of(s, m.dev, m.engine)].push_back(m);
    }
    for (auto& [k, g] : groups) {
      if (g.size() < 6) continue;  // fewer points than twice the fields a stage moves: no fit
      efficiency_profile start = default_profile(g.front().dev);
      start.name = "fitted " + (k.empty() ? std::string("global") : k);
      start.source = "fitted to " + std::to_string(g.size()) + " measured points";
      start.points = static_cast<int>(g.size());
      t.fits[k] = calibrate_two_stage(g, start);
    }
  }
  return t;
}

}  // namespace llmroof
