// SPDX-License-Identifier: Apache-2.0
// CalibratedCost: measured points first, the fitted models inside the measured range, the
// datasheet model (with a warning naming what was missing) everywhere else.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "capplan/sim/cost/calibrated_cost.hpp"
#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/lowering/step_model.hpp"
#include "test_support.hpp"

namespace capplan::sim {
namespace {

Param fitted(double v) { return Param{v, ParamSource::fitted, 20, 0.02}; }

// A made-up H100 profile: the numbers are chosen to differ visibly from the datasheet model.
Profile h100_profile() {
  Profile p;
  p.context = {{"backend", "cuda"}, {"device", "NVIDIA H100 80GB HBM3"}, {"host", "node-1"},
               {"date_utc", "2026-11-30T17:00:00Z"}, {"capplan_version", "0.1.0"}};
  GemmFit g;
  g.dtype = Precision::bf16;
  g.launch_s = fitted(6e-6);
  g.peak_flops_per_s = fitted(600e12);
  g.m_half = fitted(64);
  g.n_half = fitted(64);
  g.k_half = fitted(128);
  g.min_m = g.min_n = g.min_k = 256;
  g.max_m = g.max_n = g.max_k = 16384;
  p.gemm.push_back(g);
  // Two measured points of the family m = n = 1024: 10% slower and 10% faster than the model.
  for (auto [k, ratio] : {std::pair{1024, 1.1}, std::pair{4096, 0.9}}) {
    p.gemm_points.push_back({1024, 1024, k, 1, Precision::bf16, ratio * gemm_model_time_s(g, 1024, 1024, k, 1), 10, 0.01});
  }
  MemoryFit el;
  el.pattern = "elementwise";
  el.latency_s = fitted(4e-6);
  el.bandwidth_Bps = fitted(2.5e12);
  el.min_bytes = 1e3;
  el.max_bytes = 1e10;
  p.memory.push_back(el);
  for (int ranks : {2, 8}) {
    CollectiveFit c;
    c.kind = CollectiveKind::all_reduce;
    c.ranks = ranks;
    c.tier = "nvlink";
    c.latency_s = fitted(ranks == 2 ? 10e-6 : 20e-6);
    c.busbw_Bps = fitted(ranks == 2 ? 300e9 : 400e9);
    c.min_bytes = 8;
    c.max_bytes = 8e9;
    p.collectives.push_back(c);
  }
  return p;
}

Cluster h100_cluster() { return test::cluster_of(test::h100_sxm(), 16); }

// h100_profile() with one more 8-rank NVLink fit: `kind` at `busbw` (the all-reduce's latency).
Profile h100_profile_with(CollectiveKind kind, double busbw) {
  Profile p = h100_profile();
  CollectiveFit extra = p.collectives[1];
  extra.kind = kind;
  extra.busbw_Bps = fitted(busbw);
  p.collectives.push_back(extra);
  return p;
}

TEST(CalibratedCost, SourceNamesDeviceAndDate) {
  const CalibratedCost cost(h100_profile(), h100_cluster());
  EXPECT_EQ(cost.source(), "calibrated: NVIDIA H100 80GB HBM3 (2026-11-30)");
}

TEST(CalibratedCost, AMeasuredShapeCostsItsMeasuredTime) {
  const Profile p = h100_profile();
  const CalibratedCost cost(p, h100_cluster());
  const GemmOp op{"x", 1024, 1024, 1024, 1, Precision::bf16};
  EXPECT_DOUBLE_EQ(cost.gemm(op).base(), p.gemm_points[0].time_s);
  EXPECT_EQ(cost.pricing(op), "measured");
}

// Between the k = 1024 and k = 4096 points of one family the ratio measured/model is
// interpolated in log k: at k = 2048 (halfway in log) it is sqrt(1.1 * 0.9).
// A profile faster than the GPU's datasheet peak (measured on a faster device, or a bad fit): an
// 8192^3 bf16 GEMM "measured" in 0.5 ms would be 2.2 PFLOP/s; on an H100 (989 TFLOP/s dense bf16)
// it costs at least 2 x 8192^3 / 989e12 = 1.112 ms, and coverage names the rate once.
TEST(CalibratedCost, AProfileFasterThanTheDatasheetPeakIsHeldToThePeakAndNamed) {
  Profile p = h100_profile();
  const GemmOp big{"x", 8192, 8192, 8192, 1, Precision::bf16};
  p.gemm_points.push_back({8192, 8192, 8192, 1, Precision::bf16, 0.5e-3, 10, 0.01});
  const Cluster c = h100_cluster();
  const CalibratedCost cost(p, c);
  const double floor = 2.0 * 8192.0 * 8192 * 8192 / c.gpu.peak.bf16.base();
  EXPECT_NEAR(floor, 1.112e-3, 0.001e-3);
  EXPECT_DOUBLE_EQ(cost.gemm(big).base(), floor);
  EXPECT_EQ(cost.pricing(big), "measured");
  const auto w = cost.coverage({StepOp{big}});
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].code, FindingCode::profile_gemm_above_peak);
  EXPECT_EQ(w[0].text("dtype"), "bf16");
  EXPECT_NEAR(w[0].number("tflops"), 2.0 * 8192.0 * 8192 * 8192 / 0.5e-3 / 1e12, 1e-6);
  EXPECT_NEAR(w[0].number("peak_tflops"), c.gpu.peak.bf16.base() / 1e12, 1e-6);
  EXPECT_EQ(w[0].number("operations"), 1);
  // A measured time above the floor is kept as it is, and says nothing.
  const GemmOp small{"x", 1024, 1024, 1024, 1, Precision::bf16};
  EXPECT_DOUBLE_EQ(cost.gemm(small).base(), p.gemm_points[0].time_s);
  EXPECT_TRUE(cost.coverage({StepOp{small}}).empty());
}

