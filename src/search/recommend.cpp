// The deployment search declared in recommend.hpp: candidates built per
// (model, device kind) part on threads (scored in scoring.cpp), kept within
// bounds, ranked.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <iterator>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "llmroof/search/recommend.hpp"
#include "search/scoring.hpp"

namespace llmroof {

namespace detail {

/// The candidates of model `mi` on pool entry `pi`, in search order, and
/// the model as published there.
struct search_part {
  std::vector<candidate> candidates;
  std::optional<published_start> published;
};

search_part search_one(const recommend_input& in, std::size_t mi, std::size_t pi) {
  search_part part;
  std::vector<candidate>& found = part.candidates;
  const llmroof::workload& w = in.w;
  const deployment& base = in.models[mi];
  const pool_entry& pe = in.pool[pi];
  const device& dev = pe.dev;
  const int count = std::min(pe.count, in.space.max_count);
  const int per_node = pe.per_node > 0 ? pe.per_node : count;
  const std::vector<std::string> engines = in.space.engines.empty() ? engines_for(dev) : in.space.engines;
  bool published = false;
  for (const std::string& engine_name : engines) {
    const engine_settings e = configure_engine(engine_name, dev, in.space.engine_options);
    if (!runs_on(e, dev)) continue;  // a named backend of another vendor's GPUs
    const engine_row& row = engine_row_of(e.id);
    const roofline roof(dev, default_profile(dev, e.qualified_name()));
    const auto weights = detail::weights_for(base, e.id, in.space.formats);
    for (const auto& [wpr, stored] : weights) {
      std::vector<numeric_format> kvs;
      for (const std::string& k : in.space.kv) kvs.push_back(find_format(k));
      if (kvs.empty()) kvs = detail::kv_formats_for(e.id, base.pr.kv, in.space.formats);
      for (const numeric_format& kv : kvs) {
        if (!kv_format_supported(e.id, kv)) continue;
        precision pr = wpr;
        pr.kv = kv;
        const auto bulk = base.model.is_moe() ? pr.experts_format() : pr.weights;
        // What every candidate of this engine and these formats says of itself.
        candidate named;
        named.model = mi;
        named.pool = pi;
        named.engine = e.qualified_name();
        named.weights = std::string(bulk.name);
        named.kv = std::string(kv.name);
        named.weight_bits = bulk.bits;
        named.kv_bits = kv.bits;
        for (int s : detail::instance_sizes(count)) {
          for (const parallel_plan& lay : detail::layouts_of(base.model, row.splits_layers, row.row_split, s, per_node)) {
            std::optional<deployment> d;
            try {
              d.emplace(base.model, pr, roof, placement{lay, std::nullopt}, e, stored);
            } catch (const std::invalid_argument&) {
              continue;  // the model does not split that way
            }
            candidate c = named;
            c.layout = lay;
            // Replicas: 1, 2, 4, ... and as many as the count holds; a closed loop
            // stops at more replicas than users, or when one instance holds none.
            const int most = in.space.replicas ? count / s : 1;
            std::vector<int> reps = detail::instance_sizes(most);
            // A single-slot server (llama.cpp's and Ollama's one, mlx-lm's) with
            // more users than slots is started with one per user: llama-server
            // -np N. A batching engine's max_num_seqs (vLLM's 256 or 1024) is its
            // scheduler's cap, and its sampler is profiled at it: kept.
            // `wide` holds the widened copy when one is made (else `dd` is the answer).
            const auto slotted = [&](candidate& x, const deployment& dd, double u,
                                     std::optional<deployment>& wide) -> const deployment& {
              if (in.rate || in.space.engine_options.max_sequences || dd.engine.max_sequences > 4 ||
                  dd.engine.max_sequences >= u) {
                return dd;
              }
              wide.emplace(dd);
              wide->engine.max_sequences = u;
              x.engine += " (" + detail::thousands_plain(u) + " slots)";
              return *wide;
            };
            detail::layout_loops loops, mtp_loops;  // what every replica count shares
            std::optional<deployment> mtp;          // the layout with its MTP drafting, once tried
            for (int r : reps) {
              if (!in.rate && r > w.users) break;
              candidate x = c;
              x.replicas = r;
              x.devices = r * s;
              std::optional<deployment> wide;
              const deployment& dr = slotted(x, *d, std::ceil(w.users / r), wide);
              detail::score_aggregated(x, dr, in, &loops);
              const bool no_fit = x.status == verdict::no_fit;
              if (!published) {
                // The first candidate of a model on a device kind: the checkpoint as
                // published on one device under the first engine; when it does not
                // hold the users, each change alone that would (plan_alternatives).
                published_start p{mi, pi, found.size(), {}};
                if (!in.rate && no_fit) {
                  p.fixes = plan_alternatives(dr, w, memory_of(dr, w, w.users, w.context));
                  // Only the devices the pool has.
                  std::erase_if(p.fixes, [&](const alternative& a) { return a.devices > count; });
                }
                part.published = std::move(p);
                published = true;
              }
              const bool holds_none = x.max_users < 1;
              found.push_back(std::move(x));
              // The MTP layers draft a token where the engine runs them (a closed
              // loop of speculative steps, the MTP module's memory counted).
              if (!no_fit && in.space.speculation && base.model.moe.mtp_layers > 0 && lay.pp == 1 &&
                  std::find(row.speculation.begin(), row.speculation.end(), "mtp") != row.speculation.end()) {
                candidate y = c;
                y.replicas = r;
                y.devices = r * s;
                y.mtp = true;
                if (!mtp) mtp.emplace(d->with_speculation(speculation{}));
                std::optional<deployment> wide_mtp;
                detail::score_aggregated(y, slotted(y, *mtp, std::ceil(w.users / r), wide_mtp), in, &mtp_loops);
                found.push_back(std::move(y));
              }
              if (no_fit && !in.rate && holds_none) break;  // more replicas hold no more per instance
            }
            // One device that does not fit: llama.cpp keeps the fewest layers in host RAM.
            if (s == 1 && in.space.offload && row.splits_layers && !in.rate) {
              const double u = std::ceil(w.users);
              if (!memory_of(*d, w, u, w.context).fits) {
                if (const auto o = smallest_offload(*d, u, w.context, detail::default_offload_host(), reuse_of(*d, w).shared);
                    o && o->layers > 0) {
                  candidate x = c;
                  x.offload = o->layers;
                  std::optional<deployment> wide_offload;
                  const deployment offloaded = d->with_offload(*o);
                  detail::score_aggregated(x, slotted(x, offloaded, u, wide_offload), in);
                  found.push_back(std::move(x));
                }
              }
            }
          }
        }
        // Prefill and decode apart: x prefill instances of one tensor-parallel size
      // and y decode instances of another (DistServe's placements), each size
      // within a node and holding one request; KV over the node's link, across
      // nodes the inter-node one.
      if (in.space.disaggregated && row.disaggregates && count >= 2 && in.target.ttft.value() > 0) {
        std::vector<deployment> sizes;
        for (int s : detail::instance_sizes(count)) {
          if (s >= count || s > per_node) break;
          parallel_plan q;
          q.tp = s;
          q.devices_per_node = s;
          try {
            deployment d(base.model, pr, roof, placement{q, std::nullopt}, e, stored);
            if (!in.rate && !d.context_refusal(w.context).empty()) break;  // the aggregated ones say why
            if (memory_of(d, w, 1, w.request_end()).fits) sizes.push_back(std::move(d));
          } catch (const std::invalid_argument&) {
          }
        }
        kv_transfer link;
        link.link = count > per_node ? default_inter_node_link() : intra_node_link(dev, count);
        link.efficiency = default_kv_link_efficiency;
        serving_targets t;
        t.ttft = in.target.ttft;
        if (in.target.min_tokens_per_s > 0) t.tpot = make_seconds(1 / in.target.min_tokens_per_s);
        // A decode instance's memory depends on its size and y alone: one plan per pair.
        std::vector<std::vector<std::optional<memory_plan>>> decode_memory(
            sizes.size(), std::vector<std::optional<memory_plan>>(std::size_t(count) + 1));
        for (const deployment& pre : sizes) {
          for (std::size_t di = 0; di < sizes.size(); ++di) {
            const deployment& dec = sizes[di];
            const int sp = pre.devices(), sd = dec.devices();
            if (sp + sd > count) continue;  // not one of each fits the pool
            const pd_split pair(pre, 1, dec, 1, w, link, t);  // what every count of them shares
            for (int x = 1; x * sp + sd <= count; ++x) {
              // Every y on small pools; on large ones the most that fit beside x.
              const int most_y = (count - x * sp) / sd;
              for (int y = count / std::min(sp, sd) > 8 ? most_y : 1; y <= most_y; ++y) {
                candidate cd = named;
                cd.layout = dec.parallel();
                cd.prefill_layout = pre.parallel();
                cd.replicas = 0;
                cd.prefill_instances = x;
                cd.decode_instances = y;
                cd.devices = x * sp + y * sd;
                std::optional<memory_plan>& m = decode_memory[di][std::size_t(y)];
                if (!m) m = detail::memory_for_decode(dec, in, y);
                detail::score_disaggregated(cd, pair, *m, in);
                found.push_back(std::move(cd));
              }
            }
          }
        }
      }
    }
  }
  }
  return part;
}

/// Keeps of `part` only the candidates rank() can use, whichever parts
/// join it: per status and cost, the best (the recommendation, the best per
/// kind, "cheaper" and why) and, for meets and at_risk at the part's lowest
/// cost, all of them (the peers counted in `why`); the 5 best misses (the
/// closest); the Pareto fronts over the part's meeting and its served
/// missing candidates (a point dominated here is dominated in the union);
/// the published start. Order is kept, so the merge ranks as it would whole.
void prune(search_part& part) {
  std::vector<candidate>& cs = part.candidates;
  const std::size_t n = cs.size();
  if (n == 0) return;
  std::vector<char> keep(n, 0);
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return better(cs[a], cs[b]); });
  std::vector<std::pair<verdict, double>> seen;  // (status, cost) of a best kept
  double lowest[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  for (const candidate& c : cs) {
    if (c.status <= verdict::at_risk) lowest[int(c.status)] = std::min(lowest[int(c.status)], c.cost());
  }
  int misses = 0;
  for (std::size_t i : order) {
    const candidate& c = cs[i];
    const std::pair<verdict, double> key{c.status, c.cost()};
    if (std::find(seen.begin(), seen.end(), key) == seen.end()) {
      seen.push_back(key);
      keep[i] = 1;
    }
    if (c.status <= verdict::at_risk && c.cost() == lowest[int(c.status)]) keep[i] = 1;
    if (c.status == verdict::misses && misses < 5) {
      keep[i] = 1;
      ++misses;
    }
  }
  // The fronts, as rank() draws them (sorted by cost, then speed).
  for (const bool ok : {true, false}) {
    std::vector<std::size_t> pool;
    for (std::size_t i = 0; i < n; ++i) {
      const candidate& c = cs[i];
      if (ok ? c.status <= verdict::at_risk : (c.status == verdict::misses && c.tokens_per_s_per_user > 0)) pool.push_back(i);
    }
    std::stable_sort(pool.begin(), pool.end(), [&](std::size_t a, std::size_t b) {
      const candidate &x = cs[a], &y = cs[b];
      if (x.cost() != y.cost()) return x.cost() < y.cost();
      if (x.tokens_per_s_per_user != y.tokens_per_s_per_user) return x.tokens_per_s_per_user > y.tokens_per_s_per_user;
      return x.tokens_per_s_per_device() > y.tokens_per_s_per_device();
    });
    std::vector<std::size_t> front;
    for (std::size_t i : pool) {
      const candidate& b = cs[i];
      const bool dominated = std::any_of(front.begin(), front.end(), [&](std::size_t f) {
        const candidate& a = cs[f];
        return dominates(a, b) || (a.tokens_per_s_per_user == b.tokens_per_s_per_user &&
                                   a.tokens_per_s_per_device() == b.tokens_per_s_per_device() && a.cost() == b.cost() &&
                                   a.weight_bits == b.weight_bits && a.kv_bits == b.kv_bits);
      });
      if (!dominated) front.push_back(i);
    }
    for (std::size_t f : front) keep[f] = 1;
  }
  if (part.published) keep[part.published->candidate] = 1;
  std::vector<candidate> kept;
  std::size_t published_at = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (part.published && i == part.published->candidate) published_at = kept.size();
    if (keep[i]) kept.push_back(std::move(cs[i]));
  }
  if (part.published) part.published->candidate = published_at;
  cs = std::move(kept);
}

}  // namespace detail

