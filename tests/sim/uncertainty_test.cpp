// SPDX-License-Identifier: Apache-2.0
// Error bars (sim/uncertainty.hpp): quantiles by hand, the residual table and its fallback chain,
// widening for a datasheet-only GPU, and the intervals derived from the band.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "capplan/sim/datasheet_cost.hpp"
#include "capplan/sim/estimate.hpp"
#include "capplan/sim/uncertainty.hpp"
#include "test_support.hpp"

namespace capplan::sim {
namespace {

using test::cluster_of;
using test::fixed_request;
using test::job_of;
using test::layout;
using test::scenario_of;

// GPT 1.3B on one 8 x H100 node, tp 2, dp 4, $3/GPU-hour. `measured_efficiencies` gives the GPU
// published GEMM and attention efficiencies (then no input widening applies).
Scenario scenario(bool measured_efficiencies, Framework framework = Framework::megatron) {
  GpuSpec gpu = test::h100_sxm();  // efficiencies 0 = unknown
  if (measured_efficiencies) {
    gpu.gemm_efficiency = 0.803;      // H100 MAMF (ml-engineering)
    gpu.attention_efficiency = 0.35;  // FlashAttention-2 on H100 (Shah et al. 2024)
  }
  Cluster c = cluster_of(gpu, 8);
  c.price_per_gpu = units::usd_per_hour(3.0);
  TrainingJob job = job_of(64, 26e9);
  job.framework = framework;
  return scenario_of(test::gpt_1_3b(), job, c, fixed_request(layout(2, 1, 4, 2)));
}

Estimate estimate_of(const Scenario& s) {
  const DatasheetCost cost(s.cluster);
  auto e = estimate(s, cost);
  EXPECT_TRUE(e.has_value()) << (e ? "" : to_string(e.error()));
  return e ? *e : Estimate{};
}

// A table with one entry: p10/p90 = ln(lo), ln(hi).
ResidualTable table_of(const std::string& category, double lo, double hi, int n = 20) {
  return ResidualTable{{{category, n, std::log(lo), std::log(hi)}}};
}

// ---------------------------------------------------------------------------------------------
// Quantiles
// ---------------------------------------------------------------------------------------------

// Definition 6: position h = (n+1)p (1-based), linear between the order statistics around it.
TEST(EmpiricalQuantile, PlottingPositionNPlusOneTimesPInterpolatesLinearly) {
  const std::vector<double> x = {0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100};  // n = 11
  // p10: h = 12 * 0.1 = 1.2 -> x1 + 0.2 (x2 - x1) = 0 + 0.2 * 10 = 2.
  EXPECT_NEAR(empirical_quantile(x, 0.10), 2.0, 1e-12);
  // p90: h = 12 * 0.9 = 10.8 -> x10 + 0.8 (x11 - x10) = 90 + 8 = 98.
  EXPECT_NEAR(empirical_quantile(x, 0.90), 98.0, 1e-12);
  // p50: h = 6 -> x6 = 50 exactly.
  EXPECT_NEAR(empirical_quantile(x, 0.50), 50.0, 1e-12);
}

TEST(EmpiricalQuantile, ClampsToTheSampleRangeWhenThePositionFallsOutside) {
  const std::vector<double> x = {1, 2, 3, 4, 5};  // n = 5
  // p10: h = 0.6 < 1 -> the minimum; p90: h = 5.4 > 5 -> the maximum.
  EXPECT_EQ(empirical_quantile(x, 0.10), 1.0);
  EXPECT_EQ(empirical_quantile(x, 0.90), 5.0);
  const std::vector<double> one = {7};
  EXPECT_EQ(empirical_quantile(one, 0.10), 7.0);
  EXPECT_EQ(empirical_quantile(one, 0.90), 7.0);
}

// ---------------------------------------------------------------------------------------------
// The residual table
// ---------------------------------------------------------------------------------------------

// measured = predicted * exp(r) for r = 0.00, 0.01, ..., 0.10 (11 samples): p10 = 0.002, p90 = 0.098
// by the same hand computation as above (scaled by 1/1000).
TEST(FitResiduals, QuantilesOfLogMeasuredOverPredicted) {
  std::vector<ResidualSample> samples;
  for (int i = 0; i <= 10; ++i) samples.push_back({"dense/megatron", 1000.0 * std::exp(0.01 * i), 1000.0});
  const ResidualTable t = fit_residuals(samples);
  const auto* q = t.find("dense/megatron");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->n, 11);
  EXPECT_NEAR(q->log_ratio_p10, 0.002, 1e-12);
  EXPECT_NEAR(q->log_ratio_p90, 0.098, 1e-12);
  // The same rows also form the arch-only and the "all" entries.
  ASSERT_NE(t.find("dense"), nullptr);
  ASSERT_NE(t.find("all"), nullptr);
  EXPECT_EQ(t.find("all")->n, 11);
  EXPECT_NEAR(t.find("all")->log_ratio_p90, 0.098, 1e-12);
}

TEST(FitResiduals, CategoriesBelowTheMinimumSampleCountAreLeftOut) {
  std::vector<ResidualSample> samples;
  for (int i = 0; i < 6; ++i) samples.push_back({"dense/megatron", 100.0 + i, 100.0});
  for (int i = 0; i < kMinResidualSamples - 1; ++i) samples.push_back({"moe/pytorch", 90.0 + i, 100.0});
  const ResidualTable t = fit_residuals(samples);
  EXPECT_NE(t.find("dense/megatron"), nullptr);
  EXPECT_EQ(t.find("moe/pytorch"), nullptr);  // 4 rows: falls back
  EXPECT_EQ(t.find("moe"), nullptr);
  ASSERT_NE(t.find("all"), nullptr);
  EXPECT_EQ(t.find("all")->n, 6 + kMinResidualSamples - 1);
}

TEST(FitResiduals, IgnoresSamplesThatAreNotPositiveAndFinite) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<ResidualSample> samples = {{"dense/megatron", 0, 1},   {"dense/megatron", 1, 0},
                                         {"dense/megatron", -1, 1},  {"dense/megatron", nan, 1},
                                         {"dense/megatron", 1, inf}, {"dense/megatron", inf, 1}};
  EXPECT_TRUE(fit_residuals(samples, 1).empty());
  for (int i = 0; i < 5; ++i) samples.push_back({"dense/megatron", 1, 1});
  const ResidualTable t = fit_residuals(samples);
  ASSERT_NE(t.find("dense/megatron"), nullptr);
  EXPECT_EQ(t.find("dense/megatron")->n, 5);
  EXPECT_EQ(t.find("dense/megatron")->log_ratio_p10, 0.0);
}

