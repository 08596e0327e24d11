// SPDX-License-Identifier: Apache-2.0
// Error bars (sim/uncertainty.hpp): quantiles by hand, the residual table and its fallback chain,
// widening for a datasheet-only GPU, and the intervals derived from the band.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/estimate/uncertainty.hpp"
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
  job.host_time_known = true;  // the framework's host time is given (0): only the efficiencies widen
  return scenario_of(test::gpt_1_3b(), job, c, fixed_request(layout(2, 1, 4, 2)));
}

Estimate estimate_of(const Scenario& s) {
  const DatasheetCost cost(s.cluster);
  auto e = estimate(s, cost);
  EXPECT_TRUE(e.has_value()) << (e ? "" : to_string(e.error()));
  return e ? *e : Estimate{};
}

// A table with one entry: p10/p90 = ln(lo), ln(hi).
// A table entry whose band is its p10-p90 (as in a schema-2 table): apply_error_band's own
// extension to 1 applies where it lies on one side of the estimate.
ResidualQuantiles entry(const std::string& category, int n, double lo, double hi) {
  return {category, n, std::log(lo), std::log(hi), std::log(lo), std::log(hi)};
}

ResidualTable table_of(const std::string& category, double lo, double hi, int n = 20) {
  return ResidualTable{{entry(category, n, lo, hi)}};
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
  for (int i = 0; i < kMinResidualSamples + 1; ++i) samples.push_back({"dense/megatron", 100.0 + i, 100.0});
  for (int i = 0; i < kMinResidualSamples - 1; ++i) samples.push_back({"moe/pytorch", 90.0 + i, 100.0});
  const ResidualTable t = fit_residuals(samples);
  EXPECT_NE(t.find("dense/megatron"), nullptr);
  EXPECT_EQ(t.find("moe/pytorch"), nullptr);  // one row short: falls back
  EXPECT_EQ(t.find("moe"), nullptr);
  ASSERT_NE(t.find("all"), nullptr);
  EXPECT_EQ(t.find("all")->n, 2 * kMinResidualSamples);
}

// At the minimum sample count the p10 and p90 positions (n+1)p are inside the sample, so the
// quantiles interpolate rather than clamp (and the band's 80% holds); one row fewer, they clamp.
TEST(FitResiduals, TheMinimumSampleCountIsTheFirstAtWhichP10AndP90AreNotClamped) {
  EXPECT_EQ(kMinResidualSamples, 9);
  const double n = kMinResidualSamples;
  EXPECT_GE((n + 1) * 0.1, 1.0);
  EXPECT_LE((n + 1) * 0.9, n);
  EXPECT_LT(n * 0.1, 1.0);  // n - 1 rows: h = 0.9 < 1, clamped to the minimum
  // Coverage of a new exchangeable run by [min, max] of n - 1 runs: (n - 2) / n = 7/9 < 0.8.
  EXPECT_LT((n - 2) / n, 0.8);
}

TEST(FitResiduals, IgnoresSamplesThatAreNotPositiveAndFinite) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<ResidualSample> samples = {{"dense/megatron", 0, 1},   {"dense/megatron", 1, 0},
                                         {"dense/megatron", -1, 1},  {"dense/megatron", nan, 1},
                                         {"dense/megatron", 1, inf}, {"dense/megatron", inf, 1}};
  EXPECT_TRUE(fit_residuals(samples, 1).empty());
  for (int i = 0; i < kMinResidualSamples; ++i) samples.push_back({"dense/megatron", 1, 1});
  const ResidualTable t = fit_residuals(samples);
  ASSERT_NE(t.find("dense/megatron"), nullptr);
  EXPECT_EQ(t.find("dense/megatron")->n, kMinResidualSamples);
  EXPECT_EQ(t.find("dense/megatron")->log_ratio_p10, 0.0);
}

// ---------------------------------------------------------------------------------------------
// The band that holds the point estimate (band_quantiles)
// ---------------------------------------------------------------------------------------------

