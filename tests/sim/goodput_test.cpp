// SPDX-License-Identifier: Apache-2.0
// Goodput and cost beyond the sticker (sim/goodput.hpp) against hand derivations.
#include "capplan/sim/goodput/goodput.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/lowering/step_model.hpp"
#include "test_support.hpp"

namespace capplan::sim {
namespace {

using test::cluster_of;
using test::h100_sxm;
using test::layout;

// Relative tolerance for closed forms evaluated in double: far below any modelling difference.
constexpr double kExact = 1e-9;

TEST(FailureRate, DefaultIsLlama3InterruptionsPerGpuHour) {
  // 466 / (16,384 GPUs x 54 days x 24 h) = 466 / 21,233,664 = 2.19463e-5 per GPU-hour.
  EXPECT_NEAR(kDefaultInterruptionsPerGpuHour, 466.0 / 21233664.0, 1e-15);
  EXPECT_NEAR(kDefaultInterruptionsPerGpuHour, 2.19463e-5, 1e-9);
}

TEST(FailureRate, ReproducesLlama3CountOnItsOwnClusterAndDuration) {
  // Circular by construction (the rate comes from this run): 16,384 GPUs for 1,296 h -> 466.
  const double per_hour = interruptions_per_hour(kDefaultInterruptionsPerGpuHour, 16384, 0.0, 2048);
  EXPECT_NEAR(per_hour * 54 * 24, 466.0, 1e-9);
  // MTBI = 1 / (2.19463e-5 x 16,384) h = 2.7811 h.
  EXPECT_NEAR(units::to_hours(mtbi(per_hour)), 2.781116, 1e-6);
}

TEST(FailureRate, ClusterMtbiShrinksInverselyWithGpus) {
  const double r = 1e-5;
  const auto m1k = mtbi(interruptions_per_hour(r, 1024, 0, 128));
  const auto m2k = mtbi(interruptions_per_hour(r, 2048, 0, 256));
  EXPECT_NEAR(m1k.base() / m2k.base(), 2.0, kExact);
  EXPECT_NEAR(units::to_hours(m1k), 1.0 / (1e-5 * 1024), 1e-9);  // 97.66 h
}

TEST(FailureRate, SpotPreemptionsAddPerNode) {
  // 16 GPUs at 1e-4 per GPU-hour + 2 nodes at 0.01 per node-hour = 0.0016 + 0.02 = 0.0216 per hour.
  EXPECT_NEAR(interruptions_per_hour(1e-4, 16, 0.01, 2), 0.0216, 1e-15);
  EXPECT_TRUE(std::isinf(mtbi(0.0).base()));
}

TEST(CheckpointInterval, YoungIsSqrtTwoDeltaM) {
  // delta 60 s, M 3600 s: sqrt(2 x 60 x 3600) = sqrt(432,000) = 657.267 s.
  EXPECT_NEAR(young_interval(units::seconds(60), units::seconds(3600)).base(), 657.2670690, 1e-6);
}

TEST(CheckpointInterval, DalyAddsHigherOrderTermsAndSubtractsDelta) {
  // x = delta/(2M) = 60/7200 = 1/120; sqrt(x) = 0.0912871;
  // tau = 657.267 x (1 + 0.0912871/3 + (1/120)/9) - 60 = 657.267 x 1.0313549 - 60 = 617.876 s.
  EXPECT_NEAR(daly_interval(units::seconds(60), units::seconds(3600)).base(), 617.8756496, 1e-6);
  // delta >= 2M: checkpoint once per M.
  EXPECT_DOUBLE_EQ(daly_interval(units::seconds(8000), units::seconds(3600)).base(), 3600.0);
}

TEST(CheckpointInterval, DalyApproachesYoungWhenCheckpointsAreCheap) {
  // delta/M -> 0: the correction terms and delta vanish against sqrt(2 delta M).
  const auto d = units::seconds(1), m = units::seconds(1e7);
  EXPECT_NEAR(daly_interval(d, m).base() / young_interval(d, m).base(), 1.0, 1e-3);
}

TEST(WallTime, WithoutInterruptionsIsWorkPlusCheckpoints) {
  // 100 h of work, a checkpoint of 60 s every hour: 100 + 100 x 60 s = 101.667 h.
  const auto t = daly_wall_time(units::hours(100), units::hours(1), units::seconds(60), units::seconds(600),
                                units::seconds(std::numeric_limits<double>::infinity()));
  EXPECT_NEAR(units::to_hours(t), 100.0 + 100.0 * 60.0 / 3600.0, 1e-9);
}

TEST(WallTime, MatchesFirstOrderLostWorkOfHalfAnIntervalWhenFailuresAreRare) {
  // First order: each interruption costs R + (tau + delta)/2, and interruptions come every M, so
  // T ~= T_s (1 + delta/tau) (1 + (R + (tau+delta)/2) / M). With M = 1000 h, tau = 1 h,
  // delta = 60 s, R = 600 s, T_s = 1000 h: 1016.667 x (1 + (0.16667 + 0.50833)/1000) = 1017.353 h.
  const auto t = daly_wall_time(units::hours(1000), units::hours(1), units::seconds(60), units::seconds(600),
                                units::hours(1000));
  const double first_order = 1000.0 * (1.0 + 60.0 / 3600.0) * (1.0 + (600.0 / 3600.0 + (3660.0 / 3600.0) / 2.0) / 1000.0);
  // Second-order terms are O((tau/M)^2) ~ 1e-6 relative here.
  EXPECT_NEAR(units::to_hours(t) / first_order, 1.0, 1e-5);
}

TEST(WallTime, OverflowIsInfiniteNotNan) {
  const auto t = daly_wall_time(units::hours(10), units::hours(1), units::seconds(60), units::hours(1000),
                                units::seconds(60));
  EXPECT_TRUE(std::isinf(t.base()));
}

// A dense model whose parameter count is easy to check: the 1.3B GPT test model.
ModelSpec dense() { return test::gpt_1_3b(); }

TEST(CheckpointSize, TotalIsFourteenBytesPerParameter) {
  // bf16 weights (2) + fp32 master, Adam m and v (12) = 14 bytes per parameter.
  const ModelSpec m = dense();
  const CheckpointSize c = checkpoint_size(m, layout(2, 2, 4), 16, 8);
  EXPECT_NEAR(c.total.base(), m.total_params() * 14.0, 1.0);
}

TEST(CheckpointSize, ZeroZeroHasDataParallelRankZeroWriteItsWholeStage) {
  const ModelSpec m = dense();
  const Parallelism p = layout(2, 2, 4, 1, Recompute::selective, false, /*zero=*/0);
  const CheckpointSize c = checkpoint_size(m, p, 16, 8);
  const double stage = std::max(stage_params(m, p, 0).total(), stage_params(m, p, 1).total());
  EXPECT_NEAR(c.per_rank_max.base(), stage * 14.0, 1.0);
  EXPECT_EQ(c.writers, 2 * 2);  // tp x pp ranks of data-parallel replica 0
  // TP fastest: a node of 8 holds tp = 2 writers when dp > 1.
  EXPECT_NEAR(c.per_node_max.base(), 2.0 * stage * 14.0, 1.0);
}

TEST(CheckpointSize, DistributedOptimizerSpreadsTheStageOverDataParallelRanks) {
  const ModelSpec m = dense();
  const CheckpointSize z0 = checkpoint_size(m, layout(2, 2, 4, 1, Recompute::selective, false, 0), 16, 8);
  for (int zero : {1, 2, 3}) {
    const CheckpointSize z = checkpoint_size(m, layout(2, 2, 4, 1, Recompute::selective, false, zero), 16, 8);
    EXPECT_NEAR(z.per_rank_max.base(), z0.per_rank_max.base() / 4.0, 1.0) << "zero " << zero;
    EXPECT_EQ(z.writers, 16);
    EXPECT_NEAR(z.per_node_max.base(), 8.0 * z.per_rank_max.base(), 1.0);
  }
}

TEST(CheckpointSize, TensorAndPipelineParallelismSplitWhatEachRankWrites) {
  const ModelSpec m = dense();
  const double one = checkpoint_size(m, layout(1, 1, 1), 1, 8).per_rank_max.base();
  EXPECT_NEAR(one, m.total_params() * 14.0, 1.0);
  // TP splits every matrix (norms are replicated): close to a quarter.
  const double tp4 = checkpoint_size(m, layout(4, 1, 1), 4, 8).per_rank_max.base();
  EXPECT_NEAR(tp4 / one, 0.25, 0.01);
  // PP: the most loaded stage writes; the first stage also holds the 51200 x 2048 embedding
  // (105M of 1.3B parameters), so it writes 6 layers + the embedding, about 31%.
  const Parallelism pp4 = layout(1, 4, 1);
  const double stage = std::max(stage_params(m, pp4, 0).total(), stage_params(m, pp4, 3).total());
  EXPECT_NEAR(checkpoint_size(m, pp4, 4, 8).per_rank_max.base(), stage * 14.0, 1.0);
  EXPECT_GT(stage_params(m, pp4, 0).total(), stage_params(m, pp4, 1).total());
}

TEST(Transfer, SlowerOfPerNodeAndAggregateLimits) {
  StorageBandwidth bw;
  bw.per_node = units::gb_per_s(2);
  bw.aggregate = units::gb_per_s(10);
  // 8 GB per node: 4 s; 100 GB in all: 10 s -> 10 s.
  EXPECT_NEAR(transfer_time(units::gb(8), units::gb(100), bw).base(), 10.0, kExact);
  EXPECT_NEAR(transfer_time(units::gb(40), units::gb(100), bw).base(), 20.0, kExact);
}

TEST(DataLoading, BytesPerTokenFollowsMegatronIndexedDatasetDtype) {
  StorageTier none;
  EXPECT_EQ(data_loading(1e6, {}, 32000, none, 1).bytes_per_token, 2.0);   // uint16
  EXPECT_EQ(data_loading(1e6, {}, 128256, none, 1).bytes_per_token, 4.0);  // int32
}

TEST(DataLoading, StorageBoundSlowsByNeededOverAvailable) {
  // 1M tokens/s x 4 B = 4 MB/s against 2 MB/s of reads: storage-bound, x2.
  StorageTier t;
  t.read.aggregate = units::BytesPerSecond::from_base(2e6);
  DataLoadingSpec d;
  d.bytes_per_token = 4;
  const DataLoadingCheck c = data_loading(1e6, d, 32000, t, 4);
  EXPECT_NEAR(c.required_bytes_per_s, 4e6, kExact);
  EXPECT_EQ(c.bound, "storage");
  EXPECT_NEAR(c.slowdown, 2.0, kExact);
}

TEST(DataLoading, CpuBoundWhenNodesCannotPreprocessFastEnough) {
  // 4 nodes x 100k tokens/s = 400k against 1M tokens/s: x2.5.
  StorageTier t;
  DataLoadingSpec d;
  d.cpu_tokens_per_s_per_node = 1e5;
  const DataLoadingCheck c = data_loading(1e6, d, 32000, t, 4);
  EXPECT_EQ(c.bound, "cpu");
  EXPECT_NEAR(c.slowdown, 2.5, kExact);
  d.cpu_tokens_per_s_per_node = 1e6;
  EXPECT_EQ(data_loading(1e6, d, 32000, t, 4).bound, "none");
}

// A 16-GPU H100 setup for the whole-goodput tests, with explicit storage.
struct Rig {
  ModelSpec model = dense();
  TrainingJob training = test::job_of(512, 1e12);
  Cluster cluster = cluster_of(h100_sxm(), 16);
  ReliabilitySpec reliability;
  StorageSpec storage;
  DataLoadingSpec data;
  PricingTerms pricing;
  Parallelism p = layout(2, 1, 8, 1, Recompute::selective, false, 1);

