// Prediction of measured points and the Levenberg-Marquardt profile fit
// (profile_table.cpp groups the fits, validation.cpp checks them).
#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <stdexcept>
#include <thread>

#include "llmroof/calibration/calibrate.hpp"
#include "llmroof/serving/disaggregation.hpp"
#include "llmroof/detail/enum_names.hpp"
#include "llmroof/engine/detail/fitted_row.hpp"

namespace llmroof {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

phase_timing measured_decode_step(const measurement& m, const efficiency_profile& e, double batch, double context) {
  return detail::decode_on(m.arch, m.pr, roofline(m.dev, e), {m.plan, std::nullopt}, batch, context);
}

namespace {

// Whether a point's linear layers run on an FP8 or FP4 tensor roof under its
// engine's kernel path: the share low_precision applies to them.
bool low_precision_gemms(const measurement& m) {
  efficiency_profile traits;
  apply_kernel_traits(traits, m.engine);
  const numeric_format& f = m.arch.is_moe() ? m.pr.experts_format() : m.pr.ffn_format();
  op o;
  o.klass = op_class::gemm;
  o.math = f.math;
  o.quantized = f.bits < 16;
  const math_format k = m.dev.effective_math(roofline(m.dev, traits).kernel_math(o));
  return k == math_format::fp8 || k == math_format::fp4;
}

// Times a point's steps through the dispatcher.
struct direct_timer {
  const measurement& m;
  [[nodiscard]] seconds decode(const efficiency_profile& e, double batch, double context) const {
    return measured_decode_step(m, e, batch, context).estimate;
  }
  [[nodiscard]] seconds prefill(const efficiency_profile& e, double prompt, double cached, double batch) const {
    // A batch's prompts in the engine's passes, each attending to its own tokens only.
    return detail::prefill_on(m.arch, m.pr, roofline(m.dev, e), {m.plan, std::nullopt}, prompt, cached, batch).estimate;
  }
};

// A point's profile-independent work, done once per fit: its device's
// roofline and the op counts of each step shape it is timed at. A fit times
// every point some hundreds of times under profiles that differ only in the
// fitted numbers; counting, and building a roofline (device strings, link
// lookups) per call, were most of a validation's time.
class cached_timer {
 public:
  explicit cached_timer(const measurement& m) : m_(&m), roof_(m.dev, efficiency_profile{}) {}

  [[nodiscard]] const measurement& row() const { return *m_; }

  seconds decode(const efficiency_profile& e, double batch, double context) {
    const measurement& m = *m_;
    return time(e, {false, batch, context, 0},
                [&] { return detail::count_decode_on(m.arch, m.pr, m.dev, m.plan, batch, context); });
  }
  seconds prefill(const efficiency_profile& e, double prompt, double cached, double batch) {
    const measurement& m = *m_;
    // The pass size is the engine's trait, one per fit: not part of the shape.
    return time(e, {true, prompt, cached, batch}, [&] {
      return detail::count_prefill_on(m.arch, m.pr, m.dev, m.plan, prompt, cached, batch, e.prefill_chunk);
    });
  }

 private:
  struct shape {
    bool prefill = false;
    double x = 0, y = 0, z = 0;
    [[nodiscard]] bool operator==(const shape&) const = default;
  };
  template <class Count>
  seconds time(const efficiency_profile& e, const shape& s, Count count) {
    roof_.set_efficiency(e);
    for (const auto& [k, c] : counted_) {
      if (k == s) return detail::time_on(c, roof_, m_->plan).estimate;
    }
    counted_.emplace_back(s, count());
    return detail::time_on(counted_.back().second, roof_, m_->plan).estimate;
  }

