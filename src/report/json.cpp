// JSON reports of the command and the Python bindings (schema: docs/cli-json.md).
#include "report/json.hpp"

namespace llmroof::report {

json phase_json(const phase_timing& p) {
  json ops = json::array();
  for (std::size_t i = 0; i < p.counts.ops.size(); ++i) {
    const op& o = p.counts.ops[i];
    const op_time& t = p.times[i];
    ops.push_back({{"name", o.name},
                   {"count", o.count},
                   {"flop", o.flop.value()},
                   {"weight_bytes", o.weights.value()},
                   {"kv_read_bytes", o.kv_read.value()},
                   {"kv_written_bytes", o.kv_written.value()},
                   {"activation_bytes", o.activations.value()},
                   {"intensity_flop_per_byte", o.intensity().value()},
                   {"math", to_string(t.math)},
                   {"bound_s", t.bound().value()},
                   {"estimate_s", t.estimate().value()},
                   {"bottleneck", to_string(t.limit())}});
  }
  return {{"phase", to_string(p.counts.kind)},
          {"sequences", p.counts.sequences},
          {"new_tokens", p.counts.new_tokens},
          {"flop", p.counts.total_flop().value()},
          {"bytes", p.counts.total_bytes().value()},
          {"weight_bytes", p.counts.weight_bytes().value()},
          {"kv_read_bytes", p.counts.kv_read_bytes().value()},
          {"bound_s", p.bound.value()},
          {"estimate_s", p.estimate.value()},
          {"tokens_per_s_bound", p.tokens_per_s_bound().value()},
          {"tokens_per_s_estimate", p.tokens_per_s_estimate().value()},
          {"bottleneck", to_string(p.limit())},
          {"ops", ops}};
}

json format_json(const numeric_format& f) {
  return {{"name", f.name}, {"bits", f.bits}, {"math", to_string(f.math)}};
}

json model_source_json(const model_source& m) {
  json j = {{"path", m.path},
            {"family", m.arch.family},
            {"quantized", m.quantized},
            {"vision_params", m.vision_params},
            {"warnings", m.warnings},
            {"formats", {{"weights", format_json(m.pr.weights)},
                         {"attention", format_json(m.pr.attention_format())},
                         {"ffn", format_json(m.pr.ffn_format())},
                         {"experts", format_json(m.pr.experts_format())},
                         {"embedding", format_json(m.pr.embedding)},
                         {"lm_head", format_json(m.pr.lm_head)},
                         {"kv", format_json(m.pr.kv)}}}};
  if (m.tensors) {
    json by_component = json::object();
    for (const auto& [c, b] : m.tensors->bytes) {
      by_component[std::string(to_string(c))] = {{"bytes", b}, {"elements", m.tensors->elements.at(c)}};
    }
    json by_type = json::object();
    for (const auto& [t, b] : m.tensors->bytes_by_type) {
      by_type[t] = {{"bytes", b}, {"elements", m.tensors->elements_by_type.at(t)}};
    }
    j["tensors"] = {{"count", m.tensors->tensors},
                    {"bytes", m.tensors->total_bytes()},
                    {"elements", m.tensors->total_elements()},
                    {"by_component", by_component},
                    {"by_type", by_type}};
  } else {
    j["tensors"] = nullptr;
  }
  return j;
}

json engine_json(const engine_settings& e) {
  json j = {{"name", e.name()},
            {"version", e.version},
            {"memory_utilization", e.memory_utilization},
            {"block_tokens", e.block_tokens},
            {"max_batched_tokens", e.max_batched_tokens},
            {"max_sequences", e.max_sequences},
            {"sampler_copies", e.sampler_copies},
            {"runtime_reserve_bytes", e.runtime_reserve.value()},
            {"collective_reserve_bytes", e.collective_reserve.value()},
            {"source", e.source}};
  j["max_model_len"] = e.max_model_len ? json(*e.max_model_len) : json(nullptr);
  return j;
}

json setup_json(const setup& s) {
  json j = {{"model", s.model.id},
            {"weights", s.pr.weights.name},
            {"kv", s.pr.kv.name},
            {"lm_head", s.pr.lm_head.name},
            {"formats", {{"attention", s.pr.attention_format().name},
                         {"ffn", s.pr.ffn_format().name},
                         {"experts", s.pr.experts_format().name},
                         {"embedding", s.pr.embedding.name}}},
            {"formats_from", s.formats_from}};
  j["checkpoint"] = s.checkpoint.empty() ? json(nullptr) : json(s.checkpoint);
  if (s.has_device()) {
    j["device"] = s.dev().id;
    j["devices"] = s.devices();
    j["parallel"] = {{"tp", s.parallel().tp},
                     {"pp", s.parallel().pp},
                     {"ep", s.parallel().ep},
                     {"nodes", s.parallel().nodes()},
                     {"devices_per_node", s.parallel().devices_per_node},
                     {"link", s.devices() > 1 ? json(detail::collective_link(s.parallel(), s.dev()).id) : json(nullptr)}};
    j["engine"] = s.engine.name();
    j["engine_settings"] = engine_json(s.engine);
  }
  if (s.source != nullptr) j["model_source"] = model_source_json(*s.source);
  return j;
}

json memory_json(const memory_plan& m) {
  return {{"device_memory_bytes", m.device_memory.value()},
          {"capacity_bytes", m.capacity.value()},
          {"usable_bytes", m.usable.value()},
          {"memory_utilization", m.capacity.value() > 0 ? m.usable.value() / m.capacity.value() : 0},
          {"weight_bytes", m.weights.value()},
          {"reserve_bytes", m.reserve.value()},
          {"activation_bytes", m.activations.value()},
          {"kv_budget_bytes", m.kv_budget.value()},
          {"kv_bytes_per_token", m.kv_per_token.value()},
          {"kv_bytes_per_sequence", m.kv_per_sequence.value()},
          {"kv_bytes_needed", m.kv_needed.value()},
          {"users", m.users},
          {"context", m.context},
          {"weights_fit", m.weights_fit},
          {"fits", m.fits},
          {"shortfall_bytes", m.shortfall().value()},
          {"headroom_bytes", m.headroom().value()},
          {"max_users_at_context", m.max_sequences},
          {"max_context_for_users", m.max_context},
          {"kv_blocks", m.kv_blocks},
          {"kv_tokens", m.kv_tokens},
          {"max_model_len", m.max_model_len},
          {"max_concurrency", m.max_concurrency},
          {"starts", m.starts},
          {"longest_start_context", m.longest_start}};
}


json alternatives_json(const std::vector<alternative>& alts) {
  json out = json::array();
  for (const alternative& x : alts) {
    out.push_back({{"change", x.change},
                   {"fits", x.fits},
                   {"users", x.users},
                   {"context", x.context},
                   {"devices", x.devices},
                   {"weights", x.weights},
                   {"kv", x.kv},
                   {"max_users_at_context", x.max_users_at_context},
                   {"per_user_tokens_per_s_estimate", x.per_user_tokens_per_s()},
                   {"total_tokens_per_s_estimate", x.total_tokens_per_s()}});
  }
  return out;
}

json efficiency_json(const efficiency_profile& e) {
  return {{"name", e.name},
          {"memory", e.memory},
          {"compute", e.compute},
          {"compute_half_rows", e.compute_half_rows},
          {"attention", e.attention},
          {"per_kernel_s", e.per_kernel.value()},
          {"per_launch_s", e.per_launch.value()},
          {"per_step_s", e.per_step.value()},
          {"per_request_s", e.per_request.value()},
          {"kv_memory", e.kv_memory},
          {"low_precision", e.low_precision},
          {"stream_cap_bytes_per_s", e.stream_cap},
          {"fp16_accumulate", e.fp16_accumulate},
          {"fused_attention", e.fused_attention},
          {"quantized_path", to_string(e.quantized_path)},
          {"host_overlap", to_string(e.overlap)},
          {"scheduler_steps", e.scheduler_steps},
          {"source", e.source},
          {"points", e.points}};
}

json plan_json(const setup& s, const roofline& r, const plan_result& res, const served_load& load, double output) {
  json j = {{"schema", "llmroof.plan/1"}};
  j.update(setup_json(s));
  j["efficiency"] = efficiency_json(r.efficiency());
  j["memory"] = memory_json(res.memory);
  j["prompt_tokens"] = res.prompt;
  j["ttft"] = phase_json(res.ttft);
  json curve = json::array();
  for (const auto& pt : res.curve) {
    curve.push_back({{"context", pt.context},
                     {"single_user_tokens_per_s_low", pt.single_band.low},
                     {"single_user_tokens_per_s_high", pt.single_band.high},
                     {"fits", pt.fits},
                     {"single_user_tokens_per_s_bound", pt.single.tokens_per_s_bound().value()},
                     {"single_user_tokens_per_s_estimate", pt.single.tokens_per_s_estimate().value()},
                     {"per_user_tokens_per_s_bound", pt.per_user_bound().value()},
                     {"per_user_tokens_per_s_estimate", pt.per_user_estimate().value()},
                     {"total_tokens_per_s_estimate", pt.total_estimate().value()},
                     {"tpot_s_estimate", pt.all.estimate.value()},
                     {"bottleneck", to_string(pt.all.limit())}});
  }
  j["decode_curve"] = curve;
  j["alternatives"] = alternatives_json(res.alternatives);
  if (load.open || load.closed) j["load"] = load_json(load, output);
  return j;
}

json decode_json(const setup& s, const roofline& r, double batch, double context, const phase_timing& p) {
  json j = {{"schema", "llmroof.decode/1"}};
  j.update(setup_json(s));
  j["batch"] = batch;
  j["context"] = context;
  j["efficiency"] = efficiency_json(r.efficiency());
  j["step"] = phase_json(p);
  j["per_user_tokens_per_s_estimate"] = 1.0 / p.estimate.value();
  j["per_user_tokens_per_s_bound"] = 1.0 / p.bound.value();
  j["ridge_flop_per_byte"] = r.ridge(s.pr.weights.math).value();
  return j;
}

json prefill_json(const setup& s, double batch, double prompt, double cached, const phase_timing& p) {
  json j = {{"schema", "llmroof.prefill/1"}};
  j.update(setup_json(s));
  j["batch"] = batch;
  j["prompt"] = prompt;
  j["cached"] = cached;
  j["prefill"] = phase_json(p);
  j["ttft_s_estimate"] = p.estimate.value();
  j["ttft_s_bound"] = p.bound.value();
  return j;
}

json kv_json(const setup& s, double context, double users, const kv_breakdown& kv) {
  json layers = json::array();
  for (const kv_layer_share& l : kv.layers) {
    layers.push_back({{"kind", to_string(l.kind)},
                      {"layers", l.layers},
                      {"bytes_per_token", l.per_token.value()},
                      {"tokens_held", l.tokens_held},
                      {"state_bytes", l.state.value()}});
  }
  json j = {{"schema", "llmroof.kv/1"}};
  j.update(setup_json(s));
  j["context"] = context;
  j["users"] = users;
  j["block_tokens"] = s.engine.block_tokens;
  j["kv_bytes_per_token"] = kv.per_token.value();
  j["kv_bytes_per_sequence"] = kv.per_sequence.value();
  j["kv_bytes_total"] = users * kv.per_sequence.value();
  j["layers"] = layers;
  return j;
}

namespace {

json fit_json(const weights_fit& f) {
  return {{"weights_fit", f.fits},
          {"weight_bytes", f.weights.value()},
          {"usable_bytes", f.usable.value()},
          {"short_bytes", f.short_by.value()},
          {"max_users_at_context", f.max_users}};
}

json params_json(const architecture& a, const param_counts& p) {
  return {{"total", p.total()},
          {"active", p.active()},
          {"active_with_embedding", p.active_with_embedding()},
          {"active_share", p.active() / p.total()},
          {"routed_experts", p.routed_experts},
          {"mtp", p.mtp},
          {"num_experts", a.moe.num_experts},
          {"experts_per_token", a.moe.experts_per_token},
          {"shared_experts", a.moe.shared_experts},
          {"mtp_layers", a.moe.mtp_layers}};
}

json open_loop_json(const load_result& l, double max_rate_at_target, double ttft_target_s, double capacity) {
  return {{"rate_requests_per_s", l.rate},
          {"stable", l.stable},
          {"users", l.users},
          {"capacity_requests_per_s", capacity},
          {"utilization", capacity > 0 ? l.rate / capacity : 1.0},
          {"prefill_share", l.prefill_share},
          {"prefill_s", l.prefill.value()},
          {"ttft_wait_s", l.ttft_wait.value()},
          {"ttft_s", l.ttft.value()},
          {"tpot_s", l.tpot.value()},
          {"tokens_per_s_per_user", l.stable ? l.tokens_per_s_per_user().value() : 0.0},
          {"tokens_per_s_total", l.stable ? l.tokens_per_s_total().value() : 0.0},
          {"ttft_target_s", ttft_target_s},
          {"max_rate_at_ttft_target", max_rate_at_target}};
}

json saturation_json(const saturation_result& s) {
  return {{"requests_per_s", s.requests_per_s},
          {"output_tokens_per_s", s.output_tokens_per_s},
          {"users", s.users},
          {"limit", to_string(s.limit)}};
}
}  // namespace

json closed_loop_json(const closed_loop_result& c, double output) {
  return {{"model", "closed loop"},
          {"concurrency", c.concurrency},
          {"active", c.active},
          {"slots", c.slots},
          {"limit", to_string(c.limit)},
          {"requests_per_s", c.requests_per_s},
          {"queue_wait_s", c.queue_wait.value()},
          {"ttft_s", c.ttft.value()},
          {"tpot_s", c.tpot.value()},
          {"output_tokens_per_s", c.output_tokens_per_s(output)},
          {"output_tokens_per_s_per_user", c.tpot.value() > 0 ? c.tokens_per_s_per_user().value() : 0.0},
          {"prefill_share", c.load.prefill_share}};
}

json load_json(const served_load& l, double output) {
  json j = nullptr;
  if (l.open) j = open_loop_json(*l.open, l.max_rate_at_target, l.ttft_target.value(), l.max_rate);
  if (l.closed) j = closed_loop_json(*l.closed, output);
  if (l.most) j["saturation"] = saturation_json(*l.most);
  return j;
}

json calibrate_json(const measurement_set& set, profile_scope scope, const profile_table& t) {
  json j = {{"schema", "llmroof.calibrate/1"}, {"scope", to_string(scope)}, {"points", set.rows.size()},
            {"skipped", set.skipped.size()}};
  json fits = json::array();
  for (const auto& [key, r] : t.fits) {
    fits.push_back({{"key", key.empty() ? "global" : key}, {"memory", r.profile.memory}, {"memory_sd", r.memory_sd},
                    {"compute", r.profile.compute}, {"compute_sd", r.compute_sd}, {"attention", r.profile.attention},
                    {"per_step_s", r.profile.per_step.value()}, {"per_step_sd_s", r.per_step_sd},
                    {"per_kernel_s", r.profile.per_kernel.value()}, {"per_kernel_sd_s", r.per_kernel_sd},
                    {"kv_memory", r.profile.kv_memory}, {"low_precision", r.profile.low_precision},
                    {"compute_half_rows", r.profile.compute_half_rows},
                    {"stream_cap_bytes_per_s", r.profile.stream_cap},
                    {"per_request_s", r.profile.per_request.value()}, {"per_request_sd_s", r.per_request_sd},
                    {"points", r.points},
                    {"median_ape", r.median_ape}, {"residuals", r.residuals}});
  }
  j["fits"] = fits;
  json skipped = json::array();
  for (const auto& sk : set.skipped) skipped.push_back({{"id", sk.id}, {"reason", sk.reason}});
  j["skipped_rows"] = skipped;
  return j;
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
                    {"devices", m.plan.devices()}, {"memory_kind", to_string(m.dev.memory_kind_of())},
                    {"model", m.arch.id}, {"weights", m.pr.weights.name}, {"metric", to_string(m.what)},
                    {"batch", m.batch}, {"prompt", m.prompt}, {"measured", m.value}, {"predicted", p.predicted},
                    {"low", num(p.low)}, {"high", num(p.high)}, {"ape", p.error()},
                    {"likely_reason", likely_reason(m, p.predicted / m.value)}});
  }
  json metrics = json::object();
  for (const metric_summary& x : v.best().metrics) {
    metrics[std::string(to_string(x.what))] = {{"points", x.points}, {"mdape", x.mdape}, {"band_coverage", x.band_coverage}};
  }
  j["metrics"] = metrics;
  j["rows"] = rows;
  json skipped = json::array();
  for (const auto& sk : set.skipped) skipped.push_back({{"id", sk.id}, {"reason", sk.reason}});
  j["skipped_rows"] = skipped;
  return j;
}

