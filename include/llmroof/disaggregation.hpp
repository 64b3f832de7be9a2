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
#include <vector>

#include "llmroof/capacity.hpp"
#include "llmroof/prefix_cache.hpp"

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
  detail::require_in_open_closed("kv_link.efficiency", t.efficiency, 0, 1);
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
  /// What stops more requests/s: tokens_per_s (the TPOT target), ttft,
  /// prefill (the prefill pool saturates), kv_cache or max_num_seqs (the
  /// decode instances' slots), memory (not one request fits), link.
  serving_limit limit = serving_limit::none;
  [[nodiscard]] double output_tokens_per_s_per_device() const { return devices > 0 ? output_tokens_per_s / devices : 0; }
};

/// The targets of a goodput: mean TTFT and TPOT (0: none).
struct serving_targets {
  seconds ttft = make_seconds(0);
  seconds tpot = make_seconds(0);
};

namespace detail {

inline bool meets(seconds x, seconds target) { return target.value() <= 0 || x <= target; }

}  // namespace detail

/// `replicas` copies of `d`, each running prefills and decodes together
/// (chunked prefill, serve_at_rate), at the highest request rate whose TTFT
/// and TPOT meet the targets. Throws std::invalid_argument on invalid fields.
inline pd_row serve_aggregated(const deployment& d, int replicas, const workload& w, const serving_targets& t) {
  validate(w);
  detail::require_in("replicas", replicas, 1, 65536);
  pd_row r;
  r.label = "aggregated " + std::to_string(replicas) + " x " + layout_name(d.parallel());
  r.decode_instances = replicas;
  r.devices = replicas * d.devices();
  const auto ok = [&](double rate) {
    const load_result l = serve_at_rate(d, w, rate);
    return l.stable && detail::meets(l.tpot, t.tpot) && detail::meets(l.ttft, t.ttft);
  };
  if (!ok(1e-9)) {
    const load_result l = serve_at_rate(d, w, 1e-9);
    r.limit = !l.stable ? serving_limit::memory : !detail::meets(l.tpot, t.tpot) ? serving_limit::tokens_per_s
                                                                                 : serving_limit::ttft;
    return r;
  }
  const double rate = detail::last_true(ok, 0, 1, 1e7, false);
  const load_result l = serve_at_rate(d, w, rate);
  const load_result past = serve_at_rate(d, w, rate * 1.001 + 1e-9);
  r.requests_per_s = replicas * rate;
  r.output_tokens_per_s = r.requests_per_s * w.output;
  r.ttft = l.ttft;
  r.tpot = l.tpot;
  r.decode_users = l.decoding;
  r.prefill_utilisation = l.prefill_share;
  r.limit = !past.stable ? (past.prefill_share >= 0.5 ? serving_limit::prefill : serving_limit::kv_cache)
            : !detail::meets(past.tpot, t.tpot) ? serving_limit::tokens_per_s
                                                : serving_limit::ttft;
  return r;
}

