// SPDX-License-Identifier: Apache-2.0
// Data parallel and optimizer, once per step for the most loaded stage: the gradient reduction and
// parameter gathers over the dense and expert replicas, the tied embedding's gradient all-reduce,
// ZeRO-3 / FSDP's per-layer gathers and reduce-scatters (and their host copies when offloaded),
// and the Adam step on the GPU or the host.
#include "lowering/blocks.hpp"
#include "lowering/shared_ops.hpp"

namespace capplan::sim::lowering {
namespace {

// The gradient reduction (and the distributed optimizer's gathers) of the dense and expert
// replicas.
void replica_grad_sync(OpListBuilder& b, const Context& cx, const StageParams& params) {
  const TrainingJob& job = cx.job;
  const Parallelism& p = cx.p;
  // Dense parameters are replicated over dp*cp ranks (stride tp); routed experts over the
  // expert-data-parallel ranks (stride ep*etp), as Megatron-Core lays them out.
  const int dense_dp = p.dp * p.cp;
  const int edp = expert_data_parallel(p);
  struct Replicas {
    const char* prefix;
    double params;
    int size;
    int stride;
  };
  // Only trained parameters have gradients to reduce and updates to gather back (fine-tuning).
  const Replicas groups[] = {{"dp", params.trained_dense, dense_dp, p.tp},
                             {"edp", params.trained_expert, edp, p.ep * p.etp}};
  for (const auto& g : groups) {
    if (g.size <= 1 || g.params <= 0) continue;
    const GroupPlacement group = place_group(g.size, g.stride, cx.topology);
    // Gradients in their reduction dtype (fp32 under Megatron-LM's bf16 default); the updated
    // parameters the distributed optimizer gathers back in the model's weight dtype (16-bit, or
    // FP8 with FP8 parameters).
    const units::Bytes grads = units::bytes(job.gradient_bytes() * g.params);
    const units::Bytes weights = units::bytes(job.gathered_param_bytes() * g.params);
    if (p.zero == 0) {
      b.add(CollectiveOp{"dp_grad_all_reduce", CollectiveKind::all_reduce, grads, group, Axis::dp}, Phase::step,
            Scope::data_parallel, 1.0, OpRole::collective);
    } else if (p.zero <= 2) {
      b.add(CollectiveOp{"dp_grad_reduce_scatter", CollectiveKind::reduce_scatter, grads, group, Axis::dp},
            Phase::step, Scope::data_parallel, 1.0, OpRole::collective);
      b.add(CollectiveOp{"dp_param_all_gather", CollectiveKind::all_gather, weights, group, Axis::dp}, Phase::step,
            Scope::data_parallel, 1.0, OpRole::collective);
    }
  }
}

void tied_embedding_grad_sync(OpListBuilder& b, const Context& cx) {
  const ModelSpec& m = cx.m;
  const TrainingJob& job = cx.job;
  const Parallelism& p = cx.p;
  // Tied input and output embeddings split over pipeline stages: the first and the last stage
  // each hold a copy of the word-embedding matrix and all-reduce its gradient between them
  // once per step, serially with the data-parallel reduction after the last backward, so never
  // hidden behind compute (Megatron-Core megatron/core/distributed/finalize_model_grads.py:
  // finish_grad_sync, then _allreduce_embedding_grads over the embedding group; DeepSpeed v0.12.2
  // pipe/schedule.py TrainSchedule: ReduceTiedGrads, then ReduceGrads, then OptimizerStep;
  // engine.py _exec_reduce_tied_grads: dist.all_reduce of the tied weight's gradient). Each TP rank
  // sends its vocab/tp rows, in the reduction dtype; the two ranks are (pp - 1) stages apart,
  // in one node only when the whole pipeline is.
  const GroupPlacement pair = pipeline_pair(p, cx.c);
  const units::Bytes grads = units::bytes(job.gradient_bytes() * m.embedding_params() / p.tp);
  b.add(CollectiveOp{"tied_embedding_grad_all_reduce", CollectiveKind::all_reduce, grads, pair, Axis::pp},
        Phase::step, Scope::data_parallel, 1.0, OpRole::collective);
}

// What ZeRO-3 gathers and reduce-scatters over the dense replicas: the group, the share of the
// layers' base weights that is trained, and the bytes per gathered base weight.
struct Zero3Shards {
  GroupPlacement group;
  double share = 1.0;
  double qbytes = 0;
};

// ZeRO-3's ops for the parameters of one scope: `linear`, the scope's linear weights (quantisable),
// `other`: its norms; `adapters`: its LoRA.
void fsdp_scope(OpListBuilder& b, const Context& cx, const Zero3Shards& z, double linear, double other,
                double adapters, Scope scope) {
  const TrainingJob& job = cx.job;
  const Parallelism& p = cx.p;
  const int dense_dp = p.dp * p.cp;
  const GroupPlacement& group = z.group;
  const double share = z.share, qbytes = z.qbytes;
  const double held = qbytes * linear + job.gathered_param_bytes() * (other + adapters);
  const double trained = (linear + other) * share + adapters;
  const units::Bytes bytes = units::bytes(held / p.tp);
  const units::Bytes grads = units::bytes(job.gradient_bytes() * trained / p.tp);
  b.add(CollectiveOp{"fsdp_param_all_gather", CollectiveKind::all_gather, bytes, group, Axis::dp}, Phase::forward,
        scope, 1.0, OpRole::collective);
  b.add(CollectiveOp{"fsdp_param_all_gather", CollectiveKind::all_gather, bytes, group, Axis::dp},
        Phase::backward, scope, 1.0, OpRole::collective);
  b.add(CollectiveOp{"fsdp_grad_reduce_scatter", CollectiveKind::reduce_scatter, grads, group, Axis::dp},
        Phase::backward, scope, 1.0, OpRole::collective);
  // The recomputed forward's own gather, where the framework releases it before backward.
  const bool regather = job.zero3_regather_recompute && p.recompute == Recompute::full;
  if (regather) {
    b.add(CollectiveOp{"fsdp_param_all_gather", CollectiveKind::all_gather, bytes, group, Axis::dp},
          Phase::recompute, scope, 1.0, OpRole::collective);
  }
  if (p.offload_params) {
    // This rank's shard: 1/dense_dp of what the gather assembles.
    const units::Bytes shard = bytes / static_cast<double>(dense_dp);
    b.add(MemoryOp{"offload_param_copy_in", shard, MemoryLink::host_to_device}, Phase::forward, scope, 1.0,
          OpRole::host_copy);
    b.add(MemoryOp{"offload_param_copy_in", shard, MemoryLink::host_to_device}, Phase::backward, scope, 1.0,
          OpRole::host_copy);
    if (regather) {
      b.add(MemoryOp{"offload_param_copy_in", shard, MemoryLink::host_to_device}, Phase::recompute, scope, 1.0,
            OpRole::host_copy);
    }
    b.add(MemoryOp{"offload_grad_copy_out", grads / static_cast<double>(dense_dp), MemoryLink::device_to_host},
          Phase::backward, scope, 1.0, OpRole::host_copy);
  }
}

void zero3_layer_comm(OpListBuilder& b, const Context& cx) {
  const ModelSpec& m = cx.m;
  const TrainingJob& job = cx.job;
  const Parallelism& p = cx.p;
  const int dense_dp = p.dp * p.cp;
  const int edp = expert_data_parallel(p);
  // ZeRO-3 / FSDP: parameters gathered before forward and again before backward, gradients
  // reduce-scattered after backward, for every micro-batch, per layer (so the schedule can
  // overlap them with that layer's compute). With the shards offloaded, each gather first
  // copies the rank's shard from the host and each reduce-scatter's shard goes back to it
  // (FSDP's copy-in on the all-gather stream; ZeRO-Infinity's offload_param).
  const GroupPlacement group = place_group(dense_dp, p.tp, cx.topology);
  // Parameters travel in 16 bits (FP8 with FP8 parameters; a quantised base in its 4-bit
  // format), gradients in their reduction dtype (FSDP's reduce_dtype), of the trained ones only.
  const FinetuneSpec& ft = job.finetune;
  const double share = ft.trained_layer_share(m.layers);
  const double qbytes = ft.quantized_base() ? ft.quantized_bytes_per_param() : job.gathered_param_bytes();
  const Zero3Shards z{group, share, qbytes};
  const double norms = 2.0 * m.hidden;
  fsdp_scope(b, cx, z, m.attention_params() - norms, norms, lora_attention_params(m, ft), Scope::layer);
  fsdp_scope(b, cx, z, m.dense_ffn_params(), 0.0, lora_dense_ffn_params(m, ft), Scope::dense_ffn);
  if (m.mamba_layer_count() > 0) fsdp_scope(b, cx, z, m.mamba_params(), 0.0, 0.0, Scope::mamba);
  if (m.is_moe()) {
    // Router and shared experts over the dense replicas; routed experts over their own
    // expert-data-parallel replicas (nothing to gather when each GPU owns its experts).
    const double per_expert_adapters = lora_moe_ffn_params(m, ft) / (m.moe.experts + m.moe.shared_experts);
    fsdp_scope(b, cx, z, static_cast<double>(m.moe.experts) * m.hidden + m.moe.shared_experts * m.expert_params(),
               0.0, m.moe.shared_experts * per_expert_adapters, Scope::moe_ffn);
    if (edp > 1) {
      const GroupPlacement egroup = place_group(edp, p.ep * p.etp, cx.topology);
      const double experts = (static_cast<double>(m.moe.experts) / p.ep) / p.etp;
      const double local = experts * m.expert_params(), adapters = experts * per_expert_adapters;
      const units::Bytes bytes = units::bytes(qbytes * local + job.gathered_param_bytes() * adapters);
      const units::Bytes grads = units::bytes(job.gradient_bytes() * (local * share + adapters));
      b.add(CollectiveOp{"fsdp_expert_all_gather", CollectiveKind::all_gather, bytes, egroup, Axis::dp},
            Phase::forward, Scope::moe_ffn, 1.0, OpRole::collective);
      b.add(CollectiveOp{"fsdp_expert_all_gather", CollectiveKind::all_gather, bytes, egroup, Axis::dp},
            Phase::backward, Scope::moe_ffn, 1.0, OpRole::collective);
      b.add(CollectiveOp{"fsdp_expert_reduce_scatter", CollectiveKind::reduce_scatter, grads, egroup, Axis::dp},
            Phase::backward, Scope::moe_ffn, 1.0, OpRole::collective);
    }
  }
}

void optimizer_step(OpListBuilder& b, const Context& cx, const StageParams& params) {
  const TrainingJob& job = cx.job;
  const Parallelism& p = cx.p;
  const int dense_dp = p.dp * p.cp;
  const int edp = expert_data_parallel(p);
  // Adam on this rank's shard of the trained parameters (TrainingJob::adam_step_bytes).
  const double shard =
      p.zero >= 1 ? params.trained_dense / dense_dp + params.trained_expert / edp : params.trained();
  if (!p.host_optimizer()) {
    b.add(MemoryOp{"adam_step", units::bytes(job.adam_step_bytes() * shard)}, Phase::step, Scope::optimizer, 1.0,
          OpRole::optimizer);
    return;
  }
  // Offloaded optimizer (ZeRO-Offload, Ren et al. 2021, Sec. 4.1): the reduced gradients of the
  // rank's shard go to the host, the CPU runs Adam over the same bytes as the GPU would, and the
  // updated 16-bit parameters come back. With the parameters offloaded the gradients are already
  // on the host (copied out per layer) and the updated shard stays there (copied in per gather).
  b.add(MemoryOp{"adam_step_cpu", units::bytes(job.adam_step_bytes() * shard), MemoryLink::host}, Phase::step,
        Scope::optimizer, 1.0, OpRole::optimizer);
  if (!p.offload_params) {
    b.add(MemoryOp{"offload_grad_copy_out", units::bytes(job.gradient_bytes() * shard), MemoryLink::device_to_host},
          Phase::step, Scope::optimizer, 1.0, OpRole::host_copy);
    b.add(MemoryOp{"offload_param_copy_in", units::bytes(job.gathered_param_bytes() * shard),
                   MemoryLink::host_to_device},
          Phase::step, Scope::optimizer, 1.0, OpRole::host_copy);
  }
}

}  // namespace

void lower_data_parallel_and_optimizer(OpListBuilder& b, const Context& cx, const StageParams& params) {
  const ModelSpec& m = cx.m;
  const Parallelism& p = cx.p;
  const int dense_dp = p.dp * p.cp;
  replica_grad_sync(b, cx, params);
  if (m.tied_embeddings && p.pp > 1 && cx.job.finetune.trains_embeddings()) tied_embedding_grad_sync(b, cx);
  if (p.zero >= 3 && (dense_dp > 1 || p.offload_params)) zero3_layer_comm(b, cx);
  optimizer_step(b, cx, params);
}

}  // namespace capplan::sim::lowering
