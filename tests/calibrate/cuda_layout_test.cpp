// SPDX-License-Identifier: Apache-2.0
// The CUDA backend's GEMM bookkeeping, checked without a GPU: a small emulator of cuBLASLt's
// column-major semantics runs the operands lt_layout() describes, and must reproduce the row-major
// product MatmulSpec promises; the training step's per-head attention specs, applied at the
// documented pointer offsets, must compute attention head by head.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

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
  StepShape shape;
  shape.micro_batch = 2;
  shape.seq_len = 8;
  shape.hidden = 16;
  shape.heads = 2;
  shape.ffn_hidden = 24;
  shape.dtype = sim::Precision::bf16;
  return shape;
}

TEST(CudaGemmLayout, LtOperandsReproduceTheRowMajorProductOfEveryStepGemm) {
  const LayerGemmSpecs g = layer_gemm_specs(small_step());
  const std::pair<const MatmulSpec*, const char*> all[] = {
      {&g.qkv, "qkv"},           {&g.scores, "scores"},         {&g.context, "context"},
      {&g.proj, "proj"},         {&g.fc1, "fc1"},               {&g.fc2, "fc2"},
      {&g.fc2_dgrad, "fc2_dgrad"}, {&g.fc2_wgrad, "fc2_wgrad"}, {&g.fc1_dgrad, "fc1_dgrad"},
      {&g.fc1_wgrad, "fc1_wgrad"}, {&g.proj_dgrad, "proj_dgrad"}, {&g.proj_wgrad, "proj_wgrad"},
      {&g.d_probs, "d_probs"},   {&g.d_value, "d_value"},       {&g.d_query, "d_query"},
      {&g.d_key, "d_key"},       {&g.qkv_dgrad, "qkv_dgrad"},   {&g.qkv_wgrad, "qkv_wgrad"}};
  for (const auto& [spec, name] : all) expect_lt_matches_spec(*spec, name);
}

TEST(CudaGemmLayout, LtOperandsReproduceTheProbeGemmInTnLayout) {
  MatmulSpec s;  // what CudaBackend::gemm times: C = A B^T with B stored n x k, batched
  s.m = 5;
  s.n = 7;
  s.k = 3;
  s.batch = 2;
  s.trans_b = true;
  s.stride_a = s.m * s.k;
  s.stride_b = s.n * s.k;
  s.stride_c = s.m * s.n;
  expect_lt_matches_spec(s, "probe");
}

// Per head h of sample i: S = Q K^T, O = P V written token-major, and the gradients
// dP = dO V^T, dV = P^T dO, dQ = dS K, dK = dS^T Q, each against a direct loop over the head.
TEST(CudaGemmLayout, AttentionSpecsAtTheDocumentedOffsetsComputeEachHead) {
  const StepShape shape = small_step();
  const LayerGemmSpecs g = layer_gemm_specs(shape);
  const I b = shape.micro_batch, s = shape.seq_len, h = shape.hidden, a = shape.heads, d = h / a, T = b * s;
  const auto qkv = random_vector(T * 3 * h, 3), p = random_vector(b * a * s * s, 4), dout = random_vector(T * h, 5);
  std::vector<double> scores(static_cast<std::size_t>(b * a * s * s)), ctx(static_cast<std::size_t>(T * h));
  std::vector<double> dprobs(scores.size()), dqkv(static_cast<std::size_t>(T * 3 * h));
  for (I i = 0; i < b; ++i) {  // the step's per-sample calls
    const double* q = qkv.data() + i * s * 3 * h;
    emulate_lt(lt_layout(g.scores), a, q, q + h, scores.data() + i * a * s * s);
    emulate_lt(lt_layout(g.context), a, p.data() + i * a * s * s, q + 2 * h, ctx.data() + i * s * h);
    emulate_lt(lt_layout(g.d_probs), a, dout.data() + i * s * h, q + 2 * h, dprobs.data() + i * a * s * s);
    double* dq = dqkv.data() + i * s * 3 * h;
    emulate_lt(lt_layout(g.d_value), a, p.data() + i * a * s * s, dout.data() + i * s * h, dq + 2 * h);
    emulate_lt(lt_layout(g.d_query), a, p.data() + i * a * s * s, q + h, dq);  // p stands in for dS
    emulate_lt(lt_layout(g.d_key), a, p.data() + i * a * s * s, q, dq + h);
  }
  auto Q = [&](I i, I t, I hd, I c, I part) { return qkv[static_cast<std::size_t>((i * s + t) * 3 * h + part * h + hd * d + c)]; };
  auto P = [&](I i, I hd, I r, I c) { return p[static_cast<std::size_t>(((i * a + hd) * s + r) * s + c)]; };
  auto dO = [&](I i, I t, I hd, I c) { return dout[static_cast<std::size_t>((i * s + t) * h + hd * d + c)]; };
  for (I i = 0; i < b; ++i) {
    for (I hd = 0; hd < a; ++hd) {
      for (I r = 0; r < s; ++r) {
        for (I c = 0; c < s; ++c) {
          double sc = 0, dp = 0;
          for (I e = 0; e < d; ++e) {
            sc += Q(i, r, hd, e, 0) * Q(i, c, hd, e, 1);
            dp += dO(i, r, hd, e) * Q(i, c, hd, e, 2);
          }
          const auto at = static_cast<std::size_t>(((i * a + hd) * s + r) * s + c);
          ASSERT_NEAR(scores[at], sc, 1e-12);
          ASSERT_NEAR(dprobs[at], dp, 1e-12);
        }
        for (I e = 0; e < d; ++e) {
          double o = 0, dv = 0, dq = 0, dk = 0;
          for (I c = 0; c < s; ++c) {
            o += P(i, hd, r, c) * Q(i, c, hd, e, 2);
            dv += P(i, hd, c, r) * dO(i, c, hd, e);
            dq += P(i, hd, r, c) * Q(i, c, hd, e, 1);
            dk += P(i, hd, c, r) * Q(i, c, hd, e, 0);
          }
          ASSERT_NEAR(ctx[static_cast<std::size_t>((i * s + r) * h + hd * d + e)], o, 1e-12);
          const auto tok = static_cast<std::size_t>((i * s + r) * 3 * h + hd * d + e);
          ASSERT_NEAR(dqkv[tok + static_cast<std::size_t>(2 * h)], dv, 1e-12);
          ASSERT_NEAR(dqkv[tok], dq, 1e-12);
          ASSERT_NEAR(dqkv[tok + static_cast<std::size_t>(h)], dk, 1e-12);
        }
      }
    }
  }
}

// Pointer offsets of h = 200 bf16 values (400 bytes) and head dim 40 (80 bytes) are only 16-byte
// aligned: the specs must say so, or cuBLASLt may pick a kernel that assumes 256.
TEST(CudaGemmLayout, AlignmentIsTheLargestPowerOfTwoDividingEveryOffset) {
  StepShape shape = small_step();
  shape.hidden = 200;
  shape.heads = 5;
  EXPECT_EQ(layer_gemm_specs(shape).scores.alignment, 16u);
  shape.hidden = 4096;
  shape.heads = 32;
  shape.seq_len = 2048;
  EXPECT_EQ(layer_gemm_specs(shape).qkv.alignment, 256u);
}

}  // namespace
}  // namespace capplan::calib::cuda
