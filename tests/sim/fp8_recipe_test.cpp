// SPDX-License-Identifier: Apache-2.0
// FP8 scaling recipes (sim/workload.hpp, Fp8Recipe): the bytes of Transformer Engine's casts.
#include <gtest/gtest.h>

#include <cstring>

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

double cast_bytes(const StepOps& ops) { return op_bytes(ops, "fp8_cast_transpose"); }

TEST(Fp8Recipe, CurrentScalingReadsEachInputOnceMoreThanDelayedScaling) {
  // Delayed scaling: one fused cast + transpose (read 2, write 1 + 1). Current (tensorwise)
  // scaling computes the tensor's amax in a pass of its own first: 2 + 2 + 1 + 1.
  EXPECT_DOUBLE_EQ(fp8_cast_bytes_per_element(Fp8Recipe::delayed), 4.0);
  EXPECT_DOUBLE_EQ(fp8_cast_bytes_per_element(Fp8Recipe::current), 6.0);
  // MXFP8: the cast writes one E8M0 scale per 32 elements with each copy: 2 + 1 + 1 + 2/32.
  EXPECT_DOUBLE_EQ(fp8_cast_bytes_per_element(Fp8Recipe::mxfp8), 4.0625);
  for (Fp8Recipe r : {Fp8Recipe::delayed, Fp8Recipe::current, Fp8Recipe::mxfp8}) {
    EXPECT_EQ(fp8_recipe_from_string(to_string(r)), r);
  }
  EXPECT_FALSE(fp8_recipe_from_string("tensorwise").has_value());
  EXPECT_EQ(job_of(8).fp8_recipe, Fp8Recipe::delayed);  // TE's and Megatron-LM's default
}

TEST(Fp8Recipe, OnlyDelayedScalingQuantisesAGroupedGemmsInputsInOneLaunch) {
  // Transformer Engine v2.7: multi_tensor_quantize fuses the per-expert casts only for delayed
  // scaling; current scaling runs amax, scale and cast for each expert's tensor, MXFP8 one cast
  // each. Mixtral, ep 4 (2 local experts), fp8, one micro-batch: the routed experts' casts launch
  // 1, 2 x 3 and 2 x 1 times per cast point; the bytes follow the recipe's bytes per element.
  const ModelSpec m = test::mixtral_8x7b();
  Parallelism p = layout(1, 1, 8, 1, Recompute::none);
  p.ep = 4;
  const Cluster c = cluster_of(test::h100_sxm(), 8);
  auto expert_casts = [&](Fp8Recipe r) {
    TrainingJob job = job_of(8, 1e9, Precision::fp8);
    job.fp8_recipe = r;
    const StepOps ops = build_step_ops(m, job, p, c);
    double launches = 0, bytes = 0;
    int points = 0;
    for (const StepOp& so : ops.ops) {
      const auto* mo = std::get_if<MemoryOp>(&so.op);
      if (mo == nullptr || so.scope != Scope::moe_ffn || std::strcmp(mo->name, "fp8_cast_transpose") != 0) continue;
      // The routed experts' casts (not the shared or router ones): the launches of one point.
      ++points;
      launches = std::max(launches, so.count);
      bytes += mo->bytes.base() * so.count;
    }
    EXPECT_GT(points, 0);
    return std::pair{launches, bytes};
  };
  const auto [d_launch, d_bytes] = expert_casts(Fp8Recipe::delayed);
  const auto [c_launch, c_bytes] = expert_casts(Fp8Recipe::current);
  const auto [x_launch, x_bytes] = expert_casts(Fp8Recipe::mxfp8);
  EXPECT_DOUBLE_EQ(d_launch, 1.0);
  EXPECT_DOUBLE_EQ(c_launch, 2.0 * 3.0);
  EXPECT_DOUBLE_EQ(x_launch, 2.0);
  EXPECT_NEAR(c_bytes, 1.5 * d_bytes, 1e-6 * d_bytes);
  EXPECT_NEAR(x_bytes, 4.0625 / 4.0 * d_bytes, 1e-6 * d_bytes);
}

