// The small grammar the measured-row reader reads free text with: a
// mention of a word, a number written after or before a key, and a word
// said without being negated. Each scanner of the reader is one of these
// with its own rule, so what "TP8", "tp: 16", "1,000 prompts" and "MTP
// disabled" mean is written once. Internal to src/calibration.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace llmroof::rows {

inline bool has(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }
inline bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

/// How a number is read beside its key.
struct number_rule {
  bool own_word = false;          ///< the key starts a word: no letter before it ("tp" in "prefill_tp=4", not "http")
  bool key_ends_word = false;     ///< no letter after the key (" concurrent", not " concurrently")
  std::string_view skip = " =:";  ///< what may stand between key and number (after it only)
  bool decimals = false;          ///< digits and '.' ("2.18"); else whole digits
  bool thousands = false;         ///< "1,500" (before the key only)
  std::size_t max_digits = 6;     ///< a longer run is not this number
  bool positive = false;          ///< a 0 is none: the next mention is read
};

/// The number written after the first mention of `key` in `t` that has one,
/// read by `rule`; 0 when none has. `ends` (when given): where it ends.
double number_after(std::string_view t, std::string_view key, const number_rule& rule = {},
                    std::size_t* ends = nullptr);

/// The number right after `key`, nothing between ("-ub 8", "up to 8192").
inline constexpr number_rule right_after{.skip = "", .max_digits = 9};

/// A setting's value after its key, past spaces, "=", ":", "-" and quotes
/// ("mtp=3", "num_speculative_tokens\": 3", "accept length 2.18"); a 0 is none.
inline constexpr number_rule setting_value{.skip = " =:-\"", .decimals = true, .max_digits = 9, .positive = true};

/// The number after the first of `keys` (in their order) that has one.
double number_after(std::string_view t, std::initializer_list<std::string_view> keys, const number_rule& rule,
                    std::size_t* ends = nullptr);

/// The number written after the mention of a key at `at` (`length` its
/// size) by `rule`, or -1 when none is.
double number_at(std::string_view t, std::size_t at, std::size_t length, const number_rule& rule,
                 std::size_t* ends = nullptr);

/// The number written just before the first mention of `key` in `t` that
/// has one ("1000" in "... 1000 prompts"), read by `rule`; 0 when none has.
double number_before(std::string_view t, std::string_view key, const number_rule& rule);

/// A count said before `key`: thousands separators allowed ("1,500
/// requests"), up to 9 digits.
inline double count_before(std::string_view t, std::string_view key) {
  return number_before(t, key, {.skip = "", .thousands = true, .max_digits = 9});
}

/// A count after `key` as a word of its own ("tp" in "TP8", "prefill_tp=4",
/// "tp: 16"; not in "http" or "step"), past spaces, "=" and ":".
inline double keyed_count(std::string_view t, std::string_view key) {
  return number_after(t, key, {.own_word = true});
}

/// Whether lower-case `t` says `word` (a prefix: "disagg", "mtp") without
/// negating it before ("not disaggregated", "non-disagg", "without MTP", "no
/// mtp") or after ("disagg: false", "disaggregated=no", "mtp off", "mtp=0",
/// "MTP disabled", "dp_attention=false").
bool said(std::string_view t, std::string_view word);

/// The users one text says a serving benchmark kept in flight:
/// "concurrency 64", "max_concurrency=64", "Concurrency: 64", "conc=64" (any
/// case), "64 concurrent requests" (not "concurrently"); 0 when it says none
/// ("no concurrency cap").
double said_concurrency(const std::string& text);

/// Whether `backend` names one of `releases` ("0.6") of an engine right after
/// one of its `names`, in any case, past spaces, "=", "@", ":", "(" and a "v"
/// ("vLLM v0.6.3", "vllm==0.6.3", "vllm-openai:v0.6.3", "SGLang (v0.4.3)");
/// "0.6" is not "0.60", "--gpu-memory-utilization 0.7" no release, nor
/// Dynamo's own "v0.5.1" an engine's.
bool said_release(const std::string& backend, std::initializer_list<const char*> names,
                  std::initializer_list<const char*> releases);

/// "1P2D", "2p1d" as a word: {prefill instances, decode instances}, or {0, 0}.
std::pair<int, int> said_xpyd(std::string_view t);

/// The whole text `s` as a number (0 when empty, -1 when it is not one).
double number(const std::string& s);

}  // namespace llmroof::rows
