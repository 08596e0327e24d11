// SPDX-License-Identifier: Apache-2.0
// Private to goodput/: the parts of compute_goodput (goodput.cpp) that live in their own files,
// the storage and data loading (data_loading.cpp) and the money (run_cost.cpp).
#pragma once
#include <limits>
#include <vector>

#include "capplan/sim/goodput/goodput.hpp"

namespace capplan::sim {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kHoursPerYear = 8760.0;
inline constexpr double kHoursPerMonth = kHoursPerYear / 12.0;

// The storage checkpoints are written to and data read from: the scenario's tier, else the
// catalog's default tier (said), else the node's network as an optimistic stand-in (said).
StorageTier resolve_storage_tier(const GoodputInputs& in, std::vector<Finding>& findings);

// g.data for the run's token rate from `tier` on the cluster's nodes; a bound input pipeline is said.
void check_data_loading(Goodput& g, const GoodputInputs& in, const StorageTier& tier, double tokens_per_s,
                        std::vector<Finding>& findings);

// Cost of the run for its expected wall time g.wall (see docs/model.md, "Cost beyond the sticker
// price"); the inputs it misses are listed and said.
CostBreakdown run_cost(const GoodputInputs& in, const Goodput& g, std::vector<Finding>& findings);

}  // namespace capplan::sim
