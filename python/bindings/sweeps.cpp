// Vectorised sweeps: every compiled deployment (the Python layer resolves one
// per model, device, weights and kv combination) times
// every point of flat (batch, context) or (prompt, context) arrays, computed
// with the GIL released into numpy arrays, split over threads.
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <exception>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <string>
#include <limits>
#include <thread>
#include <vector>

#include "bindings.hpp"

namespace llmroof::python {

namespace {

using column = Eigen::ArrayXd;

struct combo {
  deployment dep;
  double kv_budget;  // bytes per device; < 0 when the weights do not fit
};

// The compiled deployments of a sweep (llmroof._core.deployment.Deployment,
// resolved as decode and prefill resolve them), each with its KV budget.
std::vector<combo> combos(const py::list& deployments) {
  std::vector<combo> out;
  for (const auto& d : deployments) {
    const deployment& dep = deployment_of(d);
    dep.require_device();
    out.push_back({dep, dep.memory(1, 0).kv_budget.value()});
  }
  return out;
}

// The two point axes of a sweep: equal lengths, each value in [lo, 1e12].
void check_axes(const Eigen::Ref<const column>& x, const char* x_name, double x_lo, const Eigen::Ref<const column>& y,
                const char* y_name, double y_lo) {
  if (x.size() != y.size()) {
    detail::fail(std::string(x_name) + " and " + y_name + " sizes",
                 "equal (" + std::string(y_name) + " has " + detail::show(double(y.size())) + ")", double(x.size()));
  }
  for (Eigen::Index i = 0; i < x.size(); ++i) detail::require_in(x_name, x[i], x_lo, 1e12);
  for (Eigen::Index i = 0; i < y.size(); ++i) detail::require_in(y_name, y[i], y_lo, 1e12);
}

// A sweep's result: every number column in one row-major block (a row per
// column, so the DataFrame takes the block without copying it) and the flag
// columns as bools, named in the order a point sets them. Rows run
// combination-major (for_each_point), so a row's combination is row / points.
// The arrays are numpy's from the start: numpy asks the kernel for huge pages
// for large arrays, so first touching a million points' ~100 MB costs ~11 ms
// instead of ~45 ms of page faults (the write is most of a sweep's cost past
// the estimates). Built with the GIL held; set() runs without it.
class columns {
 public:
  columns(std::initializer_list<const char*> numbers, std::initializer_list<const char*> flags, Eigen::Index rows)
      : numbers_(numbers), flags_(flags), rows_(rows),
        values_({static_cast<py::ssize_t>(numbers.size()), static_cast<py::ssize_t>(rows)}),
        numbers_at_(values_.mutable_data()) {
    for (std::size_t i = 0; i < flags_.size(); ++i) {
      flag_values_.emplace_back(static_cast<py::ssize_t>(rows));
      flags_at_.push_back(flag_values_.back().mutable_data());
    }
  }

  void set(Eigen::Index row, std::initializer_list<double> numbers, std::initializer_list<bool> flags) {
    // A value short would leave numpy memory unset: a programming error.
    if (numbers.size() != numbers_.size() || flags.size() != flags_.size()) {
      throw std::logic_error("sweep row: values do not match the columns");
    }
    double* v = numbers_at_ + row;
    for (double x : numbers) {
      *v = x;
      v += rows_;
    }
    auto f = flags_at_.begin();
    for (bool x : flags) (*f++)[row] = x;
  }

  /// {"names": [...], "values": float64[names, rows], "flags": {name: bool[rows]}}.
  [[nodiscard]] py::dict to_dict() const {
    py::dict flags;
    for (std::size_t i = 0; i < flags_.size(); ++i) flags[flags_[i]] = flag_values_[i];
    py::dict out;
    out["names"] = numbers_;
    out["values"] = values_;
    out["flags"] = flags;
    return out;
  }

