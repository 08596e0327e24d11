// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "capplan/sim/estimate.hpp"

namespace capplan::sim {

struct StepTiming {
  StepBreakdown breakdown;
  int micro_batches = 1;
};

// Prices the step's op list and places it on the pipeline schedule. Contract: `p` passed
// check_layout for `s`.
StepTiming time_step(const Scenario& s, const Parallelism& p, const OpCostModel& cost);

}  // namespace capplan::sim
