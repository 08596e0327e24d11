// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "capplan/sim/hardware.hpp"

namespace capplan::sim {

// Mixture of experts: routed experts with top-k routing, optional shared experts, leading dense
// layers. Contract: experts == 0 means a dense model; otherwise top_k in [1, experts] and
// expert_ffn_hidden > 0.
struct MoeSpec {
  int experts = 0;             // routed experts per MoE layer
  int top_k = 0;               // experts each token is routed to
  int expert_ffn_hidden = 0;   // inner size of one expert (gated like the dense FFN)
  int shared_experts = 0;      // always-active experts of expert_ffn_hidden each (DeepSeek)
  int dense_layers = 0;        // leading layers with a dense FFN of ffn_hidden (DeepSeek: 1 or 3)
  int every_n_layers = 1;      // after the dense ones, every n-th layer is MoE, the rest dense
  // Load imbalance: tokens on the busiest expert rank / the mean. 1.0 = balanced, as with
  // token dropping at capacity factor 1.0 or force-balanced benchmark routing; dropless routing
  // with an auxiliary balancing loss runs above 1 (set it when known).
  double capacity_factor = 1.0;
  // Node-limited routing (DeepSeek-V3 Sec. 2.1.2: each token goes to experts on at most M = 4
  // nodes; its tokens cross the network once per target node and are forwarded over NVLink).
  // 0 = unlimited: every routed copy may cross the network.
  int max_nodes_per_token = 0;
  // Expert implementation details that cost HBM traffic in Megatron-Core (gpt-oss):
  // activation_clamp > 0: the gated activation clamps its inputs (gpt-oss: limit 7), which
  // Megatron-Core runs as eager PyTorch before its fused kernel (two out-of-place clamps and a
  // torch.cat over the up-projection output: 8 bytes per element forward, the masked gradient
  // 6 backward). expert_bias: the experts' linears carry biases; the down-projection's is added
  // per expert and concatenated (TEGroupedMLP._apply_bias: 8 bytes per output element forward,
  // the bias and probability gradients read it twice backward: 4).
  double activation_clamp = 0.0;
  bool expert_bias = false;
};

// Multi-head latent attention (DeepSeek-V2/V3): Q and KV projected through low-rank latents.
struct MlaSpec {
  int q_lora_rank = 0;        // 0 = Q projected directly from hidden (DeepSeek-V2-Lite)
  int kv_lora_rank = 0;       // compressed KV latent
  int qk_nope_head_dim = 0;   // per-head query/key dimension without RoPE
  int qk_rope_head_dim = 0;   // per-head decoupled RoPE dimension (shared key)
  int v_head_dim = 0;         // per-head value dimension
};

enum class Attention { standard, mla };  // standard covers MHA, GQA and MQA through kv_heads

// A decoder-only transformer (dense or MoE). Contract: heads % kv_heads == 0, hidden % heads == 0.
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
  int sliding_window = 0;        // tokens each query attends to (0 = the whole causal prefix)
  int sliding_window_every = 1;  // one layer in this many uses the window, the others full attention (gpt-oss: 2)
  int attention_head_dim = 0;    // per-head dimension when it is not hidden/heads (Qwen3, gpt-oss); 0 = hidden/heads
  Attention attention = Attention::standard;
  MlaSpec mla;
  MoeSpec moe;

