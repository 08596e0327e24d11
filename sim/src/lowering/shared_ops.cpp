// SPDX-License-Identifier: Apache-2.0
#include "lowering/shared_ops.hpp"

namespace capplan::sim::lowering {

// Tensor-parallel collectives around a TP-split block: one all-reduce in forward and one in
// backward (Shoeybi et al. 2019, the f/g operators); with sequence parallelism an all-gather +
// reduce-scatter pair of the same total volume (Korthikanti et al. 2022, Sec. 4.2.2).
// The backward collective of the block's column-parallel (first) linear is the input gradient's
// (the backward of the forward all-gather, or of the identity before the first linear): with
// TrainingJob::tp_async_dgrad it runs during that linear's weight-gradient GEMM, marked by
// tp_window() after the linear. Under sequence parallelism that linear's backward also gathers
// its input again for the weight gradient (the forward kept only this rank's sequence shard),
// during its input-gradient GEMM (Megatron-Core layers.py and Transformer Engine's Linear /
// LayerNormLinear backward, `async_op=True`). Eager PyTorch's tensor parallelism (DTensor)
// computes a linear's input and weight gradients in one autograd node before the collective on
// the input gradient is issued: nothing to overlap. With userbuffers (tp_comm_overlap) the
// chunked overlap covers every TP collective (Context::tp_async).
void tp_block_comm(OpListBuilder& b, const Context& cx, Scope scope) {
  if (cx.t <= 1) return;
  const units::Bytes msg = units::bytes(cx.act * cx.td * cx.hd);
  const bool rc = scope == Scope::moe_ffn ? cx.moe_rc : cx.full_rc;
  const GroupPlacement& tp_group = cx.tp_group;
  if (cx.p.sequence_parallel) {
    const CollectiveOp gather{"tp_all_gather", CollectiveKind::all_gather, msg, tp_group};
    b.collective(gather, scope, rc);
    b.collective(CollectiveOp{"tp_reduce_scatter", CollectiveKind::reduce_scatter, msg, tp_group}, scope, rc, 1.0,
                 cx.tp_async);
    if (cx.tp_async) {
      b.async_backward_collective(CollectiveOp{"tp_input_regather", CollectiveKind::all_gather, msg, tp_group},
                                  scope);
    }
  } else {
    b.collective(CollectiveOp{"tp_all_reduce", CollectiveKind::all_reduce, msg, tp_group}, scope, rc, 1.0,
                 cx.tp_async);
  }
}

void tp_window(OpListBuilder& b, const Context& cx) {
  if (cx.t > 1 && cx.tp_async) b.last_linear_is_tp_window(cx.p.sequence_parallel);
}

// The residual stream's ops around `n` sub-blocks of `scope`: a transformer layer has two (the
// attention and the FFN norm and residual add); each layer of a hybrid pattern one (Megatron-
// Core's hybrid layers each own their pre-norm and residual: mamba_layer.py, MambaLayer.forward,
// and the MLP / MoE / attention layers of hybrid_layer_specs.py @d98e8a6).
void residual_stream(OpListBuilder& b, const Context& cx, Scope scope, double n) {
  const ModelSpec& m = cx.m;
  const double act = cx.act, tsp = cx.tsp, hd = cx.hd;
  if (cx.policy.keeps_layer_input()) {
    // Some producer of the residual stream is recomputed: the recomputation starts from the
    // layer input, kept as the checkpoint (no kernel).
    b.add(MemoryOp{"layer_input_checkpoint", units::bytes(0)}, Phase::forward, scope, 0.0, OpRole::checkpoint, 0,
          act * tsp * hd);
  }
  // Norms. Fused: one kernel reads and writes the tensor. Eager RMSNorm (Llama reference
  // implementation): x.float() (2+4 bytes/element), pow (4+4), mean (4), x*rsqrt (4+4),
  // type_as (4+2), *weight (2+2). Eager LayerNorm is one fused ATen kernel.
  const double norm_out = n * cx.gemm_in * tsp * hd;  // the norms' outputs
  if (cx.eager && m.rmsnorm) {
    bool first = true;
    for (double bytes_per_elem : {6.0, 8.0, 4.0, 8.0, 6.0, 4.0}) {
      b.elementwise("rmsnorm_eager", bytes_per_elem * tsp * hd, scope, OpRole::norm, n, first ? norm_out : 0.0);
      first = false;
    }
  } else {
    b.elementwise(m.rmsnorm ? "rmsnorm" : "layernorm", 2.0 * act * tsp * hd, scope, OpRole::norm, n, norm_out);
  }
  if (m.dropout && !cx.eager) {
    // Megatron's bias-dropout-add is one fused kernel (bias_dropout_fusion, on unless
    // --no-bias-dropout-fusion; data/frameworks.json `kernels`): it reads the block output and
    // the residual and writes the sum and the 1-byte mask, 3 act + 1 bytes per element, where
    // the dropout and the add as two kernels move 5 act + 1. Its backward at twice that
    // (6 act + 2) is what its kernels move: the masked gradient (2 act + 1), the bias
    // gradient's reduction (act) and the residual fork's gradient sum (3 act). Kept: the sum
    // (the next norm's input) and the mask, as for the two kernels.
    b.elementwise("bias_dropout_add", (3.0 * act + 1.0) * tsp * hd, scope, OpRole::dropout, n,
                  n * (act + 1.0) * tsp * hd);
  } else {
    b.elementwise("residual_add", 3.0 * act * tsp * hd, scope, OpRole::residual, n, n * act * tsp * hd);
    if (m.dropout) {
      b.elementwise("dropout", (2.0 * act + 1.0) * tsp * hd, scope, OpRole::dropout, n, n * tsp * hd);
    }
  }
}

}  // namespace capplan::sim::lowering
