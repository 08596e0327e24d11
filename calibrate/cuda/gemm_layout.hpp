// SPDX-License-Identifier: Apache-2.0
#pragma once
// The row-major GEMMs the CUDA backend runs, and how they map onto cuBLASLt's column-major
// operands. Pure C++ (no CUDA headers), so the mapping and the training step's GEMMs are
// unit-tested on machines without a GPU (tests/calibrate/cuda_layout_test.cpp emulates cuBLASLt).
#include <cstdint>
#include <string>
#include <vector>

#include "capplan/calibrate/records.hpp"
#include "capplan/sim/workload/hardware.hpp"
#include "capplan/sim/cost/layer_step.hpp"
#include "capplan/sim/workload/result.hpp"

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
  // fp8 only: cuBLASLt's fast accumulation (CUBLASLT_MATMUL_DESC_FAST_ACCUM), which keeps partial
  // sums in the tensor cores' reduced-precision accumulator instead of promoting them to fp32 every
  // few k-steps. Transformer Engine runs forward (fprop) fp8 GEMMs with it and dgrad/wgrad without
  // (its recipes' use_split_accumulator: False for fprop, True for dgrad and wgrad; cublaslt_gemm.cu
  // sets FAST_ACCUM = !use_split_accumulator). Off by default: the GEMM sweep measures the stricter
  // mode; layer_step_plan sets it on the forward fp8 GEMMs of a step. Ignored for other dtypes.
  bool fast_accum = false;
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

// The dense, strided-batched "TN" product the GEMM sweep (CudaBackend::gemm) and the training
// step (cuda_layer_step.cpp, one per GemmOp of sim::layer_step_ops) both run: C = A B^T with A
// stored m x k, B stored n x k, C m x n, batch entries back to back; 256-byte aligned pointers.
// So every GEMM of the measured step is a shape the sweep measures the same way.
MatmulSpec tn_spec(const GemmShape& shape);

// The CUDA training step as a plan, one kernel per entry of sim::layer_step_ops (pure C++, so it
// is tested without a GPU; cuda_layer_step.cpp runs it). Per role:
//   GemmOp (linear, attention_core) -> tn_spec of its (m, n, k, batch, dtype) through cuBLASLt;
//     fused (flash) attention GEMMs too: the backend has no flash kernel, so their batched GEMMs
//     stand in for it, timed and scaled by the op's count (the work share of the score square).
//   norm -> LayerNorm forward / backward kernels (RMSNorm forward: its own kernel; RMSNorm
//     backward: the LayerNorm backward kernel, same reads and writes);
//   softmax -> causal softmax forward / backward; activation -> GELU forward / backward, SwiGLU
//     forward: the gated-GELU kernel (reads two, writes one, as SwiGLU does);
//   residual -> element-wise add; everything else (SwiGLU backward, RoPE, FP8 casts, ...) -> a
//     device-to-device copy moving the op's bytes.
// fp8 linear GEMMs run as Transformer Engine runs them: forward with fast accumulation, backward
// without (MatmulSpec::fast_accum). `fused_attention` marks the batched GEMMs standing in for a
// fused (flash) attention kernel: the step reports their time also as the component
// "attention_batched_gemm" (records.hpp, StepRecord).
// Memory kernels run in the activation dtype (bf16; fp16 for fp16 steps) on `rows` x `cols`
// elements chosen so that the kernel moves the op's bytes (rows of hidden or seq_len where the
// kernel reduces over rows, else cols = 1).
enum class StepKernel {
  gemm, layernorm_fwd, layernorm_bwd, rms_norm, softmax_fwd, softmax_bwd, gelu_fwd, gelu_bwd, gated_gelu, add, copy
};
const char* to_string(StepKernel k);

struct PlannedKernel {
  std::string op;  // the op list entry's name
  StepKernel kernel = StepKernel::gemm;
  sim::Phase phase = sim::Phase::forward;
  sim::LayerComponent component = sim::LayerComponent::gemm;
  double count = 1.0;  // its time is multiplied by this (repetitions per layer)
  MatmulSpec gemm;     // kernel == gemm
  bool fused_attention = false;     // kernel == gemm: part of a fused attention op (GemmOp::fused_attention)
  std::int64_t rows = 0, cols = 0;  // memory kernels: rows x cols elements of the activation dtype
};

// Contract: shape.dtype is bf16, fp16 or fp8 and the shape passes sim::check(); fails otherwise,
// naming the field.
Result<std::vector<PlannedKernel>> layer_step_plan(const StepShape& shape);

}  // namespace capplan::calib::cuda
