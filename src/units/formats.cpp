// Formats made at run time (readers' per-component averages).
#include <deque>
#include <mutex>
#include <string>

#include "llmroof/units/formats.hpp"

namespace llmroof {

namespace {

// Interned strings: numeric_format holds string_views, so the text must live
// as long as the program. A deque never moves its elements.
std::string_view intern(std::string_view s) {
  static std::mutex lock;
  static std::deque<std::string> pool;
  const std::lock_guard<std::mutex> guard(lock);
  for (const auto& x : pool) {
    if (x == s) return x;
  }
  pool.emplace_back(s);
  return pool.back();
}

}  // namespace

numeric_format make_format(std::string_view name, double bits, math_format math,
                           std::string_view description) {
  if (name.empty()) throw std::invalid_argument("format name must not be empty");
  detail::require_in_open_closed("format bits", bits, 0, 64);
  return {intern(name), bits, math, true, intern(description), intern("measured from the file")};
}

}  // namespace llmroof
