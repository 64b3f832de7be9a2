// Disaggregated prefill and decode: x prefill instances hand each request's
// KV cache over a link to y decode instances, so that decode steps never
// share the device with prompt chunks. Goodput against aggregated replicas
// on the same devices, under TTFT and TPOT targets.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "llmroof/serving/capacity_search.hpp"
#include "llmroof/serving/prefix_cache.hpp"

namespace llmroof {

/// Share of a link's bandwidth a KV transfer reaches: Mooncake's transfer
/// engine moves 87 GB/s over 4 x 200 Gb/s RoCE (100 GB/s of line rate; the
/// Mooncake paper, FAST 2025, and its README).
inline constexpr double default_kv_link_efficiency = 0.87;

/// How a request's KV cache goes from its prefill instance to its decode
/// instance: the link (per device, per direction), the share of it reached,
/// and whether layers are sent as the prefill finishes them (overlap).
struct kv_transfer {
  link_spec link = find_link("ib-ndr");
  double efficiency = default_kv_link_efficiency;
  bool layerwise = false;
};

/// Throws std::invalid_argument naming the field.
inline void validate(const kv_transfer& t) {
  // Below 1% no real transfer engine runs (Mooncake reaches 87%, NIXL/UCX more).
  detail::require_in("kv_link.efficiency", t.efficiency, 0.01, 1);
  detail::require_positive("kv_link.bandwidth", t.link.bandwidth.value());
  detail::require_non_negative("kv_link.latency", t.link.latency.value());
}

/// Seconds to move `kv` bytes over `lanes` devices' links in parallel (each
/// rank of a tensor-parallel instance sends its own heads' share):
/// latency + bytes / (lanes x bandwidth x efficiency).
inline seconds kv_transfer_time(const kv_transfer& t, bytes kv, int lanes = 1) {
  validate(t);
  detail::require_non_negative("kv bytes", kv.value());
  detail::require_in("lanes", lanes, 1, 65536);
  return t.link.latency + kv / (double(lanes) * t.efficiency * t.link.bandwidth);
}

/// A fixed-concurrency benchmark on a layout: `users` users, each sending
/// its next request when the last completes (vllm bench serve
/// --max-concurrency, Dynamo's and InferenceMAX's disaggregated sweeps).
struct pd_loop_result {
  double users = 0;
  double requests_per_s = 0;
  seconds ttft = make_seconds(0);        ///< mean, the wait for the layout to take a request included
  seconds tpot = make_seconds(0);        ///< mean
  seconds queue_wait = make_seconds(0);  ///< mean wait of users beyond what the layout serves
  double inside = 0;                     ///< users the layout holds at once (prefill queue to last token)
  [[nodiscard]] double output_tokens_per_s(double output) const { return requests_per_s * output; }
};

/// One way to serve a workload on a fleet, at its goodput: the most
/// requests/s whose mean TTFT and TPOT meet the targets.
struct pd_row {
  std::string label;        ///< "aggregated 8 x TP1", "2P6D"
  bool disaggregated = false;
  int prefill_instances = 0;
  int decode_instances = 0;  ///< or aggregated replicas
  int devices = 0;           ///< all of them
  double requests_per_s = 0;  ///< goodput (0: the targets cannot be met)
  double output_tokens_per_s = 0;
  seconds ttft = make_seconds(0);      ///< mean, at the goodput
  seconds tpot = make_seconds(0);      ///< mean, at the goodput
  seconds transfer = make_seconds(0);  ///< KV hand-over per request (disaggregated)
  double decode_users = 0;             ///< sequences decoding per decode instance (or replica)
  double prefill_utilisation = 0;      ///< share of the prefill instances' time
  /// Every device of the row at its goodput, W (pd_power; unset without a TDP):
  /// prefill devices at the prefill's power for their busy share and idle
  /// otherwise, decode devices at their step's; aggregated devices split so.
  std::optional<double> power_w;
  [[nodiscard]] std::optional<double> joules_per_output_token() const {
    if (!power_w || !(output_tokens_per_s > 0)) return std::nullopt;
    return *power_w / output_tokens_per_s;
  }
  /// What stops more requests/s: tokens_per_s (the TPOT target), ttft,
  /// prefill (the prefill pool saturates), kv_cache or max_num_seqs (the
  /// decode instances' slots), memory (not one request fits), link.
  serving_limit limit = serving_limit::none;
  /// The same layout under a fixed concurrency, no targets (compare_disaggregation's `users`).
  std::optional<pd_loop_result> loop;
  [[nodiscard]] double output_tokens_per_s_per_device() const { return devices > 0 ? output_tokens_per_s / devices : 0; }
};

/// The targets of a goodput: mean TTFT and TPOT (0: none).
struct serving_targets {
  seconds ttft = make_seconds(0);
  seconds tpot = make_seconds(0);
};

/// What a fixed load gets, unclipped: a TTFT target of an hour stands for
/// none (a split's goodput needs one above 0), no TPOT target.
inline constexpr serving_targets no_targets{make_seconds(3600), make_seconds(0)};

/// Throws std::invalid_argument naming the field: a TTFT target > 0 (a
/// goodput without one lets the prefill queue grow without bound), a TPOT
/// target >= 0 (0: none).
inline void validate(const serving_targets& t) {
  if (!(t.ttft.value() > 0)) detail::fail("ttft_target", "> 0 s for a goodput", t.ttft.value());
  detail::require_non_negative("tpot_target", t.tpot.value());
}

namespace detail {

inline bool meets(seconds x, seconds target) { return target.value() <= 0 || x <= target; }

/// Erlang C: the chance an arrival waits in an M/M/c queue of `c` servers
/// offered `a` = rate x service Erlangs (a < c): a itself at c = 1. From
/// Erlang B's recursion B_k = a B_(k-1) / (k + a B_(k-1)), which stays
/// finite at any c: C = c B / (c - a (1 - B)).
inline double erlang_c(int c, double a) {
  double b = 1;
  for (int k = 1; k <= c; ++k) b = a * b / (k + a * b);
  return c * b / (c - a * (1 - b));
}

}  // namespace detail

namespace detail {

// Average power of `devices` devices of `d` that prefill `busy` of the time
// (at the prefill's power) and run `step` the rest (idle when none).
inline std::optional<double> pool_power(const deployment& d, double devices, double busy, const phase_timing& prefill,
                                        const std::optional<phase_timing>& step) {
  if (!(d.dev().tdp_w > 0)) return std::nullopt;
  const double b = std::clamp(busy, 0.0, 1.0);
  const double rest = step ? step_power_w(d.dev(), *step) : power_model{}.idle_share * d.dev().tdp_w;
  return devices * (b * step_power_w(d.dev(), prefill) + (1 - b) * rest);
}

}  // namespace detail

/// `replicas` copies of `d`, each running prefills and decodes together
/// (chunked prefill, serve_at_rate), at the highest request rate whose TTFT
/// and TPOT meet the targets. Throws std::invalid_argument on invalid fields.
inline pd_row serve_aggregated(const deployment& d, int replicas, const workload& w, const serving_targets& t) {
  validate(w);
  validate(t);
  detail::require_in("replicas", replicas, 1, 65536);
  pd_row r;
  r.label = "aggregated " + std::to_string(replicas) + " x " + layout_name(d.parallel());
  r.decode_instances = replicas;
  r.devices = replicas * d.devices();
  // The engine admits at most its slots (KV for prompt + output, max_num_seqs).
  const engine_slots slots = slots_for(d, w);
  const auto why_not = [&](const load_result& l) -> std::optional<serving_limit> {
    if (!l.keeps_up) return l.prefill_share >= 0.5 ? serving_limit::prefill : serving_limit::compute;
    if (!l.stable) return serving_limit::kv_cache;
    if (std::ceil(l.users) > slots.slots) return slots.limit;
    if (!detail::meets(l.tpot, t.tpot)) return serving_limit::tokens_per_s;
    if (!detail::meets(l.ttft, t.ttft)) return serving_limit::ttft;
    return std::nullopt;
  };
  const detail::open_loop terms(d, w);  // rate-free: every rate tried shares them
  const auto at = [&](double rate) { return detail::serve_at_rate(d, w, terms, rate, 1, true); };
  const auto ok = [&](double rate) { return !why_not(at(rate)); };
  if (!ok(1e-9)) {
    const auto no = why_not(at(1e-9));
    r.limit = no && *no == serving_limit::kv_cache ? serving_limit::memory : no.value_or(serving_limit::none);
    return r;
  }
  const double rate = detail::last_true(ok, 0, 1, 1e7, false, detail::rate_halvings);
  const load_result l = at(rate);
  const load_result past = at(rate * 1.001 + 1e-9);
  r.requests_per_s = replicas * rate;
  r.output_tokens_per_s = r.requests_per_s * w.output;
  r.ttft = l.ttft;
  r.tpot = l.tpot;
  r.decode_users = l.decoding;
  r.prefill_utilisation = l.prefill_share;
  r.power_w = detail::pool_power(d, r.devices, l.prefill_share, d.prefill(w.prompt_tokens()),
                                 power_step(d, std::max(1.0, l.decoding), w.mean_decode_context()));
  r.limit = why_not(past).value_or(serving_limit::ttft);
  return r;
}

/// `x` instances of `prefill` hand each request's KV (its computed prompt
/// tokens: a decode instance finds a shared prefix in its own cache) over
/// `link` to `y` instances of `decode`.
///  * Prefill pool: requests arrive at rate / x per instance and queue
///    (M/G/1 over cache hits and misses, prefix_cache.hpp; M/G/c over the
///    ranks of data-parallel attention, ttft_at); TTFT =
///    per_request + wait + S + transfer, the transfer overlapped layer by
///    layer when `layerwise` (only its last layer's share and what outlasts
///    the prefill remain).
///  * Decode pool: n sequences per instance decode at TPOT = step(n) at the
///    mean context (prompt + output / 2), with no prompt chunks beside them;
///    an instance serves n / ((output - 1) x step(n)) requests/s; n is capped by
///    its slots (KV for prompt + output each, max_num_seqs).
///  * Link: each transfer runs over min(prefill, decode) devices' links and
///    leaves one prefill instance for one decode instance: min(x, y) of them
///    at once, queued (M/D/1) in TTFT.
/// The goodput is the decode pool's rate, or less where the prefill pool and
/// the link would break the TTFT target. The operating point (TTFT, TPOT,
/// decode users, utilisation, power) is at the goodput, or at `at_rate`
/// requests/s when that is lower (a load below the goodput). A split
/// computes the rate-independent parts once and refers to `prefill` and
/// `decode`, which must outlive it.
class pd_split {
 public:
  /// Throws std::invalid_argument on invalid fields, or without a TTFT
  /// target (> 0: without one the prefill queue may grow to any length).
  pd_split(const deployment& prefill, int x, const deployment& decode, int y, const workload& w,
           const kv_transfer& link, const serving_targets& t);

