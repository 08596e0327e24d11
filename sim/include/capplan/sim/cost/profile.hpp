// SPDX-License-Identifier: Apache-2.0
#pragma once
// A calibrated performance profile: what one machine was measured to do, and the model
// parameters fitted to those measurements (calibrate/fit writes it, data/profile_io reads and
// writes its JSON, CalibratedCost prices operations with it).
// Contract: raw doubles in SI base units, the unit in every field name (_s seconds, _Bps bytes
// per second, _flops_per_s FLOP/s, bytes in bytes); every fitted parameter says where it came
// from, how many samples it rests on and the fit's residual. Plain data, no I/O.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "capplan/sim/workload/hardware.hpp"
#include "capplan/sim/lowering/ops.hpp"
#include "capplan/sim/units.hpp"

namespace capplan::sim {

// 2 added runs_fit (calibrate --from-runs), 3 the launch fits; versions 1 and 2 still read.
inline constexpr int kProfileSchemaVersion = 3;

// measured: read off a measurement (a median); fitted: least-squares parameter;
// datasheet: taken from the catalog, not measured on this machine.
enum class ParamSource { measured, fitted, datasheet };
const char* to_string(ParamSource s);
std::optional<ParamSource> param_source_from_string(const std::string& s);

struct Param {
  double value = 0;
  ParamSource source = ParamSource::fitted;
  int samples = 0;         // measurements the value rests on
  double residual = 0;     // RMS relative residual of the fit that produced it (0: measured/datasheet)
};

// Goodness of fit. r2 is the coefficient of determination of log(time), so that small and large
// sizes weigh alike; rms_relative_residual = sqrt(mean((predicted - measured) / measured)^2).
struct FitQuality {
  int samples = 0;
  double rms_relative_residual = 0;
  double max_relative_residual = 0;
  double r2 = 0;
};

// One measured GEMM (median of its samples).
struct GemmPoint {
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  Precision dtype = Precision::bf16;
  double time_s = 0;
  int samples = 0;
  double cv = 0;  // stddev / mean of the samples
};

// GEMM time as a function of shape (docs/calibration.md, "Fitting"):
//   time = launch + 2*m*n*k*batch / (peak * wave(m, n, batch) * m/(m+m_half) * n/(n+n_half) * k/(k+k_half))
// wave() is tile and wave quantisation over `wave_units` parallel units (SMs); 1 when wave_units
// is 0 (CPUs). The ramps model operand reuse and pipeline fill at small dimensions.
struct GemmFit {
  Precision dtype = Precision::bf16;
  Param launch_s;
  Param peak_flops_per_s;
  Param m_half, n_half, k_half;  // elements
  int wave_units = 0;
  FitQuality quality;
  // Measured range: the model is used only inside it (each dimension separately).
  std::int64_t min_m = 0, max_m = 0, min_n = 0, max_n = 0, min_k = 0, max_k = 0;

