// Helpers shared by the readers (internal).
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <cctype>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "llmroof/model/readers.hpp"

namespace llmroof::readers {

[[noreturn]] inline void fail(std::string_view file, const std::string& what) {
  throw std::invalid_argument(std::string(file) + ": " + what);
}

/// Throws naming the file unless `path` is a regular file (after following
/// symbolic links): a folder, a FIFO (open() would block), a device such as
/// /dev/zero (reads never end), a symbolic-link loop and a missing file each
/// get their own message. Every reader opens files through this check.
inline void require_regular_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec) {
    if (ec == std::errc::too_many_symbolic_link_levels) fail(path, "symbolic link loop");
    if (ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory) fail(path, "no such file");
    if (ec == std::errc::permission_denied) fail(path, "permission denied");
    fail(path, "cannot open the file (" + ec.message() + ")");
  }
  switch (st.type()) {
    case fs::file_type::regular: return;
    case fs::file_type::not_found: fail(path, "no such file");
    case fs::file_type::directory: fail(path, "is a folder, not a file");
    case fs::file_type::fifo: fail(path, "is a FIFO, not a regular file");
    case fs::file_type::character:
    case fs::file_type::block: fail(path, "is a device, not a regular file");
    case fs::file_type::socket: fail(path, "is a socket, not a regular file");
    default: fail(path, "is not a regular file");
  }
}

/// Reads at most `limit` bytes from the start of a regular file; throws
/// naming the file when it is not one or cannot be opened.
inline std::vector<std::uint8_t> read_prefix(const std::string& path, std::uint64_t limit,
                                             std::uint64_t* file_size) {
  require_regular_file(path);
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) fail(path, "cannot open the file");
  const auto end = in.tellg();
  if (end < 0) fail(path, "cannot read the file size");
  const auto size = static_cast<std::uint64_t>(end);
  if (file_size != nullptr) *file_size = size;
  const std::uint64_t n = size < limit ? size : limit;
  std::vector<std::uint8_t> buf(static_cast<std::size_t>(n));
  in.seekg(0);
  if (n > 0 && !in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(n))) {
    fail(path, "cannot read the file");
  }
  return buf;
}

/// JSON nested deeper than this is refused before parsing: real config.json
/// and safetensors headers nest a handful of levels, and every recursive walk
/// of a parsed value (dump(), comparisons, destruction) is then bounded.
constexpr int max_json_depth = 64;

/// Throws naming the file when `text` opens more than max_json_depth nested
/// arrays or objects (strings skipped). Linear, no allocation.
inline void require_json_depth(std::string_view file, std::string_view text, const std::string& where = "") {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_json_depth) {
        fail(file, where + "JSON nested deeper than " + std::to_string(max_json_depth) + " levels (at byte " +
                       std::to_string(i) + ")");
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

/// True when `s` is valid UTF-8 (no overlongs, no surrogates, <= U+10FFFF).
inline bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      n = 1;
      cp = c & 0x1Fu;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2;
      cp = c & 0x0Fu;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3;
      cp = c & 0x07u;
    } else {
      return false;
    }
    for (std::size_t k = 1; k <= n; ++k) {
      if (i + k >= s.size()) return false;
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3Fu);
    }
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += n + 1;
  }
  return true;
}

/// fnmatch-style glob with '*' and '?'.
inline bool glob_match(std::string_view pat, std::string_view s) {
  std::size_t p = 0, i = 0, star = std::string_view::npos, mark = 0;
  while (i < s.size()) {
    if (p < pat.size() && (pat[p] == '?' || pat[p] == s[i])) {
      ++p;
      ++i;
    } else if (p < pat.size() && pat[p] == '*') {
      star = p++;
      mark = i;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      i = ++mark;
    } else {
      return false;
    }
  }
  while (p < pat.size() && pat[p] == '*') ++p;
  return p == pat.size();
}

/// Translates the regex subset that quantization ignore lists use into a glob:
/// literals, `.`, `.*`, `\.`, `\d`, `\d+`, `^`, `$` (and groups of
/// alternatives, expanded first); matched from the start like
/// Python's re.match. Anything else is refused: a general regex engine
/// backtracks exponentially on hostile patterns (the fuzzer found one), a glob
/// matches in linear time.
inline std::string regex_subset_to_glob(std::string_view file, const std::string& pat) {
  std::string g;
  bool anchored_end = false;
  for (std::size_t i = 0; i < pat.size(); ++i) {
    const char c = pat[i];
    const bool star_next = i + 1 < pat.size() && pat[i + 1] == '*';
    if (c == '^' && i == 0) continue;
    if (c == '$' && i + 1 == pat.size()) {
      anchored_end = true;
      continue;
    }
    if (c == '.' && star_next) {
      g += '*';
      ++i;
    } else if (c == '.') {
      g += '?';
    } else if (c == '\\' && i + 1 < pat.size()) {
      const char e = pat[++i];
      if (e == 'd') {
        const bool plus = i + 1 < pat.size() && pat[i + 1] == '+';
        g += plus ? "*" : "?";
        if (plus) ++i;
      } else if (e == '.' || e == '-' || e == '_' || e == '/') {
        g += e;
      } else {
        fail(file, std::string("quantization_config ignore pattern: unsupported regex construct '\\") + e +
                       "' (supported: literals, ., .*, \\., \\d, \\d+, ^, $, (a|b))");
      }
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '/' || c == ':') {
      g += c;
    } else {
      fail(file, std::string("quantization_config ignore pattern: unsupported regex construct '") + c +
                     "' (supported: literals, ., .*, \\., \\d, \\d+, ^, $, (a|b))");
    }
  }
  if (!anchored_end) g += '*';
  return g;
}

