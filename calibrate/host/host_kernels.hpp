// SPDX-License-Identifier: Apache-2.0
#pragma once
// The memory-bound kernels of the host training step (LayerNorm, RMSNorm, residual add, GELU,
// SwiGLU, RoPE, causal softmax, forward and backward), shared by the step runner (host_layer.cpp) and the memory sweep
// (host_backend.cpp), so the calibrated patterns are the very loops the step runs.
// Contract: row-major dense buffers; single-threaded; no allocation.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>

namespace capplan::calib::host {

template <class Scalar>
using Mat = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class Scalar>
using Vec = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

inline constexpr double kLayerNormEps = 1e-5;

// y = (x - mean) * rstd * gamma + beta per row; keeps mean and rstd. Reads x, writes y.
template <class S>
inline void layernorm_forward(const Mat<S>& x, const Vec<S>& gamma, const Vec<S>& beta, Mat<S>& y, Vec<S>& mean,
                       Vec<S>& rstd) {
  const Eigen::Index rows = x.rows(), h = x.cols();
  for (Eigen::Index r = 0; r < rows; ++r) {
    const S* in = x.data() + r * h;
    S* out = y.data() + r * h;
    S sum = 0;
    for (Eigen::Index c = 0; c < h; ++c) sum += in[c];
    const S mu = sum / static_cast<S>(h);
    S var = 0;
    for (Eigen::Index c = 0; c < h; ++c) var += (in[c] - mu) * (in[c] - mu);
    const S rs = S(1) / std::sqrt(var / static_cast<S>(h) + static_cast<S>(kLayerNormEps));
    for (Eigen::Index c = 0; c < h; ++c) out[c] = (in[c] - mu) * rs * gamma[c] + beta[c];
    mean[r] = mu;
    rstd[r] = rs;
  }
}

// dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)), dxhat = dy * gamma; accumulates
// dgamma and dbeta. Reads dy and x, writes dx.
template <class S>
inline void layernorm_backward(const Mat<S>& dy, const Mat<S>& x, const Vec<S>& mean, const Vec<S>& rstd,
                        const Vec<S>& gamma, Mat<S>& dx, Vec<S>& dgamma, Vec<S>& dbeta) {
  const Eigen::Index rows = x.rows(), h = x.cols();
  for (Eigen::Index r = 0; r < rows; ++r) {
    const S* g = dy.data() + r * h;
    const S* in = x.data() + r * h;
    S* out = dx.data() + r * h;
    const S mu = mean[r], rs = rstd[r];
    S sum_dxhat = 0, sum_dxhat_xhat = 0;
    for (Eigen::Index c = 0; c < h; ++c) {
      const S xhat = (in[c] - mu) * rs;
      const S dxhat = g[c] * gamma[c];
      sum_dxhat += dxhat;
      sum_dxhat_xhat += dxhat * xhat;
      dgamma[c] += g[c] * xhat;
      dbeta[c] += g[c];
    }
    const S inv_h = S(1) / static_cast<S>(h);
    for (Eigen::Index c = 0; c < h; ++c) {
      const S xhat = (in[c] - mu) * rs;
      out[c] = rs * (g[c] * gamma[c] - sum_dxhat * inv_h - xhat * sum_dxhat_xhat * inv_h);
    }
  }
}

// out = a + b (reads two tensors, writes one).
template <class S>
inline void residual_add(const Mat<S>& a, const Mat<S>& b, Mat<S>& out) {
  const Eigen::Index n = a.size();
  const S* pa = a.data();
  const S* pb = b.data();
  S* po = out.data();
  for (Eigen::Index i = 0; i < n; ++i) po[i] = pa[i] + pb[i];
}

// GELU, tanh approximation (Hendrycks & Gimpel 2016), as GPT-2 and Megatron use it.
template <class S>
constexpr S kGeluC = S(0.7978845608028654);  // sqrt(2/pi)
template <class S>
constexpr S kGeluA = S(0.044715);

template <class S>
inline void gelu_forward(const Mat<S>& u, Mat<S>& g) {
  const Eigen::Index n = u.size();
  const S* in = u.data();
  S* out = g.data();
  for (Eigen::Index i = 0; i < n; ++i) {
    const S x = in[i];
    out[i] = S(0.5) * x * (S(1) + std::tanh(kGeluC<S> * (x + kGeluA<S> * x * x * x)));
  }
}

// du = dg * gelu'(u) (reads dg and u, writes du).
template <class S>
inline void gelu_backward(const Mat<S>& dg, const Mat<S>& u, Mat<S>& du) {
  const Eigen::Index n = u.size();
  const S* pd = dg.data();
  const S* pu = u.data();
  S* out = du.data();
  for (Eigen::Index i = 0; i < n; ++i) {
    const S x = pu[i];
    const S th = std::tanh(kGeluC<S> * (x + kGeluA<S> * x * x * x));
    const S d = S(0.5) * (S(1) + th) + S(0.5) * x * (S(1) - th * th) * kGeluC<S> * (S(1) + S(3) * kGeluA<S> * x * x);
    out[i] = pd[i] * d;
  }
}

// In place over `heads` blocks of [s x s]: P = softmax(scale * S) with the causal mask (j > i -> 0).
template <class S>
inline void softmax_forward(Mat<S>& scores, Eigen::Index s, S scale) {
  const Eigen::Index rows = scores.rows();
  for (Eigen::Index r = 0; r < rows; ++r) {
    const Eigen::Index i = r % s;  // query position inside its head block
    S* row = scores.data() + r * s;
    S mx = row[0] * scale;
    for (Eigen::Index j = 1; j <= i; ++j) mx = std::max(mx, row[j] * scale);
    S sum = 0;
    for (Eigen::Index j = 0; j <= i; ++j) {
      row[j] = std::exp(row[j] * scale - mx);
      sum += row[j];
    }
    const S inv = S(1) / sum;
    for (Eigen::Index j = 0; j <= i; ++j) row[j] *= inv;
    for (Eigen::Index j = i + 1; j < s; ++j) row[j] = 0;
  }
}

// In place: dP becomes dS = scale * P * (dP - rowsum(P * dP)) (reads P and dP, writes dS).
template <class S>
inline void softmax_backward(const Mat<S>& probs, Mat<S>& dprobs, Eigen::Index s, S scale) {
  const Eigen::Index rows = probs.rows();
  for (Eigen::Index r = 0; r < rows; ++r) {
    const S* p = probs.data() + r * s;
    S* d = dprobs.data() + r * s;
    S dot = 0;
    for (Eigen::Index j = 0; j < s; ++j) dot += p[j] * d[j];
    for (Eigen::Index j = 0; j < s; ++j) d[j] = scale * p[j] * (d[j] - dot);
  }
}

// Out of place: dS = scale * P * (dP - rowsum(P * dP)) (reads P and dP, writes dS). The step runner
// uses it so that repeated calls see the same dP (in place, dS shrinks towards denormals).
template <class S>
inline void softmax_backward(const Mat<S>& probs, const Mat<S>& dprobs, Mat<S>& ds, Eigen::Index s, S scale) {
  const Eigen::Index rows = probs.rows();
  for (Eigen::Index r = 0; r < rows; ++r) {
    const S* p = probs.data() + r * s;
    const S* d = dprobs.data() + r * s;
    S* out = ds.data() + r * s;
    S dot = 0;
    for (Eigen::Index j = 0; j < s; ++j) dot += p[j] * d[j];
    for (Eigen::Index j = 0; j < s; ++j) out[j] = scale * p[j] * (d[j] - dot);
  }
}

// y = x * rsqrt(mean(x^2) + eps) * gamma per row; keeps rstd. Reads x, writes y.
template <class S>
inline void rmsnorm_forward(const Mat<S>& x, const Vec<S>& gamma, Mat<S>& y, Vec<S>& rstd) {
  const Eigen::Index rows = x.rows(), h = x.cols();
  for (Eigen::Index r = 0; r < rows; ++r) {
    const S* in = x.data() + r * h;
    S* out = y.data() + r * h;
    S ss = 0;
    for (Eigen::Index c = 0; c < h; ++c) ss += in[c] * in[c];
    const S rs = S(1) / std::sqrt(ss / static_cast<S>(h) + static_cast<S>(kLayerNormEps));
    for (Eigen::Index c = 0; c < h; ++c) out[c] = in[c] * rs * gamma[c];
    rstd[r] = rs;
  }
}

// dx = rstd * (dxhat - xhat * mean(dxhat * xhat)), dxhat = dy * gamma; accumulates dgamma.
// Reads dy and x, writes dx.
template <class S>
inline void rmsnorm_backward(const Mat<S>& dy, const Mat<S>& x, const Vec<S>& rstd, const Vec<S>& gamma, Mat<S>& dx,
                             Vec<S>& dgamma) {
  const Eigen::Index rows = x.rows(), h = x.cols();
  for (Eigen::Index r = 0; r < rows; ++r) {
    const S* g = dy.data() + r * h;
    const S* in = x.data() + r * h;
    S* out = dx.data() + r * h;
    const S rs = rstd[r];
    S dot = 0;
    for (Eigen::Index c = 0; c < h; ++c) {
      const S xhat = in[c] * rs;
      dot += g[c] * gamma[c] * xhat;
      dgamma[c] += g[c] * xhat;
    }
    const S inv_h = S(1) / static_cast<S>(h);
    for (Eigen::Index c = 0; c < h; ++c) out[c] = rs * (g[c] * gamma[c] - in[c] * rs * dot * inv_h);
  }
}

// SwiGLU: out = silu(gate) * up (reads gate and up, writes out).
template <class S>
inline void swiglu_forward(const Mat<S>& gate, const Mat<S>& up, Mat<S>& out) {
  const Eigen::Index n = gate.size();
  for (Eigen::Index i = 0; i < n; ++i) {
    const S g = gate.data()[i];
    const S sig = S(1) / (S(1) + std::exp(-g));
    out.data()[i] = g * sig * up.data()[i];
  }
}

// dgate = dout * up * silu'(gate), dup = dout * silu(gate) (reads dout, gate, up; writes dgate, dup).
template <class S>
inline void swiglu_backward(const Mat<S>& dout, const Mat<S>& gate, const Mat<S>& up, Mat<S>& dgate, Mat<S>& dup) {
  const Eigen::Index n = gate.size();
  for (Eigen::Index i = 0; i < n; ++i) {
    const S g = gate.data()[i];
    const S sig = S(1) / (S(1) + std::exp(-g));
    const S d = dout.data()[i];
    dgate.data()[i] = d * up.data()[i] * sig * (S(1) + g * (S(1) - sig));
    dup.data()[i] = d * g * sig;
  }
}

// Rotary embedding in place on rows of one head (`cols` = head dim, even): pairs (j, j + cols/2)
// of row r rotate by the angle of position r % seq_len, from the [seq_len x cols/2] cos/sin
// tables; sign -1 rotates back (the backward pass). Reads and writes x.
template <class S>
inline void rope_apply(Mat<S>& x, const Mat<S>& cos, const Mat<S>& sin, Eigen::Index seq_len, S sign) {
  const Eigen::Index rows = x.rows(), half = x.cols() / 2;
  for (Eigen::Index r = 0; r < rows; ++r) {
    S* row = x.data() + r * x.cols();
    const S* c = cos.data() + (r % seq_len) * half;
    const S* sn = sin.data() + (r % seq_len) * half;
    for (Eigen::Index j = 0; j < half; ++j) {
      const S a = row[j], b = row[j + half];
      row[j] = a * c[j] - sign * b * sn[j];
      row[j + half] = sign * a * sn[j] + b * c[j];
    }
  }
}

}  // namespace capplan::calib::host
