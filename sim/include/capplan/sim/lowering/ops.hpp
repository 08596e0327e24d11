// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

#include "capplan/sim/workload/hardware.hpp"
#include "capplan/sim/units.hpp"

namespace capplan::sim {

// C[m x n] = A[m x k] * B[k x n], `batch` times (batched GEMMs for attention).
// Contract: FLOPs = 2*m*n*k*batch; operands and result in `dtype` (fp32 accumulate).
struct GemmOp {
  const char* name = "";
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t batch = 1;
  Precision dtype = Precision::bf16;
  bool fused_attention = false;  // part of a fused (flash) attention kernel, not a cuBLAS GEMM
  // Bytes per element of B (the weight) when it is stored narrower than `dtype` and expanded in
  // the kernel (weight-only quantisation in serving: W8A16, W4A16 with its group scales); 0: B
  // is in `dtype`.
  double weight_bytes = 0;
  // A fused attention kernel of the FlashAttention-1 generation (AttentionKernel::flash1).
  bool attention_v1 = false;
  // A fused attention kernel's shape as its rate depends on it (DatasheetCost::attention_shape):
  // the causal sequence each query block sweeps (the sequence, the window of a sliding-window
  // model, a packed document's length, a context-parallel chunk), and the head dimension. 0: not
  // known, priced at the catalog's reference shape (2k tokens, head dimension 128).
  std::int64_t attention_tokens = 0;
  std::int64_t attention_head_dim = 0;

