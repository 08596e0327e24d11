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
  int l2_bytes = 0;  // the device's L2 (cudaDevAttrL2CacheSize): weight copies span twice it
};

// Contract: as layer_step_plan accepts the shape (bf16, fp16 or fp8 GEMMs). Activation scratch
// buffers and the GEMMs' A and C are shared by all ops (the largest of each kind); every GEMM has
// its own B (its weight, or the keys and values it reads), in copies spanning twice the L2 that the
// layers and iterations rotate through, so weights stream from HBM as in a real model. All are
// filled once with pseudo-random values: data do not flow from one op to the next. The timed
// iterations run behind a spin kernel (timing_plan.hpp). Components: "gemm", "attention",
// "memory" (they add up to the step) and, when the layer has fused attention,
// "attention_batched_gemm": the part of "attention" that its stand-in batched GEMMs took
// (records.hpp, StepRecord). Allocates everything it needs and frees it before returning.
Result<StepRecord> measure_layer_step(const LtResources& lt, const StepShape& shape, const RunOptions& options);

}  // namespace capplan::calib::cuda
