// SPDX-License-Identifier: Apache-2.0
// The loss kernels' HBM traffic (sim/workload.hpp, LossKernel) against a count of their passes.
#include <gtest/gtest.h>

#include <cstring>

#include "capplan/sim/lowering/step_model.hpp"
#include "capplan/sim/workload/workload.hpp"
#include "test_support.hpp"

namespace capplan::sim {
namespace {

using test::cluster_of;
using test::job_of;
using test::layout;

double memory_bytes(const StepOps& ops, const char* name, Phase phase) {
  double total = 0;
  for (const StepOp& so : ops.ops) {
    const auto* m = std::get_if<MemoryOp>(&so.op);
    if (m != nullptr && so.phase == phase && std::strcmp(m->name, name) == 0) total += m->bytes.base() * so.count;
  }
  return total;
}

TEST(LossKernel, BytesPerLogitCountEveryPass) {
  // Megatron's VocabParallelCrossEntropy, op by op (megatron/core/tensor_parallel/cross_entropy.py):
  // .float() reads 2 writes 4; max reads 4; in-place subtract 4+4; in-place exp 4+4; sum 4;
  // div_ by the sum 4+4 = 38. Backward: mul_ by dloss 4+4, and the cast back to 16 bits 4+2 = 14.
  EXPECT_DOUBLE_EQ(loss_bytes_per_logit(LossKernel::unfused).forward, 38.0);
  EXPECT_DOUBLE_EQ(loss_bytes_per_logit(LossKernel::unfused).backward, 14.0);
  // cross_entropy_loss_fusion jit-fuses cast+max (2+4), subtract+exp+sum (4+4), keeps the div (4+4).
  EXPECT_DOUBLE_EQ(loss_bytes_per_logit(LossKernel::fused).forward, 22.0);
  EXPECT_DOUBLE_EQ(loss_bytes_per_logit(LossKernel::fused).backward, 14.0);
  // Transformer Engine: read the bf16 logits for the online softmax (2), read them again and write
  // the gradient in place (2+2); backward scales the stored gradient (2+2).
  EXPECT_DOUBLE_EQ(loss_bytes_per_logit(LossKernel::te).forward, 6.0);
  EXPECT_DOUBLE_EQ(loss_bytes_per_logit(LossKernel::te).backward, 4.0);
  // Eager F.cross_entropy on .float(): cast 2+4; log_softmax max 4, sum 4, write 4+4.
  // Backward: nll_loss fills a dense fp32 gradient (4), log_softmax backward sums dy (4) then reads
  // dy and y and writes dx (12), cast back 4+2.
  EXPECT_DOUBLE_EQ(loss_bytes_per_logit(LossKernel::eager).forward, 22.0);
  EXPECT_DOUBLE_EQ(loss_bytes_per_logit(LossKernel::eager).backward, 26.0);
}

TEST(LossKernel, DefaultsFollowTheFrameworkAndCanBeOverridden) {
  TrainingJob j = job_of(8);
  EXPECT_EQ(j.loss(), LossKernel::fused);
  j.framework = Framework::pytorch;
  EXPECT_EQ(j.loss(), LossKernel::eager);
  j.loss_kernel = LossKernel::te;
  EXPECT_EQ(j.loss(), LossKernel::te);
  for (LossKernel k : {LossKernel::unfused, LossKernel::fused, LossKernel::te, LossKernel::eager}) {
    EXPECT_EQ(loss_kernel_from_string(to_string(k)), k);
  }
  EXPECT_FALSE(loss_kernel_from_string("liger").has_value());
}

TEST(LossKernel, StepOpsMoveBytesPerLogitTimesTokensTimesTheRanksVocabShare) {
  // Llama-2-70B (vocab 32000), tp 4, micro-batch 1 of 4096 tokens: 4096 x 8000 logits per rank.
  const ModelSpec m = test::llama2_70b();
  const Parallelism p = layout(4, 1, 2, 1, Recompute::none, true);
  const double logits = 4096.0 * (32000 / 4);
  for (LossKernel k : {LossKernel::unfused, LossKernel::fused, LossKernel::te, LossKernel::eager}) {
    TrainingJob j = job_of(8);
    j.loss_kernel = k;
    const StepOps ops = build_step_ops(m, j, p, cluster_of(test::h100_sxm(), 8));
    EXPECT_DOUBLE_EQ(memory_bytes(ops, "cross_entropy", Phase::forward), loss_bytes_per_logit(k).forward * logits)
        << to_string(k);
    EXPECT_DOUBLE_EQ(memory_bytes(ops, "cross_entropy", Phase::backward), loss_bytes_per_logit(k).backward * logits)
        << to_string(k);
  }
}

}  // namespace
}  // namespace capplan::sim
