// JSON reports of the command and the Python bindings (schema: docs/cli-json.md): recommend.
#include "report/tables.hpp"

#include <cmath>
#include <string>

namespace llmroof::report {
namespace {


json candidate_json(const recommend_input& in, const recommendation& r, std::size_t i) {
  const candidate& c = r.candidates[i];
  return {{"index", i},
          {"model", in.labels.empty() ? in.models[c.model].model.id : in.labels[c.model]},
          {"device", in.pool[c.pool].dev.id},
          {"devices", c.devices},
          {"engine", c.engine},
          {"weights", c.weights},
          {"kv", c.kv},
          {"weight_bits", c.weight_bits},
          {"kv_bits", c.kv_bits},
          {"layout", c.layout_label()},
          {"tp", c.layout.tp},
          {"pp", c.layout.pp},
          {"ep", c.layout.ep},
          {"dp_attention", c.layout.attention_data_parallel()},
          {"replicas", c.replicas},
          {"prefill_instances", c.prefill_instances},
          {"decode_instances", c.decode_instances},
          {"offload", c.offload},
          {"mtp", c.mtp},
          {"users_per_instance", c.users_per_instance},
          {"tokens_per_s_per_user", c.tokens_per_s_per_user},
          {"tokens_per_s_per_user_slow", c.tokens_per_s_per_user_slow},
          {"ttft_s", c.ttft_s},
          {"ttft_slow_s", c.ttft_slow_s},
          {"output_tokens_per_s", c.output_tokens_per_s},
          {"tokens_per_s_per_device", c.tokens_per_s_per_device()},
          {"power_w", optional(c.power_w)},
          {"joules_per_token", optional(c.joules_per_token)},
          {"cost_per_hour", optional(c.cost_per_hour)},
          {"cost_per_million", optional(c.cost_per_million)},
          {"purchase", optional(c.purchase)},
          {"max_users", c.max_users},
          {"max_context", c.max_context},
          {"status", to_string(c.status)},
          {"reason", c.reason},
          {"miss", c.miss},
          {"on_front", c.on_front}};
}

struct recommend_view {
  const recommend_input& in;
  const recommendation& r;
};

json candidate_rows(const recommend_view& v, const std::vector<std::size_t>& which) {
  json rows = json::array();
  for (std::size_t i : which) rows.push_back(candidate_json(v.in, v.r, i));
  return rows;
}

constexpr std::string_view candidate_keys =
    "index, model, device, devices, engine, weights, kv, weight_bits, kv_bits, layout (\"2 x TP 1\", \"1P3D of TP 2\"), tp, pp, ep, dp_attention, "
    "replicas, prefill_instances, decode_instances, offload, mtp, users_per_instance, tokens_per_s_per_user and its "
    "_slow edge, ttft_s and ttft_slow_s, output_tokens_per_s, tokens_per_s_per_device, power_w, joules_per_token, "
    "cost_per_hour, cost_per_million (None where unknown), max_users, max_context, status (meets, at_risk, misses, "
    "no_fit), reason, miss, on_front";

const field_table<recommend_view>& recommend_fields() {
  using V = recommend_view;
  static const std::string rows_doc = std::string("Every candidate searched (pruned: those the answer draws on), one row each: ") + std::string(candidate_keys) + ".";
  static const field_table<V> t = {
      {"schema", "str", "The report's schema (docs/cli-json.md).", [](const V&) { return json("llmroof.recommend/1"); }},
      {"models", "list[str]", "The models searched, as named.",
       [](const V& v) {
         json m = json::array();
         for (std::size_t i = 0; i < v.in.models.size(); ++i) {
           m.push_back(v.in.labels.empty() ? v.in.models[i].model.id : v.in.labels[i]);
         }
         return m;
       }},
      {"pool", rows_t, "The device kinds searched: device, count, per_node, price_per_hour (hardware, USD per device-hour; None without a price).",
       [](const V& v) {
         json rows = json::array();
         for (const pool_entry& e : v.in.pool) {
           const bool priced = e.cost.per_device_hour || e.cost.purchase;
           rows.push_back({{"device", e.dev.id},
                           {"count", e.count},
                           {"per_node", e.per_node > 0 ? e.per_node : e.count},
                           {"price_per_hour", priced ? json(hardware_per_device_hour(e.cost)) : json(nullptr)}});
         }
         return rows;
       }},
      {"workload", object_t,
       "users (closed loop) or rate (requests/s, open loop), context, prompt, history (tokens of the conversation a "
       "request finds in its sequence: context - prompt - output, or 0), output, prefix, prefix_hit.",
       [](const V& v) {
         const workload& w = v.in.w;
         json j = {{"users", v.in.rate ? json(nullptr) : json(w.users)},
                   {"rate", v.in.rate ? json(*v.in.rate) : json(nullptr)},
                   {"context", w.context},
                   {"prompt", w.prompt_tokens()},
                   {"history", w.history()},
                   {"output", w.output},
                   {"prefix", w.prefix},
                   {"prefix_hit", w.prefix_hit ? json(*w.prefix_hit) : json(nullptr)}};
         return j;
       }},
      {"targets", object_t,
       "The SLOs (0: none): ttft_s, min_tokens_per_s_per_user, max_cost_per_million, max_joules_per_token, "
       "budget (USD to buy the devices).",
       [](const V& v) {
         return json{{"ttft_s", v.in.target.ttft.value()},
                     {"min_tokens_per_s_per_user", v.in.target.min_tokens_per_s},
                     {"max_cost_per_million", v.in.target.max_cost_per_million},
                     {"max_joules_per_token", v.in.target.max_joules_per_token},
                     {"budget", v.in.target.max_purchase}};
       }},
      {"searched", "int", "Candidates searched (scored), kept or not.", [](const V& v) { return json(v.r.searched); }},
      {"pruned", "bool",
       "Whether the search scored more candidates than it keeps whole (100,000): candidates then holds those the "
       "answer draws on (per model and device kind the best of each status and cost, the fronts, the closest "
       "misses, the published start), counts all of them.",
       [](const V& v) { return json(v.r.pruned); }},
      {"counts", object_t, "Candidates per status: meets, at_risk, misses, no_fit.",
       [](const V& v) {
         json j = json::object();
         for (std::size_t k = 0; k < verdict_names.size(); ++k) j[std::string(verdict_names[k])] = v.r.counts[k];
         return j;
       }},
      {"met", "bool",
       "Whether a candidate meets every target at its estimate (the command exits 1 when none does).",
       [](const V& v) { return json(v.r.met()); }},
      {"why", "str", "Why the recommended candidate (and what the cheaper ones miss), or what nothing meets.",
       [](const V& v) { return json(v.r.why); }},
      {"best", maybe_object_t,
       "The recommended candidate (a row of candidates): the cheapest meeting every target at its band's slow edge, "
       "else at its estimate (status at_risk); None when none meets them.",
       [](const V& v) { return v.r.best ? candidate_json(v.in, v.r, *v.r.best) : json(nullptr); }},
      {"published", rows_t,
       "Each model as published on one device of each kind under the first engine tried (the search's first "
       "candidate there): model, device, candidate (its index), status, reason, and when it does not hold the "
       "users, fixes: each change alone that would (a plan's alternatives: change, fits, users, context, devices, "
       "weights, kv, max_users_at_context, per_user_tokens_per_s_estimate, total_tokens_per_s_estimate).",
       [](const V& v) {
         json rows = json::array();
         for (const published_start& p : v.r.published) {
           const candidate& c = v.r.candidates[p.candidate];
           rows.push_back({{"model", v.in.labels.empty() ? v.in.models[p.model].model.id : v.in.labels[p.model]},
                           {"device", v.in.pool[p.pool].dev.id},
                           {"candidate", p.candidate},
                           {"status", to_string(c.status)},
                           {"reason", c.reason},
                           {"fixes", alternatives_json(p.fixes)}});
         }
         return rows;
       }},
      {"front", rows_t,
       "The Pareto front over tokens/s per user, tokens/s per device, cost (USD per hour with prices, else "
       "devices), weight and KV bits, cheapest first: of the candidates meeting the targets, or of every served one when none does.",
       [](const V& v) { return candidate_rows(v, v.r.front); }},
      {"per_device", rows_t, "The best candidate on each device kind of the pool (the runner-up per kind).",
       [](const V& v) { return candidate_rows(v, v.r.per_device); }},
      {"closest", rows_t, "When nothing meets the targets: the nearest misses, nearest first (miss: by how much).",
       [](const V& v) { return candidate_rows(v, v.r.closest); }},
      {"candidates", rows_t, rows_doc,
       [](const V& v) {
         std::vector<std::size_t> all(v.r.candidates.size());
         for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
         return candidate_rows(v, all);
       }},
  };
  return t;
}


}  // namespace


json recommend_json(const recommend_input& in, const recommendation& r) {
  return object_json(recommend_fields(), recommend_view{in, r});
}

std::vector<key_doc> recommend_keys() { return keys(recommend_fields()); }

}  // namespace llmroof::report
