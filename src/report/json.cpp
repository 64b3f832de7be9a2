// JSON reports of the command and the Python bindings (schema: docs/cli-json.md).
#include "report/tables.hpp"

#include <cmath>
#include <string>

namespace llmroof::report {

std::string thousands(double v) {
  const auto n = static_cast<long long>(std::llround(v));
  std::string s = std::to_string(n < 0 ? -n : n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return (n < 0 ? "-" : "") + s;
}

std::string kv_past_windows_text(double per_token, double past_windows) {
  return past_windows < per_token ? ", " + thousands(past_windows) + " B past the sliding windows" : "";
}

namespace {

json op_rows(const phase_timing& p) {
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
  return ops;
}

using P = phase_timing;
const field_table<P>& phase_fields() {
  static const field_table<P> t = {
      {"phase", "str", "decode or prefill.", [](const P& p) { return json(to_string(p.counts.kind)); }},
      {"sequences", "float", "Sequences in the step.", [](const P& p) { return json(p.counts.sequences); }},
      {"new_tokens", "float",
       "Tokens through the layers (decode: one per sequence, a speculative verify k + 1; prefill: the prompts).",
       [](const P& p) { return json(p.counts.new_tokens); }},
      {"flop", "float", "FLOP of every op.", [](const P& p) { return json(p.counts.total_flop().value()); }},
      {"bytes", "float", "Bytes moved by every op, B.", [](const P& p) { return json(p.counts.total_bytes().value()); }},
      {"weight_bytes", "float", "Weight bytes read, B.", [](const P& p) { return json(p.counts.weight_bytes().value()); }},
      {"kv_read_bytes", "float", "KV-cache bytes read, B.",
       [](const P& p) { return json(p.counts.kv_read_bytes().value()); }},
      {"bound_s", "float", "Sum of the ops' bounds (peak roofs), s.", [](const P& p) { return json(p.bound.value()); }},
      {"estimate_s", "float", "Sum of the ops' estimates plus the step's host time, s.",
       [](const P& p) { return json(p.estimate.value()); }},
      {"tokens_per_s_bound", "float", "new_tokens / bound_s.",
       [](const P& p) { return json(p.tokens_per_s_bound().value()); }},
      {"tokens_per_s_estimate", "float", "new_tokens / estimate_s.",
       [](const P& p) { return json(p.tokens_per_s_estimate().value()); }},
      {"bottleneck", "str", "What accounts for most of the estimate: memory, compute, link or overhead.",
       [](const P& p) { return json(to_string(p.limit())); }},
      {"ops", rows_t,
       "One row per op: name, count, flop, weight_bytes, kv_read_bytes, kv_written_bytes, activation_bytes, "
       "intensity_flop_per_byte, math (the roof it ran on), bound_s, estimate_s, bottleneck.",
       [](const P& p) { return op_rows(p); }},
  };
  return t;
}

}  // namespace

json phase_json(const phase_timing& p) { return object_json(phase_fields(), p); }

json phase_value(const phase_timing& p, std::size_t key) { return phase_fields().at(key).get(p); }

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
            {"backend", e.backend.empty() ? json(nullptr) : json(e.backend)},
            {"memory_utilization", e.memory_utilization},
            {"block_tokens", e.block_tokens},
            {"max_batched_tokens", e.max_batched_tokens},
            {"max_sequences", e.max_sequences},
            {"sampler_copies", e.sampler_copies},
            {"runtime_reserve_bytes", e.runtime_reserve.value()},
            {"collective_reserve_bytes", e.collective_reserve.value()},
            {"prefix_caching", e.prefix_caching},
            {"source", e.source}};
  j["max_model_len"] = e.max_model_len ? json(*e.max_model_len) : json(nullptr);
  return j;
}


json optional(const std::optional<double>& x) { return x ? json(*x) : json(nullptr); }