// ---------------------------------------------------------------------------------------------
// Categories and the fallback chain
// ---------------------------------------------------------------------------------------------

TEST(ErrorCategory, IsArchitectureSlashFramework) {
  Scenario s = scenario(true);
  EXPECT_EQ(error_category(s), "dense/megatron");
  s.training.framework = Framework::pytorch;
  EXPECT_EQ(error_category(s), "dense/pytorch");
  s.model.moe.experts = 8;
  s.model.moe.top_k = 2;
  EXPECT_EQ(error_category(s), "moe/pytorch");
}

TEST(ErrorCategory, FallsBackToArchitectureThenAll) {
  EXPECT_EQ(category_fallbacks("moe/pytorch"), (std::vector<std::string>{"moe/pytorch", "moe", "all"}));
  EXPECT_EQ(category_fallbacks("dense"), (std::vector<std::string>{"dense", "all"}));
  EXPECT_EQ(category_fallbacks("all"), (std::vector<std::string>{"all"}));
}

TEST(ApplyErrorBand, UsesTheExactCategoryThenTheArchitectureThenAll) {
  const Scenario s = scenario(true, Framework::pytorch);  // dense/pytorch
  const Estimate base = estimate_of(s);
  ResidualTable t{{{"all", 40, std::log(0.7), std::log(1.2)},
                   {"dense", 30, std::log(0.8), std::log(1.1)},
                   {"dense/pytorch", 10, std::log(0.9), std::log(1.0)}}};
  Estimate e = base;
  apply_error_band(e, s, t);
  ASSERT_TRUE(e.uncertainty.band);
  EXPECT_EQ(e.uncertainty.band->category, "dense/pytorch");
  EXPECT_NEAR(e.uncertainty.band->ratio_p10, 0.9, 1e-12);

  t.categories.pop_back();  // no dense/pytorch entry -> dense
  e = base;
  apply_error_band(e, s, t);
  ASSERT_TRUE(e.uncertainty.band);
  EXPECT_EQ(e.uncertainty.band->category, "dense");
  EXPECT_NEAR(e.uncertainty.band->ratio_p90, 1.1, 1e-12);
  EXPECT_EQ(e.uncertainty.band->asked, "dense/pytorch");  // too few of its own runs: the dense band

  t.categories.pop_back();  // only "all"
  e = base;
  apply_error_band(e, s, t);
  ASSERT_TRUE(e.uncertainty.band);
  EXPECT_EQ(e.uncertainty.band->category, "all");
  EXPECT_NEAR(e.uncertainty.band->ratio_p10, 0.7, 1e-12);
}

