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

LayerActivations layer_activations(const ModelSpec& m, const Parallelism& p, Precision precision) {
  // Korthikanti et al. 2022, Sec. 4.1: per layer s*b*h*(34 + 5*a*s/h) bytes with 16-bit
  // activations and 1-byte dropout masks, of which 10*s*b*h are replicated across TP ranks
  // (norm inputs, QKV and MLP inputs, dropout masks) unless sequence parallelism splits them.
  // Generalised: K/V sized by kv_heads (MLA: by its per-head dimensions, plus the latents), FFN
  // by ffn_hidden (gated FFNs keep both branch outputs), dropout masks only when the model uses
  // dropout, no s^2 terms with fused attention, s/cp tokens per rank with context parallelism.
  const double s = static_cast<double>(m.seq_len) / p.cp;
  const double b = p.micro_batch;
  const double h = m.hidden;
  const double t = p.tp;
  const double f = m.ffn_hidden;
  const double sb = s * b;
  const double mask = m.dropout ? 1.0 : 0.0;
  const double heads = m.heads;

  // FP8 training (Transformer Engine) saves the GEMM inputs it needs for wgrad as FP8: one byte
  // instead of two for the QKV, projection, FC1 and FC2 inputs.
  const double gemm_in = precision == Precision::fp8 ? 1.0 : 2.0;
  const double replicated = (4.0 + gemm_in + gemm_in + 2.0 * mask) * sb * h;  // 2 norm inputs, QKV in, MLP in, masks
  double attention_split = 0;
  double latents = 0;  // MLA latents: replicated across TP ranks
  if (m.attention == Attention::mla) {
    const double qk = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim, v = m.mla.v_head_dim;
    attention_split = (2.0 * heads * qk + 2.0 * heads * qk + 2.0 * heads * v + gemm_in * heads * v) * sb;
    latents = 2.0 * sb * (m.mla.q_lora_rank + m.mla.kv_lora_rank + m.mla.qk_rope_head_dim);
  } else {
    const double kv = m.kv_dim();
    const double q = heads * m.head_dim();
    attention_split = (2.0 * q + 2.0 * kv + 2.0 * kv + gemm_in * q) * sb;  // Q, K, V, proj input
  }
  const double quadratic = m.flash_attention ? 4.0 * heads * sb                            // fp32 log-sum-exp
                                             : (2.0 + 3.0 * mask) * heads * m.seq_len * sb;  // softmax (+ dropout)
  const double mlp_split = ((m.gated_ffn ? 4.0 : 2.0) * f + gemm_in * f) * sb;  // act input(s), fc2 input

  LayerActivations out;
  const double rep = p.sequence_parallel ? replicated / t : replicated;
  switch (p.recompute) {
    case Recompute::full:
      out.attention = units::bytes(2.0 * sb * h / (p.sequence_parallel ? t : 1.0));  // layer input only
      return out;
    case Recompute::selective: {
      // recompute_norms: the norms' outputs (the QKV and FC1 GEMM inputs) are recomputed in
      // backward from the kept norm inputs, not saved.
      const double norm_outputs = p.recompute_norms ? 2.0 * gemm_in * sb * h / (p.sequence_parallel ? t : 1.0) : 0.0;
      out.attention = units::bytes(rep - norm_outputs + latents + attention_split / t +
                                   (m.flash_attention ? quadratic / t : 0.0));
      break;
    }
    case Recompute::none:
      out.attention = units::bytes(rep + latents + (attention_split + quadratic) / t);
      break;
  }
  out.dense_mlp = units::bytes(mlp_split / t);
  if (m.is_moe()) {
    // Routed experts: the busiest rank holds capacity_factor x (its T/tp tokens x top_k) expert
    // inputs and activation inputs; the router keeps fp32 logits per token and expert; shared
    // experts are a TP-split dense FFN.
    const auto& e = m.moe;
    const double moe_tokens = t > 1 ? sb / t : sb;
    const double routed = moe_tokens * e.top_k * e.capacity_factor;
    const double fe = static_cast<double>(e.expert_ffn_hidden) / p.etp;
    // With ETP a rank keeps the gathered tokens of its etp group for 1/etp of each expert.
    // recompute_moe_act (selective): the activation output, the FC2 input, is recomputed in
    // backward from the kept FC1 output instead of saved.
    const bool act_kept = !(p.recompute == Recompute::selective && p.recompute_moe_act);
    const double experts =
        routed * p.etp * (gemm_in * h + (m.gated_ffn ? 4.0 : 2.0) * fe + (act_kept ? gemm_in * fe : 0.0));
    const double router = moe_tokens * e.experts * 4.0;
    const double fs = static_cast<double>(e.shared_experts) * e.expert_ffn_hidden;
    const double shared = ((m.gated_ffn ? 4.0 : 2.0) * fs + gemm_in * fs) * sb / t;
    out.moe_mlp = units::bytes(experts + router + shared);
  }
  return out;
}

