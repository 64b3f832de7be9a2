#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "llmroof/calibration/calibrate.hpp"
#include "llmroof/serving/disaggregation.hpp"
#include "llmroof/engine/detail/fitted_row.hpp"

using namespace llmroof;

namespace {

// The header of a points file (data/measured/README.md's columns).
const std::string head =
    "id,source,source_detail,device,n_devices,backend,model,params_total_b,params_active_b,weight_format,kv_format,"
    "batch,prompt_tokens,context_depth,gen_tokens,metric,value,unit,notes\n";

// A points file of `rows` after the header, written to a temporary file
// named `name`, read back and removed.
measurement_set read_points(const char* name, const std::string& rows) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << head << rows;
  measurement_set set = read_measurements(path.string());
  std::filesystem::remove(path);
  return set;
}

measurement point(const char* model, const char* dev, const char* fmt, metric what, double batch, double prompt,
                  double depth, double gen) {
  measurement m;
  m.id = std::string(model) + "/" + dev;
  m.source = "synthetic";
  m.engine = "test";
  m.arch = find_model(model);
  m.dev = find_device(dev);
  m.pr = precision::of(find_format(fmt), find_format("bf16"));
  m.what = what;
  m.batch = batch;
  m.prompt = prompt;
  m.depth = depth;
  m.gen = gen;
  return m;
}

}  // namespace

TEST_CASE("a fit recovers a known profile within 2%") {
  efficiency_profile truth = default_profile(find_device("h100-sxm"));
  truth.memory = 0.72;
  truth.compute = 0.55;
  truth.per_step = make_seconds(1.2e-3);
  std::vector<measurement> rows;
  for (const char* model : {"llama-3.1-8b", "qwen3-32b", "llama-3.1-70b", "qwen3-30b-a3b"}) {
    for (const char* dev : {"h100-sxm", "a100-80gb-sxm", "l40s"}) {
      for (double b : {1.0, 8.0, 32.0}) rows.push_back(point(model, dev, "fp8", metric::decode_tps_per_seq, b, 0, 1024, 256));
      for (double p : {512.0, 2048.0}) rows.push_back(point(model, dev, "fp8", metric::prefill_tps, 1, p, 0, 0));
    }
  }
  for (auto& m : rows) m.value = predict(m, truth);  // exact synthetic measurements
  efficiency_profile start = default_profile(find_device("h100-sxm"));
  start.memory = 0.5;
  start.compute = 0.3;
  start.per_step = make_seconds(0.2e-3);
  const calibration_result r = calibrate(rows, start);
  CHECK(r.profile.memory == doctest::Approx(0.72).epsilon(0.02));
  CHECK(r.profile.compute == doctest::Approx(0.55).epsilon(0.02));
  CHECK(r.profile.per_step.value() == doctest::Approx(1.2e-3).epsilon(0.02));
  CHECK(r.median_ape < 1e-3);
  // With 5% multiplicative noise the fit still lands close and reports a spread.
  std::vector<measurement> noisy = rows;
  for (std::size_t i = 0; i < noisy.size(); ++i) noisy[i].value *= (i % 2 == 0 ? 1.05 : 0.95);
  const calibration_result n = calibrate(noisy, start);
  CHECK(n.profile.memory == doctest::Approx(0.72).epsilon(0.1));
  CHECK(n.memory_sd > 0);
  efficiency_profile banded = n.profile;
  banded.memory_sd = n.memory_sd;
  CHECK(slower(banded).memory < n.profile.memory);
  CHECK(faster(banded).memory > n.profile.memory);
}

TEST_CASE("the band is a prediction band: standard error and the points' scatter together") {
  efficiency_profile truth = default_profile(find_device("h100-sxm"));
  truth.memory = 0.72;
  truth.per_step = make_seconds(1.2e-3);
  truth.per_kernel = make_seconds(10e-6);
  // Each decode point twice, once exp(+0.1) and once exp(-0.1) off the truth:
  // least squares in log space lands on the truth (the pair's cost is
  // 2 r^2 + 2 * 0.1^2 around it) and every residual is +-0.1.
  std::vector<measurement> rows;
  for (const char* model : {"llama-3.1-8b", "qwen3-32b", "llama-3.1-70b", "qwen2.5-coder-7b"}) {
    for (double b : {1.0, 2.0, 4.0}) {
      for (double sign : {1.0, -1.0}) {
        measurement m = point(model, "h100-sxm", "bf16", metric::decode_tps_per_seq, b, 0, 1024, 128);
        m.value = predict(m, truth) * std::exp(sign * 0.1);
        rows.push_back(m);
      }
    }
  }
  efficiency_profile start = truth;
  start.memory = 0.6;
  const calibration_result r = calibrate_two_stage(rows, start);
  CHECK(r.profile.memory == doctest::Approx(0.72).epsilon(0.01));
  // Decode stage: 24 points, 3 fields (eta_m, per step, per kernel); the
  // scatter is 0.1 * sqrt(24 / 21) = 0.106904 in log space, times eta_m.
  const double scatter = std::sqrt(r.memory_sd * r.memory_sd - r.memory_se * r.memory_se) / r.profile.memory;
  CHECK(scatter == doctest::Approx(0.106904).epsilon(0.01));
  CHECK(r.memory_se > 0);
  CHECK(r.compute_sd == 0);  // no prefill points: eta_c is not fitted and has no band of its own
}

TEST_CASE("prefill points on FP8 and BF16 roofs separate the low-precision share from eta_c") {
  efficiency_profile truth = default_profile(find_device("h100-sxm"));
  truth.compute = 0.8;
  truth.low_precision = 0.55;
  std::vector<measurement> rows;
  for (const char* model : {"llama-3.1-8b", "qwen3-32b", "llama-3.1-70b"}) {
    for (const char* fmt : {"fp8", "bf16"}) {
      for (double p : {1024.0, 4096.0}) rows.push_back(point(model, "h100-sxm", fmt, metric::prefill_tps, 1, p, 0, 0));
    }
  }
  for (auto& m : rows) m.value = predict(m, truth);
  efficiency_profile start = default_profile(find_device("h100-sxm"));
  const calibration_result r = calibrate_two_stage(rows, start);
  CHECK(r.profile.compute == doctest::Approx(0.8).epsilon(0.02));
  CHECK(r.profile.low_precision == doctest::Approx(0.55).epsilon(0.02));
  // BF16 points alone cannot see it: the share keeps its start.
  std::vector<measurement> wide;
  for (const auto& m : rows) {
    if (m.pr.weights.name == "bf16") wide.push_back(m);
  }
  CHECK(calibrate_two_stage(wide, start).profile.low_precision == doctest::Approx(0.7));
}

TEST_CASE("a fit recovers per-kernel overhead, KV-read share and half rows within 2%") {
  efficiency_profile truth = default_profile(find_device("h100-sxm"));
  truth.memory = 0.8;
  truth.per_step = make_seconds(0.5e-3);
  truth.per_kernel = make_seconds(12e-6);
  truth.kv_memory = 0.4;
  truth.compute_half_rows = 40;
  std::vector<measurement> rows;
  // Models of 28-80 layers separate the per-kernel from the per-step cost;
  // contexts of 0-32k the KV reads from the weights; batches up to 1024 the
  // small-GEMM shape (bf16 weights turn compute-bound from ~256 rows).
  for (const char* model : {"llama-3.1-8b", "qwen3-32b", "llama-3.1-70b", "qwen2.5-coder-7b"}) {
    for (double depth : {0.0, 8192.0, 32768.0}) {
      for (double b : {1.0, 16.0, 256.0, 1024.0}) {
        rows.push_back(point(model, "h100-sxm", "bf16", metric::decode_tps_per_seq, b, 0, depth, 32));
      }
    }
  }
  // kv_memory prices unfused attention (llama.cpp without -fa): these rows ran it.
  for (auto& m : rows) m.fused_attention = false;
  for (auto& m : rows) m.value = predict(m, truth);
  efficiency_profile start = default_profile(find_device("h100-sxm"));
  start.per_kernel = make_seconds(3e-6);
  start.kv_memory = 0.8;
  fit_fields f{true, false, true, false, true, true, true};
  const calibration_result r = calibrate(rows, start, f);
  CHECK(r.profile.memory == doctest::Approx(0.8).epsilon(0.02));
  CHECK(r.profile.per_step.value() == doctest::Approx(0.5e-3).epsilon(0.02));
  CHECK(r.profile.per_kernel.value() == doctest::Approx(12e-6).epsilon(0.02));
  CHECK(r.profile.kv_memory == doctest::Approx(0.4).epsilon(0.02));
  CHECK(r.profile.compute_half_rows == doctest::Approx(40).epsilon(0.02));
  CHECK(r.median_ape < 1e-3);
}

TEST_CASE("a row's micro-batch (-ub, n_ubatch) sets its passes; its backend string its kernel class") {
  // llama-bench pp512 -ub 1 (PR #15131's table, T3-0169: 65.2 t/s measured):
  // 512 passes of one token, each reading every weight but the embedding
  // table: at most 1,008 / 15.01 GB = 67.2 tokens/s on an RTX 4090, where one
  // pass of 512 runs at thousands. The row says -ub in its notes; the DGX
  // Spark table says n_ubatch 2048 in its backend.
  const std::string row = ",test,,NVIDIA RTX 4090 24GB,1,";
  const std::string tail = ",Llama-3-8B,8.03,8.03,F16,F16,1,512,0,0,prefill_tps,65.2,tokens/s,";
  std::ostringstream rows;
  rows << "U1" << row << "llama.cpp CUDA (Aug 2025)" << tail << "llama-bench pp512 with -ub 1\n"
                      << "U2" << row << "llama.cpp CUDA (Aug 2025)" << tail << "\n"
                      << "U3" << row << "\"llama.cpp CUDA build 6918, n_ubatch 2048\"" << tail << "\n"
                      << "U4,test,,AMD Radeon RX 7900 XTX,1,llama.cpp Vulkan RADV (b8940)" << tail << "\n"
                      << "U5,test,,AMD Radeon RX 7900 XTX,1,llama.cpp ROCm 7.2.3" << tail << "\n"
                      << "U6,test,,Intel Arc B580 12GB,1,IPEX-LLM llama.cpp SYCL build" << tail << "\n"
                      << "U7,test,,AMD Radeon RX 7900 XTX,1,llama.cpp CUDA build" << tail << "\n";
  const measurement_set set = read_points("llmroof_ub_points.csv", rows.str());
  REQUIRE(set.rows.size() == 6);
  // A backend that cannot run on the row's device is a misattribution: skipped, said why.
  REQUIRE(set.skipped.size() == 1);
  CHECK(set.skipped[0].reason == "llama.cpp's cuda backend does not run on rx-7900-xtx (device or backend misattributed)");
  CHECK(set.rows[0].prefill_chunk == 1);
  CHECK(set.rows[1].prefill_chunk == 0);  // the class's own, 512
  CHECK(set.rows[2].prefill_chunk == 2048);
  CHECK(set.rows[3].engine == "llama.cpp-vulkan");
  CHECK(set.rows[4].engine == "llama.cpp-hip");
  CHECK(set.rows[5].engine == "llama.cpp-sycl");
  CHECK(set.rows[3].fused_attention);
  CHECK_FALSE(set.rows[5].fused_attention);  // SYCL: no flash-attention kernel, -fa auto stays unfused
  const efficiency_profile e = default_profile(set.rows[0].dev, "llama.cpp");
  const double one_by_one = predict(set.rows[0], e);
  CHECK(one_by_one < 67.2);
  CHECK(one_by_one > 0.5 * 67.2);
  CHECK(predict(set.rows[1], e) > 20 * one_by_one);
}

