// SPDX-License-Identifier: Apache-2.0
// The scope table (scope.hpp): one row per Scope, layer counts that add up over the stages, and
// per-scope sums of the folds that add up to the op list's totals.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/folds/memory.hpp"
#include "capplan/sim/lowering/scope.hpp"
#include "capplan/sim/lowering/stage_layout.hpp"
#include "capplan/sim/lowering/step_model.hpp"
#include "schedule/step_timing.hpp"
#include "test_support.hpp"

namespace capplan::sim {
namespace {

using test::cluster_of;
using test::job_of;
using test::layout;

// A Scope added without its row, or a row out of order, does not compile.
static_assert(kScopeTraits.size() == kScopeCount);
static_assert(scope_table_complete());
static_assert(traits(Scope::mamba).scope == Scope::mamba);

TEST(ScopeTraits, OneNamedRowPerScope) {
  std::set<std::string> names;
  for (std::size_t i = 0; i < kScopeCount; ++i) {
    const auto s = static_cast<Scope>(i);
    EXPECT_EQ(traits(s).scope, s);
    EXPECT_TRUE(names.insert(to_string(s)).second) << to_string(s);
  }
  EXPECT_STREQ(to_string(Scope::moe_ffn), "moe_ffn");
  EXPECT_TRUE(traits(Scope::layer).per_layer());
  EXPECT_FALSE(traits(Scope::optimizer).per_layer());
}

// A per-layer row says how to count its layers in the model and on a stage; no other row does.
TEST(ScopeTraits, PerLayerRowsAndOnlyThoseCountLayers) {
  for (const ScopeTraits& t : kScopeTraits) {
    EXPECT_EQ(t.per_layer(), t.model_layers != nullptr) << t.name;
    EXPECT_EQ(t.per_layer(), t.stage_layers != nullptr) << t.name;
  }
}

// A small hybrid: attention, MLP, MoE and Mamba layers.
ModelSpec hybrid_model() {
  ModelSpec m{.name = "hybrid", .layers = 12, .hidden = 1024, .heads = 16, .kv_heads = 4, .ffn_hidden = 4096,
              .vocab = 32000, .seq_len = 2048};
  m.layer_pattern = "M*-M*EM-*EM-";
  m.moe.experts = 8;
  m.moe.top_k = 2;
  m.moe.expert_ffn_hidden = 1024;
  m.mamba = {.heads = 32, .head_dim = 64, .state = 64, .groups = 4, .conv_kernel = 4, .chunk = 128};
  return m;
}

std::vector<ModelSpec> models() { return {test::gpt_1_3b(), test::mixtral_8x7b(), hybrid_model()}; }

// Each per-layer scope's layers on the stages add up to the model's; the embedding and output
// run on one stage each.
TEST(ScopeTraits, StageCountsAddUpToTheModel) {
  for (const ModelSpec& m : models()) {
    for (int pp : {1, 2, 4}) {
      const Parallelism p = layout(1, pp, 1);
      for (const ScopeTraits& t : kScopeTraits) {
        int on_stages = 0;
        for (const StageRun& run : stage_runs(m, p)) on_stages += run.count * t.on_stage(run.layers);
        EXPECT_EQ(on_stages, t.in_model(m)) << m.name << " pp " << pp << " " << t.name;
      }
    }
  }
}

// The per-scope buckets of the priced op list hold every op's time once: they add up to the sum
// over the ops.
TEST(ScopeTraits, BucketsAddUpToTheOpList) {
  for (const ModelSpec& m : models()) {
    const Parallelism p = layout(2, 2, 2, 1, Recompute::selective, true, 1);
    const Cluster c = cluster_of(test::h100_sxm(), 8);
    const DatasheetCost cost(c);
    const StepOps ops = build_step_ops(m, job_of(64), p, c);
    OpBuckets b;
    add_op_costs(b, ops.ops, cost);
    double want = 0, launches = 0;
    for (const StepOp& so : ops.ops) {
      if (so.role == OpRole::checkpoint) continue;
      want += cost.cost(so.op).base() * so.count;
      if (traits(so.scope).repeat != Repeat::per_step) launches += so.count;
    }
    double got = b.dp_step + b.dp_sync + b.optimizer, got_launches = 0;
    for (const ScopeTraits& t : kScopeTraits) {
      const Bucket& bk = b[t.scope];
      got += bk.compute + bk.tp + bk.tp_async + bk.pp + bk.fsdp + bk.ep + bk.cp;
      got_launches += bk.launches;
    }
    EXPECT_NEAR(got, want, 1e-12 * want) << m.name;
    EXPECT_DOUBLE_EQ(got_launches, launches) << m.name;
  }
}

// The activation footprint's parts hold every forward op's saved bytes once.
TEST(ScopeTraits, FootprintAddsUpToTheSavedBytes) {
  for (const ModelSpec& m : models()) {
    for (Recompute rc : {Recompute::none, Recompute::selective, Recompute::full}) {
      const Parallelism p = layout(1, 1, 1, 1, rc);
      const StepOps ops = build_step_ops(m, job_of(64), p, cluster_of(test::h100_sxm(), 1));
      double want = 0;
      for (const StepOp& so : ops.ops) {
        if (so.phase == Phase::forward && so.saved > 0) want += so.saved;
      }
      const ActivationFootprint f = activation_footprint(ops.ops);
      double got = 0;
      for (const ScopeTraits& t : kScopeTraits) got += f[t.scope].kept + f[t.scope].remat;
      EXPECT_NEAR(got, want, 1e-12 * want) << m.name;
    }
  }
}

// Model FLOPs: each scope's forward and backward FLOPs, repeated as the model runs it, add up
// to step_flops' total (one GPU, one sequence per micro-batch).
TEST(ScopeTraits, FlopsAddUpByScope) {
  for (const ModelSpec& m : models()) {
    const TrainingJob job = job_of(8);
    const Parallelism p = layout(1, 1, 1);
    const StepOps ops = build_step_ops(m, job, p, cluster_of(test::h100_sxm(), 1));
    PerScope<double> by_scope;
    for (const StepOp& so : ops.ops) {
      if (so.phase != Phase::recompute) by_scope[so.scope] += so.flops;
    }
    double want = 0;
    for (const ScopeTraits& t : kScopeTraits) want += by_scope[t.scope] * t.in_model(m);
    const StepFlops f = step_flops(ops, m, p, job.global_batch);
    EXPECT_NEAR(f.model.base(), want * job.global_batch, 1e-9 * f.model.base()) << m.name;
  }
}

}  // namespace
}  // namespace capplan::sim
