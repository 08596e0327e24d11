// SPDX-License-Identifier: Apache-2.0
// Private to estimate() (estimate_entry.cpp) and its "auto" layout choice
// (estimate/strategy_search.cpp).
#pragma once
#include "capplan/sim/workload/scenario.hpp"

namespace capplan::sim {

// A complete layout built from the request, with defaults for what is unset: the layout of a
// request that fixes every field that matters, and what is checked to report why nothing matched
// when the fixed fields themselves are inconsistent.
Parallelism fill_defaults(const Scenario& s);

}  // namespace capplan::sim