// Residuals that straddle 0 keep p10-p90 as their band, and fit_residuals stores it beside them.
TEST(BandQuantiles, AStraddlingP10P90IsTheBand) {
  std::vector<double> r;
  for (int i = 0; i <= 10; ++i) r.push_back(-0.05 + 0.01 * i);  // -0.05 .. 0.05
  const auto [low, high] = band_quantiles(r);
  EXPECT_DOUBLE_EQ(low, empirical_quantile(r, 0.1));  // h = 1.2: -0.05 + 0.2 * 0.01 = -0.048
  EXPECT_NEAR(low, -0.048, 1e-12);
  EXPECT_NEAR(high, 0.048, 1e-12);
  std::vector<ResidualSample> samples;
  for (double x : r) samples.push_back({"dense/megatron", 100.0 * std::exp(x), 100.0});
  const ResidualTable t = fit_residuals(samples);
  const auto* q = t.find("dense/megatron");
  ASSERT_NE(q, nullptr);
  EXPECT_NEAR(q->log_ratio_low, -0.048, 1e-12);
  EXPECT_NEAR(q->log_ratio_high, 0.048, 1e-12);
}

// 19 residuals -0.19, -0.18, ..., -0.02 and +0.01: p90 (h = 18 of (n + 1) p = 20 p) is -0.02, so
// the pair (a, a + 0.8) slides up until its high end reaches 0: between the 18th and 19th order
// statistics, -0.02 + (h - 18) 0.03 = 0 at h = 18 + 2/3, a + 0.8 = 18.667 / 20 = 0.93333, so
// a = 0.13333 and the low end is at h = 2.6667: -0.18 + 0.6667 x 0.01 = -0.17333.
TEST(BandQuantiles, SlidesUpWhenP90IsBelowZero) {
  std::vector<double> r;
  for (int i = 19; i >= 2; --i) r.push_back(-0.01 * i);
  r.push_back(0.01);
  ASSERT_LT(empirical_quantile(r, 0.9), 0.0);
  const auto [low, high] = band_quantiles(r);
  EXPECT_NEAR(high, 0.0, 1e-12);
  EXPECT_NEAR(low, -0.18 + (2.0 / 3.0) * 0.01, 1e-12);
  EXPECT_GT(low, empirical_quantile(r, 0.1));  // narrower at the far end than p10, not wider
  // The mirror image slides down by as much.
  std::vector<double> m;
  for (auto it = r.rbegin(); it != r.rend(); ++it) m.push_back(-*it);
  const auto [mlow, mhigh] = band_quantiles(m);
  EXPECT_NEAR(mlow, 0.0, 1e-12);
  EXPECT_NEAR(mhigh, 0.18 - (2.0 / 3.0) * 0.01, 1e-12);
}

// Every residual below 0: the slide stops at a = 0.2 (the high end at the sample's maximum) and
// the band still excludes 0; apply_error_band then moves its near end to 1 and says so.
TEST(BandQuantiles, StopsAtAFifthAndLeavesTheRestToTheExtension) {
  std::vector<double> r;
  for (int i = 20; i >= 2; --i) r.push_back(-0.01 * i);  // -0.20 .. -0.02, n = 19
  const auto [low, high] = band_quantiles(r);
  EXPECT_DOUBLE_EQ(high, -0.02);
  EXPECT_NEAR(low, empirical_quantile(r, 0.2), 1e-12);  // h = 4: -0.17
  EXPECT_NEAR(low, -0.17, 1e-12);
  std::vector<ResidualSample> samples;
  for (double x : r) samples.push_back({"dense/megatron", 100.0 * std::exp(x), 100.0});
  const ResidualTable t = fit_residuals(samples);
  const Scenario s = scenario(true);
  Estimate e = estimate_of(s);
  apply_error_band(e, s, t);
  ASSERT_TRUE(e.uncertainty.band && e.uncertainty.band->unextended);
  EXPECT_NEAR(e.uncertainty.band->ratio_p10, std::exp(-0.17), 1e-12);
  EXPECT_EQ(e.uncertainty.band->ratio_p90, 1.0);
  EXPECT_NEAR(e.uncertainty.band->unextended->low, std::exp(empirical_quantile(r, 0.1)), 1e-12);
  EXPECT_NEAR(e.uncertainty.band->unextended->high, std::exp(empirical_quantile(r, 0.9)), 1e-12);
  EXPECT_TRUE(has(e.findings, FindingCode::band_extended_to_estimate));
}

