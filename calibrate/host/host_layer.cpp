// SPDX-License-Identifier: Apache-2.0
#include "host_layer.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

#include "host_clock.hpp"
#include "host_kernels.hpp"

namespace capplan::calib::host {
namespace {

template <class S>
void fill(Mat<S>& m, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = S(d(rng));
}

template <class S>
std::shared_ptr<Mat<S>> random_mat(Eigen::Index rows, Eigen::Index cols, std::mt19937& rng) {
  auto m = std::make_shared<Mat<S>>(rows, cols);
  fill(*m, rng);
  return m;
}

// A batched GEMM C[m x n] = A[m x k] B[k x n] on scratch operands of scalar S.
template <class S>
std::function<void()> gemm_kernel(const sim::GemmOp& g, std::mt19937& rng) {
  struct Operands {
    std::vector<Mat<S>> a, b, c;
  };
  auto o = std::make_shared<Operands>();
  for (std::int64_t i = 0; i < g.batch; ++i) {
    o->a.emplace_back(g.m, g.k);
    o->b.emplace_back(g.k, g.n);
    o->c.emplace_back(g.m, g.n);
    fill(o->a.back(), rng);
    fill(o->b.back(), rng);
  }
  return [o] {
    for (std::size_t i = 0; i < o->a.size(); ++i) o->c[i].noalias() = o->a[i] * o->b[i];
  };
}

// Rows of `cols` fp32 elements such that a kernel moving `bytes_per_element` per element moves
// about `bytes` (at least one row).
Eigen::Index rows_for(double bytes, double bytes_per_element, Eigen::Index cols) {
  return std::max<Eigen::Index>(1, static_cast<Eigen::Index>(std::llround(bytes / (bytes_per_element * cols))));
}

}  // namespace

Result<LayerStepRunner> LayerStepRunner::create(const sim::LayerStepShape& shape, std::uint32_t seed) {
  if (shape.flash_attention) {
    return fail("step/flash_attention",
                "the host backend has no fused (flash) attention kernel; measure the unfused layer on the host "
                "(explicit scores + softmax) or the fused one with the cuda backend");
  }
  LayerStepRunner runner;
  runner.layers_ = shape.layers;
  std::mt19937 rng(seed);
  const Eigen::Index h = shape.hidden, s = shape.seq_len, d = shape.hidden / shape.heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));

  for (const sim::LayerStepOp& entry : sim::layer_step_ops(shape)) {
    const sim::StepOp& op = entry.op;
    Kernel k;
    k.phase = op.phase;
    k.component = entry.component;
    const double whole = std::round(op.count);
    k.runs = whole >= 1 && std::abs(op.count - whole) < 1e-9 ? static_cast<int>(whole) : 1;
    k.scale = op.count / k.runs;
    const bool fwd = op.phase == sim::Phase::forward;

    if (const auto* g = std::get_if<sim::GemmOp>(&op.op)) {
      k.op = g->name;
      k.kernel = std::string("gemm ") + sim::to_string(g->dtype);
      switch (g->dtype) {
        case sim::Precision::fp32:
          k.run = gemm_kernel<float>(*g, rng);
          break;
        case sim::Precision::bf16:
          k.run = gemm_kernel<Eigen::bfloat16>(*g, rng);
          break;
        case sim::Precision::fp16:
          k.run = gemm_kernel<Eigen::half>(*g, rng);
          break;
        default:
          return fail("step/dtype", std::string("the host backend runs fp32, bf16 and fp16 GEMMs; the step's ") +
                                        g->name + " GEMM is " + sim::to_string(g->dtype) +
                                        ", which is not available on a CPU");
      }
      runner.kernels_.push_back(std::move(k));
      continue;
    }
    const auto* m = std::get_if<sim::MemoryOp>(&op.op);
    if (m == nullptr) return fail("step", "the layer slice has a collective; the host step runs one GPU's layer");
    k.op = m->name;
    const double bytes = m->bytes.base();
    switch (op.role) {
      case sim::OpRole::norm:
        if (fwd) {
          auto x = random_mat<float>(rows_for(bytes, 8, h), h, rng);  // read x, write y
          auto y = std::make_shared<Mat<float>>(x->rows(), h);
          auto gamma = std::make_shared<Vec<float>>(Vec<float>::Ones(h));
          auto beta = std::make_shared<Vec<float>>(Vec<float>::Zero(h));
          if (shape.rmsnorm) {
            k.kernel = "rmsnorm_forward";
            auto rstd = std::make_shared<Vec<float>>(x->rows());
            k.run = [=] { rmsnorm_forward(*x, *gamma, *y, *rstd); };
          } else {
            k.kernel = "layernorm_forward";
            auto mean = std::make_shared<Vec<float>>(x->rows()), rstd = std::make_shared<Vec<float>>(x->rows());
            k.run = [=] { layernorm_forward(*x, *gamma, *beta, *y, *mean, *rstd); };
          }
        } else {
          auto dy = random_mat<float>(rows_for(bytes, 12, h), h, rng);  // read dy and x, write dx
          auto x = random_mat<float>(dy->rows(), h, rng);
          auto dx = std::make_shared<Mat<float>>(dy->rows(), h);
          auto gamma = std::make_shared<Vec<float>>(Vec<float>::Ones(h));
          auto dgamma = std::make_shared<Vec<float>>(Vec<float>::Zero(h));
          auto dbeta = std::make_shared<Vec<float>>(Vec<float>::Zero(h));
          auto mean = std::make_shared<Vec<float>>(Vec<float>::Zero(dy->rows()));
          auto rstd = std::make_shared<Vec<float>>(Vec<float>::Ones(dy->rows()));
          if (shape.rmsnorm) {
            k.kernel = "rmsnorm_backward";
            k.run = [=] { rmsnorm_backward(*dy, *x, *rstd, *gamma, *dx, *dgamma); };
          } else {
            k.kernel = "layernorm_backward";
            k.run = [=] { layernorm_backward(*dy, *x, *mean, *rstd, *gamma, *dx, *dgamma, *dbeta); };
          }
        }
        break;
      case sim::OpRole::softmax:
        if (fwd) {  // in place on whole rows of s scores: read S, write P
          k.kernel = "softmax_forward";
          auto p = random_mat<float>(rows_for(bytes, 8, s), s, rng);
          k.run = [=] { softmax_forward(*p, s, scale); };
        } else {  // read P and dP, write dS
          k.kernel = "softmax_backward";
          auto p = random_mat<float>(rows_for(bytes, 12, s), s, rng);
          auto dp = random_mat<float>(p->rows(), s, rng);
          auto ds = std::make_shared<Mat<float>>(p->rows(), s);
          k.run = [=] { softmax_backward(*p, *dp, *ds, s, scale); };
        }
        break;
      case sim::OpRole::activation:
        if (shape.gated_ffn) {
          if (fwd) {  // read gate and up, write out
            k.kernel = "swiglu_forward";
            auto gate = random_mat<float>(1, rows_for(bytes, 12, 1), rng);
            auto up = random_mat<float>(1, gate->cols(), rng);
            auto out = std::make_shared<Mat<float>>(1, gate->cols());
            k.run = [=] { swiglu_forward(*gate, *up, *out); };
          } else {  // read dout, gate, up; write dgate, dup
            k.kernel = "swiglu_backward";
            auto dout = random_mat<float>(1, rows_for(bytes, 20, 1), rng);
            auto gate = random_mat<float>(1, dout->cols(), rng), up = random_mat<float>(1, dout->cols(), rng);
            auto dgate = std::make_shared<Mat<float>>(1, dout->cols()), dup = std::make_shared<Mat<float>>(1, dout->cols());
            k.run = [=] { swiglu_backward(*dout, *gate, *up, *dgate, *dup); };
          }
        } else if (fwd) {  // read u, write g
          k.kernel = "gelu_forward";
          auto u = random_mat<float>(1, rows_for(bytes, 8, 1), rng);
          auto g = std::make_shared<Mat<float>>(1, u->cols());
          k.run = [=] { gelu_forward(*u, *g); };
        } else {  // read dg and u, write du
          k.kernel = "gelu_backward";
          auto dg = random_mat<float>(1, rows_for(bytes, 12, 1), rng);
          auto u = random_mat<float>(1, dg->cols(), rng);
          auto du = std::make_shared<Mat<float>>(1, dg->cols());
          k.run = [=] { gelu_backward(*dg, *u, *du); };
        }
        break;
      case sim::OpRole::residual: {  // read two, write one
        k.kernel = "residual_add";
        auto a = random_mat<float>(1, rows_for(bytes, 12, 1), rng), b = random_mat<float>(1, a->cols(), rng);
        auto c = std::make_shared<Mat<float>>(1, a->cols());
        k.run = [=] { residual_add(*a, *b, *c); };
        break;
      }
      case sim::OpRole::rope: {  // in place on rows of one head: read and write
        k.kernel = fwd ? "rope_forward" : "rope_backward";
        const Eigen::Index dh = std::max<Eigen::Index>(2, d - d % 2);
        auto x = random_mat<float>(rows_for(bytes, 8, dh), dh, rng);
        auto cs = std::make_shared<Mat<float>>(s, dh / 2), sn = std::make_shared<Mat<float>>(s, dh / 2);
        for (Eigen::Index pos = 0; pos < s; ++pos) {
          for (Eigen::Index j = 0; j < dh / 2; ++j) {
            const double theta = pos * std::pow(10000.0, -2.0 * j / static_cast<double>(dh));
            (*cs)(pos, j) = static_cast<float>(std::cos(theta));
            (*sn)(pos, j) = static_cast<float>(std::sin(theta));
          }
        }
        const float sign = fwd ? 1.0f : -1.0f;
        k.run = [=] { rope_apply(*x, *cs, *sn, s, sign); };
        break;
      }
      default: {  // no host kernel for this role: a streaming copy moving the op's bytes
        k.kernel = "copy";
        auto x = random_mat<float>(1, rows_for(bytes, 8, 1), rng);
        auto y = std::make_shared<Mat<float>>(1, x->cols());
        k.run = [=] { std::copy(x->data(), x->data() + x->size(), y->data()); };
        break;
      }
    }
    runner.kernels_.push_back(std::move(k));
  }
  return runner;
}

void LayerStepRunner::step(ComponentTimes* times) {
  double* field[3] = {nullptr, nullptr, nullptr};
  if (times != nullptr) field[0] = &times->gemm, field[1] = &times->attention, field[2] = &times->memory;
  for (const sim::Phase phase : {sim::Phase::forward, sim::Phase::backward}) {
    for (int l = 0; l < layers_; ++l) {
      for (Kernel& k : kernels_) {
        if (k.phase != phase) continue;
        const double t0 = times != nullptr ? thread_cpu_seconds() : 0.0;
        for (int r = 0; r < k.runs; ++r) k.run();
        if (times != nullptr) *field[static_cast<int>(k.component)] += (thread_cpu_seconds() - t0) * k.scale;
      }
    }
  }
}

}  // namespace capplan::calib::host
