// What stops a deployment serving more: one enum for the closed loop, the
// deployment's saturation and the most users meeting targets.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "llmroof/detail/enum_names.hpp"

namespace llmroof {

enum class serving_limit : std::uint8_t {
  none,          ///< nothing binds: every user is served at once
  kv_cache,      ///< the KV cache holds no more requests (the engine's slots)
  max_num_seqs,  ///< the engine's cap on sequences in a batch
  memory,        ///< the weights and the users' KV do not fit (max_users)
  compute,       ///< the engine's time saturates on the compute roof
  bandwidth,     ///< ... on the memory-bandwidth roof
  scheduler,     ///< ... on per-step and launch overheads
  link,          ///< ... on collectives (a disaggregated fleet: its KV hand-over link)
  prefill,       ///< prompts take most of the device
  tokens_per_s,  ///< one more user falls under the tokens/s target
  ttft,          ///< one more user's first token comes after the TTFT target
};

inline constexpr std::array<std::string_view, 11> serving_limit_names{
    "none", "kv_cache", "max_num_seqs", "memory", "compute", "bandwidth", "scheduler", "link", "prefill", "tokens/s",
    "ttft"};

constexpr std::string_view to_string(serving_limit l) { return detail::enum_name(l, serving_limit_names); }

}  // namespace llmroof
