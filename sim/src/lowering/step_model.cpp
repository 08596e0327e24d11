// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/step_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "capplan/sim/memory.hpp"
#include "capplan/sim/recompute_policy.hpp"
#include "capplan/sim/stage_layout.hpp"
#include "capplan/sim/variability.hpp"
#include "lowering/blocks.hpp"
#include "lowering/lowering_context.hpp"
#include "lowering/op_list_builder.hpp"
#include "lowering/shared_ops.hpp"

namespace capplan::sim {

GroupPlacement place_group(int size, int stride, const Topology& topology) {
  GroupPlacement g;
  g.size = std::max(1, size);
  g.tier = 0;
  g.span.fill(1);
  if (g.size == 1) return g;
  const int tiers = std::clamp(topology.size(), 1, kMaxTiers);
  int below = 1;  // members in one domain of the tier inside
  for (int i = 0; i < tiers; ++i) {
    const int domain = topology.empty() ? 0 : topology.tiers[static_cast<std::size_t>(i)].gpus;
    int members = g.size;  // unbounded (or outermost) tier: the whole group
    if (domain > 0 && i + 1 < tiers) {
      members = stride >= domain ? 1 : std::clamp(domain / std::max(1, stride), 1, g.size);
    }
    members = std::max(members, below);
    g.span[static_cast<std::size_t>(i)] = (members + below - 1) / below;
    if (g.span[static_cast<std::size_t>(i)] > 1) g.tier = i;
    below = members;
  }
  g.ranks_per_node = g.span[0];
  g.nodes = (g.size + g.ranks_per_node - 1) / g.ranks_per_node;
  return g;
}

// Two ranks of one pipeline, `stages` apart or neighbours: stage i occupies ranks
// [i*tp*dp*cp, (i+1)*tp*dp*cp), so the pair shares a node only when the whole pipeline does.
// (place_group's strided placement assumes the stride divides the node; a pipeline's may not.)
GroupPlacement pipeline_pair(const Parallelism& p, const Cluster& c) {
  const bool crosses = 1LL * p.tp * p.dp * p.cp * p.pp > c.gpus_per_node;
  return GroupPlacement{2, crosses ? 1 : 2, crosses ? 2 : 1};
}

GroupPlacement place_group(int size, int stride, int gpus_per_node) {
  return place_group(size, stride, Topology::two_tier(gpus_per_node, {}, {}));
}

int expert_data_parallel(const Parallelism& p) {
  const int ranks = p.tp * p.dp * p.cp;
  const int ep = std::max(1, p.ep * p.etp);
  return std::max(1, ranks / ep);
}

Parallelism micro_batch_key(const Parallelism& p) {
  Parallelism k = p;
  k.pp = 1;
  k.dp = 1;
  k.zero = 0;
  k.virtual_stages = 1;
  k.first_stage_layers = 0;
  k.last_stage_layers = 0;
  k.overlap_dp_comm = false;
  k.tp_comm_overlap = false;
  k.pp_comm_overlap = false;
  k.ep_comm_overlap = false;
  k.offload_optimizer = false;
  k.offload_params = false;
  return k;
}

std::size_t hash_value(const Parallelism& p) {
  std::uint64_t h = 1469598103934665603ULL;
  const std::uint64_t fields[] = {std::uint64_t(p.tp), std::uint64_t(p.pp), std::uint64_t(p.dp), std::uint64_t(p.cp),
                                  std::uint64_t(p.ep), std::uint64_t(p.etp), std::uint64_t(p.micro_batch),
                                  std::uint64_t(p.virtual_stages), std::uint64_t(p.zero),
                                  std::uint64_t(p.recompute), std::uint64_t(p.sequence_parallel),
                                  std::uint64_t(p.recompute_norms), std::uint64_t(p.recompute_moe_act), std::uint64_t(p.recompute_moe),
                                  std::uint64_t(p.first_stage_layers), std::uint64_t(p.last_stage_layers),
                                  std::uint64_t(p.offload_optimizer), std::uint64_t(p.offload_params)};
  for (std::uint64_t v : fields) h = (h ^ v) * 1099511628211ULL;
  return static_cast<std::size_t>(h);
}

StepOpParts part_of(const Op& op, Scope scope) {
  switch (scope) {
    case Scope::pipeline: return StepOpParts::pipeline;
    case Scope::data_parallel:
    case Scope::optimizer: return StepOpParts::step;
    default: break;
  }
  // ZeRO-3 parameter gathers and gradient reduce-scatters sit in the layer scopes but depend on dp.
  if (const auto* c = std::get_if<CollectiveOp>(&op); c != nullptr && c->axis == Axis::dp) return StepOpParts::step;
  // So do the host copies of offloaded parameter shards (they depend on dp and the offload).
  if (const auto* mo = std::get_if<MemoryOp>(&op); mo != nullptr && mo->link != MemoryLink::hbm) {
    return StepOpParts::step;
  }
  return StepOpParts::micro_batch;
}

using lowering::attention_work_fraction;
using lowering::OpListBuilder;

StepOpParts part_of(const StepOp& op) { return part_of(op.op, op.scope); }

StepOps build_step_ops(const ModelSpec& m, const TrainingJob& job, const Parallelism& p, const Cluster& c) {
  StepOps out;
  out.ops.reserve(96);
  build_step_ops_into(out, m, job, p, c, StepOpParts::all);
  return out;
}

namespace {

// The op list of a training step or of one serving pass (build_pass_ops), as `cx` says.
void build_ops(StepOps& out, const lowering::Context& cx, StepOpParts parts) {
  out.ops.clear();
  OpListBuilder b = cx.builder(out.ops, parts);

  // ===== attention block of every layer, one micro-batch =====
  lowering::lower_attention(b, cx);

  // ===== dense FFN =====
  lowering::lower_dense_ffn(b, cx);

  // ===== MoE FFN (routed experts, top-k) =====
  lowering::lower_moe(b, cx);

  // ===== Mamba-2 mixer of a hybrid model's M layers =====
  lowering::lower_mamba(b, cx);

  // ===== embedding (first stage) and output layer + loss (last stage) =====
  lowering::lower_embedding_and_output(b, cx);

  // ===== pipeline point-to-point: activations forward, gradients backward, per stage boundary =====
  lowering::lower_pipeline_p2p(b, cx);

  // ===== data parallel and optimizer, once per step for the most loaded stage =====
  out.params = most_loaded_stage_params(cx.m, cx.job, cx.p);
  out.stage_params = out.params.trained();
  lowering::lower_data_parallel_and_optimizer(b, cx, out.params);
}

}  // namespace

void build_step_ops_into(StepOps& out, const ModelSpec& m, const TrainingJob& job, const Parallelism& p,
                         const Cluster& c, StepOpParts parts) {
  build_ops(out, lowering::Context(m, job, p, c), parts);
}

StepOps build_pass_ops(const ModelSpec& model, const InferencePass& pass, const Parallelism& layout,
                       const Cluster& c) {
  // An engine's forward: no dropout, fused kernels, flash attention, no recomputation or
  // sequence parallelism, and routing as the batch's tokens choose (no benchmark imbalance).
  ModelSpec m = model;
  m.dropout = false;
  m.flash_attention = true;
  m.moe.random_routing = false;
  m.moe.capacity_factor = 1.0;
  m.moe.pad_to_capacity = false;
  TrainingJob job;
  job.precision = pass.compute;
  job.framework = Framework::megatron;
  job.pp_p2p_batched = true;
  Parallelism p;
  p.tp = std::max(1, layout.tp);
  p.pp = std::max(1, layout.pp);
  p.ep = std::max(1, layout.ep);
  p.etp = std::max(1, layout.etp);
  p.micro_batch = 1;
  p.sequence_parallel = false;
  p.recompute = Recompute::none;
  StepOps out;
  out.ops.reserve(64);
  build_ops(out, lowering::Context(m, job, p, c, pass), StepOpParts::all);
  return out;
}

}  // namespace capplan::sim
