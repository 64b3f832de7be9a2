// Serving: a workload on a deployment, by job. Include what you need, or
// this header for all of them.
#pragma once

#include "llmroof/alternatives.hpp"  // IWYU pragma: export
#include "llmroof/capacity.hpp"      // IWYU pragma: export
#include "llmroof/load.hpp"          // IWYU pragma: export
#include "llmroof/plan.hpp"          // IWYU pragma: export
#include "llmroof/serving_limit.hpp" // IWYU pragma: export
#include "llmroof/workload.hpp"      // IWYU pragma: export
