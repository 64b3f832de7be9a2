// What to run: every way to serve one workload on a pool of machines (model,
// device kind and count, engine, weight and KV formats, layout, replicas,
// offload, prefill/decode apart, the model's own MTP), pruned by memory,
// scored by the load model under the SLOs with the band's slow edge, and
// the answer: the cheapest that meets every target, the Pareto front, the
// best per device kind, and for each rejected one its first reason.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iterator>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llmroof/serving/alternatives.hpp"
#include "llmroof/serving/capacity_search.hpp"
#include "llmroof/deployment.hpp"
#include "llmroof/serving/disaggregation.hpp"
#include "llmroof/serving/energy.hpp"
#include "llmroof/units/metric.hpp"
#include "llmroof/serving/speculative_step.hpp"
#include "llmroof/serving/workload.hpp"

namespace llmroof {

/// Devices of one kind a search may use: the count owned or allowed, how
/// many a node holds (0: all in one node), and their price (none: the
/// search counts devices instead of dollars).
struct pool_entry {
  const device* dev = nullptr;
  int count = 1;
  int per_node = 0;
  price cost;
};

/// Service-level objectives, each 0 for none: mean TTFT, tokens/s each
/// user decodes, USD per million output tokens, joules per output token,
/// and a capital budget: USD the devices cost to buy (their purchase prices).
struct slo {
  seconds ttft = make_seconds(0);
  double min_tokens_per_s = 0;
  double max_cost_per_million = 0;
  double max_joules_per_token = 0;
  double max_purchase = 0;
};

/// What a search may change. Engines empty: engines_for(device).
struct search_space {
  std::vector<std::string> engines;
  engine_overrides engine_options;
  bool formats = true;        ///< also the engine's smaller KV formats and quantized weights
  /// KV formats to try (those the engine holds); empty: the model's own and,
  /// with `formats`, the smaller ones the engine holds.
  std::vector<std::string> kv;
  bool replicas = true;       ///< copies of a smaller instance (data parallel)
  bool offload = true;        ///< llama.cpp on one device: the fewest layers in host RAM that fit
  bool disaggregated = true;  ///< x prefill + y decode instances (needs a TTFT target)
  bool speculation = true;    ///< the model's own MTP layers where the engine runs them
  int max_count = 65536;      ///< devices per kind tried at most (powers of two and the count); default: the pool's
  int threads = 0;            ///< threads of the search (0: one per hardware thread)
  /// Candidates kept whole: a search that scores more keeps, of each
  /// (model, device kind) part, only those its answer can use (the best of
  /// each status and cost, the fronts, the closest misses, the published
  /// start) and counts the rest, so memory stays bounded.
  std::size_t keep = 100000;
};

/// A search's inputs. `models` are device-free deployments (resolve without
/// a device): the model, its formats as resolved, its stored bytes.
/// `rate` set: an open loop of that many requests/s; else a closed loop of
/// workload.users users.
struct recommend_input {
  std::vector<deployment> models;
  std::vector<std::string> labels;  ///< as the user named each model (default: its id)
  std::vector<pool_entry> pool;
  workload w;
  std::optional<double> rate;
  slo target;
  search_space space;
};

/// How a candidate stands against the SLOs: meets them at its band's slow
/// edge; at_risk (meets them at its estimate only); misses (its estimate
/// misses one); no_fit (memory).
enum class verdict : std::uint8_t { meets, at_risk, misses, no_fit };
inline constexpr std::array<std::string_view, 4> verdict_names{"meets", "at_risk", "misses", "no_fit"};
constexpr std::string_view to_string(verdict v) { return detail::enum_name(v, verdict_names); }

/// One way to serve the workload, with its figures.
struct candidate {
  std::size_t model = 0;  ///< index into recommend_input::models
  std::size_t pool = 0;   ///< index into recommend_input::pool
  std::string engine;     ///< qualified engine name
  std::string weights;    ///< bulk weight format (the experts' in a MoE model)
  std::string kv;
  double weight_bits = 0; ///< of `weights`: at equal cost the search prefers the least quantized
  double kv_bits = 0;
  parallel_plan layout;   ///< of one instance (disaggregated: of a decode instance)
  parallel_plan prefill_layout;  ///< disaggregated: of a prefill instance
  int replicas = 1;       ///< aggregated instances (0 when disaggregated)
  int prefill_instances = 0;  ///< disaggregated: x prefill + y decode instances
  int decode_instances = 0;
  int devices = 1;        ///< all of them
  double offload = 0;     ///< share of layers in host RAM
  bool mtp = false;       ///< the model's MTP layers draft one token
  double users_per_instance = 0;
  // Figures (0 where not served).
  double tokens_per_s_per_user = 0;       ///< estimate
  double tokens_per_s_per_user_slow = 0;  ///< at the band's slow edge
  double ttft_s = 0;
  double ttft_slow_s = 0;
  double output_tokens_per_s = 0;         ///< all devices
  std::optional<double> power_w;          ///< all devices (unknown without a TDP)
  std::optional<double> joules_per_token;
  std::optional<double> cost_per_hour;    ///< USD, with a price
  std::optional<double> cost_per_million; ///< USD per million output tokens
  std::optional<double> purchase;         ///< USD to buy its devices, with purchase prices
  double max_users = 0;     ///< sequences of the context one instance holds
  double max_context = 0;   ///< tokens each of users_per_instance can hold
  verdict status = verdict::no_fit;
  std::string reason;       ///< the first SLO missed (or why it is at risk); empty when it meets
  double miss = 0;          ///< by how much, relative (0.25: 25% short of the worst target)
  bool on_front = false;
  [[nodiscard]] double tokens_per_s_per_device() const { return devices > 0 ? output_tokens_per_s / devices : 0; }
  /// What the search minimises: USD per hour with prices, else devices.
  [[nodiscard]] double cost() const { return cost_per_hour ? *cost_per_hour : devices; }
  /// "2 x TP 1", "1 x TP 2", "1P3D of TP 1", with the offload and MTP.
  [[nodiscard]] std::string layout_label() const {
    std::string s = prefill_instances > 0
                        ? std::to_string(prefill_instances) + "P (" + layout_name(prefill_layout) + ") + " +
                              std::to_string(decode_instances) + "D (" + layout_name(layout) + ")"
                    : replicas > 1 ? std::to_string(replicas) + " replicas of " + layout_name(layout)
                                   : layout_name(layout);
    if (offload > 0) {
      char b[48];
      std::snprintf(b, sizeof b, ", %.0f%% of layers on the host", 100 * offload);
      s += b;
    }
    if (mtp) s += ", MTP";
    return s;
  }
};

/// A model as published on one device of a kind, under the first engine
/// tried (the search's first candidate there), and when it does not hold
/// the users, each change alone that would (plan_alternatives: a smaller KV
/// or weight format, more devices up to the pool's, fewer users, a shorter
/// context).
struct published_start {
  std::size_t model = 0;
  std::size_t pool = 0;
  std::size_t candidate = 0;
  std::vector<alternative> fixes;
};

/// The answer: every candidate, the recommended one, the Pareto front over
/// tokens/s per user, tokens/s per device, cost, weight and KV bits (of those
/// meeting the SLOs at their estimate, or of every served one when none
/// does), the best per device kind, and the closest misses.
struct recommendation {
  std::vector<candidate> candidates;     ///< every one scored, or (pruned) those the answer uses
  std::size_t searched = 0;              ///< candidates scored, kept or not
  std::array<std::size_t, 4> counts{};   ///< of them, per verdict
  bool pruned = false;                   ///< more than search_space::keep were scored: see candidates
  std::optional<std::size_t> best;       ///< cheapest meeting every SLO at its slow edge (else at its estimate: at risk)
  std::vector<std::size_t> front;        ///< by cost
  std::vector<std::size_t> per_device;   ///< the best per pool entry (none when it has no candidate)
  std::vector<std::size_t> closest;      ///< when nothing meets: the nearest misses, nearest first
  std::string why;                       ///< why the best was chosen, or what nothing meets
  std::vector<published_start> published;  ///< per model and device kind
  [[nodiscard]] bool met() const { return best.has_value(); }
};

namespace detail {

/// The items of a comma-separated list, spaces trimmed (empty ones kept).
inline std::vector<std::string_view> list_items(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = std::min(text.find(',', at), text.size());
    std::string_view item = text.substr(at, end - at);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    out.push_back(item);
    at = end + 1;
  }
  return out;
}

}  // namespace detail