  Rig() {
    storage.given = true;
    storage.tier.id = "test";
    storage.tier.write.aggregate = units::gb_per_s(10);
    storage.tier.read.aggregate = units::gb_per_s(20);
  }
  Goodput run(units::Seconds steady, std::vector<Finding>& w, units::Seconds step = units::seconds(1)) {
    const GoodputInputs in{&model, &training, &cluster, &reliability, &storage, &data, &pricing};
    return compute_goodput(in, p, steady, step, 1e5, w);
  }
  // The same for a test that does not look at the warnings.
  Goodput run(units::Seconds steady) {
    std::vector<Finding> ignored;
    return run(steady, ignored);
  }
};

TEST(Goodput, SyncLosesHalfAnIntervalPlusTheStallPerInterruption) {
  Rig s;
  const Goodput g = s.run(units::hours(1000));
  const double delta = g.checkpoint.total.base() / 10e9;  // written at the 10 GB/s aggregate
  EXPECT_NEAR(g.checkpoint_stall.base(), delta, 1e-9);
  EXPECT_NEAR(g.checkpoint_write.base(), delta, 1e-9);
  EXPECT_NEAR(g.lost_per_interruption.base(), (g.checkpoint_interval.base() + delta) / 2.0, 1e-9);
  // Restart: 600 s assumed overhead + load at 20 GB/s.
  EXPECT_NEAR(g.restart.base(), 600.0 + g.checkpoint.total.base() / 20e9, 1e-9);
  EXPECT_NEAR(g.checkpoint_interval.base(), daly_interval(g.checkpoint_stall, g.mtbi).base(), 1e-9);
}

TEST(Goodput, AsyncStallsOnlyForTheHostCopyAndLosesTheWriteToo) {
  Rig s;
  s.reliability.checkpoint_mode = CheckpointMode::async;
  const Goodput g = s.run(units::hours(1000));
  // Device-to-host copy of the rank's shard over PCIe (64 GB/s for the test H100).
  EXPECT_NEAR(g.checkpoint_stall.base(), g.checkpoint.per_rank_max.base() / 64e9, 1e-12);
  EXPECT_NEAR(g.lost_per_interruption.base(),
              (g.checkpoint_interval.base() + g.checkpoint_stall.base()) / 2.0 + g.checkpoint_write.base(), 1e-9);
  Rig sync;
  std::vector<Finding> w2;
  EXPECT_LT(g.checkpoint_overhead.base(), sync.run(units::hours(1000), w2).checkpoint_overhead.base());
}

TEST(Goodput, BreakdownSumsToTheWallTime) {
  Rig s;
  s.reliability.interruptions_per_gpu_hour = 1e-3;  // MTBI 62.5 h on 16 GPUs
  const Goodput g = s.run(units::hours(1000));
  const double sum = g.steady.base() + g.data_stall.base() + g.checkpoint_overhead.base() + g.restart_total.base() +
                     g.lost_work.base();
  EXPECT_NEAR(sum / g.wall.base(), 1.0, 1e-12);
  EXPECT_NEAR(g.expected_interruptions, g.wall.base() / (62.5 * 3600.0), 1e-9);
  EXPECT_NEAR(g.fraction, g.steady.base() / g.wall.base(), 1e-15);
  EXPECT_GT(g.lost_work.base(), 0.0);
}

TEST(Goodput, HotSparesSkipTheReplacementWait) {
  Rig s;
  s.reliability.node_replacement = units::seconds(3600);
  const double without = s.run(units::hours(100)).restart.base();
  s.reliability.hot_spare_nodes = 1;
  const double with = s.run(units::hours(100)).restart.base();
  EXPECT_NEAR(without - with, 3600.0, 1e-9);
}

TEST(Goodput, GivenIntervalIsKept) {
  Rig s;
  s.reliability.checkpoint_interval = units::seconds(1800);
  const Goodput g = s.run(units::hours(100));
  EXPECT_TRUE(g.interval_given);
  EXPECT_DOUBLE_EQ(g.checkpoint_interval.base(), 1800.0);
}

// The findings of `code` in `w`.
std::vector<Finding> of(const std::vector<Finding>& w, FindingCode code) {
  std::vector<Finding> out;
  for (const auto& f : w) {
    if (f.code == code) out.push_back(f);
  }
  return out;
}

TEST(CheckpointInterval, DefaultMinimumIsFifteenMinutes) {
  EXPECT_DOUBLE_EQ(ReliabilitySpec{}.min_checkpoint_interval.base(), 900.0);
}

TEST(CheckpointInterval, MinimumRaisesAShortOptimumAndDalyIsStillReported) {
  // A fast tier (100 TB/s) makes the stall milliseconds and Daly's optimum seconds: the minimum sets
  // the interval, and Daly's value is kept beside it.
  Rig s;
  s.storage.tier.write.aggregate = units::gb_per_s(1e5);
  const Goodput g = s.run(units::hours(1000));
  const units::Seconds daly = daly_interval(g.checkpoint_stall, g.mtbi);
  ASSERT_LT(daly.base(), 900.0);
  EXPECT_NEAR(g.daly_interval.base(), daly.base(), 1e-9);
  EXPECT_DOUBLE_EQ(g.checkpoint_interval.base(), 900.0);
  EXPECT_EQ(g.interval_rule, IntervalRule::minimum);
  EXPECT_STREQ(to_string(g.interval_rule), "min_interval");
  EXPECT_DOUBLE_EQ(g.min_interval.base(), 900.0);
  // 1,000 h of compute / 900 s.
  EXPECT_NEAR(g.checkpoints, 1000.0 * 3600.0 / 900.0, 1e-9);
}

TEST(CheckpointInterval, MinimumOfZeroLeavesDalysOptimum) {
  Rig s;
  s.storage.tier.write.aggregate = units::gb_per_s(1e5);
  s.reliability.min_checkpoint_interval = units::seconds(0);
  const Goodput g = s.run(units::hours(1000));
  EXPECT_EQ(g.interval_rule, IntervalRule::daly);
  EXPECT_NEAR(g.checkpoint_interval.base(), daly_interval(g.checkpoint_stall, g.mtbi).base(), 1e-9);
}

TEST(CheckpointInterval, LongerOptimumIsKeptOverTheMinimum) {
  Rig s;  // 10 GB/s and a 16-GPU MTBI of 2,848 h: Daly's optimum is hours
  const Goodput g = s.run(units::hours(1000));
  ASSERT_GT(g.daly_interval.base(), 900.0);
  EXPECT_EQ(g.interval_rule, IntervalRule::daly);
  EXPECT_DOUBLE_EQ(g.checkpoint_interval.base(), g.daly_interval.base());
}

TEST(CheckpointInterval, GivenIntervalIsNotRaisedToTheMinimum) {
  Rig s;
  s.reliability.checkpoint_interval = units::seconds(300);
  const Goodput g = s.run(units::hours(1000));
  EXPECT_EQ(g.interval_rule, IntervalRule::scenario);
  EXPECT_DOUBLE_EQ(g.checkpoint_interval.base(), 300.0);
}

TEST(CheckpointInterval, AStepLongerThanTheIntervalSetsIt) {
  Rig s;
  std::vector<Finding> w;
  const Goodput g = s.run(units::hours(1000), w, units::seconds(20000));
  EXPECT_EQ(g.interval_rule, IntervalRule::step);
  EXPECT_DOUBLE_EQ(g.checkpoint_interval.base(), 20000.0);
}

TEST(CheckpointCadence, FewerThanTenStepsBetweenCheckpointsIsWarned) {
  // Interval 50 s, step 10 s: a checkpoint every 5 steps, under the 10 that published runs exceed.
  Rig s;
  s.reliability.checkpoint_interval = units::seconds(50);
  std::vector<Finding> w;
  s.run(units::hours(1000), w, units::seconds(10));
  const auto found = of(w, FindingCode::checkpoint_every_few_steps);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_DOUBLE_EQ(found[0].number("steps"), 5.0);
  EXPECT_DOUBLE_EQ(found[0].number("interval_s"), 50.0);
  EXPECT_DOUBLE_EQ(found[0].number("min_steps"), kMinPlausibleStepsPerCheckpoint);
  EXPECT_EQ(found[0].field, "reliability.checkpoint_interval_s");
  // Ten steps apart is not warned.
  s.reliability.checkpoint_interval = units::seconds(100);
  std::vector<Finding> w10;
  s.run(units::hours(1000), w10, units::seconds(10));
  EXPECT_FALSE(has(w10, FindingCode::checkpoint_every_few_steps));
}

TEST(CheckpointCadence, TheMinimumIntervalKeepsDalysSecondsFromBeingWarned) {
  // Fast tier: Daly's optimum is under ten 10-second steps; the 900 s minimum makes it 90 steps.
  Rig s;
  s.storage.tier.write.aggregate = units::gb_per_s(1e5);
  const units::Seconds step = units::seconds(10);
  std::vector<Finding> w;
  s.run(units::hours(1000), w, step);
  EXPECT_FALSE(has(w, FindingCode::checkpoint_every_few_steps));
  s.reliability.min_checkpoint_interval = units::seconds(0);
  std::vector<Finding> w0;
  const Goodput g = s.run(units::hours(1000), w0, step);
  ASSERT_LT(g.checkpoint_interval.base(), 10 * step.base());
  const auto found = of(w0, FindingCode::checkpoint_every_few_steps);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].field, "reliability.min_checkpoint_interval_s");
}

