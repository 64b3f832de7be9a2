// Input validation shared by every header: one message format everywhere,
// "<field> must be <requirement> (got <value>)", thrown as std::invalid_argument.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace llmroof::detail {

/// Formats a number the way error messages show it: integers without a
/// decimal point, everything else with up to 6 significant digits.
inline std::string show(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::ostringstream os;
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    os << static_cast<long long>(v);
  } else {
    os.precision(6);
    os << v;
  }
  return os.str();
}

[[noreturn]] inline void fail(std::string_view field, std::string_view requirement, double got) {
  throw std::invalid_argument(std::string(field) + " must be " + std::string(requirement) +
                              " (got " + show(got) + ")");
}

/// Throws unless v is finite and > 0.
inline double require_positive(std::string_view field, double v) {
  if (!std::isfinite(v) || v <= 0.0) fail(field, "> 0", v);
  return v;
}

/// Throws unless v is finite and >= 0.
inline double require_non_negative(std::string_view field, double v) {
  if (!std::isfinite(v) || v < 0.0) fail(field, ">= 0", v);
  return v;
}

/// Throws unless v <= hi: a limit no real input reaches, which bounds the
/// work and memory a hostile input can ask for.
inline double require_at_most(std::string_view field, double v, double hi) {
  if (!(v <= hi)) fail(field, "<= " + show(hi), v);
  return v;
}

/// Throws unless v is a whole number (1.5 users or layers mean nothing).
inline double require_whole(std::string_view field, double v) {
  if (!std::isfinite(v) || v != std::floor(v)) fail(field, "a whole number", v);
  return v;
}

/// The most tokens a context, prompt or cache may hold: no model reads a
/// billion tokens, and sizes stay far from overflow.
constexpr double max_tokens = 1e9;

/// Throws unless v is finite and in [0, max_tokens].
inline double require_tokens(std::string_view field, double v) {
  if (!std::isfinite(v) || v < 0.0) fail(field, ">= 0", v);
  if (v > max_tokens) fail(field, "<= 1e9 tokens", v);
  return v;
}

/// The message of a value outside [lo, hi] or (lo, hi]: out of line, so that
/// the checks inline into the estimates that run them per step.
[[noreturn, gnu::cold, gnu::noinline]] inline void fail_range(std::string_view field, double v, double lo, double hi,
                                                              bool open_low) {
  fail(field, std::string(open_low ? "in (" : "in [") + show(lo) + ", " + show(hi) + "]", v);
}

/// Throws unless v is finite and within [lo, hi].
inline double require_in(std::string_view field, double v, double lo, double hi) {
  if (!std::isfinite(v) || v < lo || v > hi) [[unlikely]] fail_range(field, v, lo, hi, false);
  return v;
}

/// Throws unless v is finite and within (lo, hi].
inline double require_in_open_closed(std::string_view field, double v, double lo, double hi) {
  if (!std::isfinite(v) || v <= lo || v > hi) [[unlikely]] fail_range(field, v, lo, hi, true);
  return v;
}

inline std::string to_lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

/// Levenshtein distance, for "did you mean" hints on unknown ids.
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1);
  std::vector<std::size_t> cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

/// Lowercase without separators, so that `q4km`, `Q4_K_M` and `q4-k-m` compare equal.
inline std::string normalized(std::string_view s) {
  std::string out;
  for (char c : to_lower(s)) {
    if (c != '-' && c != '_' && c != '.' && c != ' ') out.push_back(c);
  }
  return out;
}

/// The up to `n` candidates closest to `wanted`: by edit distance after
/// normalisation, then by the longest common prefix, then catalog order.
inline std::vector<std::string> closest(std::string_view wanted,
                                        const std::vector<std::string>& candidates,
                                        std::size_t n = 3) {
  const std::string w = to_lower(wanted);
  const std::string wn = normalized(wanted);
  struct scored {
    std::size_t distance;
    std::size_t prefix;
    const std::string* name;
  };
  std::vector<scored> all;
  all.reserve(candidates.size());
  for (const auto& c : candidates) {
    std::size_t prefix = 0;
    while (prefix < c.size() && prefix < w.size() && c[prefix] == w[prefix]) ++prefix;
    all.push_back({edit_distance(wn, normalized(c)), prefix, &c});
  }
  std::stable_sort(all.begin(), all.end(), [](const scored& x, const scored& y) {
    return x.distance != y.distance ? x.distance < y.distance : x.prefix > y.prefix;
  });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < all.size() && i < n; ++i) out.push_back(*all[i].name);
  return out;
}

/// Throws "unknown <what> 'x'; closest: a, b, c".
[[noreturn]] inline void fail_unknown(std::string_view what, std::string_view wanted,
                                      const std::vector<std::string>& candidates) {
  std::string msg = "unknown " + std::string(what) + " '" + std::string(wanted) + "'";
  const auto near = closest(wanted, candidates);
  if (!near.empty()) {
    msg += "; closest: ";
    for (std::size_t i = 0; i < near.size(); ++i) msg += (i ? ", " : "") + near[i];
  }
  throw std::invalid_argument(msg);
}

}  // namespace llmroof::detail
