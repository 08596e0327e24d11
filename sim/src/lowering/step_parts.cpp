// SPDX-License-Identifier: Apache-2.0
// The parts of a step's op list (StepOpParts): which part an op belongs to, and the key under
// which a planner caches the micro-batch part.
#include <cstddef>
#include <cstdint>
#include <variant>

#include "capplan/sim/lowering/scope.hpp"
#include "capplan/sim/lowering/step_model.hpp"

namespace capplan::sim {

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
  switch (traits(scope).repeat) {
    case Repeat::stage_boundary: return StepOpParts::pipeline;
    case Repeat::per_step: return StepOpParts::step;
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

StepOpParts part_of(const StepOp& op) { return part_of(op.op, op.scope); }

}  // namespace capplan::sim
