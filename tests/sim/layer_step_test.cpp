// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/layer_step.hpp"

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
  LayerStepShape s;
  s.layers = 2;
  s.hidden = 512;
  s.heads = 8;
  s.ffn_hidden = 4 * 512;
  s.seq_len = 256;
  s.micro_batch = 2;
  s.dtype = Precision::fp32;
  return s;
}

TEST(LayerStep, GemmFlopsAreThreeTimesTheGptForwardFormula) {
  // Forward per GPT layer (Narayanan et al. 2021): 24*b*s*h^2 + 4*b*s^2*h; backward is twice the
  // forward (dgrad + wgrad), so the step is 3x.
  const auto s = gpt_shape();
  const double b = s.micro_batch, sq = s.seq_len, h = s.hidden;
  const double forward = 24 * b * sq * h * h + 4 * b * sq * sq * h;
  EXPECT_DOUBLE_EQ(layer_step_flops(s).base(), 3 * forward * s.layers);
}

TEST(LayerStep, MemoryBytesAreTheReadsAndWritesOfEachKernel) {
  // memory component per layer: forward LN 2 + residual 3 + LN 2 + residual 3 = 10 T*h, GELU 2 T*f;
  // backward GELU 3 T*f, LN 3 + residual 3 twice = 12 T*h. attention component: softmax 2 + 3
  // = 5 scores of b*a*s^2 elements. All times 4 bytes (fp32).
  const auto s = gpt_shape();
  const double T = s.micro_batch * s.seq_len, h = s.hidden, f = s.ffn_hidden;
  const double scores = double(s.micro_batch) * s.heads * s.seq_len * s.seq_len;
  double memory = 0, attention = 0;
  for (const auto& op : layer_step_ops(s)) {
    if (const auto* m = std::get_if<MemoryOp>(&op.op.op)) {
      (op.component == LayerComponent::memory ? memory : attention) += m->bytes.base();
    }
  }
  EXPECT_DOUBLE_EQ(memory, 4 * (22 * T * h + 5 * T * f));
  EXPECT_DOUBLE_EQ(attention, 4 * 5 * scores);
}

TEST(LayerStep, PredictionSumsEveryOpOfEveryLayerPerComponent) {
  const auto s = gpt_shape();
  const auto p = predict_layer_step(s, RateCost{});
  const double b = s.micro_batch, sq = s.seq_len, h = s.hidden, T = b * sq, f = s.ffn_hidden;
  const double dense_flops = 3 * 24 * b * sq * h * h * s.layers;  // the four dense GEMMs, fwd + bwd
  const double attn_flops = 3 * 4 * b * sq * sq * h * s.layers;
  const double scores_bytes = 4 * 5 * b * s.heads * sq * sq * s.layers;
  EXPECT_NEAR(p.gemm.base(), dense_flops / 1e12, 1e-15);
  EXPECT_NEAR(p.attention.base(), attn_flops / 1e12 + scores_bytes / 1e11, 1e-15);
  EXPECT_NEAR(p.memory.base(), 4 * (22 * T * h + 5 * T * f) * s.layers / 1e11, 1e-15);
  EXPECT_NEAR(p.total().base(), (p.gemm + p.attention + p.memory).base(), 1e-15);
}

TEST(LayerStep, EveryGemmHasTheStepDtypeAndPositiveSizes) {
  auto s = gpt_shape();
  s.dtype = Precision::bf16;
  int gemms = 0;
  for (const auto& op : layer_step_ops(s)) {
    if (const auto* g = std::get_if<GemmOp>(&op.op.op)) {
      ++gemms;
      EXPECT_EQ(g->dtype, Precision::bf16);
      EXPECT_GT(g->m * g->n * g->k * g->batch, 0) << g->name;
    }
  }
  EXPECT_EQ(gemms, 4 + 2 + 8 + 4);  // dense fwd, attention fwd, dense dgrad+wgrad, attention bwd
}

TEST(LayerStep, CheckNamesTheFieldThatIsWrong) {
  auto s = gpt_shape();
  s.heads = 6;
  const auto d = check(s);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].where, "step/heads");
  EXPECT_EQ(d[0].message, "must divide hidden (512); got 6");
  s.heads = 8;
  s.seq_len = 0;
  ASSERT_EQ(check(s).size(), 1u);
  EXPECT_EQ(check(s)[0].where, "step/seq_len");
}

}  // namespace
}  // namespace capplan::sim
