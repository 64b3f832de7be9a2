// What recommend's search shares between building candidates
// (recommend.cpp) and scoring them (scoring.cpp): internal, never installed.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "llmroof/search/recommend.hpp"
#include "llmroof/serving/disaggregation.hpp"

namespace llmroof::detail {

/// Relative precision of the rates a search solves for: figures to ~4 digits.
inline constexpr double search_tolerance = 1e-4;

std::string thousands_plain(double v);

/// Instance sizes a search tries on `count` devices: powers of two and the count.
std::vector<int> instance_sizes(int count);

/// The smaller KV formats an engine holds below `kv` (fp8, q8_0, q4_0), `kv` first.
std::vector<numeric_format> kv_formats_for(engine_id e, const numeric_format& kv, bool more);

/// The checkpoint's formats first, then up to two quantized weight formats
/// the engine runs at well under its bits (alternatives.hpp's rule).
std::vector<std::pair<precision, std::optional<bytes>>> weights_for(const deployment& base, engine_id e, bool more);

void priced(candidate& c, const energy_cost& e, double scale);

/// What the replica counts of one layout share in score_aggregated's closed
/// loops, each made when first needed: the open loop's rate-free terms, and
/// the slow edge's deployment and terms. A replica count changes the users
/// and the slots (given to the loop), which they do not read; a
/// single-slot server's max_num_seqs (-np) is checked before reuse.
struct layout_loops {
  std::optional<open_loop> terms;
  std::optional<deployment> slow;
  std::optional<open_loop> slow_terms;
};

/// An aggregated candidate: `replicas` copies of `d`, the workload's users
/// spread over them (closed loop) or its rate (open loop). `layout`: what
/// the other replica counts of `d`'s layout computed.
void score_aggregated(candidate& c, const deployment& d, const recommend_input& in, layout_loops* layout = nullptr);

/// A decode instance's memory among y of them: its share of the closed
/// loop's users at the context, or one request of the open loop's shape.
memory_plan memory_for_decode(const deployment& dec, const recommend_input& in, int y);

/// The candidate's x prefill instances for y decode ones (`pair`: the two
/// instance sizes' pd_split at the SLOs' TTFT and TPOT, any counts; the
/// candidate's counts applied here; `m`: a decode instance's memory_for_decode):
/// the goodput must carry the workload's rate, or,
/// for N closed-loop users, the rate λ at which λ x (TTFT(λ) + output x
/// TPOT(λ)) = N (Little's law; regula falsi over the decode pool's
/// sequences, the left side grows with them), and the figures are those at
/// that rate.
void score_disaggregated(candidate& c, const pd_split& pair, const memory_plan& m, const recommend_input& in);

/// Orders candidates by the recommendation's rule: meets before at_risk
/// before misses before no_fit; then (meets, at_risk) the cheaper, then the
/// least quantized (weights, then KV: what the model answers is the
/// checkpoint's, as near as the budget allows), then the faster at the slow
/// edge, then the more tokens/s per device; misses by the smaller miss.
bool better(const candidate& a, const candidate& b);

}  // namespace llmroof::detail
