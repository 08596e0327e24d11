// SPDX-License-Identifier: Apache-2.0
// The CUDA backend's GEMM bookkeeping, checked without a GPU: a small emulator of cuBLASLt's
// column-major semantics runs the operands lt_layout() describes, and must reproduce the row-major
// product MatmulSpec promises; the training step's plan (layer_step_plan) must have one kernel per
// op of the layer slice, its GEMMs the sweep's TN products of the ops' shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <variant>
#include <vector>

#include "capplan/calibrate/calibration_run.hpp"
#include "gemm_layout.hpp"

namespace capplan::calib::cuda {
namespace {

using I = std::int64_t;

// cuBLASLt: D (column-major c.rows x c.cols, leading dimension c.ld) = op(LA) op(LB), batched;
// LA is our B and LB our A (lt_layout's convention).
void emulate_lt(const LtLayout& l, I batch, const double* our_a, const double* our_b, double* c) {
  const I M = static_cast<I>(l.c.rows), N = static_cast<I>(l.c.cols);
  const I K = static_cast<I>(l.a.transpose ? l.a.rows : l.a.cols);
  ASSERT_EQ(static_cast<I>(l.a.transpose ? l.a.cols : l.a.rows), M);
  ASSERT_EQ(static_cast<I>(l.b.transpose ? l.b.rows : l.b.cols), N);
  ASSERT_EQ(static_cast<I>(l.b.transpose ? l.b.cols : l.b.rows), K);
  for (I bt = 0; bt < batch; ++bt) {
    const double* la = our_b + bt * l.a.batch_stride;
    const double* lb = our_a + bt * l.b.batch_stride;
    double* d = c + bt * l.c.batch_stride;
    for (I i = 0; i < M; ++i) {
      for (I j = 0; j < N; ++j) {
        double acc = 0;
        for (I p = 0; p < K; ++p) {
          const double x = l.a.transpose ? la[p + i * l.a.ld] : la[i + p * l.a.ld];
          const double y = l.b.transpose ? lb[j + p * l.b.ld] : lb[p + j * l.b.ld];
          acc += x * y;
        }
        d[i + j * l.c.ld] = acc;
      }
    }
  }
}

// What MatmulSpec promises, computed directly in row-major terms.
void reference(const MatmulSpec& s, const double* a, const double* b, double* c) {
  const I lda = s.ld_a > 0 ? s.ld_a : (s.trans_a ? s.m : s.k);
  const I ldb = s.ld_b > 0 ? s.ld_b : (s.trans_b ? s.k : s.n);
  const I ldc = s.ld_c > 0 ? s.ld_c : s.n;
  for (I bt = 0; bt < s.batch; ++bt) {
    for (I i = 0; i < s.m; ++i) {
      for (I j = 0; j < s.n; ++j) {
        double acc = 0;
        for (I p = 0; p < s.k; ++p) {
          const double x = s.trans_a ? a[bt * s.stride_a + p * lda + i] : a[bt * s.stride_a + i * lda + p];
          const double y = s.trans_b ? b[bt * s.stride_b + j * ldb + p] : b[bt * s.stride_b + p * ldb + j];
          acc += x * y;
        }
        c[bt * s.stride_c + i * ldc + j] = acc;
      }
    }
  }
}

// Elements a stored operand spans (rows x cols row-major with row stride ld, batched).
I extent(I rows, I cols, I ld, I batch, I stride) { return (batch - 1) * stride + (rows - 1) * (ld > 0 ? ld : cols) + cols; }

std::vector<double> random_vector(I n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = u(gen);
  return v;
}

void expect_lt_matches_spec(const MatmulSpec& s, const char* name) {
  SCOPED_TRACE(name);
  const I na = extent(s.trans_a ? s.k : s.m, s.trans_a ? s.m : s.k, s.ld_a, s.batch, s.stride_a);
  const I nb = extent(s.trans_b ? s.n : s.k, s.trans_b ? s.k : s.n, s.ld_b, s.batch, s.stride_b);
  const I nc = extent(s.m, s.n, s.ld_c, s.batch, s.stride_c);
  const auto a = random_vector(na, 1), b = random_vector(nb, 2);
  std::vector<double> want(static_cast<std::size_t>(nc), 7.0), got(static_cast<std::size_t>(nc), 7.0);
  reference(s, a.data(), b.data(), want.data());
  emulate_lt(lt_layout(s), s.batch, a.data(), b.data(), got.data());
  for (std::size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-12) << "element " << i;
}

StepShape small_step() {
  return {.hidden = 16, .heads = 2, .ffn_hidden = 24, .seq_len = 8, .micro_batch = 2, .dtype = sim::Precision::bf16};
}

// What CudaBackend::gemm times, and what the step runs for every GemmOp: C = A B^T with B stored
// n x k, batched.
TEST(CudaGemmLayout, LtOperandsReproduceTheProbeGemmInTnLayout) {
  const MatmulSpec s = tn_spec({5, 7, 3, 2, sim::Precision::bf16});
  EXPECT_TRUE(s.trans_b);
  EXPECT_FALSE(s.trans_a);
  EXPECT_EQ(s.stride_a, 15);
  EXPECT_EQ(s.stride_b, 21);
  EXPECT_EQ(s.stride_c, 35);
  expect_lt_matches_spec(s, "probe");
}

// One planned kernel per op of the layer slice, in its order; every GEMM is the sweep's TN product
// of the op's shape and dtype, and cuBLASLt's operands reproduce it.
TEST(CudaGemmLayout, LayerStepPlanHasOneKernelPerOpOfTheSliceWithItsShape) {
  for (const bool llama : {false, true}) {
    StepShape shape = small_step();
    if (llama) {
      shape.kv_heads = 1;
      shape.gated_ffn = shape.rmsnorm = shape.rope = shape.flash_attention = true;
      shape.dtype = sim::Precision::fp8;
    }
    SCOPED_TRACE(llama ? "llama-like fp8" : "gpt bf16");
    const auto ops = sim::layer_step_ops(layer_step_shape(shape));
    const auto plan = layer_step_plan(shape);
    ASSERT_TRUE(plan.has_value());
    ASSERT_EQ(plan->size(), ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const PlannedKernel& k = (*plan)[i];
      EXPECT_EQ(k.phase, ops[i].op.phase);
      EXPECT_EQ(k.component, ops[i].component);
      EXPECT_DOUBLE_EQ(k.count, ops[i].op.count);
      if (const auto* g = std::get_if<sim::GemmOp>(&ops[i].op.op)) {
        ASSERT_EQ(k.kernel, StepKernel::gemm) << k.op;
        EXPECT_EQ(k.op, g->name);
        EXPECT_EQ(k.gemm.m, g->m);
        EXPECT_EQ(k.gemm.n, g->n);
        EXPECT_EQ(k.gemm.k, g->k);
        EXPECT_EQ(k.gemm.batch, g->batch);
        EXPECT_EQ(k.gemm.dtype, g->dtype);
        expect_lt_matches_spec(k.gemm, g->name);
      } else {
        EXPECT_NE(k.kernel, StepKernel::gemm) << k.op;
        EXPECT_GT(k.rows * k.cols, 0) << k.op;
      }
    }
  }
}

TEST(CudaGemmLayout, LayerStepPlanMemoryKernelsMoveTheOpsBytes) {
  const StepShape shape = small_step();  // bf16: 2 bytes per element
  const auto ops = sim::layer_step_ops(layer_step_shape(shape));
  const auto plan = layer_step_plan(shape);
  ASSERT_TRUE(plan.has_value());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto* m = std::get_if<sim::MemoryOp>(&ops[i].op.op);
    if (m == nullptr) continue;
    const PlannedKernel& k = (*plan)[i];
    const double tensors = k.kernel == StepKernel::layernorm_bwd || k.kernel == StepKernel::softmax_bwd ||
                                   k.kernel == StepKernel::gelu_bwd || k.kernel == StepKernel::add ||
                                   k.kernel == StepKernel::gated_gelu
                               ? 3.0
                               : 2.0;
    EXPECT_NEAR(tensors * 2.0 * static_cast<double>(k.rows * k.cols), m->bytes.base(),
                tensors * 2.0 * static_cast<double>(k.cols))
        << k.op << " " << to_string(k.kernel);
  }
  StepShape fp32 = shape;
  fp32.dtype = sim::Precision::fp32;
  const auto bad = layer_step_plan(fp32);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error()[0].where, "cuda/training_step/dtype");
}