  int head_dim() const { return attention_head_dim > 0 ? attention_head_dim : hidden / heads; }
  int kv_dim() const { return kv_heads * head_dim(); }
  bool is_moe() const { return moe.experts > 0; }
  // Layer index (0-based) -> whether its FFN is a mixture of experts.
  bool is_moe_layer(int layer) const {
    return is_moe() && layer >= moe.dense_layers && (layer - moe.dense_layers) % moe.every_n_layers == 0;
  }
  int moe_layer_count() const;
  // Parameter counts from the shapes (norm weights included; biases left out).
  double attention_params() const;      // one layer's attention block (+ 2 norms)
  double dense_ffn_params() const;      // one dense FFN of ffn_hidden
  double expert_params() const;         // one expert of expert_ffn_hidden
  double moe_ffn_params() const;        // one MoE FFN: router + all routed + shared experts
  double moe_active_ffn_params() const; // one MoE FFN as a token sees it: router + top_k + shared
  double layer_params() const;          // one dense layer (attention + dense FFN)
  double layers_params() const;         // all layers, dense and MoE
  double embedding_params() const;      // input embedding (vocab x hidden)
  double output_params() const;         // 0 when tied
  double total_params() const;
  double active_params() const;         // parameters one token passes through (= total when dense)
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

// The kernels that compute the loss (softmax cross-entropy over the vocabulary, fp32 math on
// 16-bit logits). HBM bytes per logit element, forward + backward (docs/model.md, section 1):
// unfused: Megatron's VocabParallelCrossEntropy as separate PyTorch ops (Megatron-LM's default):
//          cast 6, max 4, subtract 8, exp 8, sum 4, normalise 8 | scale by dloss 8, cast back 6;
// fused:   Megatron-Core's cross_entropy_loss_fusion (jit-fused; NeMo 2 and Megatron-Bridge turn
//          it on): cast+max 6, subtract+exp+sum 8, normalise 8 | scale 8, cast back 6;
// te:      Transformer Engine's parallel cross-entropy (cross_entropy_fusion_impl "te"): an online
//          softmax pass over the 16-bit logits, then one pass writing the gradient in place:
//          2 + 2 + 2 | scale the stored gradient 4;
// eager:   torch.nn.functional.cross_entropy on .float() logits (torchtitan, llm-foundry):
//          cast 6, log_softmax max/sum/write 16 | nll grad fill 4, log_softmax backward 16,
//          cast back 6.
enum class LossKernel { unfused, fused, te, eager };
const char* to_string(LossKernel k);
std::optional<LossKernel> loss_kernel_from_string(const std::string& s);
struct LossBytes {
  double forward = 0;   // bytes per logit element
  double backward = 0;
};
LossBytes loss_bytes_per_logit(LossKernel k);

// How FP8 training scales each tensor before the cast (Transformer Engine recipes). delayed:
// DelayedScaling, the scale comes from an amax history and the fused cast + transpose records
// this tensor's amax on the fly (read 16-bit 2, write row- and column-major FP8 1 + 1 = 4 bytes
// per element). current: Float8CurrentScaling ("tensorwise"), the scale comes from this tensor's
// own amax, computed by a separate pass before the cast (one more 16-bit read: 6 bytes).
enum class Fp8Recipe { delayed, current };
const char* to_string(Fp8Recipe r);
std::optional<Fp8Recipe> fp8_recipe_from_string(const std::string& s);
double fp8_cast_bytes_per_element(Fp8Recipe r);

// What the scenario asks about: the seam where new workloads plug in. Each kind lowers to its own
// op list and schedule; `pretrain` (the default) is the training step of sim/step_model.hpp.
// Fine-tuning and serving are the next kinds (the scenario parser names them and says they are
// not available yet).
enum class WorkloadKind { pretrain };
const char* to_string(WorkloadKind k);
std::optional<WorkloadKind> workload_kind_from_string(const std::string& s);

struct WorkloadSpec {
  WorkloadKind kind = WorkloadKind::pretrain;
};

struct TrainingJob {
  double tokens = 0;             // total training tokens
  std::int64_t global_batch = 0;  // sequences per optimizer step
  Precision precision = Precision::bf16;
  Framework framework = Framework::megatron;
  // The recipe (data/frameworks.json) the defaults below were resolved from; echoed in output.
  std::string framework_id = "megatron";
  // Compute that overlaps communication runs this much slower (NCCL kernels take SMs and HBM
  // bandwidth): Lee et al. 2025 (arXiv:2507.03114) measure 18.9% on average on A100 and H100
  // (up to 40%). 0 would be ideal overlap.
  double overlap_compute_slowdown = 0.189;
  // Empty: the framework's default (megatron: fused, pytorch: eager).
  std::optional<LossKernel> loss_kernel;

