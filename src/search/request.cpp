// recommend's request: the pool and price lists as written, and the
// checks a search runs before it starts.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "llmroof/search/recommend.hpp"

namespace llmroof {

namespace detail {

std::vector<std::string_view> list_items(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = std::min(text.find(',', at), text.size());
    std::string_view item = text.substr(at, end - at);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    out.push_back(item);
    at = end + 1;
  }
  return out;
}

}  // namespace detail

std::vector<std::pair<std::string, int>> parse_pool(std::string_view text, std::string_view field) {
  std::vector<std::pair<std::string, int>> out;
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument(std::string(field) + " " + why + " (got '" + std::string(text) + "')");
  };
  for (std::string_view item : detail::list_items(text)) {
    if (item.empty()) throw bad("must list devices like 'h100-sxm:8,rtx-4090:2'");
    // custom:memory=...,bandwidth=... holds commas and colons of its own.
    if (item.substr(0, 7) == "custom:" || item.find('=') != std::string_view::npos) {
      throw bad("takes catalog ids or device files, not 'custom:' specs (their commas split the list): write the "
                "device to a .json file");
    }
    int n = 1;
    if (const auto colon = item.rfind(':'); colon != std::string_view::npos) {
      const std::string count(item.substr(colon + 1));
      char* stop = nullptr;
      const long v = std::strtol(count.c_str(), &stop, 10);
      if (count.empty() || *stop != '\0' || v < 1 || v > 65536) throw bad("needs a whole count in [1, 65536] after ':'");
      n = static_cast<int>(v);
      item = item.substr(0, colon);
      if (item.empty()) throw bad("needs a device before ':'");
    }
    for (const auto& [name, c] : out) {
      if (name == item) throw bad("names '" + name + "' twice");
    }
    out.emplace_back(std::string(item), n);
  }
  return out;
}

std::vector<std::pair<std::string, price>> parse_prices(std::string_view text, std::string_view field) {
  std::vector<std::pair<std::string, price>> out;
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument(std::string(field) + " " + why + " (got '" + std::string(text) + "')");
  };
  for (std::string_view item : detail::list_items(text)) {
    const auto eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) throw bad("must read like 'h100-sxm=2.5/h' or 'rtx-4090=1800'");
    std::string value(item.substr(eq + 1));
    const bool hourly = value.size() > 2 && value.substr(value.size() - 2) == "/h";
    if (hourly) value.resize(value.size() - 2);
    char* stop = nullptr;
    const double v = std::strtod(value.c_str(), &stop);
    if (value.empty() || *stop != '\0' || !std::isfinite(v) || v < 0) throw bad("needs a price >= 0 after '='");
    price p;
    (hourly ? p.per_device_hour : p.purchase) = v;
    validate(p);
    const std::string name(item.substr(0, eq));
    for (const auto& [seen, q] : out) {
      if (seen == name) throw bad("names '" + name + "' twice");
    }
    out.emplace_back(name, p);
  }
  return out;
}

