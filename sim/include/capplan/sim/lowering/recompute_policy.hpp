// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "capplan/sim/lowering/ops.hpp"
#include "capplan/sim/workload/strategy.hpp"
#include "capplan/sim/workload/workload.hpp"

namespace capplan::sim {

// Which forward ops of a layer run again before its backward pass, decided once from the
// recompute mode, the recomputed modules and the framework. The op list asks it both "is this
// op run again" (time) and, through StepOp::recomputed, "is what it produces kept" (memory), so
// the two cannot disagree.
//   full:      every op of every layer (Megatron --recompute-granularity full; activation
//              checkpointing of whole blocks in PyTorch frameworks); each layer keeps its input.
//   selective: Megatron-LM / Megatron-Core: the attention core (Korthikanti et al. 2022, Sec. 5)
//              unless it is a fused (flash) kernel, which keeps no s^2 tensors and needs none
//              recomputed; plus the modules named in --recompute-modules (`layernorm`: the norms,
//              `moe_act`: the routed experts' activation, `moe`: the whole MoE layer).
//              PyTorch frameworks (torchtitan's op-level selective checkpointing): the GEMM and
//              attention outputs are saved, every element-wise op is recomputed (norms,
//              residual adds, dropout, RoPE, activations, token permutation); the layer input is
//              kept.
//   none:      nothing.
class RecomputePolicy {
 public:
  RecomputePolicy(const ModelSpec& m, const TrainingJob& job, const Parallelism& p);

  // Whether a forward op of `role` in a layer scope is run again in backward. Embedding and
  // output ops are never recomputed.
  bool recomputes(OpRole role) const;
  // The same for an op of `scope`: with the `moe` module every kernel and collective of an MoE
  // layer (router, dispatch, experts, combine) runs again; its input, the pre-MLP norm's output,
  // is kept (or recomputed by the `layernorm` module), and the residual add stays outside.
  bool recomputes(OpRole role, Scope scope) const;
  bool moe_layer() const { return moe_layer_; }
  // Whether a layer keeps its input as a checkpoint (some op that produces the residual stream
  // is recomputed, so the recomputation starts from the layer input).
  bool keeps_layer_input() const { return full_ || elementwise_; }
  bool full() const { return full_; }

 private:
  bool full_ = false;
  bool attention_core_ = false;
  bool elementwise_ = false;  // eager selective: every element-wise op
  bool norms_ = false;
  bool expert_activation_ = false;
  bool moe_layer_ = false;
};

}  // namespace capplan::sim
