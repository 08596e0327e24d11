// SPDX-License-Identifier: Apache-2.0
#include "lt_matmul.hpp"

#include <initializer_list>
#include <utility>

#include "kernels.hpp"

namespace capplan::calib::cuda {
namespace {

cudaDataType_t operand_type(sim::Precision p) {
  switch (p) {
    case sim::Precision::fp32:
    case sim::Precision::tf32: return CUDA_R_32F;
    case sim::Precision::fp16: return CUDA_R_16F;
    case sim::Precision::bf16: return CUDA_R_16BF;
    case sim::Precision::fp8: return CUDA_R_8F_E4M3;
    case sim::Precision::fp4: break;  // never measured: CudaBackend::supports is false
  }
  return CUDA_R_32F;
}
cudaDataType_t result_type(sim::Precision p) { return p == sim::Precision::fp8 ? CUDA_R_16BF : operand_type(p); }
cublasComputeType_t compute_type(sim::Precision p) {
  return p == sim::Precision::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

std::string describe(const MatmulSpec& s) {
  return std::string(sim::to_string(s.dtype)) + " m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
         " k=" + std::to_string(s.k) + " batch=" + std::to_string(s.batch) + (s.trans_a ? " A^T" : "") +
         (s.trans_b ? " B^T" : "") + (s.dtype == sim::Precision::fp8 && s.fast_accum ? " fast-accum" : "");
}

}  // namespace

std::string cublas_status_text(cublasStatus_t s) {
  return std::string(cublasLtGetStatusName(s)) + " (" + cublasLtGetStatusString(s) + ")";
}

std::size_t operand_bytes(sim::Precision p) {
  switch (p) {
    case sim::Precision::fp32:
    case sim::Precision::tf32: return 4;
    case sim::Precision::fp16:
    case sim::Precision::bf16: return 2;
    case sim::Precision::fp8: return 1;
    case sim::Precision::fp4: break;  // never measured: CudaBackend::supports is false
  }
  return 4;
}
std::size_t result_bytes(sim::Precision p) { return p == sim::Precision::fp8 ? 2 : operand_bytes(p); }
int operand_kernel_dtype(sim::Precision p) {
  switch (p) {
    case sim::Precision::fp32:
    case sim::Precision::tf32: return capplan_f32;
    case sim::Precision::fp16: return capplan_f16;
    case sim::Precision::bf16: return capplan_bf16;
    case sim::Precision::fp8: return capplan_f8e4m3;
    case sim::Precision::fp4: break;  // never measured: CudaBackend::supports is false
  }
  return capplan_f32;
}
int result_kernel_dtype(sim::Precision p) {
  return p == sim::Precision::fp8 ? capplan_bf16 : operand_kernel_dtype(p);
}

LtMatmul::LtMatmul(LtMatmul&& o) noexcept { *this = std::move(o); }
LtMatmul& LtMatmul::operator=(LtMatmul&& o) noexcept {
  if (this != &o) {
    release();
    handle_ = std::exchange(o.handle_, nullptr);
    spec_ = o.spec_;
    op_ = std::exchange(o.op_, nullptr);
    la_ = std::exchange(o.la_, nullptr);
    lb_ = std::exchange(o.lb_, nullptr);
    lc_ = std::exchange(o.lc_, nullptr);
    ld_ = std::exchange(o.ld_, nullptr);
    algo_ = o.algo_;
    workspace_bytes_ = o.workspace_bytes_;
    workspace_needed_ = o.workspace_needed_;
  }
  return *this;
}
LtMatmul::~LtMatmul() { release(); }

void LtMatmul::release() {
  if (ld_ != nullptr) (void)cublasLtMatrixLayoutDestroy(ld_);
  if (lc_ != nullptr) (void)cublasLtMatrixLayoutDestroy(lc_);
  if (lb_ != nullptr) (void)cublasLtMatrixLayoutDestroy(lb_);
  if (la_ != nullptr) (void)cublasLtMatrixLayoutDestroy(la_);
  if (op_ != nullptr) (void)cublasLtMatmulDescDestroy(op_);
  op_ = nullptr;
  la_ = lb_ = lc_ = ld_ = nullptr;
}

std::expected<LtMatmul, Diagnostics> LtMatmul::create(cublasLtHandle_t handle, const MatmulSpec& spec,
                                                      std::size_t workspace_bytes) {
  const std::string where = "cuda/gemm " + describe(spec);
  if (spec.m <= 0 || spec.n <= 0 || spec.k <= 0 || spec.batch <= 0) return fail(where, "sizes must be > 0");
  if (spec.dtype == sim::Precision::fp8 && (spec.trans_a || !spec.trans_b)) {
    return fail(where, "fp8 needs the TN layout (trans_a = false, trans_b = true)");
  }
  LtMatmul mm;
  mm.handle_ = handle;
  mm.spec_ = spec;
  mm.workspace_bytes_ = workspace_bytes;
  auto ok = [&](cublasStatus_t s, const char* call) -> std::expected<void, Diagnostics> {
    if (s == CUBLAS_STATUS_SUCCESS) return {};
    return fail(where, std::string(call) + " failed: " + cublas_status_text(s));
  };
  if (auto r = ok(cublasLtMatmulDescCreate(&mm.op_, compute_type(spec.dtype), CUDA_R_32F), "cublasLtMatmulDescCreate");
      !r) {
    return std::unexpected(r.error());
  }
  const cublasOperation_t lt_trans_a = spec.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;  // Lt A = our B (lt_layout)
  const cublasOperation_t lt_trans_b = spec.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;  // Lt B = our A
  if (auto r = ok(cublasLtMatmulDescSetAttribute(mm.op_, CUBLASLT_MATMUL_DESC_TRANSA, &lt_trans_a, sizeof(lt_trans_a)),
                  "set TRANSA");
      !r) {
    return std::unexpected(r.error());
  }
  if (auto r = ok(cublasLtMatmulDescSetAttribute(mm.op_, CUBLASLT_MATMUL_DESC_TRANSB, &lt_trans_b, sizeof(lt_trans_b)),
                  "set TRANSB");
      !r) {
    return std::unexpected(r.error());
  }
  if (spec.dtype == sim::Precision::fp8) {
    // Set either way, so the mode measured does not rest on cuBLASLt's default (MatmulSpec::fast_accum).
    const std::int8_t fast = spec.fast_accum ? 1 : 0;
    if (auto r = ok(cublasLtMatmulDescSetAttribute(mm.op_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof(fast)),
                    "set FAST_ACCUM");
        !r) {
      return std::unexpected(r.error());
    }
  }
  const LtLayout layout = lt_layout(spec);
  struct View {
    cublasLtMatrixLayout_t* layout;
    cudaDataType_t type;
    const LtOperand& op;
  };
  const View views[] = {
      {&mm.la_, operand_type(spec.dtype), layout.a},
      {&mm.lb_, operand_type(spec.dtype), layout.b},
      {&mm.lc_, result_type(spec.dtype), layout.c},
      {&mm.ld_, result_type(spec.dtype), layout.c},
  };
  for (const auto& v : views) {
    if (static_cast<std::uint64_t>(v.op.ld) < v.op.rows) return fail(where, "a row stride is shorter than its row");
    if (auto r = ok(cublasLtMatrixLayoutCreate(v.layout, v.type, v.op.rows, v.op.cols, v.op.ld),
                    "cublasLtMatrixLayoutCreate");
        !r) {
      return std::unexpected(r.error());
    }
    if (spec.batch > 1) {
      const auto count = static_cast<std::int32_t>(spec.batch);
      if (auto r = ok(cublasLtMatrixLayoutSetAttribute(*v.layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                                       sizeof(count)),
                      "set BATCH_COUNT");
          !r) {
        return std::unexpected(r.error());
      }
      const std::int64_t stride = v.op.batch_stride;
      if (auto r = ok(cublasLtMatrixLayoutSetAttribute(*v.layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                       &stride, sizeof(stride)),
                      "set STRIDED_BATCH_OFFSET");
          !r) {
        return std::unexpected(r.error());
      }
    }
  }
  cublasLtMatmulPreference_t pref = nullptr;
  if (auto r = ok(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate"); !r) {
    return std::unexpected(r.error());
  }
  const auto ws = static_cast<std::uint64_t>(workspace_bytes);
  cublasStatus_t st =
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  // The heuristic assumes 256-byte aligned pointers unless told otherwise; attention offsets may be less.
  const std::uint32_t align = spec.alignment;
  for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasLtMatmulPreferenceSetAttribute(pref, attr, &align, sizeof(align));
  }
  cublasLtMatmulHeuristicResult_t best{};
  int returned = 0;
  if (st == CUBLAS_STATUS_SUCCESS) {
    st = cublasLtMatmulAlgoGetHeuristic(handle, mm.op_, mm.la_, mm.lb_, mm.lc_, mm.ld_, pref, 1, &best, &returned);
  }
  (void)cublasLtMatmulPreferenceDestroy(pref);
  if (auto r = ok(st, "cublasLtMatmulAlgoGetHeuristic"); !r) return std::unexpected(r.error());
  if (returned == 0) return fail(where, "cuBLASLt's heuristic found no algorithm for this shape on this GPU");
  mm.algo_ = best.algo;
  mm.workspace_needed_ = best.workspaceSize;
  return mm;
}

std::expected<void, Diagnostics> LtMatmul::run(const void* a, const void* b, void* c, void* workspace,
                                               cudaStream_t stream) const {
  const float alpha = 1.0f, beta = 0.0f;
  const cublasStatus_t s = cublasLtMatmul(handle_, op_, &alpha, b, la_, a, lb_, &beta, c, lc_, c, ld_, &algo_, workspace,
                                          workspace_bytes_, stream);
  if (s == CUBLAS_STATUS_SUCCESS) return {};
  return fail("cuda/gemm " + describe(spec_), "cublasLtMatmul failed: " + cublas_status_text(s));
}

}  // namespace capplan::calib::cuda