TEST_CASE("engine traits of a measured row: llama.cpp's build decides its kernel path and attention") {
  const measurement_set set = read_measurements(std::string(LLMROOF_SOURCE_DIR) + "/data/measured/calibration.csv");
  int unfused = 0, old_builds = 0, current_builds = 0;
  for (const auto& m : set.rows) {
    CAPTURE(m.id);
    if (m.engine.rfind("llama.cpp", 0) != 0) {
      CHECK(m.fused_attention);
      continue;
    }
    if (m.engine == "llama.cpp-cuda@2024") {
      // May 2024 builds (XiongjieDai): flash attention opt-in and off,
      // quantized weights dequantized for cuBLAS.
      ++old_builds;
      CHECK_FALSE(m.fused_attention);
    } else if (m.engine == "llama.cpp-cuda") {
      ++current_builds;  // DGX Spark build 6918, the 2025-26 scoreboard
      if (!m.fused_attention) ++unfused;
    }
  }
  CHECK(old_builds > 150);
  CHECK(current_builds >= 120);
  CHECK(unfused == 1);  // M0862, "FA off"
  efficiency_profile e;
  apply_kernel_traits(e, "llama.cpp-cuda");
  CHECK(e.fp16_accumulate);
  CHECK(e.quantized_path == kernel_path::int8_dot);
  apply_kernel_traits(e, "llama.cpp-cuda@2024");
  CHECK(e.quantized_path == kernel_path::dequantize);
  apply_kernel_traits(e, "tensorrt-llm");
  CHECK_FALSE(e.fp16_accumulate);
  CHECK(e.quantized_path == kernel_path::native);
}

TEST_CASE("the shared calibration points map, and unmapped rows keep their reason") {
  const measurement_set set = read_measurements(std::string(LLMROOF_SOURCE_DIR) + "/data/measured/calibration.csv");
  CHECK(set.rows.size() + set.skipped.size() == 621);
  // M1 (68 GB/s) rows of a secondary quote at 7.9 and 14.2 tokens/s for
  // Llama-2-7B F16 and Q8_0 need ~105 GB/s: refused at the bandwidth bound.
  int above_roof = 0;
  for (const auto& s : set.skipped) above_roof += s.reason.find("above the bandwidth bound") != std::string::npos;
  CHECK(above_roof == 4);
  CHECK(set.rows.size() > 400);
  for (const auto& s : set.skipped) {
    CAPTURE(s.id);
    CHECK_FALSE(s.reason.empty());
  }
  // llama.cpp's multi-GPU rows are layer splits (a pipeline).
  bool saw_pipeline = false;
  for (const auto& m : set.rows) saw_pipeline = saw_pipeline || (m.engine == "llama.cpp-cuda@2024" && m.plan.pp > 1);
  CHECK(saw_pipeline);
}

TEST_CASE("fitted defaults: llama.cpp per engine with its traits, class defaults for vLLM") {
  const device& d = find_device("rtx-4090");
  const efficiency_profile lc = default_profile(d, "llama.cpp");
  CHECK(lc.name == "fitted llama.cpp-cuda");
  CHECK(lc.memory > 0.5);
  CHECK(lc.fp16_accumulate);
  CHECK(lc.fused_attention);  // current builds run flash attention by default
  // The fitted streaming cap binds on HBM parts, not on a 1 TB/s GDDR card.
  CHECK(lc.stream_cap > lc.memory * d.bandwidth.value());
  const device& h = find_device("h100-sxm");
  CHECK(default_profile(h, "llama.cpp").stream_cap < lc.memory * h.bandwidth.value());
  // vLLM on a GeForce card: the kernel families of its class's measured
  // card (the RTX PRO 6000's rows), on its own roofs.
  CHECK(default_profile(d, "vllm").name == "kernel-fitted vllm");
  CHECK(default_profile(d, "vllm").source.find("median of its class") != std::string::npos);
  CHECK_FALSE(default_profile(d, "vllm").fp16_accumulate);
  CHECK(default_profile(find_device("m2-ultra-76c"), "ollama").name == "fitted llama.cpp-metal");
}

