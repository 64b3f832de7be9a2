// Serving: a workload on a deployment, by job. Include what you need, or
// this header for all of them.
#pragma once

#include "llmroof/serving/alternatives.hpp"  // IWYU pragma: export
#include "llmroof/serving/capacity_search.hpp"      // IWYU pragma: export
#include "llmroof/serving/load_model.hpp"          // IWYU pragma: export
#include "llmroof/serving/plan.hpp"          // IWYU pragma: export
#include "llmroof/serving/serving_limit.hpp" // IWYU pragma: export
#include "llmroof/serving/workload.hpp"      // IWYU pragma: export
