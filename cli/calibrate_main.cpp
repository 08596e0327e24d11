// SPDX-License-Identifier: Apache-2.0
// capplan-calibrate: `capplan calibrate` and `capplan validate` with the measurement backends linked
// in (host: Eigen + MPI; cuda, when built: CUDA runtime, cuBLASLt, NCCL). capplan runs it in its own
// place for those two commands (calibrate_program.hpp), so capplan itself loads none of them. Run
// directly it takes the same arguments: `capplan-calibrate calibrate --backend cuda --quick`.
#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "app_main.hpp"
#include "calibrate_command.hpp"
#include "validate_command.hpp"

int main(int argc, char** argv) {
  using namespace capplan::cli;
  CLI::App app{"capplan-calibrate: the measurement commands of capplan (calibrate, validate)", "capplan-calibrate"};
  GlobalOptions global;
  add_common_options(app, "capplan-calibrate", global);

  CalibrateOptions calibrate;
  ValidateOptions validate;
  const std::vector<Command> commands = {
      {add_calibrate_flags(app, calibrate), [&] { return run_calibrate(calibrate, global); }},
      {add_validate_flags(app, validate), [&] { return run_validate(validate, global); }},
  };
  return run_app(app, commands, argc, argv);
}