  const measurement* m_;
  roofline roof_;
  std::vector<std::pair<shape, pipelined_counts>> counted_;
};

// A served load's figure for a metric: TTFT and TPOT (ms), one user's decode
// tokens/s (1 / TPOT), output tokens/s, a request's latency (s: its first
// token, then output - 1 more at TPOT each, as vllm bench serve's TPOT is
// defined from it).
double served(metric what, seconds ttft, seconds tpot, double output_per_s, double output) {
  switch (what) {
    case metric::ttft_ms: return 1e3 * ttft.value();
    case metric::tpot_ms: return 1e3 * tpot.value();
    case metric::decode_tps_per_seq: return 1 / tpot.value();
    case metric::e2e_latency_s: return (ttft + (output - 1) * tpot).value();
    case metric::decode_tps_total: return output_per_s;
    case metric::prefill_tps: break;
  }
  throw std::logic_error("a served load has no prefill_tps (the reader refuses such rows)");
}

// A point's prediction in `what`'s unit for the whole deployment, its steps timed by `t`.
template <class Timer>
double predict_in_own_unit(const measurement& m, const efficiency_profile& profile, Timer& t);

// A point's prediction in its row's metric and unit (per device when the row is).
template <class Timer>
double predict_with(const measurement& m, const efficiency_profile& profile, Timer& t) {
  const bool throughput = m.what == metric::decode_tps_total || m.what == metric::prefill_tps;
  const double per = m.per_device && throughput ? 1.0 / m.devices() : 1.0;
  return m.scale * per * predict_in_own_unit(m, profile, t);
}

template <class Timer>
double predict_in_own_unit(const measurement& m, const efficiency_profile& profile, Timer& t) {
  // Kernel traits belong to the engine, whichever group's profile is used
  // (copied only when they differ: fits call this millions of times).
  efficiency_profile traits;
  apply_kernel_traits(traits, m.engine);
  const double chunk = m.prefill_chunk > 0 ? m.prefill_chunk : traits.prefill_chunk;
  const bool same = profile.fp16_accumulate == traits.fp16_accumulate &&
                    profile.quantized_path == traits.quantized_path && profile.fused_attention == m.fused_attention &&
                    profile.overlap == traits.overlap && profile.prefill_chunk == chunk &&
                    profile.per_hop == traits.per_hop && profile.per_sequence == traits.per_sequence &&
                    profile.qmv_rows_reread == traits.qmv_rows_reread &&
                    profile.fa_tile_without_gqa == traits.fa_tile_without_gqa;
  efficiency_profile own;
  if (!same) {
    own = profile;
    own.fp16_accumulate = traits.fp16_accumulate;
    own.quantized_path = traits.quantized_path;
    own.fused_attention = m.fused_attention;
    own.overlap = traits.overlap;
    own.prefill_chunk = chunk;
    own.per_hop = traits.per_hop;
    own.per_sequence = traits.per_sequence;
    own.qmv_rows_reread = traits.qmv_rows_reread;
    own.fa_tile_without_gqa = traits.fa_tile_without_gqa;
  }
  const efficiency_profile& e = same ? profile : own;
  if (m.closed_loop && m.what != metric::prefill_tps) {
    // Whole tokens: a ShareGPT row gives the mean lengths (215.3 in, 196.7 out).
    workload s;
    s.prompt = std::max(1.0, std::round(m.prompt));
    s.output = std::max(1.0, std::round(m.gen));
    s.context = s.prompt + s.output;
    if (m.lockstep) s.arrivals = arrival_pattern::lockstep;
    const deployment d = deployment(m.arch, m.pr, roofline(m.dev, e), {m.plan, std::nullopt}, engine_of(m))
                             .with_speculation(m.spec);
    if (m.split) {
      // Prefill instances hand each prompt's KV to decode instances over the
      // devices' own link within a node, the inter-node link across nodes; no
      // target clips the loop.
      const deployment prefill(m.arch, m.pr, roofline(m.dev, e), {m.split->prefill, std::nullopt}, engine_of(m));
      const bool across = m.split->devices() > m.split->decode.devices_per_node;
      const kv_transfer link =
          kv_transfer_for(prefill, across ? std::optional<link_spec>(m.split->decode.inter_link()) : std::nullopt);
      const pd_split split(prefill, m.split->prefill_instances, d, m.split->decode_instances, s, link, no_targets);
      const pd_loop_result c = serve_disaggregated_loop(split, s, m.batch);
      return served(m.what, c.ttft, c.tpot, c.output_tokens_per_s(s.output), s.output);
    }
    const double r = m.replicas;
    if (m.burst) {
      // A router spreads the burst over the replicas evenly.
      if (m.mixed_lengths) s.context = std::max(sharegpt_pair_tokens, s.context);
      const burst_result b = serve_burst(d, s, std::max(1.0, std::round(m.requests / r)),
                                         m.mixed_lengths ? length_spread::exponential : length_spread::fixed);
      return served(m.what, b.ttft, b.tpot, r * b.output_tokens_per_s(), s.output);
    }
    // N users over r replicas, as evenly as they go.
    const pd_loop_result c = serve_replicated_loop(d, m.replicas, s, m.batch);
    return served(m.what, c.ttft, c.tpot, c.output_tokens_per_s(s.output), s.output);
  }
  if (m.spec) {
    // A draft model beside the target: its k decode steps and the target's
    // verify of width k + 1, over the tokens a step keeps (step_of).
    const deployment d = deployment(m.arch, m.pr, roofline(m.dev, e), {m.plan, std::nullopt},
                                    engine_of(m))
                             .with_speculation(m.spec);
    return 1.0 / step_of(d, m.batch, m.mean_decode_context()).per_token();
  }
  switch (m.what) {
    case metric::decode_tps_per_seq:
      return 1.0 / t.decode(e, m.batch, m.mean_decode_context()).value();
    case metric::decode_tps_total: {
      const double step = t.decode(e, m.batch, m.mean_decode_context()).value();
      if (m.includes_prefill && m.gen > 0) {
        const double pre = t.prefill(e, std::max(1.0, m.prompt), m.depth, m.batch).value();
        return m.batch * m.gen / (e.per_request.value() + pre + m.gen * step);
      }
      return m.batch / step;
    }
    case metric::prefill_tps:
      return m.prompt * m.batch / t.prefill(e, m.prompt, m.depth, m.batch).value();
    case metric::ttft_ms:
      return 1e3 * (e.per_request + t.prefill(e, std::max(1.0, m.prompt), m.depth, m.batch)).value();
    case metric::tpot_ms:
      return 1e3 * t.decode(e, m.batch, m.mean_decode_context()).value();
    case metric::e2e_latency_s: {
      // An offline batch larger than the KV cache holds runs in waves.
      const double per_wave = m.max_concurrent >= 1 ? std::min(m.batch, m.max_concurrent) : m.batch;
      const double waves = std::ceil(m.batch / per_wave);
      const double pre = t.prefill(e, std::max(1.0, m.prompt), m.depth, per_wave).value();
      return waves * (e.per_request.value() + pre + m.gen * t.decode(e, per_wave, m.mean_decode_context()).value());
    }
  }
  return 0;
}

}  // namespace

engine_settings engine_of(const measurement& m) {
  return configure_engine(engine_of_class(m.engine), m.dev, m.overrides);
}

double predict(const measurement& m, const efficiency_profile& profile) {
  direct_timer t{m};
  return predict_with(m, profile, t);
}

namespace {

// Unconstrained coordinates: eta = logistic(u) in (0, 1); overhead = exp(v).
double logistic(double u) { return std::clamp(1.0 / (1.0 + std::exp(-u)), 1e-6, 1.0); }
double logit(double p) { return std::log(p / (1 - p)); }

struct packing {
  fit_fields f;
  [[nodiscard]] int size() const {
    return int(f.memory) + int(f.compute) + int(f.per_step) + int(f.attention) + int(f.per_kernel) +
           int(f.kv_memory) + int(f.half_rows) + int(f.stream_cap) + int(f.per_request) + int(f.low_precision);
  }
  [[nodiscard]] Eigen::VectorXd pack(const efficiency_profile& e) const {
    Eigen::VectorXd x(size());
    int i = 0;
    if (f.memory) x[i++] = logit(std::clamp(e.memory, 1e-4, 0.9999));
    if (f.compute) x[i++] = logit(std::clamp(e.compute, 1e-4, 0.9999));
    if (f.per_step) x[i++] = std::log(std::max(e.per_step.value(), 1e-7));
    if (f.attention) x[i++] = logit(std::clamp(e.attention, 1e-4, 0.9999));
    if (f.per_kernel) x[i++] = std::log(std::max(e.per_kernel.value(), 1e-8));
    if (f.kv_memory) x[i++] = logit(std::clamp(e.kv_memory, 1e-4, 0.9999));
    if (f.half_rows) x[i++] = std::log(std::max(e.compute_half_rows, 1e-3));
    if (f.stream_cap) x[i++] = std::log(std::max(e.stream_cap, 1e9));
    if (f.per_request) x[i++] = std::log(std::max(e.per_request.value(), 1e-5));
    if (f.low_precision) x[i++] = logit(std::clamp(e.low_precision, 1e-4, 0.9999));
    return x;
  }
  [[nodiscard]] efficiency_profile unpack(const Eigen::VectorXd& x, efficiency_profile e) const {
    int i = 0;
    if (f.memory) e.memory = logistic(x[i++]);
    if (f.compute) e.compute = logistic(x[i++]);
    if (f.per_step) e.per_step = make_seconds(std::min(std::exp(x[i++]), 10.0));
    if (f.attention) e.attention = logistic(x[i++]);
    if (f.per_kernel) e.per_kernel = make_seconds(std::min(std::exp(x[i++]), 1.0));
    if (f.kv_memory) e.kv_memory = logistic(x[i++]);
    if (f.half_rows) e.compute_half_rows = std::min(std::exp(x[i++]), 1e6);
    if (f.stream_cap) e.stream_cap = std::clamp(std::exp(x[i++]), 1e9, 1e14);
    if (f.per_request) e.per_request = make_seconds(std::min(std::exp(x[i++]), 10.0));
    if (f.low_precision) e.low_precision = logistic(x[i++]);
    return e;
  }
};

Eigen::VectorXd residuals(std::vector<cached_timer>& rows, const efficiency_profile& e) {
  Eigen::VectorXd r(static_cast<Eigen::Index>(rows.size()));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    r[static_cast<Eigen::Index>(i)] = std::log(predict_with(rows[i].row(), e, rows[i]) / rows[i].row().value);
  }
  return r;
}

}  // namespace