TEST_CASE("malformed points files are rejected with the line") {
  const auto path = std::filesystem::temp_directory_path() / "llmroof_bad_points.csv";
  std::ofstream(path) << "id,source\nM1,\"unterminated\n";
  CHECK_THROWS_WITH_AS(read_measurements(path.string()), (path.string() + ": line 3: a quoted field never ends").c_str(),
                       std::invalid_argument);
  std::ofstream(path) << "id,source\nM1,x\n";
  CHECK_THROWS_WITH_AS(read_measurements(path.string()), (path.string() + ": line 1: missing column 'device'").c_str(),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(read_measurements("/nonexistent.csv"), "/nonexistent.csv: no such file", std::invalid_argument);
  // A value written as a number that is not finite is a broken row, named.
  const std::string header =
      "id,source,device,n_devices,backend,model,weight_format,kv_format,batch,prompt_tokens,context_depth,gen_tokens,"
      "metric,value,unit,notes\n";
  for (const char* value : {"inf", "nan", "1e999", "-inf"}) {
    CAPTURE(value);
    std::ofstream(path) << header << "M1,s,RTX 4090,1,llama.cpp,Llama-3.1-8B,Q4_K_M,f16,1,512,0,128,decode_tps_per_seq,"
                        << value << ",tok/s,\n";
    CHECK_THROWS_WITH_AS(read_measurements(path.string()),
                         (path.string() + ": line 2: value '" + value + "' is not a finite number").c_str(),
                         std::invalid_argument);
  }
  std::ofstream(path) << header << "M1,s,RTX 4090,1,llama.cpp,Llama-3.1-8B,Q4_K_M,f16,inf,512,0,128,decode_tps_per_seq,"
                      << "100,tok/s,\n";
  CHECK_THROWS_WITH_AS(read_measurements(path.string()), (path.string() + ": line 2: batch 'inf' is not a finite number").c_str(),
                       std::invalid_argument);
  std::filesystem::remove(path);
}

TEST_CASE("cross-validation folds: one per source while rows x folds stays bounded, then shared in turn") {
  // 621 rows of 15 sources: leave-one-source-out. 1,386 of 67: still.
  CHECK(cv_folds(621, 15) == 15);
  CHECK(cv_folds(1386, 67) == 67);
  // 5,000 rows of 5,000 sources: 150,000 / 5,000 = 30 folds, not 5,000 fits.
  CHECK(cv_folds(5000, 5000) == 30);
  CHECK(cv_folds(100000, 100000) == min_cv_folds);
  CHECK(cv_folds(10, 3) == 3);
  // Past the bound the folds are shared: the files that would cost a fit per
  // row are timed by benchmarks/validate_limits.sh, not run here.
}

TEST_CASE("validating several scopes fits each fold once: the held-out predictions of one scope at a time") {
  const measurement_set set = read_measurements(std::string(LLMROOF_SOURCE_DIR) + "/data/measured/calibration.csv");
  // The first 160 rows (several sources and engines) keep the debug build quick.
  const std::vector<measurement> rows(set.rows.begin(), set.rows.begin() + 160);
  const profile_table fine = fit_profiles(rows, profile_scope::engine_and_class);
  const profile_table coarse = fit_profiles(rows, profile_scope::engine);
  const profile_table view = fine.at_scope(profile_scope::engine);
  REQUIRE(view.fits.size() == coarse.fits.size());
  CHECK(view.fits.size() < fine.fits.size());
  for (const auto& [key, fit] : coarse.fits) {
    CAPTURE(key);
    REQUIRE(view.fits.count(key) == 1);
    CHECK(view.fits.at(key).profile.memory == fit.profile.memory);
  }
  CHECK(fine.at_scope(profile_scope::defaults).fits.empty());
  const std::vector<profile_scope> scopes{profile_scope::defaults, profile_scope::engine,
                                          profile_scope::engine_and_class};
  const auto together = cross_validate(rows, scopes);
  REQUIRE(together.size() == scopes.size());
  for (std::size_t i = 0; i < scopes.size(); ++i) {
    const auto alone = cross_validate(rows, scopes[i]);
    REQUIRE(alone.size() == together[i].size());
    for (std::size_t j = 0; j < alone.size(); ++j) {
      CAPTURE(alone[j].row->id);
      CHECK(alone[j].row == together[i][j].row);
      CHECK(alone[j].predicted == together[i][j].predicted);  // the same fits, bit for bit
      CHECK(alone[j].low == together[i][j].low);
    }
  }
}

TEST_CASE("cross-validation scores what would ship: a fold's fit that would not ship leaves its rows the defaults") {
  // Decode points only (no prefill): every fold's fit leaves eta_c unfitted
  // (standard error 0), so write_profile_rows would not ship it and the
  // held-out rows are predicted as a user gets them, by the class defaults.
  efficiency_profile truth = default_profile(find_device("h100-sxm"));
  truth.memory = 0.45;  // far from the default 0.66, so a used fit would show
  std::vector<measurement> rows;
  int i = 0;
  for (const char* model : {"llama-3.1-8b", "qwen3-32b", "llama-3.1-70b"}) {
    for (const char* dev : {"h100-sxm", "a100-80gb-sxm", "l40s"}) {
      for (double b : {1.0, 2.0, 4.0}) {
        measurement m = point(model, dev, "fp8", metric::decode_tps_per_seq, b, 0, 1024, 256);
        m.source = "source " + std::to_string(i++ % 3);
        m.value = predict(m, truth);
        rows.push_back(m);
      }
    }
  }
  const profile_table fold = fit_profiles(rows, profile_scope::engine);
  REQUIRE(fold.fits.count("test") == 1);
  CHECK(fold.fits.at("test").profile.memory == doctest::Approx(0.45).epsilon(0.02));  // the fit itself is right
  CHECK_FALSE(ships(fold.fits.at("test")));                                           // but eta_c is unfitted
  const auto held = cross_validate(rows, profile_scope::engine);
  const auto defaults = cross_validate(rows, profile_scope::defaults);
  REQUIRE(held.size() == rows.size());
  for (std::size_t j = 0; j < held.size(); ++j) {
    CAPTURE(held[j].row->id);
    CHECK(held[j].predicted == defaults[j].predicted);
    CHECK(held[j].predicted == doctest::Approx(predict(*held[j].row, default_profile(held[j].row->dev))));
  }
}

TEST_CASE("cross-validation without a fit: the engine's class default, unless the fold holds its points") {
  // vLLM's class default on a part the kernel database has no NVIDIA class
  // for (AMD's MI300X) prices each launched kernel (6.4 us) at eta_m 0.81,
  // both fitted by hand to 11 release3 rows; the device class alone has
  // neither (eta_m 0.66, a fitted per-kernel cost of 0).
  const device h100 = find_device("mi300x");
  const efficiency_profile cls = class_default_profile(h100, "vllm");
  CHECK_FALSE(kernel_fitted(cls));
  CHECK(cls.memory == doctest::Approx(0.81));
  CHECK(cls.per_launch.value() == doctest::Approx(6.4e-6));
  CHECK(default_profile(h100).per_launch.value() == 0);
  REQUIRE(class_default_points().size() == 11);
  CHECK(class_default_points().front() == "S3-0559");
  // llama.cpp ships fits; its class default is the device class's with its traits.
  CHECK(class_default_profile(find_device("rtx-4090"), "llama.cpp").name == default_profile(find_device("rtx-4090")).name);
  CHECK(default_profile(find_device("rtx-4090"), "llama.cpp").name.rfind("fitted", 0) == 0);
  std::vector<measurement> rows;
  for (int i = 0; i < 4; ++i) {
    measurement m = point("qwen3-8b", "mi300x", "bf16", metric::decode_tps_per_seq, 1, 0, 1024, 256);
    m.engine = "vllm";
    // The fitted points are GPUStack's; an id alone from another source is not one.
    m.source = i < 2 ? "github.com/gpustack/gpustack @ 47277d7: docs/performance-lab/qwen3-8b/h100.md" : "holds none";
    m.id = i == 0 ? "S3-0559" : "row " + std::to_string(i);
    m.value = 100;
    rows.push_back(m);
  }
  const auto held = cross_validate(rows, profile_scope::defaults);
  REQUIRE(held.size() == 4);
  for (const auto& p : held) {
    CAPTURE(p.row->id);
    const bool tainted = p.row->source != "holds none";
    const double want = predict(*p.row, tainted ? default_profile(h100) : cls);
    CHECK(p.predicted == doctest::Approx(want));
  }
  // The two differ: 36 layers' launches and eta_m 0.81 against 0.66.
  CHECK(predict(rows[0], cls) != doctest::Approx(predict(rows[0], default_profile(h100))).epsilon(0.01));
  // On an H100 the class default is priced from the kernel database, rests
  // on none of the 11 points, and a fold holding one keeps it.
  const device h = find_device("h100-sxm");
  const efficiency_profile kf = class_default_profile(h, "vllm");
  REQUIRE(kernel_fitted(kf));
  rows.resize(1);
  rows[0].dev = h;
  const auto kept = cross_validate(rows, profile_scope::defaults);
  REQUIRE(kept.size() == 1);
  CHECK(kept[0].predicted == doctest::Approx(predict(rows[0], kf)));
}

TEST_CASE("a measured decode runs at its mean cached context") {
  measurement m;
  m.depth = 4096;
  m.prompt = 512;
  m.gen = 128;
  // llama-bench tg128 after 4,096 + 512 cached tokens: the cache grows from
  // 4,608 to 4,736, so the mean step sees 4,096 + 512 + 128 / 2 = 4,672.
  CHECK(m.mean_decode_context() == 4672);
  // Its step is the deployment's decode step (one device: decode_step).
  m.arch = find_model("llama-3.1-8b");
  m.dev = find_device("h100-sxm");
  const efficiency_profile e = default_profile(m.dev);
  CHECK(measured_decode_step(m, e, 1, 4672).estimate == decode_step(m.arch, m.pr, roofline(m.dev, e), 1, 4672).estimate);
}

TEST_CASE("single-stream rows faster than the bandwidth bound are refused with the bound") {
  // Llama-3-8B F16 on an RTX 4090 (1,008 GB/s): a step reads every weight but
  // the embedding table once, (8.030 - 0.525) x 1e9 params x 2 B = 15.01 GB
  // (128,256 x 4,096 = 0.525e9 embedding params), so at most
  // 1,008 / 15.01 = 67.2 tokens/s. 100 is above that by more than the 10%
  // tolerance; 65 is below.
  const std::string row = ",test,,NVIDIA RTX 4090 24GB,1,llama.cpp CUDA build 6918,Llama-3-8B,8.03,8.03,F16,F16,1,0,0,128,"
                          "decode_tps_per_seq,";
  std::ostringstream rows;
  rows << "P1" << row << "100,tokens/s,\n" << "P2" << row << "65,tokens/s,\n";
  const measurement_set set = read_points("llmroof_roof_points.csv", rows.str());
  REQUIRE(set.rows.size() == 1);
  CHECK(set.rows[0].id == "P2");
  REQUIRE(set.skipped.size() == 1);
  const std::string& why = set.skipped[0].reason;
  const std::string prefix = "measured 100 tokens/s is above the bandwidth bound of ";
  REQUIRE(why.rfind(prefix, 0) == 0);
  CHECK(std::stod(why.substr(prefix.size())) == doctest::Approx(67.2).epsilon(0.01));
  CHECK(why.ends_with(" on rtx-4090 (device or format misattributed)"));
}

TEST_CASE("calibrate needs at least as many points as fitted fields") {
  CHECK_THROWS_WITH_AS(calibrate({}, efficiency_profile{}), "calibration points must be >= the fitted fields (3) (got 0)",
                       std::invalid_argument);
}

TEST_CASE("fixed-concurrency rows (NIM/AIPerf) are predicted as a closed loop, fitted on only with one user") {
  const measurement_set set = read_measurements(std::string(LLMROOF_SOURCE_DIR) + "/data/measured/calibration.csv");
  std::vector<measurement> loop;
  for (const auto& m : set.rows) {
    if (m.closed_loop && !m.burst) loop.push_back(m);
  }
  REQUIRE(loop.size() == 27);  // M0698-M0724: Llama-3.3-70B FP8 on 2 x H100
  for (const auto& m : loop) {
    CHECK(m.engine == "tensorrt-llm");
    CHECK(m.dev.id == "h100-sxm");  // "NVIDIA H100 80GB": the SXM module
    CHECK(m.pr.kv.name == "fp8-e4m3");  // NVIDIA's FP8 checkpoints quantize the KV cache
    CHECK_FALSE(m.includes_prefill);
  }
  // M0710: 100 users, 5000 in / 500 out, TTFT 7,996 ms measured. The row is
  // the command's `plan --concurrency 100` on the same deployment.
  const auto it = std::find_if(loop.begin(), loop.end(), [](const measurement& m) { return m.id == "M0710"; });
  REQUIRE(it != loop.end());
  const efficiency_profile e = default_profile(it->dev, "tensorrt-llm");
  workload s;
  s.prompt = 5000;
  s.output = 500;
  s.context = 5500;
  const deployment d(it->arch, it->pr, roofline(it->dev, e), {it->plan, std::nullopt},
                     configure_engine("tensorrt-llm", it->dev));
  const closed_loop_result c = serve_closed_loop(d, s, 100);
  CHECK(predict(*it, e) == doctest::Approx(1e3 * c.ttft.value()));
  CHECK(c.queue_wait.value() > 0);  // beyond the KV slots, requests wait
  // Under load the rows are predicted, never fitted: of the 27, only the six
  // of one user alone (M0698-M0700, M0722-M0724: nobody to queue behind) fit.
  std::vector<measurement> loaded;
  for (const auto& m : loop) {
    if (m.batch > 1) loaded.push_back(m);
  }
  CHECK(loaded.size() == 21);
  CHECK(fit_profiles(loaded, profile_scope::engine).fits.empty());
  const profile_table alone = fit_profiles(loop, profile_scope::engine);
  REQUIRE(alone.fits.count("tensorrt-llm") == 1);
  CHECK(alone.fits.at("tensorrt-llm").points == 6);
}

TEST_CASE("trtllm-bench throughput rows are bursts of the overview's datasets, the batch up to its largest graph") {
  const measurement_set set = read_measurements(std::string(LLMROOF_SOURCE_DIR) + "/data/measured/calibration.csv");
  std::map<std::string, const measurement*> bench;
  for (const auto& m : set.rows) {
    if (m.burst && m.source.find("perf-overview") != std::string::npos) bench[m.id] = &m;
  }
  CHECK(bench.size() == 53);  // every max-throughput row of TensorRT-LLM's performance overview
  const measurement& shortest = *bench.at("M0475");  // Llama-3.1-8B FP8 on an H200, 128 in / 128 out
  CHECK((shortest.engine == "tensorrt-llm" && shortest.what == metric::decode_tps_total));
  CHECK((shortest.requests == 30000 && !shortest.mixed_lengths));  // the overview's dataset table
  CHECK(shortest.pr.kv.name == "fp8-e4m3");                          // ModelOpt's FP8 checkpoints quantize the KV
  CHECK(bench.at("M0489")->pr.kv.name == "fp8-e4m3");               // and so do its NVFP4 ones
  CHECK(bench.at("M0479")->requests == 1500);                        // 2048 / 2048
  CHECK(bench.at("M0481")->requests == 1000);                        // 20000 / 2000
  // "CUDA-graph batch sizes up to 8192": the engine runs up to 8,192 sequences, its budget its own.
  const engine_settings e = engine_of(shortest);
  CHECK(e.max_sequences == 8192);
  CHECK(e.max_batched_tokens == configure_engine("tensorrt-llm", shortest.dev).max_batched_tokens);
  CHECK(configure_engine("tensorrt-llm", shortest.dev).max_sequences < 8192);
  // Predicted by serve_burst on that engine: with the class default of 5 ms of
  // serial handling per request, 30,000 short requests are host-bound: at
  // most 128 tokens / 5 ms = 25,600 output tokens/s (measured 27,911).
  const efficiency_profile p = default_profile(shortest.dev, "tensorrt-llm");
  CHECK(p.per_request.value() == 5e-3);
  const double predicted = predict(shortest, p);
  CHECK(predicted <= 25600);
  CHECK(predicted > 0.95 * 25600);
  workload s;
  s.prompt = 128;
  s.output = 128;
  s.context = 256;
  const deployment d(shortest.arch, shortest.pr, roofline(shortest.dev, p), {shortest.plan, std::nullopt}, e);
  CHECK(predicted == doctest::Approx(serve_burst(d, s, 30000).output_tokens_per_s()).epsilon(1e-12));
}

TEST_CASE("offline batches larger than the KV cache holds run in waves") {
  const measurement_set set = read_measurements(std::string(LLMROOF_SOURCE_DIR) + "/data/measured/calibration.csv");
  const auto it = std::find_if(set.rows.begin(), set.rows.end(), [](const measurement& m) { return m.id == "M0645"; });
  REQUIRE(it != set.rows.end());  // 16 requests of 32,784 + 2,048 tokens, Llama-3.1-405B FP8, 8 x H100
  // 8 x 80 GB less 405 GB of weights leaves ~150 GB of KV at 516,096 B per
  // token (bf16, 126 layers x 8 heads x 128 x 2 x 2 B): ~8 such sequences.
  CHECK(it->max_concurrent >= 4);
  CHECK(it->max_concurrent < 16);
  const efficiency_profile e = default_profile(it->dev, "vllm");
  measurement wave = *it;
  wave.batch = it->max_concurrent;
  wave.max_concurrent = 0;
  CHECK(predict(*it, e) == doctest::Approx(std::ceil(16 / it->max_concurrent) * predict(wave, e)));
  // A batch the cache holds is one wave: no change.
  measurement small = *it;
  small.batch = 2;
  measurement unlimited = small;
  unlimited.max_concurrent = 0;
  CHECK(predict(small, e) == doctest::Approx(predict(unlimited, e)));
}

TEST_CASE("TensorRT-LLM versions: 2023 releases are their own engine class, fitted apart") {
  CHECK(find_engine("tensorrt-llm@2023").qualified_name() == "tensorrt-llm@2023");
  CHECK_THROWS_WITH_AS(find_engine("tensorrt-llm@0.9"),
                       "engine version of tensorrt-llm must be 2023 or 'current' (got '0.9')", std::invalid_argument);
  CHECK(versions_share_efficiencies("llama.cpp-cuda"));
  CHECK_FALSE(versions_share_efficiencies("tensorrt-llm"));
  const measurement_set set = read_measurements(std::string(LLMROOF_SOURCE_DIR) + "/data/measured/calibration.csv");
  const auto row = [&](const char* id) -> const measurement& {
    const auto it = std::find_if(set.rows.begin(), set.rows.end(), [&](const measurement& m) { return m.id == id; });
    REQUIRE(it != set.rows.end());
    return *it;
  };
  CHECK(row("M0581").engine == "tensorrt-llm@2023");  // v0.6.1, gptSessionBenchmark
  CHECK(row("M0698").engine == "tensorrt-llm");       // NIM 1.8
  // The v0.6.1 A100 table's TP > 1 rows are per GPU, as its H100 table says.
  CHECK(row("M0581").per_device);
  CHECK_FALSE(row("M0574").per_device);  // TP 1: per GPU and per system agree
  // A current TensorRT-LLM row without points of its version keeps the class
  // defaults: the 2023 fit (kernels launched one by one, a 1.3 TB/s streaming
  // cap) does not carry over, nor does the global fit of llama.cpp's points.
  std::vector<measurement> old_only;
  for (const auto& m : set.rows) {
    if (m.engine == "tensorrt-llm@2023") old_only.push_back(m);
  }
  const profile_table t = fit_profiles(old_only, profile_scope::engine);
  REQUIRE(t.fits.count("tensorrt-llm@2023") == 1);
  CHECK(t.fit_for(row("M0698").dev, "tensorrt-llm") == nullptr);
}

TEST_CASE("shipped profile rows: fits with both shares pinned, in the reader's column order") {
  profile_table t;
  calibration_result good;
  good.profile.memory = 0.8;
  good.profile.compute = 0.5;
  good.memory_se = 0.04;  // 5% of eta_m
  good.compute_se = 0.1;  // 20% of eta_c
  good.memory_sd = 0.1;
  good.compute_sd = 0.2;
  good.points = 12;
  good.median_ape = 0.07;
  calibration_result loose = good;
  loose.compute_se = 0.2;  // 40% of eta_c: not pinned
  calibration_result unfitted = good;
  unfitted.memory_se = 0;  // no decode points
  t.fits = {{"", good}, {"good", good}, {"loose", loose}, {"unfitted", unfitted}};
  CHECK(ships(good));
  CHECK(!ships(loose));
  CHECK(!ships(unfitted));
  std::ostringstream out;
  write_profile_rows(out, t);
  const std::string text = out.str();
  CHECK(text.rfind("// key, eta_m, sd, eta_c, sd,", 0) == 0);
  // The band columns carry the prediction spread (sd), not the standard error.
  CHECK(text.find("{\"good\", 0.8, 0.1, 0.5, 0.2, 0.5, 0.0003, 0, 0, 0, 1, 64, 0, 0.005, 0, 0.7, 12, 0.07},\n") != std::string::npos);
  CHECK(text.find("loose") == std::string::npos);
  CHECK(text.find("unfitted") == std::string::npos);
  CHECK(text.find("{\"\"") == std::string::npos);  // the global fit never ships
}

TEST_CASE("a shipped row reads back as the banded profile it was written from") {
  calibration_result r;
  r.profile.memory = 0.81;
  r.profile.compute = 0.62;
  r.profile.attention = 0.45;
  r.profile.per_step = make_seconds(1.5e-3);
  r.profile.per_kernel = make_seconds(7e-6);
  r.profile.kv_memory = 0.9;
  r.profile.compute_half_rows = 48;
  r.profile.stream_cap = 1.2e12;
  r.profile.per_request = make_seconds(4e-3);
  r.profile.low_precision = 0.66;
  r.memory_sd = 0.05;
  r.compute_sd = 0.07;
  r.per_step_sd = 4e-4;
  r.per_kernel_sd = 1e-6;
  r.per_request_sd = 2e-3;
  const efficiency_profile banded = r.banded();
  CHECK(banded.memory_sd == 0.05);  // the fit's spread, not the profile's class default
  CHECK(banded.per_step_sd.value() == 4e-4);
  const detail::fitted_row row = detail::row_of("k", banded, 30, 0.09);
  std::ostringstream out;
  detail::write_row(out, row);
  CHECK(out.str() == "{\"k\", 0.81, 0.05, 0.62, 0.07, 0.45, 0.0015, 0.0004, 7e-06, 1e-06, 0.9, 48, 1.2e+12, 0.004, "
                     "0.002, 0.66, 30, 0.09},\n");
  efficiency_profile back;  // class defaults in every field
  detail::apply_row(row, back);
  detail::for_each_column(row, [&](double v, auto field) { CHECK(detail::column_value(back.*field) == v); });
  CHECK(back.per_step.value() == 1.5e-3);
  CHECK(back.per_request_sd.value() == 2e-3);
  CHECK(back.stream_cap == 1.2e12);
  // An overhead fitted to less than a nanosecond is written as none.
  r.profile.per_kernel = make_seconds(1e-12);
  CHECK(detail::row_of("k", r.banded(), 1, 0).per_kernel == 0);
}

TEST_CASE("dataset rows as the third release writes them: devices with remarks, GGUF types, serving loops and bursts") {
  // A llama.cpp row that names no backend ran the device's own build.
  const std::string llama = ",s,,DEVICE,1,llama.cpp (build 6000),Llama-3-8B,8.03,8.03,Q4_K_M,F16,1,0,0,128,"
                            "decode_tps_per_seq,20,tokens/s,\n";
  const auto on = [&](const std::string& id, const std::string& dev) {
    std::string r = llama;
    r.replace(r.find("DEVICE"), 6, dev);
    return id + r;
  };
  std::ostringstream points;
  points
      // A remark in parentheses, a comma and a " / " left out; a core count said in parentheses kept.
      << on("D1", "\"AMD Ryzen AI Max+ 395 / Radeon 8060S (gfx1151), Framework Desktop 128GB, Fedora 43\"")
      << on("D2", "\"Apple M2 Ultra (76-core GPU per ggerganov setup; core count not restated)\"")
      << on("D3", "\"NVIDIA RTX 3090 24GB (EVGA FTW3, 450 W cap; LXC passthrough)\"")
      // Apple variants of one bandwidth: the base GPU; of two: the memory says which (M3 Max 36 GB: 30 cores).
      << on("D4", "Apple M1 Ultra 64GB") << on("D5", "Apple M3 Max 36GB") << on("D6", "Apple M3 Max 64GB")
      // Another GGUF type by its name.
      << "G1,s,,NVIDIA RTX 4090 24GB,1,llama.cpp CUDA build 6000,Llama-3-8B,8.03,8.03,Q6_K (6.14 GiB),F16,1,0,0,128,"
         "decode_tps_per_seq,60,tokens/s,\n"
      // vllm bench serve: a closed loop of 4 users (output tokens/s), and a burst (no batch, request rate inf).
      << "S1,s,,NVIDIA H100 SXM 80GB,1,\"vLLM v0.11.0, TP1\",Qwen3-8B,8.2,8.2,BF16,not stated,4,233,0,200,"
         "output_tps_total,500,tokens/s,\"aggregate output tokens/s; vllm bench serve, --max-concurrency 4 (closed loop)\"\n"
      << "S2,s,,NVIDIA H100 SXM 80GB,1,\"SGLang v0.5.5.post1, TP1\",Qwen3-8B,8.2,8.2,BF16,not stated,,233,0,200,"
         "tpot_ms,50,ms,\"mean TPOT; ShareGPT, 1000 prompts, request rate inf, no concurrency cap\"\n"
      // Argonne's A100 rows (unstated variant) ran on Polaris: A100-SXM4-40GB.
      << "A1,github.com/argonne-lcf/LLM-Inference-Bench @ 4211f5d: Plots/All_results.csv,,\"NVIDIA A100 (SXM/PCIe and "
         "40/80GB variant not stated)\",1,\"vLLM (~v0.6.x, Sep 2024), TP1, offline LLM.generate\",Llama-3-8B,8.03,8.03,"
         "FP16 (--dtype float16),not stated,1,128,0,128,e2e_latency_s,1.83,s,\"static batch: 1 random-token prompts of "
         "128 tokens submitted together\"\n"
      // A fixed-length burst counts its requests in the block's totals; one that does not say is skipped.
      << "S4,s,,NVIDIA H100 SXM 80GB,1,\"vLLM v0.11.0, TP1\",Qwen3-8B,8.2,8.2,BF16,not stated,,128,0,4,"
         "tpot_ms,300,ms,\"request_rate=inf burst; random dataset (block totals 192000 in / 6000 out over 1,500 requests)\"\n"
      << "S5,s,,NVIDIA H100 SXM 80GB,1,\"vLLM v0.11.0, TP1\",Qwen3-8B,8.2,8.2,BF16,not stated,,128,0,4,"
         "tpot_ms,300,ms,\"request_rate=inf burst; random dataset\"\n"
      // trtllm-bench's dataset sizes come from the performance overview's table: a pair it lacks is skipped.
      << "T1,s,,NVIDIA H100 SXM 80GB,1,\"TensorRT-LLM (PyTorch backend, trtllm-bench throughput) TP1\",Qwen3-8B,8.2,"
         "8.2,FP8,not stated,max (runtime-chosen; CUDA-graph batch sizes up to 8192),300,0,300,output_tps_total,"
         "9000,tokens/s,offline max throughput\n"
      << "S3,s,,NVIDIA H200 SXM 141GB,8,\"SGLang v0.5.3, TP8 + DP attention\",DeepSeek-R1,671,37,FP8,not stated,4,"
         "233,0,200,tpot_ms,20,ms,closed loop\n"
      // A serving table's Concurrency column is a closed loop; MiniMax-M2.7 keeps the M2 shape (SGLang PR 31044).
      << "S6,s,\"PR table, row TP x EP=8x8, Concurrency=1024, column TPOT (ms)\",AMD Instinct MI300X 192GB,8,"
         "\"SGLang 0.5.13.post1, TP8 EP8, --attention-backend triton\",MiniMax-M2.7,,,FP8,FP8 e4m3,1024,1000,0,1000,"
         "tpot_ms,239.18,ms,ISL/OSL 1000/1000\n";
  const measurement_set set = read_points("llmroof_release3_points.csv", points.str());
  std::map<std::string, const measurement*> rows;
  for (const auto& m : set.rows) rows[m.id] = &m;
  REQUIRE(rows.size() == 13);
  const measurement& table = *rows["S6"];
  CHECK((table.closed_loop && !table.burst && table.batch == 1024 && table.arch.id == "minimax-m2"));
  CHECK((table.plan.tp == 8 && table.plan.ep == 8 && table.engine == "sglang"));
  CHECK(table.max_concurrent == 4096);  // SGLang's request pool, not its CUDA graphs' 256-512
  CHECK(rows["A1"]->dev.id == "a100-40gb-sxm");
  CHECK(rows["D1"]->dev.id == "ryzen-ai-max-395");
  CHECK(rows["D1"]->engine == "llama.cpp-hip");
  CHECK(rows["D2"]->engine == "llama.cpp-metal");
  CHECK(rows["D3"]->engine == "llama.cpp-cuda");
  CHECK(rows["D2"]->dev.id == "m2-ultra-76c");
  CHECK(rows["D3"]->dev.id == "rtx-3090");
  CHECK(rows["D4"]->dev.id == "m1-ultra-48c");  // 48 and 64 cores both read at 800 GB/s
  CHECK(rows["D5"]->dev.id == "m3-max-30c");    // 300 GB/s
  CHECK(rows["D6"]->dev.id == "m3-max-40c");    // 400 GB/s
  CHECK(rows["G1"]->pr.weights.name == "q6_k");
  const measurement& loop = *rows["S1"];
  CHECK(loop.what == metric::decode_tps_total);
  CHECK((loop.closed_loop && !loop.burst && loop.batch == 4 && loop.engine == "vllm"));
  const measurement& burst = *rows["S2"];
  CHECK((burst.closed_loop && burst.burst && burst.engine == "sglang"));
  CHECK((burst.requests == 1000 && burst.mixed_lengths));
  const measurement& fixed = *rows["S4"];
  CHECK((fixed.burst && fixed.requests == 1500 && !fixed.mixed_lengths));  // "1,500": a thousands separator
  // SGLang's "TP8 + DP attention": data-parallel attention beside the tensor-parallel FFN.
  const parallel_plan& dp = rows["S3"]->plan;
  CHECK((dp.tp == 8 && dp.ep == 1 && dp.dp_attention_tp()));
  REQUIRE(set.skipped.size() == 2);
  CHECK(set.skipped[0].id == "S5");
  CHECK(set.skipped[0].reason == "a burst whose notes do not say how many requests it sent");
  CHECK(set.skipped[1].id == "T1");
  CHECK(set.skipped[1].reason ==
        "a trtllm-bench run of ISL/OSL 300/300: its dataset's request count is not in the performance overview's table");
  // A burst's simulated work, which the reader checks before predict would throw:
  // 10,000 prompts of 32,000 tokens in 4 steps of 8,192 each, an admission step each, 100
  // answer steps and ceil(10,000 x 100 / 8,192) = 123 steps for the answers' tokens to pass
  // the budget: 50,223 steps. Exponential answers: each walks the 4,096 running, plus a
  // step's own 300: 50,223 x 4,396 = 220,780,308 <= 4e8. Fixed answers join: at most
  // 100 + 4 cohorts, 50,223 x 404 = 20,290,092. Ten times the requests of exponential
  // answers of 2,000 tokens: (400,000 + 100,000 + 2,000 + 24,415) x 4,396 = 2,314,120,340 > 4e8.
  CHECK(burst_cohort_steps(10000, 32000, 8192, 100, 4096, length_spread::exponential) == 220780308.0);
  CHECK(burst_cohort_steps(10000, 32000, 8192, 100, 4096, length_spread::fixed) == 20290092.0);
  CHECK(burst_cohort_steps(100000, 32000, 8192, 2000, 4096, length_spread::exponential) == 2314120340.0);
  CHECK(burst_cohort_steps(100000, 32000, 8192, 2000, 4096, length_spread::exponential) > max_burst_cohort_steps);
  // 4 requests run at once: (4 + 4 + 10 + 1) x (4 + 300); a verify of 4 tokens a sequence
  // needs ceil(4 x 10 x 4 / 8,192) = 1 step too.
  CHECK(burst_cohort_steps(4, 1000, 8192, 10, 256, length_spread::fixed) == 19 * 304.0);
  CHECK(burst_cohort_steps(4, 1000, 8192, 10, 256, length_spread::fixed, 4) == 19 * 304.0);
  // A burst is simulated (serve_burst): 1000 requests of ShareGPT-like
  // lengths about 233 in and 200 out, TPOT longer than one user's step.
  const validation v = validate({burst, fixed}, false);
  const double one = 1e3 * measured_decode_step(burst, default_profile(burst.dev), 1, 233).estimate.value();
  CHECK(v.best().predictions[0].predicted > one);
  // The fixed-length burst's TPOT is serve_burst's with the shipped profile.
  workload s;
  s.prompt = 128;
  s.output = 4;
  s.context = 132;
  const deployment d(fixed.arch, fixed.pr, roofline(fixed.dev, default_profile(fixed.dev, "vllm")), {fixed.plan, std::nullopt},
                     configure_engine("vllm", fixed.dev));
  CHECK(v.best().predictions[1].predicted == doctest::Approx(1e3 * serve_burst(d, s, 1500).tpot.value()).epsilon(1e-9));
}

TEST_CASE("serving metrics under other names: total and request throughput, ITL, per GPU, users said in the text") {
  // One benchmark point (8 users of 1,000 in / 250 out on two H100s) in seven metrics;
  // all but the first two give their users in the notes only (X1 lacks its answer length).
  const std::string row = ",s,,NVIDIA H100 SXM 80GB,2,\"vLLM v0.11.0, TP2\",Llama-3.1-70B,70.6,70.6,FP8,not stated,";
  std::ostringstream rows;
  rows << "O1" << row << "8,1000,0,250,output_tps_total,400,tokens/s,--max-concurrency 8\n"
                      << "T1" << row << "8,1000,0,250,total_tps_total,2000,tokens/s,--max-concurrency 8\n"
                      << "R1" << row << ",1000,0,250,requests_per_s,1.6,req/s,concurrency 8\n"
                      << "G1" << row << ",1000,0,250,output_tps_total,200,tokens/s/GPU,max_concurrency=8\n"
                      << "I1" << row << ",1000,0,250,itl_ms,20,ms,Concurrency: 8\n"
                      << "U1" << row << ",1000,0,250,decode_tps_per_seq,50,tokens/s,conc=8\n"
                      << "E1" << row << ",1000,0,250,e2e_latency_s,5,s,8 concurrent requests\n"
                      << "X1" << row << ",1000,0,,requests_per_s,1.6,req/s,concurrency 8\n"
                      // Formats in any case and by their packers' names.
                      << "F1,s,,B200,8,TensorRT-LLM 1.0,DeepSeek-R1,,,nvfp4,fp8,4,1000,0,250,tpot_ms,20,ms,concurrency 4\n"
                      << "F2,s,,H100 SXM,1,vLLM 0.10,Llama-3.1-8B,,,W4A16 (compressed-tensors),,4,1000,0,250,"
                         "tpot_ms,20,ms,concurrency 4\n"
                      << "F3,s,,H100 SXM,1,vLLM 0.10,Llama-3.1-8B,,,AWQ,,4,1000,0,250,tpot_ms,20,ms,concurrency 4\n"
                      << "F4,s,,H100 SXM,1,vLLM 0.10,Llama-3.1-8B,,,GPTQ-Int8,,4,1000,0,250,tpot_ms,20,ms,\n"
                      << "F5,s,,H100 SXM,1,vLLM 0.10,Llama-3.1-8B,,,W8A8_FP8,,4,1000,0,250,tpot_ms,20,ms,\n"
                      // Not users: a static batch run "concurrently"; a burst with no cap.
                      << "N1,s,,H100 SXM,1,vLLM 0.10,Llama-3.1-8B,,,BF16,,4,1000,0,250,tpot_ms,20,ms,"
                         "4 prompts run concurrently\n"
                      << "B1,s,,H100 SXM,1,vLLM 0.10,Llama-3.1-8B,,,BF16,,,1000,0,250,decode_tps_per_seq,20,tokens/s,"
                         "\"500 prompts, request rate inf, no concurrency cap\"\n"
                      << "B2,s,,H100 SXM,1,vLLM 0.10,Llama-3.1-8B,,,BF16,,,1000,0,250,e2e_latency_s,20,s,"
                         "\"500 prompts, request rate inf, no concurrency cap\"\n"
                      // Users capped in a run at request rate inf: a closed loop, not a burst;
                      // a table's own column before notes that quote another row.
                      << "C1,s,,H100 SXM,1,vLLM 0.10,Llama-3.1-8B,,,BF16,,,1000,0,250,tpot_ms,20,ms,"
                         "\"request rate inf, max_concurrency=16\"\n"
                      << "C2,s,\"row Concurrency=16\",H100 SXM,1,vLLM 0.10,Llama-3.1-8B,,,BF16,,,1000,0,250,tpot_ms,20,ms,"
                         "at concurrency 1 it matches the other table\n"
                      // KV caches as written: llama.cpp's -ctk q8_0, TensorRT-LLM's NVFP4; one vLLM does not offer.
                      << "K1,s,,RTX 4090,1,llama.cpp CUDA build 6000,Llama-3.1-8B,,,Q4_K_M,Q8_0,1,0,0,128,"
                         "decode_tps_per_seq,100,tokens/s,\n"
                      << "K2,s,,B200,1,TensorRT-LLM 1.0,Llama-3.1-8B,,,NVFP4,NVFP4,4,1000,0,250,tpot_ms,5,ms,concurrency 4\n"
                      << "K3,s,,H100 SXM,1,vLLM 0.10,Llama-3.1-8B,,,BF16,Q4_0,4,1000,0,250,tpot_ms,20,ms,\n";
  const measurement_set set = read_points("llmroof_serving_metrics.csv", rows.str());
  REQUIRE(set.rows.size() == 19);
  REQUIRE(set.skipped.size() == 2);
  CHECK(set.skipped[0].reason == "requests_per_s without gen_tokens (the output per request it is converted by)");
  CHECK(set.skipped[1].reason == "a q4_0 KV cache is not one vllm offers");
  CHECK((set.rows[17].pr.kv.name == "q8_0" && set.rows[17].engine == "llama.cpp-cuda"));
  CHECK(set.rows[18].pr.kv.name == "nvfp4");
  for (std::size_t i = 0; i < 7; ++i) {
    const measurement& m = set.rows[i];
    CAPTURE(m.id);
    CHECK((m.closed_loop && m.batch == 8 && m.plan.tp == 2));
  }
  CHECK((set.rows[7].pr.weights.name == "nvfp4" && set.rows[7].pr.kv.name == "fp8-e4m3" && set.rows[7].batch == 4));
  CHECK(set.rows[8].pr.weights.name == "gptq-int4");
  CHECK(set.rows[9].pr.weights.name == "awq-int4");
  CHECK(set.rows[10].pr.weights.name == "int8-wo");
  CHECK(set.rows[11].pr.weights.name == "fp8");
  const measurement& batch = set.rows[12];
  CHECK((!batch.closed_loop && batch.batch == 4));
  const measurement& user = set.rows[13];
  CHECK((user.burst && user.requests == 500 && !single_stream_decode(user)));
  for (std::size_t i : {15, 16}) {
    CAPTURE(set.rows[i].id);
    CHECK((set.rows[i].closed_loop && !set.rows[i].burst && set.rows[i].batch == 16));
  }
  const efficiency_profile e = default_profile(set.rows[0].dev, "vllm");
  const double output = predict(set.rows[0], e);
  // (1,000 + 250) / 250 = 5 total tokens per output token; 1 / 250 requests per output token.
  CHECK(set.rows[1].scale == 5.0);
  CHECK(predict(set.rows[1], e) == doctest::Approx(5 * output).epsilon(1e-12));
  CHECK(set.rows[2].scale == 1.0 / 250);
  CHECK(predict(set.rows[2], e) == doctest::Approx(output / 250).epsilon(1e-12));
  CHECK(metric_label(set.rows[2]) == "requests_per_s");
  // Per GPU: half of the two GPUs' output.
  CHECK(set.rows[3].per_device);
  CHECK(predict(set.rows[3], e) == doctest::Approx(output / 2).epsilon(1e-12));
  // The closed loop's TPOT, and what follows from it: 1 / TPOT per user, TTFT + 249 TPOT a request.
  workload s;
  s.prompt = 1000;
  s.output = 250;
  s.context = 1250;
  const measurement& itl = set.rows[4];
  const deployment d(itl.arch, itl.pr, roofline(itl.dev, e), {itl.plan, std::nullopt}, engine_of(itl));
  const closed_loop_result c = serve_closed_loop(d, s, 8);
  CHECK(itl.what == metric::tpot_ms);
  CHECK(metric_label(itl) == "itl_ms");
  CHECK(predict(itl, e) == doctest::Approx(1e3 * c.tpot.value()).epsilon(1e-12));
  CHECK(predict(set.rows[5], e) == doctest::Approx(1 / c.tpot.value()).epsilon(1e-12));
  CHECK(predict(set.rows[6], e) == doctest::Approx((c.ttft + 249.0 * c.tpot).value()).epsilon(1e-12));
  CHECK(output == doctest::Approx(c.output_tokens_per_s(250)).epsilon(1e-12));
  // A burst's user decodes at 1 / TPOT; a request takes TTFT + 249 TPOT.
  const measurement& b = set.rows[13];
  const deployment bd(b.arch, b.pr, roofline(b.dev, default_profile(b.dev, "vllm")), {b.plan, std::nullopt},
                      engine_of(b));
  const burst_result br = serve_burst(bd, s, 500);
  CHECK(predict(b, default_profile(b.dev, "vllm")) == doctest::Approx(1 / br.tpot.value()).epsilon(1e-12));
  CHECK(predict(set.rows[14], default_profile(b.dev, "vllm")) ==
        doctest::Approx((br.ttft + 249.0 * br.tpot).value()).epsilon(1e-12));
}

TEST_CASE("a served row that does not fit at its engine's default memory share runs at 0.95") {
  std::ostringstream rows;
  rows
                      << "G1,s,,NVIDIA H100 SXM 80GB,1,\"vLLM v0.10.2, TP1\",gpt-oss-120b,,,MXFP4,,4,1024,0,512,tpot_ms,8,ms,"
                         "--max-concurrency 4\n"
                      << "L1,s,,NVIDIA H100 SXM 80GB,1,\"vLLM v0.10.2, TP1\",Llama-3.1-70B,,,BF16,,4,1024,0,512,tpot_ms,8,ms,"
                         "--max-concurrency 4\n";
  const measurement_set set = read_points("llmroof_raised_share.csv", rows.str());
  REQUIRE(set.rows.size() == 1);
  REQUIRE(set.skipped.size() == 1);
  // 141 GB of bf16 weights hold nothing on 80 GB at any share.
  CHECK(set.skipped[0].reason ==
        "the engine cannot hold one sequence of 1536 tokens beside the weights even at a memory share of 0.95 (the "
        "source ran it: launch flags or the memory model differ)");
  const measurement& m = set.rows[0];
  REQUIRE(m.overrides.memory_utilization.has_value());
  CHECK(*m.overrides.memory_utilization == 0.95);
  const engine_settings es = engine_of(m);
  CHECK(es.memory_utilization == 0.95);
  // At vLLM's 0.9: 0.9 x 79.20 GiB = 71.28 GiB, less 64.50 of weights, 0.13
  // non-torch and the 7.44 GiB activation peak leaves -0.79 GiB: no sequence.
  // At 0.95: 75.24 - 72.07 = 3.17 GiB of KV, about 46,000 tokens at 72 KiB.
  const memory_plan at95 = plan_memory_parallel(m.arch, m.pr, m.dev, m.plan, 1, 1536, es);
  CHECK(at95.kv_budget.value() / (1ull << 30) == doctest::Approx(3.17).epsilon(0.01));
  engine_settings at90 = es;
  at90.memory_utilization = 0.9;
  CHECK(plan_memory_parallel(m.arch, m.pr, m.dev, m.plan, 1, 1536, at90).max_sequences < 1);
  CHECK(m.max_concurrent >= 4);
}

TEST_CASE("engine strings in any case, as result tables write them: names, releases and layouts") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"dynamo-trt", "tensorrt-llm"},
      {"TRT-LLM", "tensorrt-llm"},
      {"trt", "tensorrt-llm"},
      {"tensorrt_llm 0.7.1", "tensorrt-llm@2023"},
      {"dynamo-sglang", "sglang"},
      {"SGLang serving MiniMax", "sglang"},  // not NIM
      {"lmsysorg/sglang:v0.4.3-cu124", "sglang@2024"},
      {"vllm 0.6.3", "vllm@v0"},
      {"vllm/vllm-openai:v0.6.3", "vllm@v0"},
      {"vllm 0.10.2 --gpu-memory-utilization 0.7", "vllm"},
      {"vllm==0.7.3", "vllm@v0"},
      // The engine named first; kernels named after engines are not engines.
      {"SGLang v0.5.3, TP8, --attention-backend trtllm_mla", "sglang"},
      {"vllm 0.10.1 TP8 (VLLM_USE_TRTLLM_ATTENTION=1)", "vllm"},
      {"vLLM 0.10.2, flashinfer trtllm-gen MoE", "vllm"},
      // Dynamo's own releases are not its engine's.
      {"dynamo-trt (Dynamo v0.5.1, TensorRT-LLM 1.1.0rc5)", "tensorrt-llm"},
      {"Dynamo v0.4.1 + SGLang 0.5.1", "sglang"},
      {"Dynamo v0.6.0 + vLLM 0.10.2", "vllm"},
  };
  std::ostringstream out;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    out << "E" << i << ",s,,NVIDIA B200,8,\"" << cases[i].first
        << "\",MiniMax-M2,,,FP8,,64,1024,0,1024,tpot_ms,30,ms,concurrency 64\n";
  }
  // Layouts in lower case: EP and DP attention as words ("deep" and "step" are not EP).
  out << "L1,s,,NVIDIA B200,8,\"sglang 0.5.3, tp8, dp-attention, ep8\",MiniMax-M2,,,FP8,,64,1024,0,1024,tpot_ms,30,ms,"
         "concurrency 64\n"
      << "L2,s,,NVIDIA B200,8,\"vllm 0.10.2, tp8,ep8\",MiniMax-M2,,,FP8,,64,1024,0,1024,tpot_ms,30,ms,concurrency 64\n"
      << "L3,s,,NVIDIA B200,8,\"vllm 0.10.2, deep step tp8\",MiniMax-M2,,,FP8,,64,1024,0,1024,tpot_ms,30,ms,"
         "concurrency 64\n"
      // Keys set to one or false say none; TensorRT-LLM's DEP8 is DP attention with EP 8;
      // vLLM's DP with expert parallel spans every rank (no replicas).
      << "L4,s,,NVIDIA B200,8,\"sglang, tp=8, ep=1, dp_attention=false\",MiniMax-M2,,,FP8,,64,1024,0,1024,tpot_ms,30,"
         "ms,concurrency 64\n"
      << "L5,s,,NVIDIA B200,8,\"TensorRT-LLM 1.1, DEP8\",MiniMax-M2,,,FP8,,64,1024,0,1024,tpot_ms,30,ms,concurrency 64\n"
      << "L6,s,,NVIDIA B200,8,\"vLLM 0.11, TP1 DP8 with expert parallel\",MiniMax-M2,,,FP8,,64,1024,0,1024,tpot_ms,30,"
         "ms,concurrency 64\n";
  const measurement_set set = read_points("llmroof_engine_strings.csv", out.str());
  REQUIRE(set.skipped.empty());
  REQUIRE(set.rows.size() == cases.size() + 6);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    CAPTURE(cases[i].first);
    CHECK(set.rows[i].engine == cases[i].second);
  }
  const parallel_plan& l1 = set.rows[cases.size()].plan;
  CHECK((l1.tp == 1 && l1.ep == 8));  // DP attention beside EP experts
  const parallel_plan& l2 = set.rows[cases.size() + 1].plan;
  CHECK((l2.tp == 8 && l2.ep == 8));
  const parallel_plan& l3 = set.rows[cases.size() + 2].plan;
  CHECK((l3.tp == 8 && l3.ep == 1 && !l3.dp_attention));
  const parallel_plan& l4 = set.rows[cases.size() + 3].plan;
  CHECK((l4.tp == 8 && l4.ep == 1 && !l4.dp_attention));
  const parallel_plan& l5 = set.rows[cases.size() + 4].plan;
  CHECK((l5.tp == 1 && l5.ep == 8));
  const measurement& l6 = set.rows[cases.size() + 5];
  CHECK((l6.replicas == 1 && l6.plan.ep == 8 && l6.plan.tp == 1));
}

