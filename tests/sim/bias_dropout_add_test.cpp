// SPDX-License-Identifier: Apache-2.0
// The residual stream's dropout and add (lowering/shared_ops.cpp residual_stream): Megatron's fused
// bias-dropout-add (bias_dropout_fusion, on unless --no-bias-dropout-fusion) is one kernel;
// eager frameworks run the dropout and the add as two.
#include <gtest/gtest.h>

#include <cstring>

#include "capplan/sim/lowering/step_model.hpp"
#include "test_support.hpp"

namespace capplan::sim {
namespace {

struct ResidualOps {
  double fused_fwd_bytes = 0, fused_bwd_bytes = 0, fused_launches = 0;  // forward, one micro-batch
  double dropout_fwd_bytes = 0, add_fwd_bytes = 0, split_launches = 0;
  double saved = 0;
};

// GPT-3 175B (dropout on), fp16, tp 8, micro-batch 1, 2048 tokens, no recompute: per layer, two
// residual adds over T' x h = 2048 x 12288 elements (no sequence parallelism).
ResidualOps residual_ops(Framework framework) {
  TrainingJob job = test::job_of(64, 1e9, Precision::fp16);
  job.framework = framework;
  const StepOps ops = build_step_ops(test::gpt3_175b(), job, test::layout(8, 1, 1, 1, Recompute::none),
                                     test::cluster_of(test::a100_80gb(), 8));
  ResidualOps out;
  for (const StepOp& so : ops.ops) {
    const auto* op = std::get_if<MemoryOp>(&so.op);
    if (op == nullptr || so.scope != Scope::layer) continue;
    const double bytes = op->bytes.base() * so.count;
    if (std::strcmp(op->name, "bias_dropout_add") == 0) {
      if (so.phase == Phase::forward) {
        out.fused_fwd_bytes += bytes;
        out.fused_launches += so.count;
        out.saved += so.saved;
      }
      if (so.phase == Phase::backward) out.fused_bwd_bytes += bytes;
    }
    if (so.phase != Phase::forward) continue;
    if (std::strcmp(op->name, "dropout") == 0) {
      out.dropout_fwd_bytes += bytes;
      out.split_launches += so.count;
      out.saved += so.saved;
    }
    if (std::strcmp(op->name, "residual_add") == 0) {
      out.add_fwd_bytes += bytes;
      out.split_launches += so.count;
      out.saved += so.saved;
    }
  }
  return out;
}

constexpr double kElements = 2048.0 * 12288.0;  // T' x h

// Fused: two launches per layer of (3 x 2 + 1) bytes per element (block output and residual
// read, sum and 1-byte mask written), backward twice that; no separate dropout or add.
TEST(BiasDropoutAdd, MegatronRunsTheDropoutAndTheAddAsOneKernel) {
  const ResidualOps r = residual_ops(Framework::megatron);
  EXPECT_DOUBLE_EQ(r.fused_launches, 2.0);
  EXPECT_DOUBLE_EQ(r.fused_fwd_bytes, 2.0 * 7.0 * kElements);
  EXPECT_DOUBLE_EQ(r.fused_bwd_bytes, 2.0 * 14.0 * kElements);
  EXPECT_EQ(r.split_launches, 0.0);
  // Kept for backward as before: the sum (2 bytes) and the mask (1 byte), per add.
  EXPECT_DOUBLE_EQ(r.saved, 2.0 * 3.0 * kElements);
}

// Eager: the dropout ((2 x 2 + 1) bytes) and the add (3 x 2) as four launches per layer, 11 bytes
// per element where the fused kernel moves 7; the same tensors kept.
TEST(BiasDropoutAdd, EagerFrameworksRunTheDropoutAndTheAddApart) {
  const ResidualOps r = residual_ops(Framework::pytorch);
  EXPECT_DOUBLE_EQ(r.fused_launches, 0.0);
  EXPECT_DOUBLE_EQ(r.split_launches, 4.0);
  EXPECT_DOUBLE_EQ(r.dropout_fwd_bytes, 2.0 * 5.0 * kElements);
  EXPECT_DOUBLE_EQ(r.add_fwd_bytes, 2.0 * 6.0 * kElements);
  EXPECT_DOUBLE_EQ(r.saved, 2.0 * 3.0 * kElements);
}

}  // namespace
}  // namespace capplan::sim