// The same ceiling for memory bandwidth and links. An elementwise fit of
// 10 TB/s on an H100 (3.35 TB/s HBM): 1 GB costs at least 1e9 / 3.35e12 = 0.2985 ms, not the fit's
// 4 us + 0.1 ms. An all-gather over 8 ranks at 1 TB/s busbw on 450 GB/s NVLink: each rank must
// receive 7/8 of the 1 GB buffer, so at least 1e9 * 7/8 / 450e9 = 1.944 ms, not 20 us + 0.875 ms.
// The all-reduce's 400 GB/s is under its ceiling of 2 x 450 GB/s and stays as fitted. Each
// ceiling is named once, with the count of ops it raised.
TEST(CalibratedCost, MemoryAndLinkRatesAboveTheDatasheetAreHeldToItAndNamedOnceWithACount) {
  Profile p = h100_profile_with(CollectiveKind::all_gather, 1e12);
  p.memory[0].bandwidth_Bps = fitted(10e12);
  const Cluster c = h100_cluster();
  const CalibratedCost cost(p, c);
  const MemoryOp gelu{"gelu_fwd", units::bytes(1e9)};
  const MemoryOp add{"residual_add", units::bytes(2e9)};
  EXPECT_NEAR(cost.memory(gelu).base(), 1e9 / 3350e9, 1e-12);
  EXPECT_NEAR(cost.memory(add).base(), 2e9 / 3350e9, 1e-12);
  EXPECT_NEAR(1e9 / 3350e9, 0.2985e-3, 0.0001e-3);
  const CollectiveOp gather{"tp", CollectiveKind::all_gather, units::bytes(1e9), {8, 8, 1}};
  const CollectiveOp reduce{"tp", CollectiveKind::all_reduce, units::bytes(1e9), {8, 8, 1}};
  EXPECT_NEAR(cost.collective(gather).base(), 1e9 * 7 / 8 / 450e9, 1e-12);
  EXPECT_NEAR(1e9 * 7 / 8 / 450e9, 1.944e-3, 0.001e-3);
  EXPECT_NEAR(cost.collective(reduce).base(), 20e-6 + 1e9 * (2.0 * 7 / 8) / 400e9, 1e-12);
  const auto w = cost.coverage({StepOp{gelu}, StepOp{gather}, StepOp{add}, StepOp{reduce}, StepOp{gather}});
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].code, FindingCode::profile_memory_above_peak);
  EXPECT_EQ(w[0].text("pattern"), "elementwise");
  EXPECT_EQ(w[0].number("operations"), 2);
  EXPECT_NEAR(w[0].number("peak_gbps"), 3350, 1e-9);
  // The fastest against its ceiling: 2 GB in 4 us + 0.2 ms is 9.80 TB/s.
  EXPECT_NEAR(w[0].number("gbps"), 2e9 / (4e-6 + 2e9 / 10e12) / 1e9, 1e-6);
  EXPECT_EQ(w[1].code, FindingCode::profile_collective_above_link);
  EXPECT_EQ(w[1].text("kind"), "all_gather");
  EXPECT_EQ(w[1].number("operations"), 2);
  EXPECT_EQ(w[1].number("ranks"), 8);
  EXPECT_NEAR(w[1].number("ceiling_gbps"), 450, 1e-9);
  EXPECT_NEAR(w[1].number("busbw_gbps"), 1e9 * 7 / 8 / (20e-6 + 1e9 * 7 / 8 / 1e12) / 1e9, 1e-6);
  // The ceiling holds for a profile from another device too, beside its one finding.
  Profile other = p;
  other.context["device"] = "NVIDIA B200";
  const auto wo = CalibratedCost(other, c).coverage({StepOp{gelu}, StepOp{gather}});
  ASSERT_EQ(wo.size(), 3u);
  EXPECT_EQ(wo[0].code, FindingCode::profile_other_device);
  EXPECT_EQ(wo[1].code, FindingCode::profile_memory_above_peak);
  EXPECT_EQ(wo[2].code, FindingCode::profile_collective_above_link);
}

