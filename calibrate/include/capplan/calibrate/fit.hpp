// SPDX-License-Identifier: Apache-2.0
#pragma once
// The fitter: measurement records in, a calibrated sim::Profile out (Eigen least squares), and
// the records file (JSON) that lets a fit be redone offline.
// Contract: pure functions, no I/O, no printing; thread-safe. Fits that cannot be made (too few
// records) are skipped with a line in Profile::notes, never an error; an error means the records
// themselves are invalid (non-positive time or size), and names the record.
//
// Note to backends: for GPU tile/wave quantisation put the SM count in
// Context::properties["sm_count"] (decimal text; Context::versions["sm_count"] and
// Context::clocks["sm_count"], where older records kept it, are still read); without it the GEMM
// model has no quantisation term. The collectives fit uses sim::nccl_bus_factor
// (sim/profile.hpp), which calib::bus_factor may simply call.
#include <string>
#include <vector>

#include "capplan/calibrate/records.hpp"
#include "capplan/sim/cost/profile.hpp"
#include "capplan/sim/workload/result.hpp"

namespace capplan::calib {

inline constexpr int kRecordsSchemaVersion = 1;

// Minimum distinct shapes for a GEMM fit (5 parameters plus one degree of freedom), sizes for a
// memory or collective fit (2 parameters plus one).
inline constexpr int kMinGemmShapes = 6;
inline constexpr int kMinSizes = 3;

// All fits plus the context block and the measured GEMM points and steps.
Result<sim::Profile> fit_profile(const Measurements& m);

// The single fits, public for tests and tools. `records` may hold other dtypes/patterns/kinds:
// each function selects its own. An empty optional-like failure (too few records) is a
// Diagnostic whose `where` names the fit ("gemm/bf16").
Result<sim::GemmFit> fit_gemm(const std::vector<GemmRecord>& records, sim::Precision dtype, int wave_units = 0);
Result<sim::MemoryFit> fit_memory(const std::vector<MemoryRecord>& records, const std::string& pattern);
// time of a batch = fixed + kernels x per_kernel over the batches of one launch pattern.
Result<sim::LaunchFit> fit_launch(const std::vector<LaunchRecord>& records, const std::string& pattern);
Result<sim::CollectiveFit> fit_collective(const std::vector<CollectiveRecord>& records, sim::CollectiveKind kind,
                                          int ranks, const std::string& tier);

// The records file: {"schema": "capplan-records", "schema_version": 1, "context": {...},
// "gemms": [...], "memory": [...], "collectives": [...], "steps": [...], "launches": [...]}
// ("launches" optional: records written before the launch sweep have none); every record keeps all
// of its samples and its summary statistics. parse_measurements validates every field (type,
// range, unknown keys are errors) and names it: "records.json#/gemms/3/m: must be > 0; got 0".
std::string measurements_to_json(const Measurements& m);
Result<Measurements> parse_measurements(const std::string& text, const std::string& where);

}  // namespace capplan::calib