TEST_CASE("disaggregated rows: the split as written, predicted as a closed loop on both pools") {
  const std::string tail = ",DeepSeek-R1-0528,,,FP8,FP8,64,1024,0,1024,tpot_ms,30,ms,";
  std::ostringstream rows;
  rows
      << "A,s,,NVIDIA GB200,32,\"Dynamo + TensorRT-LLM 1.1, disaggregated: 4 prefill workers (TP4, EP4, DP attention) "
         "+ 1 decode worker (TP16, EP16, DP attention)\"" << tail << "concurrency 64\n"
      << "B,s,,NVIDIA B200,24,\"dynamo-sglang, disagg 1P2D, prefill TP8, decode TP8\"" << tail << "concurrency 64\n"
      << "C,s,,NVIDIA B200,24,sglang" << tail
      << "\"concurrency 64; prefill_tp=8 prefill_ep=8 prefill_dp_attention=true prefill_workers=2 decode_tp=8 "
         "decode_ep=8 decode_dp_attention=true decode_workers=1\"\n"
      << "D,s,,NVIDIA B200,16,SGLang disaggregated" << tail << "\"concurrency 64, chunked prefill 8192\"\n"
      << "G,s,,NVIDIA B200,16,\"SGLang 2P1D, TP4\"" << tail << "concurrency 64\n"
      << "H,s,,NVIDIA B200,16,SGLang disaggregated" << tail << "\"500 prompts, request rate inf, no concurrency cap\"\n"
      << "P,s,,NVIDIA B200,24,\"dynamo-sglang, disagg 1P2D, prefill TP8, decode TP8\",DeepSeek-R1-0528,,,FP8,FP8,64,1024,"
         "0,1024,output_tps_total,100,tokens/s/gpu,concurrency 64\n"
      // Aggregated, said so: no split.
      << "N1,s,,NVIDIA B200,8,\"SGLang TP8, not disaggregated\"" << tail << "concurrency 64\n"
      << "N2,s,,NVIDIA B200,8,SGLang TP8" << tail << "\"concurrency 64, disagg: false, decode-heavy\"\n"
      << "N3,s,,NVIDIA B200,8,SGLang TP8" << tail << "\"concurrency 64; aggregated baseline of the disaggregated run\"\n"
      // Counts written before "workers"; a layout said of both pools; no pool in "OSL 8192 decode-heavy".
      << "W1,s,,NVIDIA B200,24,\"SGLang disaggregated, prefill: 2 workers (TP8), decode: 1 worker (TP8)\"" << tail
      << "concurrency 64\n"
      << "W2,s,,NVIDIA B200,16,\"SGLang 1P1D, TP8 EP8 attention DP\"" << tail << "\"concurrency 64, OSL 8192 decode-heavy\"\n"
      // vLLM does not run DP attention beside TP: skipped with the engine's reason, the run goes on.
      << "V1,s,,NVIDIA B200,16,\"vLLM 0.11 disaggregated (NixlConnector)\"" << tail
      << "\"concurrency 64; prefill_tp=8 prefill_dp_attention=true prefill_workers=1 decode_tp=8 decode_workers=1\"\n";
  const measurement_set set = read_points("llmroof_split_points.csv", rows.str());
  REQUIRE(set.rows.size() == 10);
  REQUIRE(set.skipped.size() == 3);
  CHECK_FALSE(set.rows[5].split);
  CHECK_FALSE(set.rows[6].split);
  CHECK_FALSE(set.rows[7].split);
  CHECK(set.skipped[2].reason.rfind("cannot be predicted: dp_attention beside tp: vllm does not run it", 0) == 0);
  CHECK(set.skipped[0].reason == "a disaggregated split of 2 x 4 prefill and 1 x 4 decode devices, not the row's 16");
  CHECK(set.skipped[1].reason ==
        "a disaggregated row outside a fixed-concurrency loop is not predicted (serve_disaggregated_loop)");
  const auto split_of = [&](std::size_t i) {
    REQUIRE(set.rows[i].split);
    return *set.rows[i].split;
  };
  // A: four prefill instances of 4 (DP attention beside EP 4), one decode instance of 16.
  const disaggregated_split a = split_of(0);
  CHECK((a.prefill_instances == 4 && a.prefill.ep == 4 && a.prefill.tp == 1));
  CHECK((a.decode_instances == 1 && a.decode.ep == 16 && a.decode.tp == 1));
  CHECK(a.devices() == 32);
  CHECK(set.rows[0].plan.ep == 16);  // the row's plan is its decode instance's
  // B: 1P2D of TP8 each; C: key=value pairs; D: 1P1D of 8 each ("chunked prefill" is no pool).
  const disaggregated_split b = split_of(1);
  CHECK((b.prefill_instances == 1 && b.decode_instances == 2 && b.prefill.tp == 8 && b.decode.tp == 8));
  const disaggregated_split c = split_of(2);
  CHECK((c.prefill_instances == 2 && c.prefill.ep == 8 && c.decode_instances == 1 && c.decode.ep == 8));
  const disaggregated_split w1 = split_of(8);
  CHECK((w1.prefill_instances == 2 && w1.decode_instances == 1 && w1.prefill.tp == 8 && w1.decode.tp == 8));
  const disaggregated_split w2 = split_of(9);
  CHECK((w2.prefill_instances == 1 && w2.decode_instances == 1));
  CHECK((w2.prefill.ep == 8 && w2.prefill.tp == 1 && w2.decode.ep == 8 && w2.decode.tp == 1));
  const disaggregated_split d = split_of(3);
  CHECK((d.prefill_instances == 1 && d.decode_instances == 1 && d.prefill.tp == 8 && d.decode.tp == 8));
  // The prediction is the split's closed loop; per GPU over all 24 devices.
  const measurement& m = set.rows[1];
  const efficiency_profile e = default_profile(m.dev, "sglang");
  workload s;
  s.prompt = 1024;
  s.output = 1024;
  s.context = 2048;
  const deployment pre(m.arch, m.pr, roofline(m.dev, e), {b.prefill, std::nullopt}, engine_of(m));
  const deployment dec(m.arch, m.pr, roofline(m.dev, e), {b.decode, std::nullopt}, engine_of(m));
  // 24 B200s are three HGX nodes: the hand-over crosses InfiniBand.
  CHECK(b.decode.devices_per_node == 8);
  const pd_split split(pre, 1, dec, 2, s, kv_transfer_for(pre, b.decode.inter_link()),
                       {make_seconds(3600), make_seconds(0)});
  const pd_loop_result loop = serve_disaggregated_loop(split, s, 64);
  CHECK(predict(m, e) == doctest::Approx(1e3 * loop.tpot.value()).epsilon(1e-12));
  CHECK(predict(set.rows[4], e) == doctest::Approx(loop.output_tokens_per_s(1024) / 24).epsilon(1e-12));
}

