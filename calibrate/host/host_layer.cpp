// SPDX-License-Identifier: Apache-2.0
#include "host_layer.hpp"

#include "host_clock.hpp"
#include "host_kernels.hpp"

#include <cmath>
#include <random>

namespace capplan::calib::host {
namespace {

// Adds the thread CPU time since the previous lap to one component.
class Laps {
 public:
  explicit Laps(ComponentTimes* t) : t_(t), start_(t != nullptr ? thread_cpu_seconds() : 0.0) {}
  void lap(double ComponentTimes::*field) {
    if (t_ == nullptr) return;
    const double now = thread_cpu_seconds();
    t_->*field += now - start_;
    start_ = now;
  }

 private:
  ComponentTimes* t_;
  double start_;
};

template <class S>
void init_uniform(Mat<S>& w, Eigen::Index rows, Eigen::Index cols, std::mt19937& rng) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(rows));
  std::uniform_real_distribution<double> dist(-bound, bound);
  w.resize(rows, cols);
  for (Eigen::Index i = 0; i < w.size(); ++i) w.data()[i] = static_cast<S>(dist(rng));
}

}  // namespace

template <class S>
TransformerLayer<S>::TransformerLayer(const sim::LayerStepShape& shape, std::uint32_t seed) : shape_(shape) {
  const Eigen::Index h = shape.hidden, f = shape.ffn_hidden;
  std::mt19937 rng(seed);
  init_uniform(params_.wqkv, h, 3 * h, rng);
  init_uniform(params_.wo, h, h, rng);
  init_uniform(params_.w1, h, f, rng);
  init_uniform(params_.w2, f, h, rng);
  params_.ln1_gamma = Vec<S>::Ones(h);
  params_.ln2_gamma = Vec<S>::Ones(h);
  params_.ln1_beta = Vec<S>::Zero(h);
  params_.ln2_beta = Vec<S>::Zero(h);
  grads_ = params_;

  const Eigen::Index T = Eigen::Index{shape.micro_batch} * shape.seq_len, s = shape.seq_len;
  const Eigen::Index heads = Eigen::Index{shape.micro_batch} * shape.heads;
  y1_.resize(T, h);
  qkv_.resize(T, 3 * h);
  probs_.resize(heads * s, s);
  ctx_.resize(T, h);
  x2_.resize(T, h);
  y2_.resize(T, h);
  u_.resize(T, f);
  g_.resize(T, f);
  mean1_.resize(T);
  rstd1_.resize(T);
  mean2_.resize(T);
  rstd2_.resize(T);
  dg_.resize(T, f);
  du_.resize(T, f);
  dy_.resize(T, h);
  dln_.resize(T, h);
  dx2_.resize(T, h);
  dctx_.resize(T, h);
  dprobs_.resize(heads * s, s);
  dqkv_.resize(T, 3 * h);
}

template <class S>
void TransformerLayer<S>::forward(const Mat<S>& x, Mat<S>& out, ComponentTimes* times) {
  const Eigen::Index h = shape_.hidden, s = shape_.seq_len, a = shape_.heads, d = h / a;
  const S scale = S(1) / std::sqrt(static_cast<S>(d));
  out.resize(x.rows(), h);
  x_ = &x;  // LayerNorm backward reads the input again (the caller keeps it, as a framework does)
  Laps laps(times);
  auto& p = params_;

  layernorm_forward(x, p.ln1_gamma, p.ln1_beta, y1_, mean1_, rstd1_);
  laps.lap(&ComponentTimes::memory);
  qkv_.noalias() = y1_ * p.wqkv;
  laps.lap(&ComponentTimes::gemm);
  for (int b = 0; b < shape_.micro_batch; ++b) {  // S = Q K^T per (batch, head)
    for (Eigen::Index j = 0; j < a; ++j) {
      probs_.block((b * a + j) * s, 0, s, s).noalias() =
          qkv_.block(b * s, j * d, s, d) * qkv_.block(b * s, h + j * d, s, d).transpose();
    }
  }
  softmax_forward(probs_, s, scale);
  for (int b = 0; b < shape_.micro_batch; ++b) {  // O = P V
    for (Eigen::Index j = 0; j < a; ++j) {
      ctx_.block(b * s, j * d, s, d).noalias() =
          probs_.block((b * a + j) * s, 0, s, s) * qkv_.block(b * s, 2 * h + j * d, s, d);
    }
  }
  laps.lap(&ComponentTimes::attention);
  out.noalias() = ctx_ * p.wo;  // `out` holds the projection until the residual add
  laps.lap(&ComponentTimes::gemm);
  residual_add(x, out, x2_);
  layernorm_forward(x2_, p.ln2_gamma, p.ln2_beta, y2_, mean2_, rstd2_);
  laps.lap(&ComponentTimes::memory);
  u_.noalias() = y2_ * p.w1;
  laps.lap(&ComponentTimes::gemm);
  gelu_forward(u_, g_);
  laps.lap(&ComponentTimes::memory);
  out.noalias() = g_ * p.w2;
  laps.lap(&ComponentTimes::gemm);
  residual_add(x2_, out, out);
  laps.lap(&ComponentTimes::memory);
}

