// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/lowering/recompute_policy.hpp"

namespace capplan::sim {

RecomputePolicy::RecomputePolicy(const ModelSpec& m, const TrainingJob& job, const Parallelism& p) {
  full_ = p.recompute == Recompute::full;
  const bool selective = p.recompute == Recompute::selective;
  const bool eager = job.framework == Framework::pytorch;
  attention_core_ = full_ || (selective && !m.flash_attention);
  elementwise_ = full_ || (selective && eager);
  norms_ = elementwise_ || (selective && p.recompute_norms);
  expert_activation_ = elementwise_ || (selective && p.recompute_moe_act);
  moe_layer_ = full_ || (selective && p.recompute_moe && m.is_moe());
}

bool RecomputePolicy::recomputes(OpRole role, Scope scope) const {
  if (scope == Scope::moe_ffn && moe_layer_) {
    switch (role) {
      case OpRole::checkpoint:
      case OpRole::embedding:
      case OpRole::loss:
      case OpRole::p2p:
      case OpRole::host_copy:
      case OpRole::optimizer:
      // Outside Megatron-Core's MoE layer: the norm before it (the `layernorm` module) and the
      // residual add after it.
      case OpRole::norm:
      case OpRole::residual:
      case OpRole::dropout: break;
      default: return true;
    }
  }
  return recomputes(role);
}

bool RecomputePolicy::recomputes(OpRole role) const {
  switch (role) {
    case OpRole::attention_core:
    case OpRole::softmax: return attention_core_;
    case OpRole::norm: return norms_;
    case OpRole::expert_activation: return expert_activation_;
    case OpRole::activation:
    case OpRole::residual:
    case OpRole::dropout:
    case OpRole::rope:
    case OpRole::latent_norm:
    case OpRole::copy:
    case OpRole::moe_permute:
    case OpRole::ssm:
    case OpRole::kv_cache: return elementwise_;
    case OpRole::linear:
    case OpRole::adapter:
    case OpRole::dequantize:
    case OpRole::moe_elementwise:
    case OpRole::collective:
    case OpRole::fp8_cast: return full_;
    case OpRole::checkpoint:
    case OpRole::embedding:
    case OpRole::loss:
    case OpRole::p2p:
    case OpRole::host_copy:  // the backward's own copy-in is in the op list (as its gathers are)
    case OpRole::optimizer: return false;
  }
  return false;
}

}  // namespace capplan::sim
