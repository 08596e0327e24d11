// SPDX-License-Identifier: Apache-2.0
// The non-GEMM kernels of the measured transformer layer (forward + backward): LayerNorm, causal
// softmax, GELU and the residual add (attention reads Q, K, V in place: no head transposes).
#include "kernel_common.cuh"

namespace capplan_cuda {
namespace {

template <class T>
__global__ void layernorm_fwd_kernel(const T* x, const float* gamma, const float* beta, T* y, float* mean_out,
                                     float* rstd_out, int cols) {
  __shared__ float scratch[32];
  using P = Pack<T>;
  const size_t row = blockIdx.x;
  const P* xr = reinterpret_cast<const P*>(x + row * static_cast<size_t>(cols));
  P* yr = reinterpret_cast<P*>(y + row * static_cast<size_t>(cols));
  const int packs = cols / P::n;
  float s = 0.0f, ss = 0.0f;
  for (int i = static_cast<int>(threadIdx.x); i < packs; i += static_cast<int>(blockDim.x)) {
    const P p = xr[i];
#pragma unroll
    for (int j = 0; j < P::n; ++j) {
      const float v = to_f(p.v[j]);
      s += v;
      ss += v * v;
    }
  }
  const float n = static_cast<float>(cols);
  const float mean = block_sum(s, scratch) / n;
  const float var = fmaxf(block_sum(ss, scratch) / n - mean * mean, 0.0f);
  const float rstd = rsqrtf(var + 1e-5f);
  if (threadIdx.x == 0) {
    mean_out[row] = mean;
    rstd_out[row] = rstd;
  }
  for (int i = static_cast<int>(threadIdx.x); i < packs; i += static_cast<int>(blockDim.x)) {
    const P p = xr[i];
    P o;
#pragma unroll
    for (int j = 0; j < P::n; ++j) {
      const int c = i * P::n + j;
      o.v[j] = from_f<T>((to_f(p.v[j]) - mean) * rstd * gamma[c] + beta[c]);
    }
    yr[i] = o;
  }
}

// dx = residual_grad + rstd * (g - mean(g) - xhat * mean(g * xhat)), g = gamma * dy.
template <class T>
__global__ void layernorm_bwd_dx_kernel(const T* dy, const T* x, const float* gamma, const float* mean_in,
                                        const float* rstd_in, const T* residual_grad, T* dx, int cols) {
  __shared__ float scratch[32];
  using P = Pack<T>;
  const size_t row = blockIdx.x;
  const size_t base = row * static_cast<size_t>(cols);
  const P* dyr = reinterpret_cast<const P*>(dy + base);
  const P* xr = reinterpret_cast<const P*>(x + base);
  const int packs = cols / P::n;
  const float mean = mean_in[row], rstd = rstd_in[row];
  float sg = 0.0f, sgx = 0.0f;
  for (int i = static_cast<int>(threadIdx.x); i < packs; i += static_cast<int>(blockDim.x)) {
    const P pd = dyr[i], px = xr[i];
#pragma unroll
    for (int j = 0; j < P::n; ++j) {
      const float g = gamma[i * P::n + j] * to_f(pd.v[j]);
      sg += g;
      sgx += g * (to_f(px.v[j]) - mean) * rstd;
    }
  }
  const float n = static_cast<float>(cols);
  const float mg = block_sum(sg, scratch) / n;
  const float mgx = block_sum(sgx, scratch) / n;
  const P* rr = residual_grad != nullptr ? reinterpret_cast<const P*>(residual_grad + base) : nullptr;
  P* dxr = reinterpret_cast<P*>(dx + base);
  for (int i = static_cast<int>(threadIdx.x); i < packs; i += static_cast<int>(blockDim.x)) {
    const P pd = dyr[i], px = xr[i];
    P pr{};
    if (rr != nullptr) pr = rr[i];
    P o;
#pragma unroll
    for (int j = 0; j < P::n; ++j) {
      const float g = gamma[i * P::n + j] * to_f(pd.v[j]);
      const float xhat = (to_f(px.v[j]) - mean) * rstd;
      const float r = rr != nullptr ? to_f(pr.v[j]) : 0.0f;
      o.v[j] = from_f<T>(r + rstd * (g - mg - xhat * mgx));
    }
    dxr[i] = o;
  }
}

// dgamma[c] += sum_r dy * xhat, dbeta[c] += sum_r dy over this block's slice of rows.
template <class T>
__global__ void layernorm_bwd_params_kernel(const T* dy, const T* x, const float* mean_in, const float* rstd_in,
                                            float* dgamma, float* dbeta, int rows, int cols, int rows_per_block) {
  const int c = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (c >= cols) return;
  const int r0 = static_cast<int>(blockIdx.y) * rows_per_block;
  const int r1 = min(rows, r0 + rows_per_block);
  float sg = 0.0f, sb = 0.0f;
  for (int r = r0; r < r1; ++r) {
    const size_t k = static_cast<size_t>(r) * cols + c;
    const float d = to_f(dy[k]);
    sg += d * (to_f(x[k]) - mean_in[r]) * rstd_in[r];
    sb += d;
  }
  atomicAdd(dgamma + c, sg);
  atomicAdd(dbeta + c, sb);
}

// One block per row of `cols` scores. Causal: row r sees columns 0 .. r % cols.
template <class T>
__global__ void softmax_fwd_kernel(T* s, float scale, int causal, int cols) {
  __shared__ float scratch[32];
  const size_t row = blockIdx.x;
  T* sr = s + row * static_cast<size_t>(cols);
  const int last = causal ? static_cast<int>(row % static_cast<size_t>(cols)) : cols - 1;
  float m = -INFINITY;
  for (int c = static_cast<int>(threadIdx.x); c <= last; c += static_cast<int>(blockDim.x)) m = fmaxf(m, to_f(sr[c]));
  m = block_max(m, scratch) * scale;
  float sum = 0.0f;
  for (int c = static_cast<int>(threadIdx.x); c <= last; c += static_cast<int>(blockDim.x)) {
    sum += __expf(to_f(sr[c]) * scale - m);
  }
  const float inv = 1.0f / block_sum(sum, scratch);
  for (int c = static_cast<int>(threadIdx.x); c < cols; c += static_cast<int>(blockDim.x)) {
    sr[c] = from_f<T>(c <= last ? __expf(to_f(sr[c]) * scale - m) * inv : 0.0f);
  }
}

template <class T>
__global__ void softmax_bwd_kernel(const T* p, T* dp, float scale, int cols) {
  __shared__ float scratch[32];
  const size_t base = static_cast<size_t>(blockIdx.x) * cols;
  float dot = 0.0f;
  for (int c = static_cast<int>(threadIdx.x); c < cols; c += static_cast<int>(blockDim.x)) {
    dot += to_f(p[base + c]) * to_f(dp[base + c]);
  }
  dot = block_sum(dot, scratch);
  for (int c = static_cast<int>(threadIdx.x); c < cols; c += static_cast<int>(blockDim.x)) {
    const float pv = to_f(p[base + c]);
    dp[base + c] = from_f<T>(scale * pv * (to_f(dp[base + c]) - dot));
  }
}

struct GeluFwd {
  __device__ float operator()(float u) const { return gelu(u); }
};
struct GeluBwd {
  __device__ float operator()(float u, float dg) const { return dg * gelu_grad(u); }
};
struct Add {
  __device__ float operator()(float a, float b) const { return a + b; }
};

}  // namespace
}  // namespace capplan_cuda