json users_json(const setup& s, double context, double min_tokens_per_s, double ttft_target_s, const users_result& u,
                double output) {
  json j = {{"schema", "llmroof.users/1"}};
  j.update(setup_json(s));
  j["context"] = context;
  j["min_tokens_per_s_per_user"] = min_tokens_per_s;
  j["ttft_target_s"] = ttft_target_s;
  j["max_users"] = u.users;
  j["limit"] = to_string(u.limit);
  j["ttft_s"] = u.ttft.value();
  j["per_user_tokens_per_s_estimate"] = u.users > 0 ? u.tokens_per_s_per_user() : 0.0;
  j["total_tokens_per_s_estimate"] = u.users > 0 ? u.tokens_per_s_total() : 0.0;
  // Those users in a closed loop of `output`-token answers (null when none qualifies).
  j["closed_loop"] = u.loop.concurrency > 0 ? closed_loop_json(u.loop, output) : json(nullptr);
  json curve = json::array();
  for (const users_point& p : u.curve) {
    curve.push_back({{"users", p.users},
                     {"per_user_tokens_per_s_estimate", p.tokens_per_s_per_user()},
                     {"total_tokens_per_s_estimate", p.tokens_per_s_total()},
                     {"ttft_s", p.loop.ttft.value()},
                     {"fits", p.fits}});
  }
  j["curve"] = curve;
  return j;
}

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

