// SPDX-License-Identifier: Apache-2.0
// Private to estimate() (estimate/estimate_entry.cpp): the "auto" layout choice.
#pragma once
#include <optional>

#include "capplan/sim/estimate/estimate.hpp"

namespace capplan::sim {

// The estimate of the fastest layout that fits in memory among those the request's fixed fields
// allow (the least memory when none fits, said with what host offload would do); the layouts'
// diagnostics when none passes check_layout.
Result<Estimate> estimate_auto_layout(const Scenario& s, const OpCostModel& cost);

// When the layout needing the least memory does not fit: the change the user and the recipe left
// open, and the stack runs, that would make it fit (full recompute, then host offload of the
// optimizer, then ZeRO-3 with the parameters on the host), as a finding with the memory it would
// need; nullopt when none would.
std::optional<Finding> remedy_would_fit(const Scenario& s, const Parallelism& least_memory, int micro_batches);

}  // namespace capplan::sim
