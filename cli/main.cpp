// SPDX-License-Identifier: Apache-2.0
// capplan: LLM training cost and capacity planner. Parses the command line, runs one subcommand
// and maps every outcome to the exit codes of CONTRACT.md. calibrate and validate run in the
// measurement program capplan-calibrate (calibrate_program.hpp), so that this one links no
// measurement backend: no MPI, CUDA, cuBLASLt or NCCL is loaded to estimate or search.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "app_main.hpp"
#include "calibrate_command.hpp"
#include "calibrate_program.hpp"
#include "commands.hpp"
#include "validate_command.hpp"

int main(int argc, char** argv) {
  using namespace capplan::cli;
  CLI::App app{"capplan: LLM training cost and capacity planner", "capplan"};
  GlobalOptions global;
  add_common_options(app, "capplan", global);

  // Parsed here for --help and flag errors; capplan-calibrate parses the same arguments again and runs them.
  CalibrateOptions calibrate;
  ValidateOptions validate;
  const auto in_calibrate_program = [argc, argv] { return run_in_calibrate_program(argc, argv); };

  const std::vector<Command> commands = {
      add_estimate_command(app, global),
      add_catalog_command(app, global),
      add_validate_published_command(app, global),
      add_validate_serving_command(app, global),
      add_search_command(app, global),
      add_tco_command(app, global),
      add_serve_command(app, global),
      {add_calibrate_flags(app, calibrate), in_calibrate_program},
      {add_validate_flags(app, validate), in_calibrate_program},
  };
  return run_app(app, commands, argc, argv);
}
