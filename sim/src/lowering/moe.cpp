// SPDX-License-Identifier: Apache-2.0
// The MoE block of an MoE layer (routed experts, top-k): the router, the token permutation, the
// expert-parallel dispatch and combine, the local experts (mlp.cpp's FFN), the shared experts;
// in a serving pass the grouped kernel over the experts the batch hit.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "capplan/sim/workload/variability.hpp"
#include "lowering/blocks.hpp"
#include "lowering/shared_ops.hpp"

namespace capplan::sim {

// Expected number of distinct expert-parallel ranks a token's top_k experts lie on, when they are
// top_k distinct experts drawn uniformly from `experts` spread evenly over `ep` ranks: each rank
// is missed with probability C(E - E/ep, k) / C(E, k).
double expected_destination_ranks(int experts, int top_k, int ep) {
  if (ep <= 1 || experts <= 0 || top_k <= 0) return 1.0;
  const double E = experts, local = static_cast<double>(experts) / ep;
  double missed = 1.0;
  for (int i = 0; i < std::min(top_k, experts); ++i) missed *= std::max(0.0, (E - local - i) / (E - i));
  return ep * (1.0 - missed);
}

namespace lowering {
namespace {

// A serving pass's MoE layer.
void serving_moe(OpListBuilder& b, const Context& cx) {
  const ModelSpec& m = cx.m;
  const Parallelism& p = cx.p;
  const Precision dt = cx.dt;
  const std::int64_t t = cx.t, tokens = cx.tokens, h = cx.h;
  const double act = cx.act, td = cx.td, hd = cx.hd;
  // Serving (vLLM's FusedMoE, SGLang, TensorRT-LLM): attention TP leaves every rank with all
  // the batch's tokens; each rank runs its E/ep experts, 1/etp of each, as one grouped kernel
  // over the experts the batch hit, and one all-reduce sums the partial outputs. With T tokens
  // each picking top_k of E experts, an expert is hit with probability 1 - (1 - k/E)^T
  // (uniform routing), so a small decode batch reads only those experts' weights.
  if (cx.hybrid) residual_stream(b, cx, Scope::moe_ffn, 1.0);
  const auto& e = m.moe;
  const double local = static_cast<double>(e.experts) / std::max(1, p.ep);
  const double p_hit = 1.0 - std::pow(1.0 - static_cast<double>(e.top_k) / e.experts, td);
  const double hit = std::max(1.0, local * p_hit);
  const double routed = td * e.top_k / std::max(1, p.ep);  // mean routed copies per rank
  const std::int64_t rows = std::max<std::int64_t>(1, std::llround(routed / hit));
  const std::int64_t groups = std::max<std::int64_t>(1, std::llround(hit));
  const std::int64_t inner = std::max<std::int64_t>(1, e.expert_ffn_hidden / std::max(1, p.etp));
  const std::int64_t up = (m.gated_ffn ? 2 : 1) * inner;
  b.linear("router", "router_dgrad", "router_wgrad", tokens, e.experts, h, Precision::bf16, Scope::moe_ffn);
  b.elementwise("moe_permute", 2.0 * act * routed * hd, Scope::moe_ffn, OpRole::moe_permute, 2.0);
  b.linear("expert_up", "expert_up_dgrad", "expert_up_wgrad", rows, up, h, dt, Scope::moe_ffn, 0,
           2.0 * routed * static_cast<double>(up) * hd, groups);
  b.elementwise(m.gated_ffn ? "swiglu" : "gelu", act * routed * inner * ((m.gated_ffn ? 2.0 : 1.0) + 1.0),
                Scope::moe_ffn, OpRole::expert_activation);
  b.linear("expert_down", "expert_down_dgrad", "expert_down_wgrad", rows, h, inner, dt, Scope::moe_ffn, 0,
           2.0 * routed * static_cast<double>(inner) * hd, groups);
  if (e.shared_experts > 0) {
    lower_ffn(b, cx, "shared_up", "shared_down", tokens, td,
              static_cast<std::int64_t>(e.shared_experts) * e.expert_ffn_hidden / t, 1.0, Scope::moe_ffn,
              OpRole::activation, 1.0);
  }
  tp_block_comm(b, cx, Scope::moe_ffn);
}

// The expert-parallel token exchange of a training step's MoE layer: `moe_tokens` routed by this
// rank, the busiest rank's `load` over the mean and its `routed` copies, `local_experts` per rank.
void ep_dispatch_comm(OpListBuilder& b, const Context& cx, std::int64_t moe_tokens, double load, double routed,
                      std::int64_t local_experts) {
  const ModelSpec& m = cx.m;
  const Parallelism& p = cx.p;
  const Topology& topology = cx.topology;
  const bool moe_rc = cx.moe_rc;
  const double act = cx.act, hd = cx.hd;
  const auto& e = m.moe;
  // Megatron-Core's all-to-all dispatcher (megatron/core/transformer/moe/token_dispatcher.py,
  // MoEAlltoAllTokenDispatcher, NVIDIA/Megatron-LM @d98e8a6) around the two all-to-alls below.
  const bool alltoall = e.dispatcher == MoeDispatcher::alltoall;
  if (!e.pad_to_capacity && alltoall) {
    // Dropless: preprocess() counts the tokens per expert on the device and all-gathers the
    // counts over the tp x ep group (int64 per expert and rank, no gradient); the split
    // sizes are copied to the host (cuda_dtoh_point) and the host waits for them before it
    // can launch the all-to-all (cuda_sync_point "before_ep_alltoall"). Padded to capacity,
    // the shapes are static and neither happens (preprocess returns early).
    const int counted = p.ep * p.etp;
    const GroupPlacement count_group = place_group(counted, 1, topology);
    const CollectiveOp counts{"moe_tokens_per_expert_all_gather", CollectiveKind::all_gather,
                              units::bytes(8.0 * e.experts * counted), count_group, Axis::ep};
    b.add(counts, Phase::forward, Scope::moe_ffn, 1.0, OpRole::collective, 0, 0, moe_rc);
    if (moe_rc) b.add(counts, Phase::recompute, Scope::moe_ffn, 1.0, OpRole::collective);
  }
  if (!e.pad_to_capacity) {
    // The split sizes reach the host before the experts can be launched (with DeepEP the
    // fused dispatch returns the received counts per expert to the host).
    const MemoryOp dtoh{"moe_tokens_per_expert_dtoh", units::bytes(8.0 * e.experts * p.ep * p.etp)};
    b.add(dtoh, Phase::forward, Scope::moe_ffn, 1.0, OpRole::moe_permute, 0, 0, moe_rc);
    if (moe_rc) b.add(dtoh, Phase::recompute, Scope::moe_ffn, 1.0, OpRole::moe_permute);
  }
  if (alltoall) {
    // The routing probabilities travel with the tokens (a third all-to-all, fp32 per routed
    // copy: token_dispatch(), global_probs), forward and backward.
    b.collective(CollectiveOp{"ep_probs_all_to_all", CollectiveKind::all_to_all, units::bytes(4.0 * routed),
                              place_group(p.ep, p.etp, topology), Axis::ep},
                 Scope::moe_ffn, moe_rc);
  }
  if (alltoall && local_experts > 1) {
    // Permutation 2: the received tokens arrive grouped by source rank and are sorted into
    // local-expert order (dispatch_postprocess: sort_chunks_by_idxs, or a transpose +
    // contiguous copy when padded to capacity) and back after the experts
    // (combine_preprocess): two more passes that read and write every received hidden vector.
    b.elementwise("moe_sort_chunks", 2.0 * act * routed * p.etp * hd, Scope::moe_ffn, OpRole::moe_permute, 2.0);
  }
  // Token dispatch and combine: each rank sends its T*k hidden vectors; the busiest rank
  // receives capacity_factor times the mean. Forward 2 all-to-alls, backward 2 more. The
  // ETP ranks of an expert are contiguous, so EP peers are etp ranks apart.
  const GroupPlacement ep_group = place_group(p.ep, p.etp, topology);
  const units::Bytes msg = units::bytes(act * routed * hd);
  const int limit = e.max_nodes_per_token;
  if (e.dispatcher == MoeDispatcher::deepep && !ep_group.spans_nodes()) {
    // DeepEP / HybridEP inside one NVLink domain: one fused kernel each way sends a token
    // once to every rank that holds one of its experts (the destination rank fans it out to
    // its local experts), not once per expert: expected_destination_ranks of top_k, its own
    // rank included, over which the kernels' measured rate is defined (CollectiveOp::fused_ep).
    const double ranks = expected_destination_ranks(e.experts, e.top_k, p.ep);
    const units::Bytes moved = units::bytes(act * static_cast<double>(moe_tokens) * load * ranks * hd);
    for (const char* name : {"ep_dispatch_all_to_all", "ep_combine_all_to_all"}) {
      b.collective(CollectiveOp{name, CollectiveKind::all_to_all, moved, ep_group, Axis::ep, true}, Scope::moe_ffn,
                   moe_rc);
    }
  } else if (limit > 0 && limit < e.top_k && ep_group.spans_nodes()) {
    // Node-limited routing: a token crosses the network once per target node (at most
    // `limit`), then is forwarded to its experts inside the node over NVLink.
    const units::Bytes net = units::bytes(act * static_cast<double>(moe_tokens) * load *
                                          std::min(limit, ep_group.nodes) * hd);
    const GroupPlacement node{ep_group.ranks_per_node, ep_group.ranks_per_node, 1};
    for (const char* name : {"ep_dispatch_all_to_all", "ep_combine_all_to_all"}) {
      b.collective(CollectiveOp{name, CollectiveKind::all_to_all, net, ep_group, Axis::ep}, Scope::moe_ffn, moe_rc);
      b.collective(CollectiveOp{"ep_nvlink_forward", CollectiveKind::all_to_all, msg, node, Axis::ep},
                   Scope::moe_ffn, moe_rc);
    }
  } else {
    b.collective(CollectiveOp{"ep_dispatch_all_to_all", CollectiveKind::all_to_all, msg, ep_group, Axis::ep},
                 Scope::moe_ffn, moe_rc);
    b.collective(CollectiveOp{"ep_combine_all_to_all", CollectiveKind::all_to_all, msg, ep_group, Axis::ep},
                 Scope::moe_ffn, moe_rc);
  }
}

// A memory-bound pass over `elems` elements around the experts: `fwd` / `bwd` bytes per element
// over `fwd_kernels` / `bwd_kernels` launches.
void expert_pass(OpListBuilder& b, const char* name, double elems, double fwd, double bwd, OpRole role,
                 double fwd_kernels = 1.0, double bwd_kernels = 1.0) {
  const bool rc = b.recomputes(role, Scope::moe_ffn);
  const MemoryOp fwd_op{name, units::bytes(fwd * elems / fwd_kernels)};
  b.add(fwd_op, Phase::forward, Scope::moe_ffn, fwd_kernels, role, 0, 0, rc);
  b.add(MemoryOp{name, units::bytes(bwd * elems / bwd_kernels)}, Phase::backward, Scope::moe_ffn, bwd_kernels, role);
  if (rc) b.add(fwd_op, Phase::recompute, Scope::moe_ffn, fwd_kernels, role);
}

// A training step's MoE layer.
void training_moe(OpListBuilder& b, const Context& cx) {
  const ModelSpec& m = cx.m;
  const Parallelism& p = cx.p;
  const bool moe_rc = cx.moe_rc;
  const std::int64_t t = cx.t, tokens = cx.tokens, h = cx.h;
  const double act = cx.act, td = cx.td, hd = cx.hd;
  if (cx.hybrid) residual_stream(b, cx, Scope::moe_ffn, 1.0);
  const auto& e = m.moe;
  // Megatron-Core MoE with TP needs sequence parallelism: each TP rank routes its own T/tp tokens.
  const std::int64_t moe_tokens = t > 1 ? tokens / t : tokens;
  // Busiest expert rank over the mean: the scenario's imbalance, and random benchmark routing's
  // own spread over the ep ranks (MoeSpec::random_routing) unless padded to capacity.
  const double load = e.capacity_factor * (e.random_routing && !e.pad_to_capacity
                                               ? random_routing_busiest_rank(moe_tokens, e.top_k, e.experts, p.ep)
                                               : 1.0);
  const double routed = static_cast<double>(moe_tokens) * e.top_k * load;  // busiest rank
  const std::int64_t local_experts = std::max<std::int64_t>(1, e.experts / p.ep);
  // With expert tensor parallelism each rank works on the routed tokens of its whole ETP group
  // (gathered) with 1/etp of every local expert.
  const std::int64_t per_expert =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(routed * p.etp / local_experts));
  // Router: fp32 logits per token and expert kept for the backward.
  b.linear("router", "router_dgrad", "router_wgrad", moe_tokens, e.experts, h, Precision::bf16, Scope::moe_ffn,
           4.0 * static_cast<double>(moe_tokens) * e.experts);
  // Permute tokens into expert order and back (read + write the hidden vectors each way); the
  // permuted tokens are the experts' input, kept for their weight gradients.
  b.elementwise("moe_permute", 2.0 * act * routed * hd, Scope::moe_ffn, OpRole::moe_permute, 2.0,
                cx.gemm_in * routed * p.etp * hd);
  if (p.ep > 1) ep_dispatch_comm(b, cx, moe_tokens, load, routed, local_experts);
  if (p.etp > 1) {
    // Expert tensor parallelism (Megatron-Core): the etp ranks sharing an expert gather each
    // other's routed tokens before the experts and reduce-scatter the partial outputs after,
    // forward and backward (the TP pattern on the routed tokens).
    const GroupPlacement etp_group = place_group(p.etp, 1, cx.topology);
    const units::Bytes msg = units::bytes(act * routed * hd * p.etp);
    b.collective(CollectiveOp{"etp_all_gather", CollectiveKind::all_gather, msg, etp_group, Axis::ep}, Scope::moe_ffn,
                 moe_rc);
    b.collective(CollectiveOp{"etp_reduce_scatter", CollectiveKind::reduce_scatter, msg, etp_group, Axis::ep},
                 Scope::moe_ffn, moe_rc);
  }
  // Local experts: one GEMM per expert and projection, as Transformer Engine's GroupedLinear and
  // Megatron-Core's SequentialMLP launch them (separate cuBLAS calls, each with its own tile and
  // wave quantisation on its per_expert rows). Kept bytes follow the busiest rank's routed
  // tokens; model FLOPs the mean (capacity factor 1).
  lower_ffn(b, cx, "expert_up", "expert_down", per_expert, routed * p.etp, e.expert_ffn_hidden / p.etp,
            static_cast<double>(local_experts), Scope::moe_ffn, OpRole::expert_activation, 1.0 / load, false);
  // Clamped activation and expert biases (MoeSpec): element-wise passes Megatron-Core adds
  // around the expert GEMMs, over the busiest rank's routed tokens.
  const double expert_rows = static_cast<double>(per_expert) * static_cast<double>(local_experts);
  if (e.activation_clamp > 0) {
    // Part of the activation: recomputed with it (moe_act).
    const double up = expert_rows * (m.gated_ffn ? 2.0 : 1.0) * (e.expert_ffn_hidden / p.etp);
    expert_pass(b, "expert_activation_clamp", up, 8.0, 6.0, OpRole::expert_activation);
  }
  if (e.expert_bias) {
    // TEGroupedMLP._apply_bias (Megatron-LM core_r0.17 @d7288711, experts.py): per local expert
    // x = b * p (write fp32: 4 bytes per output element) and t + x (read 2 + 4, write fp32 4),
    // then torch.cat (4 + 4) and .to(bf16) (4 + 2): 28 bytes in 2 launches per expert + 2.
    // Autograd: the cast's backward (2 + 4), per expert the gradient of t cast to bf16 (4 + 2),
    // and of b and p each a product (4 + 4) and a reduction (4), then the split's cat (2 + 2):
    // 40 bytes in 5 launches per expert + 3.
    const double le = static_cast<double>(local_experts);
    expert_pass(b, "expert_bias_add", expert_rows * hd, 28.0, 40.0, OpRole::moe_elementwise, 2.0 * le + 2.0,
                5.0 * le + 3.0);
  }
  if (e.shared_experts > 0) {
    // Shared experts: a dense FFN of shared * expert size, TP-split with its own collectives.
    lower_ffn(b, cx, "shared_up", "shared_down", tokens, td,
              static_cast<std::int64_t>(e.shared_experts) * e.expert_ffn_hidden / t, 1.0, Scope::moe_ffn,
              OpRole::activation, 1.0);
    tp_block_comm(b, cx, Scope::moe_ffn);
  }
}

}  // namespace

void lower_moe(OpListBuilder& b, const Context& cx) {
  if (!cx.m.is_moe()) return;
  if (cx.serving()) {
    serving_moe(b, cx);
  } else {
    training_moe(b, cx);
  }
}

}  // namespace lowering
}  // namespace capplan::sim
