// SPDX-License-Identifier: Apache-2.0
#include "calibrate_command.hpp"
#include "commands.hpp"

namespace capplan::cli {

CLI::App* add_calibrate_flags(CLI::App& app, CalibrateOptions& opt) {
  auto* cmd = app.add_subcommand("calibrate", "Measure this machine (GEMMs, memory, collectives, a training step) "
                                              "and write a calibrated profile");
  cmd->add_option("--backend", opt.backend, "Measurement backend: host (CPU: Eigen + MPI) or cuda")
      ->check(CLI::IsMember({"host", "cuda"}));
  cmd->add_flag("--quick", opt.quick, "A small sweep (host: well under a minute)");
  cmd->add_option("--for-scenario", opt.scenarios,
                  "Also measure exactly the GEMM shapes capplan generates for this scenario (repeatable)")
      ->type_name("FILE");
  cmd->add_flag("--collectives-only", opt.collectives_only,
                "Only the collectives (run under mpirun -np N with N >= 2)");
  cmd->add_option("--out", opt.out, "Profile to write (default capplan-profile.json); the records go next to it "
                                    "as <name>.records.json")
      ->type_name("FILE")
      ->check(output_file_name());
  add_step_flags(cmd, opt.step, "Training step to measure (and whose GEMMs to measure; default: what capplan "
                               "validate runs)");
  cmd->add_flag("--resume", opt.resume, "Continue from the records file of an interrupted run");
  cmd->add_option("--from-runs", opt.from_runs,
                  "Fit the datasheet model to measured training steps (a runs file, JSON or CSV; README, "
                  "\"Calibrating from your own runs\") instead of measuring this machine")
      ->type_name("FILE");
  cmd->add_option("--fit-only", opt.fit_only,
                  "Measure nothing: fit the profile (--out) to a records file, also one cut off in the middle of a "
                  "sweep (a stopped, timed-out or lost run); the profile's notes say what was not measured")
      ->type_name("RECORDS")
      ->excludes("--resume")
      ->excludes("--from-runs");
  cmd->add_option("--format", opt.format, "Summary format: table (progress bar on a terminal) or json (quiet)")
      ->check(CLI::IsMember({"table", "json"}));
  return cmd;
}

}  // namespace capplan::cli
