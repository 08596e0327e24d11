// SPDX-License-Identifier: Apache-2.0
// The options the scenario commands (estimate, search, serve, tco) share, declared once.
#include "commands.hpp"

namespace capplan::cli {

void add_scenario_file_options(CLI::App& cmd, std::string& positional, std::string& option) {
  cmd.add_option("scenario", positional, "Scenario JSON file, or - for standard input")->type_name("FILE");
  cmd.add_option("--scenario", option, "Scenario JSON file, or - for standard input")->type_name("FILE");
}

void add_format_option(CLI::App& cmd, std::string& format, const std::vector<std::string>& formats) {
  cmd.add_option("--format", format, "Output format (default: table on a terminal, else json)")
      ->check(CLI::IsMember(formats));
}

void add_out_option(CLI::App& cmd, std::string& out) {
  cmd.add_option("--out", out, "Write the output to this file (atomically) instead of stdout")
      ->type_name("FILE")
      ->check(output_file_name());
}

}  // namespace capplan::cli
