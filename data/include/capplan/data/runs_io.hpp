// SPDX-License-Identifier: Apache-2.0
#pragma once
// A team's measured training steps, the input of `capplan calibrate --from-runs FILE`
// (docs/calibration.md, "From your own runs"; the README has a template). JSON
// ({"format": "capplan-runs/1", "runs": [...]}) or CSV (a header with scenario, one measurement
// column and an optional label). Contract: every problem is collected and named (file, run index
// or line, field, value); a measurement is a finite positive number; unknown keys and columns are
// errors; every run's scenario is on the same GPU type. Scenario paths are relative to the runs file.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "capplan/data/catalog.hpp"
#include "capplan/sim/workload/result.hpp"
#include "capplan/sim/workload/scenario.hpp"

namespace capplan::data {

inline constexpr const char* kRunsFormat = "capplan-runs/1";

// What was measured: the optimizer step time (seconds), the whole job's tokens per second, or
// tokens per second per GPU.
enum class RunMetric { step_time_s, tokens_per_s, tokens_per_s_per_gpu };
const char* to_string(RunMetric m);  // the file's key: "step_time_s", ...

struct MeasuredRun {
  std::string label;  // the file's, or "run N" (1-based)
  std::string where;  // "runs.json#/runs/2" or "runs.csv:4"
  sim::Scenario scenario;
  RunMetric metric = RunMetric::step_time_s;
  double value = 0;  // in the metric's unit
};

struct RunsFile {
  std::vector<MeasuredRun> runs;
  std::string gpu_id;  // the one GPU type of every run
  std::string note;    // the file's "note" (JSON), e.g. where the numbers come from
};

// Parses `text` as the runs file `file` (CSV when its name ends in .csv, else JSON); scenario
// paths are read relative to file's folder.
Result<RunsFile> parse_runs(std::string_view text, const std::filesystem::path& file, const Catalogs& catalogs);

// Reads and parses the runs file at `file`.
Result<RunsFile> load_runs(const std::filesystem::path& file, const Catalogs& catalogs);

}  // namespace capplan::data