calibration_result calibrate(const std::vector<measurement>& rows, const efficiency_profile& start, fit_fields fields) {
  const packing pk{fields};
  const int p = pk.size();
  if (p == 0) throw std::invalid_argument("calibrate needs at least one field to fit");
  if (static_cast<int>(rows.size()) < p) {
    detail::fail("calibration points", ">= the fitted fields (" + detail::show(p) + ")", double(rows.size()));
  }
  for (const auto& m : rows) {
    if (!(m.value > 0) || !std::isfinite(m.value)) detail::fail("measurement " + m.id + " value", "> 0", m.value);
  }
  // The profile's name and source ride along unchanged: kept out of the
  // hundreds of copies a fit makes.
  efficiency_profile base = start;
  base.name.clear();
  base.source.clear();
  std::vector<cached_timer> timers;
  timers.reserve(rows.size());
  for (const auto& m : rows) timers.emplace_back(m);
  Eigen::VectorXd x = pk.pack(base);
  Eigen::VectorXd r = residuals(timers, pk.unpack(x, base));
  double cost = r.squaredNorm();
  double lambda = 1e-3;
  Eigen::MatrixXd jac(r.size(), p);
  const auto jacobian = [&](const Eigen::VectorXd& at, const Eigen::VectorXd& r0) {
    for (int j = 0; j < p; ++j) {
      Eigen::VectorXd h = at;
      const double step = 1e-5 * std::max(1.0, std::fabs(at[j]));
      h[j] += step;
      jac.col(j) = (residuals(timers, pk.unpack(h, base)) - r0) / step;
    }
  };
  for (int it = 0; it < 100; ++it) {
    jacobian(x, r);
    const Eigen::MatrixXd jtj = jac.transpose() * jac;
    const Eigen::VectorXd g = jac.transpose() * r;
    bool improved = false;
    for (int tries = 0; tries < 20 && !improved; ++tries) {
      Eigen::MatrixXd a = jtj;
      a.diagonal() += lambda * (jtj.diagonal().array() + 1e-12).matrix();
      const Eigen::VectorXd dx = a.ldlt().solve(-g);
      const Eigen::VectorXd xn = x + dx;
      const Eigen::VectorXd rn = residuals(timers, pk.unpack(xn, base));
      const double cn = rn.squaredNorm();
      if (std::isfinite(cn) && cn < cost) {
        const double gain = cost - cn;
        x = xn;
        r = rn;
        cost = cn;
        lambda = std::max(lambda / 3, 1e-12);
        improved = true;
        if (gain < 1e-9 * std::max(1e-6, cost)) it = 100;  // converged: the cost no longer moves
      } else {
        lambda *= 4;
      }
    }
    if (!improved) break;
  }
  calibration_result out;
  out.profile = pk.unpack(x, start);
  out.points = rows.size();
  out.residuals.assign(r.data(), r.data() + r.size());
  std::vector<double> apes;
  for (double ri : out.residuals) apes.push_back(std::fabs(std::exp(ri) - 1));
  out.median_ape = median(apes);
  // Standard errors: sigma^2 (J^T J)^-1 in the unconstrained coordinates,
  // carried to the fields by the derivative of each transform. LDLT costs a
  // fraction of completeOrthogonalDecomposition's compile time and agrees with
  // its pseudo-inverse on the shipped fits; an exactly zero pivot it treats as
  // the pseudo-inverse does (Eigen's _solve_impl), a nearly collinear pair of
  // fields gets huge variances where the pseudo-inverse would threshold them.
  jacobian(x, r);
  const double dof = std::max(1.0, double(rows.size()) - p);
  const Eigen::MatrixXd cov = (cost / dof) * Eigen::MatrixXd((jac.transpose() * jac).ldlt().solve(Eigen::MatrixXd::Identity(p, p)));
  int i = 0;
  if (fields.memory) {
    out.memory_sd = out.memory_se = out.profile.memory * (1 - out.profile.memory) * std::sqrt(std::max(0.0, cov(i, i)));
    ++i;
  }
  if (fields.compute) {
    out.compute_sd = out.compute_se = out.profile.compute * (1 - out.profile.compute) * std::sqrt(std::max(0.0, cov(i, i)));
    ++i;
  }
  if (fields.per_step) {
    out.per_step_sd = out.profile.per_step.value() * std::sqrt(std::max(0.0, cov(i, i)));
    ++i;
  }
  if (fields.attention) ++i;
  if (fields.per_kernel) {
    out.per_kernel_sd = out.profile.per_kernel.value() * std::sqrt(std::max(0.0, cov(i, i)));
    ++i;
  }
  if (fields.kv_memory) ++i;
  if (fields.half_rows) ++i;
  if (fields.stream_cap) ++i;
  if (fields.per_request) out.per_request_sd = out.profile.per_request.value() * std::sqrt(std::max(0.0, cov(i, i)));
  return out;
}

}  // namespace llmroof

