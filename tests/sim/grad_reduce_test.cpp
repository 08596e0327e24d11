// SPDX-License-Identifier: Apache-2.0
// Gradients accumulated and reduced in fp32 (TrainingJob::grad_reduce_in_fp32): defaults, the
// bytes of the data-parallel collectives, the Adam step and the gradient buffers.
#include <gtest/gtest.h>

#include <cstring>

#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/folds/memory.hpp"
#include "capplan/sim/lowering/step_model.hpp"
#include "capplan/sim/workload/workload.hpp"
#include "test_support.hpp"

namespace capplan::sim {
namespace {

using test::cluster_of;
using test::job_of;
using test::layout;
using test::op_bytes;

// The priced seconds of the named collective in one step (all its repetitions).
double op_seconds(const StepOps& ops, const OpCostModel& cost, const char* name) {
  double total = 0;
  for (const StepOp& so : ops.ops) {
    if (const auto* c = std::get_if<CollectiveOp>(&so.op); c != nullptr && std::strcmp(c->name, name) == 0) {
      total += cost.cost(so.op).base() * so.count;
    }
  }
  return total;
}

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

TEST(GradReduce, TiedEmbeddingsAllReduceTheirGradientBetweenTheFirstAndLastStage) {
  // GPT-3 175B (tied, vocab 51200, hidden 12288) at tp 8, pp 4, dp 2 on 64 A100: the first and
  // the last stage each hold the word embedding's 51200/8 x 12288 rows per TP rank and all-reduce
  // its gradient once per step, in the reduction dtype: 4 bytes per element in bf16 training
  // (fp32 gradients), 2 with 16-bit gradients.
  const ModelSpec m = test::gpt3_175b();
  const Cluster c = cluster_of(test::a100_80gb(), 64);
  const Parallelism p = layout(8, 4, 2, 1, Recompute::full, true, 1);
  const double rows = 51200.0 / 8 * 12288;
  EXPECT_DOUBLE_EQ(op_bytes(build_step_ops(m, job_of(64), p, c), "tied_embedding_grad_all_reduce"), 4.0 * rows);
  EXPECT_DOUBLE_EQ(op_bytes(build_step_ops(m, test::with_16bit_gradients(job_of(64)), p, c),
                            "tied_embedding_grad_all_reduce"),
                   2.0 * rows);
  // One stage holds both ends: nothing to synchronise. Untied: two different matrices.
  EXPECT_EQ(op_bytes(build_step_ops(m, job_of(64), layout(8, 1, 8, 1, Recompute::full, true, 1), c),
                     "tied_embedding_grad_all_reduce"),
            0.0);
  ModelSpec untied = m;
  untied.tied_embeddings = false;
  EXPECT_EQ(op_bytes(build_step_ops(untied, job_of(64), p, c), "tied_embedding_grad_all_reduce"), 0.0);
  // LoRA leaves the embedding frozen (unless it trains it): no gradient to synchronise.
  TrainingJob lora = job_of(64);
  lora.finetune.method = TuneMethod::lora;
  EXPECT_EQ(op_bytes(build_step_ops(m, lora, p, c), "tied_embedding_grad_all_reduce"), 0.0);
  lora.finetune.train_embeddings = true;
  EXPECT_GT(op_bytes(build_step_ops(m, lora, p, c), "tied_embedding_grad_all_reduce"), 0.0);
}

TEST(GradReduce, TheTiedEmbeddingSyncIsNeverHiddenBehindCompute) {
  // The sync runs after the last backward, serially with the data-parallel reduction (Megatron-Core
  // finalize_model_grads; DeepSpeed's ReduceTiedGrads): all of it is exposed. Without overlap the
  // data-parallel time is exactly the reduction plus the sync; with overlap the reduction partly
  // hides behind the backward and the sync still adds in full.
  const ModelSpec m = test::gpt3_175b();
  const Cluster c = cluster_of(test::a100_80gb(), 64);
  const DatasheetCost cost(c);
  for (const bool overlap : {false, true}) {
    Parallelism p = layout(8, 4, 2, 1, Recompute::full, true, 0);
    p.overlap_dp_comm = overlap;
    const Scenario s = test::scenario_of(m, job_of(64), c, test::fixed_request(p));
    const auto est = estimate(s, cost);
    ASSERT_TRUE(est.has_value());
    const StepOps ops = build_step_ops(m, s.training, est->layout.strategy, c);
    const double sync = op_seconds(ops, cost, "tied_embedding_grad_all_reduce");
    const double reduce = op_seconds(ops, cost, "dp_grad_all_reduce");
    ASSERT_GT(sync, 0.0);
    ASSERT_GT(reduce, 0.0);
    const double dp = est->step.breakdown.dp_comm.base();
    if (!overlap) {
      EXPECT_NEAR(dp, reduce + sync, 1e-12 * (reduce + sync));
    } else {
      EXPECT_GE(dp, sync);
      EXPECT_LT(dp, reduce + sync);
    }
  }
}

}  // namespace
}  // namespace capplan::sim