TEST(CalibratedCost, BetweenMeasuredPointsOfAFamilyTheMeasuredRatioIsInterpolated) {
  const Profile p = h100_profile();
  const CalibratedCost cost(p, h100_cluster());
  const GemmOp op{"x", 1024, 1024, 2048, 1, Precision::bf16};
  EXPECT_EQ(cost.pricing(op), "interpolated");
  EXPECT_NEAR(cost.gemm(op).base() / gemm_model_time_s(p.gemm[0], 1024, 1024, 2048, 1), std::sqrt(1.1 * 0.9), 1e-12);
}

TEST(CalibratedCost, InsideTheMeasuredRangeTheFittedModelIsUsed) {
  const Profile p = h100_profile();
  const CalibratedCost cost(p, h100_cluster());
  const GemmOp op{"x", 8192, 3072, 4096, 1, Precision::bf16};
  EXPECT_EQ(cost.pricing(op), "fitted");
  // 2*8192*3072*4096 / (600e12 * 8192/8256 * 3072/3136 * 4096/4224) + 6 us
  const double expect = 6e-6 + 2.0 * 8192 * 3072 * 4096 /
                                   (600e12 * (8192.0 / 8256) * (3072.0 / 3136) * (4096.0 / 4224));
  EXPECT_NEAR(cost.gemm(op).base(), expect, 1e-15);
  EXPECT_TRUE(cost.coverage({StepOp{op}}).empty());
}

TEST(CalibratedCost, OutsideTheMeasuredRangeTheDatasheetIsUsedWithAWarning) {
  const Cluster c = h100_cluster();
  const CalibratedCost cost(h100_profile(), c);
  const DatasheetCost datasheet(c);
  const GemmOp big{"logits", 32768, 16384, 8192, 1, Precision::bf16};
  EXPECT_EQ(cost.pricing(big), "datasheet");
  EXPECT_DOUBLE_EQ(cost.gemm(big).base(), datasheet.gemm(big).base());
  const GemmOp fp8{"x", 1024, 1024, 1024, 1, Precision::fp8};
  EXPECT_DOUBLE_EQ(cost.gemm(fp8).base(), datasheet.gemm(fp8).base());
  const auto w = cost.coverage({StepOp{big}, StepOp{big}, StepOp{fp8}});
  ASSERT_EQ(w.size(), 2u);  // deduplicated
  EXPECT_EQ(w[0].code, FindingCode::profile_gemm_outside_range);
  EXPECT_EQ(w[0].text("dtype"), "bf16");
  EXPECT_EQ(w[0].number("m"), 32768);
  EXPECT_EQ(w[0].number("n"), 16384);
  EXPECT_EQ(w[0].number("k"), 8192);
  for (const char* lo : {"min_m", "min_n", "min_k"}) EXPECT_EQ(w[0].number(lo), 256) << lo;
  for (const char* hi : {"max_m", "max_n", "max_k"}) EXPECT_EQ(w[0].number(hi), 16384) << hi;
  EXPECT_EQ(w[1], text_finding(FindingCode::profile_gemm_not_measured, "dtype", "fp8"));
}