units::Bytes layer_activation_bytes(const ModelSpec& m, const Parallelism& p, Precision precision) {
  const LayerActivations a = layer_activations(m, p, precision);
  return a.attention + a.dense_mlp;
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
  // Dense parameters are replicated over dp*cp ranks, routed experts over the expert-data-
  // parallel ranks; ZeRO shards each over its own replicas.
  const double dense_dp = static_cast<double>(p.dp) * p.cp;
  const double edp = expert_data_parallel(p);
  const LayerActivations act_layer = layer_activations(m, p, job.precision);
  Parallelism no_rc = p;
  no_rc.recompute = Recompute::selective;
  const LayerActivations act_full = layer_activations(m, no_rc, job.precision);

  const int stages_to_check[] = {0, p.pp - 1};
  for (int i = 0; i < (p.pp > 1 ? 2 : 1); ++i) {
    const int stage = stages_to_check[i];
    MemoryBreakdown mb;
    mb.capacity = gpu.hbm_capacity;
    mb.stage = stage;
    const StageParams params = stage_params(m, p, stage);
    const StageLayers sl = stage_layers(m, p.pp, stage);
    // ZeRO (Rajbhandari et al. 2020): stage 1 shards optimizer states, 2 also gradients,
    // 3 also weights over the data-parallel group.
    auto sharded = [&](double bytes_per_param, bool shard) {
      return shard ? params.dense * bytes_per_param / dense_dp + params.expert * bytes_per_param / edp
                   : params.total() * bytes_per_param;
    };
    // FP8 training keeps the 16-bit weights and, per GEMM weight, an FP8 copy and its transpose
    // (Transformer Engine caches both across micro-batches): 2 more bytes per parameter; with
    // FP8 parameters the weight itself is FP8, plus its cached transpose (TrainingJob).
    double weights = sharded(job.weight_bytes(), p.zero >= 3);
    if (p.zero >= 3 && dense_dp > 1) {
      // Plus the gathered working copy of the current and the prefetched layer.
      weights += 2.0 * m.layer_params() / p.tp * job.gathered_param_bytes();
    }
    mb.weights = units::bytes(weights);
    mb.gradients = units::bytes(sharded(job.gradient_bytes(), p.zero >= 2));
    mb.optimizer = units::bytes(sharded(a.optimizer_bytes, p.zero >= 1));
    const double per_micro_batch = sl.layers * act_layer.attention.base() + sl.dense() * act_layer.dense_mlp.base() +
                                   sl.moe * act_layer.moe_mlp.base();
    double act = per_micro_batch * in_flight(p, micro_batches, stage);
    if (p.recompute == Recompute::full) {
      // One layer rematerialised in backward.
      act += act_full.attention.base() + std::max(act_full.dense_mlp.base(), act_full.moe_mlp.base());
    }
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
