// SPDX-License-Identifier: Apache-2.0
#pragma once
// The CUDA training step: `layers` transformer layers forward then backward, one kernel per entry
// of sim::layer_step_ops (the layer slice of the estimate's op list), in its order and with its
// names, as layer_step_plan (gemm_layout.hpp) assigns them: cuBLASLt for every GemmOp, the
// backend's own kernels for the roles they cover, a device-to-device copy moving the op's bytes
// for the rest. Every op is bracketed by cudaEvents; its time, times the op's count, goes to its
// component (sim::LayerComponent: gemm / attention / memory).
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

// Contract: as layer_step_plan accepts the shape (bf16, fp16 or fp8 GEMMs). Scratch buffers are
// shared by all ops (the largest operand of each kind), filled once with pseudo-random values:
// data do not flow from one op to the next. Allocates everything it needs and frees it before
// returning.
Result<StepRecord> measure_layer_step(const LtResources& lt, const StepShape& shape, const RunOptions& options);

}  // namespace capplan::calib::cuda
