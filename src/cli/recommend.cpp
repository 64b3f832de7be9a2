// llmroof recommend: every way to serve the workload on the pool, the
// cheapest that meets the targets, the front and the best per device kind.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli.hpp"

namespace llmroof::cli {

namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  for (std::string_view item : detail::list_items(s)) {
    if (!item.empty()) out.emplace_back(item);
  }
  return out;
}

std::string secs(double s) { return s < 1 ? fmt("%.0f ms", 1e3 * s) : fmt("%.2f s", s); }

std::string money(const std::optional<double>& v, const char* f = "%.2f") {
  return v ? fmt(f, *v) : std::string("-");
}

void print_rows(const recommend_input& in, const recommendation& r, const std::vector<std::size_t>& rows, std::size_t top,
                bool prices) {
  std::printf("    %-26s %4s  %-32s %-20s %-9s %-9s %16s %9s %9s", "device", "n", "layout", "engine", "weights", "KV",
              "t/s/user (slow)", "TTFT", "t/s/dev");
  if (prices) std::printf(" %8s %8s", "$/h", "$/M");
  std::printf("  status\n");
  for (std::size_t k = 0; k < rows.size() && k < top; ++k) {
    const candidate& c = r.candidates[rows[k]];
    const std::string dev = (in.models.size() > 1 ? (in.labels.empty() ? in.models[c.model].model.id : in.labels[c.model]) + " on "
                                                  : std::string()) +
                            in.pool[c.pool].dev.id;
    // A candidate that misses at its estimate has no slow edge priced: "-".
    const std::string slow = c.tokens_per_s_per_user_slow > 0 ? fmt("%6.1f", c.tokens_per_s_per_user_slow) : "     -";
    std::printf("    %-26s %4d  %-32s %-20s %-9s %-9s %7.1f (%s) %9s %9.1f", dev.c_str(), c.devices,
                c.layout_label().c_str(), c.engine.c_str(), c.weights.c_str(), c.kv.c_str(), c.tokens_per_s_per_user,
                slow.c_str(), secs(c.ttft_s).c_str(), c.tokens_per_s_per_device());
    if (prices) std::printf(" %8s %8s", money(c.cost_per_hour).c_str(), money(c.cost_per_million).c_str());
    std::printf("  %s%s%s\n", std::string(to_string(c.status)).c_str(), c.reason.empty() ? "" : ": ", c.reason.c_str());
  }
}

}  // namespace

