// Typed quantities: bytes, seconds, FLOP, tokens and the rates built from them.
//
// Every public function of llmroof takes and returns these types, so that a
// bandwidth cannot be passed where a capacity is expected and bytes cannot be
// added to seconds. All quantities hold a double in the base unit of their
// dimension (B, s, FLOP, token); `.value()` gives it back.
#pragma once

#include <boost/units/base_dimension.hpp>
#include <boost/units/base_unit.hpp>
#include <boost/units/base_units/si/second.hpp>
#include <boost/units/make_system.hpp>
#include <boost/units/physical_dimensions/time.hpp>
#include <boost/units/quantity.hpp>
#include <boost/units/systems/information/byte.hpp>
#include <boost/units/unit.hpp>

namespace llmroof {

namespace units {

namespace bu = boost::units;

/// Floating-point (or integer multiply-add) operations: its own base dimension.
struct flop_base_dimension : bu::base_dimension<flop_base_dimension, 27301> {};
/// Tokens: its own base dimension, so tokens/s and FLOP/s never mix.
struct token_base_dimension : bu::base_dimension<token_base_dimension, 27302> {};

using flop_dimension = flop_base_dimension::dimension_type;
using token_dimension = token_base_dimension::dimension_type;

struct flop_base_unit : bu::base_unit<flop_base_unit, flop_dimension, 27301> {
  static constexpr const char* name() { return "floating-point operation"; }
  static constexpr const char* symbol() { return "FLOP"; }
};
struct token_base_unit : bu::base_unit<token_base_unit, token_dimension, 27302> {
  static constexpr const char* name() { return "token"; }
  static constexpr const char* symbol() { return "tok"; }
};

/// The unit system of llmroof: byte, second, FLOP, token.
using system = bu::make_system<bu::information::byte_base_unit, bu::si::second_base_unit,
                               flop_base_unit, token_base_unit>::type;

using byte_unit = bu::unit<bu::information_dimension, system>;
using second_unit = bu::unit<bu::time_dimension, system>;
using flop_unit = bu::unit<flop_dimension, system>;
using token_unit = bu::unit<token_dimension, system>;
using dimensionless_unit = bu::unit<bu::dimensionless_type, system>;

template <class A, class B>
using divide_t = typename bu::divide_typeof_helper<A, B>::type;

using byte_rate_unit = divide_t<byte_unit, second_unit>;
using flop_rate_unit = divide_t<flop_unit, second_unit>;
using token_rate_unit = divide_t<token_unit, second_unit>;
using intensity_unit = divide_t<flop_unit, byte_unit>;
using bytes_per_token_unit = divide_t<byte_unit, token_unit>;
using flop_per_token_unit = divide_t<flop_unit, token_unit>;

}  // namespace units

template <class Unit>
using quantity = boost::units::quantity<Unit, double>;

using bytes = quantity<units::byte_unit>;                     ///< B
using seconds = quantity<units::second_unit>;                 ///< s
using flops = quantity<units::flop_unit>;                     ///< FLOP (a count, not a rate)
using tokens = quantity<units::token_unit>;                   ///< tokens
using bytes_per_second = quantity<units::byte_rate_unit>;     ///< B/s
using flops_per_second = quantity<units::flop_rate_unit>;     ///< FLOP/s
using tokens_per_second = quantity<units::token_rate_unit>;   ///< tokens/s
using flops_per_byte = quantity<units::intensity_unit>;       ///< FLOP/B (arithmetic intensity)
using bytes_per_token = quantity<units::bytes_per_token_unit>;///< B/token
using flops_per_token = quantity<units::flop_per_token_unit>; ///< FLOP/token

// Factories from a plain number in the base unit. Named, so that the unit is
// visible at the call site: `make_bytes(1024.0)` never reads as seconds.
constexpr bytes make_bytes(double v) { return bytes::from_value(v); }
constexpr seconds make_seconds(double v) { return seconds::from_value(v); }
constexpr flops make_flops(double v) { return flops::from_value(v); }
constexpr tokens make_tokens(double v) { return tokens::from_value(v); }
constexpr bytes_per_second make_bytes_per_second(double v) {
  return bytes_per_second::from_value(v);
}
constexpr flops_per_second make_flops_per_second(double v) {
  return flops_per_second::from_value(v);
}
constexpr tokens_per_second make_tokens_per_second(double v) {
  return tokens_per_second::from_value(v);
}
constexpr bytes_per_token make_bytes_per_token(double v) { return bytes_per_token::from_value(v); }
constexpr flops_per_byte make_flops_per_byte(double v) { return flops_per_byte::from_value(v); }

// Decimal and binary prefixes. Bandwidth and FLOP/s are decimal (1 GB/s =
// 1e9 B/s); memory capacities are usually binary (an "80 GB" HBM part holds
// 80 GiB). Both exist so that code says which one it means.
inline constexpr double kilo = 1e3;
inline constexpr double mega = 1e6;
inline constexpr double giga = 1e9;
inline constexpr double tera = 1e12;
inline constexpr double peta = 1e15;
inline constexpr double kibi = 1024.0;
inline constexpr double mebi = 1024.0 * 1024.0;
inline constexpr double gibi = 1024.0 * 1024.0 * 1024.0;
inline constexpr double tebi = 1024.0 * 1024.0 * 1024.0 * 1024.0;

/// Plain double of a quantity expressed in GB (1e9 B).
constexpr double in_GB(bytes b) { return b.value() / giga; }
/// Plain double of a quantity expressed in GiB (2^30 B).
constexpr double in_GiB(bytes b) { return b.value() / gibi; }
/// Plain double of a bandwidth in GB/s (1e9 B/s).
constexpr double in_GBps(bytes_per_second r) { return r.value() / giga; }
/// Plain double of a compute rate in TFLOP/s (1e12 FLOP/s).
constexpr double in_TFLOPS(flops_per_second r) { return r.value() / tera; }

namespace literals {

#define LLMROOF_LITERAL(suffix, type, factor)                                      \
  constexpr type operator""_##suffix(long double v) {                              \
    return type::from_value(static_cast<double>(v) * (factor));                    \
  }                                                                                \
  constexpr type operator""_##suffix(unsigned long long v) {                       \
    return type::from_value(static_cast<double>(v) * (factor));                    \
  }