// What the slide is for. Residuals drawn from a normal distribution two standard deviations
// below 0 (the model optimistic, as in the development set's >512 and pytorch categories): the
// slid band of 20 draws covers 80% of new draws, as it says, where p10-p90 stretched to 0 covers
// about 88%. Coverage of each band is exact (the normal CDF at its ends), averaged over 3000
// samples: its Monte Carlo error is about 0.002. The slide's choice of a depends on the sample,
// so its coverage is near 0.8, not exactly it (0.809 at this shift in a Python re-run with
// another generator); 0.78-0.83 holds that, and 0.85 is below the stretched band's 0.877 by
// far more than the noise.
TEST(BandQuantiles, CoversEightyPercentOfNewRunsWhereStretchingP10P90CoversMore) {
  constexpr double mu = -0.2, sigma = 0.1;
  std::mt19937 gen(15);
  std::normal_distribution<double> draw(mu, sigma);
  auto cdf = [&](double x) { return 0.5 * std::erfc(-(x - mu) / (sigma * std::sqrt(2.0))); };
  double slid = 0, stretched = 0;
  constexpr int kTrials = 3000;
  for (int t = 0; t < kTrials; ++t) {
    std::vector<double> r(20);
    for (double& x : r) x = draw(gen);
    std::sort(r.begin(), r.end());
    const auto [low, high] = band_quantiles(r);
    slid += cdf(std::max(high, 0.0)) - cdf(std::min(low, 0.0));
    stretched += cdf(std::max(empirical_quantile(r, 0.9), 0.0)) - cdf(std::min(empirical_quantile(r, 0.1), 0.0));
  }
  slid /= kTrials;
  stretched /= kTrials;
  EXPECT_GT(slid, 0.78);
  EXPECT_LT(slid, 0.83);
  EXPECT_GT(stretched, 0.85);
}

// ---------------------------------------------------------------------------------------------
// Categories and the fallback chain
// ---------------------------------------------------------------------------------------------

TEST(ErrorCategory, IsArchitectureSlashFrameworkSlashScale) {
  Scenario s = scenario(true);  // 8 GPUs: one node
  EXPECT_EQ(error_category(s), "dense/megatron/<=8");
  s.training.framework = Framework::pytorch;
  EXPECT_EQ(error_category(s), "dense/pytorch/<=8");
  s.model.moe.experts = 8;
  s.model.moe.top_k = 2;
  EXPECT_EQ(error_category(s), "moe/pytorch/<=8");
  s.cluster.gpus = 9;
  EXPECT_EQ(error_category(s), "moe/pytorch/9-512");
  s.cluster.gpus = 513;
  EXPECT_EQ(error_category(s), "moe/pytorch/>512");
}

// The bucket edges: 8 GPUs is one node, 512 the last of the middle bucket.
TEST(ErrorCategory, ScaleBucketsSplitAtOneNodeAnd512Gpus) {
  const std::vector<std::pair<int, std::string>> edges = {{1, "<=8"},     {8, "<=8"},    {9, "9-512"},
                                                          {512, "9-512"}, {513, ">512"}, {16384, ">512"}};
  for (const auto& [gpus, bucket] : edges) EXPECT_EQ(scale_bucket(gpus), bucket) << gpus;
}

