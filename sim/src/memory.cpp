// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/memory.hpp"

#include <algorithm>

#include "capplan/sim/step_model.hpp"

namespace capplan::sim {

int layers_on_stage(int layers, int pp, int stage) {
  const int base = layers / pp;
  const int extra = layers % pp;
  return base + (stage < extra ? 1 : 0);
}

units::Bytes layer_activation_bytes(const ModelSpec& m, const Parallelism& p, Precision /*precision*/) {
  // Korthikanti et al. 2022, Sec. 4.1: per layer s*b*h*(34 + 5*a*s/h) bytes with 16-bit
  // activations and 1-byte dropout masks, of which 10*s*b*h are replicated across TP ranks
  // (norm inputs, QKV and MLP inputs, dropout masks) unless sequence parallelism splits them.
  // Generalised: K/V sized by kv_heads, FFN by ffn_hidden (gated FFNs keep both branch outputs),
  // dropout masks only when the model uses dropout, and no s^2 terms with fused attention.
  const double s = static_cast<double>(m.seq_len) / p.cp;
  const double b = p.micro_batch;
  const double h = m.hidden;
  const double t = p.tp;
  const double f = m.ffn_hidden;
  const double kv = m.kv_dim();
  const double sb = s * b;
  const double mask = m.dropout ? 1.0 : 0.0;

  const double replicated = (4.0 + 2.0 + 2.0 + 2.0 * mask) * sb * h;  // 2 norm inputs, QKV in, MLP in, masks
  const double attention_split = (2.0 * h + 2.0 * kv + 2.0 * kv + 2.0 * h) * sb;  // Q, K, V, proj input
  const double mlp_split = ((m.gated_ffn ? 4.0 : 2.0) * f + 2.0 * f) * sb;          // act input(s), fc2 input
  const double heads = m.heads;
  const double quadratic = m.flash_attention ? 4.0 * heads * sb          // fp32 log-sum-exp per row
                                             : (2.0 + 3.0 * mask) * heads * s * sb;  // softmax (+ dropout)

  const double rep = p.sequence_parallel ? replicated / t : replicated;
  switch (p.recompute) {
    case Recompute::full:
      return units::bytes(2.0 * sb * h / (p.sequence_parallel ? t : 1.0));  // layer input only
    case Recompute::selective:
      return units::bytes(rep + (attention_split + mlp_split) / t + (m.flash_attention ? quadratic / t : 0.0));
    case Recompute::none:
      break;
  }
  return units::bytes(rep + (attention_split + mlp_split + quadratic) / t);
}

namespace {

// Micro-batches' worth of a stage's activations held at the peak of a 1F1B schedule: pp - stage
// (Narayanan et al. 2021). Interleaved: Megatron-LM warms up (pp-i-1)*2 + (v-1)*pp chunks plus
// the one in flight, each of L/(pp*v) layers, i.e. ((pp-i-1)*2 + (v-1)*pp + 1)/v stage-worths;
// for the first stage this is pp*(1 + (pp-1)/(pp*v)), Korthikanti et al. 2022 Sec. 4.2.3.
// Never more than the micro-batches that exist.
double in_flight(const Parallelism& p, int micro_batches, int stage) {
  const double v = p.virtual_stages;
  const double held = v > 1 ? ((p.pp - stage - 1) * 2.0 + (v - 1) * p.pp + 1) / v : double(p.pp - stage);
  return std::min<double>(held, micro_batches);
}

}  // namespace

MemoryBreakdown memory_per_gpu(const ModelSpec& m, const TrainingJob& job, const Parallelism& p, const GpuSpec& gpu,
                               int micro_batches, const MemoryAssumptions& a) {
  MemoryBreakdown best;
  const double dp = p.dp;
  const units::Bytes act_layer = layer_activation_bytes(m, p, job.precision);
  Parallelism no_rc = p;
  no_rc.recompute = Recompute::selective;
  const units::Bytes act_full_layer = layer_activation_bytes(m, no_rc, job.precision);

  const int stages_to_check[] = {0, p.pp - 1};
  for (int i = 0; i < (p.pp > 1 ? 2 : 1); ++i) {
    const int stage = stages_to_check[i];
    MemoryBreakdown mb;
    mb.capacity = gpu.hbm_capacity;
    mb.stage = stage;
    const double params = stage_params_per_gpu(m, p, stage);
    const int layers = layers_on_stage(m.layers, p.pp, stage);
    // ZeRO (Rajbhandari et al. 2020): stage 1 shards optimizer states, 2 also gradients,
    // 3 also weights over the data-parallel group.
    double weights = params * a.weight_bytes;
    if (p.zero >= 3 && p.dp > 1) {
      // Shards plus the gathered working copy of the current and the prefetched layer.
      weights = weights / dp + 2.0 * m.layer_params() / p.tp * a.weight_bytes;
    }
    mb.weights = units::bytes(weights);
    mb.gradients = units::bytes(params * a.grad_bytes / (p.zero >= 2 ? dp : 1.0));
    mb.optimizer = units::bytes(params * a.optimizer_bytes / (p.zero >= 1 ? dp : 1.0));
    double act = act_layer.base() * layers * in_flight(p, micro_batches, stage);
    if (p.recompute == Recompute::full) act += act_full_layer.base();  // one layer rematerialised in backward
    if (stage == 0) {
      // Embedding output (16-bit) kept as the first layer's input for the backward pass.
      act += 2.0 * m.seq_len / p.cp * p.micro_batch * m.hidden / (p.sequence_parallel ? p.tp : 1.0) *
             in_flight(p, micro_batches, stage);
    }
    mb.activations = units::bytes(act);
    if (stage == p.pp - 1) {
      // bf16 logits plus the fp32 softmax of the vocabulary-parallel cross-entropy, one micro-batch.
      mb.logits = units::bytes(6.0 * m.seq_len / p.cp * p.micro_batch * m.vocab / p.tp);
    }
    const units::Bytes allocated = mb.weights + mb.gradients + mb.optimizer + mb.activations + mb.logits;
    mb.reserve = units::gib(a.reserve_fixed_gib) + allocated * a.reserve_fraction;
    if (i == 0 || mb.total() > best.total()) best = mb;
  }
  return best;
}

}  // namespace capplan::sim
