// The one search of the library: the last value at which a monotone
// predicate holds (memory limits, request rates, users, crossovers).
#pragma once

#include <cmath>
#include <optional>

namespace llmroof::detail {

/// Halvings of a goodput search over request rates: the bracket ([r, 2r],
/// or [0, 1] below one request/s) shrunk to 2^-36 of itself, 1.5e-11 of the
/// rate or of one request/s (every figure printed or compared is coarser),
/// where the search to adjacent doubles took ~52 full load evaluations.
inline constexpr int rate_halvings = 36;

/// The largest x in [lo, limit] at which `holds` is true, for a predicate true
/// at `lo` and false from some point on: brackets by doubling from `hi` (> lo)
/// up to `limit`, then bisects to whole numbers (`whole`) or for `halvings`
/// steps. Returns `limit` when it holds there.
template <class Holds>
double last_true(Holds holds, double lo, double hi, double limit, bool whole, int halvings = 60) {
  while (hi < limit && holds(hi)) {
    lo = hi;
    hi *= 2;
  }
  if (hi >= limit) {
    if (holds(limit)) return limit;
    hi = limit;
  }
  if (whole) {
    while (hi - lo > 1) {
      const double mid = std::floor((lo + hi) / 2);
      (holds(mid) ? lo : hi) = mid;
    }
    return lo;
  }
  for (int i = 0; i < halvings; ++i) {
    const double mid = (lo + hi) / 2;
    // Adjacent doubles: mid is lo or hi, whose answers are known; the rest
    // of the halvings would change nothing.
    if (mid <= lo || mid >= hi) break;
    (holds(mid) ? lo : hi) = mid;
  }
  return lo;
}


/// The root of an increasing `f` in [lo, hi] with f(lo) <= 0 <= f(hi), to
/// `tolerance` of hi: regula falsi with the Illinois step (the kept end's
/// value halved when the same end is kept twice), a handful of evaluations
/// where f is nearly affine (a decode pool's sequences against its rate)
/// and never slower than bisection by much. Returns the low end.
template <class F>
double root_increasing(F f, double lo, double hi, double tolerance) {
  double flo = f(lo), fhi = f(hi);
  if (flo >= 0) return lo;
  if (fhi <= 0) return hi;
  int side = 0;
  for (int i = 0; i < 200 && hi - lo > tolerance * hi; ++i) {
    double x = lo - flo * (hi - lo) / (fhi - flo);
    // Keep the step inside the bracket, and halve when it stalls at an end.
    if (!(x > lo && x < hi)) x = (lo + hi) / 2;
    const double fx = f(x);
    if (fx == 0) return x;
    if (fx < 0) {
      lo = x;
      flo = fx;
      if (side == -1) fhi /= 2;
      side = -1;
    } else {
      hi = x;
      fhi = fx;
      if (side == 1) flo /= 2;
      side = 1;
    }
  }
  return lo;
}

/// The largest whole c in [0, limit] with value(c) <= budget, for a
/// nondecreasing `value` (bytes of KV against a budget, piecewise linear in
/// tokens); -1 when even value(0) exceeds it. The answer of bisecting the
/// predicate value(c) <= budget (unique for a monotone value), found by
/// interpolating on the values: regula falsi on whole numbers with the
/// Illinois step, and a halving after every step that did not halve the
/// bracket: a handful of evaluations where value is nearly affine, never more
/// than twice bisection's ~30.
template <class Value>
double largest_within(Value value, double budget, double limit = 1e9) {
  // The values interpolated between (the kept end's moved halfway to the
  // budget when the same end is kept twice: Illinois).
  double lo = 0, wlo = value(0.0);
  if (!(wlo <= budget)) return -1;
  double hi = limit, whi = value(limit);
  if (whi <= budget) return limit;
  int side = 0;
  bool halve = false;  // the last interpolation did not halve the bracket
  while (hi - lo > 1) {
    const double before = hi - lo;
    double x = halve ? std::floor((lo + hi) / 2) : std::floor(lo + (budget - wlo) / (whi - wlo) * (hi - lo));
    if (!(x > lo)) x = lo + 1;
    if (!(x < hi)) x = hi - 1;
    const double v = value(x);
    if (v <= budget) {
      lo = x;
      wlo = v;
      if (side == -1) whi = budget + (whi - budget) / 2;
      side = -1;
    } else {
      hi = x;
      whi = v;
      if (side == 1) wlo = budget - (budget - wlo) / 2;
      side = 1;
    }
    halve = !halve && hi - lo > before / 2;
  }
  return lo;
}

/// First integer batch in [1, max_batch] where `pred` holds, assuming it
/// holds from some batch on (found by doubling, then bisection).
template <class Pred>
std::optional<double> first_batch(Pred pred, double max_batch) {
  if (pred(1.0)) return 1.0;
  const double last = last_true([&](double b) { return !pred(b); }, 1, 2, max_batch, true);
  if (last >= max_batch) return std::nullopt;
  return last + 1;
}

}  // namespace llmroof::detail
