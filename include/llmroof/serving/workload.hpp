// What a deployment serves: users, their context budget, and the shape of a
// request (prompt and answer tokens). Planning, load and capacity read it.
#pragma once

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "llmroof/detail/check.hpp"
#include "llmroof/detail/enum_names.hpp"

namespace llmroof {

/// How a closed loop's requests meet each other (load_model.hpp, serve_closed_loop).
///  * `mixed`: users whose prompts and answers differ in length drift apart,
///    and a new request meets the others at random points of theirs (the
///    arrival theorem): people, agents, a ShareGPT benchmark.
///  * `lockstep`: identical requests started together, as a benchmark of fixed
///    lengths runs them (`vllm bench serve --random-input-len P
///    --random-output-len O --max-concurrency N --ignore-eos`, AIPerf, NIM's
///    tables): the first N prompts queue together, requests that finish in one
///    step come back together, and each such cohort's prompts are prefilled in
///    one batch, so TTFT grows with the cohort, not with a random queue.
enum class arrival_pattern : std::uint8_t { mixed, lockstep };

inline constexpr std::array<std::string_view, 2> arrival_pattern_names{"mixed", "lockstep"};

constexpr std::string_view to_string(arrival_pattern a) { return detail::enum_name(a, arrival_pattern_names); }

/// "mixed" or "lockstep"; throws std::invalid_argument "arrivals must be mixed
/// or lockstep (got 'x')".
inline arrival_pattern parse_arrival_pattern(std::string_view name) {
  if (auto a = detail::enum_from_name<arrival_pattern>(name, arrival_pattern_names)) return *a;
  throw std::invalid_argument("arrivals must be mixed or lockstep (got '" + std::string(name) + "')");
}

/// What a deployment serves: N users, each with a prompt, an answer and a
/// context budget. Holds nothing the deployment holds.
struct workload {
  double users = 1;        ///< concurrent sequences
  double context = 4096;   ///< tokens each user holds: its conversation (history + prompt + answer)
  double prompt = 0;       ///< prompt tokens of a new request; 0 = min(context, 2048)
  double output = 512;     ///< tokens generated per request (load model)
  /// Tokens at the start of every prompt that all requests share (a system
  /// prompt, tool definitions, a document); 0: none. Under an engine's
  /// prefix cache a request that finds them cached prefills only the rest
  /// (prefix_cache.hpp).
  double prefix = 0;
  /// Share of requests that find the prefix cached; unset: every one (the
  /// steady state of one shared prefix). Only with a prefix.
  std::optional<double> prefix_hit;
  /// How a closed loop's requests arrive: desynchronised (the default: users)
  /// or in lockstep (a fixed-length benchmark); arrival_pattern.
  arrival_pattern arrivals = arrival_pattern::mixed;

