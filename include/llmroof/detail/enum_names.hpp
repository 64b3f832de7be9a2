// One name table per enum: to_string, parsing and the "a, b or c" of error
// messages read the same array, listed in declaration order.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace llmroof::detail {

/// The name of `e` in `names` (indexed by the enumerator's value); "?" for a
/// value outside the table (an integer cast to the enum).
template <class E, std::size_t N>
constexpr std::string_view enum_name(E e, const std::array<std::string_view, N>& names) noexcept {
  const auto i = static_cast<std::size_t>(e);
  return i < N ? names[i] : std::string_view("?");
}

/// The enumerator whose name is `name`, if any.
template <class E, std::size_t N>
constexpr std::optional<E> enum_from_name(std::string_view name, const std::array<std::string_view, N>& names) noexcept {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<E>(i);
  }
  return std::nullopt;
}

/// "a, b or c": the names for an error message.
template <std::size_t N>
std::string enum_choices(const std::array<std::string_view, N>& names) {
  std::string out;
  for (std::size_t i = 0; i < N; ++i) {
    if (i > 0) out += i + 1 == N ? " or " : ", ";
    out += names[i];
  }
  return out;
}

}  // namespace llmroof::detail
