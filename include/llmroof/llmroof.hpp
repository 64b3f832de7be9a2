// Umbrella header: the whole public API of llmroof.
#pragma once

#include "llmroof/units/units.hpp"          // IWYU pragma: export
#include "llmroof/units/formats.hpp"        // IWYU pragma: export
#include "llmroof/model/precision.hpp"      // IWYU pragma: export
#include "llmroof/hardware/device.hpp"         // IWYU pragma: export
#include "llmroof/model/architecture.hpp"   // IWYU pragma: export
#include "llmroof/model/kv_cache.hpp"       // IWYU pragma: export
#include "llmroof/model/moe.hpp"            // IWYU pragma: export
#include "llmroof/step/ops.hpp"            // IWYU pragma: export
#include "llmroof/step/roofline.hpp"       // IWYU pragma: export
#include "llmroof/engine/engine_profile.hpp" // IWYU pragma: export
#include "llmroof/step/phases.hpp"         // IWYU pragma: export
#include "llmroof/engine/memory_plan.hpp"    // IWYU pragma: export
#include "llmroof/serving/energy.hpp"         // IWYU pragma: export
#include "llmroof/serving/prefix_cache.hpp"   // IWYU pragma: export
#include "llmroof/serving/disaggregation.hpp" // IWYU pragma: export
#include "llmroof/serving/speculative_step.hpp"    // IWYU pragma: export
#include "llmroof/serving/serving.hpp"        // IWYU pragma: export
#include "llmroof/search/compare.hpp"        // IWYU pragma: export
#include "llmroof/search/recommend.hpp"      // IWYU pragma: export
#include "llmroof/layout/parallel.hpp"       // IWYU pragma: export
#include "llmroof/layout/offload.hpp"        // IWYU pragma: export
#include "llmroof/calibration/calibrate.hpp"      // IWYU pragma: export
#include "llmroof/jobs/plan_job.hpp"          // IWYU pragma: export
#include "llmroof/jobs/users_job.hpp"         // IWYU pragma: export
#include "llmroof/model/readers.hpp"        // IWYU pragma: export
#include "llmroof/engine/engine.hpp"         // IWYU pragma: export
#include "llmroof/deployment.hpp"     // IWYU pragma: export
#include "llmroof/version.hpp"        // IWYU pragma: export