TEST_CASE("an instance smaller than the row's devices: data-parallel replicas share the users") {
  const std::string row = ",s,,NVIDIA H100 SXM 80GB,8,\"vLLM 0.11, TP4\",Llama-3.1-70B,,,FP8,,";
  std::ostringstream rows;
  rows << "O1" << row << "64,1000,0,250,output_tps_total,400,tokens/s,concurrency 64\n"
                      << "T1" << row << "65,1000,0,250,tpot_ms,20,ms,concurrency 65\n"
                      << "G1" << row << "64,1000,0,250,output_tps_total,50,tokens/s/gpu,concurrency 64\n"
                      << "S1" << row << "64,1000,0,250,decode_tps_total,400,tokens/s,static batch\n";
  const measurement_set set = read_points("llmroof_replica_points.csv", rows.str());
  REQUIRE(set.rows.size() == 3);
  REQUIRE(set.skipped.size() == 1);
  CHECK(set.skipped[0].reason == "data-parallel replicas (2 x 4 devices) are predicted for serving benchmarks only");
  const measurement& m = set.rows[0];
  CHECK((m.replicas == 2 && m.plan.tp == 4 && m.devices() == 8));
  const efficiency_profile e = default_profile(m.dev, "vllm");
  workload s;
  s.prompt = 1000;
  s.output = 250;
  s.context = 1250;
  const deployment d(m.arch, m.pr, roofline(m.dev, e), {m.plan, std::nullopt}, engine_of(m));
  const closed_loop_result c32 = serve_closed_loop(d, s, 32), c33 = serve_closed_loop(d, s, 33);
  // 64 users: 32 on each TP4 replica, twice one replica's output.
  CHECK(predict(m, e) == doctest::Approx(2 * c32.output_tokens_per_s(250)).epsilon(1e-12));
  // 65 users: 32 and 33; the mean TPOT over requests, each replica weighing
  // its requests/s (the fuller one sends more).
  const double r32 = c32.requests_per_s, r33 = c33.requests_per_s;
  const double tpot = (r32 * c32.tpot.value() + r33 * c33.tpot.value()) / (r32 + r33);
  CHECK(predict(set.rows[1], e) == doctest::Approx(1e3 * tpot).epsilon(1e-12));
  // Per GPU: over all eight.
  CHECK(predict(set.rows[2], e) == doctest::Approx(2 * c32.output_tokens_per_s(250) / 8).epsilon(1e-12));
}

