// SPDX-License-Identifier: Apache-2.0
// FLOP counts (step_flops, ModelSpec parameter counts) and the operation list of one step
// (build_step_ops, place_group), each checked against a derivation written out here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/lowering/step_model.hpp"
#include "test_support.hpp"

namespace capplan::sim {
namespace {

using test::cluster_of;
using test::job_of;
using test::layout;

// The model's FLOP count is a sum of a handful of terms of order 1e18-1e23; the closed forms
// below group them differently, so they agree to a few ulps. 1e-12 relative is 4 orders of
// magnitude above double round-off and 10 orders below any modelling difference.
constexpr double kSumOrder = 1e-12;

// ---------------------------------------------------------------------------------------------
// step_flops
// ---------------------------------------------------------------------------------------------

TEST(StepFlops, Gpt3ModelFlopsAreKorthikantis72BslhSquared) {
  // Korthikanti et al. 2022, Sec. 6 (and Narayanan et al. 2021, Eq. 3 without recomputation):
  // model FLOPs per iteration = 72*B*s*L*h^2 * (1 + s/(6h) + V/(12hL)).
  const ModelSpec m = test::gpt3_175b();
  const TrainingJob job = job_of(1536);
  const double B = 1536, s = 2048, L = 96, h = 12288, V = 51200;
  const double expected = 72.0 * B * s * L * h * h * (1.0 + s / (6.0 * h) + V / (12.0 * h * L));
  const StepFlops f = step_flops(m, job, Recompute::none);
  EXPECT_NEAR(f.model.base(), expected, kSumOrder * expected);
}

TEST(StepFlops, Gpt3FullRecomputeHardwareFlopsAreNarayanansEquationThree) {
  // Narayanan et al. 2021, Eq. 3: 96*B*s*L*h^2 * (1 + s/(6h) + V/(16hL)).
  // Derivation of what the physics says: per token a GPT layer does 24h^2 + 4sh FLOPs forward
  // (QKV 6h^2, projection 2h^2, MLP 16h^2, Q K^T and P V 2sh each) and the logits 2hV.
  // Full recomputation repeats the forward of the layers only (the logits are not inside a
  // checkpointed layer), so layers run 4 passes (fwd, 2x bwd, re-fwd) and the logits 3:
  //   4*L*(24h^2 + 4sh) + 3*2hV = 96Lh^2*(1 + s/(6h)) + 6hV = 96Lh^2*(1 + s/(6h) + V/(16hL)).
  // So Eq. 3's V/(16hL) term is exactly "logits not recomputed".
  const ModelSpec m = test::gpt3_175b();
  const TrainingJob job = job_of(1536);
  const double B = 1536, s = 2048, L = 96, h = 12288, V = 51200;
  const double eq3 = 96.0 * B * s * L * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * h * L));
  const double passes = B * s * (4.0 * L * (24.0 * h * h + 4.0 * s * h) + 3.0 * 2.0 * h * V);
  EXPECT_NEAR(eq3, passes, kSumOrder * eq3);  // the two forms are the same polynomial
  const StepFlops f = step_flops(m, job, Recompute::full);
  EXPECT_NEAR(f.hardware.base(), eq3, kSumOrder * eq3);
  // Model FLOPs ignore recomputation.
  EXPECT_EQ(f.model, step_flops(m, job, Recompute::none).model);
}

TEST(StepFlops, GqaGatedModelCountsTwoFlopsPerWeightOfEveryGemm) {
  // Llama-2-70B shape: per token and layer, forward 2*(h*(h + 2*kv_dim) + h^2 + 3*h*f) for the
  // QKV (GQA: K and V are kv_dim wide), output projection and the three SwiGLU matrices, plus
  // 4*s*h for the attention core; logits 2*h*V. Training = 3x forward.
  const ModelSpec m = test::llama2_70b();
  const TrainingJob job = job_of(1024);
  const double h = 8192, kv_dim = 8 * (8192 / 64), f = 28672, s = 4096, V = 32000, L = 80;
  const double per_layer = 2.0 * (h * (h + 2.0 * kv_dim) + h * h + 3.0 * h * f) + 4.0 * s * h;
  const double per_token = L * per_layer + 2.0 * h * V;
  const double expected = 3.0 * per_token * 1024.0 * s;
  const StepFlops fl = step_flops(m, job, Recompute::none);
  EXPECT_NEAR(fl.model.base(), expected, kSumOrder * expected);
}

TEST(StepFlops, HardwareEqualsModelWithoutRecompute) {
  for (const ModelSpec& m : {test::gpt3_175b(), test::llama2_70b()}) {
    const StepFlops f = step_flops(m, job_of(64), Recompute::none);
    EXPECT_EQ(f.hardware, f.model) << m.name;
  }
}