// fp8 GEMMs of a step run as Transformer Engine runs them (its recipes' use_split_accumulator is
// False for fprop, True for dgrad and wgrad): forward with cuBLASLt's fast accumulation, backward
// without; 16-bit GEMMs (the fp8 step's bf16 attention core included) never ask for it, and the
// sweep's tn_spec leaves it off. Fused-attention GEMMs are marked so the step can report them.
TEST(CudaGemmLayout, Fp8StepGemmsUseFastAccumulationForwardOnlyAsTransformerEngineDoes) {
  StepShape shape = small_step();
  shape.kv_heads = 1;
  shape.gated_ffn = shape.rmsnorm = shape.rope = shape.flash_attention = true;
  shape.dtype = sim::Precision::fp8;
  const auto plan = layer_step_plan(shape);
  ASSERT_TRUE(plan.has_value());
  int fp8_forward = 0, fp8_backward = 0, fused = 0;
  for (const PlannedKernel& k : *plan) {
    if (k.kernel != StepKernel::gemm) continue;
    const bool fp8 = k.gemm.dtype == sim::Precision::fp8;
    const bool forward = k.phase == sim::Phase::forward;
    EXPECT_EQ(k.gemm.fast_accum, fp8 && forward) << k.op;
    fp8_forward += fp8 && forward ? 1 : 0;
    fp8_backward += fp8 && !forward ? 1 : 0;
    fused += k.fused_attention ? 1 : 0;
    if (k.fused_attention) {
      EXPECT_NE(k.gemm.dtype, sim::Precision::fp8) << k.op;  // attention stays 16-bit
    }
  }
  EXPECT_GT(fp8_forward, 0);
  EXPECT_GT(fp8_backward, 0);
  EXPECT_GT(fused, 0);
  EXPECT_FALSE(tn_spec({64, 64, 64, 1, sim::Precision::fp8}).fast_accum);

  shape.dtype = sim::Precision::bf16;
  shape.flash_attention = false;
  const auto bf16 = layer_step_plan(shape);
  ASSERT_TRUE(bf16.has_value());
  for (const PlannedKernel& k : *bf16) {
    EXPECT_FALSE(k.gemm.fast_accum) << k.op;
    EXPECT_FALSE(k.fused_attention) << k.op;  // explicit scores: plain batched GEMMs
  }
}

}  // namespace
}  // namespace capplan::calib::cuda