/// "h100-sxm:8,rtx-pro-6000-blackwell:4,m3-ultra-80c" (count 1 when absent)
/// as (name, count) pairs. Throws std::invalid_argument naming `field`.
inline std::vector<std::pair<std::string, int>> parse_pool(std::string_view text, std::string_view field = "pool") {
  std::vector<std::pair<std::string, int>> out;
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument(std::string(field) + " " + why + " (got '" + std::string(text) + "')");
  };
  for (std::string_view item : detail::list_items(text)) {
    if (item.empty()) throw bad("must list devices like 'h100-sxm:8,rtx-4090:2'");
    // custom:memory=...,bandwidth=... holds commas and colons of its own.
    if (item.substr(0, 7) == "custom:" || item.find('=') != std::string_view::npos) {
      throw bad("takes catalog ids or device files, not 'custom:' specs (their commas split the list): write the "
                "device to a .json file");
    }
    int n = 1;
    if (const auto colon = item.rfind(':'); colon != std::string_view::npos) {
      const std::string count(item.substr(colon + 1));
      char* stop = nullptr;
      const long v = std::strtol(count.c_str(), &stop, 10);
      if (count.empty() || *stop != '\0' || v < 1 || v > 65536) throw bad("needs a whole count in [1, 65536] after ':'");
      n = static_cast<int>(v);
      item = item.substr(0, colon);
      if (item.empty()) throw bad("needs a device before ':'");
    }
    for (const auto& [name, c] : out) {
      if (name == item) throw bad("names '" + name + "' twice");
    }
    out.emplace_back(std::string(item), n);
  }
  return out;
}

/// "h100-sxm=2.5/h,rtx-pro-6000-blackwell=8500": USD per device-hour (/h)
/// or a purchase price per device, by device name. Throws
/// std::invalid_argument naming `field`.
inline std::vector<std::pair<std::string, price>> parse_prices(std::string_view text, std::string_view field = "price") {
  std::vector<std::pair<std::string, price>> out;
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument(std::string(field) + " " + why + " (got '" + std::string(text) + "')");
  };
  for (std::string_view item : detail::list_items(text)) {
    const auto eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) throw bad("must read like 'h100-sxm=2.5/h' or 'rtx-4090=1800'");
    std::string value(item.substr(eq + 1));
    const bool hourly = value.size() > 2 && value.substr(value.size() - 2) == "/h";
    if (hourly) value.resize(value.size() - 2);
    char* stop = nullptr;
    const double v = std::strtod(value.c_str(), &stop);
    if (value.empty() || *stop != '\0' || !std::isfinite(v) || v < 0) throw bad("needs a price >= 0 after '='");
    price p;
    (hourly ? p.per_device_hour : p.purchase) = v;
    validate(p);
    const std::string name(item.substr(0, eq));
    for (const auto& [seen, q] : out) {
      if (seen == name) throw bad("names '" + name + "' twice");
    }
    out.emplace_back(name, p);
  }
  return out;
}