void rank(const recommend_input& in, recommendation& out) {
  out.best.reset();
  out.front.clear();
  out.per_device.clear();
  out.closest.clear();
  for (candidate& c : out.candidates) c.on_front = false;
  std::vector<std::size_t> order(out.candidates.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return detail::better(out.candidates[a], out.candidates[b]); });
  if (!order.empty() && out.candidates[order[0]].status <= verdict::at_risk) out.best = order[0];
  // The front: of those meeting the SLOs at their estimate, else of every fitting one.
  bool any_ok = false;
  for (const candidate& c : out.candidates) any_ok = any_ok || c.status <= verdict::at_risk;
  std::vector<std::size_t> pool;
  for (std::size_t i = 0; i < out.candidates.size(); ++i) {
    const candidate& c = out.candidates[i];
    if (any_ok ? c.status <= verdict::at_risk : (c.status == verdict::misses && c.tokens_per_s_per_user > 0)) pool.push_back(i);
  }
  std::stable_sort(pool.begin(), pool.end(), [&](std::size_t a, std::size_t b) {
    const candidate &x = out.candidates[a], &y = out.candidates[b];
    if (x.cost() != y.cost()) return x.cost() < y.cost();
    if (x.tokens_per_s_per_user != y.tokens_per_s_per_user) return x.tokens_per_s_per_user > y.tokens_per_s_per_user;
    return x.tokens_per_s_per_device() > y.tokens_per_s_per_device();
  });
  for (std::size_t i : pool) {
    // Sorted by cost: only an earlier (no costlier) point can dominate this one.
    bool dominated = false;
    for (std::size_t f : out.front) {
      const candidate &a = out.candidates[f], &b = out.candidates[i];
      const bool same = a.tokens_per_s_per_user == b.tokens_per_s_per_user &&
                        a.tokens_per_s_per_device() == b.tokens_per_s_per_device() && a.cost() == b.cost() &&
                        a.weight_bits == b.weight_bits && a.kv_bits == b.kv_bits;
      if (same || detail::dominates(a, b)) {
        dominated = true;
        break;
      }
    }
    if (!dominated) {
      out.front.push_back(i);
      out.candidates[i].on_front = true;
    }
  }
  for (std::size_t pi = 0; pi < in.pool.size(); ++pi) {
    for (std::size_t i : order) {
      if (out.candidates[i].pool == pi) {
        out.per_device.push_back(i);
        break;
      }
    }
  }
  if (!out.best) {
    for (std::size_t i : order) {
      if (out.candidates[i].status != verdict::misses) continue;
      out.closest.push_back(i);
      if (out.closest.size() == 5) break;
    }
  }
  if (out.best) {
    const candidate& b = out.candidates[*out.best];
    std::size_t peers = 0;  // meeting the targets as well, at the same cost
    for (const candidate& c : out.candidates) peers += c.status == b.status && c.cost() == b.cost() ? 1 : 0;
    out.why = std::string(b.status == verdict::meets
                              ? "the cheapest that meets every target at its band's slow edge"
                              : "nothing meets every target at its band's slow edge; the cheapest that meets them "
                                "at its estimate (at risk: " + b.reason + ")") +
              (peers > 1 ? " and, of the " + std::to_string(peers) +
                               " at that cost, the least quantized, then the fastest at its slow edge"
                         : std::string()) +
              ": " + describe(in, b);
    // The obvious alternative: the cheapest candidate cheaper than it, and why it loses.
    std::optional<std::size_t> cheaper;
    for (std::size_t i = 0; i < out.candidates.size(); ++i) {
      const candidate& c = out.candidates[i];
      if (c.cost() < b.cost() && (!cheaper || detail::better(c, out.candidates[*cheaper]))) cheaper = i;
    }
    if (cheaper) out.why += "; cheaper, " + describe(in, out.candidates[*cheaper]) + ": " + out.candidates[*cheaper].reason;
  } else if (!out.closest.empty()) {
    const candidate& c = out.candidates[out.closest.front()];
    out.why = "nothing meets the targets; closest: " + describe(in, c) + ": " + c.reason;
  } else {
    out.why = "nothing fits: " + (out.candidates.empty() ? std::string("no candidate") : out.candidates[order[0]].reason);
  }
}

