// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/workload/variability.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/estimate/estimate.hpp"
#include "test_support.hpp"

namespace capplan::sim {
namespace {

using test::cluster_of;
using test::job_of;
using test::layout;
using test::scenario_of;

TEST(InverseNormalCdf, MatchesTabulatedQuantiles) {
  // Standard normal quantiles to 15 digits (Abramowitz & Stegun Table 26.5 / any statistics
  // package); the refined approximation is good to about 1e-15, so 1e-12 is generous.
  EXPECT_NEAR(inverse_normal_cdf(0.5), 0.0, 1e-15);
  EXPECT_NEAR(inverse_normal_cdf(0.975), 1.959963984540054, 1e-12);
  EXPECT_NEAR(inverse_normal_cdf(0.9), 1.281551565544601, 1e-12);
  EXPECT_NEAR(inverse_normal_cdf(0.001), -3.090232306167814, 1e-12);
  EXPECT_NEAR(inverse_normal_cdf(1e-9), -5.997807015007686, 1e-10);
}

TEST(InverseNormalCdf, InvertsTheCdfAcrossTheRange) {
  for (double p = 1e-6; p < 1.0; p = p < 0.01 ? p * 3.0 : p + 0.0137) {
    const double x = inverse_normal_cdf(p);
    EXPECT_NEAR(0.5 * std::erfc(-x / std::numbers::sqrt2), p, 1e-13 + 1e-12 * p) << "p = " << p;
  }
}

TEST(ExpectedMaxOfNormals, BlomApproximationIsCloseToTheExactOrderStatistic) {
  // Exact E[max of n standard normals]: 1/sqrt(pi) for n = 2, 3/(2 sqrt(pi)) for n = 3 (both in
  // closed form); n = 10, 100, 6144 by Simpson quadrature of x n phi(x) Phi(x)^(n-1) on [-12, 12]
  // (20,000 panels): 1.538753, 2.507594, 3.730066. Blom's approximation is 4.5% high at n = 2,
  // 2.7% at n = 3 and within 0.75% from n = 8 on (docs/model.md); the tolerances say so.
  EXPECT_NEAR(expected_max_standard_normal(2), 1.0 / std::sqrt(std::numbers::pi), 0.045 * 0.5642);
  EXPECT_NEAR(expected_max_standard_normal(3), 1.5 / std::sqrt(std::numbers::pi), 0.028 * 0.8463);
  EXPECT_NEAR(expected_max_standard_normal(10), 1.538753, 0.0075 * 1.538753);
  EXPECT_NEAR(expected_max_standard_normal(100), 2.507594, 0.0075 * 2.507594);
  EXPECT_NEAR(expected_max_standard_normal(6144), 3.730066, 0.0075 * 3.730066);
  EXPECT_EQ(expected_max_standard_normal(1), 0.0);
  EXPECT_EQ(expected_max_standard_normal(0), 0.0);
}

TEST(SlowestGpu, SlowdownGrowsWithTheNumberOfGpusAndTheSpread) {
  EXPECT_EQ(slowest_gpu_slowdown(1, 0.015), 0.0);   // one GPU waits for nobody
  EXPECT_EQ(slowest_gpu_slowdown(4096, 0.0), 0.0);  // identical GPUs
  double last = 0.0;
  for (long long n : {2LL, 8LL, 64LL, 512LL, 6144LL, 100000LL}) {
    const double s = slowest_gpu_slowdown(n, kDefaultGpuSpeedSpread);
    EXPECT_GT(s, last) << n;
    EXPECT_TRUE(std::isfinite(s));
    last = s;
  }
  // 8 GPUs at the default spread: 0.015 x 1.4342 (Blom at n = 8) = 2.15%; 6144 GPUs:
  // 0.015 x 3.7147 = 5.57%.
  EXPECT_NEAR(slowest_gpu_slowdown(8, 0.015), 0.015 * 1.4342, 1e-5);
  EXPECT_NEAR(slowest_gpu_slowdown(6144, 0.015), 0.015 * 3.7147, 1e-5);
  EXPECT_DOUBLE_EQ(slowest_gpu_slowdown(512, 0.03), 2.0 * slowest_gpu_slowdown(512, 0.015));
}

TEST(SlowestGpu, StretchesComputeAndOptimizerInTheStepBreakdown) {
  // Without pipelining the whole step is compute, exposed communication and the optimizer; the
  // variability line is exactly slowdown x (compute + optimizer), and nothing else moves.
  Scenario s = scenario_of(test::gpt_1_3b(), job_of(64), cluster_of(test::h100_sxm(), 64));
  const Parallelism p = layout(2, 1, 32, 2);
  s.cluster.gpu_speed_spread = 0.0;
  const Estimate uniform = evaluate(s, p, DatasheetCost(s.cluster));
  s.cluster.gpu_speed_spread = 0.02;
  const Estimate spread = evaluate(s, p, DatasheetCost(s.cluster));
  const double slow = slowest_gpu_slowdown(64, 0.02);
  const StepBreakdown& u = uniform.step.breakdown;
  const StepBreakdown& b = spread.step.breakdown;
  EXPECT_EQ(u.variability.base(), 0.0);
  EXPECT_DOUBLE_EQ(b.compute.base(), u.compute.base());
  EXPECT_DOUBLE_EQ(b.optimizer.base(), u.optimizer.base());
  EXPECT_NEAR(b.variability.base(), slow * (u.compute.base() + u.optimizer.base()), 1e-12);
  EXPECT_NEAR(spread.step.time.base(), uniform.step.time.base() + b.variability.base(), 1e-12);
}

TEST(SlowestGpu, PipelineFillAndDrainWaitForTheSlowestGpuToo) {
  // With pipelining, the bubble is other stages' compute, which runs at the same slower pace:
  // the bubble grows, but by no more than the slowdown (its communication part does not).
  Scenario s = scenario_of(test::gpt3_175b(), job_of(64), cluster_of(test::a100_80gb(), 64));
  const Parallelism p = layout(8, 8, 1, 1, Recompute::full);
  s.cluster.gpu_speed_spread = 0.0;
  const Estimate uniform = evaluate(s, p, DatasheetCost(s.cluster));
  s.cluster.gpu_speed_spread = kDefaultGpuSpeedSpread;
  const Estimate spread = evaluate(s, p, DatasheetCost(s.cluster));
  const double slow = slowest_gpu_slowdown(64, kDefaultGpuSpeedSpread);
  EXPECT_GT(spread.step.breakdown.bubble.base(), uniform.step.breakdown.bubble.base());
  EXPECT_LE(spread.step.breakdown.bubble.base(), (1.0 + slow) * uniform.step.breakdown.bubble.base() * (1.0 + 1e-12));
  EXPECT_GT(spread.step.time.base(), uniform.step.time.base() * (1.0 + 0.5 * slow));
  EXPECT_LT(spread.step.time.base(), uniform.step.time.base() * (1.0 + slow) * (1.0 + 1e-12));
}

TEST(SlowestGpu, OneGpuHasNoVariability) {
  Scenario s = scenario_of(test::gpt_1_3b(), job_of(8), cluster_of(test::h100_sxm(), 1));
  const Estimate e = evaluate(s, layout(1, 1, 1, 1), DatasheetCost(s.cluster));
  EXPECT_EQ(e.step.breakdown.variability.base(), 0.0);
}

TEST(RandomRouting, BusiestRankIsTheHypergeometricSpreadAboveTheMean) {
  // 4096 tokens per rank, top-4 of 128 experts, ep 8 (16 experts per rank): a rank receives
  // 4096 * 4 = 16384 copies on average with variance 16384 * (7/8) * (124/127) = 13997.4, so the
  // coefficient of variation is 118.31 / 16384 = 0.0072211; Blom's E[max of 8] is
  // inverse_normal_cdf(7.625 / 8.25) = 1.43420 (exact 1.4236): 1 + 1.4342 * 0.0072211 = 1.010357.
  // 1e-5 covers the rounding of the hand figures.
  EXPECT_NEAR(random_routing_busiest_rank(4096, 4, 128, 8), 1.010357, 1e-5);
  // More copies per rank spread relatively less: top-8 gives variance 32768 * (7/8) * (120/127),
  // CV 164.59 / 32768 = 0.0050229, 1 + 1.4342 * 0.0050229 = 1.007204.
  EXPECT_NEAR(random_routing_busiest_rank(4096, 8, 128, 8), 1.007204, 1e-5);
  // Nothing to balance: one rank, every expert taken, no tokens.
  EXPECT_EQ(random_routing_busiest_rank(4096, 4, 128, 1), 1.0);
  EXPECT_EQ(random_routing_busiest_rank(4096, 8, 8, 8), 1.0);
  EXPECT_EQ(random_routing_busiest_rank(0, 4, 128, 8), 1.0);
}

}  // namespace
}  // namespace capplan::sim