TEST(ErrorCategory, PartsTellTheScaleFromTheFramework) {
  const CategoryParts full = category_parts("moe/pytorch/>512");
  EXPECT_EQ(full.arch, "moe");
  EXPECT_EQ(full.framework, "pytorch");
  EXPECT_EQ(full.scale, ">512");
  const CategoryParts scale = category_parts("dense/<=8");
  EXPECT_EQ(scale.arch, "dense");
  EXPECT_EQ(scale.framework, "");
  EXPECT_EQ(scale.scale, "<=8");
  const CategoryParts framework = category_parts("dense/megatron");
  EXPECT_EQ(framework.framework, "megatron");
  EXPECT_EQ(framework.scale, "");
}

// Most specific first; framework family before scale (uncertainty.hpp says why).
TEST(ErrorCategory, FallsBackToFrameworkThenScaleThenArchitectureThenAll) {
  EXPECT_EQ(category_fallbacks("dense/megatron/<=8"),
            (std::vector<std::string>{"dense/megatron/<=8", "dense/megatron", "dense/<=8", "dense", "all"}));
  EXPECT_EQ(category_fallbacks("moe/pytorch"), (std::vector<std::string>{"moe/pytorch", "moe", "all"}));
  EXPECT_EQ(category_fallbacks("dense/9-512"), (std::vector<std::string>{"dense/9-512", "dense", "all"}));
  EXPECT_EQ(category_fallbacks("dense"), (std::vector<std::string>{"dense", "all"}));
  EXPECT_EQ(category_fallbacks("all"), (std::vector<std::string>{"all"}));
}

// Each category of the fallback chain, taken away in turn, hands over to the next one.
TEST(ApplyErrorBand, UsesTheMostSpecificCategoryTheTableHasInFallbackOrder) {
  const Scenario s = scenario(true, Framework::pytorch);  // dense/pytorch/<=8
  const Estimate base = estimate_of(s);
  // Bands distinct by their p10 (0.50, 0.55, ...) so the one used is known from the ratio.
  ResidualTable t{{entry("all", 40, 0.70, 1.2),
                   entry("dense", 30, 0.65, 1.1),
                   entry("dense/<=8", 12, 0.60, 1.1),
                   entry("dense/pytorch", 10, 0.55, 1.0),
                   entry("dense/pytorch/<=8", 6, 0.50, 1.05),
                   // Other scales and frameworks are never used for this scenario.
                   entry("dense/pytorch/9-512", 50, 0.95, 1.01),
                   entry("dense/megatron/<=8", 50, 0.96, 1.02),
                   entry("dense/>512", 50, 0.97, 1.03)}};
  const std::vector<std::pair<std::string, double>> expected = {
      {"dense/pytorch/<=8", 0.50}, {"dense/pytorch", 0.55}, {"dense/<=8", 0.60}, {"dense", 0.65}, {"all", 0.70}};
  for (const auto& [category, p10] : expected) {
    Estimate e = base;
    apply_error_band(e, s, t);
    ASSERT_TRUE(e.uncertainty.band) << category;
    EXPECT_EQ(e.uncertainty.band->category, category);
    EXPECT_NEAR(e.uncertainty.band->ratio_p10, p10, 1e-12) << category;
    EXPECT_EQ(e.uncertainty.band->asked, "dense/pytorch/<=8");
    EXPECT_EQ(t.lookup("dense/pytorch/<=8"), t.find(category));
    std::erase_if(t.categories, [&](const ResidualQuantiles& q) { return q.category == category; });
  }
  Estimate e = base;
  apply_error_band(e, s, t);  // only other scales and frameworks are left
  EXPECT_FALSE(e.uncertainty.band);
}

