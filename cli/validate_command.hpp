// SPDX-License-Identifier: Apache-2.0
// `capplan validate`: its flags (validate_flags.cpp, declared by capplan and by capplan-calibrate)
// and its run (validate_command.cpp, in capplan-calibrate only, with the measurement backends).
#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "io.hpp"

namespace capplan::cli {

struct ValidateOptions {
  std::string profile;
  std::string backend = "host";
  std::string format = "table";
  std::string gpu;  // catalog id for the datasheet fallback (default: matched from the profile's device)
  int hidden = 0, heads = 0, seq_len = 0, micro_batch = 0, layers = 0, ffn_hidden = 0;  // 0 = default
  int iterations = 10;
  double max_error = -1;  // fraction; < 0 = no gate
};

// Adds the `validate` subcommand, its flags filling `opt` (which must outlive the parse).
CLI::App* add_validate_flags(CLI::App& app, ValidateOptions& opt);

// Runs the measured training step and compares it with the profile; returns an Exit code.
int run_validate(const ValidateOptions& opt, const GlobalOptions& global);

}  // namespace capplan::cli
