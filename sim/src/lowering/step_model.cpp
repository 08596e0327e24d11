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

StageParams stage_params(const ModelSpec& m, const Parallelism& p, int stage) {
  return stage_params(m, p, stage_layers(m, p, stage));
}

StageParams stage_params(const ModelSpec& m, const Parallelism& p, const StageLayers& sl) {
  return stage_params(m, TrainingJob{}, p, sl);
}

StageParams stage_params(const ModelSpec& m, const TrainingJob& job, const Parallelism& p, const StageLayers& sl) {
  const FinetuneSpec& ft = job.finetune;
  StageParams out;
  // Base weights of the stage's layers: dense ones (attention, dense FFNs, Mamba mixers, router,
  // shared experts) and routed experts, the latter spread over the EP ranks (and split by ETP).
  const double norms = 2.0 * m.hidden;  // per layer, inside attention_params()
  double layers_dense = sl.layers * m.attention_params() + sl.dense() * m.dense_ffn_params();
  if (sl.mamba > 0) layers_dense += sl.mamba * m.mamba_params();
  double layers_expert = 0;
  if (sl.moe > 0) {
    layers_dense += sl.moe * (static_cast<double>(m.moe.experts) * m.hidden + m.moe.shared_experts * m.expert_params() +
                              m.ffn_norm_params());
    layers_expert = sl.moe * (static_cast<double>(m.moe.experts) / p.ep) * m.expert_params() / p.etp;
  }
  double embeddings = sl.first ? m.embedding_params() : 0.0;
  if (sl.last) {
    // With tied embeddings and pp > 1 the last stage keeps its own copy of the matrix
    // (Megatron synchronises the two copies' gradients).
    embeddings += m.tied_embeddings ? (p.pp > 1 ? m.embedding_params() : 0.0) : m.output_params();
  }
  const double final_norm = sl.last ? m.hidden : 0.0;
  // Adapters (LoRA): per layer of each kind; routed experts' adapters live with their experts.
  const double per_expert = m.is_moe() ? lora_moe_ffn_params(m, ft) / (m.moe.experts + m.moe.shared_experts) : 0.0;
  const double adapters_dense = sl.layers * lora_attention_params(m, ft) + sl.dense() * lora_dense_ffn_params(m, ft) +
                                sl.moe * m.moe.shared_experts * per_expert;
  const double adapters_expert = sl.moe * (static_cast<double>(m.moe.experts) / p.ep) * per_expert / p.etp;
  out.dense = (layers_dense + embeddings + final_norm + adapters_dense) / p.tp;
  out.expert = layers_expert + adapters_expert;
  const double share = ft.trained_layer_share(m.layers);
  const double trained_embeddings = ft.trains_embeddings() ? embeddings : 0.0;
  out.trained_dense = ((layers_dense + final_norm) * share + trained_embeddings + adapters_dense) / p.tp;
  out.trained_expert = layers_expert * share + adapters_expert;
  if (ft.quantized_base()) {
    // The layers' linear weights (not the norms, the embeddings or the output layer: bitsandbytes
    // and GPTQ leave those in 16 bits).
    out.quantized_dense = (layers_dense - sl.layers * norms) / p.tp;
    out.quantized_expert = layers_expert;
  }
  return out;
}

