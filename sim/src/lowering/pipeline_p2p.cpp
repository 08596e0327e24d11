// SPDX-License-Identifier: Apache-2.0
// Pipeline point-to-point: activations forward, gradients backward, per stage boundary.
#include "lowering/blocks.hpp"
#include "lowering/shared_ops.hpp"

namespace capplan::sim::lowering {

// Megatron's scatter/gather optimisation sends 1/t of the tensor per TP rank (Narayanan 2021).
void lower_pipeline_p2p(OpListBuilder& b, const Context& cx) {
  const Parallelism& p = cx.p;
  if (p.pp <= 1) return;
  // Once the pipeline spans more than one node some boundary crosses the network, and the
  // slowest boundary sets the pace.
  const GroupPlacement pair = pipeline_pair(p, cx.c);
  const units::Bytes msg = units::bytes(cx.act * cx.td * cx.hd / static_cast<double>(cx.t));
  b.add(CollectiveOp{"pp_send_activations", CollectiveKind::send_recv, msg, pair, Axis::pp}, Phase::forward,
        Scope::pipeline, 1.0, OpRole::p2p);
  b.add(CollectiveOp{"pp_send_gradients", CollectiveKind::send_recv, msg, pair, Axis::pp}, Phase::backward,
        Scope::pipeline, 1.0, OpRole::p2p);
  // Blocking, unbatched p2p (DeepSpeed's PipelineEngine; TrainingJob::pp_p2p_batched): the stage
  // also waits for its own receives, each a transfer of its own (receive the activation before
  // the forward, the gradient before the backward).
  if (!cx.job.pp_p2p_batched) {
    b.add(CollectiveOp{"pp_recv_activations", CollectiveKind::send_recv, msg, pair, Axis::pp}, Phase::forward,
          Scope::pipeline, 1.0, OpRole::p2p);
    b.add(CollectiveOp{"pp_recv_gradients", CollectiveKind::send_recv, msg, pair, Axis::pp}, Phase::backward,
          Scope::pipeline, 1.0, OpRole::p2p);
  }
}

}  // namespace capplan::sim::lowering