TEST(ApplyErrorBand, AnEmptyTableLeavesNoBandAndNoIntervals) {
  const Scenario s = scenario(true);
  Estimate e = estimate_of(s);
  apply_error_band(e, s, ResidualTable{});
  EXPECT_FALSE(e.uncertainty.band);
  EXPECT_FALSE(e.uncertainty.tokens_per_s);
  EXPECT_FALSE(e.uncertainty.step_time_s);
  EXPECT_FALSE(e.uncertainty.time_to_train_days);
  EXPECT_FALSE(e.uncertainty.cost_usd);
}

// ---------------------------------------------------------------------------------------------
// Intervals
// ---------------------------------------------------------------------------------------------

// Throughput scales with the ratio; step time, time to train and cost are inversely
// proportional to throughput, so their p10 divides by ratio_p90 and their p90 by ratio_p10.
TEST(ApplyErrorBand, ThroughputScalesByTheRatiosAndTimeAndCostByTheirInverse) {
  const Scenario s = scenario(true);
  Estimate e = estimate_of(s);
  apply_error_band(e, s, table_of("dense/megatron", 0.8, 1.25));
  ASSERT_TRUE(e.uncertainty.band && e.uncertainty.tokens_per_s && e.uncertainty.step_time_s && e.uncertainty.time_to_train_days &&
              e.uncertainty.cost_usd);
  EXPECT_NEAR(e.uncertainty.band->ratio_p10, 0.8, 1e-12);  // no widening: the GPU's efficiencies are published
  EXPECT_NEAR(e.uncertainty.band->ratio_p90, 1.25, 1e-12);
  EXPECT_NEAR(e.uncertainty.tokens_per_s->low, e.step.tokens_per_s * 0.8, 1e-9 * e.step.tokens_per_s);
  EXPECT_NEAR(e.uncertainty.tokens_per_s->high, e.step.tokens_per_s * 1.25, 1e-9 * e.step.tokens_per_s);
  const double step = e.step.time.base();
  EXPECT_NEAR(e.uncertainty.step_time_s->low, step / 1.25, 1e-12 * step);
  EXPECT_NEAR(e.uncertainty.step_time_s->high, step / 0.8, 1e-12 * step);
  const double days = units::to_days(e.totals.time_to_train);
  EXPECT_NEAR(e.uncertainty.time_to_train_days->low, days / 1.25, 1e-12 * days);
  EXPECT_NEAR(e.uncertainty.time_to_train_days->high, days / 0.8, 1e-12 * days);
  const double usd = e.totals.cost->base();
  EXPECT_NEAR(e.uncertainty.cost_usd->low, usd / 1.25, 1e-9 * usd);
  EXPECT_NEAR(e.uncertainty.cost_usd->high, usd / 0.8, 1e-9 * usd);
  // The step-time interval is the throughput interval inverted: tokens per step / tokens per s.
  const double tokens_per_step = 64.0 * s.model.seq_len;
  EXPECT_NEAR(e.uncertainty.step_time_s->low, tokens_per_step / e.uncertainty.tokens_per_s->high, 1e-9 * step);
}

