// What to run: every way to serve one workload on a pool of machines (model,
// device kind and count, engine, weight and KV formats, layout, replicas,
// offload, prefill/decode apart, the model's own MTP), pruned by memory,
// scored by the load model under the SLOs with the band's slow edge, and
// the answer: the cheapest that meets every target, the Pareto front, the
// best per device kind, and for each rejected one its first reason.
//
// This header declares the search; src/search/recommend.cpp runs it, so a
// consumer compiles the types, not the thousand lines that score them.
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llmroof/deployment.hpp"
#include "llmroof/serving/alternatives.hpp"
#include "llmroof/serving/energy.hpp"
#include "llmroof/serving/workload.hpp"

namespace llmroof {

/// Devices of one kind a search may use: the count owned or allowed, how
/// many a node holds (0: all in one node), and their price (none: the
/// search counts devices instead of dollars).
struct pool_entry {
  device dev;  ///< by value: a request owns its devices (files and custom ones included)
  int count = 1;
  int per_node = 0;
  price cost;
};

/// Service-level objectives, each 0 for none: mean TTFT, tokens/s each
/// user decodes, USD per million output tokens, joules per output token,
/// and a capital budget: USD the devices cost to buy (their purchase prices).
struct slo {
  seconds ttft = make_seconds(0);
  double min_tokens_per_s = 0;
  double max_cost_per_million = 0;
  double max_joules_per_token = 0;
  double max_purchase = 0;
};

/// What a search may change. Engines empty: engines_for(device).
struct search_space {
  std::vector<std::string> engines;
  engine_overrides engine_options;
  bool formats = true;        ///< also the engine's smaller KV formats and quantized weights
  /// KV formats to try (those the engine holds); empty: the model's own and,
  /// with `formats`, the smaller ones the engine holds.
  std::vector<std::string> kv;
  bool replicas = true;       ///< copies of a smaller instance (data parallel)
  bool offload = true;        ///< llama.cpp on one device: the fewest layers in host RAM that fit
  bool disaggregated = true;  ///< x prefill + y decode instances (needs a TTFT target)
  bool speculation = true;    ///< the model's own MTP layers where the engine runs them
  int max_count = 65536;      ///< devices per kind tried at most (powers of two and the count); default: the pool's
  int threads = 0;            ///< threads of the search (0: one per hardware thread)
  /// Candidates kept whole: a search that scores more keeps, of each
  /// (model, device kind) part, only those its answer can use (the best of
  /// each status and cost, the fronts, the closest misses, the published
  /// start) and counts the rest, so memory stays bounded.
  std::size_t keep = 100000;
};

/// A search's inputs. `models` are device-free deployments (resolve without
/// a device): the model, its formats as resolved, its stored bytes.
/// `rate` set: an open loop of that many requests/s; else a closed loop of
/// workload.users users.
struct recommend_input {
  std::vector<deployment> models;
  std::vector<std::string> labels;  ///< as the user named each model (default: its id)
  std::vector<pool_entry> pool;
  workload w;
  std::optional<double> rate;
  slo target;
  search_space space;
};

/// How a candidate stands against the SLOs: meets them at its band's slow
/// edge; at_risk (meets them at its estimate only); misses (its estimate
/// misses one); no_fit (memory).
enum class verdict : std::uint8_t { meets, at_risk, misses, no_fit };
inline constexpr std::array<std::string_view, 4> verdict_names{"meets", "at_risk", "misses", "no_fit"};
constexpr std::string_view to_string(verdict v) { return detail::enum_name(v, verdict_names); }

/// One way to serve the workload, with its figures.
struct candidate {
  std::size_t model = 0;  ///< index into recommend_input::models
  std::size_t pool = 0;   ///< index into recommend_input::pool
  std::string engine;     ///< qualified engine name
  std::string weights;    ///< bulk weight format (the experts' in a MoE model)
  std::string kv;
  double weight_bits = 0; ///< of `weights`: at equal cost the search prefers the least quantized
  double kv_bits = 0;
  parallel_plan layout;   ///< of one instance (disaggregated: of a decode instance)
  parallel_plan prefill_layout;  ///< disaggregated: of a prefill instance
  int replicas = 1;       ///< aggregated instances (0 when disaggregated)
  int prefill_instances = 0;  ///< disaggregated: x prefill + y decode instances
  int decode_instances = 0;
  int devices = 1;        ///< all of them
  double offload = 0;     ///< share of layers in host RAM
  bool mtp = false;       ///< the model's MTP layers draft one token
  double users_per_instance = 0;
  // Figures (0 where not served).
  double tokens_per_s_per_user = 0;       ///< estimate
  double tokens_per_s_per_user_slow = 0;  ///< at the band's slow edge
  double ttft_s = 0;
  double ttft_slow_s = 0;
  double output_tokens_per_s = 0;         ///< all devices
  std::optional<double> power_w;          ///< all devices (unknown without a TDP)
  std::optional<double> joules_per_token;
  std::optional<double> cost_per_hour;    ///< USD, with a price
  std::optional<double> cost_per_million; ///< USD per million output tokens
  std::optional<double> purchase;         ///< USD to buy its devices, with purchase prices
  double max_users = 0;     ///< sequences of the context one instance holds
  double max_context = 0;   ///< tokens each of users_per_instance can hold
  verdict status = verdict::no_fit;
  std::string reason;       ///< the first SLO missed (or why it is at risk); empty when it meets
  double miss = 0;          ///< by how much, relative (0.25: 25% short of the worst target)
  bool on_front = false;
  [[nodiscard]] double tokens_per_s_per_device() const { return devices > 0 ? output_tokens_per_s / devices : 0; }
  /// What the search minimises: USD per hour with prices, else devices.
  [[nodiscard]] double cost() const { return cost_per_hour ? *cost_per_hour : devices; }
  /// "2 x TP 1", "1 x TP 2", "1P3D of TP 1", with the offload and MTP.
  [[nodiscard]] std::string layout_label() const {
    std::string s = prefill_instances > 0
                        ? std::to_string(prefill_instances) + "P (" + layout_name(prefill_layout) + ") + " +
                              std::to_string(decode_instances) + "D (" + layout_name(layout) + ")"
                    : replicas > 1 ? std::to_string(replicas) + " replicas of " + layout_name(layout)
                                   : layout_name(layout);
    if (offload > 0) {
      char b[48];
      std::snprintf(b, sizeof b, ", %.0f%% of layers on the host", 100 * offload);
      s += b;
    }
    if (mtp) s += ", MTP";
    return s;
  }
};

/// A model as published on one device of a kind, under the first engine
/// tried (the search's first candidate there), and when it does not hold
/// the users, each change alone that would (plan_alternatives: a smaller KV
/// or weight format, more devices up to the pool's, fewer users, a shorter
/// context).
struct published_start {
  std::size_t model = 0;
  std::size_t pool = 0;
  std::size_t candidate = 0;
  std::vector<alternative> fixes;
};

/// The answer: every candidate, the recommended one, the Pareto front over
/// tokens/s per user, tokens/s per device, cost, weight and KV bits (of those
/// meeting the SLOs at their estimate, or of every served one when none
/// does), the best per device kind, and the closest misses.
struct recommendation {
  std::vector<candidate> candidates;     ///< every one scored, or (pruned) those the answer uses
  std::size_t searched = 0;              ///< candidates scored, kept or not
  std::array<std::size_t, 4> counts{};   ///< of them, per verdict
  bool pruned = false;                   ///< more than search_space::keep were scored: see candidates
  std::optional<std::size_t> best;       ///< cheapest meeting every SLO at its slow edge (else at its estimate: at risk)
  std::vector<std::size_t> front;        ///< by cost
  std::vector<std::size_t> per_device;   ///< the best per pool entry (none when it has no candidate)
  std::vector<std::size_t> closest;      ///< when nothing meets: the nearest misses, nearest first
  std::string why;                       ///< why the best was chosen, or what nothing meets
  std::vector<published_start> published;  ///< per model and device kind
  [[nodiscard]] bool met() const { return best.has_value(); }
};

/// "h100-sxm:8,rtx-pro-6000-blackwell:4,m3-ultra-80c" (count 1 when absent)
/// as (name, count) pairs. Throws std::invalid_argument naming `field`.
std::vector<std::pair<std::string, int>> parse_pool(std::string_view text, std::string_view field = "pool");

/// "h100-sxm=2.5/h,rtx-pro-6000-blackwell=8500": USD per device-hour (/h)
/// or a purchase price per device, by device name. Throws
/// std::invalid_argument naming `field`.
std::vector<std::pair<std::string, price>> parse_prices(std::string_view text, std::string_view field = "price");

/// Throws std::invalid_argument naming the field: no model, an empty pool
/// or a pool entry without a device or with a count outside [1, 65536],
/// prices on some kinds and not others, invalid workload or SLO fields, a
/// rate <= 0.
void validate(const recommend_input& in);

/// "1 x rtx-pro-6000-blackwell (1 x TP 2, vllm, weights bf16, KV fp8-e4m3)".
std::string describe(const recommend_input& in, const candidate& c);

/// Fills `out`'s answer from its scored candidates: the recommendation (the
/// first by detail::better when it meets the targets at least at its
/// estimate), the front, the best per pool entry, the closest misses when
/// nothing meets, and why. recommend() ends with it; a test can rank
/// candidates it scored by hand.
void rank(const recommend_input& in, recommendation& out);

/// Scores every candidate of `in` on `in.space.threads` threads (0: one per
/// hardware thread) and ranks them; `progress`, when given, hears the
/// running count of those scored. Throws std::invalid_argument as validate().
recommendation recommend(const recommend_input& in, const std::function<void(std::size_t)>& progress = nullptr);

namespace detail {

/// The items of a comma-separated list, spaces trimmed (empty ones kept).
std::vector<std::string_view> list_items(std::string_view text);

/// Layouts of one instance of `s` devices (`per_node` a node): tensor
/// parallel within a node and pipeline stages across nodes, all pipeline,
/// expert parallel for a MoE model, data-parallel attention beside TP for an
/// MLA model within a node; llama.cpp splits by layers (its default) or, a
/// dense model, by rows (--split-mode row, tensor parallel).
std::vector<parallel_plan> layouts_of(const architecture& a, bool splits_layers, bool row_split, int s, int per_node);

/// Sets a served candidate's verdict from its figures.
void judge(candidate& c, const slo& t);

/// Whether `a` is at least as good as `b` in tokens/s per user, tokens/s
/// per device, cost, weight and KV bits (what the model answers), and
/// better in one.
bool dominates(const candidate& a, const candidate& b);

}  // namespace detail

}  // namespace llmroof