TEST_CASE("devices counted in the name or the backend, statistics before metric names, times in either unit") {
  const std::string tail = ",DeepSeek-R1-0528,,,FP8,FP8,64,1024,0,1024,";
  std::ostringstream rows;
  rows << "B1,s,,NVIDIA H200,8,\"vLLM 0.10.2, TP8\"" << tail << "tpot_ms,30,ms,concurrency 64\n"
                      << "D1,s,,8x NVIDIA H200,,\"vLLM 0.10.2\"" << tail << "tpot_ms,30,ms,concurrency 64\n"
                      << "D2,s,,8 x H200,,vLLM" << tail << "tpot_ms,30,ms,concurrency 64\n"
                      << "T1,s,,NVIDIA H200,,\"vLLM 0.10.2, TP8\"" << tail << "tpot_ms,30,ms,concurrency 64\n"
                      << "M1,s,,NVIDIA H200,8,\"vLLM 0.10.2, TP8\"" << tail << "median_tpot_ms,30,ms,concurrency 64\n"
                      << "S1,s,,NVIDIA H200,8,\"vLLM 0.10.2, TP8\"" << tail << "ttft_ms,0.3,s,concurrency 64\n"
                      << "E1,s,,NVIDIA H200,8,\"vLLM 0.10.2, TP8\"" << tail << "e2e_latency_s,30000,ms,concurrency 64\n"
                      << "E2,s,,NVIDIA H200,8,\"vLLM 0.10.2, TP8\"" << tail << "e2e_latency_s,30,s,concurrency 64\n"
                      << "X1,s,,NVIDIA H200,8,\"vLLM 0.10.2, TP8\"" << tail << "ttft_ms,300,ms,concurrency 64\n";
  const measurement_set set = read_points("llmroof_table_rows.csv", rows.str());
  REQUIRE(set.skipped.empty());
  REQUIRE(set.rows.size() == 9);
  const efficiency_profile e = default_profile(set.rows[0].dev, "vllm");
  const double tpot = predict(set.rows[0], e);
  // Eight H200s however they are counted: the column, "8x", "8 x", the backend's TP8.
  for (std::size_t i : {1, 2, 3}) {
    CAPTURE(set.rows[i].id);
    CHECK(set.rows[i].devices() == 8);
    CHECK(set.rows[i].dev.id == "h200");
    CHECK(predict(set.rows[i], e) == doctest::Approx(tpot).epsilon(1e-12));
  }
  // A median is read as the metric; its row keeps its own name.
  CHECK(predict(set.rows[4], e) == doctest::Approx(tpot).epsilon(1e-12));
  CHECK(metric_label(set.rows[4]) == "median_tpot_ms");
  // TTFT in seconds: the ms prediction / 1,000; a latency in ms: the s prediction x 1,000.
  CHECK(predict(set.rows[5], e) == doctest::Approx(predict(set.rows[8], e) / 1e3).epsilon(1e-12));
  CHECK(predict(set.rows[6], e) == doctest::Approx(predict(set.rows[7], e) * 1e3).epsilon(1e-12));
}