  units::Flops flops() const;
  // Minimum HBM traffic: read A and B (B in weight_bytes when set), write C once.
  units::Bytes min_bytes() const;
};

// An element-wise or reduction kernel whose time is set by the bytes it moves.
// Where a memory-bound op moves its bytes: HBM (a kernel), over the host link (PCIe) in either
// direction, or in host memory (the optimizer step run on the CPU under offload).
enum class MemoryLink { hbm, host_to_device, device_to_host, host };

struct MemoryOp {
  const char* name = "";
  units::Bytes bytes;
  MemoryLink link = MemoryLink::hbm;
  // Of what the op writes, the bytes that stay in GPU memory after a serving pass (a KV-cache
  // write: the new tokens' cache entries), per repetition. Replica memory folds them.
  units::Bytes kept{};
};

enum class CollectiveKind { all_reduce, all_gather, reduce_scatter, all_to_all, send_recv };
const char* to_string(CollectiveKind k);
// The inverse of to_string; empty for an unknown name.
std::optional<CollectiveKind> collective_kind_from_string(std::string_view name);

// Where the ranks of a communicator sit on the topology's tiers (place_group computes it).
// "node" here is one innermost (NVLink) domain: 8 GPUs of an HGX node, 72 of an NVL72 rack.
// Contract: size <= ranks_per_node * nodes; span[0] == ranks_per_node when tier >= 0.
struct GroupPlacement {
  int size = 1;
  int ranks_per_node = 1;  // group members that share one innermost domain (talk over NVLink)
  int nodes = 1;           // distinct innermost domains the group spans
  // The outermost tier the group crosses (0 = inside one innermost domain). -1: written by hand
  // without a topology; the collective model then reads nodes > 1 as crossing tier 1.
  int tier = -1;
  // span[i]: tier-(i-1) domains the group spans inside one tier-i domain (span[0]: ranks per
  // innermost domain); 1 for tiers it does not cross.
  std::array<int, kMaxTiers> span{};
  bool spans_nodes() const { return nodes > 1; }
};

// Contract: `bytes` is the full buffer in nccl-tests' sense: for all-reduce the vector reduced on
// every rank; for all-gather the gathered result (each rank contributes bytes/size); for
// reduce-scatter the input (each rank keeps bytes/size); for all-to-all what each rank sends in
// total; for send/recv the message.
// Which parallel dimension a communicator belongs to (for the step-time breakdown).
enum class Axis { tp, pp, dp, ep, cp };

struct CollectiveOp {
  const char* name = "";
  CollectiveKind kind = CollectiveKind::all_reduce;
  units::Bytes bytes;
  GroupPlacement group;
  Axis axis = Axis::tp;
  // An all-to-all run by a fused expert-parallel kernel (DeepEP / HybridEP dispatch or combine)
  // instead of NCCL: `bytes` are the hidden vectors the rank receives, one per token and
  // destination rank (its own included). Inside one NVLink domain it is priced at the GPU's
  // fused-kernel rate (GpuSpec::ep_fused_bandwidth); across nodes as an NCCL all-to-all.
  bool fused_ep = false;
  // Whether this op is priced as a fused EP kernel: marked so, and inside one NVLink domain.
  bool fused_ep_in_node() const { return fused_ep && !group.spans_nodes(); }
};

using Op = std::variant<GemmOp, MemoryOp, CollectiveOp>;

// Which part of a step an op belongs to, so the schedule can place its time.
enum class Phase { forward, backward, recompute, step };
// layer: once per transformer layer per micro-batch (attention block, norms, residuals);
// dense_ffn / moe_ffn: once per layer of that FFN kind per micro-batch; embedding: first stage,
// per micro-batch; output: last stage (final norm, logits, loss), per micro-batch; pipeline: per
// stage boundary per micro-batch per virtual chunk; data_parallel and optimizer: once per step;
// mamba: once per Mamba-2 layer of a hybrid model (its norm, residual and mixer) per micro-batch.
// In a hybrid model layer / dense_ffn / moe_ffn are its attention, MLP and MoE layers, each with
// its own norm and residual (ModelSpec::layer_pattern).
enum class Scope { layer, dense_ffn, moe_ffn, embedding, output, pipeline, data_parallel, optimizer, mamba };
// Scopes there are; `mamba` is the last enumerator. What each scope is (how often it runs, which
// layer count repeats it) is one row of kScopeTraits (scope.hpp).
inline constexpr std::size_t kScopeCount = static_cast<std::size_t>(Scope::mamba) + 1;

// What an op is, typed, so that schedules, cost breakdowns and tests never match op names.
enum class OpRole {
  linear,          // a weight GEMM (forward, dgrad or wgrad)
  attention_core,  // Q K^T and P V (fused or batched GEMMs)
  softmax,         // unfused attention softmax (+ attention dropout)
  norm,            // LayerNorm / RMSNorm (fused or eager passes)
  activation,      // GeLU / SwiGLU (fused or eager passes) of a dense FFN or shared experts
  expert_activation,  // the routed experts' activation (Megatron-Core's `moe_act` module)
  residual,        // residual add
  dropout,         // hidden dropout (bias-dropout-add)
  rope,            // rotary embedding of Q and K
  latent_norm,     // MLA's norms of the Q and KV latents
  copy,            // a layout copy (eager frameworks make the attention output contiguous)
  moe_permute,     // token permutation into expert order and back
  moe_elementwise, // element-wise passes around the experts (clamp, bias)
  fp8_cast,        // Transformer Engine's cast + transpose to FP8
  embedding,       // embedding lookup
  loss,            // softmax cross-entropy over the vocabulary
  checkpoint,      // no kernel: the layer input kept when the layer is recomputed
  collective,      // TP / EP / CP / DP collectives (kind and axis in the CollectiveOp)
  p2p,             // pipeline send / recv
  optimizer,       // the optimizer step
  adapter,         // a LoRA adapter's GEMMs and its add into the base output (fine-tuning)
  dequantize,      // a 4-bit frozen base weight expanded to 16 bits before its GEMM (QLoRA)
  ssm,             // a Mamba-2 mixer's conv1d and SSD scan (hybrid models)
  kv_cache,        // serving: the new tokens' keys and values written into the paged KV cache
  host_copy,       // offload: a parameter or gradient shard copied between host and GPU memory
};
const char* to_string(OpRole r);

// One op of the step with everything derived from it: time (by pricing `op`), FLOPs and the
// bytes of the tensors it keeps for the backward pass.
struct StepOp {
  Op op;
  Phase phase = Phase::forward;
  Scope scope = Scope::layer;
  double count = 1.0;  // repetitions within its scope (e.g. 2 all-reduces per layer forward)
  OpRole role = OpRole::linear;
  // FLOPs of all `count` repetitions as the model-FLOPs convention counts them (Megatron's:
  // attention over the full s x s square, or the window; GEMMs on the unreplicated, mean-loaded
  // shapes), for one micro-batch on one GPU; 0 for memory-bound ops and collectives. Model FLOPs
  // sum the forward and backward ops, hardware FLOPs also the recompute ones.
  double flops = 0;
  // Bytes of the tensors this op produces that the backward pass needs, for one micro-batch on
  // one GPU (forward ops only; all `count` repetitions). When the op is recomputed they are not
  // held between forward and backward: they exist only while one layer is rematerialised.
  double saved = 0;
  // Forward ops only: run again (Phase::recompute) before the backward pass, so `saved` is not
  // held between the two (RecomputePolicy).
  bool recomputed = false;
  // Backward ops of a column-parallel linear under tensor parallelism: its input-gradient
  // collective is issued asynchronously and runs while the linear's own GEMMs do
  // (TrainingJob::tp_async_dgrad). `tp_async`: that collective; `tp_window`: the GEMMs it hides
  // behind (the weight gradient; with sequence parallelism also the input gradient, behind which
  // the re-gather of the layer input runs).
  bool tp_async = false;
  bool tp_window = false;
};

}  // namespace capplan::sim