  /// The prompt a new request brings: `prompt`, or min(context, 2048) and at
  /// least one token when unset. The one place that default is decided.
  [[nodiscard]] double prompt_tokens() const { return prompt > 0 ? prompt : std::max(1.0, std::min(context, 2048.0)); }
  /// Decode steps of a request after its first token, which its prefill
  /// samples: output - 1 (none for one output token). A request's time in the
  /// server is TTFT + decode_steps() x TPOT, as vLLM's benchmark defines TPOT
  /// ((e2e - TTFT) / (output - 1)).
  [[nodiscard]] double decode_steps() const { return std::max(0.0, output - 1); }
  /// What a context longer than one request means, decided here once: the
  /// users' conversations grow to it. Each request is a turn that finds
  /// context - prompt - output tokens of its conversation already in its
  /// sequence (kept by the engine's prefix cache; recomputed without one),
  /// prefills its prompt over them and decodes its answer up to the context,
  /// so every speed of a loop is at the context asked for. 0 when one
  /// request's prompt and answer fill the context.
  [[nodiscard]] double history() const { return std::max(0.0, context - prompt_tokens() - output); }
  /// Tokens a sequence holds when its request completes: history + prompt +
  /// output (the context, or one request's prompt and answer beyond it).
  [[nodiscard]] double request_end() const { return history() + prompt_tokens() + output; }
  /// The mean context a request's decode steps read: history + prompt +
  /// output / 2.
  [[nodiscard]] double mean_decode_context() const { return history() + prompt_tokens() + output / 2; }
};

/// A token count as people write it: "131072", "128k" (x 1024), "1m"
/// (x 1048576), "1.5k"; rounded to whole tokens. The command's --context and
/// --prompt and Python's context="32k" read it here. Throws
/// std::invalid_argument "<label> must be a token count like 4096 or 128k
/// (got '<text>')", or the range error of require_tokens naming `field`.
inline double parse_token_count(std::string_view field, std::string_view text, std::string_view label = {}) {
  const std::string s(text);
  const auto bad = [&] {
    return std::invalid_argument(std::string(label.empty() ? field : label) +
                                 " must be a token count like 4096 or 128k (got '" + s + "')");
  };
  if (s.empty()) throw bad();
  const char last = static_cast<char>(std::tolower(static_cast<unsigned char>(s.back())));
  const double mult = last == 'k' ? 1024.0 : last == 'm' ? 1048576.0 : 1.0;
  const std::string num = mult > 1 ? s.substr(0, s.size() - 1) : s;
  // The whole text a finite number: no trailing words, no "inf" or "nan".
  char* end = nullptr;
  const double n = num.empty() || std::isspace(static_cast<unsigned char>(num[0])) ? NAN : std::strtod(num.c_str(), &end);
  if (end == nullptr || *end != '\0' || !std::isfinite(n)) throw bad();
  // A plain count is whole, as users are ("1.5" tokens is no count); a
  // suffixed one rounds to the token ("0.1k" = 102).
  if (mult == 1 && n != std::floor(n)) {
    throw std::invalid_argument(std::string(label.empty() ? field : label) + " must be a whole number of tokens (got '" +
                                s + "')");
  }
  const double v = n * mult;
  detail::require_tokens(field, v);
  return std::round(v);
}

/// Throws std::invalid_argument naming the field: users a whole number in
/// [1, 1e9], context in [1, 1e9] tokens, prompt a whole number in [0, 1e9]
/// (0: the default) and at most the context, output in [1, 1e9], prefix a
/// whole number of tokens at most the prompt, prefix_hit in [0, 1] and only
/// with a prefix; in lockstep (identical requests) a whole number of output
/// tokens and prefix_hit 0 or 1.
inline void validate(const workload& w) {
  detail::require_whole("users", w.users);
  detail::require_in("users", w.users, 1, 1e9);
  detail::require_tokens("context", w.context);
  if (w.context < 1) detail::fail("context", ">= 1 token", w.context);
  detail::require_tokens("prompt", w.prompt);
  detail::require_whole("prompt", w.prompt);
  detail::require_in("output", w.output, 1, 1e9);
  // The context holds the prompt (and the answer after it).
  if (w.prompt > w.context) detail::fail("prompt", "<= the context (" + detail::show(w.context) + " tokens)", w.prompt);
  detail::require_tokens("prefix", w.prefix);
  detail::require_whole("prefix", w.prefix);
  if (w.prefix > w.prompt_tokens()) {
    detail::fail("prefix", "<= the prompt (" + detail::show(w.prompt_tokens()) + " tokens)", w.prefix);
  }
  if (w.prefix_hit) {
    detail::require_in("prefix_hit", *w.prefix_hit, 0, 1);
    if (w.prefix <= 0) throw std::invalid_argument("prefix_hit needs a prefix (the prompt tokens every request shares)");
  }
  if (w.arrivals == arrival_pattern::lockstep) {
    detail::require_whole("output", w.output);
    if (w.prefix_hit && *w.prefix_hit > 0 && *w.prefix_hit < 1) {
      detail::fail("prefix_hit", "0 or 1 in lockstep (identical requests all find the prefix or none does)",
                   *w.prefix_hit);
    }
  }
}

}  // namespace llmroof
