// SPDX-License-Identifier: Apache-2.0
#include "step_flags.hpp"

#include <algorithm>


namespace capplan::cli {

bool StepFlags::any() const {
  return hidden > 0 || heads > 0 || kv_heads > 0 || seq_len > 0 || micro_batch > 0 || layers > 0 || ffn_hidden > 0 ||
         !dtype.empty() || gated_ffn || rmsnorm || rope || flash_attention || decode_context > 0;
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
  cmd->add_option("--decode-context", f.decode_context,
                  what + " as a serving decode step instead: --micro-batch sequences each decoding one token over "
                         "this many cached tokens, forward only (the serving pass's layer)")
      ->check(CLI::PositiveNumber);
}

}  // namespace capplan::cli