// The same model at two scales takes the band of its own scale.
TEST(ApplyErrorBand, TheScaleOfTheClusterPicksTheBand) {
  ResidualTable t{{entry("dense/megatron/<=8", 20, 0.6, 0.95),
                   entry("dense/megatron/9-512", 20, 0.9, 1.05)}};
  const Scenario one_node = scenario(true);
  Estimate a = estimate_of(one_node);
  apply_error_band(a, one_node, t);
  ASSERT_TRUE(a.uncertainty.band);
  EXPECT_EQ(a.uncertainty.band->category, "dense/megatron/<=8");
  EXPECT_NEAR(a.uncertainty.band->ratio_p10, 0.6, 1e-12);

  Scenario two_nodes = scenario(true);
  two_nodes.cluster = cluster_of(two_nodes.cluster.gpu, 16);
  two_nodes.strategy = fixed_request(layout(2, 1, 8, 2));
  Estimate b = estimate_of(two_nodes);
  apply_error_band(b, two_nodes, t);
  ASSERT_TRUE(b.uncertainty.band);
  EXPECT_EQ(b.uncertainty.band->category, "dense/megatron/9-512");
  EXPECT_NEAR(b.uncertainty.band->ratio_p10, 0.9, 1e-12);
  EXPECT_NEAR(b.uncertainty.band->ratio_p90, 1.05, 1e-12);
}

