// SPDX-License-Identifier: Apache-2.0
// Private helper of the calibrate and validate commands: the flags that describe the measured
// training step (calib::StepShape, whose op list is sim::layer_step_ops), declared once.
#pragma once
#include <CLI/CLI.hpp>
#include <string>

namespace capplan::cli {

struct StepFlags {
  int hidden = 0, heads = 0, kv_heads = 0, seq_len = 0, micro_batch = 0, layers = 0, ffn_hidden = 0;  // 0 = default
  int decode_context = 0;  // > 0: a serving decode step over this many cached tokens
  std::string dtype;  // empty = the backend's default
  bool gated_ffn = false, rmsnorm = false, rope = false, flash_attention = false;
  bool any() const;
};

// Adds --hidden --heads --kv-heads --seq-len --micro-batch --layers --ffn-hidden --dtype
// --gated-ffn --rmsnorm --rope --flash-attention --decode-context to `cmd`; `what` starts each help text.
void add_step_flags(CLI::App* cmd, StepFlags& flags, const std::string& what);

}  // namespace capplan::cli