  // Gradients accumulated and reduced over data parallelism in fp32 instead of the 16-bit
  // training precision. Empty: the framework's default. Megatron-LM forces it for bf16 (and FP8,
  // which runs on --bf16): `accumulate_allreduce_grads_in_fp32 = True` in
  // megatron/training/arguments.py; NeMo 2's bf16_mixed plugin sets grad_reduce_in_fp32=True.
  // With fp16 Megatron keeps 16-bit gradient buffers. PyTorch FSDP as torchtitan runs it reduces
  // in fp32 (mixed_precision_reduce = "float32"). What it costs: 4-byte gradient buffers, twice
  // the gradient bytes on the data-parallel reduce(-scatter), a 4-byte gradient read in Adam.
  std::optional<bool> grad_reduce_in_fp32;
  // FP8 scaling recipe (only read when precision is fp8); Megatron-LM's and TE's default.
  Fp8Recipe fp8_recipe = Fp8Recipe::delayed;
  // FP8 parameters (only read when precision is fp8): the model keeps its weights in FP8 and the
  // distributed optimizer or FSDP all-gathers them in FP8 (Megatron --fp8-param-gather, TE
  // fp8_model_init; on in NeMo 2's and Megatron-Bridge's FP8 recipes, off by default in
  // Megatron-LM). Weights take 1 byte plus the cached transpose instead of 16 bits plus an FP8
  // copy and its transpose; gathers move 1 byte per parameter; Adam writes the FP8 weight.
  bool fp8_params = false;

  bool fp8_weights() const { return precision == Precision::fp8 && fp8_params; }
  // Mixed precision: 16-bit (or FP8) compute weights beside fp32 master weights in the optimizer.
  // fp32 / tf32 training holds one fp32 copy of each weight, which the optimizer updates in place.
  bool mixed_precision() const { return precision != Precision::fp32 && precision != Precision::tf32; }
  // Bytes per parameter of the weights a GPU holds for compute (FP8 training adds the FP8 copy
  // and its transpose to the 16-bit weight; FP8 parameters are 1 byte plus the transpose), and of
  // one parameter as the model stores and gathers it.
  double weight_bytes() const {
    if (precision != Precision::fp8) return element_bytes(precision);
    return fp8_params ? 1.0 + 1.0 : 2.0 + 2.0;
  }
  double gathered_param_bytes() const {
    if (precision == Precision::fp8) return fp8_params ? 1.0 : 2.0;
    return element_bytes(precision);
  }
  // Adam's state per parameter: fp32 master, momentum and variance under mixed precision
  // (Rajbhandari et al. 2020, Sec. 3.1: K = 12); momentum and variance alone in fp32 training.
  double optimizer_state_bytes() const { return mixed_precision() ? 12.0 : 8.0; }
  // HBM bytes of one Adam step per parameter: read and write the fp32 state (master, m, v; in
  // fp32 training the weight itself, m, v), read the gradient, and under mixed precision write
  // the compute weight: 12 + 12 + 2 + 2 = 28 with 16-bit gradients, 30 with fp32 ones.
  double adam_step_bytes() const {
    const double state = mixed_precision() ? 12.0 : 4.0 + 8.0;
    return 2.0 * state + gradient_bytes() + (mixed_precision() ? gathered_param_bytes() : 0.0);
  }
  // Bytes per parameter a checkpoint writes: the model's weights as stored (16-bit, FP8 with FP8
  // parameters, fp32) and the optimizer state (Megatron's distributed optimizer saves the fp32
  // master, momentum and variance).
  double checkpoint_bytes_per_param() const { return gathered_param_bytes() + optimizer_state_bytes(); }

  LossKernel loss() const {
    return loss_kernel.value_or(framework == Framework::pytorch ? LossKernel::eager : LossKernel::fused);
  }
  bool fp32_gradients() const {
    if (precision == Precision::fp32 || precision == Precision::tf32) return true;
    return grad_reduce_in_fp32.value_or(precision != Precision::fp16);
  }
  // Bytes of one gradient element in the gradient buffers and on the data-parallel reduction.
  double gradient_bytes() const { return fp32_gradients() ? 4.0 : 2.0; }
};

}  // namespace capplan::sim
