// SPDX-License-Identifier: Apache-2.0
#pragma once
// Measurement records: the only contract between a measurement backend (host, CUDA) and the
// fitter. Every record carries the analytical work (flops/bytes) beside the measured times
// (CUTLASS PerformanceResult style) and every sample, so fits and reports can be redone offline.
// Contract: times in seconds, sizes in bytes, bandwidths in bytes per second (decimal, as
// nccl-tests defines GB/s); samples are per-iteration wall times after warm-up.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "capplan/sim/workload/hardware.hpp"
#include "capplan/sim/lowering/ops.hpp"

namespace capplan::calib {

// Now, as Context::date_utc holds it: "2026-12-02T13:07:23Z".
std::string utc_now_iso8601();

// Where the measurements were taken (Google Benchmark's Context, nccl-tests' device lines).
struct Context {
  std::string backend;         // "host" or "cuda"
  std::string device;          // "NVIDIA H200" or the CPU model name
  std::string host;            // hostname
  std::string date_utc;        // ISO 8601, when the calibration started
  std::string capplan_version;
  std::map<std::string, std::string> versions;  // driver, cuda_runtime, cublas, nccl, eigen, mpi, ...
  // Clocks and device state, only where readable: the device's maxima (sm_max_mhz, mem_max_mhz) and,
  // for a calibration run, the backend's device_state() read at its start and end with the suffix
  // "_before" / "_after" (sm_mhz_before, power_w_after, throttle_reasons_before, ...).
  std::map<std::string, std::string> clocks;
  // Fixed properties of the device, decimal text with the unit in the key: sm_count, l2_bytes,
  // memory_bytes, memory_bus_width_bits, ... (the fitter's wave-quantisation term reads sm_count).
  std::map<std::string, std::string> properties;
  int ranks = 1;               // processes taking part (MPI or NCCL communicator size)
  int ranks_per_node = 1;
  int devices_per_rank = 1;
  int threads = 1;             // host backend: worker threads used by GEMMs
};

// min/median/p99/cv of the samples; cv = stddev/mean. Contract: samples non-empty.
struct SampleStats {
  std::vector<double> samples_s;
  double min_s = 0, median_s = 0, p99_s = 0, mean_s = 0, cv = 0;
};
SampleStats summarize(std::vector<double> samples_s);

struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  sim::Precision dtype = sim::Precision::bf16;
  bool operator==(const GemmShape&) const = default;
};

struct GemmRecord {
  GemmShape shape;
  double flops = 0;  // 2*m*n*k*batch
  double bytes = 0;  // minimum traffic: A and B read, C written once
  SampleStats time;
  double achieved_flops_per_s() const { return flops / time.median_s; }
};

// Memory-bound patterns: "copy" (device copy: read + write), "norm" (RMSNorm/LayerNorm-like
// read x, write y, reduce per row), "elementwise" (GELU/SwiGLU-like read 2, write 1).
struct MemoryRecord {
  std::string pattern;
  double bytes = 0;  // bytes moved (read + written)
  SampleStats time;
  double bandwidth_Bps() const { return bytes / time.median_s; }
};

// nccl-tests definitions (doc/PERFORMANCE.md): algbw = bytes / time; busbw = algbw * factor with
// factor 2(n-1)/n for all-reduce, (n-1)/n for all-gather, reduce-scatter and all-to-all, 1 for
// send/recv. `bytes` follows sim::CollectiveOp's convention.
struct CollectiveRecord {
  sim::CollectiveKind kind = sim::CollectiveKind::all_reduce;
  double bytes = 0;
  int ranks = 1;
  int ranks_per_node = 1;
  int nodes = 1;
  std::string tier;  // "nvlink", "network", "pcie", "host-shm" (MPI ranks on one machine)
  SampleStats time;
  double algbw_Bps = 0;
  double busbw_Bps = 0;
};
double bus_factor(sim::CollectiveKind kind, int ranks);

// One transformer layer (or a stack) forward + backward, the real training step the simulator's
// op list describes; component times where the backend can attribute them.
struct StepShape {
  int layers = 1;
  int hidden = 0;
  int heads = 0;
  int ffn_hidden = 0;  // 4*hidden for GPT-style MLP
  int seq_len = 0;
  int micro_batch = 1;
  bool gated_ffn = false;
  sim::Precision dtype = sim::Precision::bf16;
  // The layer's other variants (sim::LayerStepShape): 0 kv_heads = heads (MHA).
  int kv_heads = 0;
  bool rmsnorm = false;
  bool rope = false;
  bool flash_attention = false;
  // > 0: a serving decode step of micro_batch sequences over this many cached tokens, forward
  // only (sim::LayerStepShape::decode_context); seq_len is then unused.
  int decode_context = 0;
  bool operator==(const StepShape&) const = default;
};

// components_s (medians of per-step sums): "gemm", "attention" and "memory" partition the step
// (sim::LayerComponent). A backend without a fused (flash) attention kernel runs a fused-attention
// layer's attention as the op list's batched GEMMs scaled by the causal work share; the CUDA
// backend then adds "attention_batched_gemm", the part of "attention" those stand-in GEMMs took
// (not a fourth part of the step: it is inside "attention"). Its presence says the measured
// attention is batched GEMMs, not a flash kernel.
struct StepRecord {
  StepShape shape;
  SampleStats time;                          // whole forward + backward
  std::map<std::string, double> components_s;
};

// Kernel launch and dispatch (docs/calibration.md, "Launch and dispatch"): `kernels` kernels
// issued back to back, one pattern:
//   "launch"       host time to issue `kernels` empty kernels, nothing synchronised in between:
//                  what the host pays per launch (cudaLaunchKernel; on the host backend a call
//                  through the step runner's type-erased dispatch);
//   "back_to_back" device time (cudaEvents) of `kernels` empty kernels that were all queued before
//                  the first ran (the CUDA backend holds the stream with a spin kernel while it
//                  issues them): the GPU's own floor per kernel, kernel after kernel, whatever the
//                  host's launch rate. Records taken before the spin measured the longer of that
//                  floor and the host's launch time;
//   "graph"        device time of the same kernels replayed from one CUDA graph, also queued
//                  behind a spin: the graph's per-node cost on the GPU, without the host's
//                  cudaGraphLaunch (as CUDA-graph engines run their decode steps, the replay
//                  overlapping the previous step);
//   "dispatch"     host time to issue a framework-like op sequence (the backend's own small
//                  kernels and library GEMMs in a layer's order), per op of the sequence.
// Fitted as time = fixed + kernels x per-kernel cost (fit_launch).
struct LaunchRecord {
  std::string pattern;
  int kernels = 0;
  SampleStats time;  // of the whole batch of `kernels`
};

// All records of one calibration run. Contract: append-only while measuring; a resumed run
// keeps the records it already has and measures only what is missing.
struct Measurements {
  Context context;
  std::vector<GemmRecord> gemms;
  std::vector<MemoryRecord> memory;
  std::vector<CollectiveRecord> collectives;
  std::vector<StepRecord> steps;
  std::vector<LaunchRecord> launches;
};

}  // namespace capplan::calib
