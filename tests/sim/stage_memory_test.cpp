// SPDX-License-Identifier: Apache-2.0
// Memory, data-parallel gradient bytes and checkpoint bytes on the most loaded of ALL pipeline
// stages (not only the first and the last), stages with different layer counts, one recompute
// policy for time and memory, and element sizes from the precision.
#include <gtest/gtest.h>

#include <algorithm>
#include <variant>

#include "capplan/sim/goodput/goodput.hpp"
#include "capplan/sim/folds/memory.hpp"
#include "capplan/sim/lowering/recompute_policy.hpp"
#include "capplan/sim/lowering/stage_layout.hpp"
#include "capplan/sim/lowering/step_model.hpp"
#include "test_support.hpp"

namespace capplan::sim {
namespace {

using test::job_of;
using test::layout;

// Sums of a few dozen products of integers; 1e-12 relative is far above round-off.
constexpr double kSumOrder = 1e-12;

GpuSpec h200() {
  GpuSpec g = test::h100_sxm();
  g.id = "h200-sxm-141gb";
  g.hbm_capacity = units::gib(141);
  return g;
}

// A DeepSeek-V3-like model, tp 1, pp 16, dp 8, ep 8, ZeRO-1, on
// 141 GiB GPUs. 61 layers over 16 stages: stages 0-12 hold 4 layers, 13-15 hold 3. Stage 0 holds
// the 3 dense layers and one MoE layer; stages 1-12 hold four MoE layers each, with 256/8 = 32
// experts per GPU and, since tp*dp*cp / (ep*etp) = 1, no expert replica to shard the optimizer
// state over.
Parallelism deepseek_layout(int ep, Recompute rc) {
  Parallelism p = layout(1, 16, 8, 1, rc, false, 1);
  p.ep = ep;
  return p;
}

TEST(StageMemory, AMiddleStageOfMoeLayersIsTheMostLoaded) {
  const ModelSpec m = test::deepseek_v3();
  const Parallelism p = deepseek_layout(8, Recompute::selective);
  const TrainingJob job = job_of(1024);  // bf16, fp32 gradients (Megatron-LM's default)
  const MemoryBreakdown mem = memory_per_gpu(m, job, p, h200(), 128);
  EXPECT_EQ(mem.stage, 1);  // stages 1-12 are equal; the first of them is reported
  // Hand-derived parameters of stage 1 on one GPU: four MoE layers, each with its attention,
  // router (256 x 7168), one shared expert and 32 local experts of 3 x 7168 x 2048.
  const double expert = 3.0 * 7168 * 2048;
  const double dense = 4 * (m.attention_params() + 256.0 * 7168 + expert);
  const double local = 4 * 32 * expert;
  // bf16 weights (2), fp32 gradients (4), Adam state (12) sharded over dp = 8 for the dense
  // parameters and over the single expert replica for the experts.
  const double static_bytes = 2 * (dense + local) + 4 * (dense + local) + 12 * dense / 8 + 12 * local;
  const double got = (mem.weights + mem.gradients + mem.optimizer).base();
  EXPECT_NEAR(got, static_bytes, kSumOrder * static_bytes);
  EXPECT_GT(units::to_gib(mem.total()), 180.0);  // ~194 GiB: far over 141
  EXPECT_FALSE(mem.fits());
  // Stage 0 (3 dense + 1 MoE layer and the embedding) holds far fewer parameters: a check of the
  // first and last stages only reported it (117 GiB, "fits").
  EXPECT_LT(stage_params(m, p, 0).total(), 0.7 * stage_params(m, p, 1).total());
}

TEST(StageMemory, FullRecomputeStillReportsTheHeaviestMiddleStage) {
  // Preset deepseek-v3, pp 16, ep 4, ZeRO-1, full recompute: stage 1 (4 MoE layers) holds more
  // than stage 15 (3 MoE layers, the output layer and the logits), and stage 1 is reported.
  const ModelSpec m = test::deepseek_v3();
  const Parallelism p = deepseek_layout(4, Recompute::full);
  const MemoryBreakdown mem = memory_per_gpu(m, job_of(1024), p, h200(), 128);
  EXPECT_EQ(mem.stage, 1);
  const ActivationFootprint f = [&] {
    StepOps ops;
    build_step_ops_into(ops, m, job_of(1024), p, test::cluster_of(h200(), 128), StepOpParts::micro_batch);
    return activation_footprint(ops.ops);
  }();
  // Every stage's total, recomputed here from the parts: the reported one is the largest.
  for (int stage = 0; stage < p.pp; ++stage) {
    Parallelism only = p;
    const StageParams sp = stage_params(m, only, stage);
    EXPECT_LE(sp.total(), stage_params(m, p, 1).total() * (1 + kSumOrder)) << "stage " << stage;
  }
  EXPECT_GT(f[Scope::moe_ffn].remat, 0.0);  // full recompute: one MoE layer rematerialised
}

TEST(StageMemory, DataParallelBytesFollowTheMostLoadedStage) {
  const ModelSpec m = test::deepseek_v3();
  Parallelism p = deepseek_layout(4, Recompute::selective);  // expert replicas: 8/4 = 2
  const StepOps ops = build_step_ops(m, job_of(1024), p, test::cluster_of(h200(), 128));
  double most = 0;
  for (int stage = 0; stage < p.pp; ++stage) most = std::max(most, stage_params(m, p, stage).total());
  EXPECT_DOUBLE_EQ(ops.stage_params, most);
  EXPECT_DOUBLE_EQ(ops.params.total(), stage_params(m, p, 1).total());
  // ZeRO-1: the dense gradients reduce-scattered over dp*cp in fp32, the expert ones over the
  // 2 expert replicas.
  EXPECT_DOUBLE_EQ(test::op_bytes(ops, "dp_grad_reduce_scatter"),
                   4.0 * stage_params(m, p, 1).dense + 4.0 * stage_params(m, p, 1).expert);
}

TEST(StageMemory, CheckpointBytesPerRankFollowTheMostLoadedStage) {
  const ModelSpec m = test::deepseek_v3();
  const Parallelism p = deepseek_layout(8, Recompute::selective);
  const CheckpointSize c = checkpoint_size(m, p, 128, 8, 14.0);
  // ZeRO-1: every rank writes its shard; stage 1's experts have a single replica.
  const StageParams sp = stage_params(m, p, 1);
  const double expected = sp.dense * 14.0 / 8 + sp.expert * 14.0;
  EXPECT_NEAR(c.per_rank_max.base(), expected, kSumOrder * expected);
}

// ---------------------------------------------------------------------------------------------
// Stages with different layer counts
// ---------------------------------------------------------------------------------------------

TEST(StageLayout, FirstAndLastStageLayersLeaveTheRestEvenlySplit) {
  // Llama 3 405B's 126 layers on 16 stages, one layer fewer on the first and last stage (Llama
  // Team 2024, Sec. 3.3.2): 7 + 14 x 8 + 7.
  Parallelism p = layout(8, 16, 1);
  p.first_stage_layers = 7;
  p.last_stage_layers = 7;
  int sum = 0;
  for (int st = 0; st < 16; ++st) {
    const int n = stage_layer_count(126, p, st);
    EXPECT_EQ(n, st == 0 || st == 15 ? 7 : 8) << st;
    sum += n;
  }
  EXPECT_EQ(sum, 126);
}

TEST(StageLayout, OnlyTheFirstStageSetSplitsTheRestOverTheOthers) {
  Parallelism p = layout(1, 4, 1);
  p.first_stage_layers = 2;  // 30 - 2 = 28 over 3 stages: 10, 9, 9
  EXPECT_EQ(stage_layer_count(30, p, 0), 2);
  EXPECT_EQ(stage_layer_count(30, p, 1), 10);
  EXPECT_EQ(stage_layer_count(30, p, 2), 9);
  EXPECT_EQ(stage_layer_count(30, p, 3), 9);
}

TEST(StageLayout, InterleavedChunksPutTheLeadingDenseLayersOnTheFirstChunks) {
  // 8 layers, pp 2, v 2: chunks of 2 layers; chunk order stage0-k0, stage1-k0, stage0-k1,
  // stage1-k1 = layers 0-1, 2-3, 4-5, 6-7. With 3 dense layers: stage 0 holds 0,1 (dense) and
  // 4,5 (MoE); stage 1 holds 2 (dense), 3 and 6,7 (MoE).
  ModelSpec m = test::mixtral_8x7b();
  m.layers = 8;
  m.moe.dense_layers = 3;
  Parallelism p = layout(1, 2, 1, 1, Recompute::selective, false, 0, 2);
  EXPECT_EQ(stage_layers(m, p, 0).moe, 2);
  EXPECT_EQ(stage_layers(m, p, 1).moe, 3);
  p.virtual_stages = 1;  // contiguous: 0-3 (3 dense), 4-7
  EXPECT_EQ(stage_layers(m, p, 0).moe, 1);
  EXPECT_EQ(stage_layers(m, p, 1).moe, 4);
}

TEST(StageLayout, UnevenStagesAreCheckedByCheckLayout) {
  const ModelSpec m = test::llama3_405b();
  const Cluster c = test::cluster_of(test::h100_sxm(), 8 * 16);
  Parallelism p = layout(8, 16, 1);
  p.first_stage_layers = 120;  // leaves 6 layers for 15 stages
  const Diagnostics d = check_layout(test::scenario_of(m, job_of(64), c, test::fixed_request(p)), p);
  ASSERT_FALSE(d.empty());
  EXPECT_EQ(d.front().where, "scenario#/strategy/first_stage_layers");
  p.first_stage_layers = 7;
  p.last_stage_layers = 7;
  EXPECT_TRUE(check_layout(test::scenario_of(m, job_of(64), c, test::fixed_request(p)), p).empty());
}

// ---------------------------------------------------------------------------------------------
// One recompute policy: time and memory agree
// ---------------------------------------------------------------------------------------------

TEST(RecomputePolicy, EveryRecomputedForwardOpHasItsRecomputeAndKeepsNothing) {
  const ModelSpec m = test::mixtral_8x7b();
  for (Framework fw : {Framework::megatron, Framework::pytorch}) {
    for (Recompute rc : {Recompute::none, Recompute::selective, Recompute::full}) {
      TrainingJob job = job_of(64);
      job.framework = fw;
      Parallelism p = layout(2, 1, 4, 1, rc, true);
      p.ep = 4;
      const StepOps ops = build_step_ops(m, job, p, test::cluster_of(test::h100_sxm(), 8));
      double forward_recomputed = 0, recompute_phase = 0;
      for (const StepOp& so : ops.ops) {
        if (so.phase == Phase::forward && so.recomputed) forward_recomputed += so.count;
        if (so.phase == Phase::recompute) recompute_phase += so.count;
      }
      EXPECT_DOUBLE_EQ(forward_recomputed, recompute_phase) << to_string(fw) << " " << to_string(rc);
    }
  }
}

TEST(RecomputePolicy, PytorchSelectiveRecomputeKeepsLessThanMegatronSelective) {
  // torchtitan's op-level selective checkpointing recomputes the element-wise ops, so it keeps
  // their outputs no longer (it used to change only the time).
  const ModelSpec m = test::llama2_70b();
  TrainingJob eager = job_of(64);
  eager.framework = Framework::pytorch;
  const Parallelism p = layout(8, 1, 1, 1, Recompute::selective, true);
  const MemoryBreakdown a = memory_per_gpu(m, job_of(64), p, test::h100_sxm(), 8);
  const MemoryBreakdown b = memory_per_gpu(m, eager, p, test::h100_sxm(), 8);
  EXPECT_LT(b.activations.base(), a.activations.base());
  // What is gone per layer (s = 4096, h = 8192, f = 28672, t = 8, SP, 2-byte elements): the two
  // norm outputs (2*2sh/t) and the two residual-stream tensors (2*2sh/t) give way to the one
  // layer input kept as the checkpoint (2sh/t), and the SwiGLU output, the down GEMM input
  // (2sf/t), is recomputed. The one layer being recomputed holds its recomputed tensors again:
  // 8sh/t + 2sf/t.
  const double s = 4096, h = 8192, f = 28672, t = 8;
  const double per_layer = (8 * s * h - 2 * s * h) / t + 2 * s * f / t;
  const double remat = 8 * s * h / t + 2 * s * f / t;
  const double expected = test::llama2_70b().layers * per_layer - remat;
  EXPECT_NEAR(a.activations.base() - b.activations.base(), expected, 1e-9 * expected);
}

// ---------------------------------------------------------------------------------------------
// Element sizes from the precision
// ---------------------------------------------------------------------------------------------

TEST(ElementSizes, Fp32TrainingKeepsFourByteActivations) {
  // Llama-2-70B, t 8, no SP, flash attention: every kept tensor doubles except the fp32
  // log-sum-exp of the fused attention, 4*a*s*b/t, which is fp32 in both.
  const ModelSpec m = test::llama2_70b();
  const Parallelism p = layout(8, 1, 1);
  const double lse = 4.0 * 64 * 4096 / 8;
  const double bf16 = layer_activation_bytes(m, p, Precision::bf16).base();
  const double fp32 = layer_activation_bytes(m, p, Precision::fp32).base();
  EXPECT_NEAR(fp32, 2 * (bf16 - lse) + lse, kSumOrder * fp32);
}

TEST(ElementSizes, WeightsOptimizerAndCheckpointBytesFollowThePrecision) {
  TrainingJob j = job_of(64, 1e12, Precision::fp32);
  EXPECT_EQ(j.weight_bytes(), 4.0);
  EXPECT_EQ(j.optimizer_state_bytes(), 8.0);  // m and v; the weights are the master copy
  EXPECT_EQ(j.checkpoint_bytes_per_param(), 12.0);
  EXPECT_EQ(j.adam_step_bytes(), 28.0);  // read w, m, v, g; write w, m, v
  j.precision = Precision::bf16;
  EXPECT_EQ(j.weight_bytes(), 2.0);
  EXPECT_EQ(j.checkpoint_bytes_per_param(), 14.0);  // bf16 weights + fp32 master, m, v
  j.precision = Precision::fp8;
  j.fp8_params = true;
  EXPECT_EQ(j.checkpoint_bytes_per_param(), 13.0);  // FP8 weights
  const MemoryBreakdown mem = memory_per_gpu(test::llama2_70b(), job_of(64, 1e12, Precision::fp32), layout(8, 1, 1),
                                             test::h100_sxm(), 8);
  const double params = stage_params(test::llama2_70b(), layout(8, 1, 1), 0).total();
  EXPECT_DOUBLE_EQ(mem.weights.base(), 4.0 * params);
  EXPECT_DOUBLE_EQ(mem.optimizer.base(), 8.0 * params);
}

}  // namespace
}  // namespace capplan::sim