TEST(CheckpointCadence, StallsAboveTenPercentOfTheTimeBetweenCheckpointsAreWarned) {
  // Share = stall / (interval + stall): interval 8 x stall gives 1/9 = 11.1% (> 10%), 10 x gives 9.1%.
  Rig s;
  s.storage.tier.write.aggregate = units::gb_per_s(0.01);  // slow: a long stall
  const double stall = s.run(units::hours(1000)).checkpoint_stall.base();
  s.reliability.checkpoint_interval = units::seconds(8 * stall);
  std::vector<Finding> w;
  s.run(units::hours(1000), w);
  const auto found = of(w, FindingCode::checkpoint_stalls_dominate);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NEAR(found[0].number("stall_pct"), 100.0 / 9.0, 1e-9);
  EXPECT_DOUBLE_EQ(found[0].number("max_pct"), 10.0);
  s.reliability.checkpoint_interval = units::seconds(10 * stall);
  std::vector<Finding> w10;
  s.run(units::hours(1000), w10);
  EXPECT_FALSE(has(w10, FindingCode::checkpoint_stalls_dominate));
}

TEST(StorageDefault, AnAssumedTierIsUsedAndSaidNotTheNetworkStandIn) {
  Rig s;
  s.storage.given = false;
  s.storage.assumed = true;
  s.storage.tier.id = "default-fs";
  std::vector<Finding> w;
  const Goodput g = s.run(units::hours(1000), w);
  // Written at the tier's 10 GB/s aggregate, not at the nodes' network bandwidth.
  EXPECT_NEAR(g.checkpoint_stall.base(), g.checkpoint.total.base() / 10e9, 1e-9);
  EXPECT_FALSE(has(w, FindingCode::no_storage_tier));
  const auto found = of(w, FindingCode::storage_tier_assumed);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].text("tier"), "default-fs");
  EXPECT_DOUBLE_EQ(found[0].number("write_gb_per_s"), 10.0);
  EXPECT_DOUBLE_EQ(found[0].number("read_gb_per_s"), 20.0);
  // The storage price of an assumed tier is not charged: still asked for as storage.tier.
  EXPECT_EQ(g.cost.missing.back(), "storage.tier");
}

