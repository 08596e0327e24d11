// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <optional>
#include <string>

namespace capplan::sim {

enum class Recompute { none, selective, full };
const char* to_string(Recompute r);
std::optional<Recompute> recompute_from_string(const std::string& s);

// A complete parallel layout. Contract (Megatron-Core): tp*pp*dp*cp == GPUs once validated, and
// ep*etp divides tp*dp*cp (experts spread over the same ranks).
struct Parallelism {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int cp = 1;
  int ep = 1;   // expert parallel: carved out of the tp*dp*cp ranks (Megatron-Core), divides them
  int etp = 1;  // expert tensor parallel (1 = experts whole on each EP rank)
  int micro_batch = 1;     // sequences per micro-batch per data-parallel rank
  int virtual_stages = 1;  // interleaved 1F1B chunks per pipeline rank (1 = plain 1F1B)
  int zero = 0;            // ZeRO stage 0..3 (3 = FSDP full sharding)
  Recompute recompute = Recompute::selective;
  bool sequence_parallel = false;
  bool overlap_dp_comm = true;  // gradient reduction overlapped with backward (bucketed)
  // Tensor-parallel all-gather/reduce-scatter split into chunks and overlapped with the adjacent
  // GEMMs (Megatron-Core/Transformer Engine userbuffers, NeMo's tp_comm_overlap). Off by default,
  // as in Megatron-LM.
  bool tp_comm_overlap = false;
  // Pipeline send/recv overlapped with compute (Megatron's overlap_p2p_comm): only in the
  // interleaved schedule (virtual_stages > 1); Megatron-LM turns it off without interleaving.
  bool pp_comm_overlap = false;
  // Expert-parallel all-to-all (dispatch/combine) of one micro-batch overlapped with the compute of
  // another: Megatron-Core's --overlap-moe-expert-parallel-comm (off by default), DeepSeek-V3's
  // DualPipe (DeepSeek-V3 report, Sec. 3.2.1). Off by default.
  bool ep_comm_overlap = false;
  // Megatron-Core's --recompute-modules beyond core_attn (with selective recompute only): the
  // norms' outputs (`layernorm`) and the routed experts' activation output (`moe_act`) are not
  // kept for backward; their forward runs again from the kept inputs. Off by default.
  bool recompute_norms = false;
  bool recompute_moe_act = false;
  // Megatron-Core's `moe` recompute module (selective only): the whole MoE layer (router, token
  // dispatch and combine, experts) is checkpointed and runs again before its backward; only its
  // input is kept (megatron/core/transformer/moe/moe_layer.py, recompute of the MoE forward).
  bool recompute_moe = false;
  // Layers on the first and on the last pipeline stage (Megatron-Core's
  // --decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers); the other stages
  // split the rest as evenly as possible. 0 = not set: all stages split the layers evenly (the
  // first layers % pp stages take one more).
  int first_stage_layers = 0;
  int last_stage_layers = 0;
  // Host (CPU) offload. offload_optimizer: the optimizer state (fp32 master, Adam moments) lives
  // in host memory and the optimizer step runs on the CPU; each step copies the gradients of the
  // rank's shard to the host and the updated 16-bit parameters back (ZeRO-Offload, Ren et al.
  // 2021, arXiv:2101.06840; DeepSpeed's offload_optimizer, Megatron-Core's
  // --optimizer-cpu-offload). offload_params (with ZeRO-3 only): the parameter shards and their
  // gradients live on the host as well, copied in before each gather and out after each
  // reduce-scatter (ZeRO-Infinity's offload_param, PyTorch FSDP's CPUOffload/CPUOffloadPolicy,
  // torchtune's fsdp_cpu_offload); the optimizer then runs on the host too.
  bool offload_optimizer = false;
  bool offload_params = false;

  bool host_optimizer() const { return offload_optimizer || offload_params; }

  auto operator<=>(const Parallelism&) const = default;
};

// What a training stack can run: a recipe's "supports" (data/frameworks.json), narrowed by what
// the fine-tuning method allows (stack_support, finetune.hpp). An empty optional = not stated:
// not restricted. The planners search only what is supported; a scenario that fixes an
// unsupported value is refused by its reader.
struct StackSupport {
  std::optional<bool> tensor_parallel;
  std::optional<bool> sequence_parallel;
  std::optional<bool> pipeline_parallel;
  std::optional<bool> context_parallel;
  std::optional<bool> expert_parallel;
  std::optional<unsigned> zero_stages;  // bit s set: ZeRO stage s (0 = no sharding) runs
  std::optional<bool> offload_optimizer;
  std::optional<bool> offload_params;

