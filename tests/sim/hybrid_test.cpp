// SPDX-License-Identifier: Apache-2.0
// Hybrid Mamba-2 / Transformer models: a Mamba-2 layer's FLOPs, bytes, kept activations
// and parameters from the op list against hand derivations; the layer pattern's counts per
// pipeline stage; the model-FLOPs convention against Megatron-Bridge's hybrid formula.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/folds/memory.hpp"
#include "capplan/sim/lowering/stage_layout.hpp"
#include "capplan/sim/lowering/step_model.hpp"
#include "test_support.hpp"

namespace capplan::sim {
namespace {

using test::cluster_of;
using test::job_of;
using test::layout;

// Nemotron-H 8B's shapes (Megatron-Bridge @067f987 recipes/nemotronh/h100/nemotronh.py,
// nemotronh_8b_pretrain_2gpu_h100_bf16_config): hidden 4096, 32 heads, 8 query groups, FFN 21504
// squared ReLU, Mamba 128 heads x 64, state 128, 8 groups, conv 4, chunk 128; vocabulary 131072.
// `pattern` replaces its 52-layer pattern so the tests can count by hand.
ModelSpec nemotron_h_8b_like(std::string pattern) {
  ModelSpec m{.name = "nemotron-h-8b-like", .layers = static_cast<int>(pattern.size()), .hidden = 4096, .heads = 32,
              .kv_heads = 8, .ffn_hidden = 21504, .vocab = 131072, .seq_len = 8192, .gated_ffn = false,
              .tied_embeddings = false, .dropout = false, .rmsnorm = true, .rope = false};
  m.layer_pattern = std::move(pattern);
  m.mamba = {.heads = 128, .head_dim = 64, .state = 128, .groups = 8, .conv_kernel = 4, .chunk = 128};
  return m;
}

StepOps ops_of(const ModelSpec& m, const Parallelism& p, Precision dt = Precision::bf16) {
  return build_step_ops(m, job_of(64, 1e9, dt), p, cluster_of(test::h100_sxm(), p.tp * p.pp * p.dp * p.cp));
}

double sum(const StepOps& ops, Scope scope, Phase phase, bool flops) {
  double s = 0;
  for (const StepOp& so : ops.ops) {
    if (so.scope != scope || so.phase != phase) continue;
    if (flops) {
      s += so.flops;
    } else if (const auto* mem = std::get_if<MemoryOp>(&so.op)) {
      s += mem->bytes.base() * so.count;
    }
  }
  return s;
}

// One Mamba-2 layer on one GPU, micro-batch 1 of 8192 tokens, bf16 (T = 8192):
//   d_inner = 128 x 64 = 8192; conv_dim = 8192 + 2 x 8 x 128 = 10240;
//   in_proj columns = 2 x 8192 + 2 x 8 x 128 + 128 = 18560.
// Forward model FLOPs (Megatron-Bridge mamba_layer_flops):
//   in_proj 2 T h 18560 = 2 x 8192 x 4096 x 18560 = 1,245,540,515,840
//   scan    7 T d_inner N = 7 x 8192 x 8192 x 128 =    60,129,542,144
//   out_proj 2 T d_inner h = 2 x 8192 x 8192 x 4096 = 549,755,813,888
//   total 1,855,425,871,872; backward twice that (dgrad + wgrad, the scan's backward 2x).
TEST(MambaLayer, FlopsAreInProjScanAndOutProj) {
  const StepOps ops = ops_of(nemotron_h_8b_like("M"), layout(1, 1, 1, 1, Recompute::none));
  const double fwd = 1245540515840.0 + 60129542144.0 + 549755813888.0;
  // Exact sums of exactly representable products: any tolerance beyond rounding would hide a term.
  EXPECT_NEAR(sum(ops, Scope::mamba, Phase::forward, true), fwd, 1e-12 * fwd);
  EXPECT_NEAR(sum(ops, Scope::mamba, Phase::backward, true), 2.0 * fwd, 2e-12 * fwd);
}

// Forward bytes of the Mamba layer's memory-bound kernels (bf16, 2 bytes, T = 8192, h = 4096):
//   pre-norm            2 x 2 T h            =    134,217,728
//   residual add        3 x 2 T h            =    201,326,592
//   conv1d              2 x 2 T 10240        =    335,544,320
//   scan I/O  2 T (10240 + 128 + 2 x 8192)   =    438,304,768   (x, B, C, dt, z in; y out)
//             fp32 chunk states 12 x 64 chunks x 128 heads x 64 x 128 = 805,306,368
//             C B^T in fp32 8 x 64 chunks x 8 groups x 128 x 128     =  67,108,864
//   grouped RMSNorm     2 x 2 T 8192         =    268,435,456
//   total 2,250,244,096; backward twice (the element-wise convention).
TEST(MambaLayer, MemoryBoundBytes) {
  const StepOps ops = ops_of(nemotron_h_8b_like("M"), layout(1, 1, 1, 1, Recompute::none));
  const double fwd = 134217728.0 + 201326592.0 + 335544320.0 + 438304768.0 + 805306368.0 + 67108864.0 + 268435456.0;
  EXPECT_DOUBLE_EQ(sum(ops, Scope::mamba, Phase::forward, false), fwd);
  EXPECT_DOUBLE_EQ(sum(ops, Scope::mamba, Phase::backward, false), 2.0 * fwd);
}

// What the fused kernel's backward recomputes, whatever the policy (Phase::recompute: hardware
// FLOPs only): the conv forward (2 x 2 T 10240 = 335,544,320 bytes) and the SSD state pipeline:
// x, B, C, dt read (2 T (10240 + 128) = 169,869,312), the fp32 states (805,306,368) and C B^T
// (67,108,864) again, and the chunk-state GEMM 2 T d_inner N = 17,179,869,184 FLOPs. With two
// sequences per micro-batch _ssm_training's layout copies add 2 x 2 T' (18560 + 8192) bytes each
// way (T' = 16384 tokens: 1,753,219,072).
TEST(MambaLayer, FusedBackwardRecomputesTheConvAndStatesAndMicroBatchesCopy) {
  const StepOps ops = ops_of(nemotron_h_8b_like("M"), layout(1, 1, 1, 1, Recompute::none));
  EXPECT_DOUBLE_EQ(sum(ops, Scope::mamba, Phase::recompute, false),
                   335544320.0 + 169869312.0 + 805306368.0 + 67108864.0);
  EXPECT_DOUBLE_EQ(sum(ops, Scope::mamba, Phase::recompute, true), 17179869184.0);
  const StepOps two = ops_of(nemotron_h_8b_like("M"), layout(1, 1, 1, 2, Recompute::none));
  double copy_fwd = 0, copy_bwd = 0;
  for (const StepOp& so : two.ops) {
    const auto* mem = std::get_if<MemoryOp>(&so.op);
    if (mem == nullptr || std::strcmp(mem->name, "mamba_layout_copy") != 0) continue;
    (so.phase == Phase::forward ? copy_fwd : copy_bwd) += mem->bytes.base() * so.count;
  }
  EXPECT_DOUBLE_EQ(copy_fwd, 1753219072.0);
  EXPECT_DOUBLE_EQ(copy_bwd, 1753219072.0);
}

// Kept for backward, one Mamba layer, bf16, T = 8192 (2 bytes each):
//   norm output (in_proj input) T h = 67,108,864; residual stream input T h = 67,108,864;
//   in_proj output z x B C dt T 18560 = 304,087,040 (the fused scan recomputes the conv from it);
//   the scan's out_x and gated y 2 T 8192 = 268,435,456; the RMSNorm output (out_proj input)
//   T 8192 = 134,217,728. Total 840,957,952 bytes. The SSM and conv states are not kept (the
//   fused kernel recomputes them in its backward).
TEST(MambaLayer, KeptActivations) {
  const StepOps ops = ops_of(nemotron_h_8b_like("M"), layout(1, 1, 1, 1, Recompute::none));
  const ActivationFootprint f = activation_footprint(ops.ops);
  EXPECT_DOUBLE_EQ(f[Scope::mamba].kept, 2.0 * (8192.0 * 4096 * 2 + 8192.0 * 18560 + 3 * 8192.0 * 8192));
  EXPECT_DOUBLE_EQ(f[Scope::mamba].remat, 0.0);
  // Full recompute: only the layer input (T h x 2 bytes) stays; the rest is rematerialised.
  const ActivationFootprint full = activation_footprint(ops_of(nemotron_h_8b_like("M"), layout(1, 1, 1, 1, Recompute::full)).ops);
  EXPECT_DOUBLE_EQ(full[Scope::mamba].kept, 8192.0 * 4096 * 2);
}

// MambaMixer parameters (mamba_mixer.py): in_proj 4096 x 18560 = 76,021,760; conv1d weight and
// bias 10240 x 5 = 51,200; dt_bias, A_log, D 3 x 128 = 384; grouped-norm scale 8192; out_proj
// 8192 x 4096 = 33,554,432; the layer's pre-norm 4096. Total 109,640,064.
TEST(MambaLayer, Parameters) {
  EXPECT_DOUBLE_EQ(nemotron_h_8b_like("M").mamba_params(), 109640064.0);
}

// Tensor parallelism splits heads and groups (tp = 2: 64 heads, 4 groups per rank), like
// Megatron-Core's column-parallel in_proj and row-parallel out_proj; the per-rank FLOPs halve
// and one all-reduce pair of T h x 2 bytes surrounds the mixer (no sequence parallelism).
TEST(MambaLayer, TensorParallelHalvesTheWorkAndAddsOneAllReducePair) {
  const StepOps one = ops_of(nemotron_h_8b_like("M"), layout(1, 1, 1, 1, Recompute::none));
  const StepOps two = ops_of(nemotron_h_8b_like("M"), layout(2, 1, 1, 1, Recompute::none));
  EXPECT_DOUBLE_EQ(sum(two, Scope::mamba, Phase::forward, true), sum(one, Scope::mamba, Phase::forward, true) / 2);
  int all_reduces = 0;
  for (const StepOp& so : two.ops) {
    const auto* c = std::get_if<CollectiveOp>(&so.op);
    if (so.scope != Scope::mamba || c == nullptr) continue;
    EXPECT_EQ(c->kind, CollectiveKind::all_reduce);
    EXPECT_DOUBLE_EQ(c->bytes.base(), 8192.0 * 4096 * 2);
    ++all_reduces;
  }
  EXPECT_EQ(all_reduces, 2);  // forward and backward
}

// Context parallelism (cp = 2, Megatron-Core's all-to-all Mamba CP): this rank's 4096 tokens of
// z, x, B, C, dt (18560 columns) go out before the conv and scan, y (8192 columns) comes back,
// forward and backward: 4096 x 18560 x 2 and 4096 x 8192 x 2 bytes.
TEST(MambaLayer, ContextParallelAllToAlls) {
  Parallelism p = layout(1, 1, 1, 1, Recompute::none);
  p.cp = 2;
  const StepOps ops = ops_of(nemotron_h_8b_like("M"), p);
  double in = 0, out = 0;
  for (const StepOp& so : ops.ops) {
    const auto* c = std::get_if<CollectiveOp>(&so.op);
    if (c == nullptr || c->axis != Axis::cp || so.scope != Scope::mamba) continue;
    (std::strcmp(c->name, "mamba_cp_all_to_all_in") == 0 ? in : out) += c->bytes.base() * so.count;
  }
  EXPECT_DOUBLE_EQ(in, 2 * 4096.0 * 18560 * 2);
  EXPECT_DOUBLE_EQ(out, 2 * 4096.0 * 8192 * 2);
}

// Each pattern symbol is a layer of its own: "M*-E" has one of each; the attention layer's one
// norm and residual, the MLP's own, the MoE's own. Parameters add up by kind.
TEST(HybridModel, PatternCountsAndParameters) {
  ModelSpec m = nemotron_h_8b_like("MM*-M-*-");
  EXPECT_EQ(m.mamba_layer_count(), 3);
  EXPECT_EQ(m.attention_layer_count(), 2);
  EXPECT_EQ(m.dense_ffn_layer_count(), 3);
  EXPECT_EQ(m.moe_layer_count(), 0);
  const double h = 4096;
  const double attention = h * (4096 + 2 * 8 * 128) + 4096 * h + h;  // QKV + output + its norm
  const double mlp = 2 * h * 21504 + h;                              // up + down + its norm
  EXPECT_DOUBLE_EQ(m.layers_params(), 3 * 109640064.0 + 2 * attention + 3 * mlp);
  EXPECT_DOUBLE_EQ(m.total_params(), m.layers_params() + 2 * 131072 * h + h);
}

// Pipeline stages split the pattern's layers evenly (Megatron-Core's MambaStack slices the
// layer-type list at the stage's offset): "MM*-M-*-" over 2 stages is "MM*-" and "M-*-".
TEST(HybridModel, StagesCountEachKindOfTheirSlice) {
  const ModelSpec m = nemotron_h_8b_like("MMM*-M-*");
  const Parallelism p = layout(1, 2, 1);
  const StageLayers s0 = stage_layers(m, p, 0), s1 = stage_layers(m, p, 1);
  EXPECT_EQ(s0.mamba, 3);
  EXPECT_EQ(s0.layers, 1);  // attention layers
  EXPECT_EQ(s0.dense(), 0);
  EXPECT_EQ(s1.mamba, 1);
  EXPECT_EQ(s1.layers, 1);
  EXPECT_EQ(s1.dense(), 2);
  EXPECT_EQ(stage_runs(m, p).size(), 2u);
  // The first stage holds the embedding and three Mamba layers, the second the output layer.
  const double h = 4096, attention = h * (4096 + 2 * 8 * 128) + 4096 * h + h, mlp = 2 * h * 21504 + h;
  EXPECT_DOUBLE_EQ(stage_params(m, p, 0).dense, 3 * 109640064.0 + attention + 131072 * h);
  EXPECT_DOUBLE_EQ(stage_params(m, p, 1).dense, 109640064.0 + attention + 2 * mlp + 131072 * h + h);
}

// The whole model's model FLOPs equal Megatron-Bridge's hybrid_flops (flop_utils.py @067f987)
// where its d_in = 2 hidden equals heads x head_dim (Nemotron-H 8B: 8192), per token:
//   3 x [A (4 h^2 (1 + 8/32) + 2 h s) + D 4 h ffn + M (2 h 18560 + 7 x 8192 x 128 + 2 x 8192 h)
//        + 2 h V].
TEST(HybridModel, ModelFlopsFollowMegatronBridgesHybridFormula) {
  const ModelSpec m = nemotron_h_8b_like("M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-");
  ASSERT_EQ(m.mamba_layer_count(), 24);
  ASSERT_EQ(m.attention_layer_count(), 4);
  ASSERT_EQ(m.dense_ffn_layer_count(), 24);
  const double h = 4096, s = 8192;
  const double attn = 4 * h * h * (1 + 8.0 / 32) + 2 * h * s;
  const double mlp = 4 * h * 21504;
  const double mamba = 2 * h * 18560 + 7.0 * 8192 * 128 + 2 * 8192 * h;
  const double per_token = 3 * (4 * attn + 24 * mlp + 24 * mamba + 2 * h * 131072);
  const StepFlops f = step_flops(m, job_of(16), Recompute::none);
  EXPECT_NEAR(f.model.base(), per_token * 16 * s, 1e-12 * f.model.base());
}

// A hybrid layer with MoE (E): the MoE layer carries its own norm and residual, and stage counts
// follow the pattern, not dense_layers / every_n_layers.
TEST(HybridModel, MoeLayersComeFromThePattern) {
  ModelSpec m = nemotron_h_8b_like("MEME*E");
  m.moe = {.experts = 8, .top_k = 2, .expert_ffn_hidden = 1024, .every_n_layers = 5};
  EXPECT_EQ(m.moe_layer_count(), 3);
  EXPECT_TRUE(m.is_moe_layer(1));
  EXPECT_FALSE(m.is_moe_layer(0));
  const StageLayers sl = stage_layers(m, layout(1, 1, 1), 0);
  EXPECT_EQ(sl.moe, 3);
  EXPECT_EQ(sl.mamba, 2);
  EXPECT_EQ(sl.layers, 1);
  EXPECT_EQ(sl.dense(), 0);
  const StepOps ops = ops_of(m, layout(1, 1, 1, 1, Recompute::none));
  int norms = 0;
  for (const StepOp& so : ops.ops) {
    if (so.scope == Scope::moe_ffn && so.phase == Phase::forward && so.role == OpRole::norm) norms += 1;
  }
  EXPECT_EQ(norms, 1);
}

// A hybrid model estimates end to end: finite step time, and one more Mamba layer in place of an
// MLP layer costs time.
TEST(HybridModel, EstimatesEndToEnd) {
  auto step = [](const std::string& pattern) {
    const Scenario s = test::scenario_of(nemotron_h_8b_like(pattern), job_of(64), cluster_of(test::h100_sxm(), 8),
                                         test::fixed_request(layout(1, 1, 8, 1, Recompute::none)));
    const Result<Estimate> r = estimate(s, DatasheetCost(s.cluster));
    EXPECT_TRUE(r.has_value());
    return r ? r->step.time.base() : 0.0;
  };
  const double base = step("M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-");
  EXPECT_TRUE(std::isfinite(base));
  EXPECT_GT(base, 0);
  EXPECT_NE(step("M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-MM"), base);
}

TEST(HybridModel, AMambaOneMixerIsPricedAsMambaTwoAndSaysSo) {
  // Only the Mamba-2 (SSD) mixer is lowered: a Mamba-1 model gets the same op list and time, and
  // a finding that names its Mamba layers.
  ModelSpec m = nemotron_h_8b_like("M*M-M-");
  const Cluster c = cluster_of(test::h100_sxm(), 1);
  const Scenario two = test::scenario_of(m, job_of(8, 1e9), c, test::fixed_request(layout(1, 1, 1)));
  Scenario one = two;
  one.model.mamba.version = 1;
  const DatasheetCost cost(c);
  const Estimate e2 = evaluate(two, layout(1, 1, 1), cost), e1 = evaluate(one, layout(1, 1, 1), cost);
  EXPECT_DOUBLE_EQ(e1.step.time.base(), e2.step.time.base());
  const auto names = [](const Estimate& e) {
    for (const Finding& f : e.findings) {
      if (f.code == FindingCode::mamba1_priced_as_mamba2) return &f;
    }
    return static_cast<const Finding*>(nullptr);
  };
  ASSERT_NE(names(e1), nullptr);
  EXPECT_EQ(names(e1)->field, "model.mamba.version");
  EXPECT_EQ(names(e1)->number("mamba_layers"), 3);
  EXPECT_EQ(names(e2), nullptr);
}

}  // namespace
}  // namespace capplan::sim