TEST(StorageDefault, WithoutAnyTierTheNetworkStandsInAndIsSaid) {
  Rig s;
  s.storage = StorageSpec{};
  std::vector<Finding> w;
  const Goodput g = s.run(units::hours(1000), w);
  EXPECT_TRUE(has(w, FindingCode::no_storage_tier));
  EXPECT_FALSE(has(w, FindingCode::storage_tier_assumed));
  // 16 GPUs = 2 nodes; each writes its share at its NIC (inter-node bandwidth x 8 GPUs).
  const double nic = s.cluster.inter_node_bandwidth.base() * 8;
  EXPECT_NEAR(g.checkpoint_stall.base(), g.checkpoint.per_node_max.base() / nic, 1e-9);
}

// No interruptions and near-free checkpoints: wall == steady, so costs are simple products.
Rig no_failures() {
  Rig s;
  s.reliability.interruptions_per_gpu_hour = 0;
  s.storage.tier.write.aggregate = units::gb_per_s(1e5);
  s.storage.tier.read.aggregate = units::gb_per_s(1e5);
  return s;
}

TEST(Cost, OnPremIsAmortisedCapitalPlusEnergyPlusOperationsOverUtilisation) {
  Rig s = no_failures();
  s.pricing = {.model = PurchaseModel::on_prem,
               .on_prem = {.usd_per_node = 300000, .amortisation_years = 3, .node_power_w = 10000, .pue = 1.5,
                           .usd_per_kwh = 0.10, .ops_usd_per_year = 2e6, .utilisation = 0.5}};
  const Goodput g = s.run(units::hours(1000));
  const double h = units::to_hours(g.wall);
  ASSERT_NEAR(h, 1000.0, 1e-3);  // one checkpoint of ~20 GB at 100 TB/s
  // capital: 300,000 / (3 x 8,760 h) / 0.5 = 22.831 per node-hour x 2 nodes x h
  EXPECT_NEAR(g.cost.compute->base(), 300000.0 / (3 * 8760.0) / 0.5 * 2 * h, 1e-6);
  // energy: 2 nodes x 10 kW x PUE 1.5 x h x $0.10 = 3,000 at 1,000 h
  EXPECT_NEAR(g.cost.energy->base(), 2 * 10.0 * 1.5 * h * 0.10, 1e-6);
  // operations: 2M per year x h / 8,760 / 0.5 = 456,621 at 1,000 h
  EXPECT_NEAR(g.cost.operations->base(), 2e6 * h / 8760.0 / 0.5, 1e-6);
  ASSERT_TRUE(g.cost.total.has_value());
  EXPECT_NEAR(g.cost.total->base(), 45662.1 + 3000.0 + 456621.0, 1.0);  // at h = 1,000
  // Framed like reserved: the whole term is the fleet owned for 3 years, 2 x 300,000 = 600,000
  // bought, energy at 50%: 2 x 10 kW x 1.5 x 0.5 x 26,280 h x 0.10 = 39,420, operations 3 x 2M.
  ASSERT_TRUE(g.cost.whole_term.has_value());
  EXPECT_NEAR(g.cost.whole_term->base(), 600000.0 + 39420.0 + 6e6, 1e-6);
  EXPECT_DOUBLE_EQ(*g.cost.utilisation, 0.5);
  EXPECT_DOUBLE_EQ(*g.cost.term_hours, 3 * 8760.0);
  EXPECT_DOUBLE_EQ(*g.cost.committed_gpus, 16.0);
}

