// A measured row's speculative decoding: a draft model's, or the model's own
// MTP, EAGLE or n-gram drafts, with the acceptance the row gives.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "calibration/phrases.hpp"
#include "calibration/rows.hpp"
#include "model/readers/common.hpp"

namespace llmroof::rows {

namespace {


// Tokens LM Studio's MLX engine drafts per step: mlx-lm's
// speculative_generate_step default, num_draft_tokens=2 (mlx_lm/generate.py,
// early 2025) [recalled, not re-checked here; the rows do not say].
constexpr int mlx_draft_tokens = 2;

// Sets one conditional acceptance a for every position such that the drafts
// kept per verify step, a + a^2 + ... + a^k (accepted_tokens - 1), are `kept`
// (0 < kept < k).
void with_kept_drafts(speculation& s, double kept) {
  double lo = 0, hi = 1;
  for (int i = 0; i < 60; ++i) {
    s.acceptance = {(lo + hi) / 2};
    (accepted_tokens(s) - 1 < kept ? lo : hi) = (lo + hi) / 2;
  }
  s.acceptance = {(lo + hi) / 2};
}

}  // namespace


// A row's draft model and acceptance, or why it cannot be modelled: the
// draft's size in the backend ("+ 1.5B draft model": the target's family at
// that size) and the share of drafted tokens accepted in the notes
// ("accepted draft tokens 55.1%"), as one conditional rate a per position
// with a + a^2 + ... + a^k = k x share (the accepted drafts per step).
std::optional<speculation> drafted(const std::string& backend, const std::string& notes, const architecture& target,
                                   std::string& why) {
  const std::size_t b = backend.find("B draft");
  std::size_t start = b;
  while (start != std::string::npos && start > 0 &&
         ((backend[start - 1] >= '0' && backend[start - 1] <= '9') || backend[start - 1] == '.')) {
    --start;
  }
  if (b == std::string::npos || start == b) {
    why = "a draft model's speculative decoding, the draft not named";
    return std::nullopt;
  }
  const std::string size = backend.substr(start, b - start);
  const std::string family = target.id.substr(0, target.id.rfind('-'));
  const auto draft = model_id(family + "-" + size + "b");
  const std::size_t at = notes.find("accepted draft tokens ");
  if (!draft || at == std::string::npos) {
    why = draft ? "a draft model's speculative decoding without its acceptance"
                : "draft model '" + family + "-" + size + "b' is not in the catalog";
    return std::nullopt;
  }
  // The number right after the phrase, as a share: "55.1%" -> 0.551.
  const double share = number_at(notes, at, 22, {.skip = "", .decimals = true, .max_digits = 7}) / 100;
  if (!(share > 0 && share < 1)) {
    why = "a draft model's acceptance is not a share";
    return std::nullopt;
  }
  speculation s;
  s.method = spec_method::draft;
  s.draft_tokens = mlx_draft_tokens;
  s.draft = find_model(*draft);
  with_kept_drafts(s, s.draft_tokens * share);
  return s;
}

// A row's multi-token-prediction, EAGLE or n-gram setup from its text (backend
// and notes, lower case), or why it cannot be modelled. Its draft tokens as written ("MTP=3", "mtp-3",
// "num_nextn_predict_layers 3", "--speculative-num-steps 3",
// "num_speculative_tokens 3", "3 draft tokens"), else 1 (the library's
// default); its acceptance when the text gives one, as one conditional rate
// per position: an accept length (tokens kept per verify step, SGLang's
// "accept length 2.18": 1 + a + ... + a^k) or the share of drafted tokens
// accepted ("accept_rate 0.797", "acceptance rate 79.7%": a + ... + a^k =
// k x share); else the method's published default (speculative_setup.hpp).
std::optional<speculation> self_drafted(const std::string& t, const architecture& target, std::string& why) {
  speculation s;
  // SGLang launches DeepSeek's MTP layers as "--speculative-algorithm EAGLE".
  if (has(t, "mtp") || has(t, "nextn") || (has(t, "eagle") && target.moe.mtp_layers > 0 && !has(t, "eagle3") &&
                                           !has(t, "eagle-3"))) {
    s.method = spec_method::mtp;
  } else if (has(t, "eagle")) {
    s.method = spec_method::eagle;
  } else if (has(t, "ngram") || has(t, "n-gram") || has(t, "prompt lookup")) {
    s.method = spec_method::ngram;
  } else {
    why = "speculative decoding by a method the row does not name";
    return std::nullopt;
  }
  // The engines' own keys first: the checkpoint's layer count is not the draft length they run.
  double k = number_after(t, {"speculative-num-steps", "speculative_num_steps", "num_speculative_tokens",
                              "num-speculative-tokens", "mtp", "num_nextn_predict_layers"}, setting_value);
  if (k <= 0) k = count_before(t, " draft tokens");
  if (k <= 0) k = 1;
  if (k != std::round(k) || k > 16) {
    why = "a speculative row whose draft length (" + detail::show(k) + ") is not a whole number up to 16";
    return std::nullopt;
  }
  s.draft_tokens = static_cast<int>(k);
  if (const double length = number_after(t, {"accept length", "acceptance length", "accept_length",
                                             "mean acceptance length", "acceptance_length"}, setting_value);
      length > 0) {
    if (!(length > 1 && length < k + 1)) {
      why = "an accept length of " + detail::show(length) + " with " + detail::show(k) +
            " draft tokens (it lies between 1 and " + detail::show(k + 1) + ")";
      return std::nullopt;
    }
    with_kept_drafts(s, length - 1);
  } else if (std::size_t end = 0;
             double share = number_after(t, {"accept_rate", "acceptance rate", "accept rate", "acceptance_rate"}, setting_value, &end)) {
    // A share, or a percentage when "%" follows it ("79.7%"); "1.7" is neither.
    while (end < t.size() && t[end] == ' ') ++end;
    if (end < t.size() && t[end] == '%') share /= 100;
    if (!(share < 1)) {
      why = "an acceptance rate of " + detail::show(share) + " (a share below 1, or a percentage with its % sign)";
      return std::nullopt;
    }
    with_kept_drafts(s, k * share);
  }
  return s;
}

}  // namespace llmroof::rows
