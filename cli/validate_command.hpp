// SPDX-License-Identifier: Apache-2.0
// `capplan validate`: its flags (validate_flags.cpp, declared by capplan and by capplan-calibrate)
// and its run (validate_command.cpp, in capplan-calibrate only, with the measurement backends).
#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "io.hpp"
#include "step_flags.hpp"

namespace capplan::cli {

struct ValidateOptions {
  std::string profile;
  std::string backend = "host";
  std::string format = "table";
  std::string gpu;  // catalog id for the datasheet fallback (default: matched from the profile's device)
  StepFlags step;  // the training step to measure; unset = the backend's default
  int iterations = 10;
  double max_error = -1;  // fraction; < 0 = no gate
};

// Adds the `validate` subcommand, its flags filling `opt` (which must outlive the parse).
CLI::App* add_validate_flags(CLI::App& app, ValidateOptions& opt);

// Runs the measured training step and compares it with the profile; returns an Exit code.
int run_validate(const ValidateOptions& opt, const GlobalOptions& global);

}  // namespace capplan::cli
