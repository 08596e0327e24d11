// SPDX-License-Identifier: Apache-2.0
#pragma once
// Helpers shared by the backend's .cu files (device code only; no sim or calibrate headers).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "kernels.hpp"

namespace capplan_cuda {

// 16 bytes of T, loaded and stored as one vector access.
template <class T>
struct alignas(16) Pack {
  static constexpr int n = 16 / static_cast<int>(sizeof(T));
  T v[n];
};

template <class T>
__device__ __forceinline__ float to_f(T x) {
  return static_cast<float>(x);
}
template <class T>
__device__ __forceinline__ T from_f(float x) {
  return static_cast<T>(x);
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
// Sum over the block (blockDim.x a multiple of 32, at most 1024); every thread gets the result.
// `scratch` holds 32 floats of shared memory; the trailing barrier makes it reusable at once.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  v = warp_sum(v);
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  const int warps = static_cast<int>(blockDim.x) >> 5;
  v = lane < warps ? scratch[lane] : 0.0f;
  v = warp_sum(v);
  __syncthreads();
  return v;
}
__device__ __forceinline__ float block_max(float v, float* scratch) {
  v = warp_max(v);
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  const int warps = static_cast<int>(blockDim.x) >> 5;
  v = lane < warps ? scratch[lane] : -INFINITY;
  v = warp_max(v);
  __syncthreads();
  return v;
}

__device__ __forceinline__ float gelu(float x) {  // tanh approximation (GPT-2, Megatron)
  const float k = 0.7978845608028654f;             // sqrt(2/pi)
  return 0.5f * x * (1.0f + tanhf(k * (x + 0.044715f * x * x * x)));
}
__device__ __forceinline__ float gelu_grad(float x) {
  const float k = 0.7978845608028654f;
  const float t = tanhf(k * (x + 0.044715f * x * x * x));
  return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * k * (1.0f + 3.0f * 0.044715f * x * x);
}

// Grid size for a grid-stride loop over `work` items with 256-thread blocks.
inline unsigned grid_for(size_t work) {
  const size_t blocks = (work + 255) / 256;
  return static_cast<unsigned>(std::clamp<size_t>(blocks, 1, 16384));
}

// Calls f(T{}) with the element type of `dtype`.
template <class F>
cudaError_t dispatch_all(int dtype, F&& f) {
  switch (dtype) {
    case capplan_f32: return f(float{});
    case capplan_f16: return f(__half{});
    case capplan_bf16: return f(__nv_bfloat16{});
    case capplan_f8e4m3: return f(__nv_fp8_e4m3{});
    default: return cudaErrorInvalidValue;
  }
}
template <class F>
cudaError_t dispatch_half(int dtype, F&& f) {  // the training step's types
  switch (dtype) {
    case capplan_f16: return f(__half{});
    case capplan_bf16: return f(__nv_bfloat16{});
    default: return cudaErrorInvalidValue;
  }
}

// out[i] = op(a[i], b[i]) with 16-byte accesses where the tail allows.
template <class T, class Op>
__global__ void binary_kernel(const T* a, const T* b, T* out, size_t n, Op op) {
  using P = Pack<T>;
  const size_t packs = n / P::n;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  const size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (size_t i = tid; i < packs; i += stride) {
    const P pa = reinterpret_cast<const P*>(a)[i];
    const P pb = reinterpret_cast<const P*>(b)[i];
    P po;
#pragma unroll
    for (int j = 0; j < P::n; ++j) po.v[j] = from_f<T>(op(to_f(pa.v[j]), to_f(pb.v[j])));
    reinterpret_cast<P*>(out)[i] = po;
  }
  for (size_t i = packs * P::n + tid; i < n; i += stride) out[i] = from_f<T>(op(to_f(a[i]), to_f(b[i])));
}

template <class T, class Op>
__global__ void unary_kernel(const T* a, T* out, size_t n, Op op) {
  using P = Pack<T>;
  const size_t packs = n / P::n;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  const size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (size_t i = tid; i < packs; i += stride) {
    const P pa = reinterpret_cast<const P*>(a)[i];
    P po;
#pragma unroll
    for (int j = 0; j < P::n; ++j) po.v[j] = from_f<T>(op(to_f(pa.v[j])));
    reinterpret_cast<P*>(out)[i] = po;
  }
  for (size_t i = packs * P::n + tid; i < n; i += stride) out[i] = from_f<T>(op(to_f(a[i])));
}

template <class T, class Op>
cudaError_t launch_binary(const void* a, const void* b, void* out, size_t n, Op op, cudaStream_t s) {
  binary_kernel<T><<<grid_for(n / Pack<T>::n + 1), 256, 0, s>>>(static_cast<const T*>(a), static_cast<const T*>(b),
                                                                 static_cast<T*>(out), n, op);
  return cudaGetLastError();
}
template <class T, class Op>
cudaError_t launch_unary(const void* a, void* out, size_t n, Op op, cudaStream_t s) {
  unary_kernel<T><<<grid_for(n / Pack<T>::n + 1), 256, 0, s>>>(static_cast<const T*>(a), static_cast<T*>(out), n, op);
  return cudaGetLastError();
}

}  // namespace capplan_cuda
