// SPDX-License-Identifier: Apache-2.0
#pragma once
// The CUDA measurement backend: cuBLASLt GEMMs, HBM bandwidth (device copy and the backend's own
// norm-like and elementwise kernels), NCCL collectives across the local GPUs (or one GPU per MPI
// rank under mpirun), and one transformer layer's training step (sim/layer_step.hpp's op list).
// Built only when the CUDA toolkit is found (CAPPLAN_HAVE_CUDA; CAPPLAN_HAVE_NCCL with NCCL).
// Contract: make_cuda_backend never crashes and never prints: without a usable device it returns
// the Diagnostic "no CUDA device found (<reason>)". Each measurement configures, allocates,
// fills its inputs with random data (never zeros), runs `warmup` untimed iterations (at least one;
// they also estimate one iteration on the device and its enqueueing on the host), then up to
// `iterations` iterations back to back, each between its own pair of cudaEvents, as many as fit in
// `max_seconds_per_case` by the warm-up's estimate (at least one sample), queued behind a spin
// kernel so the GPU never waits for the host inside the timed run (timing_plan.hpp). Creation
// loads the GPU for ~0.3 s (clocks["warm_up_ms"]) so the first case does not meet idle clocks; it
// never changes clocks or power limits. Sizes the device cannot hold return a Diagnostic, not a
// crash. Include as "cuda_backend.hpp" (the target's public include path).
#include <map>
#include <memory>
#include <string>

#include "capplan/calibrate/backend.hpp"
#include "capplan/sim/workload/result.hpp"

namespace capplan::calib {

class CudaBackend final : public MeasurementBackend {
 public:
  // `device` is the first device this process uses (single-process runs use all local devices for
  // collectives); under MPI with several ranks each rank takes local_rank % device_count.
  static Result<std::unique_ptr<CudaBackend>> create(int device = 0);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::string name() const override { return "cuda"; }
  Context context() const override;
  // Current SM and memory clocks, power draw and limit, temperature and throttle reasons, read
  // through NVML when libnvidia-ml.so.1 loads (nvml_device_state.hpp); empty without it.
  std::map<std::string, std::string> device_state() const override;
  bool supports(sim::Precision dtype) const override;
  Result<GemmRecord> gemm(const GemmShape& shape, const RunOptions& options) override;
  Result<MemoryRecord> memory(const std::string& pattern, double bytes, const RunOptions& options) override;
  Result<CollectiveRecord> collective(sim::CollectiveKind kind, double bytes, const RunOptions& options) override;
  Result<StepRecord> training_step(const StepShape& shape, const RunOptions& options) override;
  std::vector<std::string> launch_patterns() const override;
  Result<LaunchRecord> launch(const std::string& pattern, int kernels, const RunOptions& options) override;
  // False when the device is in a sticky error state (an illegal address, a launch failure, an
  // uncorrectable ECC error, a lost device): every later call on this context would fail too.
  bool healthy() const override;
  int rank() const override;
  int ranks() const override;

  // Checks for the GPU tests (the "verify" phase): ||C - C_ref|| / ||C_ref|| of one product of
  // fresh random inputs against a float64 reference computed on the host from the same inputs.
  Result<double> gemm_relative_error(const GemmShape& shape);
  // Same for the "norm" bandwidth kernel (RMSNorm rows of `cols` bf16 values).
  Result<double> norm_relative_error(int rows, int cols);
  int device() const;
  int local_device_count() const;

  struct Impl;

 private:
  explicit CudaBackend(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

Result<std::unique_ptr<MeasurementBackend>> make_cuda_backend(int device = 0);

}  // namespace capplan::calib