json moe_json(const setup& s, const moe_analysis& m, const weights_fit& fit) {
  const architecture& a = s.model;
  const model_comparison& c = m.decode;
  json rows = json::array();
  for (std::size_t i = 0; i < c.batches.size(); ++i) {
    const double n = c.batches[i];
    const phase_timing& moe = c.first[i];
    const phase_timing& d = c.second[i];
    const routing_row& route = m.routing[i];
    rows.push_back({{"batch", n},
                    {"experts_per_layer", route.experts_per_layer},
                    {"experts_per_layer_sd", route.experts_per_layer_sd},
                    {"expert_share_read", route.experts_per_layer / a.moe.num_experts},
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
                    {"kv_fits", fit.holds(n)}});
  }
  json j = {{"schema", "llmroof.moe/1"}};
  j.update(setup_json(s));
  j["context"] = c.context;
  j["parameters"] = params_json(a, c.first_params);
  j["routed_expert_params"] = m.routed_expert_params;
  j["fit"] = fit_json(fit);
  j["dense_equivalent"] = {{"model", m.dense.id},
                           {"params_total", c.second_params.total()},
                           {"ffn_size", m.dense.ffn_size},
                           {"tp", c.second_layout.tp},
                           {"pp", c.second_layout.pp}};
  j["weights_crossover_batch"] = m.weights_crossover ? json(*m.weights_crossover) : json(nullptr);
  j["speed_crossover_batch"] = c.speed_crossover ? json(*c.speed_crossover) : json(nullptr);
  j["batches"] = rows;
  return j;
}