/// `x` instances of `prefill` hand each request's KV (its computed prompt
/// tokens: a decode instance finds a shared prefix in its own cache) over
/// `link` to `y` instances of `decode`.
///  * Prefill pool: requests arrive at rate / x per instance and queue
///    (M/G/1 over cache hits and misses, prefix_cache.hpp); TTFT =
///    per_request + wait + S + transfer, the transfer overlapped layer by
///    layer when `layerwise` (only its last layer's share and what outlasts
///    the prefill remain).
///  * Decode pool: n sequences per instance decode at TPOT = step(n) at the
///    mean context (prompt + output / 2), with no prompt chunks beside them;
///    an instance serves n / (output x step(n)) requests/s; n is capped by
///    its slots (KV for prompt + output each, max_num_seqs).
///  * Link: each prefill instance's lanes (min of the two instances'
///    devices) carry rate / x x bytes.
/// The goodput is the least of the three pools' rates under the targets.
/// Throws std::invalid_argument on invalid fields.
inline pd_row serve_disaggregated(const deployment& prefill, int x, const deployment& decode, int y,
                                  const workload& w, const kv_transfer& link, const serving_targets& t) {
  validate(w);
  validate(link);
  detail::require_in("prefill instances", x, 1, 65536);
  detail::require_in("decode instances", y, 1, 65536);
  if (prefill.model.id != decode.model.id) {
    throw std::invalid_argument("prefill and decode pools must run one model (got '" + prefill.model.id + "' and '" +
                                decode.model.id + "')");
  }
  pd_row r;
  r.disaggregated = true;
  r.label = std::to_string(x) + "P" + std::to_string(y) + "D";
  r.prefill_instances = x;
  r.decode_instances = y;
  r.devices = x * prefill.devices() + y * decode.devices();
  const double prompt = w.prompt_tokens();
  const prefix_reuse reuse = reuse_of(prefill, w);
  const double miss = prefill.prefill(prompt).estimate.value();
  const double hit = reuse.hit > 0 ? prefill_on_hit(prefill, w, reuse).estimate.value() : miss;
  const double S = reuse.hit * hit + (1 - reuse.hit) * miss;
  const double S2 = reuse.hit * hit * hit + (1 - reuse.hit) * miss * miss;
  const double handling = prefill.efficiency().per_request.value();
  // KV of the tokens a request computes, moved over the lanes.
  const bytes kv = kv_bytes_per_sequence(prefill.model, prefill.pr.kv, reuse.computed, 1);
  const int lanes = std::min(prefill.devices(), decode.devices());
  const double wire = (kv / (double(lanes) * link.efficiency * link.link.bandwidth)).value();
  const double whole = kv_transfer_time(link, kv, lanes).value();
  const double layers = prefill.model.num_layers;
  const double exposed = link.layerwise ? link.link.latency.value() + std::max(wire / layers, wire - S * (layers - 1) / layers)
                                        : whole;
  r.transfer = make_seconds(exposed);
  // Prefill pool: the most requests/s per instance under the TTFT target,
  // rate E[S^2] / (2 (1 - rate S)) <= A = target - handling - S - transfer.
  double prefill_rate = 1 / S;
  if (t.ttft.value() > 0) {
    const double room = t.ttft.value() - handling - S - exposed;
    prefill_rate = room > 0 ? 2 * room / (S2 + 2 * room * S) : 0;
  }
  const double link_rate = wire > 0 ? 1 / wire : std::numeric_limits<double>::infinity();
  // Decode pool: the most sequences per instance whose step meets the TPOT target.
  const double context = prompt + w.output / 2;
  const engine_slots slots = slots_for(decode, w);
  const auto step = [&](double n) { return decode.decode(n, context).estimate.value(); };
  double n_max = std::floor(std::min(slots.slots, 1e6));
  serving_limit decode_limit = slots.limit;
  if (n_max >= 1 && t.tpot.value() > 0 && step(n_max) > t.tpot.value()) {
    n_max = step(1) <= t.tpot.value()
                ? detail::last_true([&](double n) { return step(n) <= t.tpot.value(); }, 1, 2, n_max, true)
                : 0;
    decode_limit = serving_limit::tokens_per_s;
  }
  const double decode_rate = n_max >= 1 ? n_max / (w.output * step(n_max)) : 0;
  const double rate = std::min({x * prefill_rate, x * link_rate, y * decode_rate});
  if (!(rate > 0)) {
    r.limit = n_max < 1 ? (slots.slots < 1 ? serving_limit::memory : serving_limit::tokens_per_s)
                        : serving_limit::ttft;
    return r;
  }
  r.limit = rate == y * decode_rate ? decode_limit
            : rate == x * link_rate ? serving_limit::link
            : t.ttft.value() > 0    ? serving_limit::ttft
                                    : serving_limit::prefill;
  r.requests_per_s = rate;
  r.output_tokens_per_s = rate * w.output;
  // The operating point: the prefill queue at rate / x, and the sequences a
  // decode instance holds at rate / y (the fewest n serving it).
  const double per_prefill = rate / x;
  r.prefill_utilisation = per_prefill * S;
  const double rho = std::min(r.prefill_utilisation, 1 - 1e-12);
  r.ttft = make_seconds(handling + per_prefill * S2 / (2 * (1 - rho)) + S + exposed);
  const double per_decode = rate / y;
  // Below one sequence: the share of time one decodes; above: the most n
  // whose n / (output x step(n)) stays within the instance's rate.
  double n = per_decode * w.output * step(1);
  if (n > 1) {
    n = detail::last_true([&](double m) { return m / (w.output * step(m)) <= per_decode; }, 1, 2, std::max(1.0, n_max),
                          false, 50);
  }
  r.decode_users = n;
  r.tpot = make_seconds(step(std::max(1.0, r.decode_users)));
  return r;
}

/// The link a fleet's pools hand KV over by default: the devices' own link
/// within one node (NVLink on an HGX board), the layout's inter-node link
/// (default 400 Gb/s InfiniBand, one NIC per GPU) across nodes.
inline link_spec default_kv_link(const deployment& fleet) {
  const parallel_plan& p = fleet.parallel();
  if (p.nodes() > 1) return p.inter;
  return p.intra ? *p.intra : intra_node_link(fleet.dev(), fleet.devices());
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
    if (!memory_of(*d, w, 1, w.prompt_tokens() + w.output).fits) continue;
    if (detail::meets(d->decode(1, w.prompt_tokens() + w.output / 2).estimate, tpot_target)) return *d;
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
  std::string why;  ///< which wins, and what binds the other side
};

/// Throws std::invalid_argument on invalid fields or fewer than 2 instances.
inline pd_comparison compare_disaggregation(const deployment& instance, int instances, const workload& w,
                                            const kv_transfer& link, const serving_targets& t,
                                            const std::optional<deployment>& whole = std::nullopt) {
  detail::require_in("instances", instances, 2, 4096);
  pd_comparison out;
  out.link = link;
  out.targets = t;
  out.rows.push_back(serve_aggregated(instance, instances, w, t));
  if (whole) out.rows.push_back(serve_aggregated(*whole, 1, w, t));
  // Every split up to 16 instances; beyond, 16 evenly spaced ones.
  const int stride = std::max(1, instances / 16);
  for (int x = stride; x < instances; x += stride) {
    out.rows.push_back(serve_disaggregated(instance, x, instance, instances - x, w, link, t));
  }
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
                 pct(o.prefill_utilisation) + " of the time), and the TPOT target pays for them";
    } else if (o.limit == serving_limit::ttft || o.limit == serving_limit::prefill || o.limit == serving_limit::link) {
      out.why += ": its prefill pool saturates while its decode devices wait";
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
/// `link` (default: default_kv_link at default_kv_link_efficiency). Throws
/// std::invalid_argument as pd_instance does.
inline pd_comparison compare_disaggregation(const deployment& fleet, const workload& w, const serving_targets& t,
                                            std::optional<int> instance_devices = std::nullopt,
                                            std::optional<kv_transfer> link = std::nullopt) {
  const deployment one = pd_instance(fleet, w, instance_devices, t.tpot);
  kv_transfer k = link ? *link : kv_transfer{default_kv_link(fleet)};
  return compare_disaggregation(one, fleet.devices() / one.devices(), w, k, t, fleet);
}

}  // namespace llmroof
