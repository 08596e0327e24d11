// SPDX-License-Identifier: Apache-2.0
#include "capplan/data/cost_model.hpp"

#include <utility>

#include "capplan/sim/calibrated_cost.hpp"
#include "capplan/sim/datasheet_cost.hpp"
#include "capplan/sim/step_model.hpp"

namespace capplan::data {

std::shared_ptr<const sim::OpCostModel> make_cost_model(const sim::Cluster& cluster, const sim::Profile* profile) {
  if (profile != nullptr) return std::make_shared<const sim::CalibratedCost>(*profile, cluster);
  return std::make_shared<const sim::DatasheetCost>(cluster);
}

sim::CostModelFactory cost_model_factory(std::shared_ptr<const sim::Profile> profile) {
  return [profile = std::move(profile)](const sim::Cluster& cluster) { return make_cost_model(cluster, profile.get()); };
}

Result<sim::Estimate> estimate_with_profile(const sim::Scenario& scenario, const sim::Profile* profile) {
  const auto cost = make_cost_model(scenario.cluster, profile);
  auto estimate = sim::estimate(scenario, *cost);
  if (!estimate) return estimate;
  if (const auto* calibrated = dynamic_cast<const sim::CalibratedCost*>(cost.get())) {
    // What the profile did not cover, for the layout that was chosen.
    const auto ops = sim::build_step_ops(scenario.model, scenario.training, estimate->layout.strategy, scenario.cluster);
    for (auto& w : calibrated->coverage_warnings(ops.ops)) estimate->findings.push_back(sim::note("profile: " + std::move(w)));
  }
  return estimate;
}

}  // namespace capplan::data
