// A deployment: one model in one precision on a device plan under an engine,
// as the command and the bindings resolve it from their options. The
// modelling functions take its parts; reports say what it was.
#pragma once

#include <optional>

#include "llmroof/compare.hpp"
#include "llmroof/readers.hpp"
#include "llmroof/engine_profile.hpp"

namespace llmroof {

/// A deployment as asked for: every choice optional, never a sentinel.
struct request {
  const architecture* model = nullptr;  ///< required
  const model_source* source = nullptr;  ///< the file the model came from, if any
  /// The model file's formats, module by module (set from `source` when null).
  std::optional<precision> file_formats;
  const device* dev = nullptr;  ///< null: a question without a device (kv)
  layout_request layout;
  std::optional<numeric_format> weights;  ///< unset: the file's formats, else bf16
  std::optional<numeric_format> kv;       ///< unset: the file's KV format, else bf16
  std::optional<numeric_format> lm_head;  ///< also the embedding table's
  std::string engine = "vllm";            ///< name[@version] (find_engine)
  engine_overrides engine_options;
  /// Unset: default_profile(device, engine), the engine's fitted or class profile.
  std::optional<efficiency_profile> efficiency;
};

struct deployment {
  const architecture* model = nullptr;
  const device* dev = nullptr;  ///< null for device-free questions (kv)
  int devices = 1;              ///< all devices of the plan
  parallel_plan parallel;       ///< tp / pp / ep over them
  precision pr;
  engine_settings engine;
  const model_source* source = nullptr;  ///< set when the model came from a file
  efficiency_profile efficiency;         ///< the engine's profile on the device

  /// The weights as the device holds them: a file's exact bytes when the
  /// model came from one (else unset: counted from the architecture).
  [[nodiscard]] std::optional<bytes> stored_weights() const {
    return source != nullptr ? std::optional<bytes>(loaded_weight_bytes(*source, pr)) : std::nullopt;
  }
  /// The device under the engine's profile (one device: the parallel plan
  /// spreads the work).
  [[nodiscard]] roofline roof() const { return roofline(*dev, efficiency); }
  /// fit_weights of this deployment at `context`. Needs a device.
  [[nodiscard]] weights_fit fit(double context) const {
    return fit_weights(*model, pr, *dev, parallel, context, engine, stored_weights());
  }
};

/// The one place where a request's formats, layout, engine settings and
/// efficiency profile are decided. Throws std::invalid_argument naming the
/// field (layout, engine, a KV format the engine cannot hold, a layout the
/// model cannot split into).
inline deployment resolve(const request& r) {
  if (r.model == nullptr) throw std::invalid_argument("model is required");
  deployment d;
  d.model = r.model;
  d.source = r.source;
  d.dev = r.dev;
  const std::optional<precision> file = r.file_formats ? r.file_formats
                                        : r.source != nullptr ? std::optional<precision>(r.source->pr)
                                                              : std::nullopt;
  const numeric_format kv = r.kv ? *r.kv : file ? file->kv : find_format("bf16");
  if (file && !r.weights) {
    d.pr = *file;  // the file's own formats, module by module
    d.pr.kv = kv;
  } else {
    d.pr = precision::of(r.weights ? *r.weights : find_format("bf16"), kv);
  }
  if (r.lm_head) {
    d.pr.lm_head = *r.lm_head;
    d.pr.embedding = *r.lm_head;
  }
  if (r.dev != nullptr) {
    d.parallel = infer_layout(r.layout);
    d.devices = d.parallel.devices();
    d.engine = configure_engine(r.engine, *r.dev, r.engine_options);
    d.efficiency = r.efficiency ? *r.efficiency : default_profile(*r.dev, d.engine.qualified_name());
    validate(d.efficiency);
  } else {
    d.engine = configure_engine(r.engine, r.engine_options);
  }
  validate_kv_format(d.engine, d.pr.kv);
  if (r.dev == nullptr) return d;
  try {
    validate(d.parallel, *r.model);
  } catch (const std::invalid_argument& e) {
    // Say where a layout nobody asked for came from.
    if (r.layout.tp || r.layout.pp || r.layout.ep || d.devices == 1) throw;
    throw std::invalid_argument(std::string(e.what()) + "; tp defaults to the " + std::to_string(d.devices) +
                                " devices: give tp, pp or ep");
  }
  return d;
}

}  // namespace llmroof
