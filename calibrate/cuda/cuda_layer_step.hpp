// SPDX-License-Identifier: Apache-2.0
#pragma once
// The CUDA training step: `layers` transformer layers forward then backward, the kernels that
// sim/include/capplan/sim/layer_step.hpp lists (pre-norm LayerNorm, bias-free dense GEMMs through
// cuBLASLt, causal attention with explicit scores as per-head batched GEMMs reading Q/K/V in place,
// softmax, GELU MLP, residual adds), one kernel per entry of sim::layer_step_ops, in its order and
// with its names. Every op is bracketed by cudaEvents, so the step time splits into the layer_step
// components gemm / attention (scores, softmax, context and their gradients) / memory.
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstddef>

#include "capplan/calibrate/backend.hpp"

namespace capplan::calib::cuda {

struct LtResources {
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  cudaStream_t stream = nullptr;
};

// Contract: shape.dtype is bf16 or fp16; hidden, heads, ffn_hidden, seq_len, micro_batch, layers > 0,
// heads divides hidden and hidden/heads, ffn_hidden and seq_len are multiples of 8. Allocates
// everything it needs and frees it before returning.
Result<StepRecord> measure_layer_step(const LtResources& lt, const StepShape& shape, const RunOptions& options);

}  // namespace capplan::calib::cuda