TEST_CASE("rows with a draft model: read as speculative, predicted through draft and verify, never fitted") {
  // LM Studio's MLX engine on an M1 Ultra (lmstudio-ai/mlx-engine #113): the
  // draft's size in the backend, the accepted share of drafts in the notes.
  // k = 2 (mlx-lm's default): a + a^2 = 2 x 0.551 = 1.102, a = (-1 + sqrt(1 +
  // 4 x 1.102)) / 2 = (-1 + 2.325511) / 2 = 0.662755.
  const std::string row = ",test,,Apple M1 Ultra 64GB,1,";
  const std::string tail = ",DeepSeek-R1-Distill-Qwen-32B,32.76,32.76,MLX 8-bit,F16,1,0,0,,decode_tps_per_seq,";
  std::ostringstream rows;
  rows << "D1" << row << "LM Studio MLX engine (Feb 2025)" << tail << "15.10,tokens/s,G4 base\n"
                      << "D2" << row << "LM Studio MLX engine (Feb 2025) + 1.5B draft model" << tail
                      << "11.01,tokens/s,\"G4 slower: 15.10 -> 11.01 tok/s, accepted draft tokens 55.1%; prompt P1\"\n"
                      << "D3" << row << "LM Studio MLX engine + draft model" << tail << "14.5,tokens/s,G4 <50% accepted\n"
                      << "D4" << row << "LM Studio MLX engine + 9B draft model" << tail
                      << "14.5,tokens/s,accepted draft tokens 40%\n"
                      << "D5" << row << "llama.cpp + --spec-type draft-mtp" << tail << "14.5,tokens/s,G4 MTP\n";
  const measurement_set set = read_points("llmroof_draft_points.csv", rows.str());
  REQUIRE(set.rows.size() == 2);
  REQUIRE(set.skipped.size() == 3);
  CHECK(set.skipped[0].reason == "a draft model's speculative decoding, the draft not named");
  CHECK(set.skipped[1].reason == "draft model 'qwen2.5-9b' is not in the catalog");
  CHECK(set.skipped[2].reason ==
        "model 'qwen2.5-32b' has no multi-token-prediction layers (num_nextn_predict_layers): use a draft model or "
        "n-gram speculation");
  const measurement& base = set.rows[0];
  const measurement& m = set.rows[1];
  CHECK_FALSE(base.spec);
  REQUIRE(m.spec);
  CHECK(m.spec->method == spec_method::draft);
  CHECK(m.spec->draft_tokens == 2);
  CHECK(m.spec->draft->id == "qwen2.5-1.5b");
  REQUIRE(m.spec->acceptance.size() == 1);
  CHECK(m.spec->acceptance[0] == doctest::Approx(0.662755).epsilon(1e-5));
  CHECK(accepted_tokens(*m.spec) == doctest::Approx(2.102));
  // The prediction: 2.102 tokens per draft + verify step of the deployment.
  const efficiency_profile e = default_profile(m.dev, "mlx");
  efficiency_profile traits = e;
  apply_kernel_traits(traits, "mlx");
  const deployment d = deployment(m.arch, m.pr, roofline(m.dev, traits), {m.plan, std::nullopt},
                                  configure_engine("mlx", m.dev))
                           .with_speculation(m.spec);
  const speculative_step st = speculate(d, *m.spec, 1, m.mean_decode_context());
  CHECK(predict(m, e) == doctest::Approx(2.102 / st.step().value()).epsilon(1e-9));
  // On an M1, MLX's verify of width 3 reads the weights three times: slower
  // than decoding alone, as the row measured (11.01 against 15.10).
  CHECK(predict(m, e) < predict(base, e));
  // Never fitted on: a fit of both rows equals a fit of the base alone.
  std::vector<measurement> bases;
  for (double v : {15.10, 15.01, 15.00, 16.5, 14.2, 15.6}) {
    bases.push_back(base);
    bases.back().value = v;
    bases.back().id = "D1-" + std::to_string(bases.size());
  }
  std::vector<measurement> with = bases;
  with.push_back(m);
  const profile_table both = fit_profiles(with, profile_scope::engine);
  const profile_table alone = fit_profiles(bases, profile_scope::engine);
  REQUIRE_FALSE(alone.fits.empty());
  REQUIRE(both.fits.size() == alone.fits.size());
  for (const auto& [key, fit] : alone.fits) {
    REQUIRE(both.fits.count(key) == 1);
    CHECK(both.fits.at(key).points == fit.points);
    CHECK(both.fits.at(key).profile.memory == fit.profile.memory);
  }
}

