// SPDX-License-Identifier: Apache-2.0
// The entry points of the lowering (build_step_ops, build_pass_ops) and the order in which the
// blocks of blocks.hpp append their ops: the op list's order, which every fold over it reads.
#include "capplan/sim/lowering/step_model.hpp"

#include <algorithm>

#include "capplan/sim/lowering/stage_layout.hpp"
#include "lowering/blocks.hpp"
#include "lowering/lowering_context.hpp"
#include "lowering/op_list_builder.hpp"

namespace capplan::sim {

using lowering::OpListBuilder;

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
