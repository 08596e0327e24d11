// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private helpers of the CUDA backend's host code: CUDA errors as Diagnostics, RAII device
// buffers and an RAII cudaEvent timer (CUTLASS profiler / nccl-tests style).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <expected>
#include <string>
#include <utility>

#include "capplan/sim/workload/result.hpp"

namespace capplan::calib::cuda {

using Status = std::expected<void, Diagnostics>;

inline std::string cuda_error_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

// Ok when e == cudaSuccess, else a Diagnostic "cuda/<what>: <name>: <description>".
inline Status check(cudaError_t e, const std::string& what) {
  if (e == cudaSuccess) return {};
  return fail("cuda/" + what, cuda_error_text(e));
}

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      p_ = std::exchange(o.p_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  ~DeviceBuffer() { release(); }

  // Allocates `bytes` on the current device (at least 256 bytes, so every pointer is 16-byte aligned).
  static std::expected<DeviceBuffer, Diagnostics> allocate(std::size_t bytes, const std::string& what) {
    DeviceBuffer b;
    const std::size_t n = bytes < 256 ? 256 : bytes;
    if (cudaError_t e = cudaMalloc(&b.p_, n); e != cudaSuccess) {
      (void)cudaGetLastError();  // clear the sticky-free allocation error
      return fail("cuda/" + what, "cudaMalloc of " + std::to_string(n) + " bytes failed (" + cuda_error_text(e) + ")");
    }
    b.bytes_ = n;
    return b;
  }
  void* get() const { return p_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(p_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void release() {
    if (p_ != nullptr) (void)cudaFree(p_);
    p_ = nullptr;
    bytes_ = 0;
  }
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

// A pair of events around work enqueued on one stream; seconds() waits for the stop event.
class EventTimer {
 public:
  EventTimer() = default;
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  EventTimer(EventTimer&& o) noexcept
      : start_(std::exchange(o.start_, nullptr)), stop_(std::exchange(o.stop_, nullptr)) {}
  EventTimer& operator=(EventTimer&& o) noexcept {
    if (this != &o) {
      release();
      start_ = std::exchange(o.start_, nullptr);
      stop_ = std::exchange(o.stop_, nullptr);
    }
    return *this;
  }
  ~EventTimer() { release(); }
  static std::expected<EventTimer, Diagnostics> create() {
    EventTimer t;
    if (auto s = check(cudaEventCreate(&t.start_), "cudaEventCreate"); !s) return std::unexpected(s.error());
    if (auto s = check(cudaEventCreate(&t.stop_), "cudaEventCreate"); !s) return std::unexpected(s.error());
    return t;
  }
  Status start(cudaStream_t s) { return check(cudaEventRecord(start_, s), "cudaEventRecord"); }
  Status stop(cudaStream_t s) { return check(cudaEventRecord(stop_, s), "cudaEventRecord"); }
  std::expected<double, Diagnostics> seconds() const {
    if (auto s = check(cudaEventSynchronize(stop_), "cudaEventSynchronize"); !s) return std::unexpected(s.error());
    float ms = 0.0f;
    if (auto s = check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime"); !s) {
      return std::unexpected(s.error());
    }
    return static_cast<double>(ms) * 1e-3;
  }

 private:
  void release() {
    if (start_ != nullptr) (void)cudaEventDestroy(start_);
    if (stop_ != nullptr) (void)cudaEventDestroy(stop_);
    start_ = stop_ = nullptr;
  }
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

}  // namespace capplan::calib::cuda