TEST(ApplyErrorBand, IntervalsAreOrderedEvenWhenTheBandExcludesThePrediction) {
  const Scenario s = scenario(true);
  Estimate e = estimate_of(s);
  // The model over-predicts this category: measured is 60-90% of predicted.
  apply_error_band(e, s, table_of("dense/megatron", 0.6, 0.9));
  ASSERT_TRUE(e.uncertainty.tokens_per_s && e.uncertainty.step_time_s && e.uncertainty.time_to_train_days && e.uncertainty.cost_usd);
  for (const auto& i : {*e.uncertainty.tokens_per_s, *e.uncertainty.step_time_s, *e.uncertainty.time_to_train_days,
                        *e.uncertainty.cost_usd}) {
    EXPECT_LE(i.low, i.high);
    EXPECT_TRUE(std::isfinite(i.low) && std::isfinite(i.high));
  }
  EXPECT_LT(e.uncertainty.tokens_per_s->high, e.step.tokens_per_s);  // honest: the band lies below the estimate
  EXPECT_GT(e.uncertainty.step_time_s->low, e.step.time.base());
}

// Issue 14 defect 6: a band that lies on one side of the estimate is said, as a finding with the
// ratios, the run count and the category; a band around the estimate is not.
TEST(ApplyErrorBand, ABandOnOneSideOfTheEstimateSaysSo) {
  const Scenario s = scenario(true);
  Estimate e = estimate_of(s);
  apply_error_band(e, s, table_of("dense/megatron", 1.02, 1.34, 7));
  ASSERT_TRUE(has(e.findings, FindingCode::band_excludes_estimate));
  const Finding& f = e.findings.back();
  EXPECT_EQ(f.code, FindingCode::band_excludes_estimate);
  EXPECT_NEAR(f.number("ratio_p10"), 1.02, 1e-12);
  EXPECT_NEAR(f.number("ratio_p90"), 1.34, 1e-12);
  EXPECT_EQ(f.number("runs"), 7);
  EXPECT_EQ(f.text("category"), "dense/megatron");
  // Applying another band replaces the finding, never stacks it.
  apply_error_band(e, s, table_of("dense/megatron", 0.9, 1.1));
  EXPECT_FALSE(has(e.findings, FindingCode::band_excludes_estimate));
  apply_error_band(e, s, table_of("dense/megatron", 0.6, 0.9));
  apply_error_band(e, s, table_of("dense/megatron", 0.6, 0.9));
  int n = 0;
  for (const auto& x : e.findings) n += x.code == FindingCode::band_excludes_estimate;
  EXPECT_EQ(n, 1);
}

// The expected time and total cost with failures get their own band, from the goodput model at
// the band's ends: a slower run meets more interruptions, so its wall time grows faster than
// 1/ratio, and both intervals hold the point value when the band holds 1.
TEST(ApplyErrorBand, TheExpectedTimeAndTotalCostWithFailuresHaveBands) {
  const Scenario s = scenario(true);
  Estimate e = estimate_of(s);
  ASSERT_TRUE(e.goodput.modelled && e.goodput.cost.total);
  apply_error_band(e, s, table_of("dense/megatron", 0.8, 1.25));
  ASSERT_TRUE(e.uncertainty.wall_days && e.uncertainty.total_cost_usd);
  const double wall = units::to_days(e.goodput.wall);
  EXPECT_LT(e.uncertainty.wall_days->low, wall);
  EXPECT_GT(e.uncertainty.wall_days->high, wall);
  EXPECT_GE(e.uncertainty.wall_days->high, wall / 0.8 * (1 - 1e-12));  // at least the steady-state scaling
  EXPECT_LE(e.uncertainty.wall_days->low, wall / 1.25 * (1 + 1e-3));
  const double total = e.goodput.cost.total->base();
  EXPECT_LT(e.uncertainty.total_cost_usd->low, total);
  EXPECT_GT(e.uncertainty.total_cost_usd->high, total);
  // A band of exactly 1 is the point itself.
  apply_error_band(e, s, table_of("dense/megatron", 1.0, 1.0));
  ASSERT_TRUE(e.uncertainty.wall_days);
  EXPECT_NEAR(e.uncertainty.wall_days->low, wall, 1e-9 * wall);
  EXPECT_NEAR(e.uncertainty.wall_days->high, wall, 1e-9 * wall);
  EXPECT_NEAR(e.uncertainty.total_cost_usd->high, total, 1e-9 * total);
}