// The output layer is Megatron-Core's own ColumnParallelLinear, outside Transformer Engine's
// fp8_autocast: under FP8 training its three GEMMs run in bf16 and nothing in the output scope is
// cast to FP8, while the layers' linears stay FP8. Llama 2 70B, tp 4: the logits GEMM is
// tokens x (32000 / 4) x 8192 whatever the precision.
TEST(Fp8Recipe, TheOutputLayerStaysIn16BitsUnderFp8) {
  const ModelSpec m = test::llama2_70b();
  const Parallelism p = layout(4, 1, 2, 1, Recompute::none, true);
  const Cluster c = cluster_of(test::h100_sxm(), 8);
  const StepOps ops = build_step_ops(m, job_of(64, 1e9, Precision::fp8), p, c);
  int logits = 0, layer_fp8 = 0;
  for (const StepOp& so : ops.ops) {
    if (const auto* g = std::get_if<GemmOp>(&so.op)) {
      if (so.scope == Scope::output) {
        ++logits;
        EXPECT_EQ(g->dtype, Precision::bf16) << g->name;
        if (std::strcmp(g->name, "logits") == 0) {
          EXPECT_EQ(g->n, 32000 / 4);
          EXPECT_EQ(g->k, 8192);
        }
      }
      if (so.scope == Scope::layer && so.role == OpRole::linear && g->dtype == Precision::fp8) ++layer_fp8;
    }
    if (const auto* mo = std::get_if<MemoryOp>(&so.op)) {
      EXPECT_FALSE(so.scope == Scope::output && so.role == OpRole::fp8_cast) << mo->name;
    }
  }
  EXPECT_EQ(logits, 3);  // forward, dgrad, wgrad
  EXPECT_GT(layer_fp8, 0);
}

TEST(Fp8Recipe, StepCastBytesScaleWithTheRecipe) {
  // The same element count is cast under both recipes, so the step's cast bytes are in the
  // ratio 6 : 4; bf16 training casts nothing.
  const ModelSpec m = test::llama2_70b();
  const Parallelism p = layout(4, 1, 2, 1, Recompute::none, true);
  const Cluster c = cluster_of(test::h100_sxm(), 8);
  TrainingJob delayed = job_of(64, 1e9, Precision::fp8);
  TrainingJob current = delayed;
  current.fp8_recipe = Fp8Recipe::current;
  const double d = cast_bytes(build_step_ops(m, delayed, p, c));
  ASSERT_GT(d, 0.0);
  EXPECT_DOUBLE_EQ(cast_bytes(build_step_ops(m, current, p, c)), 1.5 * d);
  EXPECT_DOUBLE_EQ(cast_bytes(build_step_ops(m, job_of(64), p, c)), 0.0);
}

TEST(Fp8Params, WeightsGatherAndAdamWriteOneByteAndMemoryDropsTheSixteenBitCopy) {
  // Llama-2-70B on 8 H100, tp 4, dp 2, ZeRO 1, 16-bit gradients. Without FP8 parameters a rank
  // holds 16-bit weights + an FP8 copy + its transpose (4 bytes per parameter) and gathers 2
  // bytes; with them, the FP8 weight + its transpose (2) and gathers 1; Adam writes 1 byte
  // instead of 2 (27 per local parameter instead of 28).
  const ModelSpec m = test::llama2_70b();
  const Parallelism p = layout(4, 1, 2, 1, Recompute::selective, true, 1);
  const Cluster c = cluster_of(test::h100_sxm(), 8);
  TrainingJob plain = test::with_16bit_gradients(job_of(64, 1e9, Precision::fp8));
  TrainingJob fp8 = plain;
  fp8.fp8_params = true;
  EXPECT_DOUBLE_EQ(plain.weight_bytes(), 4.0);
  EXPECT_DOUBLE_EQ(fp8.weight_bytes(), 2.0);
  const StepOps a = build_step_ops(m, plain, p, c);
  const StepOps b = build_step_ops(m, fp8, p, c);
  const double local = a.params.total();
  EXPECT_DOUBLE_EQ(op_bytes(a, "dp_param_all_gather"), 2.0 * local);
  EXPECT_DOUBLE_EQ(op_bytes(b, "dp_param_all_gather"), 1.0 * local);
  EXPECT_DOUBLE_EQ(op_bytes(a, "adam_step"), 28.0 * local / 2);
  EXPECT_DOUBLE_EQ(op_bytes(b, "adam_step"), 27.0 * local / 2);
  const MemoryBreakdown ma = memory_per_gpu(m, plain, p, test::h100_sxm(), 32);
  const MemoryBreakdown mb = memory_per_gpu(m, fp8, p, test::h100_sxm(), 32);
  EXPECT_DOUBLE_EQ(ma.weights.base(), 4.0 * local);
  EXPECT_DOUBLE_EQ(mb.weights.base(), 2.0 * local);
  // The flag means nothing outside FP8 training.
  TrainingJob bf16 = test::with_16bit_gradients(job_of(64));
  bf16.fp8_params = true;
  EXPECT_FALSE(bf16.fp8_weights());
  EXPECT_DOUBLE_EQ(bf16.weight_bytes(), 2.0);
  EXPECT_DOUBLE_EQ(op_bytes(build_step_ops(m, bf16, p, c), "dp_param_all_gather"), 2.0 * local);
}

}  // namespace
}  // namespace capplan::sim