json compare_json(const setup& a, const setup& b, const model_comparison& c, const weights_fit& fit_a,
                  const weights_fit& fit_b) {
  json rows = json::array();
  for (std::size_t i = 0; i < c.batches.size(); ++i) {
    rows.push_back({{"batch", c.batches[i]},
                    {"first_bytes_per_step", c.first[i].counts.total_bytes().value()},
                    {"second_bytes_per_step", c.second[i].counts.total_bytes().value()},
                    {"first_per_user_tokens_per_s_estimate", 1.0 / c.first[i].estimate.value()},
                    {"second_per_user_tokens_per_s_estimate", 1.0 / c.second[i].estimate.value()},
                    {"first_per_user_tokens_per_s_bound", 1.0 / c.first[i].bound.value()},
                    {"second_per_user_tokens_per_s_bound", 1.0 / c.second[i].bound.value()},
                    {"first_total_tokens_per_s_estimate", c.batches[i] / c.first[i].estimate.value()},
                    {"second_total_tokens_per_s_estimate", c.batches[i] / c.second[i].estimate.value()}});
  }
  json first = setup_json(a);
  first["parameters"] = params_json(a.model, c.first_params);
  first["fit"] = fit_json(fit_a);
  json second = setup_json(b);
  second["parameters"] = params_json(b.model, c.second_params);
  second["fit"] = fit_json(fit_b);
  return {{"schema", "llmroof.compare/1"},
          {"device", a.dev().id},
          {"devices", a.devices()},
          {"context", c.context},
          {"first", first},
          {"second", second},
          {"bytes_crossover_batch", c.bytes_crossover ? json(*c.bytes_crossover) : json(nullptr)},
          {"speed_crossover_batch", c.speed_crossover ? json(*c.speed_crossover) : json(nullptr)},
          {"batches", rows}};
}

}  // namespace llmroof::report
