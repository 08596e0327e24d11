// SPDX-License-Identifier: Apache-2.0
// The subcommands of capplan, one per file (STYLE.md snippet 5). Each adds itself to the app and
// returns how to run it once the command line has been parsed.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>

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

}  // namespace capplan::cli