// fit_residuals puts every sample in each category of its chain: a <=8 sample is in the exact,
// the framework, the scale, the arch and the all entry, never in another scale's.
TEST(FitResiduals, EverySampleCountsInEachCategoryOfItsFallbackChain) {
  // Five rows per cell with min_samples 5: the chain's counting, not the default minimum, is tested.
  std::vector<ResidualSample> samples;
  for (int i = 0; i < 5; ++i) samples.push_back({"dense/megatron/<=8", 90.0 + i, 100.0});
  for (int i = 0; i < 5; ++i) samples.push_back({"dense/pytorch/<=8", 80.0 + i, 100.0});
  for (int i = 0; i < 5; ++i) samples.push_back({"dense/megatron/9-512", 100.0 + i, 100.0});
  const ResidualTable t = fit_residuals(samples, 5);
  auto n = [&](const char* c) { return t.find(c) != nullptr ? t.find(c)->n : 0; };
  EXPECT_EQ(n("dense/megatron/<=8"), 5);
  EXPECT_EQ(n("dense/pytorch/<=8"), 5);
  EXPECT_EQ(n("dense/megatron/9-512"), 5);
  EXPECT_EQ(n("dense/megatron"), 10);
  EXPECT_EQ(n("dense/pytorch"), 5);
  EXPECT_EQ(n("dense/<=8"), 10);
  EXPECT_EQ(n("dense/9-512"), 5);
  EXPECT_EQ(n("dense"), 15);
  EXPECT_EQ(n("all"), 15);
  EXPECT_EQ(n("dense/>512"), 0);
  EXPECT_EQ(t.categories.size(), 9u);
  // dense/<=8: ln(0.80..0.84, 0.90..0.94); n = 10, p10 at h = 1.1 -> ln 0.80 + 0.1 (ln 0.81 - ln 0.80).
  EXPECT_NEAR(t.find("dense/<=8")->log_ratio_p10, std::log(0.80) + 0.1 * (std::log(0.81) - std::log(0.80)), 1e-12);
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

TEST(ApplyErrorBand, IntervalsAreOrderedWhenTheResidualsLieBelowThePrediction) {
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
  // The band lies below the estimate and is extended up to it: the estimate is its fast end.
  EXPECT_NEAR(e.uncertainty.tokens_per_s->low, 0.6 * e.step.tokens_per_s, 1e-9 * e.step.tokens_per_s);
  EXPECT_NEAR(e.uncertainty.tokens_per_s->high, e.step.tokens_per_s, 1e-9 * e.step.tokens_per_s);
  EXPECT_NEAR(e.uncertainty.step_time_s->low, e.step.time.base(), 1e-9 * e.step.time.base());
}

// The point estimate lies inside its band. Residual quantiles on one side of 1
// move the near end to 1 (the far end keeps what the runs say), and a finding says so with the
// ratios before the extension, the run count and the category; a band around 1 is left alone.
TEST(ApplyErrorBand, TheBandIsExtendedToHoldThePointEstimate) {
  const Scenario s = scenario(true);
  const Estimate base = estimate_of(s);
  Estimate e = base;
  apply_error_band(e, s, table_of("dense/megatron", 1.02, 1.34, 7));  // every run faster than predicted
  ASSERT_TRUE(e.uncertainty.band && e.uncertainty.tokens_per_s && e.uncertainty.step_time_s);
  EXPECT_EQ(e.uncertainty.band->ratio_p10, 1.0);
  EXPECT_NEAR(e.uncertainty.band->ratio_p90, 1.34, 1e-12);
  ASSERT_TRUE(e.uncertainty.band->unextended);
  EXPECT_NEAR(e.uncertainty.band->unextended->low, 1.02, 1e-12);
  EXPECT_NEAR(e.uncertainty.band->unextended->high, 1.34, 1e-12);
  EXPECT_LE(e.uncertainty.tokens_per_s->low, e.step.tokens_per_s);
  EXPECT_GE(e.uncertainty.tokens_per_s->high, e.step.tokens_per_s);
  EXPECT_NEAR(e.uncertainty.step_time_s->high, e.step.time.base(), 1e-12 * e.step.time.base());
  const double days = units::to_days(e.totals.time_to_train);
  EXPECT_NEAR(e.uncertainty.time_to_train_days->high, days, 1e-12 * days);
  EXPECT_NEAR(e.uncertainty.cost_usd->high, e.totals.cost->base(), 1e-9 * e.totals.cost->base());
  ASSERT_TRUE(has(e.findings, FindingCode::band_extended_to_estimate));
  const Finding& f = e.findings.back();
  EXPECT_EQ(f.code, FindingCode::band_extended_to_estimate);
  EXPECT_NEAR(f.number("ratio_p10"), 1.02, 1e-12);
  EXPECT_NEAR(f.number("ratio_p90"), 1.34, 1e-12);
  EXPECT_EQ(f.number("runs"), 7);
  EXPECT_EQ(f.text("category"), "dense/megatron");

  // Below: the p90 end moves up to 1.
  e = base;
  apply_error_band(e, s, table_of("dense/megatron", 0.7, 0.95));
  ASSERT_TRUE(e.uncertainty.band);
  EXPECT_NEAR(e.uncertainty.band->ratio_p10, 0.7, 1e-12);
  EXPECT_EQ(e.uncertainty.band->ratio_p90, 1.0);
  EXPECT_TRUE(has(e.findings, FindingCode::band_extended_to_estimate));

  // A band that holds 1 (its ends included) is not touched and says nothing; applying it after
  // an extended one removes the finding, and applying an extended one twice never stacks it.
  for (const auto& [lo, hi] : {std::pair{0.9, 1.1}, std::pair{1.0, 1.2}, std::pair{0.8, 1.0}}) {
    apply_error_band(e, s, table_of("dense/megatron", lo, hi));
    ASSERT_TRUE(e.uncertainty.band);
    EXPECT_FALSE(e.uncertainty.band->unextended);
    EXPECT_NEAR(e.uncertainty.band->ratio_p10, lo, 1e-12);
    EXPECT_NEAR(e.uncertainty.band->ratio_p90, hi, 1e-12);
    EXPECT_FALSE(has(e.findings, FindingCode::band_extended_to_estimate));
  }
  apply_error_band(e, s, table_of("dense/megatron", 0.6, 0.9));
  apply_error_band(e, s, table_of("dense/megatron", 0.6, 0.9));
  int n = 0;
  for (const auto& x : e.findings) n += x.code == FindingCode::band_extended_to_estimate;
  EXPECT_EQ(n, 1);
}

// The extension comes after the input widening: a datasheet-only GPU whose widened band already
// holds 1 is not extended (widening multiplies p10 by <= 1 and p90 by >= 1).
TEST(ApplyErrorBand, AWidenedBandThatHoldsThePointIsNotExtended) {
  const Scenario s = scenario(false);
  Estimate e = estimate_of(s);
  apply_error_band(e, s, table_of("dense/megatron", 1.01, 1.2));
  ASSERT_TRUE(e.uncertainty.band && e.uncertainty.band->widened);
  ASSERT_LT(e.uncertainty.band->widened->down, 1.0 / 1.01);  // the GEMM low end lowers p10 below 1
  EXPECT_FALSE(e.uncertainty.band->unextended);
  EXPECT_NEAR(e.uncertainty.band->ratio_p10, 1.01 * e.uncertainty.band->widened->down, 1e-12);
  EXPECT_FALSE(has(e.findings, FindingCode::band_extended_to_estimate));
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

// A framework with no host time per op is priced at the launch floor, the fastest host there is;
// the band's low end is the throughput of the same layout at the spread's host time (80 us per
// op), its high end unmoved. GPT 1.3B at micro-batch 1 on 8 GPUs (dp 8) issues thousands of ops per
// micro-batch whose GPU time is a few microseconds each: host-bound at 80 us. A 70B layer's GEMMs
// take far longer than 80 us (Llama 2 70B, tp 8 pp 4): GPU-bound, so no widening at all.
TEST(ApplyErrorBand, UnknownHostTimeWidensTheLowEndOnlyWhereTheHostBinds) {
  Scenario s = scenario(true);
  s.training.host_time_known = false;
  s.strategy = fixed_request(layout(1, 1, 8, 1));
  Estimate e = estimate_of(s);
  apply_error_band(e, s, table_of("dense/megatron", 0.9, 1.05));
  ASSERT_TRUE(e.uncertainty.band);
  Scenario slow = s;
  slow.training.host_s_per_op = 80e-6;
  const double down =
      evaluate(slow, e.layout.strategy, DatasheetCost(slow.cluster)).step.tokens_per_s / e.step.tokens_per_s;
  ASSERT_LT(down, 0.95);  // host-bound: a real widening, not rounding
  EXPECT_NEAR(e.uncertainty.band->ratio_p10, 0.9 * down, 1e-9);
  EXPECT_NEAR(e.uncertainty.band->ratio_p90, 1.05, 1e-12);
  ASSERT_TRUE(e.uncertainty.band->widened);
  EXPECT_TRUE(e.uncertainty.band->widened->host);
  EXPECT_FALSE(e.uncertainty.band->widened->gemm || e.uncertainty.band->widened->attention);
  EXPECT_EQ(e.uncertainty.band->widened->host_us_per_op, 80.0);

  // The same scenario with the framework's figure given: nothing to widen.
  s.training.host_time_known = true;
  Estimate known = estimate_of(s);
  apply_error_band(known, s, table_of("dense/megatron", 0.9, 1.05));
  ASSERT_TRUE(known.uncertainty.band);
  EXPECT_FALSE(known.uncertainty.band->widened);
  EXPECT_NEAR(known.uncertainty.band->ratio_p10, 0.9, 1e-12);

  // GPU-bound: unknown host time moves nothing.
  GpuSpec gpu = test::h100_sxm();
  gpu.gemm_efficiency = 0.803;
  gpu.attention_efficiency = 0.35;
  Scenario big = scenario_of(test::llama2_70b(), job_of(64, 26e9), cluster_of(gpu, 64), fixed_request(layout(8, 4, 2, 1)));
  Estimate b = estimate_of(big);
  apply_error_band(b, big, table_of("dense/megatron", 0.9, 1.05));
  ASSERT_TRUE(b.uncertainty.band);
  EXPECT_FALSE(b.uncertainty.band->widened);
  EXPECT_NEAR(b.uncertainty.band->ratio_p10, 0.9, 1e-12);
}

}  // namespace
}  // namespace capplan::sim