  /// Mean TTFT at `rate` requests/s: handling + the prefill queue at rate /
  /// x + S + the hand-over, itself queued on the link (M/D/1 at rate /
  /// min(x, y): each transfer leaves one prefill instance and lands on one
  /// decode one); infinite where a queue does not keep up. An instance with
  /// data-parallel attention prefills one prompt per rank at once (SGLang
  /// and TensorRT-LLM hand each request to one attention rank), the ranks
  /// sharing its FFN: c = its devices servers, each busy Sc (c prompts
  /// prefilled together, over c) per prompt, the queue M/G/c by
  /// Allen-Cunneen (Erlang C's chance of waiting x Sc / (c (1 - rho)) x
  /// E[S^2] / (2 S^2)); a prompt takes S alone and Sc when every rank is
  /// busy: S + (Sc - S) rho. At c = 1 (Sc = S) the M/G/1 queue.
  /// `interfering` scales both waits: the share of the load a request meets
  /// ((N - 1) / N of a closed loop's N users), 1 in an open loop.
  [[nodiscard]] double ttft_at(double rate, double interfering = 1) const {
    const double rp = rate / x_, rl = rate / link_pairs_;
    const double a = rp * Sc_, rho_p = a / servers_, rho_l = rl * wire_;
    if (rho_p >= 1 || rho_l >= 1) return std::numeric_limits<double>::infinity();
    const double wait = detail::erlang_c(servers_, a) * Sc_ / (servers_ * (1 - rho_p)) * S2_ / (2 * S_ * S_) +
                        rl * wire_ * wire_ / (2 * (1 - rho_l));
    return handling_ + interfering * wait + S_ + (Sc_ - S_) * rho_p + exposed_;
  }
  /// A decode instance's time per output token with `n` sequences at the
  /// mean context, s: its step over the tokens a step keeps (step_of).
  [[nodiscard]] double step(double n) const { return step_of(*decode_, n, context_).per_token(); }
  /// Requests/s the decode pool serves with `n` sequences per instance
  /// (below one: the share of the time one decodes).
  [[nodiscard]] double decode_rate(double n) const { return y_ * n / (steps_ * step(std::max(1.0, n))); }
  /// The most sequences per decode instance within its slots and the TPOT target.
  [[nodiscard]] double most_sequences() const { return n_max_; }
  /// The goodput row (serve_disaggregated), its operating point at the
  /// goodput or at `at_rate` when that is lower.
  [[nodiscard]] pd_row row(std::optional<double> at_rate = std::nullopt) const { return operate(at_rate, 0); }
  /// row(decode_rate(n)): the operating point where each decode instance
  /// holds `n` sequences (a search that solved for them), within the goodput.
  [[nodiscard]] pd_row row_holding(double n) const { return operate(decode_rate(n), n); }
  /// The same pools as x prefill and y decode instances: what a split
  /// computes before any rate does not depend on the counts (a search over
  /// counts builds one split per pair of instance sizes). Throws
  /// std::invalid_argument unless x and y are in [1, 65536].
  [[nodiscard]] pd_split with_instances(int x, int y) const {
    pd_split out = *this;
    out.set_instances(x, y);
    return out;
  }

