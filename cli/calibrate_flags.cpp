// SPDX-License-Identifier: Apache-2.0
#include "calibrate_command.hpp"

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
      ->type_name("FILE");
  cmd->add_option("--hidden", opt.hidden, "Training step to measure (and whose GEMMs to measure): hidden size "
                                          "(default: what capplan validate runs: host 512, cuda 4096)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--heads", opt.heads, "Training step: attention heads")->check(CLI::PositiveNumber);
  cmd->add_option("--seq-len", opt.seq_len, "Training step: sequence length")->check(CLI::PositiveNumber);
  cmd->add_option("--micro-batch", opt.micro_batch, "Training step: micro-batch size")->check(CLI::PositiveNumber);
  cmd->add_option("--layers", opt.layers, "Training step: layers")->check(CLI::PositiveNumber);
  cmd->add_option("--ffn-hidden", opt.ffn_hidden, "Training step: FFN hidden size (default 4 x hidden)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--resume", opt.resume, "Continue from the records file of an interrupted run");
  cmd->add_option("--format", opt.format, "Summary format: table (progress bar on a terminal) or json (quiet)")
      ->check(CLI::IsMember({"table", "json"}));
  return cmd;
}

}  // namespace capplan::cli
