// SPDX-License-Identifier: Apache-2.0
#include "gemm_layout.hpp"

#include <algorithm>
#include <initializer_list>

namespace capplan::calib::cuda {
namespace {

std::int64_t element_size(sim::Precision p) {
  switch (p) {
    case sim::Precision::fp32:
    case sim::Precision::tf32: return 4;
    case sim::Precision::fp16:
    case sim::Precision::bf16: return 2;
    case sim::Precision::fp8: return 1;
  }
  return 4;
}

// Largest power of two <= 256 dividing every offset (in bytes).
std::uint32_t common_alignment(std::initializer_list<std::int64_t> offsets_bytes) {
  std::uint32_t a = 256;
  for (std::int64_t o : offsets_bytes) {
    while (a > 1 && o % a != 0) a /= 2;
  }
  return a;
}

}  // namespace

LtLayout lt_layout(const MatmulSpec& s) {
  LtLayout l;
  // cuBLASLt A = our B: stored k x n row-major = n x k column-major (ld = row stride), used as is;
  // transposed, stored n x k = k x n column-major, applied transposed.
  l.a.rows = static_cast<std::uint64_t>(s.trans_b ? s.k : s.n);
  l.a.cols = static_cast<std::uint64_t>(s.trans_b ? s.n : s.k);
  l.a.ld = s.ld_b > 0 ? s.ld_b : static_cast<std::int64_t>(l.a.rows);
  l.a.batch_stride = s.stride_b;
  l.a.transpose = s.trans_b;
  l.b.rows = static_cast<std::uint64_t>(s.trans_a ? s.m : s.k);
  l.b.cols = static_cast<std::uint64_t>(s.trans_a ? s.k : s.m);
  l.b.ld = s.ld_a > 0 ? s.ld_a : static_cast<std::int64_t>(l.b.rows);
  l.b.batch_stride = s.stride_a;
  l.b.transpose = s.trans_a;
  l.c.rows = static_cast<std::uint64_t>(s.n);
  l.c.cols = static_cast<std::uint64_t>(s.m);
  l.c.ld = s.ld_c > 0 ? s.ld_c : s.n;
  l.c.batch_stride = s.stride_c;
  return l;
}

LayerGemmSpecs layer_gemm_specs(const StepShape& shape) {
  const std::int64_t b = shape.micro_batch, s = shape.seq_len, h = shape.hidden, a = shape.heads, d = h / a,
                     f = shape.ffn_hidden, T = b * s, h3 = 3 * h, ss = s * s;
  const std::int64_t e = element_size(shape.dtype);
  const std::uint32_t align = common_alignment({h * e, 2 * h * e, s * h3 * e, s * h * e, a * ss * e, d * e});
  auto dense = [&](std::int64_t m, std::int64_t n, std::int64_t k, bool ta, bool tb) {
    MatmulSpec sp;
    sp.m = m;
    sp.n = n;
    sp.k = k;
    sp.trans_a = ta;
    sp.trans_b = tb;
    sp.dtype = shape.dtype;
    sp.alignment = align;
    return sp;
  };
  // Batched over the heads of one sample: (row stride, batch stride) of A, B and C.
  auto heads = [&](MatmulSpec sp, std::int64_t lda, std::int64_t sta, std::int64_t ldb, std::int64_t stb,
                   std::int64_t ldc, std::int64_t stc) {
    sp.batch = a;
    sp.ld_a = lda;
    sp.stride_a = sta;
    sp.ld_b = ldb;
    sp.stride_b = stb;
    sp.ld_c = ldc;
    sp.stride_c = stc;
    return sp;
  };
  LayerGemmSpecs g;
  g.qkv = dense(T, h3, h, false, false);                                    // qkv = y1 Wqkv
  g.scores = heads(dense(s, s, d, false, true), h3, d, h3, d, s, ss);       // S = Q K^T
  g.context = heads(dense(s, d, s, false, false), s, ss, h3, d, h, d);      // O = P V
  g.proj = dense(T, h, h, false, false);                                    // c = O Wo
  g.fc1 = dense(T, f, h, false, false);                                     // u = y2 W1
  g.fc2 = dense(T, h, f, false, false);                                     // z = g W2
  g.fc2_dgrad = dense(T, f, h, false, true);                                // dg = dz W2^T
  g.fc2_wgrad = dense(f, h, T, true, false);                                // dW2 = g^T dz
  g.fc1_dgrad = dense(T, h, f, false, true);                                // dy2 = du W1^T
  g.fc1_wgrad = dense(h, f, T, true, false);                                // dW1 = y2^T du
  g.proj_dgrad = dense(T, h, h, false, true);                               // dO = dx2 Wo^T
  g.proj_wgrad = dense(h, h, T, true, false);                               // dWo = O^T dx2
  g.d_probs = heads(dense(s, s, d, false, true), h, d, h3, d, s, ss);       // dP = dO V^T
  g.d_value = heads(dense(s, d, s, true, false), s, ss, h, d, h3, d);       // dV = P^T dO
  g.d_query = heads(dense(s, d, s, false, false), s, ss, h3, d, h3, d);     // dQ = dS K
  g.d_key = heads(dense(s, d, s, true, false), s, ss, h3, d, h3, d);        // dK = dS^T Q
  g.qkv_dgrad = dense(T, h, h3, false, true);                               // dy1 = dqkv Wqkv^T
  g.qkv_wgrad = dense(h, h3, T, true, false);                               // dWqkv = y1^T dqkv
  return g;
}

}  // namespace capplan::calib::cuda
