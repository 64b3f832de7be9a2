// Power, energy per token and cost per million tokens of a deployment's
// step, from the roofline's own split of that step into compute-bound,
// memory-bound and idle (launch gaps, host time) time.
#pragma once

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include "llmroof/deployment.hpp"

namespace llmroof {

/// How a device's board power follows what its step does, between idle and
/// its TDP. Fitted to Splitwise's phase power (Patel et al., "Splitwise:
/// Efficient Generative LLM Inference Using Phase Splitting", ISCA 2024, as
/// quoted in issue 30 [not re-checked here]): DGX A100 prompt 400 W, token
/// 250 W, idle 63 W; DGX H100 700, 380 and 75 W per GPU.
///  - idle: 63/400 = 15.8% and 75/700 = 10.7% of TDP -> 13% (their mean);
///  - a compute-bound op draws the TDP (the prompt phase ran at it on both);
///  - a memory-bound op draws idle + 52% of the span (the token phase:
///    (250-63)/(400-63) = 55.5%, (380-75)/(700-75) = 48.8%, mean 52%).
/// Two datacenter parts: other classes (consumer, Apple, CPUs) are assumed
/// to follow the same shares of their TDP [unverified].
struct power_model {
  double idle_share = 0.13;
  double memory_share = 0.52;
};

/// Average power of one device over `step`, W: idle plus the span to the TDP
/// weighted by the step's compute-bound time (1), memory- and link-bound
/// time (memory_share) and launch gaps and host time (0). Throws
/// std::invalid_argument when the device's TDP is unknown (0).
/// `stages`: a pipeline's stages run one after another within the step, so
/// each device is busy for 1/stages of its compute and memory time.
inline double step_power_w(const device& dev, const phase_timing& step, const power_model& m = {},
                           double stages = 1) {
  if (!(dev.tdp_w > 0)) {
    throw std::invalid_argument("device '" + dev.id + "' has no power figure: give its TDP (custom:...,tdp=300W)");
  }
  const double t = step.estimate.value();
  const double idle = m.idle_share * dev.tdp_w;
  if (!(t > 0)) return idle;
  const double busy =
      (step.compute_time.value() + m.memory_share * (step.memory_time + step.link_time).value()) / t / stages;
  return idle + (dev.tdp_w - idle) * std::min(1.0, busy);
}

/// What a price is: an hourly rate per device (cloud), or a purchase price
/// per device amortised over `years` of continuous use; electricity per kWh
/// times the facility's PUE on top. No default price: none is a fact.
struct price {
  std::optional<double> per_device_hour;  ///< USD per device-hour
  std::optional<double> purchase;         ///< USD per device
  std::optional<double> years;            ///< amortisation of a purchase (unset: 3)
  std::optional<double> electricity_kwh;  ///< USD per kWh
  std::optional<double> pue;              ///< facility power / IT power, of the electricity (unset: 1.0)
  [[nodiscard]] double amortisation_years() const { return years.value_or(3.0); }
  [[nodiscard]] double facility_pue() const { return pue.value_or(1.0); }
};

/// Throws std::invalid_argument naming the field.
inline void validate(const price& p) {
  if (p.per_device_hour) detail::require_in("price_per_hour", *p.per_device_hour, 0, 1e6);
  if (p.purchase) detail::require_in("purchase", *p.purchase, 0, 1e9);
  if (p.years) detail::require_in("years", *p.years, 0.01, 100);
  if (p.electricity_kwh) detail::require_in("electricity", *p.electricity_kwh, 0, 100);
  if (p.pue) detail::require_in("pue", *p.pue, 1, 5);
  // An option that changes nothing is refused, not ignored.
  if (p.years && !p.purchase) {
    throw std::invalid_argument("years amortises a purchase price: give purchase (an hourly price has no years)");
  }
  if (p.pue && !p.electricity_kwh) throw std::invalid_argument("pue scales the electricity price: give electricity");
  if (p.per_device_hour && p.purchase) {
    throw std::invalid_argument("price_per_hour and purchase are two prices of the same device: give one");
  }
}

/// USD per device-hour of the hardware alone: the hourly rate, or the
/// purchase price over `years` of continuous use, or 0 (electricity only).
inline double hardware_per_device_hour(const price& p) {
  return p.per_device_hour ? *p.per_device_hour : p.purchase ? *p.purchase / (p.amortisation_years() * 365.25 * 24) : 0.0;
}

/// Energy and cost of a deployment producing `tokens_per_s` output tokens
/// per second (all devices together) with `step` the step that produces them.
struct energy_cost {
  double devices = 1;
  double tokens_per_s = 0;                   ///< output tokens/s, all devices
  std::optional<double> power_w;             ///< all devices, W (unknown without a TDP)
  std::optional<double> joules_per_token;    ///< per output token, all devices
  std::optional<double> tokens_per_s_per_kw;
  std::optional<double> cost_per_hour;       ///< USD, all devices (hardware + electricity)
  std::optional<double> cost_per_million;    ///< USD per million output tokens
  /// What `tokens_per_s` is: "decoding" (every user decoding at once, a
  /// step's rate) or the load served ("closed loop", "open loop", "burst":
  /// prompts' prefill and waits included, what a bill divides by).
  std::string basis = "decoding";
  /// Whether the users it is for fit; false: what the deployment would draw
  /// and cost if they did (a plan that does not fit runs nothing).
  bool fits = true;
  /// USD per month of continuous use: cost_per_hour x 730.5 (365.25 x 24 / 12 h).
  [[nodiscard]] std::optional<double> cost_per_month() const {
    return cost_per_hour ? std::optional<double>(*cost_per_hour * hours_per_month) : std::nullopt;
  }
  static constexpr double hours_per_month = 365.25 * 24 / 12;
  /// Prompt tokens (a plan's; prefill_energy): J per input token, all
  /// devices, and USD per million input tokens, blended over prefix-cache
  /// hits and misses. Unset where unknown (no TDP, no price, no prompt).
  std::optional<double> joules_per_input_token;
  std::optional<double> cost_per_million_input;
};

/// `step` of deployment `d` producing `tokens_per_s` output tokens/s in all.
/// Throws std::invalid_argument for a price that is invalid or that needs
/// the power (electricity) of a device without a TDP.
inline energy_cost energy_and_cost(const deployment& d, const phase_timing& step, double tokens_per_s,
                                   const price& p = {}, const power_model& m = {}) {
  validate(p);
  detail::require_non_negative("tokens_per_s", tokens_per_s);
  energy_cost out;
  out.devices = d.devices();
  out.tokens_per_s = tokens_per_s;
  if (d.dev().tdp_w > 0) {
    out.power_w = out.devices * step_power_w(d.dev(), step, m, d.parallel().pp);
    if (tokens_per_s > 0) {
      out.joules_per_token = *out.power_w / tokens_per_s;
      out.tokens_per_s_per_kw = tokens_per_s / (*out.power_w / 1e3);
    }
  }
  if (p.per_device_hour || p.purchase || p.electricity_kwh) {
    double per_hour = out.devices * hardware_per_device_hour(p);
    if (p.electricity_kwh) {
      if (!out.power_w) step_power_w(d.dev(), step, m, d.parallel().pp);  // throws: the electricity needs the power
      per_hour += *out.power_w / 1e3 * p.facility_pue() * *p.electricity_kwh;
    }
    out.cost_per_hour = per_hour;
    if (tokens_per_s > 0) out.cost_per_million = per_hour / (3600 * tokens_per_s / 1e6);
  }
  return out;
}

/// `e` with the prompt side filled in: prefills of `prompt` tokens that take
/// `miss` on an empty cache and `hit` (when given) for a share `hit_share`
/// of the requests that find their prefix cached. Energy per prompt =
/// devices x (h x P(hit) x t_hit + (1 - h) x P(miss) x t_miss), the devices
/// of one replica (the one a prompt goes to); the device
/// time per prompt is priced at the hourly rate, its energy at the
/// electricity price x PUE. Throws std::invalid_argument as energy_and_cost.
inline energy_cost with_prefill_energy(energy_cost e, const deployment& d, double prompt, const phase_timing& miss,
                                       const phase_timing* hit = nullptr, double hit_share = 0, const price& p = {},
                                       const power_model& m = {}) {
  validate(p);
  detail::require_in("hit_share", hit_share, 0, 1);
  if (!(prompt > 0)) return e;
  const double h = hit ? hit_share : 0.0;
  const double t_miss = miss.estimate.value();
  const double t_hit = hit ? hit->estimate.value() : 0.0;
  const double seconds_per_prompt = h * t_hit + (1 - h) * t_miss;
  const double busy = d.parallel().devices();  // one replica's devices prefill a prompt
  std::optional<double> joules;
  if (d.dev().tdp_w > 0) {
    const double stages = d.parallel().pp;
    const double w_miss = step_power_w(d.dev(), miss, m, stages);
    const double w_hit = hit ? step_power_w(d.dev(), *hit, m, stages) : 0.0;
    joules = busy * (h * w_hit * t_hit + (1 - h) * w_miss * t_miss);
    e.joules_per_input_token = *joules / prompt;
  }
  if (p.per_device_hour || p.purchase || p.electricity_kwh) {
    double usd = busy * hardware_per_device_hour(p) * seconds_per_prompt / 3600;
    if (p.electricity_kwh) {
      if (!joules) step_power_w(d.dev(), miss, m);  // throws: the electricity needs the power
      usd += *joules / 3.6e6 * p.facility_pue() * *p.electricity_kwh;
    }
    e.cost_per_million_input = usd / prompt * 1e6;
  }
  return e;
}

}  // namespace llmroof
