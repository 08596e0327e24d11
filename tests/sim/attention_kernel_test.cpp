// SPDX-License-Identifier: Apache-2.0
// The fused attention kernel's generation (TrainingJob::attention_kernel): which ops it marks and
// what it costs a step.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <utility>

#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/lowering/step_model.hpp"
#include "test_support.hpp"

namespace capplan::sim {
namespace {

using test::cluster_of;
using test::job_of;
using test::layout;

// Every GEMM of the step with its attention_v1 flag, by name.
int count_v1(const StepOps& ops, bool expect_fused) {
  int marked = 0;
  for (const StepOp& so : ops.ops) {
    const auto* g = std::get_if<GemmOp>(&so.op);
    if (g == nullptr || !g->attention_v1) continue;
    ++marked;
    EXPECT_TRUE(std::strcmp(g->name, "attn_score") == 0 || std::strcmp(g->name, "attn_context") == 0) << g->name;
    EXPECT_EQ(g->fused_attention, expect_fused) << g->name;
  }
  return marked;
}

TEST(AttentionKernel, NamesRoundTripAndTheDefaultIsFlashAttentionTwo) {
  EXPECT_EQ(TrainingJob{}.attention_kernel, AttentionKernel::flash2);
  for (AttentionKernel k : {AttentionKernel::flash2, AttentionKernel::flash1}) {
    EXPECT_EQ(attention_kernel_from_string(to_string(k)), k);
  }
  EXPECT_FALSE(attention_kernel_from_string("flash3").has_value());
}

TEST(AttentionKernel, FlashOneMarksTheFusedAttentionOpsOnly) {
  // GPT-1.3B (fused attention) on 8 H100: flash1 marks the attention core's GEMMs of every phase,
  // nothing else; flash2 marks none; unfused attention has no fused kernel to mark.
  ModelSpec m = test::gpt_1_3b();
  const Cluster c = cluster_of(test::h100_sxm(), 8);
  const Parallelism p = layout(1, 1, 8, 4, Recompute::none);
  TrainingJob job = job_of(32);
  EXPECT_EQ(count_v1(build_step_ops(m, job, p, c), true), 0);
  job.attention_kernel = AttentionKernel::flash1;
  EXPECT_GT(count_v1(build_step_ops(m, job, p, c), true), 0);
  m.flash_attention = false;
  EXPECT_EQ(count_v1(build_step_ops(m, job, p, c), false), 0);
}

TEST(AttentionKernel, AFlashOneStepIsSlowerByItsAttentionTimeAlone) {
  // The same step with flash1 attention: compute grows by exactly the attention core's extra time
  // (FlashAttention-1 rate instead of FlashAttention-2), no other op changes.
  const ModelSpec m = test::gpt_1_3b();
  const Cluster c = cluster_of(test::h100_sxm(), 8);
  const DatasheetCost cost(c);
  const Parallelism p = layout(1, 1, 8, 4, Recompute::none);
  TrainingJob v2 = job_of(32);
  TrainingJob v1 = v2;
  v1.attention_kernel = AttentionKernel::flash1;
  const StepOps a = build_step_ops(m, v2, p, c), b = build_step_ops(m, v1, p, c);
  ASSERT_EQ(a.ops.size(), b.ops.size());
  double extra = 0;
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    const double ta = cost.cost(a.ops[i].op).base() * a.ops[i].count;
    const double tb = cost.cost(b.ops[i].op).base() * b.ops[i].count;
    const auto* g = std::get_if<GemmOp>(&b.ops[i].op);
    if (g != nullptr && g->attention_v1) {
      EXPECT_GT(tb, ta);
      ASSERT_EQ(b.ops[i].scope, Scope::layer);
      extra += (tb - ta) * m.layers;  // a layer op, run by each of the stage's layers
    } else {
      EXPECT_DOUBLE_EQ(ta, tb);
    }
  }
  ASSERT_GT(extra, 0.0);
  auto ea = estimate(test::scenario_of(m, v2, c, test::fixed_request(p)), cost);
  auto eb = estimate(test::scenario_of(m, v1, c, test::fixed_request(p)), cost);
  ASSERT_TRUE(ea.has_value());
  ASSERT_TRUE(eb.has_value());
  // One micro-batch per step and one stage: the extra attention time of every layer is extra
  // compute per step (8 GPUs x micro-batch 4 = 32 sequences: one micro-batch).
  EXPECT_NEAR(eb->step.breakdown.compute.base() - ea->step.breakdown.compute.base(), extra, 1e-9 * extra);
  EXPECT_GT(eb->step.time.base(), ea->step.time.base());
}

// The swept sequence and head dimension every fused attention op of the step carries (0: none).
std::pair<std::int64_t, std::int64_t> attention_shape(const StepOps& ops) {
  std::pair<std::int64_t, std::int64_t> shape{-1, -1};
  for (const StepOp& so : ops.ops) {
    const auto* g = std::get_if<GemmOp>(&so.op);
    if (g == nullptr || (std::strcmp(g->name, "attn_score") != 0 && std::strcmp(g->name, "attn_context") != 0)) continue;
    if (shape.first >= 0) {
      EXPECT_EQ(g->attention_tokens, shape.first) << g->name;
      EXPECT_EQ(g->attention_head_dim, shape.second) << g->name;
    }
    shape = {g->attention_tokens, g->attention_head_dim};
  }
  return shape;
}

TEST(AttentionKernel, TheKernelsShapeIsTheSequenceItsQueryBlocksSweep) {
  // GPT-1.3B (2048 tokens, 16 heads of 128) on 8 H100 (DatasheetCost::attention_shape prices it):
  // the whole causal sequence; a context-parallel rank's chunk; a window of w keys as the causal
  // 2w when every layer is windowed, the full sequence when only some are (those hold nearly all
  // the FLOPs); a packed document's E[l^2]/E[l]; nothing for unfused attention.
  ModelSpec m = test::gpt_1_3b();
  const Cluster c = cluster_of(test::h100_sxm(), 8);
  const TrainingJob job = job_of(32);
  const Parallelism p = layout(1, 1, 8, 4, Recompute::none);
  const std::int64_t head_dim = m.hidden / m.heads;
  using Shape = std::pair<std::int64_t, std::int64_t>;
  EXPECT_EQ(attention_shape(build_step_ops(m, job, p, c)), Shape(m.seq_len, head_dim));
  Parallelism cp = p;
  cp.cp = 2;
  cp.dp = 4;
  EXPECT_EQ(attention_shape(build_step_ops(m, job, cp, c)).first, m.seq_len / 2);
  ModelSpec w = m;
  w.sliding_window = 256;
  EXPECT_EQ(attention_shape(build_step_ops(w, job, p, c)).first, 512);
  w.sliding_window_every = 2;
  EXPECT_EQ(attention_shape(build_step_ops(w, job, p, c)).first, m.seq_len);
  TrainingJob packed = job;
  packed.attention_tokens = 700;
  EXPECT_EQ(attention_shape(build_step_ops(m, packed, p, c)).first, 700);
  ModelSpec unfused = m;
  unfused.flash_attention = false;
  EXPECT_EQ(attention_shape(build_step_ops(unfused, job, p, c)), Shape(0, 0));
}

}  // namespace
}  // namespace capplan::sim
