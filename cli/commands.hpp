// SPDX-License-Identifier: Apache-2.0
// The subcommands of capplan, one per file (STYLE.md snippet 5). Each adds itself to the app and
// returns how to run it once the command line has been parsed.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "io.hpp"

namespace capplan::cli {

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;  // returns an Exit code
};

// `global` must outlive the returned command (it is filled by the same parse). calibrate and
// validate are declared in calibrate_command.hpp and validate_command.hpp: their flags are in both
// programs, their runs only in capplan-calibrate.
Command add_estimate_command(CLI::App& app, const GlobalOptions& global);
Command add_catalog_command(CLI::App& app, const GlobalOptions& global);
Command add_validate_published_command(CLI::App& app, const GlobalOptions& global);
Command add_validate_serving_command(CLI::App& app, const GlobalOptions& global);
Command add_search_command(CLI::App& app, const GlobalOptions& global);
Command add_tco_command(CLI::App& app, const GlobalOptions& global);
Command add_serve_command(CLI::App& app, const GlobalOptions& global);

// The scenario file, as a positional argument or --scenario (one_scenario_file picks the one given).
void add_scenario_file_options(CLI::App& cmd, std::string& positional, std::string& option);
// --format, one of `formats` (default: table on a terminal, else json; choose_format).
void add_format_option(CLI::App& cmd, std::string& format, const std::vector<std::string>& formats);
// --out FILE, written atomically (emit).
void add_out_option(CLI::App& cmd, std::string& out);
// The check of every option naming a file to write (--out, --write-error-bands): an empty name is
// invalid input ("--out: must name a file"), not standard output.
CLI::Validator output_file_name();

}  // namespace capplan::cli
