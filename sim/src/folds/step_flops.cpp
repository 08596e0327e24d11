// SPDX-License-Identifier: Apache-2.0
// Model and hardware FLOPs of a step, folded from the op list (StepOp::flops).
#include <algorithm>

#include "capplan/sim/folds/step_flops.hpp"
#include "capplan/sim/lowering/scope.hpp"
#include "capplan/sim/lowering/step_model.hpp"

namespace capplan::sim {

StepFlops step_flops(const StepOps& ops, const ModelSpec& m, const Parallelism& p, std::int64_t global_batch) {
  // Per GPU and micro-batch, by scope; the stages together hold every layer once, so each scope
  // counts as often as the model runs it (ScopeTraits::in_model).
  PerScope<double> times;
  for (const ScopeTraits& t : kScopeTraits) times[t.scope] = t.in_model(m);
  double model = 0, hardware = 0;
  for (const StepOp& so : ops.ops) {
    if (so.flops == 0 || times[so.scope] == 0) continue;
    hardware += so.flops * times[so.scope];
    if (so.phase != Phase::recompute) model += so.flops * times[so.scope];
  }
  // Every GPU of a stage runs the list once per micro-batch: global_batch / micro_batch
  // micro-batches over the data-parallel ranks, each on tp*cp GPUs.
  const double gpus_per_sequence_group = static_cast<double>(p.tp) * p.cp;
  const double micro_batches = static_cast<double>(global_batch) / std::max(1, p.micro_batch);
  StepFlops out;
  out.model = units::flops(model * micro_batches * gpus_per_sequence_group);
  out.hardware = units::flops(hardware * micro_batches * gpus_per_sequence_group);
  return out;
}

StepFlops step_flops(const ModelSpec& m, const TrainingJob& job, Recompute recompute) {
  Parallelism p;
  p.recompute = recompute;
  Cluster c;
  c.gpus = 1;
  StepOps ops;
  build_step_ops_into(ops, m, job, p, c, StepOpParts::micro_batch);
  return step_flops(ops, m, p, job.global_batch);
}

}  // namespace capplan::sim