TEST(Cost, OnPremWithoutElectricityPriceAsksForIt) {
  Rig s = no_failures();
  s.pricing = {.model = PurchaseModel::on_prem,
               .on_prem = {.usd_per_node = 300000, .amortisation_years = 3, .node_power_w = 10000}};
  const Goodput g = s.run(units::hours(10));
  EXPECT_FALSE(g.cost.total.has_value());
  bool asked = false;
  for (const auto& m : g.cost.missing) asked = asked || m == "pricing.on_prem.usd_per_kwh";
  EXPECT_TRUE(asked);
}

TEST(Cost, SpotPricesTimeAtTheSpotRateAndPreemptionsShortenMtbi) {
  Rig s = no_failures();
  s.pricing = {.model = PurchaseModel::spot, .spot = {.usd_per_gpu_hour = 2.0, .preemptions_per_node_hour = 0.01}};
  const Goodput g = s.run(units::hours(100));
  EXPECT_NEAR(units::to_hours(g.mtbi), 1.0 / (0.01 * 2), 1e-9);  // 2 nodes: one preemption per 50 h
  EXPECT_GT(g.expected_interruptions, 1.9);                        // ~100 h / 50 h, plus the overhead
  EXPECT_NEAR(g.cost.compute->base(), 2.0 * 16 * units::to_hours(g.wall), 1e-6);
}

