// Umbrella header: the whole public API of llmroof.
#pragma once

#include "llmroof/units.hpp"          // IWYU pragma: export
#include "llmroof/formats.hpp"        // IWYU pragma: export
#include "llmroof/precision.hpp"      // IWYU pragma: export
#include "llmroof/device.hpp"         // IWYU pragma: export
#include "llmroof/architecture.hpp"   // IWYU pragma: export
#include "llmroof/kv_cache.hpp"       // IWYU pragma: export
#include "llmroof/moe.hpp"            // IWYU pragma: export
#include "llmroof/ops.hpp"            // IWYU pragma: export
#include "llmroof/roofline.hpp"       // IWYU pragma: export
#include "llmroof/engine_profile.hpp" // IWYU pragma: export
#include "llmroof/phases.hpp"         // IWYU pragma: export
#include "llmroof/memory_plan.hpp"    // IWYU pragma: export
#include "llmroof/energy.hpp"         // IWYU pragma: export
#include "llmroof/prefix_cache.hpp"   // IWYU pragma: export
#include "llmroof/disaggregation.hpp" // IWYU pragma: export
#include "llmroof/speculative.hpp"    // IWYU pragma: export
#include "llmroof/serving.hpp"        // IWYU pragma: export
#include "llmroof/compare.hpp"        // IWYU pragma: export
#include "llmroof/recommend.hpp"      // IWYU pragma: export
#include "llmroof/parallel.hpp"       // IWYU pragma: export
#include "llmroof/offload.hpp"        // IWYU pragma: export
#include "llmroof/calibrate.hpp"      // IWYU pragma: export
#include "llmroof/readers.hpp"        // IWYU pragma: export
#include "llmroof/engine.hpp"         // IWYU pragma: export
#include "llmroof/deployment.hpp"     // IWYU pragma: export
#include "llmroof/version.hpp"        // IWYU pragma: export
