// SPDX-License-Identifier: Apache-2.0
#include "capplan/data/cost_model.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "capplan/data/findings.hpp"

#include "capplan/sim/cost/calibrated_cost.hpp"
#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/lowering/step_model.hpp"

namespace capplan::data {

std::shared_ptr<const sim::OpCostModel> make_cost_model(const sim::Cluster& cluster, const sim::Profile* profile) {
  return make_cost_model(cluster, profile, sim::DatasheetAssumptions{});
}

std::shared_ptr<const sim::OpCostModel> make_cost_model(const sim::Cluster& cluster, const sim::Profile* profile,
                                                        const sim::DatasheetAssumptions& a) {
  if (profile != nullptr && profile->runs_fit && !profile->has_measurements()) {
    // A profile fitted to runs alone: the datasheet model with the fitted parameters.
    return std::make_shared<const sim::DatasheetCost>(cluster, sim::with_runs_fit(a, *profile->runs_fit),
                                                      sim::runs_fit_source(*profile));
  }
  if (profile != nullptr) return std::make_shared<const sim::CalibratedCost>(*profile, cluster, a);
  return std::make_shared<const sim::DatasheetCost>(cluster, a);
}

sim::CostModelFactory cost_model_factory(std::shared_ptr<const sim::Profile> profile) {
  return [profile = std::move(profile)](const sim::Cluster& cluster) { return make_cost_model(cluster, profile.get()); };
}

Result<sim::Estimate> estimate_with_profile(const sim::Scenario& scenario, const sim::Profile* profile) {
  const auto cost = make_cost_model(scenario.cluster, profile);
  auto estimate = sim::estimate(scenario, *cost);
  if (!estimate) {
    word(estimate.error());
    return estimate;
  }
  if (profile != nullptr && profile->runs_fit && !profile->has_measurements() &&
      !sim::profile_measured_on(*profile, scenario.cluster.gpu)) {
    // A runs fit made on another GPU type: its scales price every op of this one.
    const auto ops =
        sim::build_step_ops(scenario.model, scenario.training, estimate->layout.strategy, scenario.cluster);
    sim::Finding f =
        sim::text_finding(sim::FindingCode::profile_other_device, "device", profile->context_value("device"));
    f.field = "profile";
    f.values.push_back({"operations", static_cast<double>(ops.ops.size()), {}});
    f.values.push_back({"datasheet", 0, {}});
    sim::with_text(f, "backend", profile->context_value("backend"));
    sim::with_text(f, "gpu", scenario.cluster.gpu.id);
    estimate->findings.push_back(std::move(f));
  }
  if (const auto* calibrated = dynamic_cast<const sim::CalibratedCost*>(cost.get())) {
    // What the profile did not cover, for the layout that was chosen; the field says where it comes
    // from ("profile: ..."). Two findings that read the same are one warning.
    const auto ops = sim::build_step_ops(scenario.model, scenario.training, estimate->layout.strategy, scenario.cluster);
    std::vector<std::string> seen;
    for (auto& f : calibrated->coverage(ops.ops)) {
      f.field = "profile";
      std::string words = render(f);
      if (std::find(seen.begin(), seen.end(), words) != seen.end()) continue;
      seen.push_back(std::move(words));
      estimate->findings.push_back(std::move(f));
    }
  }
  return estimate;
}

}  // namespace capplan::data