const field_table<setup>& setup_fields() {
  using S = setup;
  static const field_table<S> t = {
      {"model", "str", "The model's catalog id (or the file's name).", [](const S& s) { return json(s.model.id); }},
      {"weights", "str", "Weight format of the bulk of the weights (the experts' in a MoE model).",
       [](const S& s) { return json(s.pr.weights.name); }},
      {"kv", "str", "KV-cache format.", [](const S& s) { return json(s.pr.kv.name); }},
      {"lm_head", "str", "Format of lm_head.", [](const S& s) { return json(s.pr.lm_head.name); }},
      {"formats", object_t, "Format of each module: attention, ffn, experts, embedding.",
       [](const S& s) {
         return json{{"attention", s.pr.attention_format().name},
                     {"ffn", s.pr.ffn_format().name},
                     {"experts", s.pr.experts_format().name},
                     {"embedding", s.pr.embedding.name}};
       }},
      {"formats_from", "str", "Where the formats come from: asked, file, name, checkpoint or default.",
       [](const S& s) { return json(s.formats_from); }},
      {"checkpoint", "str | None", "The published checkpoint whose formats are planned, or None.",
       [](const S& s) { return s.checkpoint.empty() ? json(nullptr) : json(s.checkpoint); }},
      {"device", "str", "The device's catalog id (absent without a device).",
       [](const S& s) { return s.has_device() ? json(s.dev().id) : absent(); }},
      {"devices", "int", "Devices of the deployment.",
       [](const S& s) { return s.has_device() ? json(s.devices()) : absent(); }},
      {"parallel", object_t,
       "The layout: tp, pp, ep, dp_attention (attention data-parallel: ep alone, or --dp-attention beside tp), "
       "row_split (llama.cpp's tp: matrices by rows, attention and KV on the main device), replicas (data-parallel "
       "copies of that layout sharing the users; across nodes the default where one node holds the model), nodes "
       "(of all replicas), devices_per_node and the collectives' link.",
       [](const S& s) {
         if (!s.has_device()) return absent();
         return json{{"tp", s.parallel().tp},
                     {"pp", s.parallel().pp},
                     {"ep", s.parallel().ep},
                     {"dp_attention", s.parallel().attention_data_parallel()},
                     {"row_split", s.parallel().row_split},
                     {"replicas", s.replicas()},
                     {"nodes", s.nodes()},
                     {"devices_per_node", s.parallel().devices_per_node},
                     {"link", s.devices() > 1 ? json(detail::collective_link(s.parallel(), s.dev()).id) : json(nullptr)}};
       }},
      {"engine", "str", "The serving engine.", [](const S& s) { return s.has_device() ? json(s.engine.name()) : absent(); }},
      {"engine_settings", object_t, "The engine's settings, as `llmroof list engines --json` prints them.",
       [](const S& s) { return s.has_device() ? engine_json(s.engine) : absent(); }},
      {"model_source", maybe_object_t, "What the model file says (formats, tensors, warnings); absent for a catalog model.",
       [](const S& s) { return s.source != nullptr ? model_source_json(*s.source) : absent(); }},
  };
  return t;
}

json setup_json(const setup& s) { return object_json(setup_fields(), s); }