TEST_CASE("rows drafting with MTP layers or an EAGLE head: draft length and acceptance as written") {
  const std::string r1 = ",s,,NVIDIA H200 SXM 141GB,8,";
  const std::string tail = ",DeepSeek-R1-0528,671,37,FP8,,4,1000,0,1000,tpot_ms,20,ms,";
  std::ostringstream rows;
  rows << "M1" << r1 << "\"SGLang v0.5.2, TP8, MTP\"" << tail
      << "\"--max-concurrency 4, --speculative-num-steps 3, accept length 2.4\"\n"
      << "M2" << r1 << "\"TensorRT-LLM 1.0, TP8, MTP=3\"" << tail << "concurrency 4\n"
      << "M3" << r1 << "\"vLLM 0.11, TP8\"" << tail
      << "\"--max-concurrency 4; --speculative-config {\"\"method\"\": \"\"deepseek_mtp\"\", "
         "\"\"num_speculative_tokens\"\": 1}; acceptance rate 80%\"\n"
      << "M4,s,,NVIDIA H100 SXM 80GB,1,\"vLLM 0.11, EAGLE-3\",Llama-3.1-8B,,,BF16,,4,1000,0,1000,tpot_ms,5,ms,"
         "concurrency 4\n"
      << "M5,s,,NVIDIA H100 SXM 80GB,1,\"SGLang v0.5.2, MTP\",Llama-3.1-8B,,,BF16,,4,1000,0,1000,tpot_ms,5,ms,"
         "concurrency 4\n"
      << "M6" << r1 << "\"SGLang v0.5.2, TP8, MTP\"" << ",DeepSeek-R1-0528,671,37,FP8,,64,1000,0,1000,"
      << "decode_tps_total,2000,tokens/s,static batch\n"
      << "M7" << r1 << "\"SGLang v0.5.2, TP8, MTP\"" << tail << "\"concurrency 4, mtp-3, accept length 5\"\n"
      << "M8" << r1 << "\"SGLang v0.5.2, TP8 (MTP build)\"" << tail << "\"concurrency 4, no speculative decoding\"\n"
      << "M9,s,,NVIDIA H100 SXM 80GB,1,\"vLLM 0.11, --speculative-config\",Llama-3.1-8B,,,BF16,,4,1000,0,1000,tpot_ms,5,"
         "ms,concurrency 4\n"
      << "M10,s,,NVIDIA H100 SXM 80GB,1,\"vLLM 0.11, ngram speculative decoding\",Llama-3.1-8B,,,BF16,,4,1000,0,1000,"
         "tpot_ms,5,ms,concurrency 4\n"
      // Said and negated: plain rows.
      << "P1" << r1 << "\"SGLang v0.5.2, TP8\"" << tail << "\"concurrency 4, mtp: false\"\n"
      << "P2" << r1 << "\"SGLang v0.5.2, TP8, without MTP\"" << tail << "concurrency 4\n"
      << "P3" << r1 << "\"SGLang v0.5.2, TP8\"" << tail << "\"concurrency 4, MTP: none\"\n"
      << "P4" << r1 << "\"SGLang v0.5.2, TP8, MTP disabled\"" << tail << "concurrency 4\n"
      // The engine's draft length before the checkpoint's layer count; SGLang's
      // EAGLE on a model with MTP layers runs them; "1.7" is no acceptance rate.
      << "K1" << r1 << "\"SGLang v0.5.2, TP8\"" << tail
      << "\"concurrency 4, num_nextn_predict_layers 1, --speculative-num-steps 3, MTP\"\n"
      << "K2" << r1 << "\"SGLang v0.5.2, TP8, --speculative-algorithm EAGLE\"" << tail << "concurrency 4\n"
      << "K3" << r1 << "\"SGLang v0.5.2, TP8, MTP\"" << tail << "\"concurrency 4, acceptance rate 1.7\"\n";
  const measurement_set set = read_points("llmroof_mtp_points.csv", rows.str());
  REQUIRE(set.rows.size() == 11);
  for (std::size_t i : {5, 6, 7, 8}) {
    CAPTURE(set.rows[i].id);
    CHECK_FALSE(set.rows[i].spec);
  }
  REQUIRE(set.rows[9].spec);
  CHECK(set.rows[9].spec->draft_tokens == 3);
  REQUIRE(set.rows[10].spec);
  CHECK(set.rows[10].spec->method == spec_method::mtp);
  CHECK(set.skipped.back().reason == "an acceptance rate of 1.7 (a share below 1, or a percentage with its % sign)");
  REQUIRE(set.skipped.size() == 6);
  CHECK(set.skipped[3].reason == "speculative decoding by a method the row does not name");
  CHECK(set.skipped[4].reason ==
        "acceptance must be given for ngram speculation (no published default: it depends on the workload)");
  CHECK(set.skipped[0].reason ==
        "model 'llama-3.1-8b' has no multi-token-prediction layers (num_nextn_predict_layers): use a draft model or "
        "n-gram speculation");
  CHECK(set.skipped[1].reason ==
        "a speculative row's decode_tps_total outside a serving benchmark is not predicted (single-stream decode or "
        "a loop or burst)");
  CHECK(set.skipped[2].reason == "an accept length of 5 with 3 draft tokens (it lies between 1 and 4)");
  // M1: 3 drafts keeping 2.4 - 1 = 1.4 per step: a + a^2 + a^3 = 1.4 at
  // a = 0.6646 (0.6646 + 0.4417 + 0.2936 = 1.3999).
  const measurement& m1 = set.rows[0];
  REQUIRE(m1.spec);
  CHECK((m1.closed_loop && m1.spec->method == spec_method::mtp && m1.spec->draft_tokens == 3));
  REQUIRE(m1.spec->acceptance.size() == 1);
  CHECK(m1.spec->acceptance[0] == doctest::Approx(0.6646).epsilon(1e-3));
  CHECK(accepted_tokens(*m1.spec) == doctest::Approx(2.4).epsilon(1e-9));
  // M2: "MTP=3" without an acceptance takes the method's default (0.60 per position for k > 1).
  REQUIRE(set.rows[1].spec);
  CHECK((set.rows[1].spec->draft_tokens == 3 && set.rows[1].spec->acceptance.empty()));
  CHECK(accepted_tokens(*set.rows[1].spec) == doctest::Approx(1 + 0.6 + 0.36 + 0.216));
  // M3: one draft accepted 80% of the time: a = 0.8.
  REQUIRE(set.rows[2].spec);
  CHECK(set.rows[2].spec->draft_tokens == 1);
  CHECK(set.rows[2].spec->acceptance.at(0) == doctest::Approx(0.8).epsilon(1e-9));
  // M4: EAGLE with its published acceptance, one draft token.
  REQUIRE(set.rows[3].spec);
  CHECK((set.rows[3].spec->method == spec_method::eagle && set.rows[3].spec->draft_tokens == 1));
  // M8: a baseline row of an MTP build does not speculate.
  CHECK_FALSE(set.rows[4].spec);
  // Drafting keeps 2.4 tokens a step: the loop's TPOT is shorter than the same loop's without it.
  const efficiency_profile e = default_profile(m1.dev, "sglang");
  measurement plain = m1;
  plain.spec.reset();
  CHECK(predict(m1, e) < predict(plain, e));
  CHECK(predict(set.rows[4], e) == doctest::Approx(predict(plain, e)).epsilon(1e-12));
}

TEST_CASE("MLX's quantized mat-vec reads the weights once per token row on M1 and M2") {
  // get_qmv_batch_limit for large matrices: 12 rows on Ultra-class chips, 6
  // on other M1/M2; from M3 qmv_wide reads each group once (KERNELS.md 6.1).
  CHECK(qmv_rows_below(find_device("m1-ultra-48c")) == 12);
  CHECK(qmv_rows_below(find_device("m2-max-38c")) == 6);
  CHECK(qmv_rows_below(find_device("m3-max-40c")) == 0);
  CHECK(qmv_rows_below(find_device("h100-sxm")) == 0);
  op o;
  o.klass = op_class::gemm;
  o.quantized = true;
  o.weights = make_bytes(1e9);
  o.flop = make_flops(2e6);
  o.gemm_rows = 3;
  efficiency_profile e;
  e.qmv_rows_reread = true;
  // 3 rows on an M1 Ultra (800 GB/s): 3 x 1e9 B / 800e9 B/s = 3.75 ms.
  CHECK(roofline(find_device("m1-ultra-64c"), e).time(o).memory_bound.value() == doctest::Approx(3.75e-3));
  // 12 rows reach qmm, which reads them once: 1.25 ms.
  o.gemm_rows = 12;
  CHECK(roofline(find_device("m1-ultra-64c"), e).time(o).memory_bound.value() == doctest::Approx(1.25e-3));
  // On an M3 Max (400 GB/s) 3 rows read them once: 2.5 ms; unquantized
  // weights take MLX's GEMM, never qmv.
  o.gemm_rows = 3;
  CHECK(roofline(find_device("m3-max-40c"), e).time(o).memory_bound.value() == doctest::Approx(2.5e-3));
  o.quantized = false;
  CHECK(roofline(find_device("m1-ultra-64c"), e).time(o).memory_bound.value() == doctest::Approx(1.25e-3));
  // Not MLX's kernels: once.
  o.quantized = true;
  CHECK(roofline(find_device("m1-ultra-64c"), efficiency_profile{}).time(o).memory_bound.value() ==
        doctest::Approx(1.25e-3));
}

TEST_CASE("conformal band widths: the 68th percentile of |ln(predicted / measured)| per arrival and metric") {
  // Five steady single-stream decode points off by e^0.1 .. e^0.5 (alternately
  // too fast and too slow), three burst TPOT points off by e^0.5, e^1, e^1.5
  // and one burst throughput point off by e^2.
  std::vector<measurement> rows;
  std::vector<double> errors;
  for (double e : {0.1, 0.2, 0.3, 0.4, 0.5}) {
    rows.push_back(point("llama-3.1-8b", "h100-sxm", "bf16", metric::decode_tps_per_seq, 1, 0, 0, 128));
    errors.push_back(e);
  }
  for (double e : {0.5, 1.0, 1.5}) {
    rows.push_back(point("llama-3.1-8b", "h100-sxm", "bf16", metric::tpot_ms, 64, 1000, 0, 1000));
    rows.back().burst = true;
    errors.push_back(e);
  }
  rows.push_back(point("llama-3.1-8b", "h100-sxm", "bf16", metric::decode_tps_total, 64, 1000, 0, 1000));
  rows.back().burst = true;
  errors.push_back(2.0);
  std::vector<cv_prediction> p;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i].value = 100;
    p.push_back({&rows[i], 100 * std::exp(i % 2 == 0 ? errors[i] : -errors[i])});
  }
  const band_widths w = conformal_widths(p);
  const auto at = [&](request_arrival a, metric m) {
    return w[static_cast<std::size_t>(a)][static_cast<std::size_t>(m)];
  };
  // Steady decode: 5 points, the ceil(0.68 x 5) = 4th smallest = 0.4.
  CHECK(at(request_arrival::steady, metric::decode_tps_per_seq) == doctest::Approx(0.4));
  // Steady TPOT has no points: the steady pool (the same 5) gives 0.4.
  CHECK(at(request_arrival::steady, metric::tpot_ms) == doctest::Approx(0.4));
  // Burst TPOT has 3 points (< 5): the burst pool {0.5, 1, 1.5, 2},
  // its ceil(0.68 x 4) = 3rd smallest = 1.5; the steady points never enter it.
  CHECK(at(request_arrival::burst, metric::tpot_ms) == doctest::Approx(1.5));
  CHECK(at(request_arrival::burst, metric::decode_tps_total) == doctest::Approx(1.5));

  // Written as band_width's rows; an arrival without points takes the steady widths.
  p.resize(5);
  std::ostringstream out;
  write_band_widths(out, conformal_widths(p));
  CHECK(out.str().find("{metric::decode_tps_per_seq, request_arrival::steady, 0.4},") != std::string::npos);
  CHECK(out.str().find("{metric::tpot_ms, request_arrival::burst, 0.4},") != std::string::npos);
}

TEST_CASE("shipped band widths: every metric has a steady width, and bursts are predicted less well") {
  for (std::size_t i = 0; i < metric_count; ++i) {
    const auto m = static_cast<metric>(i);
    CAPTURE(to_string(m));
    CHECK(band_width(m) > 0.05);
    CHECK(band_width(m) < 1.0);
  }
  CHECK(band_width(metric::tpot_ms, request_arrival::burst) > band_width(metric::tpot_ms));
  CHECK(band_width(metric::decode_tps_total, request_arrival::burst) > band_width(metric::decode_tps_total));
}

TEST_CASE("AIConfigurator's silicon rows: lockstep loops, the row's layout, skipped rows said why") {
  // tests/data/aic_silicon_sample.csv: four rows copied unchanged from
  // AIConfigurator 0.12.0's silicon_sample.csv (aiconfigurator-core wheel,
  // Apache-2.0; data release 4): an aggregated vLLM Llama-3.1-70B on 4 x H100,
  // a disaggregated TensorRT-LLM DeepSeek-R1 with its worker counts (1P3D of
  // TP16 workers), one without them and a vLLM MiniMax-M2.5 at attention TP4 x DP4.
  const measurement_set set = read_measurements(std::string(LLMROOF_SOURCE_DIR) + "/tests/data/aic_silicon_sample.csv");
  // Each mapped row gives a TTFT and a TPOT point.
  REQUIRE(set.rows.size() == 4);
  REQUIRE(set.skipped.size() == 4);
  const measurement& ttft = set.rows[0];
  CHECK(ttft.id == "2026_04_06_llama_3_1_70b_h100_sxm_vllm_fp8_agg_1024x1024_c16_tp4_ep1_260/ttft");
  // Leave-one-model-out: the source is the model's path.
  CHECK(ttft.source == "aiconfigurator:meta-llama/Llama-3.1-70B");
  CHECK(ttft.engine == "vllm");
  CHECK(ttft.dev.id == "h100-sxm");
  CHECK(ttft.plan.tp == 4);
  CHECK(ttft.closed_loop);
  CHECK(ttft.lockstep);
  CHECK(ttft.batch == 16);  // silicon_concurrency=16
  CHECK(ttft.prompt == 1024);
  CHECK(ttft.gen == 1024);
  CHECK(ttft.value == doctest::Approx(121.41327284043655));
  CHECK(set.rows[1].value == doctest::Approx(13.192185948816437));
  // The disaggregated row with its workers: 1 x TP16 prefill, 3 x TP16 decode.
  const measurement& pd = set.rows[2];
  REQUIRE(pd.split);
  CHECK(pd.split->prefill_instances == 1);
  CHECK(pd.split->decode_instances == 3);
  CHECK(pd.split->prefill.devices() == 16);
  CHECK(pd.split->decode.devices() == 16);
  CHECK(pd.devices() == 64);
  CHECK(pd.lockstep);
  CHECK(set.skipped[0].id == "2026_03_25_deepseek_r1_h200_sxm_trtllm_fp8_disagg_1024x1024_c13_tp8_0_ep8_0_354/ttft");
  CHECK(set.skipped[0].reason ==
        "a disaggregated row that does not say its worker counts (prefill_num_workers, decode_num_workers): its users "
        "ran over an unknown number of decode workers");
  CHECK(set.skipped[2].reason == "attention TP4 x DP4 (a plan holds attention TP or DP over the instance, not both)");
}
