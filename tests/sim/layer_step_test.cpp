// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/cost/layer_step.hpp"

#include <gtest/gtest.h>

#include <variant>

namespace capplan::sim {
namespace {

// A cost model with round rates so predicted times are the op totals divided by them.
class RateCost final : public OpCostModel {
 public:
  units::Seconds gemm(const GemmOp& op) const override { return units::seconds(op.flops().base() / 1e12); }
  units::Seconds memory(const MemoryOp& op) const override { return units::seconds(op.bytes.base() / 1e11); }
  units::Seconds collective(const CollectiveOp&) const override { return units::seconds(0); }
  std::string source() const override { return "test"; }
};

LayerStepShape gpt_shape() {
  return {.layers = 2, .hidden = 512, .heads = 8, .ffn_hidden = 4 * 512, .seq_len = 256, .micro_batch = 2,
          .dtype = Precision::fp32};
}

TEST(LayerStep, GemmFlopsAreThreeTimesTheGptForwardFormula) {
  // Forward per GPT layer (Narayanan et al. 2021): 24*b*s*h^2 + 4*b*s^2*h; backward is twice the
  // forward (dgrad + wgrad), so the step is 3x.
  const auto s = gpt_shape();
  const double b = s.micro_batch, sq = s.seq_len, h = s.hidden;
  const double forward = 24 * b * sq * h * h + 4 * b * sq * sq * h;
  EXPECT_DOUBLE_EQ(layer_step_flops(s).base(), 3 * forward * s.layers);
}

TEST(LayerStep, MemoryBytesAreTheOpListsElementwiseBytes) {
  // The op list's element-wise convention (op_list_builder.hpp, OpListBuilder::elementwise): forward
  // reads + writes once, backward moves twice the forward bytes. Per layer, memory component:
  // forward 2 norms x 2 T*h + 2 residual adds x 3 T*h + GELU 2 T*f; backward twice that:
  // 30 T*h + 6 T*f. Attention component: softmax 2 + 4 = 6 scores of b*a*s^2 elements.
  // All times 4 bytes (fp32). (The old hand-written list had 22 T*h + 5 T*f and 5 scores: its
  // backward kernels were counted at 3 tensors; the op list is what estimates price.)
  const auto s = gpt_shape();
  const double T = s.micro_batch * s.seq_len, h = s.hidden, f = s.ffn_hidden;
  const double scores = double(s.micro_batch) * s.heads * s.seq_len * s.seq_len;
  double memory = 0, attention = 0;
  for (const auto& op : layer_step_ops(s)) {
    if (const auto* m = std::get_if<MemoryOp>(&op.op.op)) {
      (op.component == LayerComponent::memory ? memory : attention) += m->bytes.base() * op.op.count;
    }
  }
  EXPECT_DOUBLE_EQ(memory, 4 * (30 * T * h + 6 * T * f));
  EXPECT_DOUBLE_EQ(attention, 4 * 6 * scores);
}

TEST(LayerStep, PredictionSumsEveryOpOfEveryLayerPerComponent) {
  const auto s = gpt_shape();
  const auto p = predict_layer_step(s, RateCost{});
  const double b = s.micro_batch, sq = s.seq_len, h = s.hidden, T = b * sq, f = s.ffn_hidden;
  const double dense_flops = 3 * 24 * b * sq * h * h * s.layers;  // the four dense GEMMs, fwd + bwd
  const double attn_flops = 3 * 4 * b * sq * sq * h * s.layers;
  const double scores_bytes = 4 * 6 * b * s.heads * sq * sq * s.layers;
  EXPECT_NEAR(p.gemm.base(), dense_flops / 1e12, 1e-15);
  EXPECT_NEAR(p.attention.base(), attn_flops / 1e12 + scores_bytes / 1e11, 1e-15);
  EXPECT_NEAR(p.memory.base(), 4 * (30 * T * h + 6 * T * f) * s.layers / 1e11, 1e-15);
  EXPECT_NEAR(p.total().base(), (p.gemm + p.attention + p.memory).base(), 1e-15);
}

TEST(LayerStep, EveryGemmHasTheStepDtypeAndPositiveSizes) {
  auto s = gpt_shape();
  s.dtype = Precision::bf16;
  int gemms = 0;
  double runs = 0;
  for (const auto& op : layer_step_ops(s)) {
    if (const auto* g = std::get_if<GemmOp>(&op.op.op)) {
      ++gemms;
      runs += op.op.count;
      EXPECT_EQ(g->dtype, Precision::bf16);
      EXPECT_GT(g->m * g->n * g->k * g->batch, 0) << g->name;
    }
  }
  // Entries: dense fwd 4, attention fwd 2, dense dgrad+wgrad 8, attention bwd 2 (the op list
  // lists the 4 attention backward GEMMs as 2 score-shaped and 2 context-shaped, count 2 each).
  EXPECT_EQ(gemms, 4 + 2 + 8 + 2);
  EXPECT_DOUBLE_EQ(runs, 4 + 2 + 8 + 4);
}

TEST(LayerStep, ForwardOpsComeBeforeBackwardOpsAndMapRolesToComponents) {
  auto s = gpt_shape();
  s.gated_ffn = s.rmsnorm = s.rope = s.flash_attention = true;
  s.kv_heads = 2;
  s.dtype = Precision::fp8;
  bool backward = false;
  for (const auto& op : layer_step_ops(s)) {
    if (op.op.phase == Phase::backward) backward = true;
    EXPECT_EQ(op.op.phase, backward ? Phase::backward : Phase::forward);
    EXPECT_TRUE(op.op.scope == Scope::layer || op.op.scope == Scope::dense_ffn);
    const auto expected = op.op.role == OpRole::linear ? LayerComponent::gemm
                          : op.op.role == OpRole::attention_core || op.op.role == OpRole::softmax
                              ? LayerComponent::attention
                              : LayerComponent::memory;
    EXPECT_EQ(op.component, expected);
    EXPECT_FALSE(std::holds_alternative<CollectiveOp>(op.op.op));
  }
  EXPECT_TRUE(backward);
}

// The slice is the estimate's own op list: build a Llama-style model by hand (as a scenario
// would), run build_step_ops for one GPU, and compare every layer and dense-FFN op.
void expect_slice_of_build_step_ops(const LayerStepShape& shape, const ModelSpec& m, const TrainingJob& job) {
  Parallelism p;
  p.micro_batch = shape.micro_batch;
  p.recompute = Recompute::none;
  Cluster c;
  c.gpus = 1;
  c.gpus_per_node = 1;
  const StepOps all = build_step_ops(m, job, p, c);
  std::vector<StepOp> expected;
  for (const Phase phase : {Phase::forward, Phase::backward}) {
    for (const auto& op : all.ops) {
      if (op.phase == phase && (op.scope == Scope::layer || op.scope == Scope::dense_ffn)) expected.push_back(op);
    }
  }
  const auto slice = layer_step_ops(shape);
  ASSERT_EQ(slice.size(), expected.size());
  for (std::size_t i = 0; i < slice.size(); ++i) {
    const StepOp& a = slice[i].op;
    const StepOp& e = expected[i];
    SCOPED_TRACE(i);
    EXPECT_EQ(a.role, e.role);
    EXPECT_EQ(a.phase, e.phase);
    EXPECT_EQ(a.scope, e.scope);
    EXPECT_DOUBLE_EQ(a.count, e.count);
    EXPECT_DOUBLE_EQ(a.flops, e.flops);
    ASSERT_EQ(a.op.index(), e.op.index());
    if (const auto* g = std::get_if<GemmOp>(&a.op)) {
      const auto& ge = std::get<GemmOp>(e.op);
      EXPECT_STREQ(g->name, ge.name);
      EXPECT_EQ(g->m, ge.m);
      EXPECT_EQ(g->n, ge.n);
      EXPECT_EQ(g->k, ge.k);
      EXPECT_EQ(g->batch, ge.batch);
      EXPECT_EQ(g->dtype, ge.dtype);
      EXPECT_EQ(g->fused_attention, ge.fused_attention);
    } else {
      const auto& me = std::get<MemoryOp>(e.op);
      EXPECT_STREQ(std::get<MemoryOp>(a.op).name, me.name);
      EXPECT_DOUBLE_EQ(std::get<MemoryOp>(a.op).bytes.base(), me.bytes.base());
    }
  }
}

TEST(LayerStep, IsTheLayerSliceOfTheEstimatesOpList) {
  // A Llama-3-8B-like layer, smaller.
  const ModelSpec m{.name = "llama-like", .layers = 4, .hidden = 1024, .heads = 16, .kv_heads = 4, .ffn_hidden = 3584,
                    .vocab = 32000, .seq_len = 512, .gated_ffn = true, .flash_attention = true, .rmsnorm = true,
                    .rope = true};
  for (const Precision dt : {Precision::bf16, Precision::fp8}) {
    TrainingJob job;
    job.precision = dt;
    const LayerStepShape s{.layers = 4, .hidden = 1024, .heads = 16, .ffn_hidden = 3584, .seq_len = 512,
                           .micro_batch = 2, .dtype = dt, .kv_heads = 4, .gated_ffn = true, .rmsnorm = true,
                           .rope = true, .flash_attention = true};
    SCOPED_TRACE(to_string(dt));
    expect_slice_of_build_step_ops(s, m, job);
  }
  // And the default GPT-style shape against a GPT-style model with unfused attention.
  const ModelSpec gpt{.layers = 2, .hidden = 512, .heads = 8, .kv_heads = 8, .ffn_hidden = 2048, .vocab = 50304,
                      .seq_len = 256, .flash_attention = false};
  TrainingJob fp32;
  fp32.precision = Precision::fp32;
  // The runners' softmax is one kernel at any shape; Megatron's would fall back to PyTorch ops
  // for fp32 scores (FusedSoftmax tests), which the slice does not measure.
  fp32.softmax_kernel_limits = false;
  expect_slice_of_build_step_ops(gpt_shape(), gpt, fp32);
}

TEST(LayerStep, DecodeStepIsTheServingPassLayerForwardOnly) {
  // 16 sequences decoding one token each over 1,024 cached tokens.
  LayerStepShape s = gpt_shape();
  s.layers = 1;
  s.micro_batch = 16;
  s.decode_context = 1024;
  ASSERT_TRUE(check(s).empty());
  const auto ops = layer_step_ops(s);
  ASSERT_FALSE(ops.empty());
  bool score = false, kv_write = false;
  for (const auto& o : ops) {
    EXPECT_EQ(o.op.phase, Phase::forward) << o.op.op.index();
    if (const auto* g = std::get_if<GemmOp>(&o.op.op)) {
      if (std::string(g->name) == "decode_attn_score") {
        // One query per head against the cache: per sequence and KV head, group x ctx x d.
        score = true;
        EXPECT_EQ(g->m, 1);  // MHA: one query head per KV head
        EXPECT_EQ(g->n, 1024);
        EXPECT_EQ(g->k, 64);
        EXPECT_EQ(g->batch, 16 * 8);
        EXPECT_EQ(o.component, LayerComponent::attention);
      } else if (o.op.role == OpRole::linear) {
        EXPECT_EQ(g->m, 16);  // one new token per sequence
      }
    } else if (const auto* m = std::get_if<MemoryOp>(&o.op.op); m != nullptr && o.op.role == OpRole::kv_cache) {
      kv_write = true;
    }
  }
  EXPECT_TRUE(score);
  EXPECT_TRUE(kv_write);
  // FLOPs by hand: the linears 2 b h (3h + h + 2 f) = 2 * 16 * 512 * 6144 and the attention
  // 2 x 2 b heads ctx d = 4 * 16 * 8 * 1024 * 64.
  EXPECT_DOUBLE_EQ(layer_step_flops(s).base(), 2.0 * 16 * 512 * 6144 + 4.0 * 16 * 8 * 1024 * 64);
  // A negative context is named.
  s.decode_context = -1;
  const auto d = check(s);
  ASSERT_FALSE(d.empty());
  EXPECT_EQ(d.front().where, "step/decode_context");
}

TEST(LayerStep, CheckNamesTheFieldThatIsWrong) {
  auto s = gpt_shape();
  s.heads = 6;
  const auto d = check(s);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].where, "step/heads");
  ASSERT_TRUE(d[0].finding.has_value());
  EXPECT_EQ(d[0].finding->code, FindingCode::step_heads_divide_hidden);  // data/findings words it
  EXPECT_EQ(d[0].finding->number("hidden"), 512);
  EXPECT_EQ(d[0].finding->number("got"), 6);
  s.heads = 8;
  s.seq_len = 0;
  ASSERT_EQ(check(s).size(), 1u);
  EXPECT_EQ(check(s)[0].where, "step/seq_len");
  s.seq_len = 256;
  s.kv_heads = 3;
  ASSERT_EQ(check(s).size(), 1u);
  EXPECT_EQ(check(s)[0].where, "step/kv_heads");
}

}  // namespace
}  // namespace capplan::sim
