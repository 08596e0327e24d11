// SPDX-License-Identifier: Apache-2.0
// Activation memory against Korthikanti et al. 2022 (Table 2, Sec. 4.2.3), and the per-GPU
// memory breakdown (ZeRO sharding, pipeline in-flight micro-batches, reserve, fits()).
#include <gtest/gtest.h>

#include <algorithm>

#include "capplan/sim/folds/memory.hpp"
#include "capplan/sim/lowering/step_model.hpp"
#include "test_support.hpp"

namespace capplan::sim {
namespace {

using test::job_of;
using test::layout;

// Byte counts here are sums of a few products of integers and t; the closed forms group them
// differently, so they agree to a few ulps. 1e-12 relative is far above round-off and far below
// one byte per GiB.
constexpr double kSumOrder = 1e-12;

// GPT-3 175B, the model of Korthikanti et al.'s Table 2: s = 2048, h = 12288, a = 96, t = 8, b = 1.
struct Gpt3Shape {
  double s = 2048, b = 1, h = 12288, a = 96, t = 8;
  double sbh() const { return s * b * h; }
};

units::Bytes act(const ModelSpec& m, Recompute rc, bool sp, int t = 8, int b = 1) {
  return layer_activation_bytes(m, layout(t, 1, 1, b, rc, sp), Precision::bf16);
}

// ---------------------------------------------------------------------------------------------
// Korthikanti et al. 2022, Table 2 (activations per layer, 16-bit, 1-byte dropout masks)
// ---------------------------------------------------------------------------------------------

TEST(LayerActivations, TensorParallelNoRecomputeIsSbhTimesTenPlus24OverTPlus5AsOverHt) {
  const Gpt3Shape g;
  const double expected = g.sbh() * (10.0 + 24.0 / g.t + 5.0 * g.a * g.s / (g.h * g.t));
  const double got = act(test::gpt3_175b(), Recompute::none, false).base();
  EXPECT_NEAR(got, expected, kSumOrder * expected);
}

TEST(LayerActivations, SequenceParallelNoRecomputeIsSbhOverTTimes34Plus5AsOverH) {
  const Gpt3Shape g;
  const double expected = g.sbh() / g.t * (34.0 + 5.0 * g.a * g.s / g.h);
  const double got = act(test::gpt3_175b(), Recompute::none, true).base();
  EXPECT_NEAR(got, expected, kSumOrder * expected);
}

TEST(LayerActivations, SelectiveRecomputeWithSequenceParallelIs34SbhOverT) {
  const Gpt3Shape g;
  const double expected = 34.0 * g.sbh() / g.t;
  EXPECT_NEAR(act(test::gpt3_175b(), Recompute::selective, true).base(), expected, kSumOrder * expected);
}

TEST(LayerActivations, SelectiveRecomputeWithoutSequenceParallelIsSbhTimesTenPlus24OverT) {
  const Gpt3Shape g;
  const double expected = g.sbh() * (10.0 + 24.0 / g.t);
  EXPECT_NEAR(act(test::gpt3_175b(), Recompute::selective, false).base(), expected, kSumOrder * expected);
}

TEST(LayerActivations, FullRecomputeKeepsOnlyTheTwoByteLayerInput) {
  const Gpt3Shape g;
  EXPECT_NEAR(act(test::gpt3_175b(), Recompute::full, false).base(), 2.0 * g.sbh(), kSumOrder * g.sbh());
  // With SP the stored input is the sequence shard.
  EXPECT_NEAR(act(test::gpt3_175b(), Recompute::full, true).base(), 2.0 * g.sbh() / g.t, kSumOrder * g.sbh());
}

TEST(LayerActivations, ScaleLinearlyWithMicroBatch) {
  const ModelSpec m = test::gpt3_175b();
  for (Recompute rc : {Recompute::none, Recompute::selective, Recompute::full}) {
    const double one = act(m, rc, false, 8, 1).base();
    EXPECT_NEAR(act(m, rc, false, 8, 4).base(), 4.0 * one, kSumOrder * one);
  }
}

TEST(LayerActivations, FusedAttentionGatedGqaWithoutDropoutFollowsTheTensorList) {
  // Llama-2-70B, t = 8, b = 1, s = 4096, no SP, no dropout, flash attention. Tensors kept for the
  // backward, 2 bytes per element unless noted:
  //   replicated on every TP rank: the two norm inputs (2*2sbh), the QKV input (2sbh), the MLP
  //   input (2sbh)                                                        = 8 sbh
  //   split over t: Q (2sbh), K and V (2*2*sb*kv_dim), attention output = projection input (2sbh),
  //   gate and up outputs (2*2*sbf), SwiGLU output = down input (2sbf)    = (4h + 4kv_dim + 6f) sb / t
  //   flash-attention log-sum-exp: fp32, one per row per head             = 4*a*s*b / t
  //   no s^2 tensors.
  const ModelSpec m = test::llama2_70b();
  const double s = 4096, b = 1, h = 8192, kv_dim = 1024, f = 28672, a = 64, t = 8;
  const double expected = 8.0 * s * b * h + ((4.0 * h + 4.0 * kv_dim + 6.0 * f) * s * b + 4.0 * a * s * b) / t;
  EXPECT_NEAR(act(m, Recompute::none, false).base(), expected, kSumOrder * expected);
  // Nothing quadratic to drop: selective recomputation stores the same.
  EXPECT_NEAR(act(m, Recompute::selective, false).base(), expected, kSumOrder * expected);
  // With SP the replicated 8sbh is split too.
  const double sp = expected - 8.0 * s * b * h + 8.0 * s * b * h / t;
  EXPECT_NEAR(act(m, Recompute::none, true).base(), sp, kSumOrder * sp);
}

// ---------------------------------------------------------------------------------------------
// layers_on_stage
// ---------------------------------------------------------------------------------------------

TEST(LayersOnStage, EvenSplitGivesLOverPEach) {
  for (int st = 0; st < 8; ++st) EXPECT_EQ(layers_on_stage(96, 8, st), 12);
}

TEST(LayersOnStage, UnevenSplitsSumToTheLayersAndDifferByAtMostOne) {
  for (int layers : {1, 7, 30, 61, 80, 105, 126}) {
    for (int pp = 1; pp <= std::min(layers, 35); ++pp) {
      int sum = 0, lo = layers, hi = 0;
      for (int st = 0; st < pp; ++st) {
        const int n = layers_on_stage(layers, pp, st);
        sum += n;
        lo = std::min(lo, n);
        hi = std::max(hi, n);
      }
      EXPECT_EQ(sum, layers) << layers << " layers, pp " << pp;
      EXPECT_LE(hi - lo, 1) << layers << " layers, pp " << pp;
      EXPECT_GE(lo, 1);
    }
  }
  // 30 over 4: 8, 8, 7, 7 (the first stages take the remainder).
  EXPECT_EQ(layers_on_stage(30, 4, 0), 8);
  EXPECT_EQ(layers_on_stage(30, 4, 1), 8);
  EXPECT_EQ(layers_on_stage(30, 4, 2), 7);
  EXPECT_EQ(layers_on_stage(30, 4, 3), 7);
}

// ---------------------------------------------------------------------------------------------
// memory_per_gpu: weights, gradients and optimizer states under ZeRO
// ---------------------------------------------------------------------------------------------

// Llama-2-70B parameters on one GPU with tp = 8, pp = 1 (all layers, both embedding matrices and
// the final norm), by hand.
double llama_params_tp8() {
  const double h = 8192, kv_dim = 1024, f = 28672, V = 32000;
  const double layer = h * (h + 2.0 * kv_dim) + h * h + 3.0 * h * f + 2.0 * h;
  return (80.0 * layer + 2.0 * V * h + h) / 8.0;
}

// 16-bit gradient buffers (the ZeRO paper's 2 + 2 + 12); fp32 ones: grad_reduce_test.cpp.
MemoryBreakdown llama_memory(int zero, int dp = 4) {
  return memory_per_gpu(test::llama2_70b(), test::with_16bit_gradients(job_of(64)), layout(8, 1, dp, 1, Recompute::selective, true, zero),
                        test::h100_sxm(), 64 / dp);
}

TEST(MemoryPerGpu, ZeroZeroKeepsTwoTwoAndTwelveBytesPerParameter) {
  // Rajbhandari et al. 2020, Sec. 3.1: bf16 weights (2) + bf16 gradients (2) + fp32 master,
  // momentum and variance (12).
  const MemoryBreakdown mb = llama_memory(0);
  const double P = llama_params_tp8();
  EXPECT_NEAR(mb.weights.base(), 2.0 * P, kSumOrder * P);
  EXPECT_NEAR(mb.gradients.base(), 2.0 * P, kSumOrder * P);
  EXPECT_NEAR(mb.optimizer.base(), 12.0 * P, kSumOrder * P);
}

TEST(MemoryPerGpu, ZeroOneShardsTheOptimizerStatesOverDp) {
  const MemoryBreakdown mb = llama_memory(1);
  const double P = llama_params_tp8(), dp = 4;
  EXPECT_NEAR(mb.weights.base(), 2.0 * P, kSumOrder * P);
  EXPECT_NEAR(mb.gradients.base(), 2.0 * P, kSumOrder * P);
  EXPECT_NEAR(mb.optimizer.base(), 12.0 * P / dp, kSumOrder * P);
}

TEST(MemoryPerGpu, ZeroTwoAlsoShardsTheGradients) {
  const MemoryBreakdown mb = llama_memory(2);
  const double P = llama_params_tp8(), dp = 4;
  EXPECT_NEAR(mb.weights.base(), 2.0 * P, kSumOrder * P);
  EXPECT_NEAR(mb.gradients.base(), 2.0 * P / dp, kSumOrder * P);
  EXPECT_NEAR(mb.optimizer.base(), 12.0 * P / dp, kSumOrder * P);
}

TEST(MemoryPerGpu, ZeroThreeAlsoShardsTheWeightsPlusTwoGatheredLayers) {
  // FSDP keeps its 1/dp shard plus the unsharded bf16 copy of the current and the prefetched layer.
  const MemoryBreakdown mb = llama_memory(3);
  const double P = llama_params_tp8(), dp = 4;
  const double h = 8192, kv_dim = 1024, f = 28672;
  const double layer_tp = (h * (h + 2.0 * kv_dim) + h * h + 3.0 * h * f + 2.0 * h) / 8.0;
  EXPECT_NEAR(mb.weights.base(), 2.0 * P / dp + 2.0 * 2.0 * layer_tp, kSumOrder * P);
  EXPECT_NEAR(mb.gradients.base(), 2.0 * P / dp, kSumOrder * P);
  EXPECT_NEAR(mb.optimizer.base(), 12.0 * P / dp, kSumOrder * P);
}

TEST(MemoryPerGpu, LastStageHoldsSixBytesOfLogitsPerTokenAndVocabShard) {
  // bf16 logits (2) + fp32 softmax of the vocabulary-parallel cross-entropy (4) = 6*s*b*V/t.
  const MemoryBreakdown mb = llama_memory(0);
  const double expected = 6.0 * 4096.0 * 1.0 * 32000.0 / 8.0;
  EXPECT_NEAR(mb.logits.base(), expected, kSumOrder * expected);
}

TEST(MemoryPerGpu, ReserveIsTwoGibPlusSevenPercentOfTheRest) {
  const MemoryBreakdown mb = llama_memory(1);
  const units::Bytes allocated = mb.weights + mb.gradients + mb.optimizer + mb.activations + mb.logits;
  const double expected = units::gib(2).base() + 0.07 * allocated.base();
  EXPECT_NEAR(mb.reserve.base(), expected, kSumOrder * expected);
}

TEST(MemoryPerGpu, TotalIsTheSumOfThePartsAndFitsComparesItWithCapacity) {
  MemoryBreakdown mb = llama_memory(1);
  const double parts =
      (mb.weights + mb.gradients + mb.optimizer + mb.activations + mb.logits + mb.reserve).base();
  EXPECT_EQ(mb.total().base(), parts);
  EXPECT_EQ(mb.capacity, units::gib(80));
  EXPECT_EQ(mb.fits(), mb.total() <= mb.capacity);
  mb.capacity = mb.total();
  EXPECT_TRUE(mb.fits());  // "fits" includes equality
  mb.capacity = mb.total() - units::bytes(1);
  EXPECT_FALSE(mb.fits());
}

// ---------------------------------------------------------------------------------------------
// memory_per_gpu: activations on the pipeline
// ---------------------------------------------------------------------------------------------

// GPT-3 175B with Korthikanti's settings, tp 8, pp 8, no SP, selective recompute: per layer and
// micro-batch sbh*(10 + 24/t) (Table 2). The first stage also keeps the embedding output, 2sbh
// per in-flight micro-batch.
struct PipelineCase {
  ModelSpec m = test::gpt3_175b();
  double s = 2048, b = 1, h = 12288, t = 8, pp = 8, L = 96;
  double a = 96;
  double sbh() const { return s * b * h; }
  double per_layer() const { return sbh() * (10.0 + 24.0 / t); }
  // Korthikanti's closed forms count what is stored between forward and backward. Recomputing a
  // layer's attention core before its backward (selective recompute of an unfused attention)
  // materialises that layer's softmax output, dropout mask and dropout output again, 5as^2b/t,
  // for the one layer being recomputed.
  double recomputed_attention() const { return 5.0 * a * s * s * b / t; }
  MemoryBreakdown run(int micro_batches, int v = 1, Recompute rc = Recompute::selective) const {
    return memory_per_gpu(m, job_of(micro_batches), layout(8, 8, 1, 1, rc, false, 0, v), test::a100_80gb(),
                          micro_batches);
  }
};

TEST(PipelineActivations, FirstStageOfOneFOneBHoldsAllLayersWorthWhenMicroBatchesAtLeastPp) {
  // Korthikanti et al. 2022, Sec. 4.2.3: the first stage stores p micro-batches of L/p layers =
  // L layers' worth of activations, independent of p.
  const PipelineCase c;
  const MemoryBreakdown mb = c.run(64);
  ASSERT_EQ(mb.stage, 0);
  const double expected = c.L * c.per_layer() + c.pp * 2.0 * c.sbh() + c.recomputed_attention();
  EXPECT_NEAR(mb.activations.base(), expected, kSumOrder * expected);
}

TEST(PipelineActivations, InterleavingMultipliesByOnePlusPMinusOneOverPv) {
  // Korthikanti et al. 2022, Sec. 4.2.3: the interleaved schedule holds L*(1 + (p-1)/(p*v))
  // layers' worth on the first stage (here v = 3; 96 = 8*3*4 layers split evenly).
  const PipelineCase c;
  const double v = 3;
  const MemoryBreakdown mb = c.run(64, 3);
  ASSERT_EQ(mb.stage, 0);
  const double factor = 1.0 + (c.pp - 1.0) / (c.pp * v);
  const double expected = c.L * factor * c.per_layer() + c.pp * factor * 2.0 * c.sbh() + c.recomputed_attention();
  EXPECT_NEAR(mb.activations.base(), expected, kSumOrder * expected);
}

TEST(PipelineActivations, FewerMicroBatchesThanStagesCapsWhatIsInFlight) {
  // Only m = 2 micro-batches exist: the first stage never holds more than 2 of its 12 layers' sets.
  const PipelineCase c;
  const MemoryBreakdown mb = c.run(2);
  ASSERT_EQ(mb.stage, 0);
  const double expected = 2.0 * (c.L / c.pp) * c.per_layer() + 2.0 * 2.0 * c.sbh() + c.recomputed_attention();
  EXPECT_NEAR(mb.activations.base(), expected, kSumOrder * expected);
}

TEST(PipelineActivations, MoreMicroBatchesDoNotRaiseThePeak) {
  const PipelineCase c;
  EXPECT_EQ(c.run(8).activations, c.run(512).activations);
}

TEST(PipelineActivations, FullRecomputeStoresLayerInputsPlusOneRematerialisedLayer) {
  // Full recompute keeps 2sbh per layer per in-flight micro-batch (L layers' worth on stage 0), plus
  // the activations of the one layer being recomputed in backward: all of that layer's tensors,
  // its unfused attention's s^2 ones included, sbh*(10 + 24/t) + 5as^2b/t (Table 2, no recompute).
  const PipelineCase c;
  const MemoryBreakdown mb = c.run(64, 1, Recompute::full);
  ASSERT_EQ(mb.stage, 0);
  const double expected = c.L * 2.0 * c.sbh() + c.per_layer() + c.recomputed_attention() + c.pp * 2.0 * c.sbh();
  EXPECT_NEAR(mb.activations.base(), expected, kSumOrder * expected);
}

TEST(PipelineActivations, ReportsTheMostLoadedOfFirstAndLastStage) {
  const PipelineCase c;
  const MemoryBreakdown peak = c.run(64);
  // The last stage holds one micro-batch of 12 layers but also the logits: still far less here.
  EXPECT_GT(peak.activations.base(), (c.L / c.pp) * c.per_layer());
  EXPECT_EQ(peak.logits.base(), 0.0);  // stage 0 of 8 has no logits
  // With pp = 1 the single stage carries both the embedding and the logits.
  const MemoryBreakdown one =
      memory_per_gpu(c.m, job_of(64), layout(8, 1, 8, 1), test::a100_80gb(), 8);
  EXPECT_EQ(one.stage, 0);
  EXPECT_GT(one.logits.base(), 0.0);
}

}  // namespace
}  // namespace capplan::sim
