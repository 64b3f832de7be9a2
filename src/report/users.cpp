// JSON reports of the command and the Python bindings (schema: docs/cli-json.md): the most users.
#include "report/tables.hpp"

#include <cmath>
#include <string>

namespace llmroof::report {
namespace {


struct users_view {
  const setup& s;  // the shared walk's (setup_fields)
  const users_answer& a;
};

const field_table<users_view>& users_fields() {
  using V = users_view;
  static const field_table<V> t = report_table<V>(
      "llmroof.users/1",
      {
          {"context", "float", "Tokens each user holds.", [](const V& v) { return json(v.a.work.context); }},
          {"min_tokens_per_s_per_user", "float", "The tokens/s target.",
           [](const V& v) { return json(v.a.min_tokens_per_s); }},
          {"ttft_target_s", "float", "The TTFT target, s (0: none).", [](const V& v) { return json(v.a.ttft_target_s); }},
          {"max_users", "float", "Most users meeting both targets in their closed loop (0: not even one).",
           [](const V& v) { return json(v.a.result.users); }},
          {"limit", "str",
           "What stops one more user: memory (at the context), kv_cache or max_num_seqs (the engine's slots), "
           "compute, tokens/s (decode speed), prefill (the others' prefills) or ttft.",
           [](const V& v) { return json(to_string(v.a.result.limit)); }},
          {"ttft_s", "float", "Time to first token in that closed loop, s.", [](const V& v) { return json(v.a.result.ttft.value()); }},
          {"per_user_tokens_per_s_estimate", "float", "Tokens/s each of max_users decodes in the loop.",
           [](const V& v) { return json(v.a.result.users > 0 ? v.a.result.tokens_per_s_per_user() : 0.0); }},
          {"total_tokens_per_s_estimate", "float", "Output tokens/s of all max_users together in the loop.",
           [](const V& v) { return json(v.a.result.users > 0 ? v.a.result.tokens_per_s_total() : 0.0); }},
          {"prefix", maybe_object_t,
           "The shared prompt prefix, when one is given (a plan's prefix, without ttft_cached).",
           [](const V& v) { return v.a.result.prefix.prefix > 0 ? prefix_json(v.a.result.prefix, std::nullopt) : absent(); }},
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
           [](const V& v) { return v.a.result.loop.concurrency > 0 ? closed_loop_json(v.a.result.loop, v.a.work.output) : json(nullptr); }},
          {"energy", object_t,
           "Those users decoding at the context, at the loop's output tokens/s: devices, power_w, "
           "output_tokens_per_s, joules_per_output_token, output_tokens_per_s_per_kw, and with a price "
           "cost_per_hour and cost_per_million_output_tokens (as a plan's energy).",
           [](const V& v) { return energy_json(v.a.energy); }},
          {"joules_per_request", maybe_float_t,
           "J per request of that loop, all devices: its power over its requests/s (= joules_per_output_token x "
           "output tokens; the prompts' prefill time is in the loop). None without a TDP or without users.",
           [](const V& v) { return optional(v.a.joules_per_request); }},
          {"curve", rows_t,
           "The closed loop at 1, 2, 4, ... users and at max_users: users, per_user_tokens_per_s_estimate, "
           "total_tokens_per_s_estimate, ttft_s and fits (whether the deployment holds them).",
           [](const V& v) {
             json curve = json::array();
             for (const users_point& p : v.a.result.curve) {
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


json users_json(const users_answer& a) {
  return object_json(users_fields(), users_view{a.setup, a});
}

std::vector<key_doc> users_keys() { return keys(users_fields()); }

}  // namespace llmroof::report
