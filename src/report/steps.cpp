// JSON reports of the command and the Python bindings (schema: docs/cli-json.md): decode, prefill, speculative steps and the KV cache.
#include "report/tables.hpp"

#include <cmath>
#include <string>

namespace llmroof::report {
namespace {

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

std::vector<key_doc> decode_keys() { return keys(decode_fields()); }
std::vector<key_doc> prefill_keys() { return keys(prefill_fields()); }
std::vector<key_doc> speculative_keys() { return keys(speculative_fields()); }
std::vector<key_doc> kv_keys() { return keys(kv_fields()); }

}  // namespace llmroof::report