json memory_json(const memory_plan& m) {
  return {{"devices", m.devices},
          {"device_memory_bytes", m.device_memory.value()},
          {"capacity_bytes", m.capacity.value()},
          {"usable_bytes", m.usable.value()},
          {"memory_utilization", m.capacity.value() > 0 ? m.usable.value() / m.capacity.value() : 0},
          {"weight_bytes", m.weights.value()},
          {"reserve_bytes", m.reserve.value()},
          {"activation_bytes", m.activations.value()},
          {"kv_budget_bytes", m.kv_budget.value()},
          {"kv_bytes_per_token", m.kv_per_token.value()},
          {"kv_bytes_per_token_past_window", m.kv_per_token_past_window.value()},
          {"kv_bytes_per_sequence", m.kv_per_sequence.value()},
          {"kv_bytes_needed", m.kv_needed.value()},
          {"shared_prefix_tokens", m.shared_tokens},
          {"kv_shared_bytes", m.kv_shared.value()},
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


json prefix_json(const prefix_reuse& r, const std::optional<phase_timing>& ttft_cached) {
  if (r.prefix <= 0) return json(nullptr);
  json j = {{"tokens", r.prefix},
            {"cached_tokens", r.cached},
            {"hit_rate", r.hit},
            {"shared_tokens", r.shared},
            {"computed_tokens", r.computed}};
  j["ttft_cached"] = ttft_cached ? phase_json(*ttft_cached) : json(nullptr);
  return j;
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
          {"prefill_chunk_tokens", e.prefill_chunk},
          {"per_hop_s", e.per_hop.value()},
          {"per_sequence_s", e.per_sequence.value()},
          {"kv_stream", e.kv_stream},
          {"attention_floor_s", e.attention_floor.value()},
          {"expert_floor_s", e.expert_floor.value()},
          {"low_precision_memory", e.low_precision_memory},
          {"collective_latency_s", e.collective_latency.value()},
          {"source", e.source},
          {"points", e.points},
          {"at_limit", e.at_limit()}};
}

json fit_json(const weights_fit& f) {
  return {{"weights_fit", f.fits},
          {"weight_bytes", f.weights.value()},
          {"usable_bytes", f.usable.value()},
          {"short_bytes", f.short_by.value()},
          {"max_users_at_context", f.max_users}};
}


json pd_json(const pd_comparison& c) {
  json rows = json::array();
  for (const pd_row& r : c.rows) {
    rows.push_back({{"layout", r.label},
                    {"disaggregated", r.disaggregated},
                    {"prefill_instances", r.prefill_instances},
                    {"decode_instances", r.decode_instances},
                    {"devices", r.devices},
                    {"requests_per_s", r.requests_per_s},
                    {"output_tokens_per_s", r.output_tokens_per_s},
                    {"output_tokens_per_s_per_device", r.output_tokens_per_s_per_device()},
                    {"ttft_s", r.ttft.value()},
                    {"tpot_s", r.requests_per_s > 0 ? json(r.tpot.value()) : json(nullptr)},  // no rate, no step
                    {"kv_transfer_s", r.transfer.value()},
                    {"decode_users", r.decode_users},
                    {"prefill_utilisation", r.prefill_utilisation},
                    {"power_w", r.power_w ? json(*r.power_w) : json(nullptr)},
                    {"joules_per_output_token",
                     r.joules_per_output_token() ? json(*r.joules_per_output_token()) : json(nullptr)},
                    {"limit", to_string(r.limit)},
                    {"loop", r.loop ? json{{"users", r.loop->users},
                                           {"requests_per_s", r.loop->requests_per_s},
                                           {"output_tokens_per_s", r.loop->output_tokens_per_s(c.output)},
                                           {"ttft_s", r.loop->ttft.value()},
                                           {"tpot_s", r.loop->tpot.value()},
                                           {"queue_wait_s", r.loop->queue_wait.value()},
                                           {"inside", r.loop->inside}}
                                    : json(nullptr)}});
  }
  return {{"link", c.link.link.id},
          {"link_efficiency", c.link.efficiency},
          {"layerwise", c.link.layerwise},
          {"ttft_target_s", c.targets.ttft.value()},
          {"tpot_target_s", c.targets.tpot.value()},
          {"rows", rows},
          {"best", c.rows.empty() ? json(nullptr) : json(c.rows[c.best].label)},
          {"why", c.why}};
}

json energy_json(const energy_cost& e) {
  return {{"devices", e.devices},
          {"power_w", optional(e.power_w)},
          {"output_tokens_per_s", e.tokens_per_s},
          {"joules_per_output_token", optional(e.joules_per_token)},
          {"output_tokens_per_s_per_kw", optional(e.tokens_per_s_per_kw)},
          {"cost_per_hour", optional(e.cost_per_hour)},
          {"cost_per_million_output_tokens", optional(e.cost_per_million)},
          {"cost_per_month", optional(e.cost_per_month())},
          {"basis", e.basis},
          {"fits", e.fits},
          {"joules_per_input_token", optional(e.joules_per_input_token)},
          {"cost_per_million_input_tokens", optional(e.cost_per_million_input)}};
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

json closed_loop_json(const closed_loop_result& c, double output) {
  return {{"model", "closed loop"},
          {"arrivals", to_string(c.arrivals)},
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
          {"prefill_share", c.load.prefill_share},
          {"tokens_per_step", c.tokens_per_step},
          {"first_wave_ttft_s",
           c.arrivals == arrival_pattern::lockstep ? json(c.first_wave_ttft.value()) : json(nullptr)}};
}

json burst_json(const burst_result& b) {
  // Not one request fits: nothing is served, and no time is a zero.
  const bool served = b.slots >= 1;
  const auto time = [&](double v) { return served ? json(v) : json(nullptr); };
  return {{"model", "burst"},
          {"requests", b.requests},
          {"lengths", to_string(b.lengths)},
          {"slots", b.slots},
          {"limit", to_string(b.limit)},
          {"duration_s", time(b.duration.value())},
          {"requests_per_s", time(b.requests_per_s())},
          {"ttft_s", time(b.ttft.value())},
          {"first_wave_ttft_s", time(b.first_wave_ttft.value())},
          {"tpot_s", time(b.tpot.value())},
          {"output_tokens", time(b.output_tokens)},
          {"output_tokens_per_s", time(b.output_tokens_per_s())},
          {"prefill_share", time(b.prefill_share)}};
}

json load_json(const served_load& l, double output) {
  json j = nullptr;
  if (l.open) j = open_loop_json(*l.open, l.max_rate_at_target, l.ttft_target.value(), l.max_rate);
  if (l.closed) j = closed_loop_json(*l.closed, output);
  if (l.burst) j = burst_json(*l.burst);
  if (l.most) j["saturation"] = saturation_json(*l.most);
  return j;
}


namespace {

struct schema_keys {
  std::string_view name;
  std::vector<key_doc> (*keys)();
};

const schema_keys known[] = {
    {"llmroof.plan/1", plan_keys},
    {"llmroof.decode/1", decode_keys},
    {"llmroof.prefill/1", prefill_keys},
    {"llmroof.speculative/1", speculative_keys},
    {"llmroof.kv/1", kv_keys},
    {"llmroof.users/1", users_keys},
    {"llmroof.moe/1", moe_keys},
    {"llmroof.compare/1", compare_keys},
    {"llmroof.calibrate/1", calibrate_keys},
    {"llmroof.recommend/1", recommend_keys},
    {"phase", [] { return keys(phase_fields()); }},
};

}  // namespace

const std::vector<key_doc>& keys_of(std::string_view schema) {
  static const auto all = [] {
    std::vector<std::vector<key_doc>> v;
    for (const schema_keys& k : known) v.push_back(k.keys());
    return v;
  }();
  for (std::size_t i = 0; i < std::size(known); ++i) {
    if (known[i].name == schema) return all[i];
  }
  throw std::invalid_argument("unknown report schema '" + std::string(schema) + "'");
}


}  // namespace llmroof::report
