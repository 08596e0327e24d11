// SPDX-License-Identifier: Apache-2.0
// `capplan calibrate`: its flags (calibrate_flags.cpp, declared by capplan and by capplan-calibrate)
// and its run (calibrate_command.cpp, in capplan-calibrate only, with the measurement backends).
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "io.hpp"
#include "step_flags.hpp"

namespace capplan::cli {

struct CalibrateOptions {
  std::string backend = "host";
  bool quick = false;
  std::vector<std::string> scenarios;
  bool collectives_only = false;
  std::string out = "capplan-profile.json";
  bool resume = false;
  std::string format = "table";
  StepFlags step;  // the training step to measure; unset = the backend's default
  std::string from_runs;  // FILE: fit the datasheet model to these measured runs instead of measuring
  std::string fit_only;   // RECORDS: fit a profile to a records file (complete or cut off) without measuring
  bool out_given = false;
};

// Adds the `calibrate` subcommand, its flags filling `opt` (which must outlive the parse).
CLI::App* add_calibrate_flags(CLI::App& app, CalibrateOptions& opt);

// Measures this machine and writes the profile; returns an Exit code.
int run_calibrate(const CalibrateOptions& opt, const GlobalOptions& global);

// --fit-only RECORDS: fits a profile to what a records file holds (calibrate_command.cpp).
int run_calibrate_fit_only(const CalibrateOptions& opt, const GlobalOptions& global);

// --from-runs FILE: fits the datasheet model to a runs file and writes the profile
// (calibrate_from_runs.cpp); returns an Exit code.
int run_calibrate_from_runs(const CalibrateOptions& opt, const GlobalOptions& global);

}  // namespace capplan::cli
