// JSON reports of the command and the Python bindings (schema: docs/cli-json.md): moe, the MoE table and compare.
#include "report/tables.hpp"

#include <cmath>
#include <string>

namespace llmroof::report {
json moe_table_json(const std::vector<moe_model_row>& rows) {
  json out = json::array();
  for (const moe_model_row& m : rows) {
    json row = params_json(*m.model, m.params);
    row["model"] = m.model->id;
    row["published_total_b"] = m.model->published_total_b;
    row["published_active_b"] = m.model->published_active_b;
    out.push_back(row);
  }
  return {{"schema", "llmroof.moe_table/1"}, {"models", out}};
}

namespace {


struct moe_view {
  const setup& s;
  const moe_analysis& m;
  const weights_fit& fit;
};

const field_table<moe_view>& moe_fields() {
  using V = moe_view;
  static const field_table<V> t = report_table<V>(
      "llmroof.moe/1",
      {
          {"context", "float", "Tokens every sequence holds.", [](const V& v) { return json(v.m.decode.context); }},
          {"parameters", object_t,
           "Total and active parameters (total, active, active_with_embedding, active_share, routed_experts, mtp) "
           "and the routing (num_experts, experts_per_token, shared_experts, mtp_layers).",
           [](const V& v) { return params_json(v.s.model, v.m.decode.first_params); }},
          {"routed_expert_params", "float", "One expert's parameters x MoE layers.",
           [](const V& v) { return json(v.m.routed_expert_params); }},
          {"fit", object_t,
           "The weights against the deployment: weights_fit, weight_bytes, usable_bytes, short_bytes, "
           "max_users_at_context.",
           [](const V& v) { return fit_json(v.fit); }},
          {"dense_equivalent", object_t, "The dense model of the same total size: model, params_total, ffn_size, tp, pp.",
           [](const V& v) {
             const model_comparison& c = v.m.decode;
             return json{{"model", v.m.dense.id},
                         {"params_total", c.second_params.total()},
                         {"ffn_size", v.m.dense.ffn_size},
                         {"tp", c.second_layout.tp},
                         {"pp", c.second_layout.pp}};
           }},
          {"weights_crossover_batch", maybe_float_t,
           "First batch reading at least (to within 1%) the dense model's weight bytes per device, or None.",
           [](const V& v) { return optional(v.m.weights_crossover); }},
          {"speed_crossover_batch", maybe_float_t, "First batch where the MoE model is no faster per user, or None.",
           [](const V& v) { return optional(v.m.decode.speed_crossover); }},
          {"batches", rows_t,
           "Per batch: experts_per_layer (and _sd), expert_share_read, expert_weight_bytes, bytes_per_step, "
           "weight_bytes_per_step, per_user_tokens_per_s_estimate/_bound, total_tokens_per_s_estimate, bottleneck, "
           "the dense model's dense_bytes_per_step, dense_weight_bytes_per_step, "
           "dense_per_user_tokens_per_s_estimate, and kv_fits.",
           [](const V& v) {
             const model_comparison& c = v.m.decode;
             json out = json::array();
             for (std::size_t i = 0; i < c.batches.size(); ++i) {
               const double n = c.batches[i];
               const phase_timing& moe = c.first[i];
               const phase_timing& d = c.second[i];
               const routing_row& route = v.m.routing[i];
               out.push_back({{"batch", n},
                              {"experts_per_layer", route.experts_per_layer},
                              {"experts_per_layer_sd", route.experts_per_layer_sd},
                              {"expert_share_read", route.experts_per_layer / v.s.model.moe.num_experts},
                              {"expert_weight_bytes", route.expert_weights.value()},
                              {"bytes_per_step", moe.counts.total_bytes().value()},
                              {"per_user_tokens_per_s_estimate", 1.0 / moe.estimate.value()},
                              {"per_user_tokens_per_s_bound", 1.0 / moe.bound.value()},
                              {"total_tokens_per_s_estimate", n / moe.estimate.value()},
                              {"bottleneck", to_string(moe.limit())},
                              {"weight_bytes_per_step", moe.counts.weight_bytes().value()},
                              {"dense_bytes_per_step", d.counts.total_bytes().value()},
                              {"dense_weight_bytes_per_step", d.counts.weight_bytes().value()},
                              {"dense_per_user_tokens_per_s_estimate", 1.0 / d.estimate.value()},
                              {"kv_fits", v.fit.holds(n)}});
             }
             return out;
           }},
      });
  return t;
}

struct compare_view {
  const setup& a;
  const setup& b;
  const model_comparison& c;
};

json side_json(const setup& s, const param_counts& p, const weights_fit& fit) {
  json j = setup_json(s);
  j["parameters"] = params_json(s.model, p);
  j["fit"] = fit_json(fit);
  return j;
}

const field_table<compare_view>& compare_fields() {
  using V = compare_view;
  static const field_table<V> t = {
      {"schema", "str", "The report's schema (docs/cli-json.md).", [](const V&) { return json("llmroof.compare/1"); }},
      {"device", "str", "The first side's device (catalog id); the second's is in `second`.",
       [](const V& v) { return json(v.a.dev().id); }},
      {"devices", "int", "Devices of the first side.", [](const V& v) { return json(v.a.devices()); }},
      {"same_devices", "bool", "Whether both sides run on the same machine (under one engine the second is laid out on its device plan).",
       [](const V& v) { return json(same_devices(v.a, v.b)); }},
      {"context", "float", "Tokens every sequence holds.", [](const V& v) { return json(v.c.context); }},
      {"first", object_t, "The first side's deployment (as a plan's), parameters and fit.",
       [](const V& v) { return side_json(v.a, v.c.first_params, v.c.first_fit); }},
      {"second", object_t, "The second side's deployment, parameters and fit.",
       [](const V& v) { return side_json(v.b, v.c.second_params, v.c.second_fit); }},
      {"bytes_crossover_batch", maybe_float_t, "First batch where the first model's step reads as many bytes, or None.",
       [](const V& v) { return optional(v.c.bytes_crossover); }},
      {"speed_crossover_batch", maybe_float_t, "First batch where the first model is no faster per user, or None.",
       [](const V& v) { return optional(v.c.speed_crossover); }},
      {"held_batch", "float",
       "Largest batch up to the table's last that both sides hold at the context (0: one side does not fit); the "
       "conclusion reads only batches up to it.",
       [](const V& v) { return json(v.c.held_batch()); }},
      {"held_speed_crossover_batch", maybe_float_t,
       "speed_crossover_batch where both sides hold it, else None (the conclusion the command prints).",
       [](const V& v) { return optional(v.c.held_speed_crossover()); }},
      {"batches", rows_t,
       "Per batch: first_/second_bytes_per_step, first_/second_per_user_tokens_per_s_estimate and _bound, "
       "first_/second_total_tokens_per_s_estimate, first_/second_holds (the side's weights fit and its KV room "
       "takes the batch: a batch one side does not hold decides nothing).",
       [](const V& v) {
         const model_comparison& c = v.c;
         json out = json::array();
         for (std::size_t i = 0; i < c.batches.size(); ++i) {
           out.push_back({{"batch", c.batches[i]},
                          {"first_bytes_per_step", c.first[i].counts.total_bytes().value()},
                          {"second_bytes_per_step", c.second[i].counts.total_bytes().value()},
                          {"first_per_user_tokens_per_s_estimate", 1.0 / c.first[i].estimate.value()},
                          {"second_per_user_tokens_per_s_estimate", 1.0 / c.second[i].estimate.value()},
                          {"first_per_user_tokens_per_s_bound", 1.0 / c.first[i].bound.value()},
                          {"second_per_user_tokens_per_s_bound", 1.0 / c.second[i].bound.value()},
                          {"first_total_tokens_per_s_estimate", c.batches[i] / c.first[i].estimate.value()},
                          {"second_total_tokens_per_s_estimate", c.batches[i] / c.second[i].estimate.value()},
                          {"first_holds", c.holds(true, c.batches[i])},
                          {"second_holds", c.holds(false, c.batches[i])}});
         }
         return out;
       }},
  };
  return t;
}


}  // namespace


json moe_json(const setup& s, const moe_analysis& m, const weights_fit& fit) {
  return object_json(moe_fields(), moe_view{s, m, fit});
}

json compare_json(const setup& a, const setup& b, const model_comparison& c) {
  return object_json(compare_fields(), compare_view{a, b, c});
}

std::vector<key_doc> moe_keys() { return keys(moe_fields()); }
std::vector<key_doc> compare_keys() { return keys(compare_fields()); }

}  // namespace llmroof::report