int cmd_recommend(const options& o) {
  recommend_input in;
  // The models, device-free: their formats as resolved (a file's, the
  // published checkpoint's, --weights), with no engine chosen yet.
  options base = o;
  base.values.erase("kv");
  if (o.all("model").empty()) throw usage_error("--model is required for 'recommend'");
  for (const std::string& m : o.all("model")) {
    in.models.push_back(make_setup(base, false, m));
    // A catalog model as named; a file's by the id read from it (as Python's Model.id).
    in.labels.push_back(in.models.back().source ? in.models.back().model.id : m);
  }
  if (auto k = o.get("kv")) in.space.kv = {std::string(find_format(*k).name)};
  if (o.get("weights")) in.space.formats = false;
  in.space.engine_options = engine_options_of(o);
  if (auto e = o.get("engines")) {
    in.space.engines = split_list(*e);
    for (const std::string& name : in.space.engines) (void)find_engine(name);  // unknown names fail here, once
  }
  if (auto s = o.get("skip")) {
    for (const std::string& part : split_list(*s)) {
      if (part == "formats") in.space.formats = false;
      else if (part == "replicas") in.space.replicas = false;
      else if (part == "offload") in.space.offload = false;
      else if (part == "pd") in.space.disaggregated = false;
      else if (part == "mtp") in.space.speculation = false;
      else throw usage_error("--skip takes formats, replicas, offload, pd, mtp (got '" + part + "')");
    }
  }
  // The pool and its prices.
  const int per_node = o.get("per-node") ? static_cast<int>(parse_count("per-node", *o.get("per-node"), 1024)) : 0;
  std::vector<std::pair<std::string, price>> prices;
  if (auto p = o.get("price")) prices = parse_prices(*p, "--price");
  for (std::size_t i = 0; i < prices.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (device_of(prices[i].first).id == device_of(prices[j].first).id) {
        throw usage_error("--price names '" + device_of(prices[i].first).id + "' twice (as '" + prices[j].first +
                          "' and '" + prices[i].first + "')");
      }
    }
  }
  std::vector<std::string> pool_names;
  for (const auto& [name, count] : parse_pool(o.require("pool"), "--pool")) {
    pool_entry e;
    e.dev = device_of(name);
    for (std::size_t i = 0; i < in.pool.size(); ++i) {
      if (in.pool[i].dev.id == e.dev.id) {
        throw usage_error("--pool names '" + e.dev.id + "' twice (as '" + pool_names[i] + "' and '" + name + "')");
      }
    }
    pool_names.push_back(name);
    e.count = count;
    e.per_node = per_node;
    for (const auto& [pname, pp] : prices) {
      if (pname == name || device_of(pname).id == e.dev.id) e.cost = pp;
    }
    if (auto y = o.get("years"); y && e.cost.purchase) e.cost.years = parse_number("years", *y);  // hourly kinds have none
    if (auto el = o.get("electricity")) e.cost.electricity_kwh = parse_number("electricity", *el);
    if (auto pue = o.get("pue")) e.cost.pue = parse_number("pue", *pue);
    in.pool.push_back(e);
  }
  if (o.get("years") && std::none_of(in.pool.begin(), in.pool.end(), [](const pool_entry& e) { return e.cost.purchase.has_value(); })) {
    throw usage_error("--years amortises a purchase price: give one in --price (like rtx-4090=1800)");
  }
  for (const auto& [pname, pp] : prices) {
    bool used = false;
    for (const pool_entry& e : in.pool) used = used || pname == e.dev.id || device_of(pname).id == e.dev.id;
    if (!used) throw std::invalid_argument("--price names '" + pname + "', which is not in --pool");
  }
  // The workload and the targets.
  workload& w = in.w;
  if (o.get("users") && o.get("rate")) throw usage_error("--users and --rate are two loads; give one");
  if (auto u = o.get("users")) w.users = parse_count("users", *u);
  if (auto r = o.get("rate")) in.rate = parse_number("rate", *r, 0, 1e9, true);
  w.context = parse_tokens("context", o.get("context").value_or("4096"));
  if (auto p = o.get("prompt")) w.prompt = parse_tokens("prompt", *p);
  if (auto out = o.get("output")) w.output = parse_count("output", *out);
  read_prefix(o, w);
  in.target.min_tokens_per_s = parse_number("tps", o.get("tps").value_or("10"), 0, 1e9);
  if (auto t = o.get("ttft")) in.target.ttft = make_seconds(parse_seconds("ttft", *t));
  if (auto c = o.get("max-cost")) in.target.max_cost_per_million = parse_number("max-cost", *c, 0, 1e12, true);
  if (auto j = o.get("max-joules")) in.target.max_joules_per_token = parse_number("max-joules", *j, 0, 1e12, true);
  if (auto b = o.get("budget")) in.target.max_purchase = parse_number("budget", *b, 0, 1e15, true);
  const std::size_t top = o.get("top") ? static_cast<std::size_t>(parse_count("top", *o.get("top"), 1e6)) : 8;

  // Progress on a terminal for long searches.
  const auto start = std::chrono::steady_clock::now();
  const bool tty = isatty(2) != 0;
  const auto progress = [&](std::size_t n) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (tty && s > 1) std::fprintf(stderr, "\rrecommend: %zu candidates searched (%.1f s)", n, s);
  };
  const recommendation r = recommend(in, progress);
  if (tty && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > 1) std::fprintf(stderr, "\n");
  if (o.json) {
    std::cout << report::recommend_json(in, r).dump(2) << "\n";
    return r.met() ? 0 : 1;
  }

  std::string models;
  for (const std::string& m : in.labels) models += (models.empty() ? "" : ", ") + m;
  std::string pool;
  for (const pool_entry& e : in.pool) pool += (pool.empty() ? "" : ", ") + std::to_string(e.count) + " x " + e.dev.id;
  std::printf("llmroof recommend: %s on up to %s\n", models.c_str(), pool.c_str());
  if (in.rate) {
    std::printf("  load: %s requests/s", fmt("%g", *in.rate).c_str());
  } else {
    std::printf("  load: %s at %s tokens each in a closed loop", users_label(w.users).c_str(), thousands(w.context).c_str());
  }
  std::printf(" (%s-token prompts, %s-token answers%s)\n", thousands(w.prompt_tokens()).c_str(), thousands(w.output).c_str(),
              history_label(w).c_str());
  std::printf("  targets: at least %.1f tokens/s per user", in.target.min_tokens_per_s);
  if (in.target.ttft.value() > 0) std::printf(", TTFT at most %s", secs(in.target.ttft.value()).c_str());
  if (in.target.max_cost_per_million > 0) std::printf(", at most $%.2f per million tokens", in.target.max_cost_per_million);
  if (in.target.max_joules_per_token > 0) std::printf(", at most %.2f J per token", in.target.max_joules_per_token);
  if (in.target.max_purchase > 0) std::printf(", bought for at most $%s", thousands(in.target.max_purchase).c_str());
  std::printf("\n  searched %zu candidates: %zu meet the targets, %zu at risk (only at their estimate), %zu miss, %zu do not fit\n",
              r.searched, r.counts[0], r.counts[1], r.counts[2], r.counts[3]);
  // The model as published on one device of each kind: where a search starts.
  std::printf("\n  as published, on one device:\n");
  for (const published_start& p : r.published) {
    const candidate& c = r.candidates[p.candidate];
    std::printf("    %s: %s%s%s\n", describe(in, c).c_str(), std::string(to_string(c.status)).c_str(),
                c.reason.empty() ? "" : ": ", c.reason.c_str());
    if (p.fixes.empty()) continue;
    std::printf("      each change alone (all users decoding at the context):\n");
    for (const alternative& a : p.fixes) {
      std::printf("        %-30s %s  %s at %s tokens: %.1f tokens/s per user\n", a.change.c_str(),
                  a.fits ? "fits        " : "does not fit", users_label(a.users).c_str(), thousands(a.context).c_str(),
                  a.per_user_tokens_per_s());
    }
  }
  const bool priced = in.pool.front().cost.per_device_hour || in.pool.front().cost.purchase;
  if (r.best) {
    const candidate& b = r.candidates[*r.best];
    std::printf("\n  recommended: %s\n", describe(in, b).c_str());
    std::printf("    %.1f tokens/s per user (%.1f at the band's slow edge), TTFT %s, %.0f output tokens/s in all",
                b.tokens_per_s_per_user, b.tokens_per_s_per_user_slow, secs(b.ttft_s).c_str(),
                b.output_tokens_per_s);
    if (b.cost_per_hour) std::printf(", $%.2f/h, $%.2f per million tokens", *b.cost_per_hour, b.cost_per_million.value_or(0));
    if (b.joules_per_token) std::printf(", %.2f J per token", *b.joules_per_token);
    std::printf("\n    why: %s\n", r.why.c_str());
  } else {
    std::printf("\n  %s\n", r.why.c_str());  // why says it: "nothing meets the targets; closest: ..." or "nothing fits: ..."
  }
  if (!r.front.empty()) {
    std::printf("\n  front (tokens/s per user, tokens/s per device, %s, weight and KV bits), cheapest first:\n", priced ? "USD per hour" : "devices");
    print_rows(in, r, r.front, top, priced);
  }
  std::printf("\n  best per device kind:\n");
  print_rows(in, r, r.per_device, top, priced);
  if (!r.closest.empty()) {
    std::printf("\n  closest misses:\n");
    print_rows(in, r, r.closest, top, priced);
  }
  if (r.pruned) {
    std::printf("\n  the %zu candidates the answer draws on (of %zu searched) and their first reasons: --json\n",
                r.candidates.size(), r.searched);
  } else {
    std::printf("\n  every candidate and its first reason: --json\n");
  }
  return r.met() ? 0 : 1;
}

}  // namespace llmroof::cli
