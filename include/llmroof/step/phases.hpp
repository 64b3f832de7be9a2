// Timing of whole phases: a prefill (time to first token) and a decode step
// (time per output token), with bound and estimate side by side, per op.
#pragma once

#include <algorithm>
#include <span>

#include <boost/container/static_vector.hpp>

#include "llmroof/step/ops.hpp"
#include "llmroof/step/roofline.hpp"

namespace llmroof {

/// Time of one phase; `ops` and `times` are parallel lists.
struct phase_timing {
  op_counts counts;
  boost::container::static_vector<op_time, max_ops> times{};
  seconds bound = make_seconds(0);     ///< sum of op bounds, no overhead
  seconds estimate = make_seconds(0);  ///< sum of op estimates + per-step overhead
  seconds memory_time = make_seconds(0);   ///< estimate share of memory-limited ops
  seconds compute_time = make_seconds(0);  ///< estimate share of compute-limited ops
  seconds overhead_time = make_seconds(0);
  seconds link_time = make_seconds(0);     ///< estimate share of collectives

  /// The roof that accounts for most of the estimated time.
  [[nodiscard]] bottleneck limit() const {
    const seconds most = std::max({memory_time, compute_time, overhead_time, link_time});
    if (most == link_time && link_time.value() > 0) return bottleneck::link;
    if (most == overhead_time && overhead_time > memory_time) return bottleneck::overhead;
    return compute_time > memory_time ? bottleneck::compute : bottleneck::memory;
  }
  /// New tokens per second over the phase (decode: B / step time).
  [[nodiscard]] tokens_per_second tokens_per_s_bound() const {
    return make_tokens(counts.new_tokens) / bound;
  }
  [[nodiscard]] tokens_per_second tokens_per_s_estimate() const {
    return make_tokens(counts.new_tokens) / estimate;
  }
};

/// A phase's estimate and the share of it compute-limited ops take
/// (phase_timing's estimate and compute_time).
struct phase_seconds {
  seconds estimate = make_seconds(0);
  seconds compute = make_seconds(0);
};

/// Time a step's host work adds to its kernels' time `kernels`: per_step
/// shared by the scheduler's steps, and per_sequence for each of a decode
/// step's `sequences`; all of it when serial, what sticks out of the kernels
/// when overlapped.
inline seconds step_host_time(const efficiency_profile& e, seconds kernels, double sequences = 0) {
  const seconds host = e.per_step / double(e.scheduler_steps) + sequences * e.per_sequence;
  if (e.overlap == host_overlap::serial) return host;
  return host > kernels ? host - kernels : make_seconds(0);
}

namespace detail {

/// Times p.counts on r into p, a timing just built around its counts (no
/// times, zero sums). Callers build p around counts returned by value, so
/// that the op list is never copied.
inline void apply_roofline(phase_timing& p, const roofline& r) {
  for (const op& o : p.counts.ops) {
    const op_time t = r.time(o);
    p.times.push_back(t);
    p.bound += t.bound();
    p.estimate += t.estimate();
    p.overhead_time += t.overhead;
    if (t.communication) {
      p.link_time += t.memory_est;
    } else if (t.roof() == bottleneck::compute) {
      p.compute_time += t.compute_est;
    } else {
      p.memory_time += t.memory_est;
    }
  }
  const seconds host =
      step_host_time(r.efficiency(), p.estimate, p.counts.kind == phase::decode ? p.counts.sequences : 0.0);
  p.estimate += host;
  p.overhead_time += host;
}

/// apply_roofline's estimate and compute time of `c` on `r` alone, the same
/// sums in the same order, without keeping the ops' times (a search asks a
/// step's seconds thousands of times).
inline phase_seconds seconds_on(const op_counts& c, const roofline& r) {
  phase_seconds s;
  for (const op& o : c.ops) {
    const op_time t = r.time(o);
    s.estimate += t.estimate();
    if (!t.communication && t.roof() == bottleneck::compute) s.compute += t.compute_est;
  }
  s.estimate += step_host_time(r.efficiency(), s.estimate, c.kind == phase::decode ? c.sequences : 0.0);
  return s;
}

}  // namespace detail

/// Applies a roofline to counted ops.
inline phase_timing time_phase(op_counts c, const roofline& r) {
  phase_timing p{std::move(c)};
  detail::apply_roofline(p, r);
  return p;
}

/// Decode step of `batch` sequences at `context` cached tokens each.
/// Throws std::invalid_argument on batch < 1 or context < 0.
inline phase_timing decode_step(const architecture& a, const precision& pr, const roofline& r,
                                double batch, double context) {
  phase_timing p{count_decode(a, pr, batch, context)};
  detail::apply_roofline(p, r);
  return p;
}

/// Decode step of sequences with their own contexts.
inline phase_timing decode_step(const architecture& a, const precision& pr, const roofline& r,
                                std::span<const double> contexts) {
  return time_phase(count_decode(a, pr, contexts), r);
}

/// Prefill of `prompt` tokens after `cached` ones, in one chunk, for `batch`
/// sequences. Its estimate is the time to first token without queueing.
inline phase_timing prefill(const architecture& a, const precision& pr, const roofline& r,
                            double prompt, double cached = 0, double batch = 1) {
  phase_timing p{count_prefill(a, pr, prompt, cached, batch)};
  detail::apply_roofline(p, r);
  return p;
}

}  // namespace llmroof
