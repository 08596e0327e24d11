// SPDX-License-Identifier: Apache-2.0
#pragma once
// One interface for every measurement backend (host: Eigen + MPI; cuda: cuBLASLt + NCCL).
// Contract: a backend measures what it is asked and returns records or a Diagnostic saying why
// it cannot (unsupported dtype, no device, ...). It never prints and never exits; progress is
// reported through the callback. Warm-up iterations are not in the samples.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "capplan/calibrate/records.hpp"
#include "capplan/sim/workload/result.hpp"

namespace capplan::calib {

struct RunOptions {
  int warmup = 2;
  int iterations = 5;
  double max_seconds_per_case = 2.0;  // stop sampling a case early once this much time is spent
};

// Copies of a timed kernel's operands to rotate through, so that each timed run reads its operands
// from memory rather than from a cache the previous run warmed: enough copies to span twice the
// last-level cache `cache_bytes`, at least 1, at most `max_sets`, and no more than `budget_bytes` in
// all. The practice of Triton's do_bench (it clears a 256 MB buffer between runs) and of
// hipBLASLt-bench's --rotating buffers. The CUDA backend rotates its GEMM operands over twice the
// GPU's L2: a real layer's working set (weights, a KV cache, activations of thousands of tokens) is
// far past an L2 of 40-60 MB, so each kernel reads its operands from HBM, as the cost model prices
// them. The host backend does not: its steps are small (a 512-wide layer of a few MB) and run from
// the CPU's last-level cache, as its GEMM sweep does.
int rotation_sets(double operand_bytes, double cache_bytes, double budget_bytes, int max_sets = 64);

class MeasurementBackend {
 public:
  virtual ~MeasurementBackend() = default;
  virtual std::string name() const = 0;  // "host", "cuda"
  virtual Context context() const = 0;
  // The device's state now, where the backend can read it: current clocks, power, temperature,
  // throttle reasons (the CUDA backend: sm_mhz, mem_mhz, power_w, power_limit_w, temperature_c,
  // throttle_reasons). run_calibration records it in Context::clocks at the start and at the end
  // of a run, with the suffixes "_before" and "_after". Read only: a backend never sets clocks or
  // power limits. Default: nothing readable.
  virtual std::map<std::string, std::string> device_state() const { return {}; }
  virtual bool supports(sim::Precision dtype) const = 0;

  virtual Result<GemmRecord> gemm(const GemmShape& shape, const RunOptions& options) = 0;
  virtual Result<MemoryRecord> memory(const std::string& pattern, double bytes, const RunOptions& options) = 0;
  // Collective over all ranks of the backend's communicator (MPI world / NCCL clique).
  // Contract: every rank calls it with the same arguments in the same order; all ranks get the
  // record (times are the max over ranks, as nccl-tests reports).
  virtual Result<CollectiveRecord> collective(sim::CollectiveKind kind, double bytes,
                                              const RunOptions& options) = 0;
  virtual Result<StepRecord> training_step(const StepShape& shape, const RunOptions& options) = 0;
  // `kernels` launches of one pattern (LaunchRecord). The patterns this backend measures, in
  // plan order; a backend that measures none refuses every pattern.
  virtual std::vector<std::string> launch_patterns() const { return {}; }
  virtual Result<LaunchRecord> launch(const std::string& pattern, int kernels, const RunOptions& options) {
    (void)kernels;
    (void)options;
    return fail("launch " + pattern, "the " + name() + " backend does not measure kernel launches");
  }
  // False once the backend cannot measure any more (the device was lost, a sticky CUDA error,
  // a collective timed out and left the communicator unusable): run_calibration then stops after
  // the failed case, keeping the records so far, instead of failing every case that follows.
  virtual bool healthy() const { return true; }
  virtual int rank() const { return 0; }
  virtual int ranks() const { return 1; }
};

}  // namespace capplan::calib
