// SPDX-License-Identifier: Apache-2.0
#pragma once
// The sweep a calibration runs (GEMM grid per dtype plus the shapes a scenario needs, memory
// patterns over sizes, collectives over message sizes, the training step), and the loop that
// measures it through a MeasurementBackend with resume and progress reporting.
// Contract: no printing and no file I/O here; the caller persists the records through the
// checkpoint callback (atomically) and shows progress through the progress callback.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "capplan/calibrate/backend.hpp"
#include "capplan/calibrate/records.hpp"
#include "capplan/sim/cost/layer_step.hpp"
#include "capplan/sim/lowering/step_model.hpp"

namespace capplan::calib {

enum class CaseKind { gemm, memory, collective, step, launch };

// One thing to measure. Only the fields of its kind are meaningful.
struct Case {
  CaseKind kind = CaseKind::gemm;
  GemmShape gemm;                                           // gemm
  std::string pattern;                                      // memory: "copy", "norm", "elementwise";
                                                            // launch: "launch", "back_to_back", ...
  double bytes = 0;                                         // memory, collective
  sim::CollectiveKind collective = sim::CollectiveKind::all_reduce;  // collective
  StepShape step;                                           // step
  int kernels = 0;                                          // launch: kernels per batch
  std::string label() const;  // "gemm bf16 m=1024 n=1024 k=1024", for progress lines
};

struct PlanOptions {
  bool quick = false;             // a small grid that finishes in well under a minute on a laptop
  bool collectives_only = false;  // only the collective sweep (mpirun -np N ... --collectives-only)
  std::vector<GemmShape> extra_gemms;  // shapes the simulator generates for planned scenarios
  std::vector<StepShape> steps;        // training steps to measure; empty = default_step_shape()
  double max_memory_bytes = 0;         // 0 = the backend's default (host: 256 MiB, quick: 32 MiB)
  double max_collective_bytes = 0;     // 0 = the backend's default (host: 256 MiB, quick: 16 MiB;
                                       //     cuda: 8 GiB, quick: 1 GiB)
};

// The step `capplan validate` runs by default for a backend ("host": small enough for a CPU).
StepShape default_step_shape(const std::string& backend, bool quick);
// The simulator's description of a measured step (its op list is sim::layer_step_ops).
sim::LayerStepShape layer_step_shape(const StepShape& s);

// The plan, in measuring order. Deterministic: every MPI rank builds the same list.
std::vector<Case> plan_sweep(const MeasurementBackend& backend, const PlanOptions& options);

// Every distinct GEMM shape of a step op list (per dtype; batched attention GEMMs included).
std::vector<GemmShape> gemm_shapes_of(const sim::StepOps& ops);

// True when `m` already holds a record for `c` (resume skips it).
bool already_measured(const Measurements& m, const Case& c);

struct Progress {
  std::size_t done = 0;   // cases finished, including those skipped on resume
  std::size_t total = 0;
  double elapsed_s = 0;
  double eta_s = 0;       // estimated seconds left (0 when nothing measured yet)
  std::string label;      // the case just finished
};
using ProgressFn = std::function<void(const Progress&)>;
// Called after every measured case with all records so far (the caller writes them atomically).
using CheckpointFn = std::function<void(const Measurements&)>;
// Asked before every case; true stops the run there (e.g. after Ctrl-C). Single-rank runs only:
// under MPI every rank must take the same decision, so callers pass none.
using StopFn = std::function<bool()>;

struct RunReport {
  Measurements measurements;
  Diagnostics notes;     // warnings: cases the backend could not measure (unsupported dtype, 1 rank),
                         // each `where` "<case label>: <backend's where>"
  std::size_t measured = 0;
  std::size_t resumed = 0;  // cases already in the records
  std::size_t failed = 0;   // cases refused or failed (one note or more each)
  bool stopped = false;     // the stop callback ended the run before the plan was done
  std::string lost;         // the case after which the backend stopped being healthy(), or empty
};

// Measures every case of `plan` not already in `start`, appending to it. Collective cases run on
// every rank; the others only on rank 0 (other ranks skip them), so all ranks stay in step.
// A case the backend refuses, or that throws (std::bad_alloc: out of memory; any other
// exception: its what()), becomes a warning note naming the case; the run goes on, unless the
// backend is no longer healthy(): the run then ends there with `lost` set. Either way every
// finished case is in `measurements` (and went through `checkpoint`), so a later run given them
// as `start` measures only what is missing. The backend's device_state() is read before the first
// case and after the last one (also when stopped or lost) into Context::clocks as "<key>_before"
// and "<key>_after".
RunReport run_calibration(MeasurementBackend& backend, const std::vector<Case>& plan, Measurements start,
                          const RunOptions& options, const ProgressFn& progress = {},
                          const CheckpointFn& checkpoint = {}, const StopFn& stop = {});

}  // namespace capplan::calib
