// JSON reports shared by the llmroof command and the Python bindings, so that
// both print the same numbers under the same schema (docs/cli-json.md).
// Internal: not installed, not part of the public API.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string_view>
#include <vector>

#include "llmroof/llmroof.hpp"
#include "llmroof/calibration/calibrate.hpp"
#include "llmroof/deployment.hpp"
#include "llmroof/model/readers.hpp"

namespace llmroof::report {

using json = nlohmann::ordered_json;

/// `v` rounded to a whole number with thousands separators (131,072): the
/// command's text and the Python reprs write numbers alike.
std::string thousands(double v);

/// What the KV cache's bytes per token leave out where sliding windows make
/// the slope fall past them: ", 36,864 B past the sliding windows"; empty
/// when nothing does. The command's and the Python text's one wording.
std::string kv_past_windows_text(double per_token, double past_windows);

/// What a report was computed for (deployment.hpp).
using setup = deployment;

/// One key of a report, written once: its name in the JSON, its type as
/// Python sees it (the `_core.reports` stubs are generated from it), what it
/// holds (the property's docstring), and how it is read from the report's
/// parts (a discarded value: the key is absent from this report).
template <class V>
struct field {
  std::string_view key;
  std::string_view type;
  std::string_view doc;
  std::function<json(const V&)> get;
};

template <class V>
using field_table = std::vector<field<V>>;

/// The Python type of a key that holds a list of rows (each a JSON object):
/// the bindings give such a key a `<key>_frame()`.
inline constexpr std::string_view rows_type = "list[dict[str, Any]]";

/// The value of a key that this report does not hold.
inline json absent() { return json(json::value_t::discarded); }

/// `v` as a JSON object: each key of `table` in order, but those absent.
template <class V>
json object_json(const field_table<V>& table, const V& v) {
  json j = json::object();
  for (const field<V>& f : table) {
    json x = f.get(v);
    if (!x.is_discarded()) j[std::string(f.key)] = std::move(x);
  }
  return j;
}

/// A key of a report as the bindings show it (name, Python type, docstring).
struct key_doc {
  std::string_view key;
  std::string_view type;
  std::string_view doc;
};

/// The keys of a report by its schema ("llmroof.plan/1", ...: plan, decode,
/// prefill, speculative, kv, users, moe, compare, calibrate, phase), in the
/// JSON's order. Throws std::invalid_argument for another name.
const std::vector<key_doc>& keys_of(std::string_view schema);

json model_source_json(const model_source& m);

json phase_json(const phase_timing& p);
/// The `key`-th key of phase_json (keys_of("phase") order), alone: what a
/// compiled phase's property reads without building the whole report.
json phase_value(const phase_timing& p, std::size_t key);
json memory_json(const memory_plan& m);
/// An engine's settings, as `list engines --json` prints them.
json engine_json(const engine_settings& e);
json setup_json(const setup& s);
json efficiency_json(const efficiency_profile& e);

/// When a plan does not fit: what would (plan_result::alternatives).
/// A shared prefix's reuse (null without a prefix); `ttft_cached` when known.
json prefix_json(const prefix_reuse& r, const std::optional<phase_timing>& ttft_cached);
json alternatives_json(const std::vector<alternative>& alts);

/// "llmroof.plan/1": the plan job's answer (jobs/plan_job.hpp), its load,
/// P/D rows, speculative table and energy among it.
json plan_json(const plan_answer& a);
/// Aggregated and disaggregated rows ("disaggregation" of a plan).
json pd_json(const pd_comparison& c);
/// Power, energy per output token and cost (null where unknown).
json energy_json(const energy_cost& e);
/// "llmroof.decode/1"
json decode_json(const setup& s, const roofline& r, double batch, double context, const phase_timing& p,
                 const energy_cost& energy);
/// "llmroof.speculative/1": speculative decoding at a batch and against batch.
json speculative_json(const setup& s, const speculation& spec, const speculative_table& t);
/// "llmroof.prefill/1"
json prefill_json(const setup& s, double batch, double prompt, double cached, const phase_timing& p);
/// "llmroof.moe/1": routing, bytes and speed of a MoE model against batch,
/// beside a dense model of the same total size.
json moe_json(const setup& s, const moe_analysis& m, const weights_fit& fit);
/// "llmroof.moe_table/1": total and active parameters of every catalog MoE model.
json moe_table_json(const std::vector<moe_model_row>& rows);
/// "llmroof.compare/1": two models side by side against batch.
json compare_json(const setup& a, const setup& b, const model_comparison& c);
/// The load section of a plan (null without load): the open loop's steady
/// state at a rate and its capacity (utilisation = rate / the highest stable
/// rate), or the closed loop of N users; either with `saturation`.
json load_json(const served_load& l, double output);
/// N closed-loop users (a plan's `load`, users' `closed_loop`).
json closed_loop_json(const closed_loop_result& c, double output);
/// "llmroof.calibrate/1": fitted profiles with their spread and residuals.
json calibrate_json(const measurement_set& set, profile_scope scope, const profile_table& t);

/// `llmroof validate --json` and llmroof.validate: the scopes' headline
/// errors, MdAPE and band coverage per metric, and every row of the chosen
/// (or shipped) predictions with its band.
json validate_json(const measurement_set& set, const validation& v, bool refit);
/// The validation report as Markdown (`source`: the points file's name).
std::string validation_markdown(const measurement_set& set, const validation& v, bool refit, const std::string& source);
/// The chosen scope's predictions, one CSV row each, with the likely reason.
std::string predictions_csv(const validation_scope& best);
/// Writes report.md and predictions.csv into `dir` (created if missing).
/// Throws std::invalid_argument naming the folder or file it cannot write.
void write_validation_report(const std::string& dir, const std::string& markdown, const std::string& csv);
/// "llmroof.users/1": the users job's answer (jobs/users_job.hpp): the most
/// users meeting a tokens/s and a TTFT target, their loop and energy.
json users_json(const users_answer& a);
/// "llmroof.recommend/1": every candidate of a search, the recommendation,
/// the front, the best per device kind and the closest misses.
json recommend_json(const recommend_input& in, const recommendation& r);
/// "llmroof.kv/1"
json kv_json(const setup& s, double context, double users, const kv_breakdown& kv);

}  // namespace llmroof::report
