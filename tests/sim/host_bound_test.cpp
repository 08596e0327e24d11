// SPDX-License-Identifier: Apache-2.0
// Launch- and host-bound time (TrainingJob::host_s_per_op, schedule/step_timing.cpp): a
// micro-batch of a stage takes the longer of its GPU time and the host time to issue its ops.
#include <gtest/gtest.h>

#include "capplan/sim/cost/calibrated_cost.hpp"
#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/lowering/step_model.hpp"
#include "test_support.hpp"

namespace capplan::sim {
namespace {

// The tiny model on one A100: every kernel lasts a few microseconds, far below 1 ms of host time
// per op, so the step is launch-bound at any host time of that order.
Scenario tiny(double host_s_per_op) {
  TrainingJob job = test::job_of(8, 1e9);
  job.host_s_per_op = host_s_per_op;
  return test::scenario_of(test::tiny_model(), job, test::cluster_of(test::a100_80gb(), 1),
                           test::fixed_request(test::layout(1, 1, 1, 1, Recompute::full)));
}

Estimate estimate_of(const Scenario& s, DatasheetAssumptions a = {}) {
  const DatasheetCost cost(s.cluster, a);
  auto e = estimate(s, cost);
  EXPECT_TRUE(e.has_value()) << (e ? "" : to_string(e.error()));
  return e ? *e : Estimate{};
}

// The ops one micro-batch issues on the (only) stage, read from the op list itself: every op of
// the layers, embedding and output scopes, each `count` times (the checkpoint marker is no kernel).
double ops_per_micro_batch(const Scenario& s, const Parallelism& p) {
  const StepOps ops = build_step_ops(s.model, s.training, p, s.cluster);
  double n = 0;
  for (const StepOp& so : ops.ops) {
    if (so.role == OpRole::checkpoint) continue;
    const bool per_layer = so.scope == Scope::layer || so.scope == Scope::dense_ffn || so.scope == Scope::moe_ffn;
    if (per_layer) n += so.count * s.model.layers;
    if (so.scope == Scope::embedding || so.scope == Scope::output) n += so.count;
  }
  return n;
}

DatasheetAssumptions no_launch_floor() {
  DatasheetAssumptions a;
  a.host_launch_us = 0;
  return a;
}

TEST(HostBound, NoHostTimeLeavesTheStepAsItWas) {
  const Estimate e = estimate_of(tiny(0), no_launch_floor());
  EXPECT_EQ(e.step.breakdown.host.base(), 0.0);
  EXPECT_DOUBLE_EQ(e.step.time.base(), e.step.breakdown.total().base());
}

// The datasheet's launch floor (5 us per op on the host, DatasheetAssumptions::host_launch_us)
// binds the tiny model, whose kernels last a few microseconds, even with a recipe that has no
// host time: exactly as a recipe host time of 5 us would without the floor.
TEST(HostBound, TheDatasheetLaunchFloorBindsKernelsShorterThanTheirLaunch) {
  const Estimate floor = estimate_of(tiny(0));
  EXPECT_GT(floor.step.breakdown.host.base(), 0.0);
  EXPECT_DOUBLE_EQ(floor.step.time.base(), estimate_of(tiny(5e-6), no_launch_floor()).step.time.base());
}

// Launch-bound, each micro-batch costs ops x host time: two host times differ by exactly
// micro-batches x ops x their difference, and the op count is the op list's.
TEST(HostBound, ALaunchBoundStepCostsItsOpsTimesTheHostTime) {
  const Estimate a = estimate_of(tiny(1e-3));
  const Estimate b = estimate_of(tiny(2e-3));
  ASSERT_GT(a.step.breakdown.host.base(), 0.0);
  const double m = a.layout.micro_batches;
  EXPECT_EQ(m, 8);  // global batch 8, micro-batch 1, dp 1
  const double ops = ops_per_micro_batch(tiny(1e-3), a.layout.strategy);
  EXPECT_GT(ops, 20);  // a few dozen ops per layer and pass
  // The GPU part (compute, recompute, optimizer, ...) is the same in both: the step difference is
  // host time only. Tolerance: rounding of sums of ~100 doubles.
  EXPECT_NEAR(b.step.time.base() - a.step.time.base(), m * ops * 1e-3, 1e-9);
  // Host-bound time is what the host takes beyond the GPU's own time of each micro-batch.
  const Estimate gpu_only = estimate_of(tiny(0));
  const double gpu_per_micro_batch =
      (gpu_only.step.breakdown.compute + gpu_only.step.breakdown.tp_comm + gpu_only.step.breakdown.variability)
          .base() / m;
  EXPECT_GT(a.step.breakdown.host.base(), 0.9 * m * (ops * 1e-3 - gpu_per_micro_batch));
  EXPECT_DOUBLE_EQ(a.step.time.base(), a.step.breakdown.total().base());
}

// A large model's GEMMs take far longer than issuing them: the host time never binds.
TEST(HostBound, ALargeModelIsNeverHostBound) {
  TrainingJob job = test::job_of(1536);
  const Cluster c = test::cluster_of(test::a100_80gb(), 1024);
  const Parallelism p = test::layout(8, 16, 8, 1, Recompute::full);
  Scenario s = test::scenario_of(test::gpt3_175b(), job, c, test::fixed_request(p));
  const Estimate plain = estimate_of(s);
  s.training.host_s_per_op = 70e-6;
  const Estimate with_host = estimate_of(s);
  EXPECT_EQ(with_host.step.breakdown.host.base(), 0.0);
  EXPECT_DOUBLE_EQ(with_host.step.time.base(), plain.step.time.base());
}

// A profile measured on the scenario's GPU with only launch fits (no GEMM, memory or collective
// curves: every op's GPU time is the datasheet's): `dispatch_s` per op of a framework-like
// sequence, `launch_s` per bare launch (0: that pattern not measured).
Profile launch_profile(double dispatch_s, double launch_s, const std::string& device = "NVIDIA A100-SXM4-80GB") {
  Profile p;
  p.context = {{"backend", "cuda"}, {"device", device}, {"date_utc", "2026-12-04T00:00:00Z"}};
  auto fit = [](const char* pattern, double per_kernel) {
    LaunchFit f;
    f.pattern = pattern;
    f.per_kernel_s = Param{per_kernel, ParamSource::fitted, 4, 0.01};
    f.min_kernels = 16;
    f.max_kernels = 1024;
    return f;
  };
  if (dispatch_s > 0) p.launch.push_back(fit("dispatch", dispatch_s));
  if (launch_s > 0) p.launch.push_back(fit("launch", launch_s));
  return p;
}

Estimate calibrated_estimate_of(const Scenario& s, const Profile& profile) {
  const CalibratedCost cost(profile, s.cluster);
  auto e = estimate(s, cost);
  EXPECT_TRUE(e.has_value()) << (e ? "" : to_string(e.error()));
  return e ? *e : Estimate{};
}

// The measured host issue time per op is a floor under the framework's: with a recipe that has
// no host time it alone makes the step launch-bound, exactly as that host time in the recipe
// would (the GPU times are the datasheet's in both); a larger recipe figure wins over it.
TEST(HostBound, AMeasuredDispatchTimeIsTheFloorOfTheHostTimePerOp) {
  const Estimate recipe = estimate_of(tiny(1e-3));
  const Estimate measured = calibrated_estimate_of(tiny(0), launch_profile(1e-3, 0));
  ASSERT_GT(measured.step.breakdown.host.base(), 0.0);
  EXPECT_DOUBLE_EQ(measured.step.time.base(), recipe.step.time.base());
  EXPECT_DOUBLE_EQ(measured.step.breakdown.host.base(), recipe.step.breakdown.host.base());
  // The recipe's 2 ms per op is more than the measured 1 ms: the recipe's figure stands.
  EXPECT_DOUBLE_EQ(calibrated_estimate_of(tiny(2e-3), launch_profile(1e-3, 0)).step.time.base(),
                   estimate_of(tiny(2e-3)).step.time.base());
}

// Dispatch (a framework-like sequence) is what an op costs the host; the bare launch stands in
// only where dispatch was not measured.
TEST(HostBound, TheDispatchFitWinsOverTheBareLaunchAndTheLaunchStandsInForIt) {
  EXPECT_DOUBLE_EQ(launch_profile(1e-3, 5e-6).host_issue_s_per_op(), 1e-3);
  EXPECT_DOUBLE_EQ(launch_profile(0, 5e-6).host_issue_s_per_op(), 5e-6);
  EXPECT_DOUBLE_EQ(launch_profile(0, 0).host_issue_s_per_op(), 0.0);
  const Estimate launch_only = calibrated_estimate_of(tiny(0), launch_profile(0, 1e-3));
  EXPECT_DOUBLE_EQ(launch_only.step.time.base(), estimate_of(tiny(1e-3)).step.time.base());
}

// Another GPU's launch costs say nothing about this one: an H100 profile on the A100 scenario
// leaves the host time at the datasheet's floor, far below the profile's 1 ms.
TEST(HostBound, AnotherDevicesLaunchFitIsNotApplied) {
  const Estimate other = calibrated_estimate_of(tiny(0), launch_profile(1e-3, 0, "NVIDIA H100 80GB HBM3"));
  EXPECT_DOUBLE_EQ(other.step.time.base(), estimate_of(tiny(0)).step.time.base());
  EXPECT_LT(other.step.time.base(), estimate_of(tiny(1e-3)).step.time.base());
}

// DeepSpeed's ZeRO-3 hooks (TrainingJob::zero3_host_s_per_layer) add host time per layer and pass:
// forward and backward, and the recomputed forward when DeepSpeed releases the parameters after
// it. On the tiny model (2 layers, kernels of microseconds) the step is host-bound, so two hook
// figures differ by exactly micro-batches x layers x passes x their difference; with one rank
// nothing is gathered, and the hooks run all the same.
Scenario tiny_zero(int zero, Recompute rc, bool regather, double hook_s) {
  TrainingJob job = test::job_of(8, 1e9);
  job.host_s_per_op = 1e-3;  // launch-bound whatever the hooks add
  job.zero3_regather_recompute = regather;
  job.zero3_host_s_per_layer = hook_s;
  return test::scenario_of(test::tiny_model(), job, test::cluster_of(test::a100_80gb(), 1),
                           test::fixed_request(test::layout(1, 1, 1, 1, rc, false, zero)));
}

TEST(HostBound, DeepSpeedZero3HooksAddHostTimePerLayerAndPass) {
  const double m = 8, layers = 2;  // global batch 8 at micro-batch 1; the tiny model's layers
  auto step = [](int zero, Recompute rc, bool regather, double hook_s) {
    return estimate_of(tiny_zero(zero, rc, regather, hook_s)).step.time.base();
  };
  // Tolerance: rounding of sums of ~100 doubles.
  // Full recompute with DeepSpeed's release after the recomputed forward: three passes.
  EXPECT_NEAR(step(3, Recompute::full, true, 2e-3) - step(3, Recompute::full, true, 0), m * layers * 3 * 2e-3, 1e-9);
  // The recomputed forward's gather serves the backward: two passes.
  EXPECT_NEAR(step(3, Recompute::full, false, 2e-3) - step(3, Recompute::full, false, 0), m * layers * 2 * 2e-3,
              1e-9);
  EXPECT_NEAR(step(3, Recompute::none, true, 2e-3) - step(3, Recompute::none, true, 0), m * layers * 2 * 2e-3, 1e-9);
  // ZeRO-0 to 2 have no parameter hooks.
  for (int zero : {0, 1, 2}) {
    EXPECT_DOUBLE_EQ(step(zero, Recompute::full, true, 2e-3), step(zero, Recompute::full, true, 0)) << zero;
  }
}

// A host-bound ZeRO-3 step says how much of its host time the hooks are; none without hooks or
// at ZeRO-2.
TEST(HostBound, AHostBoundZero3StepNamesItsHookTime) {
  auto hook_finding = [](int zero, double hook_s) -> const Finding* {
    static Estimate e;
    e = estimate_of(tiny_zero(zero, Recompute::full, true, hook_s));
    for (const Finding& f : e.findings) {
      if (f.code == FindingCode::zero3_hooks_host_bound) return &f;
    }
    return nullptr;
  };
  const Finding* f = hook_finding(3, 2e-3);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->field, "strategy.zero");
  EXPECT_NEAR(f->number("hooks_s"), 8 * 2 * 3 * 2e-3, 1e-12);  // micro-batches x layers x passes x figure
  EXPECT_DOUBLE_EQ(f->number("ms_per_layer"), 2.0);
  EXPECT_GT(f->number("host_s"), 0.0);
  EXPECT_EQ(hook_finding(3, 0), nullptr);
  EXPECT_EQ(hook_finding(2, 2e-3), nullptr);
}

// The hooks are host time: a micro-batch whose GPU work outlasts them is not slowed.
TEST(HostBound, Zero3HooksHideBehindALargeModelsGpuTime) {
  TrainingJob job = test::job_of(256);
  job.zero3_regather_recompute = true;
  const Cluster c = test::cluster_of(test::a100_80gb(), 256, 8, units::gbit_per_s(200));
  Scenario s = test::scenario_of(test::gpt3_175b(), job, c,
                                 test::fixed_request(test::layout(1, 1, 256, 1, Recompute::full, false, 3)));
  const double plain = estimate_of(s).step.time.base();
  s.training.zero3_host_s_per_layer = 2.8e-3;  // the deepspeed recipe's figure
  EXPECT_DOUBLE_EQ(estimate_of(s).step.time.base(), plain);
}

}  // namespace
}  // namespace capplan::sim
