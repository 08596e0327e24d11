// SPDX-License-Identifier: Apache-2.0
// ZeRO-3 with a bounded parameter prefetch (TrainingJob::zero3_prefetch_params, DeepSpeed's
// stage3_prefetch_bucket_size): a gather hides only behind the submodules it was issued during.
#include <gtest/gtest.h>

#include <array>

#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/lowering/step_model.hpp"
#include "test_support.hpp"

namespace capplan::sim {
namespace {

// GPT 1.3B, ZeRO-3 over 256 A100 (32 nodes), `gbps` per GPU across nodes, micro-batch `mb`, no
// recompute; `prefetch` parameter elements ahead (0: the whole next layer).
Estimate zero3(int mb, double prefetch, double gbps, const ModelSpec& m = test::gpt_1_3b()) {
  TrainingJob job = test::job_of(256 * mb);
  job.zero3_prefetch_params = prefetch;
  const Cluster c = test::cluster_of(test::a100_80gb(), 256, 8, units::gbit_per_s(gbps));
  const Scenario s = test::scenario_of(m, job, c,
                                       test::fixed_request(test::layout(1, 1, 256, mb, Recompute::none, false, 3)));
  auto e = estimate(s, DatasheetCost(c));
  EXPECT_TRUE(e.has_value()) << (e ? "" : to_string(e.error()));
  return e ? *e : Estimate{};
}

// GPT-3 175B at micro-batch 1 over 200 Gbit/s per GPU: a layer's gathers take about half its
// compute, so a prefetch of the whole next layer hides them all (as a prefetch bound larger
// than any layer does, the same step within rounding), while one tensor ahead leaves the FFN-in
// gather (604M elements) behind the output projection's compute (151M elements' worth): 4% more.
// Compute is the same; only the exposed gathers differ.
TEST(Zero3Prefetch, OneTensorAheadExposesGathersAWholeLayerPrefetchHides) {
  const Estimate whole = zero3(1, 0, 200, test::gpt3_175b());
  const Estimate unbounded = zero3(1, 1e12, 200, test::gpt3_175b());
  const Estimate bounded = zero3(1, 5e7, 200, test::gpt3_175b());
  EXPECT_NEAR(unbounded.step.time.base(), whole.step.time.base(), 1e-3 * whole.step.time.base());
  EXPECT_GT(bounded.step.time.base(), 1.03 * whole.step.time.base());
  EXPECT_LT(bounded.step.time.base(), 1.10 * whole.step.time.base());
  EXPECT_DOUBLE_EQ(bounded.step.breakdown.compute.base(), whole.step.breakdown.compute.base());
  EXPECT_GT(bounded.step.breakdown.dp_comm.base(), whole.step.breakdown.dp_comm.base());
}

// Never faster than the link allows, and never faster than the whole-layer prefetch: over slow
// and fast networks and small and large micro-batches the bounded step is at least the other.
TEST(Zero3Prefetch, ABoundedPrefetchIsNeverFasterThanAWholeLayerPrefetch) {
  for (double gbps : {25.0, 100.0, 400.0, 3200.0}) {
    for (int mb : {1, 2, 4, 8}) {
      const double whole = zero3(mb, 0, gbps).step.time.base();
      EXPECT_GE(zero3(mb, 5e7, gbps).step.time.base(), whole * (1 - 1e-9)) << gbps << " Gbit/s, mb " << mb;
    }
  }
}

// DeepSpeed releases a submodule's parameters after every forward, the recomputed one included,
// and fetches them again for backward (TrainingJob::zero3_regather_recompute): under full
// recompute a layer is gathered three times per micro-batch, not twice; selective recompute
// recomputes no weights, so nothing is gathered again. The extra gather costs time when the
// gathers do not hide behind compute (GPT-3 175B over 256 GPUs at 25 Gbit/s per GPU).
TEST(Zero3Prefetch, DeepSpeedGathersAgainForTheRecomputedForward) {
  auto gathers = [](bool regather, Recompute rc) {
    TrainingJob job = test::job_of(256);
    job.zero3_regather_recompute = regather;
    const Cluster c = test::cluster_of(test::a100_80gb(), 256, 8, units::gbit_per_s(200));
    const StepOps ops = build_step_ops(test::gpt3_175b(), job, test::layout(1, 1, 256, 1, rc, false, 3), c);
    std::array<int, 4> by_phase{};
    for (const StepOp& so : ops.ops) {
      const auto* g = std::get_if<CollectiveOp>(&so.op);
      if (g != nullptr && so.scope == Scope::layer && g->kind == CollectiveKind::all_gather && g->axis == Axis::dp) {
        ++by_phase[static_cast<int>(so.phase)];
      }
    }
    return by_phase;
  };
  using Phases = std::array<int, 4>;  // forward, backward, recompute, step
  EXPECT_EQ(gathers(true, Recompute::full), (Phases{1, 1, 1, 0}));
  EXPECT_EQ(gathers(false, Recompute::full), (Phases{1, 1, 0, 0}));
  EXPECT_EQ(gathers(true, Recompute::selective), (Phases{1, 1, 0, 0}));

  auto step = [](bool regather, double gbps) {
    TrainingJob job = test::job_of(256);
    job.zero3_regather_recompute = regather;
    const Cluster c = test::cluster_of(test::a100_80gb(), 256, 8, units::gbit_per_s(gbps));
    const Scenario s = test::scenario_of(test::gpt3_175b(), job, c,
                                         test::fixed_request(test::layout(1, 1, 256, 1, Recompute::full, false, 3)));
    auto e = estimate(s, DatasheetCost(c));
    EXPECT_TRUE(e.has_value());
    return e ? e->step.time.base() : 0.0;
  };
  EXPECT_GT(step(true, 25), step(false, 25));
  // Never faster than without the extra gather, on a fast network too.
  EXPECT_GE(step(true, 3200), step(false, 3200) * (1 - 1e-9));
}

}  // namespace
}  // namespace capplan::sim
