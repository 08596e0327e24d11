// SPDX-License-Identifier: Apache-2.0
// The cost-model choice shared by `capplan estimate --profile` and the desktop app.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "capplan/data/catalog.hpp"
#include "capplan/data/cost_model.hpp"
#include "capplan/data/findings.hpp"
#include "capplan/data/profile_io.hpp"
#include "capplan/data/scenario_io.hpp"
#include "test_support.hpp"

namespace capplan::data {
namespace {

sim::Profile fixture_profile() {
  std::ifstream in(std::string(CAPPLAN_SOURCE_DIR) + "/tests/fixtures/calibrate/synthetic-h100-profile.json");
  std::stringstream ss;
  ss << in.rdbuf();
  auto p = parse_profile(ss.str(), "synthetic-h100-profile.json");
  EXPECT_TRUE(p.has_value());
  return p ? *p : sim::Profile{};
}

ParsedScenario example() {
  auto catalogs = load_catalogs(test::source_data_dir());
  EXPECT_TRUE(catalogs.has_value());
  auto parsed = parse_scenario(example_scenario(), *catalogs);
  EXPECT_TRUE(parsed.has_value());
  return *parsed;
}

TEST(CostModel, WithoutAProfileIsTheDatasheetModelAndAddsNoProfileWarnings) {
  const ParsedScenario s = example();
  EXPECT_EQ(make_cost_model(s.scenario.cluster, nullptr)->source(), "datasheet");
  auto e = estimate_with_profile(s.scenario, nullptr);
  ASSERT_TRUE(e.has_value());
  for (const auto& w : render(e->findings)) EXPECT_FALSE(w.starts_with("profile: ")) << w;
}

TEST(CostModel, AProfilePricesWithCalibratedCostAndListsWhatFellBackToTheDatasheet) {
  const ParsedScenario s = example();
  const sim::Profile profile = fixture_profile();
  auto datasheet = estimate_with_profile(s.scenario, nullptr);
  auto calibrated = estimate_with_profile(s.scenario, &profile);
  ASSERT_TRUE(datasheet.has_value() && calibrated.has_value());
  EXPECT_EQ(calibrated->step.cost_model.rfind("calibrated: synthetic H100", 0), 0u) << calibrated->step.cost_model;
  EXPECT_NE(calibrated->step.time.base(), datasheet->step.time.base());
  int fallbacks = 0;
  for (const auto& w : render(calibrated->findings)) {
    if (w.starts_with("profile: ")) {
      ++fallbacks;
      EXPECT_TRUE(w.ends_with("datasheet used")) << w;
    }
  }
  EXPECT_GE(fallbacks, 1);
  // The planner's factory builds the same model for any offering's cluster.
  auto factory = cost_model_factory(std::make_shared<const sim::Profile>(profile));
  EXPECT_EQ(factory(s.scenario.cluster)->source(), calibrated->step.cost_model);
}

}  // namespace
}  // namespace capplan::data