TEST(CalibratedCost, ADtypeWithPointsButNoFitUsesItsPointsAndSaysWhyElsewhere) {
  Profile p = h100_profile();
  p.gemm_points.push_back({512, 512, 512, 1, Precision::fp16, 1e-4, 5, 0.01});
  const CalibratedCost cost(p, h100_cluster());
  EXPECT_DOUBLE_EQ(cost.gemm(GemmOp{"x", 512, 512, 512, 1, Precision::fp16}).base(), 1e-4);
  const auto w = cost.coverage({StepOp{GemmOp{"x", 1024, 512, 512, 1, Precision::fp16}}});
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].code, FindingCode::profile_gemm_too_few_shapes);
  EXPECT_EQ(w[0].text("dtype"), "fp16");
  EXPECT_EQ(w[0].number("shapes"), 1);
}

TEST(CalibratedCost, MemoryOpsUseTheFittedBandwidthOfTheirPattern) {
  const Cluster c = h100_cluster();
  const CalibratedCost cost(h100_profile(), c);
  const MemoryOp gelu{"gelu", units::bytes(1e8)};
  EXPECT_NEAR(cost.memory(gelu).base(), 4e-6 + 1e8 / 2.5e12, 1e-15);
  const MemoryOp norm{"rmsnorm", units::bytes(1e8)};  // the "norm" pattern was not measured
  EXPECT_DOUBLE_EQ(cost.memory(norm).base(), DatasheetCost(c).memory(norm).base());
  const MemoryOp huge{"adam_step", units::bytes(1e11)};
  EXPECT_DOUBLE_EQ(cost.memory(huge).base(), DatasheetCost(c).memory(huge).base());
  const auto w = cost.coverage({StepOp{norm}, StepOp{huge}});
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].code, FindingCode::profile_memory_not_measured);
  EXPECT_EQ(w[0].text("pattern"), "norm");
  EXPECT_EQ(w[0].text("op"), "rmsnorm");
  EXPECT_EQ(w[1].code, FindingCode::profile_memory_outside_range);
  EXPECT_EQ(w[1].text("op"), "adam_step");
  EXPECT_EQ(w[1].text("pattern"), "elementwise");
  EXPECT_EQ(w[1].number("min_bytes"), 1e3);
  EXPECT_EQ(w[1].number("max_bytes"), 1e10);
}

// Measured sizes come first: exact size = measured time; between two sizes, log(time) is
// interpolated in log(bytes) (at 2 MB, halfway in log between 1 MB and 4 MB: sqrt(t1 * t4)).
TEST(CalibratedCost, MemoryOpsBetweenMeasuredSizesInterpolateTheMeasuredTimes) {
  Profile p = h100_profile();
  p.memory_points = {{"elementwise", 1e6, 2e-6, 5, 0.01}, {"elementwise", 4e6, 20e-6, 5, 0.01}};
  const CalibratedCost cost(p, h100_cluster());
  const MemoryOp at1{"residual_add", units::bytes(1e6)};
  const MemoryOp at2{"residual_add", units::bytes(2e6)};
  const MemoryOp at8{"residual_add", units::bytes(8e6)};
  EXPECT_EQ(cost.pricing(at1), "measured");
  EXPECT_DOUBLE_EQ(cost.memory(at1).base(), 2e-6);
  EXPECT_EQ(cost.pricing(at2), "interpolated");
  EXPECT_NEAR(cost.memory(at2).base(), std::sqrt(2e-6 * 20e-6), 1e-15);
  EXPECT_EQ(cost.pricing(at8), "fitted");  // beyond the points, inside the fit's range
  EXPECT_NEAR(cost.memory(at8).base(), 4e-6 + 8e6 / 2.5e12, 1e-15);
}

TEST(CalibratedCost, APatternMeasuredUnderTheOpsOwnNameWinsOverItsClass) {
  Profile p = h100_profile();
  MemoryFit gelu = p.memory[0];
  gelu.pattern = "gelu";
  gelu.bandwidth_Bps = fitted(1.0e12);
  p.memory.push_back(gelu);
  const CalibratedCost cost(p, h100_cluster());
  EXPECT_NEAR(cost.memory(MemoryOp{"gelu_fwd", units::bytes(1e8)}).base(), 4e-6 + 1e8 / 1.0e12, 1e-15);
  EXPECT_NEAR(cost.memory(MemoryOp{"residual_add", units::bytes(1e8)}).base(), 4e-6 + 1e8 / 2.5e12, 1e-15);
}

