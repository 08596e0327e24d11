// SPDX-License-Identifier: Apache-2.0
// The scenario's `model` section: the transformer (dense or MoE, standard or MLA attention).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "capplan/sim/workload/hardware.hpp"

namespace capplan::sim {

// How routed tokens reach their experts' ranks (expert parallelism > 1).
// alltoall: Megatron-Core's MoEAlltoAllTokenDispatcher (token_dispatcher.py, NVIDIA/Megatron-LM
//   @d98e8a6; what Megatron-Bridge's performance recipes set): permute, NCCL all-to-all of the
//   tokens and of their probabilities, then a sort of the received chunks into local-expert order
//   (and the inverse after the experts); dropless, it all-gathers the tokens per expert first.
// deepep: DeepEP's fused dispatch and combine (Megatron-Core's flex dispatcher, NeMo AutoModel):
//   tokens and probabilities in one kernel each way, permuted into expert order after the
//   dispatch; no separate count exchange, probability all-to-all or chunk sort.
enum class MoeDispatcher { alltoall, deepep };

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
  // per expert in eager PyTorch (TEGroupedMLP._apply_bias, Megatron-LM core_r0.17 @d7288711
  // megatron/core/transformer/moe/experts.py: `t + b * p` per local expert with the fp32 routing
  // probabilities, torch.cat, .to(dtype)): forward 28 bytes per output element in 2 launches per
  // expert + 2, backward 40 bytes in 5 per expert + 3 (see lowering/moe.cpp).
  double activation_clamp = 0.0;
  bool expert_bias = false;
  // Token dropping with every expert's input padded to its capacity (Megatron-Core
  // moe_expert_capacity_factor with moe_pad_expert_input_to_capacity; Megatron-Bridge's
  // apply_moe_token_drop: factor 1.0, padded): static shapes. false = dropless (Megatron-Core's
  // default): the tokens per expert are counted on the device, all-gathered over the
  // expert-parallel group and copied to the host before the all-to-all (token_dispatcher.py,
  // MoEAlltoAllTokenDispatcher.preprocess / _maybe_dtoh_and_synchronize).
  bool pad_to_capacity = false;
  // Benchmark routing that draws every token's experts at random (Megatron-Core
  // moe_router_force_load_balancing): balanced on average, and the busiest expert-parallel rank
  // carries random_routing_busiest_rank (variability.hpp) times the mean on top of
  // capacity_factor. No effect when padded to capacity (every expert runs exactly its capacity).
  bool random_routing = false;
  MoeDispatcher dispatcher = MoeDispatcher::alltoall;
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

// The Mamba-2 mixer of a hybrid model's `M` layers (Dao & Gu 2024, "Transformers are SSMs",
// arXiv:2405.21060; Megatron-Core megatron/core/ssm/mamba_mixer.py, NVIDIA/Megatron-LM @d98e8a6):
// in_proj packs [z, x, B, C, dt] (2 d_inner + 2 groups state + heads columns), a depthwise causal
// conv1d of conv_kernel taps over [x, B, C], the chunked SSD scan (chunks of `chunk` tokens),
// gating by silu(z), a grouped RMSNorm and out_proj back to hidden. Contract (Megatron-Core's
// asserts): heads % groups == 0; under tensor parallelism heads and groups divisible by tp.
struct MambaSpec {
  int heads = 0;        // mamba_num_heads; d_inner = heads * head_dim
  int head_dim = 64;    // mamba_head_dim (P)
  int state = 128;      // mamba_state_dim (N)
  int groups = 8;       // mamba_num_groups of B and C
  int conv_kernel = 4;  // d_conv
  int chunk = 128;      // chunk_size of the SSD kernels
  // The mixer's generation. 2: the SSD mixer above, the one lowered. 1: Mamba-1's selective scan
  // (Gu & Dao 2023; Jamba, Falcon Mamba), which has no lowering of its own: priced as Mamba-2,
  // and the estimate says so (FindingCode::mamba1_priced_as_mamba2).
  int version = 2;
  std::int64_t d_inner() const { return static_cast<std::int64_t>(heads) * head_dim; }
  std::int64_t conv_dim() const { return d_inner() + 2LL * groups * state; }  // x, B, C
  std::int64_t in_proj_dim() const { return 2 * d_inner() + 2LL * groups * state + heads; }  // z, x, B, C, dt
};

// One layer of a hybrid model's pattern (Megatron-Core's hybrid_override_pattern symbols,
// megatron/core/ssm/mamba_hybrid_layer_allocation.py @d98e8a6): each symbol is a layer of its own
// with its own pre-norm and residual.
enum class HybridLayer : char { mamba = 'M', attention = '*', mlp = '-', moe = 'E' };

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
  // Hybrid model (Megatron-Core's hybrid_override_pattern): one symbol per layer, M (Mamba-2
  // mixer), * (self-attention), - (MLP of ffn_hidden), E (MoE FFN); empty = every layer is
  // attention + FFN (dense or MoE as `moe` says). Contract when set: layers == size, only those
  // symbols, `E` only with moe.experts > 0, `M` only with mamba.heads > 0.
  std::string layer_pattern;
  MambaSpec mamba;

  int head_dim() const { return attention_head_dim > 0 ? attention_head_dim : hidden / heads; }
  // 64-bit: kv_heads (up to 1e5) x head_dim (up to 1e5) exceeds INT_MAX.
  std::int64_t kv_dim() const { return static_cast<std::int64_t>(kv_heads) * head_dim(); }
  bool is_moe() const { return moe.experts > 0; }
  bool is_hybrid() const { return !layer_pattern.empty(); }
  // Whether layer `layer` (0-based) of a hybrid pattern is of `kind` (false outside the pattern).
  bool is_layer(int layer, HybridLayer kind) const {
    return layer >= 0 && layer < static_cast<int>(layer_pattern.size()) &&
           layer_pattern[static_cast<std::size_t>(layer)] == static_cast<char>(kind);
  }
  // Layer index (0-based) -> whether its FFN is a mixture of experts (hybrid: an `E` layer).
  bool is_moe_layer(int layer) const {
    if (is_hybrid()) return is_moe() && is_layer(layer, HybridLayer::moe);
    return is_moe() && layer >= moe.dense_layers && (layer - moe.dense_layers) % moe.every_n_layers == 0;
  }
  int moe_layer_count() const;
  // Layers of each kind, as the op list's scopes count them: attention blocks (Scope::layer:
  // every layer, or a hybrid's `*`), dense FFNs (every non-MoE layer, or a hybrid's `-`) and
  // Mamba mixers (a hybrid's `M`; 0 otherwise).
  int attention_layer_count() const;
  int dense_ffn_layer_count() const;
  int mamba_layer_count() const;
  // Parameter counts from the shapes (norm weights included; biases left out).
  double attention_params() const;      // one layer's attention block (+ 2 norms; hybrid: its 1)
  double dense_ffn_params() const;      // one dense FFN of ffn_hidden (hybrid: + its norm)
  double ffn_norm_params() const;       // a hybrid FFN layer's own pre-norm (0 when not hybrid)
  double mamba_params() const;          // one Mamba-2 layer (mixer + its pre-norm)
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

}  // namespace capplan::sim
