// SPDX-License-Identifier: Apache-2.0
#pragma once
// One cuBLASLt matrix product (gemm_layout.hpp's MatmulSpec), its algorithm chosen once by
// cuBLASLt's heuristic for the given workspace and pointer alignment (the way cuBLAS itself picks
// one), then run many times.
#include <cublasLt.h>

#include <cstddef>
#include <cstdint>
#include <expected>
#include <string>

#include "capplan/sim/workload/hardware.hpp"
#include "capplan/sim/workload/result.hpp"
#include "gemm_layout.hpp"

namespace capplan::calib::cuda {


// Element sizes as stored: A/B operands, and C (bf16 for fp8 operands).
std::size_t operand_bytes(sim::Precision p);
std::size_t result_bytes(sim::Precision p);
int operand_kernel_dtype(sim::Precision p);  // CapplanDtype of A and B
int result_kernel_dtype(sim::Precision p);   // CapplanDtype of C

class LtMatmul {
 public:
  LtMatmul() = default;
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;
  LtMatmul(LtMatmul&& o) noexcept;
  LtMatmul& operator=(LtMatmul&& o) noexcept;
  ~LtMatmul();

  static std::expected<LtMatmul, Diagnostics> create(cublasLtHandle_t handle, const MatmulSpec& spec,
                                                     std::size_t workspace_bytes);
  std::expected<void, Diagnostics> run(const void* a, const void* b, void* c, void* workspace, cudaStream_t stream) const;
  const MatmulSpec& spec() const { return spec_; }
  std::size_t workspace_needed() const { return workspace_needed_; }

 private:
  void release();
  cublasLtHandle_t handle_ = nullptr;
  MatmulSpec spec_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, lc_ = nullptr, ld_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  std::size_t workspace_bytes_ = 0;
  std::size_t workspace_needed_ = 0;
};

std::string cublas_status_text(cublasStatus_t s);

}  // namespace capplan::calib::cuda