/// Expands the alternation groups of a regex, "(a|b)" or "(?:a|b)" (not
/// nested, no quantifier after them), into one regex per choice: Kimi K2.5
/// ignores "re:.*mlp\\.(gate|up|gate_up|down)_proj.*". At most 64 regexes.
inline std::vector<std::string> expand_alternatives(std::string_view file, const std::string& pat) {
  std::vector<std::string> out{""};
  for (std::size_t i = 0; i < pat.size(); ++i) {
    const char c = pat[i];
    if (c == '\\' && i + 1 < pat.size()) {
      for (auto& o : out) o += pat.substr(i, 2);
      ++i;
      continue;
    }
    if (c == ')' || c == '|') {
      fail(file, std::string("quantization_config ignore pattern: '") + c + "' outside a group");
    }
    if (c != '(') {
      for (auto& o : out) o += c;
      continue;
    }
    std::size_t start = i + 1;
    if (pat.compare(start, 2, "?:") == 0) start += 2;
    const std::size_t end = pat.find(')', start);
    if (end == std::string::npos) fail(file, "quantization_config ignore pattern: a group never closes");
    const std::string body = pat.substr(start, end - start);
    if (body.find('(') != std::string::npos) fail(file, "quantization_config ignore pattern: nested groups are not supported");
    if (end + 1 < pat.size() && std::string_view("?*+{").find(pat[end + 1]) != std::string_view::npos) {
      fail(file, "quantization_config ignore pattern: a quantifier after a group is not supported");
    }
    std::vector<std::string> choices;
    std::size_t from = 0;
    for (std::size_t bar = body.find('|'); ; bar = body.find('|', from)) {
      choices.push_back(body.substr(from, bar == std::string::npos ? std::string::npos : bar - from));
      if (bar == std::string::npos) break;
      from = bar + 1;
    }
    if (out.size() * choices.size() > 64) fail(file, "quantization_config ignore pattern: more than 64 alternatives");
    std::vector<std::string> next;
    for (const auto& o : out) {
      for (const auto& ch : choices) next.push_back(o + ch);
    }
    out = std::move(next);
    i = end;
  }
  return out;
}

/// An ignore list (compressed-tensors, modelopt, HF modules_to_not_convert)
/// prepared for matching many module names in linear time. Entries are
/// "re:<regex>" (the subset above), globs, or module prefixes:
/// literal entries (no '*', '?' or "re:") cover every name they prefix and sit
/// in a hash set; the rest are globs, tried one by one, and there may be at
/// most `max_patterns` of them, each at most 512 characters.
class ignore_list {
 public:
  static constexpr std::size_t max_entries = 100000;
  static constexpr std::size_t max_patterns = 256;

  ignore_list() = default;
  ignore_list(std::string_view file, const std::vector<std::string>& entries) {
    if (entries.size() > max_entries) {
      fail(file, "quantization_config ignore list has " + std::to_string(entries.size()) + " entries (limit " +
                     std::to_string(max_entries) + ")");
    }
    std::size_t patterns = 0;
    for (const auto& e : entries) patterns += e.rfind("re:", 0) == 0 || e.find_first_of("*?") != std::string::npos;
    if (patterns > max_patterns) {
      fail(file, "quantization_config ignore list has " + std::to_string(patterns) +
                     " patterns (limit " + std::to_string(max_patterns) + "; plain module names are not limited)");
    }
    for (const auto& e : entries) {
      if (e.rfind("re:", 0) == 0) {
        const std::string pat = e.substr(3);
        if (pat.size() > 512) fail(file, "quantization_config ignore pattern longer than 512 characters");
        for (const auto& one : expand_alternatives(file, pat)) globs_.push_back(regex_subset_to_glob(file, one));
      } else if (e.find_first_of("*?") != std::string::npos) {
        if (e.size() > 512) fail(file, "quantization_config ignore pattern longer than 512 characters");
        globs_.push_back(e + "*");
      } else {
        literals_.insert(e);
        if (e.size() > longest_) longest_ = e.size();
      }
    }
  }
  [[nodiscard]] bool empty() const { return literals_.empty() && globs_.empty(); }
  [[nodiscard]] bool matches(std::string_view name) const {
    if (literals_.count(std::string()) > 0) return true;
    const std::size_t n = name.size() < longest_ ? name.size() : longest_;
    std::string prefix;
    for (std::size_t k = 1; k <= n; ++k) {
      prefix.assign(name.substr(0, k));
      if (literals_.count(prefix) > 0) return true;
    }
    for (const auto& g : globs_) {
      if (glob_match(g, name)) return true;
    }
    return false;
  }

 private:
  std::unordered_set<std::string> literals_;
  std::vector<std::string> globs_;
  std::size_t longest_ = 0;
};

}  // namespace llmroof::readers