using namespace capplan_cuda;

cudaError_t capplan_layernorm_fwd(const void* x, const float* gamma, const float* beta, void* y, float* mean,
                                  float* rstd, int dtype, int rows, int cols, cudaStream_t stream) {
  return dispatch_half(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (cols % Pack<T>::n != 0 || rows <= 0) return cudaErrorInvalidValue;
    layernorm_fwd_kernel<T><<<static_cast<unsigned>(rows), 256, 0, stream>>>(
        static_cast<const T*>(x), gamma, beta, static_cast<T*>(y), mean, rstd, cols);
    return cudaGetLastError();
  });
}

cudaError_t capplan_layernorm_bwd(const void* dy, const void* x, const float* gamma, const float* mean,
                                  const float* rstd, const void* residual_grad, void* dx, float* dgamma,
                                  float* dbeta, int dtype, int rows, int cols, cudaStream_t stream) {
  return dispatch_half(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (cols % Pack<T>::n != 0 || rows <= 0) return cudaErrorInvalidValue;
    layernorm_bwd_dx_kernel<T><<<static_cast<unsigned>(rows), 256, 0, stream>>>(
        static_cast<const T*>(dy), static_cast<const T*>(x), gamma, mean, rstd, static_cast<const T*>(residual_grad),
        static_cast<T*>(dx), cols);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    if (cudaError_t e = cudaMemsetAsync(dgamma, 0, sizeof(float) * static_cast<size_t>(cols), stream); e != cudaSuccess) {
      return e;
    }
    if (cudaError_t e = cudaMemsetAsync(dbeta, 0, sizeof(float) * static_cast<size_t>(cols), stream); e != cudaSuccess) {
      return e;
    }
    const int rows_per_block = 64;
    const dim3 grid((static_cast<unsigned>(cols) + 255) / 256, (static_cast<unsigned>(rows) + rows_per_block - 1) / rows_per_block);
    layernorm_bwd_params_kernel<T><<<grid, 256, 0, stream>>>(static_cast<const T*>(dy), static_cast<const T*>(x), mean,
                                                            rstd, dgamma, dbeta, rows, cols, rows_per_block);
    return cudaGetLastError();
  });
}

cudaError_t capplan_softmax_fwd(void* scores, float scale, int causal, int dtype, size_t rows, int cols,
                                cudaStream_t stream) {
  return dispatch_half(dtype, [&](auto tag) {
    using T = decltype(tag);
    softmax_fwd_kernel<T><<<static_cast<unsigned>(rows), 256, 0, stream>>>(static_cast<T*>(scores), scale, causal, cols);
    return cudaGetLastError();
  });
}

cudaError_t capplan_softmax_bwd(const void* p, void* dp, float scale, int dtype, size_t rows, int cols,
                                cudaStream_t stream) {
  return dispatch_half(dtype, [&](auto tag) {
    using T = decltype(tag);
    softmax_bwd_kernel<T><<<static_cast<unsigned>(rows), 256, 0, stream>>>(static_cast<const T*>(p), static_cast<T*>(dp),
                                                                          scale, cols);
    return cudaGetLastError();
  });
}

cudaError_t capplan_gelu_fwd(const void* u, void* g, int dtype, size_t n, cudaStream_t stream) {
  return dispatch_half(dtype, [&](auto tag) { return launch_unary<decltype(tag)>(u, g, n, GeluFwd{}, stream); });
}

cudaError_t capplan_gelu_bwd(const void* u, const void* dg, void* du, int dtype, size_t n, cudaStream_t stream) {
  return dispatch_half(dtype, [&](auto tag) { return launch_binary<decltype(tag)>(u, dg, du, n, GeluBwd{}, stream); });
}

cudaError_t capplan_add(const void* a, const void* b, void* out, int dtype, size_t n, cudaStream_t stream) {
  return dispatch_half(dtype, [&](auto tag) { return launch_binary<decltype(tag)>(a, b, out, n, Add{}, stream); });
}
