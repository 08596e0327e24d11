// SPDX-License-Identifier: Apache-2.0
// The cost-model choice shared by `capplan estimate --profile` and the desktop app.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

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


TEST(CostModel, AProfileFromAnotherDeviceIsOneWarningWithACount) {
  // A CPU profile on an H100 scenario used to print one warning per kind of op (~30) and call the
  // result "calibrated"; now one warning counts the operations priced from the CPU's measurements.
  const ParsedScenario s = example();
  sim::Profile cpu = fixture_profile();
  cpu.context["backend"] = "host";
  cpu.context["device"] = "AMD EPYC 7763";
  auto e = estimate_with_profile(s.scenario, &cpu);
  ASSERT_TRUE(e.has_value());
  std::vector<std::string> profile_lines;
  for (const auto& w : render(e->findings)) {
    if (w.starts_with("profile: ")) profile_lines.push_back(w);
  }
  ASSERT_EQ(profile_lines.size(), 1u);
  EXPECT_NE(profile_lines[0].find("profile: profile measured on AMD EPYC 7763 (host), scenario GPU is h100-sxm-80gb: "),
            std::string::npos)
      << profile_lines[0];
  EXPECT_NE(profile_lines[0].find(" operations priced from another device's measurements"), std::string::npos);
  int priced = 0;
  for (const auto& f : e->findings) {
    if (f.code == sim::FindingCode::profile_other_device) priced = static_cast<int>(f.number("operations"));
  }
  EXPECT_GT(priced, 0);
  EXPECT_NE(e->step.cost_model.find("measured on another device than the scenario's h100-sxm-80gb"),
            std::string::npos)
      << e->step.cost_model;
  // The same profile on its own GPU (a word of the device is the GPU id's model) is not foreign.
  EXPECT_TRUE(sim::profile_measured_on(fixture_profile(), s.scenario.cluster.gpu));
  EXPECT_FALSE(sim::profile_measured_on(cpu, s.scenario.cluster.gpu));
}

TEST(CostModel, ARunsFitAloneIsTheDatasheetModelWithItsParameters) {
  const ParsedScenario s = example();
  sim::Profile p;
  p.context = {{"backend", "runs"}, {"device", "h100-sxm-80gb"}, {"host", "runs.json"},
               {"date_utc", "2026-12-02T10:00:00Z"}, {"capplan_version", "0.1.0"}};
  sim::RunsFit f;
  f.gemm_efficiency_scale.param.value = 0.8;
  f.scale_up_busbw_scale.param.value = 1.0;
  f.scale_out_busbw_scale.param.value = 1.0;
  f.per_op_overhead_s.param.value = 0.0;
  f.runs = 6;
  p.runs_fit = f;
  EXPECT_EQ(make_cost_model(s.scenario.cluster, &p)->source(), "calibrated from 6 runs: h100-sxm-80gb (2026-12-02)");
  auto datasheet = estimate_with_profile(s.scenario, nullptr);
  auto fitted = estimate_with_profile(s.scenario, &p);
  ASSERT_TRUE(datasheet.has_value() && fitted.has_value());
  // GEMMs at 0.8 of their datasheet rate: the step is slower, by less than 1/0.8 (not all is GEMM).
  EXPECT_GT(fitted->step.time.base(), datasheet->step.time.base() * 1.05);
  EXPECT_LT(fitted->step.time.base(), datasheet->step.time.base() / 0.8);
  for (const auto& w : render(fitted->findings)) EXPECT_FALSE(w.starts_with("profile: ")) << w;
}

}  // namespace
}  // namespace capplan::data