recommendation recommend(const recommend_input& in,
                                const std::function<void(std::size_t)>& progress) {
  validate(in);
  recommendation out;
  const std::size_t parts = in.models.size() * in.pool.size();
  std::vector<detail::search_part> done(parts);
  std::vector<std::exception_ptr> failed(parts);
  std::vector<std::size_t> scored(parts, 0);
  std::vector<std::array<std::size_t, 4>> tally(parts);
  std::vector<char> pruned(parts, 0);
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> held{0};  // candidates of finished parts, all scored
  std::mutex report;
  std::size_t searched = 0;
  const auto work = [&] {
    for (std::size_t i = next++; i < parts; i = next++) {
      try {
        done[i] = detail::search_one(in, i / in.pool.size(), i % in.pool.size());
        scored[i] = done[i].candidates.size();
        for (const candidate& c : done[i].candidates) ++tally[i][std::size_t(c.status)];
        // Past the limit every part is pruned (those before it at the end):
        // the answer is the same whichever thread saw the limit first.
        if ((held += scored[i]) > in.space.keep) {
          detail::prune(done[i]);
          pruned[i] = 1;
        }
      } catch (...) {
        failed[i] = std::current_exception();
      }
      if (progress) {
        const std::lock_guard<std::mutex> hold(report);
        searched += scored[i];
        progress(searched);
      }
    }
  };
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t threads = std::min<std::size_t>(parts, in.space.threads > 0 ? std::size_t(in.space.threads) : hardware);
  std::vector<std::thread> helpers;
  for (std::size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
  work();
  for (std::thread& t : helpers) t.join();
  for (std::size_t i = 0; i < parts; ++i) {
    if (failed[i]) std::rethrow_exception(failed[i]);
    out.searched += scored[i];
    for (std::size_t k = 0; k < 4; ++k) out.counts[k] += tally[i][k];
  }
  out.pruned = out.searched > in.space.keep;
  std::size_t total = 0;
  for (std::size_t i = 0; i < parts; ++i) {
    if (out.pruned && !pruned[i]) detail::prune(done[i]);
    total += done[i].candidates.size();
  }
  out.candidates.reserve(total);
  for (std::size_t i = 0; i < parts; ++i) {
    const std::size_t offset = out.candidates.size();
    if (done[i].published) {
      published_start p = std::move(*done[i].published);
      p.candidate += offset;
      out.published.push_back(std::move(p));
    }
    out.candidates.insert(out.candidates.end(), std::make_move_iterator(done[i].candidates.begin()),
                          std::make_move_iterator(done[i].candidates.end()));
  }
  rank(in, out);
  return out;
}

}  // namespace llmroof

