// SPDX-License-Identifier: Apache-2.0
#pragma once
// The cost model an estimate prices its operations with, chosen the same way everywhere
// (`capplan estimate --profile`, the desktop app's Estimate and Plan tabs): the datasheet roofline,
// or a calibration profile (sim::CalibratedCost) with the datasheet where the profile did not
// measure. Contract: pure functions, no I/O; the returned models are immutable and thread-safe.
#include <memory>
#include <string>

#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/cost/op_cost.hpp"
#include "capplan/sim/cost/profile.hpp"
#include "capplan/sim/workload/result.hpp"
#include "capplan/sim/search/search.hpp"

namespace capplan::data {

// The note added when a profile priced an estimate that carries an error band.
inline constexpr const char* kProfileBandNote =
    "the p10-p90 band was derived for the datasheet model against published runs; with a profile it is a "
    "rough guide only";

// CalibratedCost over `profile` (nullptr: DatasheetCost) for `cluster`. A profile with a runs fit and
// no measured curves (capplan calibrate --from-runs) gives the DatasheetCost with the fitted
// parameters (sim::with_runs_fit), named "calibrated from N runs: <device> (<date>)"; with measured
// curves too, the curves price what they cover and the fitted datasheet model the rest.
std::shared_ptr<const sim::OpCostModel> make_cost_model(const sim::Cluster& cluster, const sim::Profile* profile);
// The same with the datasheet model's assumptions `a` (serving: sim::serving_assumptions, where a
// kernel inside a CUDA graph costs its gap, not a host launch).
std::shared_ptr<const sim::OpCostModel> make_cost_model(const sim::Cluster& cluster, const sim::Profile* profile,
                                                        const sim::DatasheetAssumptions& a);

// The planner's factory for the same choice (one model per offering's cluster).
sim::CostModelFactory cost_model_factory(std::shared_ptr<const sim::Profile> profile);

// sim::estimate with that cost model; with a profile, the estimate's warnings gain one
// "profile: ..." line per kind of op the profile could not price for the chosen layout (each says
// the datasheet was used), in op order. No error band is applied here.
Result<sim::Estimate> estimate_with_profile(const sim::Scenario& scenario, const sim::Profile* profile);

}  // namespace capplan::data
