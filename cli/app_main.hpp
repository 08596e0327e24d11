// SPDX-License-Identifier: Apache-2.0
// The main() of capplan and of capplan-calibrate: parses the command line, runs the one subcommand
// given and maps every outcome to the exit codes of CONTRACT.md (CLI11's parse errors are 2, an
// escaped exception is 1).
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "commands.hpp"

namespace capplan::cli {

// What both programs' command lines share: `--version` (printing "<program> <version>"), exactly
// one subcommand, global options accepted after it, and `--data-dir` into `global`.
void add_common_options(CLI::App& app, const std::string& program, GlobalOptions& global);

// `app` has its subcommands added (`commands`); returns the process's exit code.
int run_app(CLI::App& app, const std::vector<Command>& commands, int argc, char** argv);

}  // namespace capplan::cli
