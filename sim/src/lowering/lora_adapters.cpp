// SPDX-License-Identifier: Apache-2.0
// LoRA adapters (fine-tuning): the ops an adapted linear adds to the op list.
#include <cstdint>

#include "lowering/op_list_builder.hpp"

namespace capplan::sim::lowering {

// The LoRA adapter of a linear Y[T x n] = X[T x k] W (per TP rank): A [k x r], B [r x n],
// Y += (X A) B * alpha / r (Hu et al. 2021, Sec. 4.1). Forward: X A and (X A) B, then the scaled
// add into Y; backward: the gradients of B's input and weight, of A's input and weight, and the
// add of A's input gradient into the base's. Under TP (Megatron-Core's LoRA adapters) the
// column-parallel base splits B by its outputs and keeps A whole, the row-parallel base splits A
// by its inputs and keeps B whole: one small all-reduce of X A (r wide) per adapted linear, in
// backward for the first, in forward for the second. X A is kept for B's weight gradient (X is
// kept by its producer).
void OpListBuilder::lora(const Tuned& tuned, std::int64_t tokens, std::int64_t n, std::int64_t k, Scope scope, bool rc,
                         std::int64_t batch, double kernels) {
  const std::int64_t r = tune_.spec.lora_rank;
  const int tp = tune_.tp_group.size;
  // Column-parallel: A reads the whole input (k is whole); B writes this rank's n outputs.
  // Row-parallel: A reads this rank's k inputs; B writes all n outputs.
  const Precision dt = tune_.adapter_dtype;
  const double rows = static_cast<double>(tokens) * static_cast<double>(batch) * kernels;
  const GemmOp down{"lora_a", tokens, r, k, batch, dt}, up{"lora_b", tokens, n, r, batch, dt};
  add(down, Phase::forward, scope, kernels, OpRole::adapter, down.flops().base() * kernels,
      tune_.act_bytes * rows * static_cast<double>(r), rc);
  add(up, Phase::forward, scope, kernels, OpRole::adapter, up.flops().base() * kernels, 0, rc);
  // Megatron-Core adds the scaled adapter output in one fused pass; eager PEFT scales, then adds.
  const double add_bytes = (tune_.eager ? 5.0 : 3.0) * tune_.act_bytes * rows * static_cast<double>(n);
  add(MemoryOp{"lora_add", units::bytes(add_bytes)}, Phase::forward, scope, 1.0, OpRole::adapter, 0, 0, rc);
  add(GemmOp{"lora_b_dgrad", tokens, r, n, batch, dt}, Phase::backward, scope, kernels, OpRole::adapter,
      up.flops().base() * kernels);
  add(GemmOp{"lora_b_wgrad", r, n, tokens, batch, dt}, Phase::backward, scope, kernels, OpRole::adapter,
      up.flops().base() * kernels);
  add(GemmOp{"lora_a_dgrad", tokens, k, r, batch, dt}, Phase::backward, scope, kernels, OpRole::adapter,
      down.flops().base() * kernels);
  add(GemmOp{"lora_a_wgrad", k, r, tokens, batch, dt}, Phase::backward, scope, kernels, OpRole::adapter,
      down.flops().base() * kernels);
  // The incoming gradient scaled for B (eager), and A's input gradient added into the base's.
  const double grad_bytes = (tune_.eager ? 2.0 * static_cast<double>(n) : 0.0) + 3.0 * static_cast<double>(k);
  add(MemoryOp{"lora_grad_add", units::bytes(grad_bytes * tune_.act_bytes * rows)}, Phase::backward, scope, 1.0,
      OpRole::adapter);
  if (rc) {
    add(down, Phase::recompute, scope, kernels, OpRole::adapter, down.flops().base() * kernels);
    add(up, Phase::recompute, scope, kernels, OpRole::adapter, up.flops().base() * kernels);
    add(MemoryOp{"lora_add", units::bytes(add_bytes)}, Phase::recompute, scope, 1.0, OpRole::adapter);
  }
  if (tp > 1) {
    const CollectiveOp ar{"lora_tp_all_reduce", CollectiveKind::all_reduce,
                          units::bytes(tune_.act_bytes * rows * static_cast<double>(r)), tune_.tp_group};
    if (tuned.row_parallel) {
      add(ar, Phase::forward, scope, 1.0, OpRole::collective, 0, 0, rc);
      if (rc) add(ar, Phase::recompute, scope, 1.0, OpRole::collective);
    } else {
      add(ar, Phase::backward, scope, 1.0, OpRole::collective);
    }
  }
}

}  // namespace capplan::sim::lowering
