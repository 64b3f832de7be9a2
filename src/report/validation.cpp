// The validation report (report.md) and its predictions (predictions.csv):
// what `llmroof validate --report DIR` writes and Python's
// llmroof.validate(report=DIR) writes, from the same functions.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "llmroof/engine/engine_profile.hpp"
#include "report/json.hpp"

namespace llmroof::report {

namespace {

std::string fmt(const char* f, double v) {
  if (std::isnan(v)) return "-";  // no points to take a median of
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

std::string validation_markdown(const measurement_set& set, const validation& val, bool refit,
                                const std::string& source) {
  const validation_scope* best = &val.best();
  std::ostringstream md;
  md << "# llmroof validation against " << source << "\n\n"
     << set.rows.size() << " points mapped, " << set.skipped.size() << " skipped (listed below). ";
  if (refit) {
    md << "Leave-one-source-out cross-validation: every source's points are predicted by profiles fitted to the "
       << "other sources only. The chosen scope has the lowest sum of single-stream decode and prefill MdAPE; within "
       << "0.1 point the lower MdAPE over all decode points, then the finer scope (its extra groups hold one source "
       << "each, which this validation cannot score).\n\n";
  } else {
    md << "Every point predicted with the profiles llmroof ships (--no-refit: no fitting, no cross-validation): "
       << "what it answers out of the box.\n\n";
  }
  md << "| profiles | decode MdAPE | single-stream decode MdAPE | prefill MdAPE |\n|---|---|---|---|\n";
  for (const auto& r : val.scopes) {
    md << "| " << r.name << (&r == best && refit ? " (chosen)" : "") << " | " << fmt("%.1f%%", 100 * r.decode)
       << " | " << fmt("%.1f%%", 100 * r.single) << " | " << fmt("%.1f%%", 100 * r.prefill) << " |\n";
  }
  md << "\n## By metric (" << best->name << ")\n\nBand coverage: the share of points whose measurement lies inside "
     << "the band (the profile one standard error slower to one faster, widened to the metric's 68th-percentile "
     << "error on the other sources' points, bursts' and steady loads' apart).\n\n"
     << "| metric | points | MdAPE | band coverage |\n|---|---|---|---|\n";
  for (const metric_summary& x : best->metrics) {
    md << "| " << to_string(x.what) << " | " << x.points << " | " << fmt("%.1f%%", 100 * x.mdape) << " | "
       << fmt("%.0f%%", 100 * x.band_coverage) << " |\n";
  }
  // The two headline figures per engine, and how many sources measured them
  // (leave-one-source-out scores an engine's own fit only where it has two).
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> engines;
  std::map<std::string, std::pair<std::set<std::string>, std::set<std::string>>> sources;
  for (const auto& p : best->predictions) {
    if (single_stream_decode(*p.row)) {
      engines[p.row->engine].first.push_back(p.error());
      sources[p.row->engine].first.insert(p.row->source);
    }
    if (p.row->what == metric::prefill_tps) {
      engines[p.row->engine].second.push_back(p.error());
      sources[p.row->engine].second.insert(p.row->source);
    }
  }
  const auto cell = [](const std::set<std::string>& from, const std::vector<double>& v) {
    return std::to_string(from.size()) + " | " +
           (v.empty() ? std::string("- | -") : std::to_string(v.size()) + " | " + fmt("%.1f%%", 100 * median(v)));
  };
  md << "\n## Single-stream decode and prefill tokens/s per engine (" << best->name << ")\n\n"
     << "Sources: how many sources measured the metric on the engine; with one, leaving it out leaves the "
        "engine no points of its own there (its predictions then rest on the engine's other metric, another "
        "engine's fit or the class defaults).\n\n"
     << "| engine | decode sources | single-stream decode points | MdAPE | prefill sources | prefill points | MdAPE |\n"
        "|---|---|---|---|---|---|---|\n";
  for (const auto& [eng, v] : engines) {
    md << "| " << eng << " | " << cell(sources[eng].first, v.first) << " | " << cell(sources[eng].second, v.second)
       << " |\n";
  }
  // Classes the data say nothing about in these two metrics: their plans rest
  // on class defaults there, and the report says so rather than leave them out.
  std::string unmeasured;
  for (const kernel_class& k : kernel_classes()) {
    if (engines.count(std::string(k.key)) != 0) continue;
    md << "| " << k.key << " | 0 | - | - | 0 | - | - |\n";
    unmeasured += (unmeasured.empty() ? "" : ", ") + std::string(k.key);
  }
  if (!unmeasured.empty()) {
    md << "\nNo single-stream decode or prefill points for " << unmeasured
       << ": their estimates of these rest on class defaults (src/engine/profiles.cpp), not on measurements.\n";
  }
  // A group's row: its points, MdAPE and band coverage.
  const auto summary_row = [&](const std::string& key, const std::vector<const cv_prediction*>& ps) {
    std::vector<double> e;
    double covered = 0;
    for (const cv_prediction* p : ps) {
      e.push_back(p->error());
      covered += p->covered() ? 1 : 0;
    }
    md << "| " << key << " | " << ps.size() << " | " << fmt("%.1f%%", 100 * median(e)) << " | "
       << fmt("%.0f%%", 100 * covered / double(ps.size())) << " |\n";
  };
  // Rows decoding speculatively, per method: predicted, never fitted on.
  std::map<std::string, std::vector<const cv_prediction*>> methods;
  for (const auto& p : best->predictions) {
    if (p.row->spec) methods[std::string(to_string(p.row->spec->method)) + " | " + p.row->engine].push_back(&p);
  }
  if (!methods.empty()) {
    md << "\n## Speculative decoding per method (" << best->name << ")\n\n"
       << "Single-stream decode of rows that speculate (predicted through the draft and verify steps, never fitted "
          "on; a row's draft length when it does not say is its engine's default).\n\n"
       << "| method | engine | points | MdAPE | band coverage |\n|---|---|---|---|---|\n";
    for (const auto& [k, ps] : methods) summary_row(k, ps);
  }
  // Serving benchmarks by how their load was offered: a fixed concurrency
  // (the closed loop) or a burst of every request at once (simulated step by
  // step), fixed lengths or a chat dataset's.
  std::map<std::string, std::vector<const cv_prediction*>> loads;
  for (const auto& p : best->predictions) {
    if (!p.row->closed_loop) continue;
    const char* kind = !p.row->burst            ? "fixed concurrency"
                       : p.row->mixed_lengths ? "burst, ShareGPT lengths"
                                              : "burst, fixed lengths";
    loads[std::string(to_string(p.row->what)) + " | " + p.row->engine + " | " + kind].push_back(&p);
  }
  if (!loads.empty()) {
    md << "\n## Serving benchmarks by load (" << best->name << ")\n\n"
       << "Fixed concurrency: N users in a closed loop (`--max-concurrency N`). Burst: every request sent at once "
          "(`--request-rate inf`), the engine's scheduler simulated step by step (load_model.hpp serve_burst); ShareGPT "
          "answers spread exponentially about their mean (an assumption: the rows give only means).\n\n";
    const auto fitted_on = std::count_if(best->predictions.begin(), best->predictions.end(),
                                         [](const cv_prediction& p) { return class_default_point(*p.row); });
    if (best->name != "shipped" && fitted_on > 0) {
      md << "A row whose engine has no fit in its fold takes the engine's class default (src/engine/profiles.cpp). vLLM's, "
            "SGLang's and TensorRT-LLM's (eta_m 0.81 with each launched kernel priced) was fitted by hand to "
         << fitted_on
         << " of these points (class_default_points): a fold holding one of them predicts with the device class's "
            "default alone.\n\n";
    }
    md << "| metric | engine | load | points | MdAPE | band coverage |\n|---|---|---|---|---|---|\n";
    for (const auto& [k, ps] : loads) summary_row(k, ps);
  }
  // Breakdown of the chosen scope by metric, engine and memory kind.
  std::map<std::string, std::vector<double>> groups;
  for (const auto& p : best->predictions) {
    groups[std::string(to_string(p.row->what)) + " | " + p.row->engine + " | " +
           std::string(to_string(p.row->dev.memory_kind_of()))]
        .push_back(p.error());
  }
  md << "\n## By metric, engine and memory kind (" << best->name << ")\n\n"
     << "| metric | engine | memory | points | MdAPE | worst APE |\n|---|---|---|---|---|---|\n";
  for (const auto& [k, v] : groups) {
    md << "| " << k << " | " << v.size() << " | " << fmt("%.1f%%", 100 * median(v)) << " | "
       << fmt("%.0f%%", 100 * *std::max_element(v.begin(), v.end())) << " |\n";
  }
  // The worst ten overall, then per engine, each with its likely reason.
  const auto worst_table = [&](const std::string& title, const std::string& engine) {
    std::vector<const cv_prediction*> worst;
    for (const auto& p : best->predictions) {
      if (engine.empty() || p.row->engine == engine) worst.push_back(&p);
    }
    std::sort(worst.begin(), worst.end(), [](auto* a, auto* b) { return a->error() > b->error(); });
    md << "\n## " << title << "\n\n| id | device | model | metric | measured | predicted | error | likely reason |\n"
       << "|---|---|---|---|---|---|---|---|\n";
    for (std::size_t i = 0; i < worst.size() && i < 10; ++i) {
      const auto& p = *worst[i];
      md << "| " << p.row->id << " | " << p.row->dev.id << " x" << p.row->devices() << " | " << p.row->arch.id
         << " " << p.row->pr.weights.name << " | " << metric_label(*p.row) << " | " << fmt("%.4g", p.row->value)
         << " | " << fmt("%.4g", p.predicted) << " | " << fmt("%.0f%%", 100 * p.error()) << " | "
         << likely_reason(*p.row, p.predicted / p.row->value) << " |\n";
    }
  };
  worst_table("Worst ten points", "");
  std::set<std::string> engine_names;
  for (const auto& p : best->predictions) engine_names.insert(p.row->engine);
  for (const auto& e : engine_names) worst_table("Worst ten points of " + e, e);
  md << "\n## Rows not mapped\n\n| id | reason |\n|---|---|\n";
  for (const auto& s : set.skipped) md << "| " << s.id << " | " << s.reason << " |\n";
  return md.str();
}

std::string predictions_csv(const validation_scope& best) {
  std::ostringstream csv;
  csv << "id,engine,device,memory_kind,model,metric,measured,predicted,low,high,ape,likely_reason\n";
  for (const auto& p : best.predictions) {
    // The reason is free text: quoted, its quotes doubled (RFC 4180).
    std::string why = likely_reason(*p.row, p.predicted / p.row->value);
    for (std::size_t at = why.find('"'); at != std::string::npos; at = why.find('"', at + 2)) why.insert(at, "\"");
    csv << p.row->id << "," << p.row->engine << "," << p.row->dev.id << "," << to_string(p.row->dev.memory_kind_of())
        << "," << p.row->arch.id << "," << metric_label(*p.row) << "," << p.row->value << "," << p.predicted << ","
        << fmt("%.6g", p.low) << "," << fmt("%.6g", p.high) << "," << p.error() << ",\"" << why << "\"\n";
  }
  return csv.str();
}

void write_validation_report(const std::string& dir, const std::string& markdown, const std::string& csv) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir, ec)) {
    throw std::invalid_argument("report: cannot create the folder '" + dir + "'" + (ec ? " (" + ec.message() + ")" : ""));
  }
  for (const auto& [name, text] : {std::pair<const char*, const std::string&>{"report.md", markdown},
                                   std::pair<const char*, const std::string&>{"predictions.csv", csv}}) {
    const auto path = std::filesystem::path(dir) / name;
    std::ofstream f(path);
    f << text;
    f.flush();
    if (!f) throw std::invalid_argument("report: cannot write '" + path.string() + "'");
  }
}

}  // namespace llmroof::report