  static bool runs(const std::optional<bool>& b) { return b.value_or(true); }
  // Whether ZeRO stage `stage` (0..3) runs. With one data-parallel rank there is nothing to
  // shard and every stage is stage 0: the layout space asks only where DP > 1.
  bool allows_zero(int stage) const {
    return !zero_stages || stage < 0 || stage > 3 || ((*zero_stages >> stage) & 1u) != 0;
  }
};

// What the user asked for: each field either fixed or left to capplan ("auto").
struct StrategyRequest {
  std::optional<int> tp, pp, dp, cp, ep, etp, micro_batch, virtual_stages, zero;
  std::optional<Recompute> recompute;
  std::optional<bool> sequence_parallel;
  std::optional<bool> overlap_dp_comm;
  std::optional<bool> tp_comm_overlap;
  std::optional<bool> pp_comm_overlap;
  std::optional<bool> ep_comm_overlap;
  std::optional<bool> recompute_norms;
  std::optional<bool> recompute_moe_act;
  std::optional<bool> recompute_moe;
  std::optional<bool> offload_optimizer;
  std::optional<bool> offload_params;
  std::optional<int> first_stage_layers;
  std::optional<int> last_stage_layers;
  // The framework has no selective recompute (full-layer checkpointing only): not searched.
  bool selective_recompute = true;
  // What the stack runs (its recipe and the fine-tuning method): the planners search only that.
  StackSupport support;

  bool fully_specified() const {
    return tp && pp && dp && micro_batch && virtual_stages && zero && recompute && sequence_parallel;
  }
};

// The on/off strategy options, declared once. data/ reads and writes them (scenario and output
// "strategy" keys), `capplan estimate` and `capplan search` offer each as a flag, the GUI shows each
// as a check box, and the planner fills the ones it does not search from the request. A new option
// is a member of Parallelism and of StrategyRequest plus a row here; what it changes in the step is
// the lowering's business, and a searched one needs a dimension in sim/src/estimate/layout_space.{hpp,cpp}.
struct StrategyOption {
  const char* key;    // scenario and output JSON key
  const char* flag;   // command-line flag
  const char* label;  // GUI check box (translated there)
  const char* help;   // one line: --help and the GUI tooltip
  bool Parallelism::*value;
  std::optional<bool> StrategyRequest::*request;
  bool fallback;    // when neither the user nor the planner sets it
  bool searched;    // the planner tries both values when it is left auto
  const char* tag;  // in one-line layout summaries while on ("sp"); nullptr: never shown
};

inline constexpr StrategyOption kStrategyOptions[] = {
    {"sequence_parallel", "--sequence-parallel", "sequence parallel",
     "Sequence parallelism: norm and dropout activations split over the tensor-parallel ranks (default: searched)",
     &Parallelism::sequence_parallel, &StrategyRequest::sequence_parallel, false, true, "sp"},
    {"overlap_dp_comm", "--overlap-dp-comm", "overlap DP gradient reduction",
     "Overlap the data-parallel gradient reduction with backward (default true)", &Parallelism::overlap_dp_comm,
     &StrategyRequest::overlap_dp_comm, true, false, nullptr},
    {"tp_comm_overlap", "--tp-comm-overlap", "overlap TP communication",
     "Overlap tensor-parallel collectives with GEMMs, chunked (default false)", &Parallelism::tp_comm_overlap,
     &StrategyRequest::tp_comm_overlap, false, true, "tp-overlap"},
    {"pp_comm_overlap", "--pp-comm-overlap", "overlap PP send/recv",
     "Overlap pipeline send/recv with compute (default false)", &Parallelism::pp_comm_overlap, &StrategyRequest::pp_comm_overlap, false, true, "pp-overlap"},
    {"ep_comm_overlap", "--ep-comm-overlap", "overlap EP all-to-all",
     "Overlap the expert-parallel all-to-all with another micro-batch's compute (default false)",
     &Parallelism::ep_comm_overlap, &StrategyRequest::ep_comm_overlap, false, true, "ep-overlap"},
    {"recompute_norms", "--recompute-norms", "recompute norms",
     "With selective recompute: recompute the norms in backward instead of keeping their outputs (default false)",
     &Parallelism::recompute_norms, &StrategyRequest::recompute_norms, false, false, "rc-norms"},
    {"recompute_moe_act", "--recompute-moe-act", "recompute experts' activation",
     "With selective recompute: recompute the experts' activation instead of keeping it (default false)",
     &Parallelism::recompute_moe_act, &StrategyRequest::recompute_moe_act, false, false, "rc-moe-act"},
    {"recompute_moe", "--recompute-moe", "recompute the MoE layer",
     "With selective recompute: recompute the whole MoE layer (router, dispatch, experts, combine) instead of keeping "
     "its activations (default false)",
     &Parallelism::recompute_moe, &StrategyRequest::recompute_moe, false, false, "rc-moe"},
    {"offload_optimizer", "--offload-optimizer", "optimizer on the CPU",
     "Keep the optimizer state in host memory and run the optimizer step on the CPU (default false)",
     &Parallelism::offload_optimizer, &StrategyRequest::offload_optimizer, false, false, "offload-opt"},
    {"offload_params", "--offload-params", "parameters on the CPU (ZeRO-3)",
     "With ZeRO-3: keep the parameter shards and their gradients in host memory as well (default false)",
     &Parallelism::offload_params, &StrategyRequest::offload_params, false, false, "offload-params"},
};

}  // namespace capplan::sim
