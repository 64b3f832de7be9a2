// A deployment: one model in one precision on a device plan under an engine,
// as the command and the bindings resolve it from their options. The
// modelling functions take its parts; reports say what it was.
#pragma once

#include <optional>

#include "llmroof/compare.hpp"
#include "llmroof/readers.hpp"

namespace llmroof {

struct deployment {
  const architecture* model = nullptr;
  const device* dev = nullptr;  ///< null for device-free questions (kv)
  int devices = 1;              ///< all devices of the plan
  parallel_plan parallel;       ///< tp / pp / ep over them
  precision pr;
  engine_settings engine;
  const model_source* source = nullptr;  ///< set when the model came from a file

  /// The weights as the device holds them: a file's exact bytes when the
  /// model came from one (else unset: counted from the architecture).
  [[nodiscard]] std::optional<bytes> stored_weights() const {
    return source != nullptr ? std::optional<bytes>(loaded_weight_bytes(*source, pr)) : std::nullopt;
  }
  /// fit_weights of this deployment at `context`. Needs a device.
  [[nodiscard]] weights_fit fit(double context) const {
    return fit_weights(*model, pr, *dev, parallel, context, engine, stored_weights());
  }
};

}  // namespace llmroof
