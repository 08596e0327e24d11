// SPDX-License-Identifier: Apache-2.0
#pragma once
// Plain C-like launch functions for the CUDA backend's own kernels (memory_kernels.cu,
// layer_kernels.cu). This header is the only thing the C++23 host code and the nvcc-compiled
// kernels share: built-in types, void pointers and cudaStream_t, no sim or calibrate headers.
// Contract: every function enqueues its kernel(s) on `stream` and returns cudaGetLastError() of the
// launch (it does not synchronise). Row-major tensors; `dtype` is one of the CapplanDtype values;
// element counts are in elements, not bytes. Layer kernels accept f16 and bf16 only and
// accumulate in fp32.
#include <cstddef>

#include <cuda_runtime_api.h>

enum CapplanDtype : int { capplan_f32 = 0, capplan_f16 = 1, capplan_bf16 = 2, capplan_f8e4m3 = 3 };

// Deterministic pseudo-random values, uniform in [lo, hi), converted to `dtype` (hash of seed and
// index, so any two calls with different seeds give independent data; never zeros).
cudaError_t capplan_fill_uniform(void* p, int dtype, size_t n, unsigned long long seed, float lo, float hi,
                                 cudaStream_t stream);
// dst[i] = (float)src[i] (for checking results on the host).
cudaError_t capplan_to_f32(const void* src, int dtype, float* dst, size_t n, cudaStream_t stream);

// One empty kernel (one block of one thread): a launch and nothing else. Like every function
// here it returns cudaGetLastError(), the check a framework makes after each launch.
cudaError_t capplan_empty(cudaStream_t stream);

// One thread that busy-waits on the GPU for `ns` nanoseconds of the global timer (%globaltimer,
// nanoseconds, independent of the SM clock), then returns. Enqueued before timed work, it holds the
// stream while the host enqueues every timed launch behind it, so the events around them measure
// the device, not the host's enqueue rate (nvbench's blocking kernel, nvbench/blocking_kernel.cuh,
// holds the stream the same way on a host-written flag; a fixed duration cannot deadlock).
cudaError_t capplan_spin(unsigned long long ns, cudaStream_t stream);

// Memory-bound patterns. norm: y = x * rsqrt(mean(x^2) + 1e-5) per row of `cols` (reads x once,
// writes y once). elementwise: out = a * gelu(b) (SwiGLU-like: reads two, writes one).
cudaError_t capplan_rms_norm(const void* x, void* y, int dtype, size_t rows, int cols, cudaStream_t stream);
cudaError_t capplan_gated_gelu(const void* a, const void* b, void* out, int dtype, size_t n, cudaStream_t stream);

// --- transformer layer pieces (dtype f16 or bf16) ---
// LayerNorm over rows of `cols` with fp32 gamma/beta; saves fp32 mean and rstd per row.
cudaError_t capplan_layernorm_fwd(const void* x, const float* gamma, const float* beta, void* y, float* mean,
                                  float* rstd, int dtype, int rows, int cols, cudaStream_t stream);
// dx = residual_grad + d/dx LayerNorm(dy) (residual_grad may be null: dx = LayerNorm'(dy));
// dgamma/dbeta (fp32, zeroed here) accumulate over rows.
cudaError_t capplan_layernorm_bwd(const void* dy, const void* x, const float* gamma, const float* mean,
                                  const float* rstd, const void* residual_grad, void* dx, float* dgamma,
                                  float* dbeta, int dtype, int rows, int cols, cudaStream_t stream);
// In place on `rows` rows of `cols` scores: p = softmax(scale * s) with a causal mask (row r of
// each [cols x cols] block sees columns 0..r%cols).
cudaError_t capplan_softmax_fwd(void* scores, float scale, int causal, int dtype, size_t rows, int cols,
                                cudaStream_t stream);
// ds = scale * p * (dp - sum_j(dp * p)), in place on dp.
cudaError_t capplan_softmax_bwd(const void* p, void* dp, float scale, int dtype, size_t rows, int cols,
                                cudaStream_t stream);
// g = gelu(u) (tanh approximation); du = dg * gelu'(u).
cudaError_t capplan_gelu_fwd(const void* u, void* g, int dtype, size_t n, cudaStream_t stream);
cudaError_t capplan_gelu_bwd(const void* u, const void* dg, void* du, int dtype, size_t n, cudaStream_t stream);
// out = a + b (residual connection).
cudaError_t capplan_add(const void* a, const void* b, void* out, int dtype, size_t n, cudaStream_t stream);