 private:
  // row() at `at_rate`, whose decode sequences are `held` when > 0.
  [[nodiscard]] pd_row operate(std::optional<double> at_rate, double held) const;
  void set_instances(int x, int y) {
    detail::require_in("prefill instances", x, 1, 65536);
    detail::require_in("decode instances", y, 1, 65536);
    x_ = x;
    y_ = y;
    link_pairs_ = std::min(x, y);
    base_.label = std::to_string(x) + "P" + std::to_string(y) + "D";
    base_.prefill_instances = x;
    base_.decode_instances = y;
    base_.devices = x * prefill_->devices() + y * decode_->devices();
  }

  const deployment* prefill_;
  const deployment* decode_;
  int x_, y_;
  workload w_;
  serving_targets t_;
  double prompt_, context_, S_, S2_, handling_, wire_, exposed_, link_pairs_;
  int servers_ = 1;  // prompts a prefill instance runs at once (its attention ranks)
  double Sc_ = 0;    // a server's busy time per prompt when all run: S at one server
  /// Decode steps a request takes in the decode pool: output - 1 (its
  /// prefill samples the first token), at least one (the hand-over's step).
  double steps_ = 1;
  double n_max_ = 0;
  double one_step_ = 0, cap_step_ = 0;  // step(1) and step(n_max), s per token
  serving_limit decode_limit_ = serving_limit::none;
  pd_row base_;
  // A prompt's prefill on each pool's devices: what they draw while busy.
  phase_timing prefill_phase_, decode_prefill_phase_;
};

inline pd_split::pd_split(const deployment& prefill, int x, const deployment& decode, int y, const workload& w,
                          const kv_transfer& link, const serving_targets& t)
    : prefill_(&prefill), decode_(&decode), x_(x), y_(y), w_(w), t_(t) {
  validate(w);
  validate(link);
  validate(t);
  if (prefill.model.id != decode.model.id) {
    throw std::invalid_argument("prefill and decode pools must run one model (got '" + prefill.model.id + "' and '" +
                                decode.model.id + "')");
  }
  pd_row& r = base_;
  r.disaggregated = true;
  set_instances(x, y);
  const detail::open_loop terms(prefill, w);
  prompt_ = terms.prompt;
  const prefix_reuse reuse = reuse_of(prefill, w);
  S_ = terms.S;
  servers_ = prefill.parallel().attention_data_parallel() ? prefill.devices() : 1;
  Sc_ = S_;
  if (servers_ > 1) {
    // One prompt per rank at once: their FFN and experts shared.
    const double one = prefill.prefill(prompt_).estimate.value();
    Sc_ = S_ * prefill.prefill(prompt_, 0, servers_).estimate.value() / one;
  }
  S2_ = terms.S2;
  handling_ = terms.handling;
  // KV of the tokens a request computes, moved over the lanes.
  const bytes kv = kv_bytes_per_sequence(prefill.model, prefill.pr.kv, reuse.computed, 1);
  const int lanes = std::min(prefill.devices(), decode.devices());
  wire_ = (kv / (double(lanes) * link.efficiency * link.link.bandwidth)).value();
  const double whole = kv_transfer_time(link, kv, lanes).value();
  const double layers = prefill.model.num_layers;
  exposed_ = link.layerwise ? link.link.latency.value() + std::max(wire_ / layers, wire_ - S_ * (layers - 1) / layers)
                            : whole;
  r.transfer = make_seconds(exposed_);
  prefill_phase_ = prefill.prefill(prompt_);
  decode_prefill_phase_ = decode.prefill(prompt_);
  // Decode pool: the most sequences per instance whose step meets the TPOT target.
  context_ = prompt_ + w.output / 2;
  steps_ = std::max(1.0, w.decode_steps());
  const engine_slots slots = slots_for(decode, w);
  n_max_ = std::floor(std::min(slots.slots, 1e6));
  decode_limit_ = slots.limit;
  if (n_max_ >= 1 && t.tpot.value() > 0 && step(n_max_) > t.tpot.value()) {
    n_max_ = step(1) <= t.tpot.value()
                 ? detail::last_true([&](double n) { return step(n) <= t.tpot.value(); }, 1, 2, n_max_, true)
                 : 0;
    decode_limit_ = serving_limit::tokens_per_s;
  }
  if (n_max_ < 1) r.limit = slots.slots < 1 ? serving_limit::memory : serving_limit::tokens_per_s;
  one_step_ = step(1);
  cap_step_ = n_max_ >= 1 ? step(n_max_) : 0;
}

inline pd_row pd_split::operate(std::optional<double> at_rate, double held) const {
  pd_row r = base_;
  const double decode_cap = n_max_ >= 1 ? y_ * n_max_ / (steps_ * cap_step_) : 0;  // decode_rate(n_max)
  if (!(decode_cap > 0)) return r;
  if (!(ttft_at(0) <= t_.ttft.value())) {
    // No rate meets the target: the TTFT a lone request waits, and the link
    // as the limit when the hand-over is most of it.
    r.ttft = make_seconds(ttft_at(0));
    r.limit = r.transfer.value() > 0.5 * r.ttft.value() ? serving_limit::link : serving_limit::ttft;
    return r;
  }
  // The decode pool's rate when the prefill pool and the link meet the TTFT
  // target there; else the highest rate at which they do (bisection: TTFT
  // grows with the rate).
  double rate = decode_cap;
  r.limit = decode_limit_;
  if (!(ttft_at(decode_cap) <= t_.ttft.value())) {
    double lo = 0, hi = decode_cap;
    for (int i = 0; i < 80 && hi - lo > 1e-12 * hi; ++i) {
      const double mid = (lo + hi) / 2;
      (ttft_at(mid) <= t_.ttft.value() ? lo : hi) = mid;
    }
    rate = lo;
    // What fills up: the link when it is the busier of the two queues.
    r.limit = rate / link_pairs_ * wire_ > rate / x_ * Sc_ / servers_ ? serving_limit::link : serving_limit::ttft;
  }
  r.requests_per_s = rate;
  r.output_tokens_per_s = rate * w_.output;
  // The sequences a decode instance holds at the operating rate: known when
  // it serves the decode pool's cap (n_max) or the caller solved for them.
  double known = rate >= decode_cap ? n_max_ : 0;
  if (at_rate && detail::require_in("at_rate", *at_rate, 1e-12, 1e12) < rate) {
    rate = *at_rate;
    known = held;
  }
  // The operating point: the prefill queue at rate / x, and the sequences a
  // decode instance holds at rate / y (the fewest n serving it).
  r.prefill_utilisation = rate / x_ * Sc_ / servers_;
  r.ttft = make_seconds(ttft_at(rate));
  const double per_decode = rate / y_;
  // Below one sequence: the share of time one decodes; above: the most n
  // whose n / ((output - 1) x step(n)) stays within the instance's rate.
  double n = known > 0 ? known : per_decode * steps_ * one_step_;
  if (known <= 0 && n > 1) {
    // n - rate x (output - 1) x step(n) rises with n (the step grows slower
    // than the sequences it carries): its root, to 1e-9.
    n = detail::root_increasing([&](double m) { return m - per_decode * steps_ * step(m); }, 1,
                                std::max(1.0, n_max_), 1e-9);
  }
  r.decode_users = n;
  const double batch = std::max(1.0, n);
  const phase_timing decoding = power_step(*decode_, batch, context_);
  // Without speculation the step that sets the power is the decode step.
  r.tpot = make_seconds(decode_->speculative ? step(batch) : decoding.estimate.value());
  // Both pools' devices: prefill busy for its utilisation, decode at its step.
  const auto p = detail::pool_power(*prefill_, double(x_) * prefill_->devices(), r.prefill_utilisation,
                                    prefill_phase_, std::nullopt);
  const auto dp =
      detail::pool_power(*decode_, double(y_) * decode_->devices(), 0, decode_prefill_phase_, decoding);
  if (p && dp) r.power_w = *p + *dp;
  return r;
}

/// serve_disaggregated's split (pd_split) at its goodput, or operating at
/// `at_rate` requests/s when that is lower.
inline pd_row serve_disaggregated(const deployment& prefill, int x, const deployment& decode, int y,
                                  const workload& w, const kv_transfer& link, const serving_targets& t,
                                  std::optional<double> at_rate = std::nullopt) {
  return pd_split(prefill, x, decode, y, w, link, t).row(at_rate);
}

/// The closed loop of `users` on `split`: the request rate at which they are
/// all inside it, by Little's law users = rate x (TTFT + (output - 1) x TPOT)
/// with TTFT and TPOT of the split's operating point at that rate
/// (pd_split::row), a request queueing behind (users - 1) / users of the
/// load (the arrival theorem). Beyond the most the split serves (its decode
/// slots, its prefill pool's saturation) the rest wait in TTFT.
/// Throws std::invalid_argument unless `users` is whole in [1, 1e6].
inline pd_loop_result serve_disaggregated_loop(const pd_split& split, const workload& w, double users) {
  detail::require_whole("users", users);
  detail::require_in("users", users, 1, 1e6);
  const double steps = w.decode_steps();
  const double interfering = (users - 1) / users;
  // TTFT and requests inside at `rate` (a row's requests_per_s is its goodput,
  // not the rate it operates at); a request meets the other users only.
  const auto ttft = [&](double rate) { return split.ttft_at(rate, interfering); };
  const auto held = [&](double rate, const pd_row& r) { return rate * (ttft(rate) + steps * r.tpot.value()); };
  const pd_row most = split.row();
  pd_loop_result out;
  out.users = users;
  if (!(most.requests_per_s > 0)) return out;  // not one request fits
  double rate = most.requests_per_s;
  pd_row at = most;
  if (held(rate, most) > users) {
    // held rises with the rate (more waiting, longer steps): bisect for users.
    double lo = 0, hi = rate;
    for (int i = 0; i < 100 && hi - lo > 1e-12 * hi; ++i) {
      const double mid = (lo + hi) / 2;
      (held(mid, split.row(mid)) < users ? lo : hi) = mid;
    }
    rate = std::max(lo, 1e-9 * most.requests_per_s);
    at = split.row(rate);
  }
  out.requests_per_s = rate;
  out.inside = held(rate, at);
  out.queue_wait = make_seconds(std::max(0.0, users - out.inside) / rate);
  out.ttft = make_seconds(ttft(rate)) + out.queue_wait;
  out.tpot = at.tpot;
  return out;
}

/// The closed loop of `users` over `replicas` copies of `d` behind a router
/// that spreads them as evenly as they go: N - r q replicas hold q + 1 users,
/// the rest q (q = floor(N / r)), each its own closed loop
/// (serve_closed_loop); requests/s the sum, times the means over requests
/// (as a benchmark reports them: a fuller replica sends more of them).
/// Throws std::invalid_argument unless `users` is whole in [1, 1e6] and
/// `replicas` in [1, 65536].
inline pd_loop_result serve_replicated_loop(const deployment& d, int replicas, const workload& w, double users) {
  detail::require_whole("users", users);
  detail::require_in("users", users, 1, 1e6);
  detail::require_in("replicas", replicas, 1, 65536);
  // The groups of q and q + 1 users: the replicas' own loop (capacity_search.hpp).
  const closed_loop_result c = detail::replicated_loop(d.with_replicas(replicas), w, users);
  pd_loop_result out;
  out.users = users;
  out.requests_per_s = c.requests_per_s;
  out.inside = c.active;
  if (!(out.requests_per_s > 0)) return out;  // not one request fits
  out.ttft = c.ttft;
  out.tpot = c.tpot;
  out.queue_wait = c.queue_wait;
  return out;
}

/// The link a fleet's pools hand KV over by default: the devices' own link
/// within one node (NVLink on an HGX board), the layout's inter-node link
/// (default 400 Gb/s InfiniBand, one NIC per GPU) across nodes.
inline link_spec default_kv_link(const deployment& fleet) {
  const parallel_plan& p = fleet.parallel();
  if (fleet.nodes() > 1) return p.inter_link();
  return p.intra ? *p.intra : intra_node_link(fleet.dev(), fleet.devices());
}

/// The hand-over of a fleet's pools as asked: `link` (default
/// default_kv_link), `efficiency` (default default_kv_link_efficiency) and
/// layer-by-layer overlap. The one place those defaults are decided.
inline kv_transfer kv_transfer_for(const deployment& fleet, std::optional<link_spec> link = std::nullopt,
                                   std::optional<double> efficiency = std::nullopt, bool layerwise = false) {
  kv_transfer k{link ? *link : default_kv_link(fleet), efficiency.value_or(default_kv_link_efficiency), layerwise};
  validate(k);
  return k;
}

/// One instance of a fleet for its pools: `devices` of the fleet's devices
/// in tensor parallel, or (unset) the fewest, dividing the fleet, that hold
/// one request of the workload (prompt + output) and decode it within the
/// TPOT target (the fewest that hold one when none does).
/// Throws std::invalid_argument when the engine does not disaggregate, the
/// count does not divide the fleet, or no instance smaller than the fleet
/// holds a request.
inline deployment pd_instance(const deployment& fleet, const workload& w, std::optional<int> devices = std::nullopt,
                              seconds tpot_target = make_seconds(0)) {
  if (!engine_row_of(fleet.engine.id).disaggregates) {
    throw std::invalid_argument(std::string(fleet.engine.name()) +
                                " does not serve prefill and decode apart (vLLM, SGLang and TensorRT-LLM do)");
  }
  if (fleet.offload()) throw std::invalid_argument("a disaggregated fleet offloads nothing: drop the offload");
  const int n = fleet.devices();
  if (n < 2) throw std::invalid_argument("disaggregation needs at least 2 devices (got " + std::to_string(n) + ")");
  const auto with = [&](int t) {
    parallel_plan p = fleet.parallel();
    p.tp = t;
    p.pp = 1;
    p.ep = 1;
    return fleet.with_layout(p);
  };
  if (devices) {
    detail::require_in("instance devices", *devices, 1, n - 1);
    if (n % *devices != 0) {
      throw std::invalid_argument("instance devices must divide the fleet's " + std::to_string(n) + " devices (got " +
                                  std::to_string(*devices) + ")");
    }
    return with(*devices);
  }
  std::optional<deployment> holds;
  for (int t = 1; t < n; ++t) {
    if (n % t != 0) continue;
    std::optional<deployment> d;
    try {
      d = with(t);
    } catch (const std::invalid_argument&) {
      continue;  // the model does not split into t
    }
    if (!memory_of(*d, w, 1, w.request_end()).fits) continue;
    if (detail::meets(make_seconds(step_of(*d, 1, w.mean_decode_context()).per_token()), tpot_target)) return *d;
    if (!holds) holds = d;
  }
  if (holds) return *holds;
  throw std::invalid_argument("no instance of fewer than the fleet's " + std::to_string(n) +
                              " devices holds one request: disaggregation needs at least two instances");
}

/// Aggregated and disaggregated on the same fleet: `instances` copies of
/// `instance` as aggregated replicas, then every split into x prefill and
/// instances - x decode instances, plus `instance` spread over the whole
/// fleet in tensor parallel when that is another layout (`whole`).
struct pd_comparison {
  std::vector<pd_row> rows;
  std::size_t best = 0;  ///< the row with the most requests/s
  kv_transfer link;
  serving_targets targets;
  double output = 0;  ///< output tokens per request (the workload's)
  std::string why;    ///< which wins, and what binds the other side
};

/// With `users`, each row also carries its closed loop of that many users
/// (pd_row::loop), without the targets: serve_replicated_loop for aggregated
/// rows, serve_disaggregated_loop for splits.
/// Throws std::invalid_argument on invalid fields, fewer than 2 instances,
/// or `users` not whole in [1, 1e6].
inline pd_comparison compare_disaggregation(const deployment& instance, int instances, const workload& w,
                                            const kv_transfer& link, const serving_targets& t,
                                            const std::optional<deployment>& whole = std::nullopt,
                                            std::optional<double> users = std::nullopt) {
  detail::require_in("instances", instances, 2, 4096);
  if (users) {
    detail::require_whole("users", *users);
    detail::require_in("users", *users, 1, 1e6);
  }
  pd_comparison out;
  out.link = link;
  out.targets = t;
  out.output = w.output;
  const auto aggregated = [&](const deployment& d, int replicas) {
    pd_row r = serve_aggregated(d, replicas, w, t);
    if (users) r.loop = serve_replicated_loop(d, replicas, w, *users);
    out.rows.push_back(std::move(r));
  };
  // Each split's rate-independent work once per set of targets; the counts vary.
  const pd_split goodput(instance, 1, instance, instances - 1, w, link, t);
  const std::optional<pd_split> unclipped =
      users ? std::optional<pd_split>(std::in_place, instance, 1, instance, instances - 1, w, link, no_targets)
            : std::nullopt;
  const auto split = [&](int x, int y) {
    pd_row r = goodput.with_instances(x, y).row();
    if (unclipped) r.loop = serve_disaggregated_loop(unclipped->with_instances(x, y), w, *users);
    out.rows.push_back(std::move(r));
  };
  aggregated(instance, instances);
  if (whole) aggregated(*whole, 1);
  // Every split below 32 instances; from 32, 1PnD, nP1D and the multiples
  // of instances / 16 between them.
  const int stride = std::max(1, instances / 16);
  for (int x = 1; x < instances; x = x == 1 && stride > 1 ? stride : x + stride) split(x, instances - x);
  if (out.rows.back().prefill_instances != instances - 1) split(instances - 1, 1);
  for (std::size_t i = 1; i < out.rows.size(); ++i) {
    if (out.rows[i].requests_per_s > out.rows[out.best].requests_per_s) out.best = i;
  }
  // The best of the other kind, and what holds it back.
  const pd_row& b = out.rows[out.best];
  std::optional<std::size_t> other;
  for (std::size_t i = 0; i < out.rows.size(); ++i) {
    if (out.rows[i].disaggregated == b.disaggregated) continue;
    if (!other || out.rows[i].requests_per_s > out.rows[*other].requests_per_s) other = i;
  }
  const auto rate = [](double v) {
    char s[32];
    std::snprintf(s, sizeof s, "%.3g", v);
    return std::string(s);
  };
  if (b.requests_per_s <= 0) {
    out.why = "no layout meets the targets";
  } else if (other) {
    const pd_row& o = out.rows[*other];
    out.why = b.label + " serves " + rate(b.requests_per_s) + " requests/s, " + o.label + " " +
              rate(o.requests_per_s) + " (limit: " + std::string(to_string(o.limit)) + ")";
    const auto pct = [&](double v) { return rate(100 * v) + "%"; };
    if (b.disaggregated) {
      out.why += ": aggregated, every prompt's chunks run inside the decode steps (prefill " +
                 pct(o.prefill_utilisation) + " of the time)" +
                 (t.tpot.value() > 0 ? ", and the TPOT target pays for them" : "");
    } else if (o.limit == serving_limit::link) {
      const double move = o.transfer.value();
      const std::string took = move < 1 ? rate(1e3 * move) + " ms" : rate(move) + " s";
      out.why += o.requests_per_s > 0 ? ": its KV hand-over link saturates (" + took +
                                            " a request) while its prefill pool is busy " +
                                            pct(o.prefill_utilisation) + " of the time"
                                      : ": its KV hand-over alone takes " + took + " a request, beyond the TTFT target";
    } else if (o.limit == serving_limit::ttft || o.limit == serving_limit::prefill) {
      out.why += ": its prefill pool saturates (busy " + pct(o.prefill_utilisation) + " of the time) while its decode devices wait";
    } else if (o.limit == serving_limit::memory) {
      out.why += ": its instances of " + std::to_string(o.devices / (o.prefill_instances + o.decode_instances)) +
                 (o.devices == o.prefill_instances + o.decode_instances ? " device" : " devices") +
                 " do not hold one request beside the weights";
    } else {
      out.why += ": its decode pool is full while its prefill devices are busy " + pct(o.prefill_utilisation) +
                 " of the time";
    }
  }
  return out;
}

/// A fleet (a deployment over all its devices) compared with its own
/// instances: pd_instance(fleet, w, instance_devices) as aggregated replicas
/// and in every split, the fleet as one instance beside them; KV over
/// `link` (default: default_kv_link at default_kv_link_efficiency); each
/// row's closed loop of `users` when given. Throws std::invalid_argument as
/// pd_instance does.
inline pd_comparison compare_disaggregation(const deployment& fleet, const workload& w, const serving_targets& t,
                                            std::optional<int> instance_devices = std::nullopt,
                                            std::optional<kv_transfer> link = std::nullopt,
                                            std::optional<double> users = std::nullopt) {
  const deployment one = pd_instance(fleet, w, instance_devices, t.tpot);
  // The fleet as one instance: itself, or beside replicas, TP over all of
  // them where the model splits so.
  std::optional<deployment> whole = fleet;
  if (fleet.replicas() > 1) {
    parallel_plan p = fleet.parallel();
    p.tp = fleet.devices();
    p.pp = p.ep = 1;
    p.dp_attention = false;
    try {
      whole = fleet.with_layout(p);
    } catch (const std::invalid_argument&) {
      whole.reset();
    }
  }
  return compare_disaggregation(one, fleet.devices() / one.devices(), w, link ? *link : kv_transfer_for(fleet), t, whole,
                                users);
}

}  // namespace llmroof
