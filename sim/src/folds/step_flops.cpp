// SPDX-License-Identifier: Apache-2.0
// Model and hardware FLOPs of a step, folded from the op list (StepOp::flops).
#include <algorithm>

#include "capplan/sim/estimate.hpp"
#include "capplan/sim/step_model.hpp"

namespace capplan::sim {

StepFlops step_flops(const StepOps& ops, const ModelSpec& m, const Parallelism& p, std::int64_t global_batch) {
  // Per GPU and micro-batch, by scope; the stages together hold every layer once.
  double model = 0, hardware = 0;
  const double moe_layers = m.moe_layer_count();
  const double attention_layers = m.attention_layer_count(), dense_layers = m.dense_ffn_layer_count();
  for (const StepOp& so : ops.ops) {
    if (so.flops == 0) continue;
    double times = 0;
    switch (so.scope) {
      case Scope::layer: times = attention_layers; break;
      case Scope::dense_ffn: times = dense_layers; break;
      case Scope::moe_ffn: times = moe_layers; break;
      case Scope::mamba: times = m.mamba_layer_count(); break;
      case Scope::embedding:
      case Scope::output: times = 1; break;
      default: continue;
    }
    hardware += so.flops * times;
    if (so.phase != Phase::recompute) model += so.flops * times;
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