void validate(const recommend_input& in) {
  if (in.models.empty()) throw std::invalid_argument("models: give at least one model");
  if (in.pool.empty()) throw std::invalid_argument("pool: give at least one device kind");
  if (!in.labels.empty() && in.labels.size() != in.models.size()) {
    throw std::invalid_argument("labels: one per model (got " + std::to_string(in.labels.size()) + " for " +
                                std::to_string(in.models.size()) + ")");
  }
  // One of each: a kind, engine or model named twice would be searched twice.
  for (std::size_t i = 0; i < in.pool.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (in.pool[i].dev.id == in.pool[j].dev.id) {
        throw std::invalid_argument("pool names '" + in.pool[i].dev.id + "' twice");
      }
    }
  }
  for (std::size_t i = 0; i < in.space.engines.size(); ++i) {
    const std::string name = find_engine(in.space.engines[i]).qualified_name();
    for (std::size_t j = 0; j < i; ++j) {
      if (find_engine(in.space.engines[j]).qualified_name() == name) {
        throw std::invalid_argument("engines names '" + name + "' twice");
      }
    }
  }
  for (std::size_t i = 0; i < in.models.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      const deployment &a = in.models[i], &b = in.models[j];
      if (a.model.id == b.model.id && a.pr.weights.name == b.pr.weights.name && a.pr.kv.name == b.pr.kv.name &&
          a.stored.has_value() == b.stored.has_value() && (!a.stored || a.stored->value() == b.stored->value())) {
        throw std::invalid_argument("models names '" + a.model.id + "' twice" +
                                    (in.labels.size() == in.models.size() && in.labels[i] != in.labels[j]
                                         ? " (as '" + in.labels[j] + "' and '" + in.labels[i] + "')"
                                         : std::string()));
      }
    }
  }
  int priced = 0;
  for (const pool_entry& e : in.pool) {
    if (e.dev.id.empty()) throw std::invalid_argument("pool: an entry without a device");
    detail::require_in("pool count", e.count, 1, 65536);
    detail::require_in("pool per_node", e.per_node, 0, 1024);
    validate(e.cost);
    priced += e.cost.per_device_hour || e.cost.purchase ? 1 : 0;
  }
  if (priced > 0 && priced < static_cast<int>(in.pool.size())) {
    throw std::invalid_argument("price: give every device kind of the pool a price, or none");
  }
  validate(in.w);
  if (in.rate) detail::require_in("rate", *in.rate, 1e-9, 1e9);
  detail::require_non_negative("ttft", in.target.ttft.value());
  detail::require_non_negative("tokens_per_s", in.target.min_tokens_per_s);
  detail::require_non_negative("max_cost_per_million", in.target.max_cost_per_million);
  detail::require_non_negative("max_joules_per_token", in.target.max_joules_per_token);
  detail::require_non_negative("budget", in.target.max_purchase);
  detail::require_in("max_count", in.space.max_count, 1, 65536);
  // A target no candidate can be measured against is refused, not met.
  for (const pool_entry& e : in.pool) {
    if (in.target.max_joules_per_token > 0 && !(e.dev.tdp_w > 0)) {
      throw std::invalid_argument("max_joules_per_token needs each device's power figure: '" + e.dev.id +
                                  "' has none (give its TDP in a device file)");
    }
    if (in.target.max_purchase > 0 && !e.cost.purchase) {
      throw std::invalid_argument("budget needs a purchase price for every device kind ('" + e.dev.id +
                                  "' has none: give its price as a purchase, e.g. " + e.dev.id + "=30000)");
    }
    if (in.target.max_cost_per_million > 0 && !e.cost.per_device_hour && !e.cost.purchase && !e.cost.electricity_kwh) {
      throw std::invalid_argument("max_cost_per_million needs a price for every device kind ('" + e.dev.id +
                                  "' has none: give price_per_hour, purchase or electricity)");
    }
  }
  // An engine named for the search runs on some device of the pool (a
  // backend of one vendor's GPUs beside another's is skipped per device).
  for (const std::string& name : in.space.engines) {
    const engine_settings e = find_engine(name);
    if (std::none_of(in.pool.begin(), in.pool.end(), [&](const pool_entry& p) { return runs_on(e, p.dev); })) {
      throw std::invalid_argument("engines: '" + name + "' runs on none of the pool's devices");
    }
  }
}

std::string describe(const recommend_input& in, const candidate& c) {
  const std::string model = in.labels.empty() ? in.models[c.model].model.id : in.labels[c.model];
  return (in.models.size() > 1 ? model + " on " : std::string()) + std::to_string(c.devices) + " x " +
         in.pool[c.pool].dev.id + " (" + c.layout_label() + ", " + c.engine + ", weights " + c.weights + ", KV " +
         c.kv + ")";
}

}  // namespace llmroof