 private:
  std::vector<const char*> numbers_, flags_;
  Eigen::Index rows_;
  py::array_t<double> values_;
  double* numbers_at_;
  std::vector<py::array_t<bool>> flag_values_;
  std::vector<bool*> flags_at_;
};

// Calls body(combo, i, j) for point i of every combination (j: its
// row in the flat output, combination-major), in contiguous blocks over
// `threads` threads (0: one per hardware thread; Python passes the CPUs the
// process may use). Rows are disjoint, so the threads share nothing they
// write; the first exception is rethrown.
template <class Body>
void for_each_point(const std::vector<combo>& cs, Eigen::Index n, int threads, Body&& body) {
  detail::require_in("threads", threads, 0, 4096);
  const Eigen::Index total = n * static_cast<Eigen::Index>(cs.size());
  const auto run = [&](Eigen::Index from, Eigen::Index to) {
    if (from >= to) return;
    std::size_t c = static_cast<std::size_t>(from / n);
    Eigen::Index i = from % n;
    for (Eigen::Index j = from; j < to; ++j) {
      body(cs[c], i, j);
      if (++i == n) {
        i = 0;
        ++c;
      }
    }
  };
  Eigen::Index t = threads > 0 ? threads : std::max(1U, std::thread::hardware_concurrency());
  // Each thread takes at least 16,384 points: starting one costs ~50 us.
  t = std::min(t, std::max<Eigen::Index>(1, total / 16384));
  py::gil_scoped_release release;
  if (t == 1) return run(0, total);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(t));
  std::vector<std::thread> pool;
  try {
    for (Eigen::Index w = 1; w < t; ++w) {
      pool.emplace_back([&, w] {
        try {
          run(total * w / t, total * (w + 1) / t);
        } catch (...) {
          errors[static_cast<std::size_t>(w)] = std::current_exception();
        }
      });
    }
  } catch (...) {
    // No more threads (a process limit): the blocks of threads not started run here.
    for (Eigen::Index w = static_cast<Eigen::Index>(pool.size()) + 1; w < t; ++w) {
      try {
        run(total * w / t, total * (w + 1) / t);
      } catch (...) {
        errors[static_cast<std::size_t>(w)] = std::current_exception();
      }
    }
  }
  try {
    run(0, total / t);  // this thread takes the first block
  } catch (...) {
    errors[0] = std::current_exception();
  }
  for (std::thread& th : pool) th.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

// All devices' power over a step (energy.hpp), W; NaN (pandas' missing
// value) for a device without a TDP figure.
double power_of(const deployment& d, const phase_timing& p) {
  if (!(d.dev().tdp_w > 0)) return std::numeric_limits<double>::quiet_NaN();
  return d.devices() * step_power_w(d.dev(), p, {}, d.parallel().pp);
}

// Decode steps of `batch` sequences at `context` tokens, every combination.
py::dict sweep_decode(const std::vector<combo>& cs, const Eigen::Ref<const column>& batch,
                      const Eigen::Ref<const column>& context, int threads) {
  columns out({"batch", "context", "tpot_s_bound", "tpot_s_estimate", "bytes_per_step", "weight_bytes_per_step",
               "kv_read_bytes_per_step", "flop_per_step", "tokens_per_s_per_user_estimate",
               "tokens_per_s_per_user_bound", "tokens_per_s_total_estimate", "power_w", "joules_per_token"},
              {"fits", "compute_bound"}, batch.size() * static_cast<Eigen::Index>(cs.size()));
  for_each_point(cs, batch.size(), threads, [&](const combo& k, Eigen::Index i, Eigen::Index j) {
    const deployment& d = k.dep;
    const phase_timing p = d.decode(batch[i], context[i]);
    // One device: its KV budget against the batch's sequences (what memory()
    // finds, without planning the rest again per point).
    const bool fit =
        d.devices() == 1
            ? k.kv_budget >= 0 &&
                  batch[i] * kv_bytes_per_sequence(d.model, d.pr.kv, context[i], d.engine.block_tokens).value() <=
                      k.kv_budget
            : d.memory(batch[i], context[i]).fits;
    const double watts = power_of(d, p);
    out.set(j, {batch[i], context[i], p.bound.value(), p.estimate.value(), p.counts.total_bytes().value(),
             p.counts.weight_bytes().value(), p.counts.kv_read_bytes().value(), p.counts.total_flop().value(),
             1.0 / p.estimate.value(), 1.0 / p.bound.value(), batch[i] / p.estimate.value(), watts,
             watts * p.estimate.value() / batch[i]},
            {fit, p.limit() == bottleneck::compute});
  });
  return out.to_dict();
}

// Prefills of `prompt` tokens after `cached` ones, every combination.
py::dict sweep_prefill(const std::vector<combo>& cs, const Eigen::Ref<const column>& prompt,
                       const Eigen::Ref<const column>& cached, int threads) {
  columns out({"prompt", "cached", "ttft_s_bound", "ttft_s_estimate", "flop", "bytes",
               "prefill_tokens_per_s_estimate", "power_w", "joules_per_token"},
              {}, prompt.size() * static_cast<Eigen::Index>(cs.size()));
  for_each_point(cs, prompt.size(), threads, [&](const combo& k, Eigen::Index i, Eigen::Index j) {
    const phase_timing p = k.dep.prefill(prompt[i], cached[i]);
    const double watts = power_of(k.dep, p);
    out.set(j, {prompt[i], cached[i], p.bound.value(), p.estimate.value(), p.counts.total_flop().value(),
             p.counts.total_bytes().value(), prompt[i] / p.estimate.value(), watts,
             watts * p.estimate.value() / prompt[i]},
            {});
  });
  return out.to_dict();
}

}  // namespace

void register_sweeps(py::module_& m) {
  m.def(
      "time_decode_ns",
      [](const py::dict& model, const py::dict& dev, const std::string& weights, double batch, int n) {
        // Wall time of n single decode-step estimates in C++ (the context
        // changes every call so nothing is hoisted), in ns per estimate.
        detail::require_in("n", n, 1, 1e9);
        const architecture a = arch_from_dict(model);
        const device d = device_from_dict(dev);
        const precision pr = precision::of(find_format(weights), find_format("bf16"));
        const roofline r(d);
        py::gil_scoped_release release;
        double sink = 0;
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < n; ++i) sink += decode_step(a, pr, r, batch, 1024.0 + (i & 1023)).estimate.value();
        const auto t1 = std::chrono::steady_clock::now();
        if (sink < 0) throw std::logic_error("negative time");
        return std::chrono::duration<double, std::nano>(t1 - t0).count() / n;
      },
      py::arg("model"), py::arg("device"), py::arg("weights"), py::arg("batch"), py::arg("n"));

  m.def(
      "sweep",
      [](const std::string& phase, const py::list& deployments, const Eigen::Ref<const column>& x,
         const Eigen::Ref<const column>& y, int threads) {
        if (phase != "decode" && phase != "prefill") {
          throw std::invalid_argument("phase must be decode or prefill (got '" + phase + "')");
        }
        const bool decode = phase == "decode";
        check_axes(x, decode ? "batch" : "prompt", 1, y, decode ? "context" : "cached", 0);
        const auto cs = combos(deployments);
        return decode ? sweep_decode(cs, x, y, threads) : sweep_prefill(cs, x, y, threads);
      },
      py::arg("phase"), py::arg("deployments"), py::arg("x"), py::arg("y"), py::arg("threads"));
}

}  // namespace llmroof::python