namespace detail {

/// Relative precision of the rates a search solves for: figures to ~4 digits.
inline constexpr double search_tolerance = 1e-4;

inline std::string thousands_plain(double v) {
  const long long n = std::llround(v);
  const std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out = n < 0 ? "-" : "";
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

/// Instance sizes a search tries on `count` devices: powers of two and the count.
inline std::vector<int> instance_sizes(int count) {
  std::vector<int> out;
  for (int s = 1; s <= count; s *= 2) out.push_back(s);
  if (out.back() != count) out.push_back(count);
  return out;
}

/// Layouts of one instance of `s` devices (`per_node` a node): tensor
/// parallel within a node and pipeline stages across nodes, all pipeline,
/// expert parallel for a MoE model, data-parallel attention beside TP for an
/// MLA model within a node; llama.cpp splits by layers (its default) or, a
/// dense model, by rows (--split-mode row, tensor parallel).
inline std::vector<parallel_plan> layouts_of(const architecture& a, bool splits_layers, bool row_split, int s,
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

/// The smaller KV formats an engine holds below `kv` (fp8, q8_0, q4_0), `kv` first.
inline std::vector<numeric_format> kv_formats_for(engine_id e, const numeric_format& kv, bool more) {
  std::vector<numeric_format> out{kv};
  if (!more) return out;
  for (const char* name : {"fp8-e4m3", "q8_0", "q4_0"}) {
    const numeric_format& f = find_format(name);
    if (f.bits < kv.bits && kv_format_supported(e, f)) out.push_back(f);
  }
  return out;
}

/// The checkpoint's formats first, then up to two quantized weight formats
/// the engine runs at well under its bits (alternatives.hpp's rule).
inline std::vector<std::pair<precision, std::optional<bytes>>> weights_for(const deployment& base, engine_id e, bool more) {
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
inline std::string users_of(double n) { return thousands_plain(n) + (n == 1 ? " user" : " users"); }

inline std::string show_tps(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

inline std::string show_s(double v) {
  char b[32];
  std::snprintf(b, sizeof b, v < 1 ? "%.0f ms" : "%.2f s", v < 1 ? 1e3 * v : v);
  return b;
}

/// The SLOs against a candidate's estimate (`slow` false) or slow edge: the
/// first one missed and by how much (relative), or none.
inline std::optional<std::pair<std::string, double>> first_miss(const candidate& c, const slo& t, bool slow) {
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

/// Sets a served candidate's verdict from its figures.
inline void judge(candidate& c, const slo& t) {
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

inline void priced(candidate& c, const energy_cost& e, double scale) {
  if (e.power_w) c.power_w = *e.power_w * scale;
  c.joules_per_token = e.joules_per_token;
  if (e.cost_per_hour) {
    c.cost_per_hour = *e.cost_per_hour * scale;
    if (c.output_tokens_per_s > 0) c.cost_per_million = *c.cost_per_hour / (3600 * c.output_tokens_per_s / 1e6);
  }
}

/// What the replica counts of one layout share in score_aggregated's closed
/// loops, each made when first needed: the open loop's rate-free terms, and
/// the slow edge's deployment and terms. A replica count changes the users
/// and the slots (given to the loop), which they do not read; a
/// single-slot server's max_num_seqs (-np) is checked before reuse.
struct layout_loops {
  std::optional<open_loop> terms;
  std::optional<deployment> slow;
  std::optional<open_loop> slow_terms;
};

/// An aggregated candidate: `replicas` copies of `d`, the workload's users
/// spread over them (closed loop) or its rate (open loop). `layout`: what
/// the other replica counts of `d`'s layout computed.
inline void score_aggregated(candidate& c, const deployment& d, const recommend_input& in,
                             layout_loops* layout = nullptr) {
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

/// A decode instance's memory among y of them: its share of the closed
/// loop's users at the context, or one request of the open loop's shape.
inline memory_plan memory_for_decode(const deployment& dec, const recommend_input& in, int y) {
  const llmroof::workload& w = in.w;
  return in.rate ? memory_of(dec, w, 1, w.request_end()) : memory_of(dec, w, std::ceil(w.users / y), w.context);
}

/// The candidate's x prefill instances for y decode ones (`pair`: the two
/// instance sizes' pd_split at the SLOs' TTFT and TPOT, any counts; the
/// candidate's counts applied here; `m`: a decode instance's memory_for_decode):
/// the goodput must carry the workload's rate, or,
/// for N closed-loop users, the rate λ at which λ x (TTFT(λ) + output x
/// TPOT(λ)) = N (Little's law; regula falsi over the decode pool's
/// sequences, the left side grows with them), and the figures are those at
/// that rate.
inline void score_disaggregated(candidate& c, const pd_split& pair, const memory_plan& m, const recommend_input& in) {
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


/// Orders candidates by the recommendation's rule: meets before at_risk
/// before misses before no_fit; then (meets, at_risk) the cheaper, then the
/// least quantized (weights, then KV: what the model answers is the
/// checkpoint's, as near as the budget allows), then the faster at the slow
/// edge, then the more tokens/s per device; misses by the smaller miss.
inline bool better(const candidate& a, const candidate& b) {
  if (a.status != b.status) return a.status < b.status;
  if (a.status == verdict::misses) return a.miss < b.miss;
  if (a.status == verdict::no_fit) return a.max_users > b.max_users;
  if (a.cost() != b.cost()) return a.cost() < b.cost();
  if (a.weight_bits != b.weight_bits) return a.weight_bits > b.weight_bits;
  if (a.kv_bits != b.kv_bits) return a.kv_bits > b.kv_bits;
  if (a.tokens_per_s_per_user_slow != b.tokens_per_s_per_user_slow) return a.tokens_per_s_per_user_slow > b.tokens_per_s_per_user_slow;
  return a.tokens_per_s_per_device() > b.tokens_per_s_per_device();
}

/// Whether `a` is at least as good as `b` in tokens/s per user, tokens/s
/// per device, cost, weight and KV bits (what the model answers), and
/// better in one.
inline bool dominates(const candidate& a, const candidate& b) {
  const bool ge = a.tokens_per_s_per_user >= b.tokens_per_s_per_user &&
                  a.tokens_per_s_per_device() >= b.tokens_per_s_per_device() && a.cost() <= b.cost() &&
                  a.weight_bits >= b.weight_bits && a.kv_bits >= b.kv_bits;
  const bool gt = a.tokens_per_s_per_user > b.tokens_per_s_per_user ||
                  a.tokens_per_s_per_device() > b.tokens_per_s_per_device() || a.cost() < b.cost() ||
                  a.weight_bits > b.weight_bits || a.kv_bits > b.kv_bits;
  return ge && gt;
}

}  // namespace detail

/// Throws std::invalid_argument naming the field: no model, an empty pool
/// or a pool entry without a device or with a count outside [1, 65536],
/// prices on some kinds and not others, invalid workload or SLO fields, a
/// rate <= 0.
inline void validate(const recommend_input& in) {
  if (in.models.empty()) throw std::invalid_argument("models: give at least one model");
  if (in.pool.empty()) throw std::invalid_argument("pool: give at least one device kind");
  if (!in.labels.empty() && in.labels.size() != in.models.size()) {
    throw std::invalid_argument("labels: one per model (got " + std::to_string(in.labels.size()) + " for " +
                                std::to_string(in.models.size()) + ")");
  }
  // One of each: a kind, engine or model named twice would be searched twice.
  for (std::size_t i = 0; i < in.pool.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (in.pool[i].dev && in.pool[j].dev && in.pool[i].dev->id == in.pool[j].dev->id) {
        throw std::invalid_argument("pool names '" + in.pool[i].dev->id + "' twice");
      }
    }
  }
  for (std::size_t i = 0; i < in.space.engines.size(); ++i) {
    const std::string name = find_engine(in.space.engines[i]).qualified_name();
    for (std::size_t j = 0; j < i; ++j) {
      if (find_engine(in.space.engines[j]).qualified_name() == name) {
        throw std::invalid_argument("engines names '" + name + "' twice");
      }
    }
  }
  for (std::size_t i = 0; i < in.models.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      const deployment &a = in.models[i], &b = in.models[j];
      if (a.model.id == b.model.id && a.pr.weights.name == b.pr.weights.name && a.pr.kv.name == b.pr.kv.name &&
          a.stored.has_value() == b.stored.has_value() && (!a.stored || a.stored->value() == b.stored->value())) {
        throw std::invalid_argument("models names '" + a.model.id + "' twice" +
                                    (in.labels.size() == in.models.size() && in.labels[i] != in.labels[j]
                                         ? " (as '" + in.labels[j] + "' and '" + in.labels[i] + "')"
                                         : std::string()));
      }
    }
  }
  int priced = 0;
  for (const pool_entry& e : in.pool) {
    if (e.dev == nullptr) throw std::invalid_argument("pool: an entry without a device");
    detail::require_in("pool count", e.count, 1, 65536);
    detail::require_in("pool per_node", e.per_node, 0, 1024);
    validate(e.cost);
    priced += e.cost.per_device_hour || e.cost.purchase ? 1 : 0;
  }
  if (priced > 0 && priced < static_cast<int>(in.pool.size())) {
    throw std::invalid_argument("price: give every device kind of the pool a price, or none");
  }
  validate(in.w);
  if (in.rate) detail::require_in("rate", *in.rate, 1e-9, 1e9);
  detail::require_non_negative("ttft", in.target.ttft.value());
  detail::require_non_negative("tokens_per_s", in.target.min_tokens_per_s);
  detail::require_non_negative("max_cost_per_million", in.target.max_cost_per_million);
  detail::require_non_negative("max_joules_per_token", in.target.max_joules_per_token);
  detail::require_non_negative("budget", in.target.max_purchase);
  detail::require_in("max_count", in.space.max_count, 1, 65536);
  // A target no candidate can be measured against is refused, not met.
  for (const pool_entry& e : in.pool) {
    if (in.target.max_joules_per_token > 0 && !(e.dev->tdp_w > 0)) {
      throw std::invalid_argument("max_joules_per_token needs each device's power figure: '" + e.dev->id +
                                  "' has none (give its TDP in a device file)");
    }
    if (in.target.max_purchase > 0 && !e.cost.purchase) {
      throw std::invalid_argument("budget needs a purchase price for every device kind ('" + e.dev->id +
                                  "' has none: give its price as a purchase, e.g. " + e.dev->id + "=30000)");
    }
    if (in.target.max_cost_per_million > 0 && !e.cost.per_device_hour && !e.cost.purchase && !e.cost.electricity_kwh) {
      throw std::invalid_argument("max_cost_per_million needs a price for every device kind ('" + e.dev->id +
                                  "' has none: give price_per_hour, purchase or electricity)");
    }
  }
  // An engine named for the search runs on some device of the pool (a
  // backend of one vendor's GPUs beside another's is skipped per device).
  for (const std::string& name : in.space.engines) {
    const engine_settings e = find_engine(name);
    if (std::none_of(in.pool.begin(), in.pool.end(), [&](const pool_entry& p) { return runs_on(e, *p.dev); })) {
      throw std::invalid_argument("engines: '" + name + "' runs on none of the pool's devices");
    }
  }
}

/// "1 x rtx-pro-6000-blackwell (1 x TP 2, vllm, weights bf16, KV fp8-e4m3)".
inline std::string describe(const recommend_input& in, const candidate& c) {
  const std::string model = in.labels.empty() ? in.models[c.model].model.id : in.labels[c.model];
  return (in.models.size() > 1 ? model + " on " : std::string()) + std::to_string(c.devices) + " x " +
         in.pool[c.pool].dev->id + " (" + c.layout_label() + ", " + c.engine + ", weights " + c.weights + ", KV " +
         c.kv + ")";
}

namespace detail {

/// The candidates of model `mi` on pool entry `pi`, in search order, and
/// the model as published there.
struct search_part {
  std::vector<candidate> candidates;
  std::optional<published_start> published;
};

inline search_part search_one(const recommend_input& in, std::size_t mi, std::size_t pi) {
  search_part part;
  std::vector<candidate>& found = part.candidates;
  const llmroof::workload& w = in.w;
  const deployment& base = in.models[mi];
  const pool_entry& pe = in.pool[pi];
  const device& dev = *pe.dev;
  const int count = std::min(pe.count, in.space.max_count);
  const int per_node = pe.per_node > 0 ? pe.per_node : count;
  const std::vector<std::string> engines = in.space.engines.empty() ? engines_for(dev) : in.space.engines;
  bool published = false;
  for (const std::string& engine_name : engines) {
    const engine_settings e = configure_engine(engine_name, dev, in.space.engine_options);
    if (!runs_on(e, dev)) continue;  // a named backend of another vendor's GPUs
    const engine_row& row = engine_row_of(e.id);
    const roofline roof(dev, default_profile(dev, e.qualified_name()));
    const auto weights = detail::weights_for(base, e.id, in.space.formats);
    for (const auto& [wpr, stored] : weights) {
      std::vector<numeric_format> kvs;
      for (const std::string& k : in.space.kv) kvs.push_back(find_format(k));
      if (kvs.empty()) kvs = detail::kv_formats_for(e.id, base.pr.kv, in.space.formats);
      for (const numeric_format& kv : kvs) {
        if (!kv_format_supported(e.id, kv)) continue;
        precision pr = wpr;
        pr.kv = kv;
        const auto bulk = base.model.is_moe() ? pr.experts_format() : pr.weights;
        // What every candidate of this engine and these formats says of itself.
        candidate named;
        named.model = mi;
        named.pool = pi;
        named.engine = e.qualified_name();
        named.weights = std::string(bulk.name);
        named.kv = std::string(kv.name);
        named.weight_bits = bulk.bits;
        named.kv_bits = kv.bits;
        for (int s : detail::instance_sizes(count)) {
          for (const parallel_plan& lay : detail::layouts_of(base.model, row.splits_layers, row.row_split, s, per_node)) {
            std::optional<deployment> d;
            try {
              d.emplace(base.model, pr, roof, placement{lay, std::nullopt}, e, stored);
            } catch (const std::invalid_argument&) {
              continue;  // the model does not split that way
            }
            candidate c = named;
            c.layout = lay;
            // Replicas: 1, 2, 4, ... and as many as the count holds; a closed loop
            // stops at more replicas than users, or when one instance holds none.
            const int most = in.space.replicas ? count / s : 1;
            std::vector<int> reps = detail::instance_sizes(most);
            // A single-slot server (llama.cpp's and Ollama's one, mlx-lm's) with
            // more users than slots is started with one per user: llama-server
            // -np N. A batching engine's max_num_seqs (vLLM's 256 or 1024) is its
            // scheduler's cap, and its sampler is profiled at it: kept.
            // `wide` holds the widened copy when one is made (else `dd` is the answer).
            const auto slotted = [&](candidate& x, const deployment& dd, double u,
                                     std::optional<deployment>& wide) -> const deployment& {
              if (in.rate || in.space.engine_options.max_sequences || dd.engine.max_sequences > 4 ||
                  dd.engine.max_sequences >= u) {
                return dd;
              }
              wide.emplace(dd);
              wide->engine.max_sequences = u;
              x.engine += " (" + detail::thousands_plain(u) + " slots)";
              return *wide;
            };
            detail::layout_loops loops, mtp_loops;  // what every replica count shares
            std::optional<deployment> mtp;          // the layout with its MTP drafting, once tried
            for (int r : reps) {
              if (!in.rate && r > w.users) break;
              candidate x = c;
              x.replicas = r;
              x.devices = r * s;
              std::optional<deployment> wide;
              const deployment& dr = slotted(x, *d, std::ceil(w.users / r), wide);
              detail::score_aggregated(x, dr, in, &loops);
              const bool no_fit = x.status == verdict::no_fit;
              if (!published) {
                // The first candidate of a model on a device kind: the checkpoint as
                // published on one device under the first engine; when it does not
                // hold the users, each change alone that would (plan_alternatives).
                published_start p{mi, pi, found.size(), {}};
                if (!in.rate && no_fit) {
                  p.fixes = plan_alternatives(dr, w, memory_of(dr, w, w.users, w.context));
                  // Only the devices the pool has.
                  std::erase_if(p.fixes, [&](const alternative& a) { return a.devices > count; });
                }
                part.published = std::move(p);
                published = true;
              }
              const bool holds_none = x.max_users < 1;
              found.push_back(std::move(x));
              // The MTP layers draft a token where the engine runs them (a closed
              // loop of speculative steps, the MTP module's memory counted).
              if (!no_fit && in.space.speculation && base.model.moe.mtp_layers > 0 && lay.pp == 1 &&
                  std::find(row.speculation.begin(), row.speculation.end(), "mtp") != row.speculation.end()) {
                candidate y = c;
                y.replicas = r;
                y.devices = r * s;
                y.mtp = true;
                if (!mtp) mtp.emplace(d->with_speculation(speculation{}));
                std::optional<deployment> wide_mtp;
                detail::score_aggregated(y, slotted(y, *mtp, std::ceil(w.users / r), wide_mtp), in, &mtp_loops);
                found.push_back(std::move(y));
              }
              if (no_fit && !in.rate && holds_none) break;  // more replicas hold no more per instance
            }
            // One device that does not fit: llama.cpp keeps the fewest layers in host RAM.
            if (s == 1 && in.space.offload && row.splits_layers && !in.rate) {
              const double u = std::ceil(w.users);
              if (!memory_of(*d, w, u, w.context).fits) {
                if (const auto o = smallest_offload(*d, u, w.context, detail::default_offload_host(), reuse_of(*d, w).shared);
                    o && o->layers > 0) {
                  candidate x = c;
                  x.offload = o->layers;
                  std::optional<deployment> wide_offload;
                  const deployment offloaded = d->with_offload(*o);
                  detail::score_aggregated(x, slotted(x, offloaded, u, wide_offload), in);
                  found.push_back(std::move(x));
                }
              }
            }
          }
        }
        // Prefill and decode apart: x prefill instances of one tensor-parallel size
      // and y decode instances of another (DistServe's placements), each size
      // within a node and holding one request; KV over the node's link, across
      // nodes the inter-node one.
      if (in.space.disaggregated && row.disaggregates && count >= 2 && in.target.ttft.value() > 0) {
        std::vector<deployment> sizes;
        for (int s : detail::instance_sizes(count)) {
          if (s >= count || s > per_node) break;
          parallel_plan q;
          q.tp = s;
          q.devices_per_node = s;
          try {
            deployment d(base.model, pr, roof, placement{q, std::nullopt}, e, stored);
            if (!in.rate && !d.context_refusal(w.context).empty()) break;  // the aggregated ones say why
            if (memory_of(d, w, 1, w.request_end()).fits) sizes.push_back(std::move(d));
          } catch (const std::invalid_argument&) {
          }
        }
        kv_transfer link;
        link.link = count > per_node ? default_inter_node_link() : intra_node_link(dev, count);
        link.efficiency = default_kv_link_efficiency;
        serving_targets t;
        t.ttft = in.target.ttft;
        if (in.target.min_tokens_per_s > 0) t.tpot = make_seconds(1 / in.target.min_tokens_per_s);
        // A decode instance's memory depends on its size and y alone: one plan per pair.
        std::vector<std::vector<std::optional<memory_plan>>> decode_memory(
            sizes.size(), std::vector<std::optional<memory_plan>>(std::size_t(count) + 1));
        for (const deployment& pre : sizes) {
          for (std::size_t di = 0; di < sizes.size(); ++di) {
            const deployment& dec = sizes[di];
            const int sp = pre.devices(), sd = dec.devices();
            if (sp + sd > count) continue;  // not one of each fits the pool
            const pd_split pair(pre, 1, dec, 1, w, link, t);  // what every count of them shares
            for (int x = 1; x * sp + sd <= count; ++x) {
              // Every y on small pools; on large ones the most that fit beside x.
              const int most_y = (count - x * sp) / sd;
              for (int y = count / std::min(sp, sd) > 8 ? most_y : 1; y <= most_y; ++y) {
                candidate cd = named;
                cd.layout = dec.parallel();
                cd.prefill_layout = pre.parallel();
                cd.replicas = 0;
                cd.prefill_instances = x;
                cd.decode_instances = y;
                cd.devices = x * sp + y * sd;
                std::optional<memory_plan>& m = decode_memory[di][std::size_t(y)];
                if (!m) m = detail::memory_for_decode(dec, in, y);
                detail::score_disaggregated(cd, pair, *m, in);
                found.push_back(std::move(cd));
              }
            }
          }
        }
      }
    }
  }
  }
  return part;
}

/// Keeps of `part` only the candidates rank() can use, whichever parts
/// join it: per status and cost, the best (the recommendation, the best per
/// kind, "cheaper" and why) and, for meets and at_risk at the part's lowest
/// cost, all of them (the peers counted in `why`); the 5 best misses (the
/// closest); the Pareto fronts over the part's meeting and its served
/// missing candidates (a point dominated here is dominated in the union);
/// the published start. Order is kept, so the merge ranks as it would whole.
inline void prune(search_part& part) {
  std::vector<candidate>& cs = part.candidates;
  const std::size_t n = cs.size();
  if (n == 0) return;
  std::vector<char> keep(n, 0);
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return better(cs[a], cs[b]); });
  std::vector<std::pair<verdict, double>> seen;  // (status, cost) of a best kept
  double lowest[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  for (const candidate& c : cs) {
    if (c.status <= verdict::at_risk) lowest[int(c.status)] = std::min(lowest[int(c.status)], c.cost());
  }
  int misses = 0;
  for (std::size_t i : order) {
    const candidate& c = cs[i];
    const std::pair<verdict, double> key{c.status, c.cost()};
    if (std::find(seen.begin(), seen.end(), key) == seen.end()) {
      seen.push_back(key);
      keep[i] = 1;
    }
    if (c.status <= verdict::at_risk && c.cost() == lowest[int(c.status)]) keep[i] = 1;
    if (c.status == verdict::misses && misses < 5) {
      keep[i] = 1;
      ++misses;
    }
  }
  // The fronts, as rank() draws them (sorted by cost, then speed).
  for (const bool ok : {true, false}) {
    std::vector<std::size_t> pool;
    for (std::size_t i = 0; i < n; ++i) {
      const candidate& c = cs[i];
      if (ok ? c.status <= verdict::at_risk : (c.status == verdict::misses && c.tokens_per_s_per_user > 0)) pool.push_back(i);
    }
    std::stable_sort(pool.begin(), pool.end(), [&](std::size_t a, std::size_t b) {
      const candidate &x = cs[a], &y = cs[b];
      if (x.cost() != y.cost()) return x.cost() < y.cost();
      if (x.tokens_per_s_per_user != y.tokens_per_s_per_user) return x.tokens_per_s_per_user > y.tokens_per_s_per_user;
      return x.tokens_per_s_per_device() > y.tokens_per_s_per_device();
    });
    std::vector<std::size_t> front;
    for (std::size_t i : pool) {
      const candidate& b = cs[i];
      const bool dominated = std::any_of(front.begin(), front.end(), [&](std::size_t f) {
        const candidate& a = cs[f];
        return dominates(a, b) || (a.tokens_per_s_per_user == b.tokens_per_s_per_user &&
                                   a.tokens_per_s_per_device() == b.tokens_per_s_per_device() && a.cost() == b.cost() &&
                                   a.weight_bits == b.weight_bits && a.kv_bits == b.kv_bits);
      });
      if (!dominated) front.push_back(i);
    }
    for (std::size_t f : front) keep[f] = 1;
  }
  if (part.published) keep[part.published->candidate] = 1;
  std::vector<candidate> kept;
  std::size_t published_at = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (part.published && i == part.published->candidate) published_at = kept.size();
    if (keep[i]) kept.push_back(std::move(cs[i]));
  }
  if (part.published) part.published->candidate = published_at;
  cs = std::move(kept);
}

}  // namespace detail

/// Fills `r`'s answer from its scored candidates: the recommendation (the
/// first by detail::better when it meets the targets at least at its
/// estimate), the front, the best per pool entry, the closest misses when
/// nothing meets, and why. recommend() ends with it; a test can rank
/// candidates it scored by hand.
inline void rank(const recommend_input& in, recommendation& out) {
  out.best.reset();
  out.front.clear();
  out.per_device.clear();
  out.closest.clear();
  for (candidate& c : out.candidates) c.on_front = false;
  std::vector<std::size_t> order(out.candidates.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return detail::better(out.candidates[a], out.candidates[b]); });
  if (!order.empty() && out.candidates[order[0]].status <= verdict::at_risk) out.best = order[0];
  // The front: of those meeting the SLOs at their estimate, else of every fitting one.
  bool any_ok = false;
  for (const candidate& c : out.candidates) any_ok = any_ok || c.status <= verdict::at_risk;
  std::vector<std::size_t> pool;
  for (std::size_t i = 0; i < out.candidates.size(); ++i) {
    const candidate& c = out.candidates[i];
    if (any_ok ? c.status <= verdict::at_risk : (c.status == verdict::misses && c.tokens_per_s_per_user > 0)) pool.push_back(i);
  }
  std::stable_sort(pool.begin(), pool.end(), [&](std::size_t a, std::size_t b) {
    const candidate &x = out.candidates[a], &y = out.candidates[b];
    if (x.cost() != y.cost()) return x.cost() < y.cost();
    if (x.tokens_per_s_per_user != y.tokens_per_s_per_user) return x.tokens_per_s_per_user > y.tokens_per_s_per_user;
    return x.tokens_per_s_per_device() > y.tokens_per_s_per_device();
  });
  for (std::size_t i : pool) {
    // Sorted by cost: only an earlier (no costlier) point can dominate this one.
    bool dominated = false;
    for (std::size_t f : out.front) {
      const candidate &a = out.candidates[f], &b = out.candidates[i];
      const bool same = a.tokens_per_s_per_user == b.tokens_per_s_per_user &&
                        a.tokens_per_s_per_device() == b.tokens_per_s_per_device() && a.cost() == b.cost() &&
                        a.weight_bits == b.weight_bits && a.kv_bits == b.kv_bits;
      if (same || detail::dominates(a, b)) {
        dominated = true;
        break;
      }
    }
    if (!dominated) {
      out.front.push_back(i);
      out.candidates[i].on_front = true;
    }
  }
  for (std::size_t pi = 0; pi < in.pool.size(); ++pi) {
    for (std::size_t i : order) {
      if (out.candidates[i].pool == pi) {
        out.per_device.push_back(i);
        break;
      }
    }
  }
  if (!out.best) {
    for (std::size_t i : order) {
      if (out.candidates[i].status != verdict::misses) continue;
      out.closest.push_back(i);
      if (out.closest.size() == 5) break;
    }
  }
  if (out.best) {
    const candidate& b = out.candidates[*out.best];
    std::size_t peers = 0;  // meeting the targets as well, at the same cost
    for (const candidate& c : out.candidates) peers += c.status == b.status && c.cost() == b.cost() ? 1 : 0;
    out.why = std::string(b.status == verdict::meets
                              ? "the cheapest that meets every target at its band's slow edge"
                              : "nothing meets every target at its band's slow edge; the cheapest that meets them "
                                "at its estimate (at risk: " + b.reason + ")") +
              (peers > 1 ? " and, of the " + std::to_string(peers) +
                               " at that cost, the least quantized, then the fastest at its slow edge"
                         : std::string()) +
              ": " + describe(in, b);
    // The obvious alternative: the cheapest candidate cheaper than it, and why it loses.
    std::optional<std::size_t> cheaper;
    for (std::size_t i = 0; i < out.candidates.size(); ++i) {
      const candidate& c = out.candidates[i];
      if (c.cost() < b.cost() && (!cheaper || detail::better(c, out.candidates[*cheaper]))) cheaper = i;
    }
    if (cheaper) out.why += "; cheaper, " + describe(in, out.candidates[*cheaper]) + ": " + out.candidates[*cheaper].reason;
  } else if (!out.closest.empty()) {
    const candidate& c = out.candidates[out.closest.front()];
    out.why = "nothing meets the targets; closest: " + describe(in, c) + ": " + c.reason;
  } else {
    out.why = "nothing fits: " + (out.candidates.empty() ? std::string("no candidate") : out.candidates[order[0]].reason);
  }
}

/// Every candidate of `in`'s search space, scored: the (model, device
/// kind) parts on `space.threads` threads (0: the hardware's), merged in
/// search order, so the answer does not depend on the threads. `progress`
/// (when set) is called with the candidates searched after each part, from
/// one thread at a time. Throws std::invalid_argument as
/// validate(recommend_input), and for an engine name that is unknown.
inline recommendation recommend(const recommend_input& in,
                                const std::function<void(std::size_t)>& progress = nullptr) {
  validate(in);
  recommendation out;
  const std::size_t parts = in.models.size() * in.pool.size();
  std::vector<detail::search_part> done(parts);
  std::vector<std::exception_ptr> failed(parts);
  std::vector<std::size_t> scored(parts, 0);
  std::vector<std::array<std::size_t, 4>> tally(parts);
  std::vector<char> pruned(parts, 0);
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> held{0};  // candidates of finished parts, all scored
  std::mutex report;
  std::size_t searched = 0;
  const auto work = [&] {
    for (std::size_t i = next++; i < parts; i = next++) {
      try {
        done[i] = detail::search_one(in, i / in.pool.size(), i % in.pool.size());
        scored[i] = done[i].candidates.size();
        for (const candidate& c : done[i].candidates) ++tally[i][std::size_t(c.status)];
        // Past the limit every part is pruned (those before it at the end):
        // the answer is the same whichever thread saw the limit first.
        if ((held += scored[i]) > in.space.keep) {
          detail::prune(done[i]);
          pruned[i] = 1;
        }
      } catch (...) {
        failed[i] = std::current_exception();
      }
      if (progress) {
        const std::lock_guard<std::mutex> hold(report);
        searched += scored[i];
        progress(searched);
      }
    }
  };
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t threads = std::min<std::size_t>(parts, in.space.threads > 0 ? std::size_t(in.space.threads) : hardware);
  std::vector<std::thread> helpers;
  for (std::size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
  work();
  for (std::thread& t : helpers) t.join();
  for (std::size_t i = 0; i < parts; ++i) {
    if (failed[i]) std::rethrow_exception(failed[i]);
    out.searched += scored[i];
    for (std::size_t k = 0; k < 4; ++k) out.counts[k] += tally[i][k];
  }
  out.pruned = out.searched > in.space.keep;
  std::size_t total = 0;
  for (std::size_t i = 0; i < parts; ++i) {
    if (out.pruned && !pruned[i]) detail::prune(done[i]);
    total += done[i].candidates.size();
  }
  out.candidates.reserve(total);
  for (std::size_t i = 0; i < parts; ++i) {
    const std::size_t offset = out.candidates.size();
    if (done[i].published) {
      published_start p = std::move(*done[i].published);
      p.candidate += offset;
      out.published.push_back(std::move(p));
    }
    out.candidates.insert(out.candidates.end(), std::make_move_iterator(done[i].candidates.begin()),
                          std::make_move_iterator(done[i].candidates.end()));
  }
  rank(in, out);
  return out;
}

}  // namespace llmroof