double stage_params_per_gpu(const ModelSpec& m, const Parallelism& p, int stage) {
  return stage_params(m, p, stage).total();
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
  const ModelSpec& m = cx.m;
  const TrainingJob& job = cx.job;
  const Parallelism& p = cx.p;
  const Cluster& c = cx.c;
  const Topology& topology = cx.topology;
  OpListBuilder b = cx.builder(out.ops, parts);
  using lowering::Tuned;
  using lowering::residual_stream;
  using lowering::tp_block_comm;
  using lowering::tp_window;

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
  StageParams params;
  for (const StageRun& run : stage_runs(m, p)) {
    const StageLayers& sl = run.layers;
    const StageParams sp = stage_params(m, job, p, sl);
    if (sp.total() > params.total()) params = sp;
  }
  out.params = params;
  out.stage_params = params.trained();
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
    const GroupPlacement group = place_group(g.size, g.stride, topology);
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
  if (m.tied_embeddings && p.pp > 1 && job.finetune.trains_embeddings()) {
    // Tied input and output embeddings split over pipeline stages: the first and the last stage
    // each hold a copy of the word-embedding matrix and all-reduce its gradient between them
    // once per step, serially with the data-parallel reduction after the last backward, so never
    // hidden behind compute (Megatron-Core megatron/core/distributed/finalize_model_grads.py:
    // finish_grad_sync, then _allreduce_embedding_grads over the embedding group; DeepSpeed v0.12.2
    // pipe/schedule.py TrainSchedule: ReduceTiedGrads, then ReduceGrads, then OptimizerStep;
    // engine.py _exec_reduce_tied_grads: dist.all_reduce of the tied weight's gradient). Each TP rank
    // sends its vocab/tp rows, in the reduction dtype; the two ranks are (pp - 1) stages apart,
    // in one node only when the whole pipeline is.
    const GroupPlacement pair = pipeline_pair(p, c);
    const units::Bytes grads = units::bytes(job.gradient_bytes() * m.embedding_params() / p.tp);
    b.add(CollectiveOp{"tied_embedding_grad_all_reduce", CollectiveKind::all_reduce, grads, pair, Axis::pp},
          Phase::step, Scope::data_parallel, 1.0, OpRole::collective);
  }
  if (p.zero >= 3 && (dense_dp > 1 || p.offload_params)) {
    // ZeRO-3 / FSDP: parameters gathered before forward and again before backward, gradients
    // reduce-scattered after backward, for every micro-batch, per layer (so the schedule can
    // overlap them with that layer's compute). With the shards offloaded, each gather first
    // copies the rank's shard from the host and each reduce-scatter's shard goes back to it
    // (FSDP's copy-in on the all-gather stream; ZeRO-Infinity's offload_param).
    const GroupPlacement group = place_group(dense_dp, p.tp, topology);
    // Parameters travel in 16 bits (FP8 with FP8 parameters; a quantised base in its 4-bit
    // format), gradients in their reduction dtype (FSDP's reduce_dtype), of the trained ones only.
    const FinetuneSpec& ft = job.finetune;
    const double share = ft.trained_layer_share(m.layers);
    const double qbytes = ft.quantized_base() ? ft.quantized_bytes_per_param() : job.gathered_param_bytes();
    // `linear`: the scope's linear weights (quantisable), `other`: its norms; `adapters`: its LoRA.
    auto fsdp = [&](double linear, double other, double adapters, Scope scope) {
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
    };
    const double norms = 2.0 * m.hidden;
    fsdp(m.attention_params() - norms, norms, lora_attention_params(m, ft), Scope::layer);
    fsdp(m.dense_ffn_params(), 0.0, lora_dense_ffn_params(m, ft), Scope::dense_ffn);
    if (m.mamba_layer_count() > 0) fsdp(m.mamba_params(), 0.0, 0.0, Scope::mamba);
    if (m.is_moe()) {
      // Router and shared experts over the dense replicas; routed experts over their own
      // expert-data-parallel replicas (nothing to gather when each GPU owns its experts).
      const double per_expert_adapters = lora_moe_ffn_params(m, ft) / (m.moe.experts + m.moe.shared_experts);
      fsdp(static_cast<double>(m.moe.experts) * m.hidden + m.moe.shared_experts * m.expert_params(), 0.0,
           m.moe.shared_experts * per_expert_adapters, Scope::moe_ffn);
      if (edp > 1) {
        const GroupPlacement egroup = place_group(edp, p.ep * p.etp, topology);
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
