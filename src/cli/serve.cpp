// plan, decode, prefill, kv and users: one deployment's memory, speed and capacity.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli.hpp"

namespace llmroof::cli {

namespace {

/// The energy lines of plan and users.
void print_energy(const setup& s, const energy_cost& energy, double users, double context) {
  // The rate it divides by: the load served (the closed loop above) or every user decoding at once.
  const std::string basis = energy.basis == "decoding" ? "decoding" : "served in the " + energy.basis + " above";
  std::printf("\nEnergy, %s %s at %s tokens (%.0f output tokens/s)%s: ", users_label(users).c_str(), basis.c_str(),
              thousands(context).c_str(), energy.tokens_per_s,
              energy.fits ? "" : ", if they fitted (they do NOT: nothing runs)");
  if (energy.power_w) {
    std::printf("%.0f W for %s, %.3g J per output token, %.0f tokens/s per kW\n", *energy.power_w,
                s.devices() > 1 ? (std::to_string(s.devices()) + " devices").c_str() : "the device",
                energy.joules_per_token.value_or(0), energy.tokens_per_s_per_kw.value_or(0));
  } else {
    std::printf("no power figure for %s (a custom device takes tdp=...)\n", s.dev().id.c_str());
  }
  if (energy.cost_per_hour) {
    std::printf("  cost: $%.2f per hour ($%s per month), $%.3g per million output tokens", *energy.cost_per_hour,
                thousands(std::round(*energy.cost_per_month())).c_str(), energy.cost_per_million.value_or(0));
    if (energy.cost_per_million_input) std::printf(", $%.3g per million input tokens", *energy.cost_per_million_input);
    std::printf("\n");
  }
  if (energy.joules_per_input_token) {
    std::printf("  prompts: %.3g J per input token (prefill, prefix-cache hits blended in)\n", *energy.joules_per_input_token);
  }
}

// --spec, --draft-tokens, --accept and --draft-model (whose setup `draft` holds).
speculation speculation_of(const options& o, std::optional<setup>& draft) {
  speculation spec;
  spec.method = parse_spec_method(o.get("spec").value_or("mtp"), "--spec");
  if (auto k = o.get("draft-tokens")) spec.draft_tokens = static_cast<int>(parse_count("draft-tokens", *k, 16));
  if (auto a = o.get("accept")) {
    std::size_t at = 0;
    while (at <= a->size()) {
      const auto comma = a->find(',', at);
      const std::string part = a->substr(at, comma == std::string::npos ? std::string::npos : comma - at);
      spec.acceptance.push_back(parse_number("accept", part, 0, 1));
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
  }
  if (auto id = o.get("draft-model")) {
    // The draft's model and formats only: speculate lays it out beside the
    // target (on one device where its heads do not split as the target's).
    draft.emplace(make_setup(o, false, *id));
    spec.draft = draft->model;
    spec.draft_pr = draft->pr;
  }
  return spec;
}

// ", decoding speculatively (...)" when the setup does, else "".
std::string spec_label(const setup& s) {
  if (!s.speculative) return "";
  const speculation& x = *s.speculative;
  return ", decoding speculatively (" + std::string(to_string(x.method)) + ", " + std::to_string(x.draft_tokens) +
         (x.draft_tokens == 1 ? " draft token, " : " draft tokens, ") + fmt("%.2f kept per step)", accepted_tokens(x));
}

// --spec and its options when given (else none, and its options refused).
std::optional<speculation> read_speculation(const options& o, std::optional<setup>& draft) {
  if (o.get("spec")) return speculation_of(o, draft);
  for (const char* k : {"draft-tokens", "accept", "draft-model"}) {
    if (o.get(k)) throw usage_error(std::string("--") + k + " needs --spec");
  }
  return std::nullopt;
}

// --pd and what only it takes: the P/D comparison the plan is asked for.
std::optional<pd_request> pd_of(const options& o) {
  for (const char* k : {"tps", "kv-link", "kv-link-efficiency", "kv-overlap"}) {
    if (o.get(k) && !o.get("pd")) throw usage_error(std::string("--") + k + " needs --pd");
  }
  const auto v = o.get("pd");
  if (!v) return std::nullopt;
  pd_request q;
  if (auto tps = o.get("tps")) q.min_tokens_per_s = parse_number("tps", *tps, 0, 1e9, true);
  if (*v != "auto") q.devices = static_cast<int>(parse_count("pd", *v, 65536));
  if (auto l = o.get("kv-link")) q.kv_link = find_link(*l);
  if (auto e = o.get("kv-link-efficiency")) q.kv_link_efficiency = parse_number("kv-link-efficiency", *e, 0.01, 1);
  q.kv_overlap = o.flag("kv-overlap");
  return q;
}

void print_plan_speculation(const speculation& spec, const speculative_table& t, double users) {
  const speculative_step& a = t.at;
  std::printf("\nSpeculative decoding (%s, %d draft token%s): %.2f tokens kept per step; %s: %.1f tokens/s each "
              "with it, %.1f without (x%.2f)\n",
              std::string(to_string(spec.method)).c_str(), spec.draft_tokens, spec.draft_tokens == 1 ? "" : "s",
              a.tokens_per_step, users_label(users).c_str(), a.tokens_per_s_per_user(), 1.0 / a.plain.estimate.value(),
              a.speedup());
  if (t.stops_paying) {
    std::printf("  it stops paying at batch %s", thousands(*t.stops_paying).c_str());
  } else {
    std::printf("  it pays at every batch up to %s", thousands(t.batches.back()).c_str());
  }
  std::printf("; it costs %s of drafter weights per device, users that fit %s -> %s\n", gib(t.memory.weights).c_str(),
              thousands(t.memory.max_users_plain).c_str(), thousands(t.memory.max_users).c_str());
}

void print_pd(const pd_comparison& c) {
  const pd_row& first = c.rows.front();
  std::printf("\nPrefill and decode, aggregated or apart, on %d devices (KV over %s at %.0f%%%s); goodput: the most "
              "requests/s with mean TTFT <= %s%s\n",
              first.devices, c.link.link.name.c_str(), 100 * c.link.efficiency, c.link.layerwise ? ", layer by layer" : "",
              ms(c.targets.ttft).c_str(),
              c.targets.tpot.value() > 0
                  ? (" and TPOT <= " + ms(c.targets.tpot) + " (" + fmt("%.0f", 1 / c.targets.tpot.value()) + " t/s per user)").c_str()
                  : "");
  std::printf("  %-24s %8s %10s %10s %10s %9s %9s %8s %8s %8s  %s\n", "layout", "req/s", "out t/s", "t/s/device",
              "TTFT", "TPOT", "KV move", "decoding", "prefill", "J/token", "limit");
  for (std::size_t i = 0; i < c.rows.size(); ++i) {
    const pd_row& r = c.rows[i];
    const auto j = r.joules_per_output_token();
    std::printf("  %-24s %8.3g %10.0f %10.1f %10s %9s %9s %8.1f %7.0f%% %8s  %s%s\n", r.label.c_str(), r.requests_per_s,
                r.output_tokens_per_s, r.output_tokens_per_s_per_device(), ms(r.ttft).c_str(), r.requests_per_s > 0 ? ms(r.tpot).c_str() : "-",
                r.disaggregated ? ms(r.transfer).c_str() : "-", r.decode_users, 100 * r.prefill_utilisation,
                j ? fmt("%.3g", *j).c_str() : "-", std::string(to_string(r.limit)).c_str(),
                i == c.best ? "   <- best" : "");
  }
  std::printf("  %s\n", c.why.c_str());
  if (!first.loop) return;
  std::printf("\n  The same layouts with %s users, each sending its next request when the last completes (no "
              "targets):\n",
              thousands(first.loop->users).c_str());
  std::printf("  %-24s %8s %10s %10s %9s %10s %8s\n", "layout", "req/s", "out t/s", "TTFT", "TPOT", "waiting", "inside");
  for (const pd_row& r : c.rows) {
    const pd_loop_result& l = *r.loop;
    if (!(l.requests_per_s > 0)) {
      std::printf("  %-24s %8s  not one request fits\n", r.label.c_str(), "-");
      continue;
    }
    std::printf("  %-24s %8.3g %10.0f %10s %9s %10s %8.1f\n", r.label.c_str(), l.requests_per_s,
                l.output_tokens_per_s(c.output), ms(l.ttft).c_str(), ms(l.tpot).c_str(), ms(l.queue_wait).c_str(),
                l.inside);
  }
}

// What a shared prefix saves: the prefill on a hit, or why nothing is cached.
void print_prefix(const setup& s, const prefix_reuse& r, double prompt, const std::optional<phase_timing>& hit) {
  if (r.prefix <= 0) return;
  if (!s.engine.prefix_caching) {
    std::printf("  %s-token shared prefix: %s runs with prefix caching off, every prompt prefills in full\n",
                thousands(r.prefix).c_str(), std::string(s.engine.name()).c_str());
  } else if (r.cached <= 0) {
    std::printf("  %s-token shared prefix: nothing is reused (%s, and the prompt's last token always runs)\n",
                thousands(r.prefix).c_str(),
                engine_row_of(s.engine.id).shares_prefix_blocks
                    ? ("hits are whole blocks of " + std::to_string(s.engine.block_tokens) + " tokens").c_str()
                    : "hits are matched token by token");
  } else {
    std::printf("  %s-token shared prefix, %s tokens cached (%s), %.0f%% of requests hit",
                thousands(r.prefix).c_str(), thousands(r.cached).c_str(),
                engine_row_of(s.engine.id).shares_prefix_blocks ? "whole blocks, one copy for every user"
                                                                : "token by token, one copy per slot",
                100 * r.hit);
    if (hit) {
      std::printf(": TTFT on a hit %s (%s tokens computed)", ms(hit->estimate).c_str(),
                  thousands(prompt - r.cached).c_str());
    }
    std::printf("\n");
  }
}

}  // namespace

int cmd_plan(const options& o) {
  plan_request q;
  workload& sc = q.work;
  sc.users = parse_count("users", o.get("users").value_or("1"));
  sc.context = parse_tokens("context", o.get("context").value_or("4096"));
  if (auto p = o.get("prompt")) sc.prompt = parse_count("prompt", *p);
  read_prefix(o, sc);
  read_arrivals(o, sc);
  const setup asked = make_setup(o, true);
  if (o.get("offload") == "auto") {
    q.offload_auto = true;
    if (auto h = o.get("host")) q.offload_host = device_of(*h);
  }
  // --spec: the deployment decodes speculatively (its memory and load), and
  // the plan reports the speculative table at its users and context.
  std::optional<setup> draft;
  q.spec = read_speculation(o, draft);
  if (auto out = o.get("output")) sc.output = parse_count("output", *out);
  if (auto v = o.get("rate")) q.rate = parse_number("rate", *v, 0, 1e9);
  if (auto v = o.get("concurrency")) q.concurrency = parse_count("concurrency", *v);
  if (auto v = o.get("ttft")) q.ttft_target = make_seconds(parse_seconds("ttft", *v));
  if (auto v = o.get("burst")) q.burst = parse_count("burst", *v, max_burst_requests);
  if (o.get("burst-lengths") && !q.burst) throw std::invalid_argument("--burst-lengths needs --burst");
  if (auto v = o.get("burst-lengths")) q.burst_lengths = parse_length_spread(*v);
  q.cost = price_of(o);
  q.pd = pd_of(o);
  const plan_answer a = answer(asked, q);
  if (o.json) {
    std::cout << report::plan_json(a).dump(2) << "\n";
    return 0;
  }

  const setup& s = a.setup;
  const roofline& r = s.roof();
  const plan_result& res = a.result;
  const memory_plan& m = res.memory;
  const served_load& load = a.load;
  const double users = sc.users;
  std::printf("llmroof plan: %s on %s\n", s.model.name.c_str(), device_label(s).c_str());
  std::printf("weights %s, KV %s (%.4g bits), lm_head %s; engine %s, memory utilisation %.2f, KV blocks of %d tokens\n%s\n",
              weights_label(s.pr, true).c_str(), std::string(s.pr.kv.name).c_str(), s.pr.kv.bits,
              std::string(s.pr.lm_head.name).c_str(), std::string(s.engine.name()).c_str(),
              s.engine.memory_utilization, s.engine.block_tokens, formats_note(s).c_str());
  if (s.offload()) {
    std::printf("offload: %s on the host %s (%.0f GB/s): %s of weights in host RAM\n",
                s.offload()->experts ? "routed experts"
                                     : (fmt("%.0f%%", 100 * s.offload()->layers) + " of the layers (" +
                                        fmt("%.4g", s.offload()->layers * s.model.num_layers) + " of " +
                                        std::to_string(s.model.num_layers) + ")").c_str(),
                s.offload()->host.name.c_str(), in_GBps(s.offload()->host.bandwidth),
                gib(host_weight_bytes(s.model, s.pr, *s.offload())).c_str());
  }
  if (s.source != nullptr) {
    std::printf("model read from %s (%s)%s\n", s.source->path.c_str(), s.source->arch.family.c_str(),
                s.source->vision_params > 0
                    ? (", vision tower " + fmt("%.2f", s.source->vision_params / 1e9) + "B params counted apart").c_str()
                    : "");
    for (const auto& w : s.source->warnings) std::printf("note: %s\n", w.c_str());
    std::printf("\n");
  }
  std::printf("Memory%s (1 GiB = 2^30 B, 1 GB = 1e9 B)\n", s.devices() > 1 ? " per device" : "");
  if (s.dev().vendor == "Apple") {
    // What Metal may wire, not the RAM: the limit llama.cpp and MLX plan with.
    std::printf("  %-34s %12s  (Metal working set: %.0f%% of %s RAM; sudo sysctl iogpu.wired_limit_mb raises it)\n",
                "capacity", gib(m.capacity).c_str(), 100 * gpu_visible_fraction(s.dev()), gib(m.device_memory).c_str());
  } else {
    std::printf("  %-34s %12s\n", "capacity", gib(m.capacity).c_str());
  }
  std::printf("  %-34s %12s\n", ("usable (x " + fmt("%.2f", s.engine.memory_utilization) + ")").c_str(), gib(m.usable).c_str());
  std::printf("  %-34s %12s  (%s)\n", "weights", gib(m.weights).c_str(), gb(m.weights).c_str());
  std::printf("  %-34s %12s\n", std::string(engine_row_of(s.engine.id).reserve_label).c_str(), gib(m.reserve).c_str());
  std::printf("  %-34s %12s  (%s tokens, %s profiled)\n", "activation peak", gib(m.activations).c_str(),
              thousands(with_scheduler_budget(s.engine, m.max_model_len).max_batched_tokens).c_str(),
              (thousands(s.engine.max_sequences) + (s.engine.max_sequences == 1 ? " sequence" : " sequences")).c_str());
  std::printf("  %-34s %12s  (%s tokens in %s blocks of %d)\n", "KV budget", gib(m.kv_budget).c_str(),
              thousands(m.kv_tokens).c_str(), thousands(m.kv_blocks).c_str(), s.engine.block_tokens);
  std::printf("  %-34s %12s B  (%.1f KiB%s)\n", "KV cache per token", thousands(m.kv_per_token.value()).c_str(),
              m.kv_per_token.value() / 1024,
              report::kv_past_windows_text(m.kv_per_token.value(), m.kv_per_token_past_window.value()).c_str());
  std::printf("  %-34s %12s\n", ("KV per user at " + thousands(sc.context) + " tokens").c_str(), gib(m.kv_per_sequence).c_str());
  if (m.shared_tokens > 0) {
    std::printf("  %-34s %12s  (%s prompt tokens per user held once: the requests that find the prefix share it)\n",
                "KV of the shared prefix", gib(m.kv_shared).c_str(), thousands(m.shared_tokens).c_str());
  }
  if (res.replicas > 1) {
    std::printf("  %-34s %12s  (each of %d replicas holds at most %s of the %s)\n",
                ("KV for " + users_label(res.users_per_replica)).c_str(), gib(m.kv_needed).c_str(), res.replicas,
                thousands(res.users_per_replica).c_str(), users_label(users).c_str());
  } else {
    std::printf("  %-34s %12s\n", ("KV for " + users_label(users)).c_str(), gib(m.kv_needed).c_str());
  }
  if (!m.weights_fit) {
    std::printf("\n  The weights alone do NOT fit: short by %s (%s); %s would refuse to start.\n",
                gib(make_bytes(-m.kv_budget.value())).c_str(), gb(make_bytes(-m.kv_budget.value())).c_str(),
                std::string(s.engine.name()).c_str());
  } else if (!m.starts) {
    std::printf("\n  %s would refuse to start: one sequence of %s tokens needs %s of KV, %s available; "
                "longest max_model_len that starts: %s tokens.\n",
                std::string(s.engine.name()).c_str(), thousands(m.max_model_len).c_str(),
                gib(make_bytes(m.kv_per_token.value() * m.max_model_len)).c_str(), gib(m.kv_budget).c_str(),
                thousands(m.longest_start).c_str());
  } else if (sc.context > m.max_model_len) {
    std::printf("\n  A context of %s tokens exceeds max_model_len %s: the engine rejects such requests.\n",
                thousands(sc.context).c_str(), thousands(m.max_model_len).c_str());
  } else if (m.fits) {
    std::printf("\n  %s at %s tokens %s, with %s to spare.\n", users_label(users).c_str(),
                thousands(sc.context).c_str(), users == 1 ? "fits" : "fit", gib(m.headroom()).c_str());
  } else {
    std::printf("\n  %s at %s tokens %s NOT fit: short by %s.\n", users_label(users).c_str(),
                thousands(sc.context).c_str(), users == 1 ? "does" : "do", gib(m.shortfall()).c_str());
  }
  if (m.weights_fit) {
    std::printf("  Most users that fit at %s tokens: %s\n", thousands(sc.context).c_str(),
                thousands(m.max_sequences).c_str());
    if (m.starts) {
      std::printf("  Maximum concurrency for %s tokens per request%s: %.2fx\n", thousands(m.max_model_len).c_str(),
                  s.engine.id == engine_id::vllm ? " (as vLLM prints it)" : "", m.max_concurrency);
    }
    std::printf("  Longest context that fits %s: %s tokens", users_label(users).c_str(),
                thousands(m.max_context).c_str());
    if (s.model.max_context > 0 && m.max_context > s.model.max_context) {
      std::printf(" (the model supports %s)", thousands(s.model.max_context).c_str());
    }
    std::printf("\n");
  }

  // Each rate beside the time it is of.
  std::printf("\nTime to first token, prompt of %s tokens: estimate %s (%s tokens/s), bound %s (%s tokens/s, %s-bound)\n",
              thousands(res.prompt).c_str(), ms(res.ttft.estimate).c_str(),
              thousands(std::round(res.ttft.tokens_per_s_estimate().value())).c_str(), ms(res.ttft.bound).c_str(),
              thousands(std::round(res.ttft.tokens_per_s_bound().value())).c_str(),
              std::string(to_string(res.ttft.limit())).c_str());
  print_prefix(s, res.prefix, res.prompt, res.ttft_cached);

  std::printf("\nDecode tokens/s against context (bound = peak roofs; estimate = profile %s, eta_m %.2f)\n",
              r.efficiency().name.c_str(), r.efficiency().memory);
  std::printf("  (estimate band for one user: %.1f-%.1f t/s on an empty context, %.1f-%.1f at %s tokens; profile: %s)\n",
              res.curve.front().single_band.low, res.curve.front().single_band.high, res.curve.back().single_band.low,
              res.curve.back().single_band.high, thousands(sc.context).c_str(),
              r.efficiency().source.c_str());
  if (const auto lim = r.efficiency().at_limit(); !lim.empty()) {
    std::string names;
    for (const auto n : lim) {
      names += (names.empty() ? "" : " and ") + std::string(n == "memory" ? "eta_m" : n == "compute" ? "eta_c" : n);
    }
    std::printf("  (note: %s of this profile %s at the limit 1.00: the fit asked for the whole roof, which no engine\n"
                "   sustains, so the estimates may lean optimistic: read them with the band's low edge)\n",
                names.c_str(), lim.size() == 1 ? "sits" : "sit");
  }
  std::printf("  %9s  %-9s %11s %11s   %-28s %11s  %s\n", "context", "fits all", "1 user est", "1 user bnd",
              (users_label(users) + ": per user est / bnd").c_str(), "total est", "limit");
  for (const auto& pt : res.curve) {
    std::printf("  %9s  %-9s %11.1f %11.1f   %13.1f / %-12.1f %11.1f  %s\n", ctx_label(pt.context).c_str(),
                pt.fits ? "yes" : "no", pt.single.tokens_per_s_estimate().value(),
                pt.single.tokens_per_s_bound().value(), pt.per_user_estimate().value(),
                pt.per_user_bound().value(), pt.total_estimate().value(),
                std::string(to_string(pt.all.limit())).c_str());
  }
  if (a.pd) print_pd(*a.pd);
  if (a.speculative) print_plan_speculation(*s.speculative, *a.speculative, users);
  if (!res.alternatives.empty()) {
    std::printf("\nWhat would make it fit (each change alone):\n");
    std::printf("  %-26s %-5s %7s %9s %8s %14s %11s\n", "change", "fits", "users", "context", "devices",
                "t/s/user est", "total est");
    for (const alternative& alt : res.alternatives) {
      std::printf("  %-26s %-5s %7s %9s %8d %14.1f %11.1f\n", alt.change.c_str(), alt.fits ? "yes" : "no",
                  thousands(alt.users).c_str(), thousands(alt.context).c_str(), alt.devices,
                  alt.per_user_tokens_per_s(), alt.total_tokens_per_s());
    }
  }
  if (load.closed) {
    const closed_loop_result& c = *load.closed;
    std::printf("\nClosed loop: %s, each sending its next request (%s prompt + %s output tokens%s) when the last "
                "completes%s%s\n", users_label(c.concurrency).c_str(), thousands(sc.prompt_tokens()).c_str(),
                thousands(sc.output).c_str(), history_label(sc).c_str(),
                c.arrivals == arrival_pattern::lockstep ? ", in lockstep (identical requests, started together)" : "",
                spec_label(s).c_str());
    std::printf("  %s in the engine (%s %s: KV for %s tokens each, max_num_seqs %s), limit: %s\n",
                fmt("%.1f", c.active).c_str(), thousands(c.slots).c_str(), c.slots == 1 ? "slot" : "slots", thousands(sc.request_end()).c_str(),
                thousands(s.engine.max_sequences).c_str(), std::string(to_string(c.limit)).c_str());
    if (c.slots < 1) {
      std::printf("  not one request of %s tokens fits: nothing is served\n", thousands(sc.request_end()).c_str());
    } else {
      std::printf("  TTFT %s (waiting for a slot %s), TPOT %s = %.1f tokens/s per user; %.3g requests/s, %.0f output "
                  "tokens/s total\n", ms(c.ttft).c_str(), ms(c.queue_wait).c_str(), ms(c.tpot).c_str(),
                  c.tokens_per_s_per_user().value(), c.requests_per_s, c.output_tokens_per_s(sc.output));
      if (c.arrivals == arrival_pattern::lockstep) {
        std::printf("  the first %s requests, sent at once, wait %s for their first token on average\n",
                    thousands(c.active).c_str(), ms(c.first_wave_ttft).c_str());
      }
    }
  }
  if (const auto& b = load.burst) {
    std::printf("\nBurst: %s requests sent at once, each %s prompt + %s output tokens%s%s\n",
                thousands(b->requests).c_str(), thousands(sc.prompt_tokens()).c_str(), thousands(sc.output).c_str(),
                b->lengths == length_spread::exponential ? " on average (exponential lengths)" : "",
                spec_label(s).c_str());
    if (b->slots < 1) {
      std::printf("  not one request of %s tokens fits: nothing is served\n",
                  thousands(sc.prompt_tokens() + sc.output).c_str());
    } else {
      std::printf("  the engine holds %s at once (KV for %s tokens each, max_num_seqs %s), limit: %s\n",
                  thousands(b->slots).c_str(), thousands(sc.prompt_tokens() + sc.output).c_str(),
                  thousands(s.engine.max_sequences).c_str(), std::string(to_string(b->limit)).c_str());
      std::printf("  done in %.3g s: TTFT %s (the first %s admitted: %s), TPOT %s; %.3g requests/s, %.0f output "
                  "tokens/s, prefill share %.0f%%\n", b->duration.value(), ms(b->ttft).c_str(),
                  thousands(std::min(b->slots, b->requests)).c_str(), ms(b->first_wave_ttft).c_str(),
                  ms(b->tpot).c_str(), b->requests_per_s(), b->output_tokens_per_s(), 100 * b->prefill_share);
    }
  }
  if (const auto& open = load.open) {
    std::printf("\nLoad: %.3g requests/s, each %s prompt + %s output tokens (M/D/1 prefill queue, Little's law)\n",
                open->rate, thousands(sc.prompt_tokens()).c_str(), thousands(sc.output).c_str());
    if (open->stable) {
      // Little's users are fractional at light load (0.01 requests/s: 0.0377).
      std::printf("  steady state: %s concurrent users, utilisation %.0f%% of the %.3g requests/s capacity, "
                  "prefill share %.0f%%\n", fmt(open->users >= 10 ? "%.1f" : "%.3g", open->users).c_str(), load.max_rate > 0 ? 100 * open->rate / load.max_rate : 100.0, load.max_rate,
                  100 * open->prefill_share);
      std::printf("  TTFT %s (queueing %s), TPOT %s = %.1f tokens/s per user, %.0f tokens/s total\n",
                  ms(open->ttft).c_str(), ms(open->ttft_wait).c_str(), ms(open->tpot).c_str(),
                  open->tokens_per_s_per_user().value(), open->tokens_per_s_total().value());
    } else {
      std::printf("  NOT sustainable: the queue grows without bound (or the users it needs do not fit in memory)\n");
    }
    std::printf("  most requests/s with a mean TTFT under %s: %.3g\n", ms(load.ttft_target).c_str(), load.max_rate_at_target);
  }
  if (const auto& most = load.most) {
    std::printf("  saturation: %.3g requests/s, %.0f output tokens/s with %s requests in the engine; limit: %s\n",
                most->requests_per_s, most->output_tokens_per_s, fmt("%.1f", most->users).c_str(), std::string(to_string(most->limit)).c_str());
  }
  const phase_timing& empty = res.curve.front().single;
  std::printf("\nAn empty-context decode step reads %s per token (weights %s); at %s tokens the KV cache adds %s.\n",
              gb(empty.counts.total_bytes()).c_str(), gb(empty.counts.weight_bytes()).c_str(),
              thousands(sc.context).c_str(), gb(res.curve.back().single.counts.kv_read_bytes()).c_str());
  print_energy(s, a.energy, users, sc.context);
  return 0;
}

int cmd_decode(const options& o) {
  const setup s = make_setup(o, true);
  const double batch = parse_count("batch", o.get("batch").value_or("1"));
  const double context = parse_tokens("context", o.get("context").value_or("4096"));
  const price pr = price_of(o);
  const roofline& r = s.roof();
  const phase_timing p = s.decode(batch, context);
  const energy_cost energy = energy_and_cost(s, p, batch / p.estimate.value(), pr);
  if (o.json) {
    std::cout << report::decode_json(s, r, batch, context, p, energy).dump(2) << "\n";
    return 0;
  }
  std::printf("llmroof decode: %s on %s, batch %s at %s cached tokens, weights %s, KV %s\n%s\n",
              s.model.name.c_str(), device_label(s).c_str(), thousands(batch).c_str(),
              thousands(context).c_str(), weights_label(s.pr).c_str(),
              std::string(s.pr.kv.name).c_str(), formats_note(s).c_str());
  print_ops(p);
  std::printf("\n  step: estimate %s, bound %s (%s-bound); reads %s per step\n", ms(p.estimate).c_str(),
              ms(p.bound).c_str(), std::string(to_string(p.limit())).c_str(), gb(p.counts.total_bytes()).c_str());
  std::printf("  per user: %.1f tokens/s estimate, %.1f bound; total %.1f tokens/s estimate\n",
              1.0 / p.estimate.value(), 1.0 / p.bound.value(), p.tokens_per_s_estimate().value());
  std::printf("  ridge point (%s): %.1f FLOP/B\n", std::string(to_string(s.dev().effective_math(s.pr.weights.math))).c_str(),
              r.ridge(s.pr.weights.math).value());
  // A batch the deployment cannot hold is a speed it cannot reach: said, not left to the reader.
  const weights_fit fit = s.fit(context);
  if (!fit.fits) {
    std::printf("  does NOT fit on %s: weights %s, short by %s: a speed this deployment cannot reach\n",
                device_label(s).c_str(), gib(fit.weights).c_str(), gib(fit.short_by).c_str());
  } else if (!fit.holds(batch)) {
    std::printf("  batch %s does NOT fit: the KV room holds %s sequences of %s tokens; a speed this deployment "
                "cannot reach\n",
                thousands(batch).c_str(), thousands(fit.max_users).c_str(), thousands(context).c_str());
  }
  print_energy(s, energy, batch, context);
  return 0;
}

int cmd_speculate(const options& o) {
  const setup s = make_setup(o, true);
  std::optional<setup> draft;
  const speculation spec = speculation_of(o, draft);
  const double batch = parse_count("batch", o.get("batch").value_or("1"));
  const double context = parse_tokens("context", o.get("context").value_or("4096"));
  const double max_batch = parse_count("max-batch", o.get("max-batch").value_or("1024"));
  const speculative_table t = speculate_against_batch(s, spec, batch, context, max_batch);
  if (o.json) {
    std::cout << report::speculative_json(s, spec, t).dump(2) << "\n";
    return 0;
  }
  std::string accept;
  for (double a : t.acceptance) accept += (accept.empty() ? "" : ", ") + fmt("%.2f", a);
  std::printf("llmroof speculate: %s on %s, %s speculation%s, %d draft token%s (acceptance %s%s)\n", s.model.name.c_str(),
              device_label(s).c_str(), std::string(to_string(spec.method)).c_str(),
              spec.draft ? (" with " + spec.draft->name).c_str() : "", spec.draft_tokens, spec.draft_tokens == 1 ? "" : "s",
              accept.c_str(), spec.acceptance.empty() ? ": the method's published default" : "");
  const speculative_step& a = t.at;
  std::printf("  batch %s at %s tokens: %.2f tokens kept per step; draft %s + verify %s = %s per step\n",
              thousands(batch).c_str(), thousands(context).c_str(), a.tokens_per_step, ms(a.draft).c_str(),
              ms(a.verify).c_str(), ms(a.step()).c_str());
  std::printf("  per user %.1f tokens/s with speculation, %.1f without: x%.2f%s\n\n", a.tokens_per_s_per_user(),
              1.0 / a.plain.estimate.value(), a.speedup(),
              t.holds(batch) ? "" : " (does NOT fit: a speed this deployment cannot reach)");
  std::printf("  %9s %14s %14s %8s %14s\n", "batch", "per user spec", "per user plain", "speedup", "total spec");
  bool marked = false;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const speculative_step& r = t.rows[i];
    const bool held = t.holds(t.batches[i]);
    marked = marked || !held;
    std::printf("  %9s %14.1f %14.1f %7.2fx %14.1f%s\n", thousands(t.batches[i]).c_str(), r.tokens_per_s_per_user(),
                1.0 / r.plain.estimate.value(), r.speedup(), t.batches[i] * r.tokens_per_s_per_user(), held ? "" : "  *");
  }
  if (marked) {
    std::printf("  * more sequences than fit at %s tokens with the drafter (%s): speeds this deployment cannot reach\n",
                thousands(context).c_str(), thousands(std::max(0.0, t.memory.max_users)).c_str());
  }
  if (!t.holds(1)) {
    std::printf("\n  no conclusion: not one sequence of %s tokens fits with the drafter\n", thousands(context).c_str());
  } else if (t.stops_paying && t.holds(*t.stops_paying)) {
    std::printf("\n  speculation stops paying at batch %s: the draft passes and the verify step of width %d cost more "
                "than the tokens they keep\n",
                thousands(*t.stops_paying).c_str(), spec.draft_tokens + 1);
  } else if (marked) {
    std::printf("\n  speculation pays at every batch that fits (up to %s sequences)\n",
                thousands(std::floor(t.memory.max_users)).c_str());
  } else {
    std::printf("\n  speculation pays at every batch up to %s\n", thousands(t.batches.back()).c_str());
  }
  const speculative_memory& mem = t.memory;
  std::printf("  memory per device at %s tokens: %s of drafter weights, %s of drafter KV and %s of %d lookahead slots "
              "per sequence; users that fit %s -> %s; a step of %s tokens verifies at most %s sequences\n",
              thousands(context).c_str(), gib(mem.weights).c_str(), gib(mem.kv_per_sequence).c_str(),
              gib(mem.lookahead_per_sequence).c_str(), spec.draft_tokens, thousands(mem.max_users_plain).c_str(),
              thousands(mem.max_users).c_str(), thousands(s.engine.max_batched_tokens).c_str(),
              thousands(mem.batch_budget).c_str());
  return 0;
}

int cmd_prefill(const options& o) {
  const setup s = make_setup(o, true);
  const double batch = parse_count("batch", o.get("batch").value_or("1"));
  const double prompt = parse_count("prompt", o.get("prompt").value_or("2048"));
  const double cached = parse_tokens("context", o.get("context").value_or("0"));
  const phase_timing p = s.prefill(prompt, cached, batch);
  if (o.json) {
    std::cout << report::prefill_json(s, batch, prompt, cached, p).dump(2) << "\n";
    return 0;
  }
  std::printf("llmroof prefill: %s on %s, %s x %s prompt tokens after %s cached, weights %s\n%s\n",
              s.model.name.c_str(), device_label(s).c_str(), thousands(batch).c_str(),
              thousands(prompt).c_str(), thousands(cached).c_str(), weights_label(s.pr).c_str(),
              formats_note(s).c_str());
  print_ops(p);
  std::printf("\n  time to first token: estimate %s, bound %s (%s-bound)\n", ms(p.estimate).c_str(),
              ms(p.bound).c_str(), std::string(to_string(p.limit())).c_str());
  std::printf("  prefill speed: %.0f tokens/s estimate, %.0f bound\n", p.tokens_per_s_estimate().value(),
              p.tokens_per_s_bound().value());
  return 0;
}

int cmd_kv(const options& o) {
  const setup s = make_setup(o, false);
  const double context = parse_tokens("context", o.get("context").value_or("4096"));
  const double users = parse_count("users", o.get("users").value_or("1"));
  const architecture& a = s.model;
  const kv_breakdown kv = break_down_kv(a, s.pr.kv, context, s.engine.block_tokens);
  if (o.json) {
    std::cout << report::kv_json(s, context, users, kv).dump(2) << "\n";
    return 0;
  }
  const bytes per_seq = kv.per_sequence;
  std::printf("llmroof kv: %s, KV %s (%.4g bits)\n", a.name.c_str(), std::string(s.pr.kv.name).c_str(), s.pr.kv.bits);
  std::printf("  per token (all layers, below any window): %s B (%.1f KiB)\n",
              thousands(kv.per_token.value()).c_str(), kv.per_token.value() / 1024);
  for (const kv_layer_share& l : kv.layers) {
    if (l.kind == layer_kind::linear) {
      std::printf("  %2d linear-attention layers: constant state %s B per sequence each\n", l.layers,
                  thousands(l.state.value()).c_str());
    } else {
      std::printf("  %2d %s layers: %s B per token each, holding %s tokens at context %s\n", l.layers,
                  std::string(to_string(l.kind)).c_str(), thousands(l.per_token.value()).c_str(),
                  thousands(l.tokens_held).c_str(), thousands(context).c_str());
    }
  }
  std::printf("  one sequence at %s tokens (blocks of %d): %s (%s)\n", thousands(context).c_str(),
              s.engine.block_tokens, gib(per_seq).c_str(), gb(per_seq).c_str());
  std::printf("  %s: %s\n", users_label(users).c_str(), gib(users * per_seq).c_str());
  return 0;
}


int cmd_users(const options& o) {
  users_request q;
  std::optional<setup> draft;
  q.spec = read_speculation(o, draft);
  const setup asked = make_setup(o, true);
  workload& sc = q.work;
  sc.context = parse_tokens("context", o.get("context").value_or("4096"));
  if (auto p = o.get("prompt")) sc.prompt = parse_count("prompt", *p);
  if (auto out = o.get("output")) sc.output = parse_count("output", *out);
  read_prefix(o, sc);
  read_arrivals(o, sc);
  q.min_tokens_per_s = parse_number("tps", o.get("tps").value_or("10"), 0, 1e9);
  if (auto v = o.get("ttft")) q.ttft_target_s = parse_seconds("ttft", *v);
  q.cost = price_of(o);
  const users_answer a = answer(asked, q);
  if (o.json) {
    std::cout << report::users_json(a).dump(2) << "\n";
    return 0;
  }
  const setup& s = a.setup;
  const users_result& u = a.result;
  const double tps = q.min_tokens_per_s, ttft = q.ttft_target_s;
  std::printf("llmroof users: %s on %s, weights %s, KV %s, every user at %s tokens\n", s.model.name.c_str(),
              device_label(s).c_str(), weights_label(s.pr).c_str(), std::string(s.pr.kv.name).c_str(),
              thousands(sc.context).c_str());
  std::printf("  targets: at least %.1f tokens/s per user%s\n", tps,
              ttft > 0 ? (", TTFT at most " + ms(make_seconds(ttft))).c_str() : "");
  if (u.users == 0) {
    std::printf("  not even one user meets the targets (limit: %s)\n", std::string(to_string(u.limit)).c_str());
    return 0;
  }
  std::printf("  most users: %s (one more breaks: %s)\n", thousands(u.users).c_str(), std::string(to_string(u.limit)).c_str());
  // One answer: those users in a closed loop of the stated requests.
  std::printf("  each gets %.1f tokens/s, %.0f output tokens/s in total, TTFT %s (a closed loop%s: %s-token prompts, "
              "%s-token answers%s, the next sent when one completes%s)\n",
              u.tokens_per_s_per_user(), u.tokens_per_s_total(), ms(u.ttft).c_str(),
              sc.arrivals == arrival_pattern::lockstep ? " in lockstep" : "", thousands(sc.prompt_tokens()).c_str(),
              thousands(sc.output).c_str(), history_label(sc).c_str(), spec_label(s).c_str());
  print_prefix(s, u.prefix, sc.prompt_tokens(), std::nullopt);
  // The curve against users: what each user and the server get.
  std::printf("\n  %8s %16s %16s %10s %8s\n", "users", "t/s per user", "t/s total", "TTFT", "fits");
  for (const users_point& p : u.curve) {
    std::printf("  %8s %16.1f %16.0f %10s %8s%s\n", thousands(p.users).c_str(), p.tokens_per_s_per_user(),
                p.tokens_per_s_total(), ms(p.loop.ttft).c_str(), p.fits ? "yes" : "no",
                p.users == u.users ? "   <- most users" : "");
  }
  if (u.users >= 1) print_energy(s, a.energy, u.users, sc.context);
  if (a.joules_per_request) {
    std::printf("  each request (%s-token prompt, %s-token answer): %s J = %.3g Wh\n",
                thousands(sc.prompt_tokens()).c_str(), thousands(sc.output).c_str(),
                thousands(*a.joules_per_request).c_str(), *a.joules_per_request / 3600);
  }
  return 0;
}

}  // namespace llmroof::cli
