// SPDX-License-Identifier: Apache-2.0
#include "gemm_layout.hpp"

#include <algorithm>
#include <cmath>
#include <variant>

#include "capplan/calibrate/calibration_run.hpp"


namespace capplan::calib::cuda {

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

MatmulSpec tn_spec(const GemmShape& shape) {
  MatmulSpec spec;
  spec.m = shape.m;
  spec.n = shape.n;
  spec.k = shape.k;
  spec.batch = shape.batch;
  spec.trans_b = true;  // B stored n x k: the "TN" layout every dtype (fp8 included) supports
  spec.stride_a = shape.m * shape.k;
  spec.stride_b = shape.n * shape.k;
  spec.stride_c = shape.m * shape.n;
  spec.dtype = shape.dtype;
  return spec;
}

const char* to_string(StepKernel k) {
  switch (k) {
    case StepKernel::gemm: return "gemm";
    case StepKernel::layernorm_fwd: return "layernorm_fwd";
    case StepKernel::layernorm_bwd: return "layernorm_bwd";
    case StepKernel::rms_norm: return "rms_norm";
    case StepKernel::softmax_fwd: return "softmax_fwd";
    case StepKernel::softmax_bwd: return "softmax_bwd";
    case StepKernel::gelu_fwd: return "gelu_fwd";
    case StepKernel::gelu_bwd: return "gelu_bwd";
    case StepKernel::gated_gelu: return "gated_gelu";
    case StepKernel::add: return "add";
    case StepKernel::copy: return "copy";
  }
  return "?";
}

Result<std::vector<PlannedKernel>> layer_step_plan(const StepShape& shape) {
  const std::string where = "cuda/training_step";
  if (shape.dtype != sim::Precision::bf16 && shape.dtype != sim::Precision::fp16 &&
      shape.dtype != sim::Precision::fp8) {
    return fail(where + "/dtype", std::string("the CUDA training step runs bf16, fp16 or fp8 GEMMs; got ") +
                                      sim::to_string(shape.dtype));
  }
  const sim::LayerStepShape ls = layer_step_shape(shape);
  if (auto d = sim::check(ls); has_errors(d)) return std::unexpected(d);
  const double e = 2.0;  // activation element size (bf16 or fp16)
  const std::int64_t h = shape.hidden, s = shape.seq_len;
  // Rows of `cols` elements so that a kernel moving `tensors` x the elements moves `bytes`.
  auto rows = [&](double bytes, double tensors, std::int64_t cols) {
    return std::max<std::int64_t>(1, std::llround(bytes / (tensors * e * static_cast<double>(cols))));
  };
  std::vector<PlannedKernel> plan;
  for (const sim::LayerStepOp& entry : sim::layer_step_ops(ls)) {
    const sim::StepOp& op = entry.op;
    PlannedKernel k;
    k.phase = op.phase;
    k.component = entry.component;
    k.count = op.count;
    const bool fwd = op.phase == sim::Phase::forward;
    if (const auto* g = std::get_if<sim::GemmOp>(&op.op)) {
      k.op = g->name;
      k.gemm = tn_spec({g->m, g->n, g->k, g->batch, g->dtype});
      k.gemm.fast_accum = g->dtype == sim::Precision::fp8 && fwd;
      k.fused_attention = g->fused_attention;
      plan.push_back(std::move(k));
      continue;
    }
    const auto* m = std::get_if<sim::MemoryOp>(&op.op);
    if (m == nullptr) return fail(where, "the layer slice has a collective; the step runs one GPU's layer");
    k.op = m->name;
    const double bytes = m->bytes.base();
    auto set = [&](StepKernel kernel, double tensors, std::int64_t cols) {
      k.kernel = kernel;
      k.cols = cols;
      k.rows = rows(bytes, tensors, cols);
    };
    switch (op.role) {
      case sim::OpRole::norm:
        if (fwd) set(shape.rmsnorm ? StepKernel::rms_norm : StepKernel::layernorm_fwd, 2, h);
        else set(StepKernel::layernorm_bwd, 3, h);
        break;
      case sim::OpRole::softmax:
        set(fwd ? StepKernel::softmax_fwd : StepKernel::softmax_bwd, fwd ? 2 : 3, s);
        break;
      case sim::OpRole::activation:
        if (shape.gated_ffn) {
          if (fwd) set(StepKernel::gated_gelu, 3, 1);
          else set(StepKernel::copy, 2, 1);
        } else {
          set(fwd ? StepKernel::gelu_fwd : StepKernel::gelu_bwd, fwd ? 2 : 3, 1);
        }
        break;
      case sim::OpRole::residual:
        set(StepKernel::add, 3, 1);
        break;
      default:
        set(StepKernel::copy, 2, 1);
        break;
    }
    plan.push_back(std::move(k));
  }
  return plan;
}

}  // namespace capplan::calib::cuda
