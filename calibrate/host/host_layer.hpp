// SPDX-License-Identifier: Apache-2.0
#pragma once
// One transformer layer, forward and backward, in Eigen: exactly the kernels that
// sim::layer_step_ops lists (same GEMM shapes, same memory passes, same order), timed per
// component (gemm / attention / memory). Pre-norm, bias-free, causal self-attention with
// explicit scores, GELU (tanh) MLP. Activations are row-major [tokens x features], tokens
// ordered batch-major (token t = b*seq_len + i).
// Contract: Scalar is float (measurements) or double (gradient checks in tests); the shape passed
// sim::check(); inputs have T = micro_batch*seq_len rows and hidden columns.
#include <Eigen/Core>
#include <cstdint>

#include "host_kernels.hpp"

#include "capplan/sim/layer_step.hpp"

namespace capplan::calib::host {

struct ComponentTimes {
  double gemm = 0, attention = 0, memory = 0;
  double total() const { return gemm + attention + memory; }
};

template <class Scalar>
struct LayerParams {
  Mat<Scalar> wqkv, wo, w1, w2;  // [h x 3h], [h x h], [h x f], [f x h]
  Vec<Scalar> ln1_gamma, ln1_beta, ln2_gamma, ln2_beta;
};

template <class Scalar>
class TransformerLayer {
 public:
  // Weights drawn uniformly in +-1/sqrt(fan_in) from a fixed seed; norms start at gamma 1, beta 0.
  TransformerLayer(const sim::LayerStepShape& shape, std::uint32_t seed);

  // out = layer(x); keeps what backward needs (and a pointer to x: x must outlive backward). Adds kernel times to `times` when given.
  void forward(const Mat<Scalar>& x, Mat<Scalar>& out, ComponentTimes* times = nullptr);
  // dx from dout (after forward on the same x); weight gradients land in grads().
  void backward(const Mat<Scalar>& dout, Mat<Scalar>& dx, ComponentTimes* times = nullptr);

  LayerParams<Scalar>& params() { return params_; }
  const LayerParams<Scalar>& grads() const { return grads_; }
  const sim::LayerStepShape& shape() const { return shape_; }

 private:
  sim::LayerStepShape shape_;
  LayerParams<Scalar> params_, grads_;
  // Saved activations.
  const Mat<Scalar>* x_ = nullptr;  // the input of the last forward
  Mat<Scalar> y1_, qkv_, probs_, ctx_, x2_, y2_, u_, g_;
  Vec<Scalar> mean1_, rstd1_, mean2_, rstd2_;
  // Backward scratch.
  Mat<Scalar> dg_, du_, dy_, dln_, dx2_, dctx_, dprobs_, dqkv_;
};

extern template class TransformerLayer<float>;
extern template class TransformerLayer<double>;

}  // namespace capplan::calib::host
