// JSON reports of the command and the Python bindings (schema: docs/cli-json.md).
#include "report/json.hpp"

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

// Python types of the keys (the generated stubs' annotations).
constexpr std::string_view rows_t = rows_type;
constexpr std::string_view object_t = "dict[str, Any]";
constexpr std::string_view maybe_object_t = "dict[str, Any] | None";
constexpr std::string_view maybe_float_t = "float | None";

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

namespace {

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

}  // namespace

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

namespace {

struct plan_view {
  const setup& s;
  const roofline& r;
  const plan_result& res;
  const served_load& load;
  double output;
  const energy_cost& energy;
  const pd_comparison* pd = nullptr;
  const plan_speculation* spec = nullptr;
};

json curve_rows(const plan_result& res) {
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
  return curve;
}

const field_table<plan_view>& plan_fields() {
  using V = plan_view;
  static const field_table<V> t = report_table<V>(
      "llmroof.plan/1",
      {
          {"efficiency", object_t, "The efficiency profile the estimates use (shares, overheads, its source).",
           [](const V& v) { return efficiency_json(v.r.efficiency()); }},
          {"memory", "MemoryPlan",
           "Weights, reserve, activations and every user's KV cache against the memory: one replica's devices "
           "and users (the fullest's) where parallel.replicas > 1, max_users_at_context of them all.",
           [](const V& v) { return memory_json(v.res.memory); }},
          {"users", "float", "The plan's users, over every replica.", [](const V& v) { return json(v.res.users); }},
          {"users_per_replica", "float", "Users of the fullest replica (memory.users); the users on one replica.",
           [](const V& v) { return json(v.res.users_per_replica); }},
          {"prompt_tokens", "float", "Prompt of the TTFT estimate.", [](const V& v) { return json(v.res.prompt); }},
          {"ttft", "Phase", "Prefill of prompt_tokens for one user on an empty cache: TTFT without queueing.",
           [](const V& v) { return phase_json(v.res.ttft); }},
          {"prefix", maybe_object_t,
           "The prompt prefix every request shares, when one is given: tokens, cached_tokens (what a cache hit "
           "skips: whole blocks, never the last prompt token; 0 when the engine caches none), hit_rate, "
           "shared_tokens (held once in memory: block-sharing engines), computed_tokens (mean prompt tokens a "
           "request computes) and ttft_cached (the prefill on a hit, a phase; None when nothing is cached).",
           [](const V& v) { return v.res.prefix.prefix > 0 ? prefix_json(v.res.prefix, v.res.ttft_cached) : absent(); }},
          {"decode_curve", rows_t,
           "Decode speed at each context from 0 to the plan's: context, fits, "
           "single_user_tokens_per_s_estimate/_bound/_low/_high (one user alone, with the band), "
           "per_user_tokens_per_s_estimate/_bound and total_tokens_per_s_estimate (all users), tpot_s_estimate, "
           "bottleneck.",
           [](const V& v) { return curve_rows(v.res); }},
          {"alternatives", rows_t,
           "When it does not fit: each change alone (change, fits, users, context, devices, weights, kv, "
           "max_users_at_context, per_user_tokens_per_s_estimate, total_tokens_per_s_estimate); else empty.",
           [](const V& v) { return alternatives_json(v.res.alternatives); }},
          {"energy", object_t,
           "The plan's users at its context: devices, power_w (all devices, their decode step's, from the "
           "roofline's compute- and memory-bound time between idle and TDP; null without a TDP), "
           "output_tokens_per_s (basis: the load served, 'closed loop', 'open loop' or 'burst', when one runs, "
           "else 'decoding', every user decoding at once), joules_per_output_token, output_tokens_per_s_per_kw, "
           "and with a price cost_per_hour, cost_per_month (x 730.5 h) and cost_per_million_output_tokens "
           "(cost_per_hour / output tokens per hour; USD; null without one); fits (false: the users do not fit, "
           "the figures are what it would draw if they did); the prompt's prefill: joules_per_input_token and "
           "cost_per_million_input_tokens, blended over prefix-cache hits (its share of the same hours, not added).",
           [](const V& v) { return energy_json(v.energy); }},
          {"disaggregation", maybe_object_t,
           "With pd: the plan's devices as aggregated replicas, as one instance, and split into x prefill and y "
           "decode instances (link, link_efficiency, layerwise, ttft_target_s, tpot_target_s; rows: layout, "
           "disaggregated, prefill_instances, decode_instances, devices, requests_per_s (the goodput under the "
           "targets), output_tokens_per_s, output_tokens_per_s_per_device, ttft_s, tpot_s, kv_transfer_s, "
           "decode_users, prefill_utilisation, power_w and joules_per_output_token (every device of both pools), "
           "limit, and loop: the layout under the plan's closed loop (concurrency, or its users) without the "
           "targets, users, requests_per_s, output_tokens_per_s, ttft_s, tpot_s, queue_wait_s, inside (null "
           "without a loop); best, why).",
           [](const V& v) { return v.pd ? pd_json(*v.pd) : absent(); }},
          {"speculation", maybe_object_t,
           "With speculative decoding (--spec): the speculate report (llmroof.speculative/1) at the plan's users "
           "and context, against batch up to twice the users, with its memory.",
           [](const V& v) { return v.spec ? speculative_json(v.s, v.spec->spec, v.spec->table) : absent(); }},
          {"load", maybe_object_t,
           "The plan under load: a closed loop (concurrency, or more than one user), an open loop (a rate) or a "
           "burst (requests sent at once: requests, lengths, slots, limit, duration_s, requests_per_s, ttft_s, "
           "first_wave_ttft_s, tpot_s, output_tokens, output_tokens_per_s, prefill_share), with its saturation; "
           "absent for one user alone.",
           [](const V& v) {
             return v.load.open || v.load.closed || v.load.burst ? load_json(v.load, v.output) : absent();
           }},
      });
  return t;
}

json fit_json(const weights_fit& f) {
  return {{"weights_fit", f.fits},
          {"weight_bytes", f.weights.value()},
          {"usable_bytes", f.usable.value()},
          {"short_bytes", f.short_by.value()},
          {"max_users_at_context", f.max_users}};
}

struct decode_view {
  const setup& s;
  const roofline& r;
  double batch;
  double context;
  const phase_timing& p;
  const energy_cost& energy;
  weights_fit fit;  ///< at the context
};

const field_table<decode_view>& decode_fields() {
  using V = decode_view;
  static const field_table<V> t = report_table<V>(
      "llmroof.decode/1",
      {
          {"batch", "float", "Sequences decoding together.", [](const V& v) { return json(v.batch); }},
          {"context", "float", "Tokens each sequence holds (their mean).", [](const V& v) { return json(v.context); }},
          {"efficiency", object_t, "The efficiency profile the estimate uses.",
           [](const V& v) { return efficiency_json(v.r.efficiency()); }},
          {"fit", object_t,
           "Whether the batch fits at the context: weights_fit, weight_bytes, usable_bytes, short_bytes, "
           "max_users_at_context, and fits (the weights fit and the KV room holds the batch; false: a speed this "
           "deployment cannot reach).",
           [](const V& v) {
             json f = fit_json(v.fit);
             f["fits"] = v.fit.holds(v.batch);
             return f;
           }},
          {"step", "Phase", "The decode step, op by op.", [](const V& v) { return phase_json(v.p); }},
          {"per_user_tokens_per_s_estimate", "float", "1 / the step's estimate.",
           [](const V& v) { return json(1.0 / v.p.estimate.value()); }},
          {"per_user_tokens_per_s_bound", "float", "1 / the step's bound.",
           [](const V& v) { return json(1.0 / v.p.bound.value()); }},
          {"ridge_flop_per_byte", "float", "FLOP per byte where the weights' math roof meets the memory roof.",
           [](const V& v) { return json(v.r.ridge(v.s.pr.weights.math).value()); }},
          {"energy", object_t,
           "Power of every device over the step, joules per output token at batch / estimate tokens/s, and the "
           "cost with a price (as a plan's energy).",
           [](const V& v) { return energy_json(v.energy); }},
      });
  return t;
}

struct speculative_view {
  const setup& s;
  const speculation& spec;
  const speculative_table& t;
};

json spec_row(double batch, const speculative_step& r, bool fits) {
  return {{"batch", batch},
          {"fits", fits},
          {"tokens_per_s_per_user", r.tokens_per_s_per_user()},
          {"plain_tokens_per_s_per_user", 1.0 / r.plain.estimate.value()},
          {"speedup", r.speedup()},
          {"total_tokens_per_s", batch * r.tokens_per_s_per_user()},
          {"plain_total_tokens_per_s", batch / r.plain.estimate.value()},
          {"draft_s", r.draft.value()},
          {"verify_s", r.verify.value()}};
}

const field_table<speculative_view>& speculative_fields() {
  using V = speculative_view;
  static const field_table<V> t = report_table<V>(
      "llmroof.speculative/1",
      {
          {"efficiency", object_t, "The efficiency profile the estimates use.",
           [](const V& v) { return efficiency_json(v.s.roof().efficiency()); }},
          {"method", "str", "Who drafts: mtp (the model's own MTP layers), draft (a draft model) or ngram.",
           [](const V& v) { return json(to_string(v.spec.method)); }},
          {"draft_tokens", "int", "Tokens drafted per step (k).", [](const V& v) { return json(v.spec.draft_tokens); }},
          {"acceptance", "list[float]",
           "Conditional acceptance of each draft position (the method's published default where none was given).",
           [](const V& v) { return json(v.t.acceptance); }},
          {"draft_model", "str | None", "The draft model's id (method draft), else None.",
           [](const V& v) { return v.spec.draft ? json(v.spec.draft->id) : json(nullptr); }},
          {"batch", "float", "Sequences decoding together.", [](const V& v) { return json(v.t.batch); }},
          {"context", "float", "Tokens each sequence holds.", [](const V& v) { return json(v.t.context); }},
          {"fits", "bool", "Whether the batch's sequences fit at the context with the drafter (memory.max_users).",
           [](const V& v) { return json(v.t.holds(v.t.batch)); }},
          {"tokens_per_step", "float", "Tokens kept per sequence and step: 1 + the expected accepted drafts.",
           [](const V& v) { return json(v.t.at.tokens_per_step); }},
          {"draft_s", "float", "The k draft passes, s.", [](const V& v) { return json(v.t.at.draft.value()); }},
          {"verify_s", "float", "The target's verify step of width k + 1, s.",
           [](const V& v) { return json(v.t.at.verify.value()); }},
          {"tokens_per_s_per_user", "float", "tokens_per_step / (draft_s + verify_s).",
           [](const V& v) { return json(v.t.at.tokens_per_s_per_user()); }},
          {"plain_tokens_per_s_per_user", "float", "The same batch without speculation.",
           [](const V& v) { return json(1.0 / v.t.at.plain.estimate.value()); }},
          {"speedup", "float", "tokens_per_s_per_user / plain_tokens_per_s_per_user.",
           [](const V& v) { return json(v.t.at.speedup()); }},
          {"stops_paying_batch", maybe_float_t, "First batch of 1, 2, 4, ... where speculation is no faster, or None.",
           [](const V& v) { return v.t.stops_paying ? json(*v.t.stops_paying) : json(nullptr); }},
          {"memory", object_t,
           "What it costs per device at the context: weight_bytes (the MTP modules or the draft model), "
           "kv_bytes_per_sequence (the drafter's), lookahead_bytes_per_sequence (k token slots), max_users_plain and "
           "max_users (sequences that fit without and with it), batch_budget (sequences a step of "
           "max_num_batched_tokens verifies, k + 1 tokens each).",
           [](const V& v) {
             const speculative_memory& m = v.t.memory;
             return json{{"weight_bytes", m.weights.value()},
                         {"kv_bytes_per_sequence", m.kv_per_sequence.value()},
                         {"lookahead_bytes_per_sequence", m.lookahead_per_sequence.value()},
                         {"max_users_plain", m.max_users_plain},
                         {"max_users", m.max_users},
                         {"batch_budget", m.batch_budget}};
           }},
          {"batches", rows_t,
           "Per batch: tokens_per_s_per_user and plain_tokens_per_s_per_user, speedup, total_tokens_per_s and "
           "plain_total_tokens_per_s, draft_s, verify_s; fits (the batch's sequences fit at the context with the "
           "drafter: a row that does not is a speed this deployment cannot reach).",
           [](const V& v) {
             json out = json::array();
             for (std::size_t i = 0; i < v.t.rows.size(); ++i) {
               out.push_back(spec_row(v.t.batches[i], v.t.rows[i], v.t.holds(v.t.batches[i])));
             }
             return out;
           }},
      });
  return t;
}

struct prefill_view {
  const setup& s;
  double batch;
  double prompt;
  double cached;
  const phase_timing& p;
};

const field_table<prefill_view>& prefill_fields() {
  using V = prefill_view;
  static const field_table<V> t = report_table<V>(
      "llmroof.prefill/1",
      {
          {"batch", "float", "Prompts prefilled together.", [](const V& v) { return json(v.batch); }},
          {"prompt", "float", "Tokens of each prompt.", [](const V& v) { return json(v.prompt); }},
          {"cached", "float", "Tokens already in the cache (a prefix hit).", [](const V& v) { return json(v.cached); }},
          {"prefill", "Phase", "The prefill, op by op.", [](const V& v) { return phase_json(v.p); }},
          {"ttft_s_estimate", "float", "The prefill's estimate, s.", [](const V& v) { return json(v.p.estimate.value()); }},
          {"ttft_s_bound", "float", "The prefill's bound, s.", [](const V& v) { return json(v.p.bound.value()); }},
      });
  return t;
}

struct kv_view {
  const setup& s;
  double context;
  double users;
  const kv_breakdown& kv;
};

const field_table<kv_view>& kv_fields() {
  using V = kv_view;
  static const field_table<V> t = report_table<V>(
      "llmroof.kv/1",
      {
          {"context", "float", "Tokens each sequence holds.", [](const V& v) { return json(v.context); }},
          {"users", "float", "Sequences held.", [](const V& v) { return json(v.users); }},
          {"block_tokens", "float", "Tokens per KV block (the engine's page).",
           [](const V& v) { return json(v.s.engine.block_tokens); }},
          {"kv_bytes_per_token", "float", "All layers' KV of one token, B.",
           [](const V& v) { return json(v.kv.per_token.value()); }},
          {"kv_bytes_per_sequence", "float", "One sequence at the context, block-rounded, B.",
           [](const V& v) { return json(v.kv.per_sequence.value()); }},
          {"kv_bytes_total", "float", "All users' sequences, B.",
           [](const V& v) { return json(v.users * v.kv.per_sequence.value()); }},
          {"layers", rows_t,
           "One row per layer kind: kind, layers, bytes_per_token, tokens_held (a sliding window's), state_bytes.",
           [](const V& v) {
             json layers = json::array();
             for (const kv_layer_share& l : v.kv.layers) {
               layers.push_back({{"kind", to_string(l.kind)},
                                 {"layers", l.layers},
                                 {"bytes_per_token", l.per_token.value()},
                                 {"tokens_held", l.tokens_held},
                                 {"state_bytes", l.state.value()}});
             }
             return layers;
           }},
      });
  return t;
}

}  // namespace