TEST(Cost, SpotWithoutPriceIsNullAndNamesTheInput) {
  Rig s = no_failures();
  s.pricing.model = PurchaseModel::spot;
  const Goodput g = s.run(units::hours(10));
  EXPECT_FALSE(g.cost.total.has_value());
  EXPECT_EQ(g.cost.missing.front(), "pricing.spot.usd_per_gpu_hour");
}

TEST(Cost, ReservedChargesTheRunsShareAndShowsTheWholeTermBesideIt) {
  // A 36-month term must not be charged to one short run (the whole term, 64,000 here, is not the
  // run's total); the run pays its share, the term is shown beside it.
  Rig s = no_failures();
  s.pricing = {.model = PurchaseModel::reserved, .reserved = {.usd_per_gpu_hour = 2.0, .term_hours = 2000}};
  const Goodput g = s.run(units::hours(1000));
  const double h = units::to_hours(g.wall);
  ASSERT_NEAR(h, 1000.0, 1e-3);
  // At the default utilisation 1: the run's 16 GPUs x h at 2.0 = 32,000; the whole term
  // 16 GPUs x 2,000 h x 2.0 = 64,000, of which this run alone leaves 64,000 - 32,000 idle.
  ASSERT_TRUE(g.cost.total.has_value());
  EXPECT_NEAR(g.cost.total->base(), 2.0 * 16 * h, 1e-6);
  EXPECT_NEAR(g.cost.idle_share->base(), 0.0, 1e-9);
  ASSERT_TRUE(g.cost.whole_term.has_value());
  EXPECT_NEAR(g.cost.whole_term->base(), 64000.0, 1e-6);
  EXPECT_NEAR(g.cost.idle_commitment->base(), 64000.0 - g.cost.compute->base(), 1e-6);
  EXPECT_DOUBLE_EQ(*g.cost.utilisation, 1.0);
  EXPECT_DOUBLE_EQ(*g.cost.term_hours, 2000.0);
  EXPECT_DOUBLE_EQ(*g.cost.committed_gpus, 16.0);

  // At 50%: the run also pays as many idle GPU-hours as it uses, 16 x h x (1 - 0.5)/0.5 x 2.0.
  s.pricing.reserved.utilisation = 0.5;
  const Goodput half = s.run(units::hours(1000));
  EXPECT_NEAR(half.cost.idle_share->base(), 16 * h * 2.0, 1e-6);
  EXPECT_NEAR(half.cost.total->base(), 2 * 2.0 * 16 * h, 1e-6);
  EXPECT_NEAR(half.cost.whole_term->base(), 64000.0, 1e-6);  // idle billed at the reserved rate
}