template <class S>
void TransformerLayer<S>::backward(const Mat<S>& dout, Mat<S>& dx, ComponentTimes* times) {
  const Eigen::Index h = shape_.hidden, s = shape_.seq_len, a = shape_.heads, d = h / a;
  const S scale = S(1) / std::sqrt(static_cast<S>(d));
  dx.resize(dout.rows(), h);
  auto& p = params_;
  auto& gr = grads_;
  gr.ln1_gamma.setZero();
  gr.ln1_beta.setZero();
  gr.ln2_gamma.setZero();
  gr.ln2_beta.setZero();
  Laps laps(times);

  dg_.noalias() = dout * p.w2.transpose();
  gr.w2.noalias() = g_.transpose() * dout;
  laps.lap(&ComponentTimes::gemm);
  gelu_backward(dg_, u_, du_);
  laps.lap(&ComponentTimes::memory);
  dy_.noalias() = du_ * p.w1.transpose();
  gr.w1.noalias() = y2_.transpose() * du_;
  laps.lap(&ComponentTimes::gemm);
  layernorm_backward(dy_, x2_, mean2_, rstd2_, p.ln2_gamma, dln_, gr.ln2_gamma, gr.ln2_beta);
  residual_add(dout, dln_, dx2_);
  laps.lap(&ComponentTimes::memory);
  dctx_.noalias() = dx2_ * p.wo.transpose();
  gr.wo.noalias() = ctx_.transpose() * dx2_;
  laps.lap(&ComponentTimes::gemm);
  for (int b = 0; b < shape_.micro_batch; ++b) {  // dP = dO V^T
    for (Eigen::Index j = 0; j < a; ++j) {
      dprobs_.block((b * a + j) * s, 0, s, s).noalias() =
          dctx_.block(b * s, j * d, s, d) * qkv_.block(b * s, 2 * h + j * d, s, d).transpose();
    }
  }
  for (int b = 0; b < shape_.micro_batch; ++b) {  // dV = P^T dO
    for (Eigen::Index j = 0; j < a; ++j) {
      dqkv_.block(b * s, 2 * h + j * d, s, d).noalias() =
          probs_.block((b * a + j) * s, 0, s, s).transpose() * dctx_.block(b * s, j * d, s, d);
    }
  }
  softmax_backward(probs_, dprobs_, s, scale);
  for (int b = 0; b < shape_.micro_batch; ++b) {  // dQ = dS K
    for (Eigen::Index j = 0; j < a; ++j) {
      dqkv_.block(b * s, j * d, s, d).noalias() =
          dprobs_.block((b * a + j) * s, 0, s, s) * qkv_.block(b * s, h + j * d, s, d);
    }
  }
  for (int b = 0; b < shape_.micro_batch; ++b) {  // dK = dS^T Q
    for (Eigen::Index j = 0; j < a; ++j) {
      dqkv_.block(b * s, h + j * d, s, d).noalias() =
          dprobs_.block((b * a + j) * s, 0, s, s).transpose() * qkv_.block(b * s, j * d, s, d);
    }
  }
  laps.lap(&ComponentTimes::attention);
  dy_.noalias() = dqkv_ * p.wqkv.transpose();
  gr.wqkv.noalias() = y1_.transpose() * dqkv_;
  laps.lap(&ComponentTimes::gemm);
  layernorm_backward(dy_, *x_, mean1_, rstd1_, p.ln1_gamma, dln_, gr.ln1_gamma, gr.ln1_beta);
  residual_add(dx2_, dln_, dx);
  laps.lap(&ComponentTimes::memory);
}

template class TransformerLayer<float>;
template class TransformerLayer<double>;

}  // namespace capplan::calib::host
