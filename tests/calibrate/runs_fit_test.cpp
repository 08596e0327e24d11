// SPDX-License-Identifier: Apache-2.0
// calibrate --from-runs: synthetic runs made by the simulator with known parameters are fitted
// back to those parameters; bounds, unidentifiable tiers and too few runs.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "capplan/calibrate/runs_fit.hpp"
#include "capplan/data/input_file.hpp"
#include "capplan/data/profile_io.hpp"
#include "capplan/data/runs_io.hpp"
#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/estimate/estimate.hpp"
#include "../data/test_support.hpp"

namespace capplan::calib {
namespace {

namespace fs = std::filesystem;

// The parameters examples/from-runs/runs.json was generated with (its "note" says so).
constexpr std::array<double, kRunsParams> kKnown = {0.8, 1.0, 0.6, 20e-6};

fs::path example_runs() { return fs::path(CAPPLAN_SOURCE_DIR) / "examples" / "from-runs" / "runs.json"; }

// The example's runs, their measurements replaced by the simulator's step time at `x`.
std::vector<data::MeasuredRun> synthetic_runs(const std::array<double, kRunsParams>& x) {
  auto runs = data::load_runs(example_runs(), data::test::real_catalogs());
  EXPECT_TRUE(runs.has_value()) << (runs ? "" : to_string(runs.error()));
  if (!runs) return {};
  for (auto& r : runs->runs) {
    auto t = predict_step_s(r, x);
    EXPECT_TRUE(t.has_value()) << r.label;
    r.metric = data::RunMetric::step_time_s;
    r.value = t.value_or(1.0);
  }
  return runs->runs;
}

TEST(RunsFit, ExampleMeasurementsAreTheSyntheticGeneratorsOutput) {
  // examples/from-runs/runs.json is labelled synthetic: its numbers must be exactly what the
  // simulator gives at kKnown (to the 6 significant digits written), not invented.
  auto runs = data::load_runs(example_runs(), data::test::real_catalogs());
  ASSERT_TRUE(runs.has_value()) << to_string(runs.error());
  ASSERT_EQ(runs->runs.size(), 8u);
  EXPECT_NE(runs->note.find("SYNTHETIC"), std::string::npos);
  for (const auto& r : runs->runs) {
    auto t = predict_step_s(r, kKnown);
    ASSERT_TRUE(t.has_value()) << r.label;
    EXPECT_NEAR(r.value / *t, 1.0, 1e-5) << r.label << ": simulator gives " << *t;
  }
}

TEST(RunsFit, RecoversKnownParametersFromSyntheticRuns) {
  const auto runs = synthetic_runs(kKnown);
  ASSERT_EQ(runs.size(), 8u);
  auto fit = fit_runs(runs);
  ASSERT_TRUE(fit.has_value()) << to_string(fit.error());
  const auto& f = fit->fit;
  // Noise-free data from the same simulator: the minimum is at kKnown with zero residual, so LM
  // reaches it to its convergence tolerance. 1e-3 relative (1e-3 of 20 us = 20 ns) is far above
  // that and far below any difference that would matter (a 0.1% GEMM efficiency).
  EXPECT_NEAR(f.gemm_efficiency_scale.param.value, 0.8, 0.8e-3);
  EXPECT_NEAR(f.scale_out_busbw_scale.param.value, 0.6, 0.6e-3);
  EXPECT_NEAR(f.per_op_overhead_s.param.value, 20e-6, 20e-9);
  EXPECT_NEAR(f.scale_up_busbw_scale.param.value, 1.0, 1e-3);
  EXPECT_EQ(f.gemm_efficiency_scale.param.source, sim::ParamSource::fitted);
  EXPECT_EQ(f.runs, 8);
  EXPECT_LT(f.rms_log_residual, 1e-4);
  EXPECT_LT(f.loo_mape, 1e-3);  // every left-out run is predicted by the same exact parameters
  ASSERT_EQ(f.per_run.size(), 8u);
  for (const auto& r : f.per_run) {
    EXPECT_GT(std::fabs(r.before_s / r.measured_s - 1), 0.01) << r.label;  // the datasheet model is off
    EXPECT_NEAR(r.after_s / r.measured_s, 1.0, 1e-3) << r.label;
    EXPECT_NEAR(r.loo_s / r.measured_s, 1.0, 2e-3) << r.label;
  }
}

TEST(RunsFit, AStandardErrorGrowsWithNoise) {
  // 2% multiplicative noise, alternating sign: the fit no longer passes through every run, the
  // residual is about 2% and every fitted parameter has a positive standard error.
  auto runs = synthetic_runs(kKnown);
  for (std::size_t i = 0; i < runs.size(); ++i) runs[i].value *= (i % 2 == 0 ? 1.02 : 0.98);
  auto fit = fit_runs(runs);
  ASSERT_TRUE(fit.has_value()) << to_string(fit.error());
  EXPECT_GT(fit->fit.rms_log_residual, 0.005);
  EXPECT_LT(fit->fit.rms_log_residual, 0.03);
  EXPECT_GT(fit->fit.gemm_efficiency_scale.std_error, 0);
  EXPECT_GT(fit->fit.loo_mape, 0.005);
}

TEST(RunsFit, ParametersStayInsideTheirBounds) {
  // Measurements 3x slower than even the slowest bounds can explain (no overhead change fits that):
  // the GEMM scale stops at 0.3 and the note says the runs ask for more.
  auto runs = synthetic_runs({0.3, 0.1, 0.1, 200e-6});
  for (auto& r : runs) r.value *= 3.0;
  auto fit = fit_runs(runs);
  ASSERT_TRUE(fit.has_value()) << to_string(fit.error());
  const auto& f = fit->fit;
  const sim::RunsFitParam* ps[] = {&f.gemm_efficiency_scale, &f.scale_up_busbw_scale, &f.scale_out_busbw_scale,
                                   &f.per_op_overhead_s};
  for (int j = 0; j < kRunsParams; ++j) {
    EXPECT_GE(ps[j]->param.value, kRunsBounds[j].lo) << j;
    EXPECT_LE(ps[j]->param.value, kRunsBounds[j].hi) << j;
  }
  EXPECT_DOUBLE_EQ(f.gemm_efficiency_scale.param.value, 0.3);
  bool noted = false;
  for (const auto& n : fit->notes) noted = noted || n.find("gemm_efficiency_scale ended at its bound") == 0;
  EXPECT_TRUE(noted);
}

TEST(RunsFit, AGemmScaleNeverLiftsAGemmAbovePeak) {
  // The H800's GEMM ceiling is 0.803 of peak (H100 MAMF proxy); x1.3 would be 1.04: capped at 1.
  // The fastest GEMM step then runs at the dense peak, never faster: MFU stays at most 1.
  auto runs = data::load_runs(example_runs(), data::test::real_catalogs());
  ASSERT_TRUE(runs.has_value());
  const auto& s = runs->runs.front().scenario;
  const sim::DatasheetCost fast(s.cluster, sim::with_runs_fit({}, runs_fit_of({1.3, 1.0, 1.0, 0.0})));
  auto e = sim::estimate(s, fast);
  ASSERT_TRUE(e.has_value());
  EXPECT_LE(e->step.mfu, 1.0);
  EXPECT_LE(fast.gemm_ceiling(), 1.0);
}

TEST(RunsFit, ATierNoRunUsesIsNotIdentifiable) {
  // Only the single-node runs (1, 2 and 7): no traffic leaves a node, so the scale-out busbw is
  // left at 1 and said to be not identifiable.
  const auto all = synthetic_runs(kKnown);
  std::vector<data::MeasuredRun> one_node = {all[0], all[1], all[6]};
  auto fit = fit_runs(one_node);
  ASSERT_TRUE(fit.has_value()) << to_string(fit.error());
  EXPECT_EQ(fit->fit.scale_out_busbw_scale.param.source, sim::ParamSource::datasheet);
  EXPECT_DOUBLE_EQ(fit->fit.scale_out_busbw_scale.param.value, 1.0);
  EXPECT_NE(fit->not_fitted[2].find("not identifiable from these runs (no run has traffic on the scale-out tier)"),
            std::string::npos)
      << fit->not_fitted[2];
}

TEST(RunsFit, FewerRunsThanParametersHoldTheWeakestAtTheirNeutralValue) {
  // Two runs, three identifiable parameters (both single-node): only one can be fitted (n > p),
  // the others are held at 1 / 0 and say why.
  const auto all = synthetic_runs(kKnown);
  auto fit = fit_runs({all[0], all[6]});
  ASSERT_TRUE(fit.has_value()) << to_string(fit.error());
  int fitted = 0, held = 0;
  for (int j = 0; j < kRunsParams; ++j) {
    if (fit->not_fitted[j].empty()) ++fitted;
    if (fit->not_fitted[j].find("cannot fit") != std::string::npos) ++held;
  }
  EXPECT_EQ(fitted, 1);
  EXPECT_GE(held, 1);
  // One run: nothing can be fitted, and leave-one-out is not possible.
  auto single = fit_runs({all[0]});
  ASSERT_TRUE(single.has_value());
  for (int j = 0; j < kRunsParams; ++j) EXPECT_FALSE(single->not_fitted[j].empty()) << j;
}

// examples/from-runs/profile.json is what `capplan calibrate --from-runs examples/from-runs/runs.json
// --out examples/from-runs/profile.json` writes: the same runs measured, the same fitted numbers
// (to 1e-6 relative; the fit stops on a sum-of-squares test, so the last digits may move with the
// compiler).
TEST(RunsFit, ExampleProfileIsTheFitOfTheExampleRuns) {
  auto runs = data::load_runs(example_runs(), data::test::real_catalogs());
  ASSERT_TRUE(runs.has_value()) << to_string(runs.error());
  auto fit = fit_runs(runs->runs);
  ASSERT_TRUE(fit.has_value()) << to_string(fit.error());
  const fs::path committed = fs::path(CAPPLAN_SOURCE_DIR) / "examples" / "from-runs" / "profile.json";
  auto text = data::read_input_file(committed.string());
  ASSERT_TRUE(text.has_value()) << text.error();
  auto profile = data::parse_profile(*text, committed.string());
  ASSERT_TRUE(profile.has_value()) << to_string(profile.error());
  ASSERT_TRUE(profile->runs_fit.has_value());
  const sim::RunsFit& want = *profile->runs_fit;
  const sim::RunsFit& got = fit->fit;
  const auto near = [](double a, double b) { return std::fabs(a - b) <= 1e-6 * std::max(std::fabs(a), std::fabs(b)); };
  EXPECT_TRUE(near(got.gemm_efficiency_scale.param.value, want.gemm_efficiency_scale.param.value));
  EXPECT_TRUE(near(got.scale_up_busbw_scale.param.value, want.scale_up_busbw_scale.param.value));
  EXPECT_TRUE(near(got.scale_out_busbw_scale.param.value, want.scale_out_busbw_scale.param.value));
  EXPECT_TRUE(near(got.per_op_overhead_s.param.value, want.per_op_overhead_s.param.value));
  ASSERT_EQ(got.per_run.size(), want.per_run.size());
  for (std::size_t i = 0; i < got.per_run.size(); ++i) {
    EXPECT_EQ(got.per_run[i].label, want.per_run[i].label);
    EXPECT_TRUE(near(got.per_run[i].measured_s, want.per_run[i].measured_s))
        << want.per_run[i].label << ": the runs file measures " << got.per_run[i].measured_s << " s, the profile "
        << want.per_run[i].measured_s << " s (regenerate the profile)";
    EXPECT_TRUE(near(got.per_run[i].before_s, want.per_run[i].before_s)) << want.per_run[i].label;
    EXPECT_TRUE(near(got.per_run[i].after_s, want.per_run[i].after_s)) << want.per_run[i].label;
  }
}

}  // namespace
}  // namespace capplan::calib
