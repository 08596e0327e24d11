// SPDX-License-Identifier: Apache-2.0
// Gradients accumulated and reduced in fp32 (TrainingJob::grad_reduce_in_fp32): defaults, the
// bytes of the data-parallel collectives, the Adam step and the gradient buffers.
#include <gtest/gtest.h>

#include <cstring>

#include "capplan/sim/memory.hpp"
#include "capplan/sim/step_model.hpp"
#include "capplan/sim/workload.hpp"
#include "test_support.hpp"

namespace capplan::sim {
namespace {

using test::cluster_of;
using test::job_of;
using test::layout;
using test::op_bytes;

// Llama-2-70B on 8 H100 under layout `p`, built once with fp32 and once with 16-bit gradients.
struct BothWays {
  StepOps fp32;
  StepOps sixteen;
};
BothWays both_ways(const Parallelism& p) {
  const ModelSpec m = test::llama2_70b();
  const Cluster c = cluster_of(test::h100_sxm(), 8);
  return {build_step_ops(m, job_of(64), p, c), build_step_ops(m, test::with_16bit_gradients(job_of(64)), p, c)};
}

TEST(GradReduce, DefaultsFollowThePrecisionAsMegatronDoes) {
  // Megatron-LM forces fp32 gradient accumulation and all-reduce with --bf16 (FP8 runs on
  // --bf16); fp16 keeps 16-bit gradient buffers; fp32/tf32 training has nothing narrower.
  EXPECT_TRUE(job_of(8, 1e9, Precision::bf16).fp32_gradients());
  EXPECT_TRUE(job_of(8, 1e9, Precision::fp8).fp32_gradients());
  EXPECT_FALSE(job_of(8, 1e9, Precision::fp16).fp32_gradients());
  EXPECT_TRUE(job_of(8, 1e9, Precision::tf32).fp32_gradients());
  TrainingJob off = job_of(8);
  off.grad_reduce_in_fp32 = false;
  EXPECT_DOUBLE_EQ(off.gradient_bytes(), 2.0);
  TrainingJob on = job_of(8, 1e9, Precision::fp16);
  on.grad_reduce_in_fp32 = true;
  EXPECT_DOUBLE_EQ(on.gradient_bytes(), 4.0);
  // fp32 training cannot reduce in 16 bits, whatever the flag says.
  TrainingJob fp32 = job_of(8, 1e9, Precision::fp32);
  fp32.grad_reduce_in_fp32 = false;
  EXPECT_DOUBLE_EQ(fp32.gradient_bytes(), 4.0);
}

TEST(GradReduce, ReductionCarriesGradientBytesAndTheGatherCarriesSixteenBitWeights) {
  // Llama-2-70B, tp 4, pp 1, dp 2, ZeRO 1 (distributed optimizer): each rank holds P/4 parameters;
  // the reduce-scatter moves 4*P/4 bytes of fp32 gradients (2*P/4 in bf16), the all-gather of the
  // updated weights 2*P/4 either way. Adam reads the 4-byte gradient: 30 bytes per local parameter
  // (28 with 16-bit gradients), over the P/4/2 parameters of this rank's shard.
  const auto [a, b] = both_ways(layout(4, 1, 2, 1, Recompute::selective, true, 1));
  const double local = a.params.total();
  ASSERT_GT(local, 1e10);  // about 69e9 / 4
  EXPECT_DOUBLE_EQ(op_bytes(a, "dp_grad_reduce_scatter"), 4.0 * local);
  EXPECT_DOUBLE_EQ(op_bytes(b, "dp_grad_reduce_scatter"), 2.0 * local);
  EXPECT_DOUBLE_EQ(op_bytes(a, "dp_param_all_gather"), 2.0 * local);
  EXPECT_DOUBLE_EQ(op_bytes(b, "dp_param_all_gather"), 2.0 * local);
  EXPECT_DOUBLE_EQ(op_bytes(a, "adam_step"), 30.0 * local / 2);
  EXPECT_DOUBLE_EQ(op_bytes(b, "adam_step"), 28.0 * local / 2);
}

TEST(GradReduce, FsdpReduceScattersGradientsInTheReduceDtype) {
  // ZeRO 3 on 8 GPUs: per layer and micro-batch, two 16-bit parameter all-gathers and one
  // gradient reduce-scatter, which doubles in fp32.
  const auto [a, b] = both_ways(layout(1, 1, 8, 1, Recompute::full, false, 3));
  EXPECT_GT(op_bytes(b, "fsdp_grad_reduce_scatter"), 0.0);
  EXPECT_DOUBLE_EQ(op_bytes(a, "fsdp_grad_reduce_scatter"), 2.0 * op_bytes(b, "fsdp_grad_reduce_scatter"));
  EXPECT_DOUBLE_EQ(op_bytes(a, "fsdp_param_all_gather"), op_bytes(b, "fsdp_param_all_gather"));
  // Two gathers per reduce-scatter, each of 16-bit parameters.
  EXPECT_DOUBLE_EQ(op_bytes(b, "fsdp_param_all_gather"), 2.0 * op_bytes(b, "fsdp_grad_reduce_scatter"));
}

TEST(GradReduce, Fp32GradientBuffersTakeFourBytesPerParameter) {
  // ZeRO 1 leaves the gradient buffer whole on every rank: 4 bytes per local parameter in fp32,
  // 2 in bf16; weights and optimizer state do not change.
  const ModelSpec m = test::llama2_70b();
  const Parallelism p = layout(8, 1, 1, 1, Recompute::full, true, 1);
  const GpuSpec gpu = test::h100_sxm();
  const MemoryBreakdown a = memory_per_gpu(m, job_of(64), p, gpu, 64);
  const MemoryBreakdown b = memory_per_gpu(m, test::with_16bit_gradients(job_of(64)), p, gpu, 64);
  const double local = stage_params(m, p, 0).total();
  EXPECT_DOUBLE_EQ(a.gradients.base(), 4.0 * local);
  EXPECT_DOUBLE_EQ(b.gradients.base(), 2.0 * local);
  EXPECT_DOUBLE_EQ(a.weights.base(), b.weights.base());
  EXPECT_DOUBLE_EQ(a.optimizer.base(), b.optimizer.base());
}

TEST(GradReduce, PureBf16TrainingKeepsTwoBytesOfEverythingAndNoMasterCopy) {
  // torchtune's bf16 (TrainingJob::master_weights false): weights 2, gradients 2 (even when fp32
  // reduction was asked for: they are the weights' dtype), Adam's two moments 2 + 2 = 4 bytes per
  // parameter instead of 12; the optimizer step reads and writes weight and moments and reads the
  // gradient: 2 x (2 + 4) + 2 = 14 bytes per parameter.
  TrainingJob pure = job_of(64);
  pure.master_weights = false;
  pure.grad_reduce_in_fp32 = true;
  EXPECT_DOUBLE_EQ(pure.optimizer_state_bytes(), 4.0);
  EXPECT_DOUBLE_EQ(pure.gradient_bytes(), 2.0);
  EXPECT_DOUBLE_EQ(pure.adam_step_bytes(), 14.0);
  EXPECT_DOUBLE_EQ(pure.weight_bytes(), 2.0);
  const ModelSpec m = test::llama2_70b();
  const Parallelism p = layout(8, 1, 1, 1, Recompute::full, true, 1);
  const MemoryBreakdown mb = memory_per_gpu(m, pure, p, test::h100_sxm(), 64);
  const double local = stage_params(m, p, 0).total();
  EXPECT_DOUBLE_EQ(mb.weights.base(), 2.0 * local);
  EXPECT_DOUBLE_EQ(mb.gradients.base(), 2.0 * local);
  EXPECT_DOUBLE_EQ(mb.optimizer.base(), 4.0 * local);
  // fp32 and FP8 training are unchanged by the flag.
  TrainingJob fp32 = job_of(64, 300e9, Precision::fp32);
  fp32.master_weights = false;
  EXPECT_DOUBLE_EQ(fp32.optimizer_state_bytes(), 8.0);
  TrainingJob fp8 = job_of(64, 300e9, Precision::fp8);
  fp8.master_weights = false;
  EXPECT_DOUBLE_EQ(fp8.optimizer_state_bytes(), 12.0);
}

}  // namespace
}  // namespace capplan::sim
