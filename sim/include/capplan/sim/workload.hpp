// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "capplan/sim/hardware.hpp"

namespace capplan::sim {

// A dense decoder-only transformer. Contract: heads % kv_heads == 0, hidden % heads == 0.
struct ModelSpec {
  std::string name;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;  // == heads for MHA, 1 for MQA, in between for GQA
  int ffn_hidden = 0;
  int vocab = 0;
  int seq_len = 0;
  bool gated_ffn = false;        // SwiGLU-style: three FFN matrices instead of two
  bool tied_embeddings = false;  // output layer shares the input embedding matrix
  bool dropout = false;          // dropout masks kept for backward (GPT-3/Megatron style)
  bool flash_attention = true;   // fused attention: no s^2 activations kept or written to HBM
  bool rmsnorm = false;          // RMSNorm instead of LayerNorm (Llama family)
  bool rope = false;             // rotary position embedding applied to Q and K in every layer

  int head_dim() const { return hidden / heads; }
  int kv_dim() const { return kv_heads * head_dim(); }
  // Parameter counts from the shapes (biases and norm weights included in layer_params).
  double layer_params() const;
  double embedding_params() const;  // input embedding (vocab x hidden)
  double output_params() const;     // 0 when tied
  double total_params() const;
};

// How the framework runs the element-wise parts of a layer.
// megatron: fused kernels (Megatron-LM / Megatron-Core / NeMo with Apex and Transformer Engine:
//           one kernel per norm, RoPE, activation, bias-dropout-add);
// pytorch:  eager PyTorch modules as in torchtitan, llm-foundry, fms-fsdp (each tensor operation
//           its own kernel and HBM round trip: RMSNorm as six kernels in fp32, RoPE through complex
//           views, SwiGLU as silu + mul, a copy for the attention output layout).
enum class Framework { megatron, pytorch };
const char* to_string(Framework f);
std::optional<Framework> framework_from_string(const std::string& s);

struct TrainingJob {
  double tokens = 0;             // total training tokens
  std::int64_t global_batch = 0;  // sequences per optimizer step
  Precision precision = Precision::bf16;
  Framework framework = Framework::megatron;
};

}  // namespace capplan::sim
