// SPDX-License-Identifier: Apache-2.0
#pragma once
// The row-major GEMMs the CUDA backend runs, and how they map onto cuBLASLt's column-major
// operands. Pure C++ (no CUDA headers), so the mapping and the training step's GEMM list are
// unit-tested on machines without a GPU (tests/calibrate/cuda_layout_test.cpp emulates cuBLASLt).
#include <cstdint>

#include "capplan/calibrate/records.hpp"
#include "capplan/sim/hardware.hpp"

namespace capplan::calib::cuda {

// Contract: C[m x n] = op(A) op(B), `batch` times with the given element strides; A is stored
// m x k (k x m when trans_a), B is k x n (n x k when trans_b), C is m x n, all row-major.
// ld_* are row strides in elements (0 = dense); a row stride longer than the row lets attention
// read Q, K, V per head straight out of the token-major QKV buffer (head i at column offset i*d,
// batch stride d), with no copies. Operands in `dtype`, fp32 accumulate; fp8 (e4m3) operands give
// a bf16 C and need trans_a = false, trans_b = true (cuBLASLt's "TN" layout). tf32 = fp32 data,
// TF32 tensor cores. `alignment` is the byte alignment every pointer passed to run() keeps.
struct MatmulSpec {
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  bool trans_a = false, trans_b = false;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // elements between batch entries
  std::int64_t ld_a = 0, ld_b = 0, ld_c = 0;              // row strides in elements; 0 = dense
  sim::Precision dtype = sim::Precision::bf16;
  std::uint32_t alignment = 256;
};

// One cuBLASLt operand: the column-major view (rows, cols, leading dimension) of the stored
// matrix, its batch stride, and whether cuBLASLt applies it transposed.
struct LtOperand {
  std::uint64_t rows = 0, cols = 0;
  std::int64_t ld = 0, batch_stride = 0;
  bool transpose = false;
};
// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: cuBLASLt's "A" is our B and its
// "B" is our A; C (and D) is n x m column-major.
struct LtLayout {
  LtOperand a, b, c;
};
LtLayout lt_layout(const MatmulSpec& spec);

// The GEMMs of one layer of the measured training step (sim/layer_step.hpp), with the row strides
// of the per-head attention products. Pointer offsets the step applies (elements):
//   Q = qkv, K = qkv + h, V = qkv + 2h (row stride 3h); dQ, dK, dV likewise in dqkv;
//   per micro-batch sample i: qkv + i*s*3h, ctx/dctx + i*s*h, scores + i*heads*s*s.
struct LayerGemmSpecs {
  MatmulSpec qkv, scores, context, proj, fc1, fc2;
  MatmulSpec fc2_dgrad, fc2_wgrad, fc1_dgrad, fc1_wgrad, proj_dgrad, proj_wgrad;
  MatmulSpec d_probs, d_value, d_query, d_key, qkv_dgrad, qkv_wgrad;
};
// Contract: shape as measure_layer_step accepts it. `alignment` of every spec is the largest power
// of two (<= 256 bytes) dividing every pointer offset above.
LayerGemmSpecs layer_gemm_specs(const StepShape& shape);

}  // namespace capplan::calib::cuda