json plan_json(const setup& s, const roofline& r, const plan_result& res, const served_load& load, double output,
               const price& p, const pd_comparison* pd, const plan_speculation* spec) {
  return object_json(plan_fields(), plan_view{s, r, res, load, output, plan_energy(s, res, p, &load, output), pd, spec});
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
  const auto num = [](const std::optional<double>& x) { return x ? json(*x) : json(nullptr); };
  return {{"devices", e.devices},
          {"power_w", num(e.power_w)},
          {"output_tokens_per_s", e.tokens_per_s},
          {"joules_per_output_token", num(e.joules_per_token)},
          {"output_tokens_per_s_per_kw", num(e.tokens_per_s_per_kw)},
          {"cost_per_hour", num(e.cost_per_hour)},
          {"cost_per_million_output_tokens", num(e.cost_per_million)},
          {"cost_per_month", num(e.cost_per_month())},
          {"basis", e.basis},
          {"fits", e.fits},
          {"joules_per_input_token", num(e.joules_per_input_token)},
          {"cost_per_million_input_tokens", num(e.cost_per_million_input)}};
}

json decode_json(const setup& s, const roofline& r, double batch, double context, const phase_timing& p,
                 const energy_cost& energy) {
  return object_json(decode_fields(), decode_view{s, r, batch, context, p, energy, s.fit(context)});
}