namespace llmroof {

calibration_result calibrate_two_stage(const std::vector<measurement>& rows, const efficiency_profile& start) {
  std::vector<measurement> dec, pre;
  for (const auto& m : rows) (decode_metric(m.what) ? dec : pre).push_back(m);
  efficiency_profile e = start;
  calibration_result d, p;
  const bool have_d = dec.size() >= 3, have_p = pre.size() >= 3;
  // Prefill is compute-bound, so eta_c comes first; decode then fits the
  // bandwidth share and overheads with it; a second prefill pass sees them.
  // Served TTFT points (not kernel benchmarks) carry the request handling.
  const bool request_fitted =
      have_p && std::count_if(pre.begin(), pre.end(), [](const measurement& m) { return m.what == metric::ttft_ms; }) >= 3;
  int decode_fields = 0, prefill_fields = 0;
  const auto prefill_stage = [&] {
    // Long prompts or deep caches give attention its own leverage.
    bool long_context = false;
    for (const auto& m : pre) long_context = long_context || m.prompt + m.depth >= 4096;
    fit_fields f{false, true, false, long_context && pre.size() >= 6};
    f.per_request = request_fitted;
    // Prefill points on both kinds of roof separate FP8/FP4 GEMMs' share from eta_c.
    const auto low = std::count_if(pre.begin(), pre.end(), low_precision_gemms);
    f.low_precision = low >= 2 && pre.size() - low >= 2;
    p = calibrate(pre, e, f);
    prefill_fields = packing{f}.size();
    e = p.profile;
  };
  if (have_p) prefill_stage();
  if (have_d) {
    // Bandwidth share, overheads, KV share and cap come from the points they
    // govern, small batches (<= 4 sequences); batches of 8 and more then fit
    // the small-GEMM shape alone. Batched points carry physics the roofline
    // does not see (correlated MoE routing in benchmarks that decode copies of
    // one prompt, scheduler batching), which would otherwise bend eta_m.
    std::vector<measurement> small, batched;
    double batch = 1;
    for (const auto& m : dec) {
      (m.batch <= 4 ? small : batched).push_back(m);
      batch = std::max(batch, m.batch);
    }
    const bool split = small.size() >= 6 && batched.size() >= 4;
    const std::vector<measurement>& base = split ? small : dec;
    // What the base points can show: contexts from short to >= 4k tokens
    // separate the KV reads' speed from the weights'; small-batch points on
    // devices above 1.5 TB/s show whether the GEMM kernels can stream that
    // fast, and points on slower devices keep eta_m apart from the cap, which
    // belongs to one engine's kernels (vLLM streams 2.5 TB/s on an H200 at
    // batch 8): a group that mixes engines does not fit it.
    double lo = 1e300, hi = 0, fastest = 0;
    int fast = 0, slow = 0;
    bool one_engine = true;
    for (const auto& m : base) {
      const double c = m.mean_decode_context();
      lo = std::min(lo, c);
      hi = std::max(hi, c);
      fastest = std::max(fastest, m.dev.bandwidth.value());
      fast += m.dev.bandwidth.value() >= 1.5e12 && m.batch <= 8;
      slow += m.dev.bandwidth.value() < 1.5e12;
      one_engine = one_engine && m.engine == base.front().engine;
    }
    fit_fields f{true, false, true, false, true};
    // kv_memory prices unfused attention alone: fitted only where such points are.
    const bool unfused = std::any_of(base.begin(), base.end(), [](const measurement& m) { return !m.fused_attention; });
    f.kv_memory = unfused && hi >= 4096 && hi >= 4 * lo && base.size() >= 8;
    f.half_rows = !split && batch >= 8 && dec.size() >= 8;
    f.stream_cap = one_engine && fast >= 2 && slow >= 2 && base.size() >= 6;
    // Start where the cap binds: a min() has no gradient where it does not.
    if (f.stream_cap) e.stream_cap = 0.4 * fastest;
    if (e.per_kernel.value() <= 0) e.per_kernel = make_seconds(5e-6);
    d = calibrate(base, e, f);
    decode_fields = packing{f}.size();
    e = d.profile;
    if (f.stream_cap && e.stream_cap >= fastest) e.stream_cap = 0;  // never binds: no cap
    if (split && batch >= 8) {
      fit_fields shape{false, false, false};
      shape.half_rows = true;
      e = calibrate(dec, e, shape).profile;
    }
  }
  if (have_p && have_d) prefill_stage();
  calibration_result out;
  out.profile = e;
  out.memory_sd = have_d ? d.memory_sd : 0;
  out.per_step_sd = have_d ? d.per_step_sd : 0;
  out.per_kernel_sd = have_d ? d.per_kernel_sd : 0;
  // Unfitted, the handling keeps its default and that default's spread.
  out.per_request_sd = request_fitted ? std::min(p.per_request_sd, e.per_request.value()) : start.per_request_sd.value();
  // A field pinned at its bound has no standard error; it is then never
  // taken as better known than the stage's in-sample median error.
  if (have_d) out.memory_se = std::max(out.memory_sd, d.median_ape * e.memory);
  out.compute_se = have_p ? std::max(p.compute_sd, p.median_ape * e.compute) : 0;
  // The band is a prediction band, not a confidence band: a new point
  // scatters around the fit as the fitted points do (their residual standard
  // deviation in log space, per stage), on top of the shares' standard errors.
  const auto scatter = [&](const std::vector<measurement>& pts, int fitted) {
    double ss = 0;
    for (const auto& m : pts) ss += std::pow(std::log(predict(m, e) / m.value), 2);
    return std::sqrt(ss / std::max(1.0, double(pts.size()) - fitted));
  };
  if (have_d) out.memory_sd = std::hypot(out.memory_se, scatter(dec, decode_fields) * e.memory);
  out.compute_sd = have_p ? std::hypot(out.compute_se, scatter(pre, prefill_fields) * e.compute) : 0;
  // Overheads the data cannot pin down (standard error above the value)
  // trade off against each other; moving each by its own error would count
  // the same uncertainty twice, so their band stops at zero and twice the value.
  out.per_step_sd = std::min(out.per_step_sd, e.per_step.value());
  out.per_kernel_sd = std::min(out.per_kernel_sd, e.per_kernel.value());
  out.points = rows.size();
  std::vector<double> apes;
  for (const auto& m : rows) {
    const double pr = predict(m, e);
    out.residuals.push_back(std::log(pr / m.value));
    apes.push_back(ape(pr, m.value));
  }
  out.median_ape = median(apes);
  return out;
}

}  // namespace llmroof
