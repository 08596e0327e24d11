// SPDX-License-Identifier: Apache-2.0
// Launch- and host-bound time (TrainingJob::host_s_per_op, schedule/step_timing.cpp): a
// micro-batch of a stage takes the longer of its GPU time and the host time to issue its ops.
#include <gtest/gtest.h>

#include "capplan/sim/datasheet_cost.hpp"
#include "capplan/sim/estimate.hpp"
#include "capplan/sim/step_model.hpp"
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

Estimate estimate_of(const Scenario& s) {
  const DatasheetCost cost(s.cluster);
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

TEST(HostBound, NoHostTimeLeavesTheStepAsItWas) {
  const Estimate e = estimate_of(tiny(0));
  EXPECT_EQ(e.step.breakdown.host.base(), 0.0);
  EXPECT_DOUBLE_EQ(e.step.time.base(), e.step.breakdown.total().base());
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

}  // namespace
}  // namespace capplan::sim