TEST(Cost, MonthlySubscriptionPaysWholeMonths) {
  // A monthly subscription (reserved, bought in 730 h blocks): a run of ~1,008 h (42 days) pays
  // two months, 2 x 730 h x 16 GPUs x 2.0 = 46,720; one of ~700 h pays one month, 23,360.
  Rig s = no_failures();
  s.pricing = {.model = PurchaseModel::reserved, .reserved = {.usd_per_gpu_hour = 2.0, .term_block_hours = 730}};
  const Goodput g = s.run(units::hours(1008));
  ASSERT_GT(units::to_hours(g.wall), 730.0);
  ASSERT_LT(units::to_hours(g.wall), 1460.0);
  EXPECT_NEAR(g.cost.total->base(), 46720.0, 1e-6);
  EXPECT_NEAR(g.cost.idle_commitment->base(), 46720.0 - g.cost.compute->base(), 1e-6);
  EXPECT_TRUE(std::find(g.cost.missing.begin(), g.cost.missing.end(), "pricing.reserved.term_months") ==
              g.cost.missing.end());
  ASSERT_TRUE(g.cost.whole_term.has_value());
  EXPECT_NEAR(g.cost.whole_term->base(), 46720.0, 1e-6);  // the blocks are the whole term
  const Goodput one = s.run(units::hours(700));
  ASSERT_LT(units::to_hours(one.wall), 730.0);
  EXPECT_NEAR(one.cost.total->base(), 23360.0, 1e-6);
  // A utilisation does not discount blocks bought for the run: nothing else uses them.
  s.pricing.reserved.utilisation = 0.5;
  EXPECT_NEAR(s.run(units::hours(1008)).cost.total->base(), 46720.0, 1e-6);
}

