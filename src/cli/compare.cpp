// moe and compare: a MoE model, or two deployments, against batch.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

#include "cli/cli.hpp"

namespace llmroof::cli {

int cmd_moe(const options& o) {
  if (!o.get("model")) {
    if (o.json) {
      std::cout << report::moe_table_json(moe_catalog()).dump(2) << "\n";
      return 0;
    }
    std::printf("Mixture-of-Experts models: parameters (B = 1e9), active share per token\n");
    std::printf("  %-24s %10s %10s %8s %8s %6s %7s %10s\n", "model", "total B", "active B", "share", "experts", "top-k",
                "shared", "MTP B");
    for (const auto& [model, p] : moe_catalog()) {
      const architecture& a = *model;
      std::printf("  %-24s %10.1f %10.2f %7.1f%% %8d %6d %7d %10.2f\n", a.id.c_str(), p.total() / 1e9,
                  p.active() / 1e9, 100 * p.active() / p.total(), a.moe.num_experts, a.moe.experts_per_token,
                  a.moe.shared_experts, p.mtp / 1e9);
    }
    std::printf("\nactive = everything but the routed experts, plus k of them, without the embedding table.\n"
                "MTP layers are counted apart and not decoded (speculative decoding is off by default).\n");
    return 0;
  }
  const setup s = make_setup(o, true);
  const double context = parse_tokens("context", o.get("context").value_or("4096"));
  const double max_batch = parse_count("max-batch", o.get("max-batch").value_or("1024"));
  const moe_analysis an = analyze_moe(s, context, max_batch);
  const weights_fit fit = s.fit(context);
  if (o.json) {
    std::cout << report::moe_json(s, an, fit).dump(2) << "\n";
    return 0;
  }
  const architecture& a = s.model;
  const param_counts& p = an.decode.first_params;
  std::printf("llmroof moe: %s on %s, weights %s, KV %s, every sequence at %s tokens\n", a.name.c_str(),
              device_label(s).c_str(), weights_label(s.pr).c_str(), std::string(s.pr.kv.name).c_str(),
              thousands(context).c_str());
  std::printf("  %.1fB total, %.2fB active (%.1f%%): %d routed experts, top-%d, %d shared\n", p.total() / 1e9,
              p.active() / 1e9, 100 * p.active() / p.total(), a.moe.num_experts, a.moe.experts_per_token,
              a.moe.shared_experts);
  if (a.moe.mtp_layers > 0) {
    std::printf("  MTP: %d layer(s), %.2fB params, counted apart and not decoded\n", a.moe.mtp_layers, p.mtp / 1e9);
  }
  if (fit.fits) {
    // The batches past the KV room are speeds of a deployment that cannot hold them.
    const std::string room =
        context > 0 ? ", KV room for " + thousands(fit.max_users) + " sequences of " + thousands(context) + " tokens" : "";
    std::printf("  fits on %s: weights %s of %s usable%s\n", device_label(s).c_str(), gib(fit.weights).c_str(),
                gib(fit.usable).c_str(), room.c_str());
  } else {
    std::printf("  does NOT fit on %s: weights %s, short by %s (%s)\n", device_label(s).c_str(), gib(fit.weights).c_str(),
                gib(fit.short_by).c_str(), gb(fit.short_by).c_str());
  }
  std::printf("\n  %6s %16s %8s %12s %14s %11s %11s   %s\n", "batch", "experts/layer", "read", "GB/step",
              "t/s/user est", "(bound)", "t/s total", "dense same-total: GB/step, t/s/user");
  const model_comparison& c = an.decode;
  // A batch of more sequences than the KV room holds is a speed the
  // deployment cannot reach at this context: marked, not dropped (the
  // routing and the crossover still read from it).
  const auto past_room = [&](double batch) { return fit.fits && !fit.holds(batch); };
  bool marked = false;
  for (std::size_t i = 0; i < c.batches.size(); ++i) {
    const routing_row& route = an.routing[i];
    const phase_timing& moe = c.first[i];
    const phase_timing& dense = c.second[i];
    const bool past = past_room(c.batches[i]);
    marked = marked || past;
    std::printf("  %6.0f %9.1f ± %4.1f %7.1f%% %12.2f %14.1f %11.1f %11.0f   %10.2f %8.1f%s\n", c.batches[i],
                route.experts_per_layer, route.experts_per_layer_sd, 100 * route.experts_per_layer / a.moe.num_experts,
                moe.counts.total_bytes().value() / 1e9, 1.0 / moe.estimate.value(), 1.0 / moe.bound.value(),
                c.batches[i] / moe.estimate.value(), dense.counts.total_bytes().value() / 1e9,
                1.0 / dense.estimate.value(), past ? "  *" : "");
  }
  if (marked) {
    std::printf("  * more sequences than the KV room holds (%s of %s tokens): speeds this deployment cannot reach\n",
                thousands(fit.max_users).c_str(), thousands(context).c_str());
  }
  std::printf("\n  dense equivalent: same attention and layers, FFN %d wide (%.1fB params)", an.dense.ffn_size,
              an.decode.second_params.total() / 1e9);
  if (s.parallel().ep > 1) {
    // Expert parallelism splits only experts: the twin takes the devices as TP (x PP).
    const parallel_plan& twin = an.decode.second_layout;
    std::printf(", on the same devices as TP %d%s", twin.tp, twin.pp > 1 ? (" x PP " + std::to_string(twin.pp)).c_str() : "");
  }
  std::printf("\n");
  if (!an.weights_crossover) {
    std::printf("  up to batch %s the MoE step reads fewer weight bytes than the dense one\n", thousands(max_batch).c_str());
  } else {
    std::printf("  from batch %s on, the MoE step reads at least as many weight bytes per device (to within 1%%) as\n"
                "  the dense model of the same total size: its advantage is gone, only its smaller FLOP remain\n",
                thousands(*an.weights_crossover).c_str());
  }
  return 0;
}

int cmd_compare(const options& o) {
  // Two sides that differ in what is given twice: two models on one machine,
  // one model on two machines, two engines or formats; the rest is shared.
  static const std::vector<std::string> side_keys = {"model", "device", "engine", "weights", "kv"};
  std::vector<std::string> twice;
  for (const std::string& k : side_keys) {
    const std::size_t n = o.all(k).size();
    if (n > 2) throw usage_error("compare takes --" + k + " at most twice (got " + std::to_string(n) + ")");
    if (n == 2) twice.push_back(k);
  }
  if (twice.empty()) {
    throw usage_error("compare needs two sides: give --model, --device, --engine, --weights or --kv twice "
                      "(two models on one --device, one --model on two devices, ...)");
  }
  const auto side_of = [&](std::size_t i) {
    options one = o;
    for (const std::string& k : twice) one.values[k] = o.all(k)[i];
    return make_setup(one, true, one.require("model"));
  };
  const setup a = side_of(0);
  const setup b = compared_side(a, side_of(1));
  const double context = parse_tokens("context", o.get("context").value_or("4096"));
  const double max_batch = parse_count("max-batch", o.get("max-batch").value_or("1024"));
  const model_comparison c = compare_deployments(a, b, context, max_batch);
  const weights_fit &fit_a = c.first_fit, &fit_b = c.second_fit;
  if (o.json) {
    std::cout << report::compare_json(a, b, c).dump(2) << "\n";
    return 0;
  }
  const bool one_machine = same_devices(a, b);
  // A side is named by what differs: the model, the machine, the engine, the formats.
  const auto machine = [](const setup& s) { return std::to_string(s.devices()) + " x " + s.dev().id; };
  const auto name = [&](const setup& s) {
    std::vector<std::string> parts;
    if (a.model.id != b.model.id) parts.push_back(s.model.id);
    if (!one_machine) parts.push_back(machine(s));
    if (a.engine.qualified_name() != b.engine.qualified_name()) parts.push_back(s.engine.qualified_name());
    if (weights_label(a.pr) != weights_label(b.pr)) parts.push_back(weights_label(s.pr));
    if (a.pr.kv.name != b.pr.kv.name) parts.push_back("KV " + std::string(s.pr.kv.name));
    if (parts.empty()) return std::string(&s == &a ? "first" : "second");
    std::string out = parts[0];
    for (std::size_t i = 1; i < parts.size(); ++i) out += (i == 1 && parts[0] == s.model.id ? " on " : ", ") + parts[i];
    return out;
  };
  const std::string na = name(a);
  const std::string nb = name(b);
  const bool one_engine = a.engine.qualified_name() == b.engine.qualified_name();
  if (one_machine) {
    std::printf("llmroof compare: %s vs %s on %s, weights %s / %s, every sequence at %s tokens\n", na.c_str(),
                nb.c_str(), device_label(a).c_str(), weights_label(a.pr).c_str(), weights_label(b.pr).c_str(),
                thousands(context).c_str());
  } else {
    std::printf("llmroof compare: %s vs %s, every sequence at %s tokens\n", na.c_str(), nb.c_str(),
                thousands(context).c_str());
  }
  for (const auto& [side, fit, p] : {std::tuple{&a, &fit_a, c.first_params}, std::tuple{&b, &fit_b, c.second_params}}) {
    std::printf("  %-24s %7.1fB total, %6.2fB active; weights %s: %s\n", side->model.id.c_str(), p.total() / 1e9,
                p.active() / 1e9, gib(fit->weights).c_str(),
                fit->fits ? "fits" : ("does NOT fit, short by " + gib(fit->short_by)).c_str());
    if (!one_machine || !one_engine) {
      std::printf("  %-24s on %s; %s, weights %s, KV %s\n", "", device_label(*side).c_str(),
                  side->engine.qualified_name().c_str(), weights_label(side->pr).c_str(),
                  std::string(side->pr.kv.name).c_str());
    }
  }
  std::printf("\n  %6s | %-30s | %-30s | %s\n", "batch", (na + " t/s/user (bnd), GB").c_str(),
              (nb + " t/s/user (bnd), GB").c_str(), "faster");
  // A batch a side cannot hold (its weights do not fit, or its KV room
  // takes fewer sequences of this context) is marked, and decides nothing.
  bool marked = false;
  for (std::size_t i = 0; i < c.batches.size(); ++i) {
    const double n = c.batches[i];
    const double ta = 1.0 / c.first[i].estimate.value();
    const double tb = 1.0 / c.second[i].estimate.value();
    const bool ha = c.holds(true, n), hb = c.holds(false, n);
    marked = marked || !ha || !hb;
    const char* faster = !ha || !hb ? "-" : std::abs(ta - tb) <= 1e-9 * std::max(ta, tb) ? "tie" : ta > tb ? na.c_str() : nb.c_str();
    std::printf("  %6.0f | %8.1f (%7.1f) %9.2f GB%s| %8.1f (%7.1f) %9.2f GB%s| %s\n", n, ta,
                1.0 / c.first[i].bound.value(), c.first[i].counts.total_bytes().value() / 1e9, ha ? " " : "*", tb,
                1.0 / c.second[i].bound.value(), c.second[i].counts.total_bytes().value() / 1e9, hb ? " " : "*", faster);
  }
  if (marked) {
    std::printf("  * a batch this side does not hold at %s tokens (%s): a speed it cannot reach, compared with nothing\n",
                thousands(context).c_str(), [&] {
                  std::string why;
                  for (const auto& [nm, fit] : {std::pair{&na, &fit_a}, std::pair{&nb, &fit_b}}) {
                    if (!why.empty()) why += "; ";
                    why += *nm + (fit->fits ? " holds " + thousands(fit->max_users) + " sequences"
                                            : " does not fit, short by " + gib(fit->short_by));
                  }
                  return why;
                }().c_str());
  }
  const double held = c.held_batch();
  const std::optional<double> x = c.held_speed_crossover();
  if (held == 0) {
    const std::string why = !fit_a.fits && !fit_b.fits ? "neither side fits"
                            : !fit_a.fits ? na + " does not fit, short by " + gib(fit_a.short_by)
                            : !fit_b.fits ? nb + " does not fit, short by " + gib(fit_b.short_by)
                                          : "one side holds no sequence of " + thousands(context) + " tokens";
    std::printf("\n  no conclusion: %s\n", why.c_str());
  } else if (x && *x <= 1) {
    std::printf("\n  %s is not faster than %s even at batch 1\n", na.c_str(), nb.c_str());
  } else if (x) {
    std::printf("\n  %s decodes faster per user up to batch %s; from batch %s on, %s is as fast or faster\n",
                na.c_str(), thousands(*x - 1).c_str(), thousands(*x).c_str(), nb.c_str());
  } else if (c.speed_crossover || held < c.batches.back()) {
    std::printf("\n  %s stays faster per user up to batch %s, the most both hold at %s tokens\n", na.c_str(),
                thousands(held).c_str(), thousands(context).c_str());
  } else {
    std::printf("\n  %s stays faster per user up to batch %s\n", na.c_str(), thousands(max_batch).c_str());
  }
  if (c.bytes_crossover) {
    std::printf("  from batch %s on, a %s step reads as many bytes as a %s step\n",
                thousands(*c.bytes_crossover).c_str(), na.c_str(), nb.c_str());
  }
  return 0;
}

}  // namespace llmroof::cli