  bool covers(std::int64_t m, std::int64_t n, std::int64_t k) const {
    return m >= min_m && m <= max_m && n >= min_n && n <= max_n && k >= min_k && k <= max_k;
  }
};
// The fitted model's time for one shape, in seconds (shared by the fitter and CalibratedCost).
double gemm_model_time_s(const GemmFit& fit, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch);
// Tile and wave quantisation in (0, 1] on `units` SMs: best of four CUTLASS-style output tiles
// (tile_m x tile_n at full speed, 128x128 at 0.95, 64x128 at 0.85, skinny 16x128 at 0.5), the same
// selector DatasheetCost uses.
double tile_wave_efficiency(double m, double n, double batch, int units, int tile_m = 128, int tile_n = 256);

// One measured memory-bound kernel (median of its samples).
struct MemoryPoint {
  std::string pattern;
  double bytes = 0;
  double time_s = 0;
  int samples = 0;
  double cv = 0;
};

// Memory-bound pattern ("copy", "norm", "elementwise"): time = latency + bytes / bandwidth.
struct MemoryFit {
  std::string pattern;
  Param latency_s;
  Param bandwidth_Bps;
  FitQuality quality;
  double min_bytes = 0, max_bytes = 0;
};

// nccl-tests bus-bandwidth factor (doc/PERFORMANCE.md): 2(n-1)/n all-reduce; (n-1)/n all-gather,
// reduce-scatter, all-to-all; 1 send/recv. 1 for n <= 1.
double nccl_bus_factor(CollectiveKind kind, int ranks);

// One collective kind on one communicator size and link tier:
//   time = latency + bytes * nccl_bus_factor(kind, ranks) / busbw
// tier: "nvlink", "pcie", "host-shm" (inside one node) or "network" (across nodes).
struct CollectiveFit {
  CollectiveKind kind = CollectiveKind::all_reduce;
  int ranks = 2;
  int nodes = 1;
  std::string tier;
  Param latency_s;
  Param busbw_Bps;
  FitQuality quality;
  double min_bytes = 0, max_bytes = 0;
};
bool tier_spans_nodes(const std::string& tier);  // "network"

// Kernel launch and dispatch, one pattern (calib::LaunchRecord; docs/calibration.md, "Launch and
// dispatch"): time of a batch of `kernels` = fixed + kernels x per_kernel. Patterns: "launch"
// (host time per kernel launch), "back_to_back" (GPU time per empty kernel issued back to back),
// "graph" (per kernel replayed from a CUDA graph), "dispatch" (host time per op of a framework-like
// op sequence).
struct LaunchFit {
  std::string pattern;
  Param per_kernel_s;
  Param fixed_s;  // the batch's own overhead (a synchronisation, an event), not per kernel
  FitQuality quality;
  int min_kernels = 0, max_kernels = 0;
};
inline constexpr const char* kLaunchPatterns[] = {"launch", "back_to_back", "graph", "dispatch"};

// A measured training step (forward + backward of `layers` transformer layers).
struct MeasuredStep {
  int layers = 1, hidden = 0, heads = 0, ffn_hidden = 0, seq_len = 0, micro_batch = 1;
  bool gated_ffn = false;
  Precision dtype = Precision::bf16;
  int kv_heads = 0;  // 0 = heads (MHA)
  bool rmsnorm = false, rope = false, flash_attention = false;
  double time_s = 0;  // median
  int samples = 0;
  double cv = 0;
  std::map<std::string, double> components_s;
};

// One parameter of a fit to measured training steps: its value (source fitted, samples = the runs,
// residual = the fit's RMS log residual) or, when the runs could not identify it, the datasheet
// model's neutral value (source datasheet: scale 1, overhead 0) and std_error 0.
struct RunsFitParam {
  Param param;
  double std_error = 0;  // from (J^T J)^-1 s^2 of the log residuals, in the parameter's unit
};

// One measured run and what the model predicted for it (step time in seconds).
struct RunResidual {
  std::string label;
  double measured_s = 0;
  double before_s = 0;  // the datasheet model
  double after_s = 0;   // the fitted model
  double loo_s = 0;     // the model fitted to the other runs (0 when it could not be fitted)
};

// The datasheet model's efficiency parameters fitted to a team's measured training steps
// (capplan calibrate --from-runs; docs/calibration.md, "From your own runs"). Applied through
// DatasheetAssumptions (with_runs_fit in datasheet_cost.hpp).
struct RunsFit {
  RunsFitParam gemm_efficiency_scale;  // x the GEMM and fused-attention ceilings (never above peak)
  RunsFitParam scale_up_busbw_scale;   // x the busbw of scale-up tiers (NVLink, PCIe)
  RunsFitParam scale_out_busbw_scale;  // x the busbw of scale-out tiers (the network)
  RunsFitParam per_op_overhead_s;      // added to every GEMM, memory-bound op and collective
  int runs = 0;
  double rms_log_residual = 0;  // in sample, ln(predicted / measured)
  double max_abs_log_residual = 0;
  double loo_mape = 0;          // leave-one-out mean |predicted / measured - 1| (fraction)
  std::vector<RunResidual> per_run;
};

struct Profile {
  int schema_version = kProfileSchemaVersion;
  // Where it was measured. Keys: backend, device, host, date_utc, capplan_version (required);
  // ranks, ranks_per_node, devices_per_rank, threads (integers as text); "version.<name>"
  // (driver, cuda_runtime, cublas, nccl, eigen, mpi, ...) and "clock.<name>" (sm_mhz, ...).
  std::map<std::string, std::string> context;
  std::vector<GemmFit> gemm;            // one per dtype that had enough shapes to fit
  std::vector<GemmPoint> gemm_points;   // every measured GEMM
  std::vector<MemoryFit> memory;        // one per pattern
  std::vector<MemoryPoint> memory_points;  // every measured memory-bound kernel
  std::vector<CollectiveFit> collectives;
  std::vector<MeasuredStep> steps;
  std::vector<std::string> notes;       // what the fitter could not do ("gemm fp8: 3 shapes, need 6")
  std::optional<RunsFit> runs_fit;      // fitted to measured training steps (schema 2)
  std::vector<LaunchFit> launch;        // kernel launch and dispatch, one per pattern (schema 3)

  // No measured curves: a profile of runs_fit alone prices with the datasheet model.
  bool has_measurements() const {
    return !gemm.empty() || !gemm_points.empty() || !memory.empty() || !memory_points.empty() ||
           !collectives.empty() || !launch.empty();
  }
  // The fit of a launch pattern, or null.
  const LaunchFit* launch_fit(const std::string& pattern) const {
    for (const auto& f : launch) {
      if (f.pattern == pattern) return &f;
    }
    return nullptr;
  }
  // The host's time to issue one op, as measured: the framework-like dispatch per op where it was
  // measured, else the bare launch; 0 when neither was.
  double host_issue_s_per_op() const {
    if (const LaunchFit* f = launch_fit("dispatch")) return f->per_kernel_s.value;
    if (const LaunchFit* f = launch_fit("launch")) return f->per_kernel_s.value;
    return 0;
  }
  // The shortest time a kernel occupies the GPU when issued back to back (0: not measured).
  double kernel_floor_s() const {
    const LaunchFit* f = launch_fit("back_to_back");
    return f != nullptr ? f->per_kernel_s.value : 0;
  }

  std::string context_value(const std::string& key) const {
    auto it = context.find(key);
    return it == context.end() ? std::string() : it->second;
  }
};

// "<device> (<date>)" from the context (date cut to the day; "unknown device" when there is none).
std::string profile_device_label(const Profile& profile);
// The cost model's name for a profile of runs_fit alone: "calibrated from 6 runs: h800 (2026-12-02)".
std::string runs_fit_source(const Profile& profile);
// The cost model's name for a profile, whatever GPU it then prices: runs_fit_source() for a profile
// of runs alone, else "calibrated: <device> (<date>)" (", datasheet fallback fitted to N runs" when it
// carries a runs fit too). CalibratedCost::source() adds a note when the scenario's GPU is another.
std::string profile_cost_model_name(const Profile& profile);
// Whether `profile` was measured on the GPU `gpu` names: for the host (CPU) backend only on the GPU
// id "host" (capplan validate's stand-in for the machine itself); otherwise
// when a word of the device ("NVIDIA H100 80GB HBM3") is the GPU id's first part ("h100" of
// "h100-sxm-80gb"), or the device is the id. A profile without a device counts as the GPU's own.
bool profile_measured_on(const Profile& profile, const GpuSpec& gpu);

}  // namespace capplan::sim
