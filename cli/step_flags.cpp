// SPDX-License-Identifier: Apache-2.0
#include "step_flags.hpp"

#include <algorithm>

#include "capplan/calibrate/calibration_run.hpp"
#include "capplan/sim/layer_step.hpp"
#include "io.hpp"

namespace capplan::cli {

bool StepFlags::any() const {
  return hidden > 0 || heads > 0 || kv_heads > 0 || seq_len > 0 || micro_batch > 0 || layers > 0 || ffn_hidden > 0 ||
         !dtype.empty() || gated_ffn || rmsnorm || rope || flash_attention;
}

void add_step_flags(CLI::App* cmd, StepFlags& f, const std::string& what) {
  cmd->add_option("--hidden", f.hidden, what + ": hidden size (default host 512, cuda 4096)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--heads", f.heads, what + ": attention heads (default host 8, cuda 32)")->check(CLI::PositiveNumber);
  cmd->add_option("--kv-heads", f.kv_heads, what + ": key/value heads for GQA (default: heads)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--seq-len", f.seq_len, what + ": sequence length (default host 256, cuda 2048)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--micro-batch", f.micro_batch, what + ": micro-batch size (default 1)")->check(CLI::PositiveNumber);
  cmd->add_option("--layers", f.layers, what + ": layers in the stack (default 1)")->check(CLI::PositiveNumber);
  cmd->add_option("--ffn-hidden", f.ffn_hidden, what + ": FFN hidden size (default 4 x hidden)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--dtype", f.dtype, what + ": GEMM dtype fp32, bf16, fp16 or fp8 (default host fp32, cuda bf16)")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16", "fp8"}));
  cmd->add_flag("--gated-ffn", f.gated_ffn, what + ": SwiGLU FFN instead of GELU");
  cmd->add_flag("--rmsnorm", f.rmsnorm, what + ": RMSNorm instead of LayerNorm");
  cmd->add_flag("--rope", f.rope, what + ": rotary embedding of Q and K");
  cmd->add_flag("--flash-attention", f.flash_attention,
                what + ": fused (flash) attention instead of explicit scores + softmax (not on the host backend)");
}

std::optional<calib::StepShape> step_from_flags(const StepFlags& f, const std::string& backend) {
  auto step = calib::default_step_shape(backend, false);
  if (f.hidden > 0) step.hidden = f.hidden;
  if (f.heads > 0) step.heads = f.heads;
  if (f.kv_heads > 0) step.kv_heads = f.kv_heads;
  if (f.seq_len > 0) step.seq_len = f.seq_len;
  if (f.micro_batch > 0) step.micro_batch = f.micro_batch;
  if (f.layers > 0) step.layers = f.layers;
  step.ffn_hidden = f.ffn_hidden > 0 ? f.ffn_hidden : (f.hidden > 0 ? 4 * f.hidden : step.ffn_hidden);
  if (auto p = sim::precision_from_string(f.dtype)) step.dtype = *p;
  step.gated_ffn = step.gated_ffn || f.gated_ffn;
  step.rmsnorm = step.rmsnorm || f.rmsnorm;
  step.rope = step.rope || f.rope;
  step.flash_attention = step.flash_attention || f.flash_attention;
  if (auto d = sim::check(calib::layer_step_shape(step)); has_errors(d)) {
    for (auto& x : d) {  // "step/seq_len" -> "--seq-len"
      x.where = "--" + x.where.substr(x.where.find('/') + 1);
      std::replace(x.where.begin(), x.where.end(), '_', '-');
    }
    print_diagnostics(d);
    return std::nullopt;
  }
  return step;
}

}  // namespace capplan::cli
