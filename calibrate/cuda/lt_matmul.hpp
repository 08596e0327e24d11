// SPDX-License-Identifier: Apache-2.0
#pragma once
// One cuBLASLt matrix product in row-major terms, its algorithm chosen once by cuBLASLt's
// heuristic for the given workspace (the way cuBLAS itself picks one), then run many times.
// Contract: C[m x n] = op(A) op(B), `batch` times with the given element strides; A is stored
// m x k (k x m when trans_a), B is k x n (n x k when trans_b), C is m x n, all row-major and
// dense. Operands in `dtype`, fp32 accumulate; fp8 (e4m3) operands give a bf16 C and need
// trans_a = false, trans_b = true (cuBLASLt's "TN" layout). tf32 = fp32 data, TF32 tensor cores.
// A row stride (ld_*) larger than the row lets attention read Q, K, V per head straight out of the
// token-major QKV buffer (head i at column offset i*d, batch stride d), with no copies.
#include <cublasLt.h>

#include <cstddef>
#include <cstdint>
#include <expected>
#include <string>

#include "capplan/sim/hardware.hpp"
#include "capplan/sim/result.hpp"

namespace capplan::calib::cuda {

struct MatmulSpec {
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  bool trans_a = false, trans_b = false;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // elements between batch entries
  std::int64_t ld_a = 0, ld_b = 0, ld_c = 0;              // row strides in elements; 0 = dense
  sim::Precision dtype = sim::Precision::bf16;
};

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
