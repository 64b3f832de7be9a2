// The measured-row reader's grammar (phrases.hpp).
#include "calibration/phrases.hpp"

#include <cctype>
#include <exception>

#include "model/readers/common.hpp"

namespace llmroof::rows {

namespace {

bool digit_at(std::string_view t, std::size_t i) { return i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])) != 0; }
bool alpha_at(std::string_view t, std::size_t i) { return i < t.size() && std::isalpha(static_cast<unsigned char>(t[i])) != 0; }

}  // namespace

double number(const std::string& s) {
  if (s.empty()) return 0;
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    return -1;
  }
  return used == s.size() ? v : -1;
}

double number_at(std::string_view t, std::size_t at, std::size_t length, const number_rule& rule, std::size_t* ends) {
  std::size_t i = at + length;
  while (i < t.size() && rule.skip.find(t[i]) != std::string_view::npos) ++i;
  std::size_t end = i;
  while (digit_at(t, end) || (rule.decimals && end < t.size() && t[end] == '.')) ++end;
  if (end == i || end - i > rule.max_digits) return -1;
  const double v = number(std::string(t.substr(i, end - i)));
  if (v < 0 || (rule.positive && v == 0)) return -1;
  if (ends != nullptr) *ends = end;
  return v;
}

double number_after(std::string_view t, std::string_view key, const number_rule& rule, std::size_t* ends) {
  for (std::size_t at = t.find(key); at != std::string_view::npos; at = t.find(key, at + 1)) {
    if (rule.own_word && at > 0 && alpha_at(t, at - 1)) continue;
    if (rule.key_ends_word && alpha_at(t, at + key.size())) continue;
    if (const double v = number_at(t, at, key.size(), rule, ends); v >= 0) return v;
  }
  return 0;
}

double number_after(std::string_view t, std::initializer_list<std::string_view> keys, const number_rule& rule,
                    std::size_t* ends) {
  for (std::string_view key : keys) {
    if (const double v = number_after(t, key, rule, ends); v != 0) return v;
  }
  return 0;
}

double number_before(std::string_view t, std::string_view key, const number_rule& rule) {
  for (std::size_t at = t.find(key); at != std::string_view::npos; at = t.find(key, at + 1)) {
    if (rule.key_ends_word && alpha_at(t, at + key.size())) continue;
    std::size_t from = at;
    while (from > 0 && (digit_at(t, from - 1) || (rule.thousands && t[from - 1] == ',' && from >= 2 && digit_at(t, from - 2)))) {
      --from;
    }
    std::string n;
    for (std::size_t i = from; i < at; ++i) {
      if (t[i] != ',') n += t[i];
    }
    if (!n.empty() && n.size() <= rule.max_digits) return std::stod(n);
  }
  return 0;
}

bool said(std::string_view t, std::string_view word) {
  for (std::size_t at = t.find(word); at != std::string_view::npos; at = t.find(word, at + 1)) {
    const std::string_view before = t.substr(at >= 9 ? at - 9 : 0, at >= 9 ? 9 : at);
    bool negated = has(before, "no ") || has(before, "not ") || has(before, "non-") || has(before, "non ") ||
                   has(before, "without ");
    std::size_t i = at;
    while (i < t.size() && (std::isalpha(static_cast<unsigned char>(t[i])) != 0 || t[i] == '_' || t[i] == '-')) ++i;
    while (i < t.size() && (t[i] == ' ' || t[i] == '=' || t[i] == ':' || t[i] == '"')) ++i;
    const std::string_view next = t.substr(i);
    negated = negated || starts(next, "false") || starts(next, "off") || starts(next, "none") ||
              starts(next, "disabled") || (starts(next, "no") && !alpha_at(t, i + 2)) ||
              (starts(next, "0") && !digit_at(t, i + 1));
    if (!negated) return true;
  }
  return false;
}

double said_concurrency(const std::string& text) {
  const std::string t = detail::to_lower(text);
  constexpr number_rule users{};
  for (std::size_t at = t.find("conc"); at != std::string::npos; at = t.find("conc", at + 1)) {
    std::size_t i = at + 4;
    while (alpha_at(t, i)) ++i;
    const std::string_view key = std::string_view(t).substr(at, i - at);
    if (key != "conc" && key != "concurrency") continue;
    if (const double v = number_at(t, at, key.size(), users); v >= 0) return v;
  }
  return number_before(t, " concurrent", {.key_ends_word = true, .skip = ""});
}

bool said_release(const std::string& backend, std::initializer_list<const char*> names,
                  std::initializer_list<const char*> releases) {
  const std::string t = detail::to_lower(backend);
  for (std::string_view name : names) {
    for (std::size_t at = t.find(name); at != std::string::npos; at = t.find(name, at + 1)) {
      std::size_t i = at + name.size();
      while (i < t.size() && std::string_view(" =@:(v").find(t[i]) != std::string_view::npos) ++i;
      for (std::string_view r : releases) {
        if (starts(std::string_view(t).substr(i), r) && !digit_at(t, i + r.size())) return true;
      }
    }
  }
  return false;
}

std::pair<int, int> said_xpyd(std::string_view t) {
  const auto alnum = [&](std::size_t i) { return i < t.size() && std::isalnum(static_cast<unsigned char>(t[i])) != 0; };
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (!digit_at(t, i) || (i > 0 && alnum(i - 1))) continue;
    std::size_t j = i;
    while (digit_at(t, j)) ++j;
    if (j >= t.size() || t[j] != 'p' || !digit_at(t, j + 1)) continue;
    std::size_t k = j + 1;
    while (digit_at(t, k)) ++k;
    if (k < t.size() && t[k] == 'd' && !alnum(k + 1) && j - i < 4 && k - j < 5) {
      return {std::stoi(std::string(t.substr(i, j - i))), std::stoi(std::string(t.substr(j + 1, k - j - 1)))};
    }
  }
  return {0, 0};
}

}  // namespace llmroof::rows