TEST(CalibratedCost, CollectivesUseTheFitForTheirKindRanksAndTier) {
  const Cluster c = h100_cluster();
  const CalibratedCost cost(h100_profile(), c);
  const double bytes = 1e8;
  const CollectiveOp ar8{"tp", CollectiveKind::all_reduce, units::bytes(bytes), {8, 8, 1}};
  EXPECT_NEAR(cost.collective(ar8).base(), 20e-6 + bytes * (2.0 * 7 / 8) / 400e9, 1e-15);
  // 4 ranks: halfway between 2 and 8 in log2; busbw geometric, latency linear.
  const CollectiveOp ar4{"tp", CollectiveKind::all_reduce, units::bytes(bytes), {4, 4, 1}};
  EXPECT_EQ(cost.pricing(ar4), "interpolated");
  const double t = 0.5;
  const double busbw = std::exp(std::log(300e9) + t * (std::log(400e9) - std::log(300e9)));
  EXPECT_NEAR(cost.collective(ar4).base(), 15e-6 + bytes * 1.5 / busbw, 1e-15);
  // Across nodes and all-to-all were not measured.
  const CollectiveOp ar16{"dp", CollectiveKind::all_reduce, units::bytes(bytes), {16, 8, 2}};
  const CollectiveOp a2a{"ep", CollectiveKind::all_to_all, units::bytes(bytes), {16, 8, 2}};
  const CollectiveOp ar16_in{"tp", CollectiveKind::all_reduce, units::bytes(bytes), {16, 16, 1}};
  EXPECT_DOUBLE_EQ(cost.collective(ar16).base(), DatasheetCost(c).collective(ar16).base());
  const auto w = cost.coverage({StepOp{ar8}, StepOp{ar16}, StepOp{a2a}, StepOp{ar16_in}});
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].code, FindingCode::profile_collective_not_measured);
  EXPECT_EQ(w[0].text("kind"), "all_reduce");
  EXPECT_EQ(w[0].number("across_nodes"), 1);
  EXPECT_EQ(w[1].code, FindingCode::profile_collective_not_measured);
  EXPECT_EQ(w[1].text("kind"), "all_to_all");
  EXPECT_EQ(w[1].number("across_nodes"), 1);
  EXPECT_EQ(w[2].code, FindingCode::profile_collective_ranks_not_measured);
  EXPECT_EQ(w[2].text("kind"), "all_reduce");
  EXPECT_EQ(w[2].number("across_nodes"), 0);
  EXPECT_EQ(w[2].number("ranks"), 16);
  EXPECT_EQ(w[2].text("measured"), "2, 8");
}

TEST(CalibratedCost, AFusedEpKernelIsPricedFromTheCatalogNotFromTheNcclAllToAllFit) {
  // The profile measured NCCL's all-to-all on 8 ranks; DeepEP / HybridEP kernels are not NCCL:
  // inside the node they keep the datasheet's fused-kernel rate, with no warning; the plain
  // all-to-all uses the fit.
  const Cluster c = h100_cluster();
  const CalibratedCost cost(h100_profile_with(CollectiveKind::all_to_all, 100e9), c);
  const double bytes = 1e8;
  const CollectiveOp nccl{"ep", CollectiveKind::all_to_all, units::bytes(bytes), {8, 8, 1}, Axis::ep};
  CollectiveOp fused = nccl;
  fused.fused_ep = true;
  EXPECT_NEAR(cost.collective(nccl).base(), 20e-6 + bytes * 7.0 / 8.0 / 100e9, 1e-15);
  EXPECT_EQ(cost.pricing(fused), "datasheet");
  EXPECT_DOUBLE_EQ(cost.collective(fused).base(), DatasheetCost(c).collective(fused).base());
  EXPECT_TRUE(cost.coverage({StepOp{fused}}).empty());
}

// A fit that does not describe the machine (RMS relative residual above 25%) still prices the
// op, but the user is told how rough it is.
TEST(CalibratedCost, APoorFitIsUsedWithAWarningGivingItsResidual) {
  Profile p = h100_profile();
  p.collectives[1].quality = {13, 0.55, 0.98, 0.87};
  const CalibratedCost cost(p, h100_cluster());
  const CollectiveOp ar8{"tp", CollectiveKind::all_reduce, units::bytes(1e8), {8, 8, 1}};
  EXPECT_EQ(cost.pricing(ar8), "fitted");
  const auto w = cost.coverage({StepOp{ar8}});
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].code, FindingCode::profile_collective_poor_fit);
  EXPECT_EQ(w[0].text("kind"), "all_reduce");
  EXPECT_EQ(w[0].number("across_nodes"), 0);
  EXPECT_EQ(w[0].number("ranks"), 8);
  EXPECT_DOUBLE_EQ(w[0].number("residual_pct"), 55);
  EXPECT_EQ(w[0].number("r2"), 0.87);
}