TEST(StepFlops, SelectiveRecomputeWithFlashAttentionAddsNothing) {
  // Fused attention recomputes S inside its own backward kernel; the selective scheme has nothing
  // left to recompute (Korthikanti et al. 2022, Sec. 5 on FlashAttention-style kernels).
  ModelSpec m = test::llama2_70b();
  m.flash_attention = true;
  const StepFlops f = step_flops(m, job_of(64), Recompute::selective);
  EXPECT_EQ(f.hardware, f.model);
}

TEST(StepFlops, SelectiveRecomputeWithoutFlashAddsTheAttentionCoreForward) {
  // Selective recompute repeats Q K^T and P V: 2*s*h + 2*s*h = 4*s*h FLOPs per token per layer.
  const ModelSpec m = test::gpt3_175b();  // flash_attention = false
  const TrainingJob job = job_of(64);
  const double extra = 4.0 * 2048.0 * 12288.0 * 96.0 * (64.0 * 2048.0);
  const StepFlops f = step_flops(m, job, Recompute::selective);
  EXPECT_NEAR((f.hardware - f.model).base(), extra, kSumOrder * f.model.base());
}

// ---------------------------------------------------------------------------------------------
// ModelSpec parameter counts
// ---------------------------------------------------------------------------------------------

TEST(ModelSpec, Llama2SeventyBParameterCountMatchesTheShapeFormula) {
  // Per layer: attention h*(h + 2*kv_dim) + h^2 (QKV with 8 KV heads of 128, output projection),
  // SwiGLU 3*h*f, two RMSNorm scales 2h. Plus untied input and output embeddings 2*V*h and the
  // final norm h. = 80*(150,994,944 + 704,643,072 + 16,384) + 524,288,000 + 8,192 = 68.98e9.
  const ModelSpec m = test::llama2_70b();
  const double h = 8192, kv_dim = 1024, f = 28672, V = 32000;
  const double layer = h * (h + 2.0 * kv_dim) + h * h + 3.0 * h * f + 2.0 * h;
  EXPECT_EQ(m.layer_params(), layer);
  EXPECT_EQ(m.embedding_params(), V * h);
  EXPECT_EQ(m.output_params(), V * h);
  const double total = 80.0 * layer + 2.0 * V * h + h;
  EXPECT_EQ(m.total_params(), total);  // integers below 2^53: exact in double
  EXPECT_EQ(total, 68'976'648'192.0);  // = the formula above, evaluated by hand
}

TEST(ModelSpec, Llama2SeventyBIsWithinTwoPercentOfThePublishedSixtyNineBillion) {
  // Meta reports "70B" (HF model card: 68.98B = 69B). 2%: the published figure is rounded to
  // two significant digits, which alone can be off by 0.7%.
  EXPECT_NEAR(test::llama2_70b().total_params(), 69e9, 0.02 * 69e9);
}

TEST(ModelSpec, AttentionDimensionsBeyondTwoToTheThirtyOneDoNotWrap) {
  // heads 25,000 x head_dim 100,000 = 2.5e9 per projection, above INT_MAX (2,147,483,647): a
  // kv_dim() in int would wrap and the count come out wrong. By hand, with
  // h = 1,000, kv_heads = heads (MHA): q = kv = 2.5e9, attention = h*(q + 2 kv) + q*h + 2h
  // = 1,000 * 7.5e9 + 2.5e12 + 2,000 = 1.0000000002e13 (integers below 2^53: exact).
  ModelSpec m;
  m.hidden = 1000;
  m.heads = 25000;
  m.kv_heads = 25000;
  m.attention_head_dim = 100000;
  EXPECT_EQ(m.kv_dim(), 2'500'000'000LL);
  EXPECT_EQ(m.attention_params(), 10'000'000'002'000.0);

  // MLA: q_lora_rank x heads x (qk_nope + qk_rope) = 100,000 x 25,000 x 2 = 5e9, also above INT_MAX.
  // q = h*r + r + r*heads*qk = 1e8 + 1e5 + 5e9; kv = h*(kv_rank + rope) + kv_rank +
  // kv_rank*heads*(nope + v) = 2,000 + 1 + 1*25,000*2 = 52,001; out = heads*v*h = 2.5e7; norms 2,000.
  ModelSpec mla;
  mla.hidden = 1000;
  mla.heads = 25000;
  mla.attention = Attention::mla;
  mla.mla = {.q_lora_rank = 100000, .kv_lora_rank = 1, .qk_nope_head_dim = 1, .qk_rope_head_dim = 1, .v_head_dim = 1};
  EXPECT_EQ(mla.attention_params(), 1e8 + 1e5 + 5e9 + 52'001.0 + 2.5e7 + 2'000.0);
}

TEST(ModelSpec, TiedEmbeddingsHaveNoSeparateOutputMatrix) {
  const ModelSpec m = test::gpt3_175b();
  EXPECT_EQ(m.output_params(), 0.0);
  const double h = 12288, V = 51200;
  // GPT-3 175B: 96*(12h^2 + 2h) + V*h + h = 174.6e9 (without biases).
  EXPECT_EQ(m.total_params(), 96.0 * (12.0 * h * h + 2.0 * h) + V * h + h);
  EXPECT_NEAR(m.total_params(), 175e9, 0.01 * 175e9);  // 1%: "175B" is a rounded figure
}

// ---------------------------------------------------------------------------------------------
// build_step_ops
// ---------------------------------------------------------------------------------------------

struct Sums {
  double gemm_flops = 0;
  double memory_bytes = 0;
  double collective_bytes = 0;
  double op_count = 0;
};

template <class Pred>
Sums sum_ops(const StepOps& ops, Pred pred) {
  Sums s;
  for (const StepOp& so : ops.ops) {
    if (!pred(so)) continue;
    s.op_count += so.count;
    if (const auto* g = std::get_if<GemmOp>(&so.op)) s.gemm_flops += g->flops().base() * so.count;
    if (const auto* mo = std::get_if<MemoryOp>(&so.op)) s.memory_bytes += mo->bytes.base() * so.count;
    if (const auto* c = std::get_if<CollectiveOp>(&so.op)) s.collective_bytes += c->bytes.base() * so.count;
  }
  return s;
}

bool named(const StepOp& so, const char* name) {
  if (const auto* g = std::get_if<GemmOp>(&so.op)) return std::strcmp(g->name, name) == 0;
  if (const auto* m = std::get_if<MemoryOp>(&so.op)) return std::strcmp(m->name, name) == 0;
  return std::strcmp(std::get<CollectiveOp>(so.op).name, name) == 0;
}

// A dense model's layer is its attention block (Scope::layer) plus its dense FFN.
bool layer_scope(Scope want, Scope got) {
  return got == want || (want == Scope::layer && got == Scope::dense_ffn);
}

bool is_attention_core(const StepOp& so) { return named(so, "attn_score") || named(so, "attn_context"); }

std::vector<StepOp> collectives(const StepOps& ops, Scope scope, Phase phase) {
  std::vector<StepOp> out;
  for (const StepOp& so : ops.ops) {
    if (layer_scope(scope, so.scope) && so.phase == phase && std::holds_alternative<CollectiveOp>(so.op)) {
      out.push_back(so);
    }
  }
  return out;
}

auto in(Scope scope, Phase phase) {
  return [=](const StepOp& so) { return layer_scope(scope, so.scope) && so.phase == phase; };
}

TEST(StepOps, ForwardGemmFlopsOfALayerAreTheModelsPerLayerFlopsOverTp) {
  // Llama-2-70B shape, tp = 8, micro-batch 2: one TP rank does 1/t of every GEMM of the layer.
  // Per token: 2*(h*(h + 2*kv_dim) + h^2 + 3*h*f)/t, plus the attention core 4*s*h/t counted at
  // 0.5 (fused causal kernels skip the masked half).
  const ModelSpec m = test::llama2_70b();
  const int t = 8, b = 2;
  const StepOps ops = build_step_ops(m, job_of(64), layout(t, 1, 1, b), cluster_of(test::h100_sxm(), 8));
  const double h = 8192, kv_dim = 1024, f = 28672, s = 4096, tokens = b * s;
  const double linear = 2.0 * (h * (h + 2.0 * kv_dim) + h * h + 3.0 * h * f) / t * tokens;
  const double attention = 4.0 * s * h / t * tokens;
  auto fwd = in(Scope::layer, Phase::forward);
  const Sums lin = sum_ops(ops, [&](const StepOp& so) { return fwd(so) && !is_attention_core(so); });
  const Sums att = sum_ops(ops, [&](const StepOp& so) { return fwd(so) && is_attention_core(so); });
  EXPECT_NEAR(lin.gemm_flops, linear, kSumOrder * linear);
  EXPECT_NEAR(att.gemm_flops, 0.5 * attention, kSumOrder * attention);
}

TEST(StepOps, AttentionCoreCountsHalfWithFlashAndAllWithout) {
  for (bool flash : {true, false}) {
    ModelSpec m = test::gpt3_175b();
    m.flash_attention = flash;
    const StepOps ops = build_step_ops(m, job_of(8), layout(8, 1, 1), cluster_of(test::a100_80gb(), 8));
    int seen = 0;
    for (const StepOp& so : ops.ops) {
      if (so.phase == Phase::forward && is_attention_core(so)) {
        EXPECT_EQ(so.count, flash ? 0.5 : 1.0) << "flash=" << flash;
        ++seen;
      }
    }
    EXPECT_EQ(seen, 2);  // Q K^T and P V
    // Without flash: total forward layer GEMM FLOPs = (24h^2 + 4sh)/t per token exactly.
    if (!flash) {
      const double h = 12288, s = 2048;
      const double expected = (24.0 * h * h + 4.0 * s * h) / 8.0 * s;
      EXPECT_NEAR(sum_ops(ops, in(Scope::layer, Phase::forward)).gemm_flops, expected, kSumOrder * expected);
    }
  }
}

TEST(StepOps, BackwardOfEachLinearLayerIsTwiceItsForward) {
  // dgrad (T x k x n) and wgrad (k x n x T) each cost the forward's 2*T*n*k.
  const ModelSpec m = test::llama2_70b();
  const StepOps ops = build_step_ops(m, job_of(64), layout(4, 1, 2, 1), cluster_of(test::h100_sxm(), 8));
  auto linear = [](Phase ph) {
    return [ph](const StepOp& so) { return layer_scope(Scope::layer, so.scope) && so.phase == ph && !is_attention_core(so); };
  };
  const double fwd = sum_ops(ops, linear(Phase::forward)).gemm_flops;
  EXPECT_GT(fwd, 0.0);
  EXPECT_NEAR(sum_ops(ops, linear(Phase::backward)).gemm_flops, 2.0 * fwd, kSumOrder * fwd);
  // The output layer follows the same rule: logits forward 2*T*h*V/t, backward twice that.
  const double logits = 2.0 * 4096.0 * 8192.0 * 32000.0 / 4.0;
  EXPECT_NEAR(sum_ops(ops, in(Scope::output, Phase::forward)).gemm_flops, logits, kSumOrder * logits);
  EXPECT_NEAR(sum_ops(ops, in(Scope::output, Phase::backward)).gemm_flops, 2.0 * logits, kSumOrder * logits);
}

TEST(StepOps, AttentionCoreBackwardIsTwiceForwardUnfusedAndTwoAndAHalfFused) {
  // Unfused: dS/dQ, dS/dK, dP, dV: 4 GEMMs for 2 forward. Flash attention additionally
  // recomputes S = Q K^T in its backward: 5 GEMMs for 2 (Dao 2023, Algorithm 2).
  for (bool flash : {false, true}) {
    ModelSpec m = test::gpt3_175b();
    m.flash_attention = flash;
    const StepOps ops = build_step_ops(m, job_of(8), layout(8, 1, 1), cluster_of(test::a100_80gb(), 8));
    auto core = [](Phase ph) {
      return [ph](const StepOp& so) { return layer_scope(Scope::layer, so.scope) && so.phase == ph && is_attention_core(so); };
    };
    const double fwd = sum_ops(ops, core(Phase::forward)).gemm_flops;
    EXPECT_NEAR(sum_ops(ops, core(Phase::backward)).gemm_flops, (flash ? 2.5 : 2.0) * fwd, kSumOrder * fwd)
        << "flash=" << flash;
  }
}

TEST(StepOps, FullRecomputeRepeatsExactlyTheForwardOpsOfALayer) {
  for (bool sp : {false, true}) {
    const ModelSpec m = test::gpt3_175b();
    const StepOps ops =
        build_step_ops(m, job_of(8), layout(8, 1, 1, 1, Recompute::full, sp), cluster_of(test::a100_80gb(), 8));
    const Sums fwd = sum_ops(ops, in(Scope::layer, Phase::forward));
    const Sums rc = sum_ops(ops, in(Scope::layer, Phase::recompute));
    EXPECT_EQ(rc.gemm_flops, fwd.gemm_flops);
    EXPECT_EQ(rc.memory_bytes, fwd.memory_bytes);
    EXPECT_EQ(rc.collective_bytes, fwd.collective_bytes);
    EXPECT_EQ(rc.op_count, fwd.op_count);
    // Nothing outside the layers is recomputed.
    for (Scope sc : {Scope::embedding, Scope::output, Scope::pipeline, Scope::data_parallel, Scope::optimizer}) {
      EXPECT_EQ(sum_ops(ops, in(sc, Phase::recompute)).op_count, 0.0);
    }
  }
}

TEST(StepOps, SelectiveRecomputeWithoutFlashRepeatsOnlyTheAttentionCoreAndSoftmax) {
  const ModelSpec m = test::gpt3_175b();  // unfused attention
  const StepOps ops = build_step_ops(m, job_of(8), layout(8, 1, 1, 1, Recompute::selective),
                                     cluster_of(test::a100_80gb(), 8));
  const double h = 12288, s = 2048;
  const double core = 4.0 * s * h / 8.0 * s;  // Q K^T + P V forward, one micro-batch of s tokens
  const Sums rc = sum_ops(ops, in(Scope::layer, Phase::recompute));
  EXPECT_NEAR(rc.gemm_flops, core, kSumOrder * core);
  for (const StepOp& so : ops.ops) {
    if (so.phase == Phase::recompute) {
      EXPECT_TRUE(is_attention_core(so) || named(so, "softmax"));
    }
  }
  // With fused attention there is nothing to recompute.
  ModelSpec flash = m;
  flash.flash_attention = true;
  const StepOps f = build_step_ops(flash, job_of(8), layout(8, 1, 1, 1, Recompute::selective),
                                   cluster_of(test::a100_80gb(), 8));
  EXPECT_EQ(sum_ops(f, in(Scope::layer, Phase::recompute)).op_count, 0.0);
}

TEST(StepOps, TensorParallelWithoutSpIsTwoAllReducesOfBshTwoBytesEachWay) {
  // Shoeybi et al. 2019: the f and g operators give 2 all-reduces forward and 2 backward per layer,
  // each of the full b*s*h activation in 16 bits.
  const ModelSpec m = test::gpt3_175b();
  const int b = 2;
  const StepOps ops = build_step_ops(m, job_of(8), layout(8, 1, 1, b), cluster_of(test::a100_80gb(), 8));
  const double bytes = 2.0 * b * 2048.0 * 12288.0;
  // One all-reduce after the attention block (Scope::layer) and one after the FFN (Scope::dense_ffn).
  for (Phase ph : {Phase::forward, Phase::backward}) {
    const auto cs = collectives(ops, Scope::layer, ph);
    ASSERT_EQ(cs.size(), 2u);
    double count = 0;
    for (const StepOp& so : cs) {
      const auto& c = std::get<CollectiveOp>(so.op);
      EXPECT_EQ(c.kind, CollectiveKind::all_reduce);
      EXPECT_EQ(c.bytes.base(), bytes);
      EXPECT_EQ(c.group.size, 8);
      EXPECT_EQ(c.axis, Axis::tp);
      count += so.count;
    }
    EXPECT_EQ(count, 2.0);
  }
}

TEST(StepOps, SequenceParallelTurnsEachAllReduceIntoAllGatherPlusReduceScatter) {
  // Korthikanti et al. 2022, Sec. 4.2.2: g = all-gather, g-bar = reduce-scatter, same buffer size.
  const ModelSpec m = test::gpt3_175b();
  const int b = 2;
  const StepOps ops =
      build_step_ops(m, job_of(8), layout(8, 1, 1, b, Recompute::selective, true), cluster_of(test::a100_80gb(), 8));
  const double bytes = 2.0 * b * 2048.0 * 12288.0;
  for (Phase ph : {Phase::forward, Phase::backward}) {
    const auto cs = collectives(ops, Scope::layer, ph);
    // An all-gather + reduce-scatter pair around attention and around the FFN; in backward each
    // column-parallel linear also gathers its input again for its weight gradient (the forward
    // kept this rank's sequence shard), asynchronously, as the reduce-scatter of its input
    // gradient (TrainingJob::tp_async_dgrad, on by default).
    ASSERT_EQ(cs.size(), ph == Phase::forward ? 4u : 6u);
    double ag = 0, rs = 0, async = 0;
    for (const StepOp& so : cs) {
      const auto& c = std::get<CollectiveOp>(so.op);
      EXPECT_EQ(c.bytes.base(), bytes);
      ag += c.kind == CollectiveKind::all_gather ? so.count : 0.0;
      rs += c.kind == CollectiveKind::reduce_scatter ? so.count : 0.0;
      if (so.tp_async) {
        async += so.count;
        EXPECT_EQ(ph, Phase::backward);
        EXPECT_TRUE(c.kind == CollectiveKind::reduce_scatter || std::string(c.name) == "tp_input_regather") << c.name;
      }
    }
    EXPECT_EQ(ag, ph == Phase::forward ? 2.0 : 4.0);
    EXPECT_EQ(rs, 2.0);
    EXPECT_EQ(async, ph == Phase::forward ? 0.0 : 4.0);
  }
  // The windows: the weight- and input-gradient GEMMs of QKV and FFN up (the column-parallel linears).
  std::vector<std::string> windows;
  for (const StepOp& so : ops.ops) {
    if (so.tp_window) windows.emplace_back(std::get<GemmOp>(so.op).name);
  }
  std::sort(windows.begin(), windows.end());
  EXPECT_EQ(windows, (std::vector<std::string>{"ffn_up_dgrad", "ffn_up_wgrad", "qkv_dgrad", "qkv_wgrad"}));
}

TEST(StepOps, NoTensorParallelCollectivesAtTpOne) {
  const StepOps ops = build_step_ops(test::gpt_1_3b(), job_of(8), layout(1, 1, 1), cluster_of(test::h100_sxm(), 1));
  for (const StepOp& so : ops.ops) EXPECT_FALSE(std::holds_alternative<CollectiveOp>(so.op));
}

TEST(StepOps, PipelineSendsBshTwoBytesOverTpEachWay) {
  // Narayanan et al. 2021, Sec. 4.1 scatter/gather: each TP rank sends 1/t of the b*s*h tensor.
  const ModelSpec m = test::gpt3_175b();
  const int b = 1, t = 8;
  const StepOps ops = build_step_ops(m, job_of(64), layout(t, 8, 1, b), cluster_of(test::a100_80gb(), 64));
  const double bytes = 2.0 * b * 2048.0 * 12288.0 / t;
  for (Phase ph : {Phase::forward, Phase::backward}) {
    const auto cs = collectives(ops, Scope::pipeline, ph);
    ASSERT_EQ(cs.size(), 1u);
    const auto& c = std::get<CollectiveOp>(cs[0].op);
    EXPECT_EQ(c.kind, CollectiveKind::send_recv);
    EXPECT_EQ(c.bytes.base(), bytes);
    EXPECT_EQ(c.axis, Axis::pp);
    // Stages are tp*dp = 8 ranks apart: every neighbour is on another node.
    EXPECT_TRUE(c.group.spans_nodes());
  }
  const StepOps one = build_step_ops(m, job_of(64), layout(t, 1, 8, b), cluster_of(test::a100_80gb(), 64));
  EXPECT_EQ(sum_ops(one, [](const StepOp& so) { return so.scope == Scope::pipeline; }).op_count, 0.0);
}

// Llama-2-70B parameters of one layer, by hand: QKV + projection + SwiGLU + two norm scales.
double llama_layer_params() {
  const double h = 8192, kv_dim = 1024, f = 28672;
  return h * (h + 2.0 * kv_dim) + h * h + 3.0 * h * f + 2.0 * h;
}

// Parameters on one GPU of a stage, by hand: Llama-2-70B, untied, pp = 1: all layers, the input
// embedding, the output matrix and the final norm, over t.
double llama_params_per_gpu_pp1(int t) {
  const double h = 8192, V = 32000;
  return (80.0 * llama_layer_params() + V * h + V * h + h) / t;
}

TEST(StepOps, StageParamsAreTheMostLoadedStagesParametersOverTp) {
  const ModelSpec m = test::llama2_70b();
  const StepOps pp1 = build_step_ops(m, job_of(64), layout(8, 1, 2), cluster_of(test::h100_sxm(), 16));
  EXPECT_EQ(pp1.stage_params, llama_params_per_gpu_pp1(8));
  // pp = 4: stage 0 has 20 layers + embedding; stage 3 has 20 layers + output matrix + final norm.
  const double h = 8192, V = 32000;
  const double layer = llama_layer_params();
  const double last = (20.0 * layer + V * h + h) / 8.0;
  EXPECT_EQ(stage_params_per_gpu(m, layout(8, 4, 1), 0), (20.0 * layer + V * h) / 8.0);
  EXPECT_EQ(stage_params_per_gpu(m, layout(8, 4, 1), 3), last);
  const StepOps pp4 = build_step_ops(m, job_of(64), layout(8, 4, 1), cluster_of(test::h100_sxm(), 32));
  EXPECT_EQ(pp4.stage_params, last);
}

TEST(StepOps, DataParallelZeroZeroIsOneAllReduceOfTwoBytesPerParameter) {
  const ModelSpec m = test::llama2_70b();
  const StepOps ops = build_step_ops(m, test::with_16bit_gradients(job_of(64)),
                                     layout(8, 1, 4), cluster_of(test::h100_sxm(), 32));
  const auto cs = collectives(ops, Scope::data_parallel, Phase::step);
  ASSERT_EQ(cs.size(), 1u);
  const auto& c = std::get<CollectiveOp>(cs[0].op);
  EXPECT_EQ(c.kind, CollectiveKind::all_reduce);
  EXPECT_EQ(c.bytes.base(), 2.0 * llama_params_per_gpu_pp1(8));  // bf16 gradients
  EXPECT_EQ(c.axis, Axis::dp);
  EXPECT_EQ(c.group.size, 4);
}

TEST(StepOps, DataParallelZeroOneIsReduceScatterPlusAllGather) {
  const ModelSpec m = test::llama2_70b();
  const StepOps ops = build_step_ops(m, test::with_16bit_gradients(job_of(64)),
                                     layout(8, 1, 4, 1, Recompute::selective, false, 1),
                                     cluster_of(test::h100_sxm(), 32));
  const auto cs = collectives(ops, Scope::data_parallel, Phase::step);
  ASSERT_EQ(cs.size(), 2u);
  int rs = 0, ag = 0;
  for (const StepOp& so : cs) {
    const auto& c = std::get<CollectiveOp>(so.op);
    EXPECT_EQ(c.bytes.base(), 2.0 * llama_params_per_gpu_pp1(8));
    rs += c.kind == CollectiveKind::reduce_scatter;
    ag += c.kind == CollectiveKind::all_gather;
  }
  EXPECT_EQ(rs, 1);
  EXPECT_EQ(ag, 1);
}

TEST(StepOps, DataParallelZeroThreeGathersEachLayerTwiceAndReduceScattersItOnce) {
  // FSDP: all-gather a layer's bf16 weights before its forward and again before its backward,
  // reduce-scatter its gradients after the backward: 2*layer_params/t bytes each.
  const ModelSpec m = test::llama2_70b();
  const StepOps ops = build_step_ops(m, test::with_16bit_gradients(job_of(64)),
                                     layout(8, 1, 4, 1, Recompute::selective, false, 3),
                                     cluster_of(test::h100_sxm(), 32));
  EXPECT_TRUE(collectives(ops, Scope::data_parallel, Phase::step).empty());
  const double layer_bytes = 2.0 * llama_layer_params() / 8.0;
  // Gathered per block (attention in Scope::layer, FFN in Scope::dense_ffn): bytes add up to the layer.
  auto dp_bytes = [&](Phase ph, CollectiveKind k) {
    double total = 0;
    for (const StepOp& so : collectives(ops, Scope::layer, ph)) {
      const auto& c = std::get<CollectiveOp>(so.op);
      if (c.axis == Axis::dp && c.kind == k) total += c.bytes.base() * so.count;
    }
    return total;
  };
  EXPECT_DOUBLE_EQ(dp_bytes(Phase::forward, CollectiveKind::all_gather), layer_bytes);
  EXPECT_DOUBLE_EQ(dp_bytes(Phase::backward, CollectiveKind::all_gather), layer_bytes);
  EXPECT_DOUBLE_EQ(dp_bytes(Phase::backward, CollectiveKind::reduce_scatter), layer_bytes);
}

TEST(StepOps, AdamMovesTwentyEightBytesPerLocalParameter) {
  // Read fp32 master, m, v (12) and the bf16 gradient (2); write master, m, v (12) and the bf16
  // weight (2) = 28 bytes. ZeRO >= 1 leaves 1/dp of the parameters to each rank.
  const ModelSpec m = test::llama2_70b();
  for (int zero : {0, 1, 2, 3}) {
    const StepOps ops = build_step_ops(m, test::with_16bit_gradients(job_of(64)),
                                     layout(8, 1, 4, 1, Recompute::selective, false, zero),
                                       cluster_of(test::h100_sxm(), 32));
    const Sums adam = sum_ops(ops, in(Scope::optimizer, Phase::step));
    const double local = llama_params_per_gpu_pp1(8) / (zero >= 1 ? 4.0 : 1.0);
    EXPECT_NEAR(adam.memory_bytes, 28.0 * local, kSumOrder * 28.0 * local) << "zero=" << zero;
  }
}

// ---------------------------------------------------------------------------------------------
// place_group
// ---------------------------------------------------------------------------------------------

TEST(PlaceGroup, TensorParallelEightOnEightGpuNodesIsOneNode) {
  const GroupPlacement g = place_group(8, 1, 8);
  EXPECT_EQ(g.size, 8);
  EXPECT_EQ(g.ranks_per_node, 8);
  EXPECT_EQ(g.nodes, 1);
  EXPECT_FALSE(g.spans_nodes());
}

TEST(PlaceGroup, DataParallelWithStrideOfANodeHasOneRankPerNode) {
  // tp = 8 fills each node: dp peers are 8 ranks apart, one per node, 16 nodes.
  const GroupPlacement g = place_group(16, 8, 8);
  EXPECT_EQ(g.ranks_per_node, 1);
  EXPECT_EQ(g.nodes, 16);
  EXPECT_TRUE(g.spans_nodes());
}

TEST(PlaceGroup, StrideTwoPutsFourPeersOnAnEightGpuNode) {
  // tp = 2: ranks 0,2,4,6 of a node share a tp index. dp = 4 fits in one node, dp = 8 takes two.
  const GroupPlacement four = place_group(4, 2, 8);
  EXPECT_EQ(four.ranks_per_node, 4);
  EXPECT_EQ(four.nodes, 1);
  const GroupPlacement eight = place_group(8, 2, 8);
  EXPECT_EQ(eight.ranks_per_node, 4);
  EXPECT_EQ(eight.nodes, 2);
  EXPECT_EQ(eight.size, eight.ranks_per_node * eight.nodes);
}

TEST(PlaceGroup, SizeOneIsASingleRankOnOneNode) {
  const GroupPlacement g = place_group(1, 4, 8);
  EXPECT_EQ(g.size, 1);
  EXPECT_EQ(g.ranks_per_node, 1);
  EXPECT_EQ(g.nodes, 1);
}

// ---------------------------------------------------------------------------------------------
// Framework kernel styles
// ---------------------------------------------------------------------------------------------

TEST(StepOps, FusedRmsNormIsOneReadAndWriteEagerIsSixKernelsOfThirtySixBytes) {
  // Per norm and token: fused 2 + 2 bytes per element; eager (Llama reference RMSNorm):
  // .float() 2+4, pow 4+4, mean 4, *rsqrt 4+4, type_as 4+2, *weight 2+2 = 36 bytes per element.
  ModelSpec m = test::llama2_70b();
  m.rmsnorm = true;
  const Parallelism p{};  // tp = 1, micro_batch = 1
  const Cluster c = cluster_of(test::h100_sxm(), 8);
  const double elems = static_cast<double>(m.seq_len) * m.hidden;
  TrainingJob job = test::job_of(8);
  const auto fused = sum_ops(build_step_ops(m, job, p, c), [](const StepOp& so) {
    return so.phase == Phase::forward && named(so, "rmsnorm");
  });
  EXPECT_DOUBLE_EQ(fused.memory_bytes, 2.0 * 4.0 * elems);  // two norms per layer
  job.framework = Framework::pytorch;
  const auto eager = sum_ops(build_step_ops(m, job, p, c), [](const StepOp& so) {
    return so.phase == Phase::forward && named(so, "rmsnorm_eager");
  });
  EXPECT_DOUBLE_EQ(eager.memory_bytes, 2.0 * 36.0 * elems);
  EXPECT_DOUBLE_EQ(eager.op_count, 2.0 * 6.0);  // six kernels per norm, each with its launch
}

TEST(StepOps, RopeTouchesQueriesAndKeysFusedOnceEagerTwentyBytesPerElement) {
  // Q and K elements per token on one TP rank: (heads + kv_heads) * d_head = (64 + 8) * 128.
  ModelSpec m = test::llama2_70b();
  m.rope = true;
  const Parallelism p{};
  const Cluster c = cluster_of(test::h100_sxm(), 8);
  const double qk = static_cast<double>(m.seq_len) * (64 + 8) * 128;
  TrainingJob job = test::job_of(8);
  const auto fused = sum_ops(build_step_ops(m, job, p, c), [](const StepOp& so) {
    return so.phase == Phase::forward && named(so, "rope");
  });
  EXPECT_DOUBLE_EQ(fused.memory_bytes, 4.0 * qk);
  job.framework = Framework::pytorch;
  const auto eager = sum_ops(build_step_ops(m, job, p, c), [](const StepOp& so) {
    return so.phase == Phase::forward && named(so, "rope_eager");
  });
  EXPECT_DOUBLE_EQ(eager.memory_bytes, 20.0 * qk);  // 6 + 8 + 6
}

TEST(StepOps, PytorchSelectiveRecomputeRepeatsTheElementWiseOps) {
  // torchtitan's op-level selective checkpointing keeps GEMM/attention outputs and recomputes
  // the element-wise kernels; Megatron's selective recompute with fused attention repeats nothing.
  ModelSpec m = test::llama2_70b();
  m.rmsnorm = m.rope = true;
  Parallelism p{};
  p.recompute = Recompute::selective;
  const Cluster c = cluster_of(test::h100_sxm(), 8);
  TrainingJob job = test::job_of(8);
  auto rc_ops = [](const StepOp& so) { return so.phase == Phase::recompute; };
  EXPECT_EQ(sum_ops(build_step_ops(m, job, p, c), rc_ops).op_count, 0.0);
  job.framework = Framework::pytorch;
  const StepOps ops = build_step_ops(m, job, p, c);
  const auto rc = sum_ops(ops, rc_ops);
  const auto fwd_elementwise = sum_ops(ops, [](const StepOp& so) {
    return so.phase == Phase::forward && layer_scope(Scope::layer, so.scope) && std::holds_alternative<MemoryOp>(so.op);
  });
  EXPECT_EQ(rc.gemm_flops, 0.0);
  EXPECT_DOUBLE_EQ(rc.memory_bytes, fwd_elementwise.memory_bytes);
}

}  // namespace
}  // namespace capplan::sim