TEST(ApplyErrorBand, NoPriceMeansNoCostInterval) {
  Scenario s = scenario(true);
  s.cluster.price_per_gpu.reset();
  Estimate e = estimate_of(s);
  apply_error_band(e, s, table_of("all", 0.8, 1.1));
  EXPECT_TRUE(e.uncertainty.tokens_per_s);
  EXPECT_FALSE(e.uncertainty.cost_usd);
}

// A GPU without published efficiencies is priced at the defaults (0.75 GEMM, 0.35 attention);
// the published spread (GEMM 0.511-0.869, attention 0.35-0.50) widens the band by exactly the
// throughput this layout would have at those ends.
TEST(ApplyErrorBand, DatasheetOnlyGpuWidensByTheThroughputAtThePublishedEfficiencySpread) {
  const Scenario s = scenario(false);
  Estimate e = estimate_of(s);
  apply_error_band(e, s, table_of("dense/megatron", 0.9, 1.05));
  ASSERT_TRUE(e.uncertainty.band);

  auto throughput_at = [&](double gemm, double attention) {
    Scenario t = s;
    t.cluster.gpu.gemm_efficiency = gemm;
    t.cluster.gpu.attention_efficiency = attention;
    return evaluate(t, e.layout.strategy, DatasheetCost(t.cluster)).step.tokens_per_s;
  };
  const InputSpread spread;
  const double down = throughput_at(spread.gemm_low, spread.attention_low) / e.step.tokens_per_s;
  const double up = throughput_at(spread.gemm_high, spread.attention_high) / e.step.tokens_per_s;
  ASSERT_LT(down, 1.0);
  ASSERT_GT(up, 1.0);
  EXPECT_NEAR(e.uncertainty.band->ratio_p10, 0.9 * down, 1e-9);
  EXPECT_NEAR(e.uncertainty.band->ratio_p90, 1.05 * up, 1e-9);
  // Compute-bound at most: GEMM time scales with 1/efficiency, so the throughput cannot move by
  // more than the efficiency ratio itself.
  EXPECT_GE(down, spread.gemm_low / 0.75 - 1e-9);
  EXPECT_LE(up, spread.attention_high / 0.35 + 1e-9);
  ASSERT_TRUE(e.uncertainty.band->widened);
  EXPECT_TRUE(e.uncertainty.band->widened->gemm && e.uncertainty.band->widened->attention);
  EXPECT_NEAR(e.uncertainty.band->widened->down, down, 1e-9);  // as ratio_p10 above
  EXPECT_NEAR(e.uncertainty.band->widened->up, up, 1e-9);

  // With the GPU's own figures there is nothing to widen.
  const Scenario measured = scenario(true);
  Estimate m = estimate_of(measured);
  apply_error_band(m, measured, table_of("dense/megatron", 0.9, 1.05));
  ASSERT_TRUE(m.uncertainty.band);
  EXPECT_NEAR(m.uncertainty.band->ratio_p10, 0.9, 1e-12);
  EXPECT_NEAR(m.uncertainty.band->ratio_p90, 1.05, 1e-12);
}

TEST(ApplyErrorBand, OnlyTheUnknownEfficiencyWidens) {
  Scenario s = scenario(true);
  s.cluster.gpu.attention_efficiency = 0;  // GEMM published, attention not: the default is the low end
  Estimate e = estimate_of(s);
  apply_error_band(e, s, table_of("dense/megatron", 0.9, 1.05));
  ASSERT_TRUE(e.uncertainty.band);
  EXPECT_NEAR(e.uncertainty.band->ratio_p10, 0.9, 1e-12);  // attention cannot be slower than the default here
  EXPECT_GT(e.uncertainty.band->ratio_p90, 1.05);
  ASSERT_TRUE(e.uncertainty.band->widened);
  EXPECT_FALSE(e.uncertainty.band->widened->gemm);
  EXPECT_TRUE(e.uncertainty.band->widened->attention);
}

}  // namespace
}  // namespace capplan::sim
