// SPDX-License-Identifier: Apache-2.0
// Private to estimate() (estimate/estimate_entry.cpp): the "auto" layout choice.
#pragma once
#include "capplan/sim/estimate/estimate.hpp"

namespace capplan::sim {

// The estimate of the fastest layout that fits in memory among those the request's fixed fields
// allow (the least memory when none fits, said with what host offload would do); the layouts'
// diagnostics when none passes check_layout.
Result<Estimate> estimate_auto_layout(const Scenario& s, const OpCostModel& cost);

}  // namespace capplan::sim
