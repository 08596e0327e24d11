// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/folds/memory.hpp"

#include <algorithm>

#include "capplan/sim/lowering/step_model.hpp"

namespace capplan::sim {

ActivationFootprint activation_footprint(const std::vector<StepOp>& ops) {
  ActivationFootprint out;
  for (const StepOp& so : ops) {
    if (so.phase != Phase::forward || so.saved <= 0 || traits(so.scope).repeat == Repeat::per_step) continue;
    ActivationFootprint::Part& part = out[so.scope];
    (so.recomputed ? part.remat : part.kept) += so.saved;
  }
  return out;
}

namespace {

// The op list of one micro-batch; the cluster only places collectives, which keep nothing.
ActivationFootprint footprint_of(const ModelSpec& m, const TrainingJob& job, const Parallelism& p) {
  Cluster c;
  c.gpus = p.tp * p.pp * p.dp * p.cp;
  StepOps ops;
  build_step_ops_into(ops, m, job, p, c, StepOpParts::micro_batch);
  return activation_footprint(ops.ops);
}

}  // namespace

LayerActivations layer_activations(const ModelSpec& m, const Parallelism& p, Precision precision) {
  TrainingJob job;
  job.precision = precision;
  const ActivationFootprint f = footprint_of(m, job, p);
  return {units::bytes(f[Scope::layer].kept), units::bytes(f[Scope::dense_ffn].kept),
          units::bytes(f[Scope::moe_ffn].kept)};
}

units::Bytes layer_activation_bytes(const ModelSpec& m, const Parallelism& p, Precision precision) {
  const LayerActivations a = layer_activations(m, p, precision);
  return a.attention + a.dense_mlp;
}

namespace {

// A stage's activations from the footprint: what one micro-batch keeps over the stage's layers
// (each kind's scope once per layer of that kind, kScopeTraits) and the embedding on the first
// stage; and what exists while one layer is recomputed, layers being recomputed one at a time:
// the largest of a transformer layer's (its attention block and the larger of its FFN kinds) and
// those of the layers that stand alone (every layer of a hybrid). The output layer's buffers are
// the logits, counted apart.
struct Held {
  double per_micro_batch = 0, remat = 0;
};
Held held_activations(const ActivationFootprint& f, const StageLayers& sl) {
  Held h;
  double attention_remat = 0, ffn_remat = 0, alone_remat = 0;
  for_each_scope(Repeat::per_layer, [&](const ScopeTraits& t) {
    const int n = t.on_stage(sl);
    h.per_micro_batch += n * f[t.scope].kept;
    const double remat = n > 0 ? f[t.scope].remat : 0.0;
    if (sl.hybrid || !t.transformer_layer) {
      alone_remat = std::max(alone_remat, remat);
    } else if (t.scope == Scope::layer) {
      attention_remat = remat;
    } else {
      ffn_remat = std::max(ffn_remat, remat);
    }
  });
  h.remat = std::max(attention_remat + ffn_remat, alone_remat);
  for_each_scope(Repeat::first_stage, [&](const ScopeTraits& t) {
    if (t.on_stage(sl) > 0) h.per_micro_batch += f[t.scope].kept;
  });
  return h;
}

}  // namespace

// Micro-batches' worth of a stage's activations held at the peak of a 1F1B schedule: pp - stage
// (Narayanan et al. 2021). Interleaved: Megatron-LM warms up (pp-i-1)*2 + (v-1)*pp chunks plus
// the one in flight, each of L/(pp*v) layers, i.e. ((pp-i-1)*2 + (v-1)*pp + 1)/v stage-worths;
// for the first stage this is pp*(1 + (pp-1)/(pp*v)), Korthikanti et al. 2022 Sec. 4.2.3.
double in_flight(const Parallelism& p, int micro_batches, int stage) {
  const double v = p.virtual_stages;
  const double held = v > 1 ? ((p.pp - stage - 1) * 2.0 + (v - 1) * p.pp + 1) / v : double(p.pp - stage);
  return std::min<double>(held, micro_batches);
}

MemoryBreakdown memory_per_gpu(const ActivationFootprint& f, const ModelSpec& m, const TrainingJob& job,
                               const Parallelism& p, const GpuSpec& gpu, int micro_batches,
                               const MemoryAssumptions& a) {
  return memory_per_gpu(f, stage_runs(m, p), m, job, p, gpu, micro_batches, a);
}

MemoryBreakdown memory_per_gpu(const ActivationFootprint& f, const std::vector<StageRun>& runs, const ModelSpec& m,
                               const TrainingJob& job, const Parallelism& p, const GpuSpec& gpu, int micro_batches,
                               const MemoryAssumptions& a) {
  MemoryBreakdown best;
  // Dense parameters are replicated over dp*cp ranks, routed experts over the expert-data-
  // parallel ranks; ZeRO shards each over its own replicas.
  const double dense_dp = static_cast<double>(p.dp) * p.cp;
  const double edp = expert_data_parallel(p);
  const double optimizer_bytes = a.optimizer_bytes.value_or(job.optimizer_state_bytes());
  bool any = false;
  for (const StageRun& run : runs) {
    const StageLayers& sl = run.layers;
    const int stage = run.stage;
    MemoryBreakdown mb;
    mb.capacity = gpu.hbm_capacity;
    mb.stage = stage;
    const StageParams params = stage_params(m, job, p, sl);
    // ZeRO (Rajbhandari et al. 2020): stage 1 shards optimizer states, 2 also gradients,
    // 3 also weights over the data-parallel group. `dense` and `expert` bytes of one kind.
    auto sharded = [&](double dense, double expert, bool shard) {
      return shard ? dense / dense_dp + expert / edp : dense + expert;
    };
    // Weights in the training precision's bytes, the quantised frozen base (QLoRA) in its format.
    const FinetuneSpec& ft = job.finetune;
    const double wb = job.weight_bytes(), qb = ft.quantized_bytes_per_param();
    // Offloaded parameter shards (and their gradients, and the optimizer) live in host memory.
    const bool params_on_host = p.offload_params && p.zero >= 3;
    double weights = params_on_host
                         ? 0.0
                         : sharded(wb * (params.dense - params.quantized_dense) + qb * params.quantized_dense,
                                   wb * (params.expert - params.quantized_expert) + qb * params.quantized_expert,
                                   p.zero >= 3);
    if (p.zero >= 3 && (dense_dp > 1 || params_on_host)) {
      // Plus the gathered working copy of the current and the prefetched layer.
      const double layer = m.is_hybrid() ? std::max({m.attention_params(), m.dense_ffn_params(), m.mamba_params(),
                                                      m.is_moe() ? m.moe_ffn_params() : 0.0})
                                         : m.layer_params();
      // A quantised base travels in its 4-bit format (its norms in 16 bits).
      const double layer_bytes = ft.quantized_base()
                                     ? qb * (layer - 2.0 * m.hidden) + job.gathered_param_bytes() * 2.0 * m.hidden
                                     : job.gathered_param_bytes() * layer;
      weights += 2.0 * layer_bytes / p.tp;
    }
    if (ft.quantized_base()) {
      // The 16-bit copy of the largest matrix being dequantised for its GEMM (one at a time).
      weights += 2.0 * std::max<double>(m.hidden * static_cast<double>(m.ffn_hidden) * (m.gated_ffn ? 2.0 : 1.0),
                                        m.hidden * static_cast<double>(m.moe.expert_ffn_hidden)) /
                 p.tp;
    }
    mb.weights = units::bytes(weights);
    if (params_on_host) {
      // One layer's unsharded gradient before its reduce-scatter and copy out (the stage's trained
      // parameters per layer: the whole layer in full SFT, its adapters under LoRA).
      const double per_layer = params.trained() / std::max(1, sl.layers + sl.mamba);
      mb.gradients = units::bytes(job.gradient_bytes() * per_layer);
    } else {
      mb.gradients = units::bytes(sharded(job.gradient_bytes() * params.trained_dense,
                                          job.gradient_bytes() * params.trained_expert, p.zero >= 2));
    }
    mb.optimizer = p.host_optimizer() ? units::Bytes{}
                                      : units::bytes(sharded(optimizer_bytes * params.trained_dense,
                                                             optimizer_bytes * params.trained_expert, p.zero >= 1));
    // Kept activations of every in-flight micro-batch, plus the one layer being recomputed.
    const Held held = held_activations(f, sl);
    double per_micro_batch = held.per_micro_batch, remat = held.remat;
    mb.activations = units::bytes(per_micro_batch * in_flight(p, micro_batches, stage) + remat);
    // The logits and loss buffers of one micro-batch (the last stage runs each micro-batch's
    // backward right after its forward).
    if (sl.last) mb.logits = units::bytes(f[Scope::output].kept + f[Scope::output].remat);
    const units::Bytes allocated = mb.weights + mb.gradients + mb.optimizer + mb.activations + mb.logits;
    mb.reserve = units::gib(a.reserve_fixed_gib) + allocated * a.reserve_fraction;
    if (!any || mb.total() > best.total()) best = mb;
    any = true;
  }
  return best;
}

MemoryBreakdown memory_per_gpu(const ModelSpec& m, const TrainingJob& job, const Parallelism& p, const GpuSpec& gpu,
                               int micro_batches, const MemoryAssumptions& a) {
  return memory_per_gpu(footprint_of(m, job, p), m, job, p, gpu, micro_batches, a);
}

}  // namespace capplan::sim
