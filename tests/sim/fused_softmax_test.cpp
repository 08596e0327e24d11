// SPDX-License-Identifier: Apache-2.0
// Megatron's FusedScaleMaskSoftmax and its PyTorch fallback in the op list (lowering/attention.cpp,
// megatron_fused_softmax_runs): the fused kernel runs only when micro-batch x heads per rank is a
// multiple of the kernel's batches per block; otherwise five PyTorch kernels each way.
#include <gtest/gtest.h>

#include <cstring>

#include "capplan/sim/lowering/step_model.hpp"
#include "test_support.hpp"

namespace capplan::sim {
namespace {

struct SoftmaxOps {
  double fused = 0, torch = 0;  // kernels per phase (count summed), forward
  double torch_fwd_bytes = 0, torch_bwd_bytes = 0;
};

// A vTrain-like GPT layer (fp16, 16 heads, seq 1024, unfused attention, no dropout) on 8 A100.
SoftmaxOps softmax_ops(int tp, int micro_batch, std::int64_t seq = 1024) {
  ModelSpec m = test::gpt_1_3b();
  m.heads = 16;
  m.hidden = 1024;
  m.ffn_hidden = 4096;
  m.seq_len = seq;
  m.flash_attention = false;
  m.dropout = false;
  TrainingJob job = test::job_of(16, 1e9, Precision::fp16);
  job.framework = Framework::megatron;
  const StepOps ops = build_step_ops(m, job, test::layout(tp, 1, 8 / tp, micro_batch, Recompute::full),
                                     test::cluster_of(test::a100_80gb(), 8));
  SoftmaxOps out;
  for (const StepOp& so : ops.ops) {
    const auto* op = std::get_if<MemoryOp>(&so.op);
    if (op == nullptr) continue;
    const bool torch = std::strcmp(op->name, "softmax_torch") == 0;
    if (so.phase == Phase::forward) {
      if (std::strcmp(op->name, "softmax") == 0) out.fused += so.count;
      if (torch) {
        out.torch += so.count;
        out.torch_fwd_bytes += so.count * op->bytes.base();
      }
    }
    if (torch && so.phase == Phase::backward) out.torch_bwd_bytes += so.count * op->bytes.base();
  }
  return out;
}

// 16 heads on tp 8 are 2 per rank: micro-batch 1 gives 2 attention batches, not a multiple of 4,
// so PyTorch's five kernels run; micro-batch 2 gives 4 and the fused kernel. tp 4 (4 per rank) is
// fused at any micro-batch.
TEST(FusedSoftmax, TwoAttentionBatchesFallBackToFivePytorchKernels) {
  const SoftmaxOps odd = softmax_ops(8, 1);
  EXPECT_EQ(odd.fused, 0.0);
  EXPECT_EQ(odd.torch, 5.0);
  const SoftmaxOps even = softmax_ops(8, 2);
  EXPECT_EQ(even.fused, 1.0);
  EXPECT_EQ(even.torch, 0.0);
  EXPECT_EQ(softmax_ops(4, 1).fused, 1.0);
  EXPECT_EQ(softmax_ops(4, 3).fused, 1.0);  // 12 attention batches
}

// Bytes per score of the fallback, op by op (fp16 scores, fp32 softmax): forward .float() 2+4,
// * scale 4+4, masked_fill_ 4+1+4, softmax 4+4, .half() 4+2 = 37; backward the gradients' cast
// 2+4, softmax backward 4+4+4, mask 4+1+4, scale 4+4, cast 4+2 = 41. Scores of one micro-batch:
// 2 heads x 1024 x 1024.
TEST(FusedSoftmax, TheFallbackMovesEveryPassOfItsKernels) {
  const SoftmaxOps odd = softmax_ops(8, 1);
  const double scores = 2.0 * 1024 * 1024;
  EXPECT_NEAR(odd.torch_fwd_bytes, 37.0 * scores, 1e-6 * scores);
  EXPECT_NEAR(odd.torch_bwd_bytes, 41.0 * scores, 1e-6 * scores);
}

// fp32 scores never take the kernel (it is built for 16-bit input): three PyTorch kernels (no
// casts), 25 and 29 bytes per score. Without the limits (capplan's own layer-step runners) the
// softmax is one kernel.
TEST(FusedSoftmax, Fp32ScoresRunThreeKernelsAndTheRunnersOne) {
  ModelSpec m = test::gpt_1_3b();
  m.flash_attention = false;
  TrainingJob job = test::job_of(16, 1e9, Precision::fp32);
  const Parallelism p = test::layout(1, 1, 8, 4, Recompute::none);
  const Cluster c = test::cluster_of(test::a100_80gb(), 8);
  auto count = [&](const char* name) {
    double n = 0;
    for (const StepOp& so : build_step_ops(m, job, p, c).ops) {
      const auto* op = std::get_if<MemoryOp>(&so.op);
      if (op != nullptr && so.phase == Phase::forward && std::strcmp(op->name, name) == 0) n += so.count;
    }
    return n;
  };
  EXPECT_EQ(count("softmax_torch"), 3.0);
  EXPECT_EQ(count("softmax"), 0.0);
  job.softmax_kernel_limits = false;
  EXPECT_EQ(count("softmax_torch"), 0.0);
  EXPECT_EQ(count("softmax"), 1.0);
}

// The kernel's other limits: keys above 4096, a length that is no multiple of 4, and short
// sequences (next_pow2(sk) <= 128: 8 rows per block) where 4 attention batches are too few.
TEST(FusedSoftmax, KeyLengthLimitsAndShortSequenceBlocks) {
  EXPECT_EQ(softmax_ops(4, 1, 8192).torch, 5.0);
  EXPECT_EQ(softmax_ops(4, 1, 1022).torch, 5.0);
  EXPECT_EQ(softmax_ops(4, 1, 128).torch, 5.0);  // 4 batches, 8 per block
  EXPECT_EQ(softmax_ops(4, 2, 128).fused, 1.0);  // 8
}

}  // namespace
}  // namespace capplan::sim