TEST(CalibratedCost, ZeroSizedOpsCostZero) {
  const CalibratedCost cost(h100_profile(), h100_cluster());
  EXPECT_EQ(cost.gemm(GemmOp{"x", 0, 1024, 1024}).base(), 0.0);
  EXPECT_EQ(cost.memory(MemoryOp{"x", units::bytes(0)}).base(), 0.0);
  EXPECT_EQ(cost.collective(CollectiveOp{"x", CollectiveKind::all_reduce, units::bytes(1e6), {1, 1, 1}}).base(), 0.0);
}

// A whole estimate runs on the calibrated model, reports it as its source, and differs from the
// datasheet estimate (the profile's numbers are not the datasheet's); every op's cost is finite.
TEST(CalibratedCost, AnEstimateWithAProfileUsesItAndNamesIt) {
  const Cluster c = h100_cluster();
  const Scenario s = test::scenario_of(test::gpt_1_3b(), test::job_of(256), c,
                                       test::fixed_request(test::layout(8, 1, 2, 1)));
  const CalibratedCost cost(h100_profile(), c);
  auto calibrated = estimate(s, cost);
  auto datasheet = estimate(s, DatasheetCost(c));
  ASSERT_TRUE(calibrated.has_value());
  ASSERT_TRUE(datasheet.has_value());
  EXPECT_EQ(calibrated->step.cost_model, "calibrated: NVIDIA H100 80GB HBM3 (2026-11-30)");
  EXPECT_TRUE(test::finite(calibrated->step.time.base()));
  EXPECT_NE(calibrated->step.time.base(), datasheet->step.time.base());
  const auto ops = build_step_ops(s.model, s.training, calibrated->layout.strategy, c);
  for (const auto& op : ops.ops) {
    const double t = cost.cost(op.op).base();
    EXPECT_TRUE(std::isfinite(t) && t >= 0);
  }
}

// Immutable and free of shared mutable state: several threads pricing at once agree.
TEST(CalibratedCost, IsSafeToCallFromSeveralThreads) {
  const CalibratedCost cost(h100_profile(), h100_cluster());
  const GemmOp op{"x", 1024, 1024, 2048, 1, Precision::bf16};
  const double expect = cost.gemm(op).base();
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      for (int j = 0; j < 2000; ++j) mismatches[static_cast<size_t>(i)] += cost.gemm(op).base() != expect;
    });
  }
  for (auto& t : threads) t.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
}

// A kernel occupies the GPU at least the measured back-to-back time per kernel: a 1 KB
// element-wise op (fitted: 4 us + 1e3 / 2.5e12 s) and a tiny GEMM priced by the datasheet are
// raised to a measured 9 us floor, a large op is untouched, and an A100 scenario ignores the H100's
// floor.
TEST(CalibratedCost, AMeasuredBackToBackKernelTimeIsTheFloorOfEveryKernel) {
  Profile p = h100_profile();
  LaunchFit b2b;
  b2b.pattern = "back_to_back";
  b2b.per_kernel_s = fitted(9e-6);
  b2b.min_kernels = 16;
  b2b.max_kernels = 1024;
  p.launch.push_back(b2b);
  const Cluster c = h100_cluster();
  const CalibratedCost cost(p, c);
  const CalibratedCost without(h100_profile(), c);
  const MemoryOp small{"gelu", units::bytes(1e3)};
  EXPECT_NEAR(without.memory(small).base(), 4e-6 + 1e3 / 2.5e12, 1e-15);
  EXPECT_DOUBLE_EQ(cost.memory(small).base(), 9e-6);
  const GemmOp tiny{"tiny", 16, 64, 64, 1, Precision::bf16};
  ASSERT_LT(without.gemm(tiny).base(), 9e-6);  // the datasheet's launch (4 us) plus almost nothing
  EXPECT_DOUBLE_EQ(cost.gemm(tiny).base(), 9e-6);
  const MemoryOp large{"gelu", units::bytes(1e9)};
  EXPECT_DOUBLE_EQ(cost.memory(large).base(), without.memory(large).base());
  const Cluster a100 = test::cluster_of(test::a100_80gb(), 16);
  EXPECT_DOUBLE_EQ(CalibratedCost(p, a100).memory(small).base(), CalibratedCost(h100_profile(), a100).memory(small).base());
}

}  // namespace
}  // namespace capplan::sim
