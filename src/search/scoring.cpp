// Scoring one candidate of recommend's search: its figures under the load
// model at the estimate and the band's slow edge, its price, its verdict.
#include "search/scoring.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "llmroof/serving/capacity_search.hpp"
#include "llmroof/serving/speculative_step.hpp"
#include "llmroof/units/metric.hpp"

namespace llmroof {

namespace detail {

std::string thousands_plain(double v) {
  const long long n = std::llround(v);
  const std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out = n < 0 ? "-" : "";
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::vector<int> instance_sizes(int count) {
  std::vector<int> out;
  for (int s = 1; s <= count; s *= 2) out.push_back(s);
  if (out.back() != count) out.push_back(count);
  return out;
}

std::vector<parallel_plan> layouts_of(const architecture& a, bool splits_layers, bool row_split, int s,
                                             int per_node) {
  std::vector<parallel_plan> out;
  const auto add = [&](int tp, int pp, int ep, bool dp_attention = false) {
    parallel_plan p;
    p.tp = tp;
    p.pp = pp;
    p.ep = ep;
    p.dp_attention = dp_attention;
    p.devices_per_node = std::min(s, per_node);
    for (const parallel_plan& q : out) {
      if (q.tp == tp && q.pp == pp && q.ep == ep && q.dp_attention == dp_attention) return;
    }
    out.push_back(p);
  };
  if (s == 1) {
    add(1, 1, 1);
    return out;
  }
  if (splits_layers) {
    add(1, s, 1);
    // The row split: dense models only (deployment::check says why).
    if (row_split && s <= per_node && !a.is_moe()) add(s, 1, 1);
    return out;
  }
  if (s <= per_node) {
    add(s, 1, 1);
  } else if (s % per_node == 0) {
    add(per_node, s / per_node, 1);
  }
  if (a.is_moe() && s <= a.moe.num_experts) add(1, 1, s);
  // MLA models replicate their latent KV on every tensor-parallel device:
  // data-parallel attention beside the TP FFN holds each user's once
  // (engines that run it: SGLang, TensorRT-LLM; the others refuse the layout).
  if (a.attention == attention_kind::mla && s <= per_node) add(s, 1, 1, true);
  return out;
}

std::vector<numeric_format> kv_formats_for(engine_id e, const numeric_format& kv, bool more) {
  std::vector<numeric_format> out{kv};
  if (!more) return out;
  for (const char* name : {"fp8-e4m3", "q8_0", "q4_0"}) {
    const numeric_format& f = find_format(name);
    if (f.bits < kv.bits && kv_format_supported(e, f)) out.push_back(f);
  }
  return out;
}

std::vector<std::pair<precision, std::optional<bytes>>> weights_for(const deployment& base, engine_id e, bool more) {
  std::vector<std::pair<precision, std::optional<bytes>>> out{{base.pr, base.stored}};
  if (!more) return out;
  const auto bulk = [&](const precision& pr) -> const numeric_format& {
    return base.model.is_moe() ? pr.experts_format() : pr.weights;
  };
  const double bits = bulk(base.pr).bits;
  int offered = 0;
  for (std::string_view name : engine_row_of(e).weight_formats) {
    const numeric_format& f = find_format(name);
    if (f.bits > 0.8 * bits || offered == 2) continue;
    precision pr = precision::of(f, base.pr.kv);
    std::optional<bytes> stored;
    if (base.source) stored = loaded_weight_bytes(*base.source, pr, false);
    out.emplace_back(pr, stored);
    ++offered;
  }
  return out;
}

/// "1 user", "4 users".
std::string users_of(double n) { return thousands_plain(n) + (n == 1 ? " user" : " users"); }

std::string show_tps(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

std::string show_s(double v) {
  char b[32];
  std::snprintf(b, sizeof b, v < 1 ? "%.0f ms" : "%.2f s", v < 1 ? 1e3 * v : v);
  return b;
}

/// The SLOs against a candidate's estimate (`slow` false) or slow edge: the
/// first one missed and by how much (relative), or none.
std::optional<std::pair<std::string, double>> first_miss(const candidate& c, const slo& t, bool slow) {
  const double tps = slow ? c.tokens_per_s_per_user_slow : c.tokens_per_s_per_user;
  const double ttft = slow ? c.ttft_slow_s : c.ttft_s;
  const std::string edge = slow ? " at the band's slow edge" : "";
  std::optional<std::pair<std::string, double>> out;
  double worst = 0;
  const auto miss = [&](std::string what, double by) {
    if (!out) out.emplace(std::move(what), by);
    worst = std::max(worst, by);
  };
  // The budget first: a deployment one cannot buy is out, however fast.
  if (t.max_purchase > 0 && c.purchase && *c.purchase > t.max_purchase) {
    miss("USD " + thousands_plain(std::round(*c.purchase)) + " to buy > budget " +
             thousands_plain(std::round(t.max_purchase)),
         *c.purchase / t.max_purchase - 1);
  }
  if (t.ttft.value() > 0 && ttft > t.ttft.value()) {
    miss("TTFT " + show_s(ttft) + " > " + show_s(t.ttft.value()) + edge, ttft / t.ttft.value() - 1);
  }
  if (t.min_tokens_per_s > 0 && tps < t.min_tokens_per_s) {
    miss(show_tps(tps) + " tokens/s per user < " + show_tps(t.min_tokens_per_s) + edge,
         tps > 0 ? t.min_tokens_per_s / tps - 1 : 1e9);
  }
  if (!slow && t.max_cost_per_million > 0 && c.cost_per_million && *c.cost_per_million > t.max_cost_per_million) {
    miss("USD " + show_tps(*c.cost_per_million) + " per million tokens > " + show_tps(t.max_cost_per_million),
         *c.cost_per_million / t.max_cost_per_million - 1);
  }
  if (!slow && t.max_joules_per_token > 0 && c.joules_per_token && *c.joules_per_token > t.max_joules_per_token) {
    miss(show_tps(*c.joules_per_token) + " J per token > " + show_tps(t.max_joules_per_token),
         *c.joules_per_token / t.max_joules_per_token - 1);
  }
  if (out) out->second = worst;
  return out;
}

void judge(candidate& c, const slo& t) {
  if (const auto m = first_miss(c, t, false)) {
    c.status = verdict::misses;
    c.reason = m->first;
    c.miss = m->second;
  } else if (const auto r = first_miss(c, t, true)) {
    c.status = verdict::at_risk;
    c.reason = r->first;
    c.miss = r->second;
  } else {
    c.status = verdict::meets;
  }
}

void priced(candidate& c, const energy_cost& e, double scale) {
  if (e.power_w) c.power_w = *e.power_w * scale;
  c.joules_per_token = e.joules_per_token;
  if (e.cost_per_hour) {
    c.cost_per_hour = *e.cost_per_hour * scale;
    if (c.output_tokens_per_s > 0) c.cost_per_million = *c.cost_per_hour / (3600 * c.output_tokens_per_s / 1e6);
  }
}


void score_aggregated(candidate& c, const deployment& d, const recommend_input& in,
                             layout_loops* layout) {
  const llmroof::workload& w = in.w;
  const double shared = reuse_of(d, w).shared;
  const double mean_ctx = w.mean_decode_context();
  const double tps_width = band_width(metric::decode_tps_per_seq);
  const double ttft_width = band_width(metric::ttft_ms);
  const price& p = in.pool[c.pool].cost;
  if (p.purchase) c.purchase = c.devices * *p.purchase;
  if (in.rate) {
    const double each = *in.rate / c.replicas;
    const load_result l = serve_at_rate(d, w, each);
    const engine_slots slots = slots_for(d, w);
    c.users_per_instance = l.users;
    // Past a billion requests in flight no engine holds them: one request's memory says whether it fits at all.
    const memory_plan m = d.memory(l.users <= 1e9 ? std::max(1.0, std::ceil(l.users)) : 1.0, w.request_end(), shared);
    c.max_users = m.max_sequences;
    c.max_context = m.max_context;
    if (!m.weights_fit || slots.slots < 1) {
      c.status = verdict::no_fit;
      c.reason = !m.weights_fit ? "weights do not fit" : "not one request of prompt + output fits";
      return;
    }
    if (!l.keeps_up || !l.stable || l.users > 1e9 || std::ceil(l.users) > slots.slots) {
      c.status = verdict::misses;
      c.reason = !l.keeps_up ? "cannot keep up with " + show_tps(each) + " requests/s per instance"
                             : "the KV cache holds " + thousands_plain(slots.slots) + " requests, " +
                                   thousands_plain(std::ceil(l.users)) + " in flight";
      c.miss = 1e9;
      return;
    }
    c.tokens_per_s_per_user = l.tokens_per_s_per_user().value();
    c.ttft_s = l.ttft.value();
    c.output_tokens_per_s = *in.rate * w.output;
    priced(c, energy_and_cost(d, power_step(d, std::max(1.0, l.decoding), mean_ctx), c.output_tokens_per_s / c.replicas, p),
           c.replicas);
    if (first_miss(c, in.target, false)) {
      judge(c, in.target);
      return;
    }
    const load_result ls = serve_at_rate(d.with_efficiency(slower(d.efficiency())), w, each);
    if (!ls.keeps_up) {
      c.status = verdict::at_risk;
      c.reason = "cannot keep up with " + show_tps(each) + " requests/s per instance at the band's slow edge";
      c.miss = 1;
      return;
    }
    c.tokens_per_s_per_user_slow = std::min(ls.tokens_per_s_per_user().value(), c.tokens_per_s_per_user * std::exp(-tps_width));
    c.ttft_slow_s = std::max(ls.ttft.value(), c.ttft_s * std::exp(ttft_width));
    judge(c, in.target);
    return;
  }
  const double u = std::ceil(w.users / c.replicas);
  c.users_per_instance = u;
  if (std::string why = d.context_refusal(w.context); !why.empty()) {
    c.status = verdict::no_fit;
    c.reason = std::move(why);
    return;
  }
  const memory_plan m = d.memory(u, w.context, shared);
  c.max_users = m.max_sequences;
  c.max_context = m.max_context;
  if (!m.fits) {
    c.status = verdict::no_fit;
    c.reason = !m.weights_fit ? "weights do not fit (short by " + show_tps(-m.kv_budget.value() / 1073741824.0) + " GiB)"
                              : "does not fit: " + users_of(std::floor(m.max_sequences)) + " of " +
                                    thousands_plain(w.context) + " tokens per instance at most, or " +
                                    thousands_plain(std::floor(m.max_context)) + " tokens each for " + thousands_plain(u);
    return;
  }
  const engine_slots slots = slots_for(d, w);
  layout_loops own;
  layout_loops& loops = layout ? *layout : own;
  if (!loops.terms) loops.terms.emplace(d, w);
  const closed_loop_result loop = detail::serve_closed_loop(d, w, u, search_tolerance, slots, &*loops.terms);
  if (loop.active < u - 1e-9) {
    c.status = verdict::misses;
    // 199.6 of 200 is no whole user: say the fraction rather than "200 of 200".
    std::string inside = thousands_plain(std::floor(loop.active));
    if (loop.active > u - 1) {
      char b[32];
      std::snprintf(b, sizeof b, "%.2f", std::floor(loop.active * 100) / 100);
      inside = b;
    }
    c.reason = "only " + inside + " of " + thousands_plain(u) + " users inside the engine (" +
               std::string(to_string(loop.limit)) + ")";
    c.miss = u / std::max(loop.active, 1e-9) - 1;
    c.tokens_per_s_per_user = loop.tokens_per_s_per_user().value();
    c.ttft_s = loop.ttft.value();
    c.output_tokens_per_s = c.replicas * loop.output_tokens_per_s(w.output);
    return;
  }
  c.tokens_per_s_per_user = loop.tokens_per_s_per_user().value();
  c.ttft_s = loop.ttft.value();
  c.output_tokens_per_s = c.replicas * loop.output_tokens_per_s(w.output);
  priced(c, energy_and_cost(d, power_step(d, u, w.context), c.output_tokens_per_s / c.replicas, p), c.replicas);
  // The slow edge only matters to a candidate that meets the targets.
  if (first_miss(c, in.target, false)) {
    judge(c, in.target);
    return;
  }
  if (!loops.slow || loops.slow->engine.max_sequences != d.engine.max_sequences) {
    loops.slow.emplace(d.with_efficiency(slower(d.efficiency())));
    loops.slow_terms.emplace(*loops.slow, w);
  }
  const closed_loop_result ls = detail::serve_closed_loop(*loops.slow, w, u, search_tolerance, slots, &*loops.slow_terms);
  c.tokens_per_s_per_user_slow =
      std::min(ls.tokens_per_s_per_user().value(), c.tokens_per_s_per_user * std::exp(-tps_width));
  c.ttft_slow_s = std::max(ls.ttft.value(), c.ttft_s * std::exp(ttft_width));
  judge(c, in.target);
}

memory_plan memory_for_decode(const deployment& dec, const recommend_input& in, int y) {
  const llmroof::workload& w = in.w;
  return in.rate ? memory_of(dec, w, 1, w.request_end()) : memory_of(dec, w, std::ceil(w.users / y), w.context);
}

void score_disaggregated(candidate& c, const pd_split& pair, const memory_plan& m, const recommend_input& in) {
  const llmroof::workload& w = in.w;
  const int x = c.prefill_instances, y = c.decode_instances;
  const double share = in.rate ? 1 : std::ceil(w.users / y);
  c.max_users = m.max_sequences;
  c.max_context = m.max_context;
  if (!m.fits) {
    c.status = verdict::no_fit;
    c.reason = "does not fit: " + users_of(std::floor(m.max_sequences)) + " of " +
               thousands_plain(w.context) + " tokens per decode instance at most, or " +
               thousands_plain(std::floor(m.max_context)) + " tokens each for " + thousands_plain(share);
    return;
  }
  const pd_split split = pair.with_instances(x, y);
  const pd_row cap = split.row();
  if (cap.requests_per_s <= 0) {
    c.status = cap.limit == serving_limit::memory ? verdict::no_fit : verdict::misses;
    c.reason = "no rate meets the targets (limit: " + std::string(to_string(cap.limit)) + ")";
    c.miss = 1e9;
    return;
  }
  const auto latency = [&](const pd_row& r) { return r.ttft.value() + w.decode_steps() * r.tpot.value(); };
  double needed = in.rate ? *in.rate : 0;
  double held = 0;  // closed loop: the sequences per decode instance that hold the users
  if (!in.rate) {
    const double most = cap.requests_per_s * latency(cap);  // users in flight at the goodput
    if (most < w.users) {
      c.status = verdict::misses;
      c.reason = "holds " + show_tps(most) + " users in flight within the targets, " + thousands_plain(w.users) + " asked";
      c.miss = w.users / most - 1;
      c.tokens_per_s_per_user = 1 / cap.tpot.value();
      c.ttft_s = cap.ttft.value();
      return;
    }
    // The n sequences per decode instance whose rate λ(n) = y n / ((output - 1) x
    // step(n)) holds the users: λ (TTFT(λ) + (output - 1) x step(n)) = λ TTFT(λ) + y n
    // = N, which grows with n (regula falsi, one decode step a trial; infinite
    // where the prefill or link queue does not keep up).
    const auto in_flight = [&](double n) {
      const double rate = split.decode_rate(n);
      return rate * split.ttft_at(rate) + y * n - w.users;
    };
    held = detail::root_increasing(in_flight, 1e-9, std::max(1.0, split.most_sequences()), search_tolerance);
    needed = split.decode_rate(held);
  }
  const pd_row r = needed >= cap.requests_per_s ? cap : held > 0 ? split.row_holding(held) : split.row(needed);
  c.users_per_instance = r.decode_users;
  c.tokens_per_s_per_user = 1 / r.tpot.value();
  c.ttft_s = r.ttft.value();
  c.tokens_per_s_per_user_slow = c.tokens_per_s_per_user * std::exp(-band_width(metric::decode_tps_per_seq));
  c.ttft_slow_s = c.ttft_s * std::exp(band_width(metric::ttft_ms));
  c.output_tokens_per_s = std::min(needed, r.requests_per_s) * w.output;
  if (r.power_w) {
    c.power_w = r.power_w;
    c.joules_per_token = *r.power_w / c.output_tokens_per_s;
  }
  const price& p = in.pool[c.pool].cost;
  if (p.purchase) c.purchase = c.devices * *p.purchase;
  if (p.per_device_hour || p.purchase || p.electricity_kwh) {
    double per_hour = c.devices * hardware_per_device_hour(p);
    if (p.electricity_kwh && r.power_w) per_hour += *r.power_w / 1e3 * p.facility_pue() * *p.electricity_kwh;
    c.cost_per_hour = per_hour;
    if (c.output_tokens_per_s > 0) c.cost_per_million = per_hour / (3600 * c.output_tokens_per_s / 1e6);
  }
  if (r.requests_per_s < needed * (1 - 1e-9)) {
    c.status = verdict::misses;
    c.reason = "serves " + show_tps(r.requests_per_s) + " requests/s within the targets, " + show_tps(needed) + " needed";
    c.miss = needed / r.requests_per_s - 1;
    return;
  }
  judge(c, in.target);
}


bool better(const candidate& a, const candidate& b) {
  if (a.status != b.status) return a.status < b.status;
  if (a.status == verdict::misses) return a.miss < b.miss;
  if (a.status == verdict::no_fit) return a.max_users > b.max_users;
  if (a.cost() != b.cost()) return a.cost() < b.cost();
  if (a.weight_bits != b.weight_bits) return a.weight_bits > b.weight_bits;
  if (a.kv_bits != b.kv_bits) return a.kv_bits > b.kv_bits;
  if (a.tokens_per_s_per_user_slow != b.tokens_per_s_per_user_slow) return a.tokens_per_s_per_user_slow > b.tokens_per_s_per_user_slow;
  return a.tokens_per_s_per_device() > b.tokens_per_s_per_device();
}

bool dominates(const candidate& a, const candidate& b) {
  const bool ge = a.tokens_per_s_per_user >= b.tokens_per_s_per_user &&
                  a.tokens_per_s_per_device() >= b.tokens_per_s_per_device() && a.cost() <= b.cost() &&
                  a.weight_bits >= b.weight_bits && a.kv_bits >= b.kv_bits;
  const bool gt = a.tokens_per_s_per_user > b.tokens_per_s_per_user ||
                  a.tokens_per_s_per_device() > b.tokens_per_s_per_device() || a.cost() < b.cost() ||
                  a.weight_bits > b.weight_bits || a.kv_bits > b.kv_bits;
  return ge && gt;
}

}  // namespace detail

}  // namespace llmroof
