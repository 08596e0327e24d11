// SPDX-License-Identifier: Apache-2.0
#include "validate_command.hpp"

namespace capplan::cli {

CLI::App* add_validate_flags(CLI::App& app, ValidateOptions& opt) {
  auto* cmd = app.add_subcommand("validate", "Run the measured training step and compare it with the profile's "
                                             "prediction, per component");
  cmd->add_option("--profile", opt.profile, "Profile written by capplan calibrate")->required()->type_name("FILE");
  cmd->add_option("--backend", opt.backend, "Where to run the step: host or cuda")
      ->check(CLI::IsMember({"host", "cuda"}));
  cmd->add_option("--format", opt.format, "Output format: table or json")->check(CLI::IsMember({"table", "json"}));
  add_step_flags(cmd, opt.step, "Training step");
  cmd->add_option("--iterations", opt.iterations, "Measured steps (default 10; median reported)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--gpu", opt.gpu, "Catalog GPU id for the datasheet fallback (default: from the profile)");
  cmd->add_option("--max-error", opt.max_error,
                  "Exit 3 when |predicted - measured| / measured exceeds this fraction (e.g. 0.15)")
      ->check(CLI::NonNegativeNumber);
  return cmd;
}

}  // namespace capplan::cli