TEST(Cost, IdleCommittedHoursAtTheProvidersIdleRate) {
  // Tencent-style idle pool: unused committed hours billed at 0.6 (0.3 x a 2.0 rate) instead of 2.0.
  Rig s = no_failures();
  s.pricing = {.model = PurchaseModel::reserved,
               .reserved = {.usd_per_gpu_hour = 2.0, .term_hours = 2000, .idle_usd_per_gpu_hour = 0.6,
                            .utilisation = 0.8}};
  const Goodput g = s.run(units::hours(1000));
  const double h = units::to_hours(g.wall);
  EXPECT_NEAR(g.cost.idle_commitment->base(), 0.6 * 16 * (2000.0 - h), 1e-6);  // ~9,600
  // share: 2.0 x 16 x h + 16 x h x (0.2/0.8) x 0.6 = 32,000 + 2,400 at h = 1,000
  EXPECT_NEAR(g.cost.total->base(), 2.0 * 16 * h + 16 * h * 0.25 * 0.6, 1e-6);
  // whole term: 16 x 2,000 x (0.8 x 2.0 + 0.2 x 0.6) = 55,040
  EXPECT_NEAR(g.cost.whole_term->base(), 55040.0, 1e-6);
}

TEST(Cost, StorageIsRetainedCheckpointsAndDatasetPerMonth) {
  Rig s = no_failures();
  s.storage.tier.usd_per_gb_month = 0.02;
  s.data.dataset_bytes = 5e12;  // 5 TB
  const Goodput g = s.run(units::hours(730));
  const double months = units::to_hours(g.wall) / 730.0;
  EXPECT_NEAR(g.cost.data_storage->base(), 5000.0 * 0.02 * months, 1e-9);
  EXPECT_NEAR(g.cost.checkpoint_storage->base(), 2 * g.checkpoint.total.base() / 1e9 * 0.02 * months, 1e-9);
}

TEST(Goodput, EstimateCarriesItAndKeepsTheSteadyStateTime) {
  Scenario sc = test::scenario_of(dense(), test::job_of(512, 1e11), cluster_of(h100_sxm(), 16),
                                  test::fixed_request(layout(2, 1, 8, 1, Recompute::selective, true, 1)));
  sc.cluster.price_per_gpu = units::usd_per_hour(2.0);
  const auto e = estimate(sc, DatasheetCost(sc.cluster));
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE(e->goodput.modelled);
  EXPECT_DOUBLE_EQ(e->goodput.steady.base(), e->totals.time_to_train.base());
  EXPECT_GT(e->goodput.wall.base(), e->totals.time_to_train.base());
  EXPECT_TRUE(std::isfinite(e->goodput.fraction));
  EXPECT_GT(e->goodput.cost.total->base(), e->totals.cost->base());
}

}  // namespace
}  // namespace capplan::sim