LLMROOF_LITERAL(B, bytes, 1.0)
LLMROOF_LITERAL(KB, bytes, kilo)
LLMROOF_LITERAL(MB, bytes, mega)
LLMROOF_LITERAL(GB, bytes, giga)
LLMROOF_LITERAL(TB, bytes, tera)
LLMROOF_LITERAL(KiB, bytes, kibi)
LLMROOF_LITERAL(MiB, bytes, mebi)
LLMROOF_LITERAL(GiB, bytes, gibi)
LLMROOF_LITERAL(TiB, bytes, tebi)
LLMROOF_LITERAL(s, seconds, 1.0)
LLMROOF_LITERAL(ms, seconds, 1e-3)
LLMROOF_LITERAL(us, seconds, 1e-6)
LLMROOF_LITERAL(GBps, bytes_per_second, giga)
LLMROOF_LITERAL(TBps, bytes_per_second, tera)
LLMROOF_LITERAL(FLOP, flops, 1.0)
LLMROOF_LITERAL(GFLOP, flops, giga)
LLMROOF_LITERAL(TFLOP, flops, tera)
LLMROOF_LITERAL(TFLOPS, flops_per_second, tera)
LLMROOF_LITERAL(tok, tokens, 1.0)
LLMROOF_LITERAL(tokps, tokens_per_second, 1.0)

#undef LLMROOF_LITERAL

}  // namespace literals

}  // namespace llmroof