json speculative_json(const setup& s, const speculation& spec, const speculative_table& t) {
  return object_json(speculative_fields(), speculative_view{s, spec, t});
}

json prefill_json(const setup& s, double batch, double prompt, double cached, const phase_timing& p) {
  return object_json(prefill_fields(), prefill_view{s, batch, prompt, cached, p});
}

json kv_json(const setup& s, double context, double users, const kv_breakdown& kv) {
  return object_json(kv_fields(), kv_view{s, context, users, kv});
}

namespace {


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

namespace {

struct users_view {
  const setup& s;
  double context;
  double min_tokens_per_s;
  double ttft_target_s;
  const users_result& u;
  double output;
  const energy_cost& energy;
};

const field_table<users_view>& users_fields() {
  using V = users_view;
  static const field_table<V> t = report_table<V>(
      "llmroof.users/1",
      {
          {"context", "float", "Tokens each user holds.", [](const V& v) { return json(v.context); }},
          {"min_tokens_per_s_per_user", "float", "The tokens/s target.",
           [](const V& v) { return json(v.min_tokens_per_s); }},
          {"ttft_target_s", "float", "The TTFT target, s (0: none).", [](const V& v) { return json(v.ttft_target_s); }},
          {"max_users", "float", "Most users meeting both targets in their closed loop (0: not even one).",
           [](const V& v) { return json(v.u.users); }},
          {"limit", "str",
           "What stops one more user: memory (at the context), kv_cache or max_num_seqs (the engine's slots), "
           "compute, tokens/s (decode speed), prefill (the others' prefills) or ttft.",
           [](const V& v) { return json(to_string(v.u.limit)); }},
          {"ttft_s", "float", "Time to first token in that closed loop, s.", [](const V& v) { return json(v.u.ttft.value()); }},
          {"per_user_tokens_per_s_estimate", "float", "Tokens/s each of max_users decodes in the loop.",
           [](const V& v) { return json(v.u.users > 0 ? v.u.tokens_per_s_per_user() : 0.0); }},
          {"total_tokens_per_s_estimate", "float", "Output tokens/s of all max_users together in the loop.",
           [](const V& v) { return json(v.u.users > 0 ? v.u.tokens_per_s_total() : 0.0); }},
          {"prefix", maybe_object_t,
           "The shared prompt prefix, when one is given (a plan's prefix, without ttft_cached).",
           [](const V& v) { return v.u.prefix.prefix > 0 ? prefix_json(v.u.prefix, std::nullopt) : absent(); }},
          {"speculative", maybe_object_t,
           "With speculative decoding (--spec): method, draft_tokens, draft_model, acceptance (conditional, per "
           "position, defaults filled in) and tokens_per_step; the closed loop and the memory are speculative.",
           [](const V& v) {
             if (!v.s.speculative) return absent();
             const speculation& x = *v.s.speculative;
             return json{{"method", to_string(x.method)},
                         {"draft_tokens", x.draft_tokens},
                         {"draft_model", x.draft ? json(x.draft->id) : json(nullptr)},
                         {"acceptance", position_acceptance(x)},
                         {"tokens_per_step", accepted_tokens(x)}};
           }},
          {"closed_loop", maybe_object_t,
           "Those users in a closed loop of the stated output (a plan's load: concurrency, active, slots, limit, "
           "requests_per_s, queue_wait_s, ttft_s, tpot_s, output_tokens_per_s, ...), or None when none qualifies.",
           [](const V& v) { return v.u.loop.concurrency > 0 ? closed_loop_json(v.u.loop, v.output) : json(nullptr); }},
          {"energy", object_t,
           "Those users decoding at the context, at the loop's output tokens/s: devices, power_w, "
           "output_tokens_per_s, joules_per_output_token, output_tokens_per_s_per_kw, and with a price "
           "cost_per_hour and cost_per_million_output_tokens (as a plan's energy).",
           [](const V& v) { return energy_json(v.energy); }},
          {"curve", rows_t,
           "The closed loop at 1, 2, 4, ... users and at max_users: users, per_user_tokens_per_s_estimate, "
           "total_tokens_per_s_estimate, ttft_s and fits (whether the deployment holds them).",
           [](const V& v) {
             json curve = json::array();
             for (const users_point& p : v.u.curve) {
               curve.push_back({{"users", p.users},
                                {"per_user_tokens_per_s_estimate", p.tokens_per_s_per_user()},
                                {"total_tokens_per_s_estimate", p.tokens_per_s_total()},
                                {"ttft_s", p.loop.ttft.value()},
                                {"fits", p.fits}});
             }
             return curve;
           }},
      });
  return t;
}

}  // namespace

json users_json(const setup& s, const workload& w, double min_tokens_per_s, double ttft_target_s, const users_result& u,
                const price& p) {
  return object_json(users_fields(),
                     users_view{s, w.context, min_tokens_per_s, ttft_target_s, u, w.output, users_energy(s, u, w, p)});
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

namespace {

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json candidate_json(const recommend_input& in, const recommendation& r, std::size_t i) {
  const candidate& c = r.candidates[i];
  return {{"index", i},
          {"model", in.labels.empty() ? in.models[c.model].model.id : in.labels[c.model]},
          {"device", in.pool[c.pool].dev->id},
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
          {"power_w", opt(c.power_w)},
          {"joules_per_token", opt(c.joules_per_token)},
          {"cost_per_hour", opt(c.cost_per_hour)},
          {"cost_per_million", opt(c.cost_per_million)},
          {"purchase", opt(c.purchase)},
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
           rows.push_back({{"device", e.dev->id},
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
                           {"device", v.in.pool[p.pool].dev->id},
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

namespace {

template <class V>
std::vector<key_doc> keys(const field_table<V>& t) {
  std::vector<key_doc> out;
  for (const field<V>& f : t) out.push_back({f.key, f.type, f.doc});
  return out;
}

struct schema_keys {
  std::string_view name;
  std::vector<key_doc> (*keys)();
};

const schema_keys known[] = {
    {"llmroof.plan/1", [] { return keys(plan_fields()); }},
    {"llmroof.decode/1", [] { return keys(decode_fields()); }},
    {"llmroof.prefill/1", [] { return keys(prefill_fields()); }},
    {"llmroof.speculative/1", [] { return keys(speculative_fields()); }},
    {"llmroof.kv/1", [] { return keys(kv_fields()); }},
    {"llmroof.users/1", [] { return keys(users_fields()); }},
    {"llmroof.moe/1", [] { return keys(moe_fields()); }},
    {"llmroof.compare/1", [] { return keys(compare_fields()); }},
    {"llmroof.calibrate/1", [] { return keys(calibrate_fields()); }},
    {"llmroof.recommend/1", [] { return keys(recommend_fields()); }},
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
