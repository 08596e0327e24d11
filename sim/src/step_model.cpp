// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/step_model.hpp"

#include <algorithm>
#include <cstdint>

#include "capplan/sim/memory.hpp"

namespace capplan::sim {

GroupPlacement place_group(int size, int stride, int gpus_per_node) {
  GroupPlacement g;
  g.size = std::max(1, size);
  if (g.size == 1) return g;
  if (stride >= gpus_per_node) {
    g.ranks_per_node = 1;  // every member on its own node
  } else {
    g.ranks_per_node = std::clamp(gpus_per_node / std::max(1, stride), 1, g.size);
  }
  g.nodes = (g.size + g.ranks_per_node - 1) / g.ranks_per_node;
  return g;
}

double stage_params_per_gpu(const ModelSpec& m, const Parallelism& p, int stage) {
  double params = layers_on_stage(m.layers, p.pp, stage) * m.layer_params();
  if (stage == 0) params += m.embedding_params();
  if (stage == p.pp - 1) {
    // With tied embeddings and pp > 1 the last stage keeps its own copy of the matrix
    // (Megatron synchronises the two copies' gradients).
    params += m.tied_embeddings ? (p.pp > 1 ? m.embedding_params() : 0.0) : m.output_params();
    params += m.hidden;
  }
  return params / p.tp;
}

namespace {

class OpListBuilder {
 public:
  explicit OpListBuilder(std::vector<StepOp>& ops) : ops_(ops) {}
  void add(Op op, Phase phase, Scope scope, double count = 1.0) { ops_.push_back({op, phase, scope, count}); }
  // A linear layer Y[T x n] = X[T x k] W[k x n]: forward, plus dgrad and wgrad in backward.
  void linear(const char* name, const char* dgrad, const char* wgrad, std::int64_t tokens, std::int64_t n,
              std::int64_t k, Precision dt, Scope scope, bool recompute) {
    add(GemmOp{name, tokens, n, k, 1, dt}, Phase::forward, scope);
    add(GemmOp{dgrad, tokens, k, n, 1, dt}, Phase::backward, scope);
    add(GemmOp{wgrad, k, n, tokens, 1, dt}, Phase::backward, scope);
    if (recompute) add(GemmOp{name, tokens, n, k, 1, dt}, Phase::recompute, scope);
    if (dt == Precision::fp8) {
      // Transformer Engine quantises each GEMM input to FP8 with a fused cast + transpose
      // (read 16-bit, write the row- and column-major FP8 copies: 2 + 1 + 1 bytes per element):
      // the activation in forward, the incoming gradient in backward. FP8 weights are cached
      // across the micro-batches of a step, so their casts are left out.
      const double x = static_cast<double>(tokens) * static_cast<double>(k);
      const double dy = static_cast<double>(tokens) * static_cast<double>(n);
      add(MemoryOp{"fp8_cast_transpose", units::bytes(4.0 * x)}, Phase::forward, scope);
      add(MemoryOp{"fp8_cast_transpose", units::bytes(4.0 * dy)}, Phase::backward, scope);
      if (recompute) add(MemoryOp{"fp8_cast_transpose", units::bytes(4.0 * x)}, Phase::recompute, scope);
    }
  }
  // An element-wise kernel: forward moves `bytes`, backward about twice that (it reads the
  // saved input and the incoming gradient and writes the outgoing gradient).
  void elementwise(const char* name, double bytes, Scope scope, bool recompute, double count = 1.0) {
    add(MemoryOp{name, units::bytes(bytes)}, Phase::forward, scope, count);
    add(MemoryOp{name, units::bytes(2.0 * bytes)}, Phase::backward, scope, count);
    if (recompute) add(MemoryOp{name, units::bytes(bytes)}, Phase::recompute, scope, count);
  }

 private:
  std::vector<StepOp>& ops_;
};

}  // namespace

StepOps build_step_ops(const ModelSpec& m, const TrainingJob& job, const Parallelism& p, const Cluster& c) {
  StepOps out;
  out.ops.reserve(64);
  OpListBuilder b(out.ops);
  const Precision dt = job.precision;
  // Attention core stays in 16-bit under FP8 recipes (Transformer Engine keeps it in bf16).
  const Precision attn_dt = dt == Precision::fp8 ? Precision::bf16 : dt;
  const std::int64_t t = p.tp;
  const std::int64_t s = m.seq_len / p.cp;
  const std::int64_t tokens = static_cast<std::int64_t>(p.micro_batch) * s;
  const std::int64_t tokens_sp = p.sequence_parallel ? tokens / t : tokens;
  const std::int64_t h = m.hidden;
  const std::int64_t dh = m.head_dim();
  const std::int64_t heads = m.heads / t;
  const std::int64_t kv_heads = (m.kv_heads + t - 1) / t;  // replicated when tp > kv_heads
  const std::int64_t f = m.ffn_hidden;
  const bool full_rc = p.recompute == Recompute::full;
  const bool eager = job.framework == Framework::pytorch;
  // Selective checkpointing in PyTorch frameworks (torchtitan's op-level policy) keeps the GEMM
  // and attention outputs and recomputes the element-wise ops; Megatron's selective recompute
  // is the attention core (handled below).
  const bool rc_elementwise = full_rc || (eager && p.recompute == Recompute::selective);
  const double act = 2.0;  // bytes per 16-bit activation element
  const double qk_elems = static_cast<double>(tokens) * (heads + kv_heads) * dh;

  // --- one transformer layer, one micro-batch (Korthikanti et al. 2022, Fig. 4/5 op order) ---
  // Norms. Fused: one kernel reads and writes the tensor. Eager RMSNorm (Llama reference
  // implementation): x.float() (2+4 bytes/element), pow (4+4), mean (4), x*rsqrt (4+4),
  // type_as (4+2), *weight (2+2). Eager LayerNorm is one fused ATen kernel.
  if (eager && m.rmsnorm) {
    for (double bytes_per_elem : {6.0, 8.0, 4.0, 8.0, 6.0, 4.0}) {
      b.elementwise("rmsnorm_eager", bytes_per_elem * tokens_sp * h, Scope::layer, rc_elementwise, 2.0);
    }
  } else {
    b.elementwise(m.rmsnorm ? "rmsnorm" : "layernorm", 2.0 * act * tokens_sp * h, Scope::layer, rc_elementwise, 2.0);
  }
  b.elementwise("residual_add", 3.0 * act * tokens_sp * h, Scope::layer, rc_elementwise, 2.0);
  if (m.dropout) b.elementwise("dropout", (2.0 * act + 1.0) * tokens_sp * h, Scope::layer, rc_elementwise, 2.0);
  if (m.rope) {
    // Rotary embedding on Q and K. Fused: read and write once. Eager (torchtitan / Llama
    // reference): .float() (2+4), complex multiply (4+4), view_as_real + type_as (4+2).
    if (eager) {
      for (double bytes_per_elem : {6.0, 8.0, 6.0}) {
        b.elementwise("rope_eager", bytes_per_elem * qk_elems, Scope::layer, rc_elementwise);
      }
    } else {
      b.elementwise("rope", 2.0 * act * qk_elems, Scope::layer, rc_elementwise);
    }
  }
  if (eager) {
    // The attention output (batch, heads, s, d) is made contiguous as (batch, s, heads*d).
    b.elementwise("attn_out_transpose", 2.0 * act * tokens * heads * dh, Scope::layer, rc_elementwise);
  }

  b.linear("qkv", "qkv_dgrad", "qkv_wgrad", tokens, (heads + 2 * kv_heads) * dh, h, dt, Scope::layer, full_rc);
  {
    // Attention core: S = Q K^T and O = P V per head (batched); backward has twice the GEMMs.
    // Fused (flash) attention skips the masked upper triangle (half the work of a causal mask)
    // and recomputes S in its backward: 5 GEMMs there instead of 4 (Dao 2023).
    const std::int64_t batch = static_cast<std::int64_t>(p.micro_batch) * heads;
    const double causal = m.flash_attention ? 0.5 : 1.0;
    const GemmOp score{"attn_score", s, s, dh, batch, attn_dt, m.flash_attention};
    const GemmOp context{"attn_context", s, dh, s, batch, attn_dt, m.flash_attention};
    const bool rc = full_rc || (p.recompute == Recompute::selective && !m.flash_attention);
    b.add(score, Phase::forward, Scope::layer, causal);
    b.add(context, Phase::forward, Scope::layer, causal);
    b.add(score, Phase::backward, Scope::layer, (m.flash_attention ? 3.0 : 2.0) * causal);
    b.add(context, Phase::backward, Scope::layer, 2.0 * causal);
    if (rc) {
      b.add(score, Phase::recompute, Scope::layer, causal);
      b.add(context, Phase::recompute, Scope::layer, causal);
    }
    if (!m.flash_attention) {
      // Unfused softmax (+ dropout): reads and writes the s x s scores of every head.
      const double sq = static_cast<double>(batch) * s * s;
      const double bytes = 2.0 * act * sq + (m.dropout ? (2.0 * act + 1.0) * sq : 0.0);
      b.elementwise("softmax", bytes, Scope::layer, rc);
    }
  }
  b.linear("attn_proj", "attn_proj_dgrad", "attn_proj_wgrad", tokens, h, heads * dh, dt, Scope::layer, full_rc);
  const std::int64_t up = (m.gated_ffn ? 2 : 1) * f / t;
  b.linear("ffn_up", "ffn_up_dgrad", "ffn_up_wgrad", tokens, up, h, dt, Scope::layer, full_rc);
  if (eager && m.gated_ffn) {
    // silu(gate) (2+2 bytes per element), then * up (2+2+2).
    b.elementwise("silu_eager", 2.0 * act * tokens * (f / t), Scope::layer, rc_elementwise);
    b.elementwise("mul_eager", 3.0 * act * tokens * (f / t), Scope::layer, rc_elementwise);
  } else {
    b.elementwise(m.gated_ffn ? "swiglu" : "gelu", act * tokens * (up + f / t), Scope::layer, rc_elementwise);
  }
  b.linear("ffn_down", "ffn_down_dgrad", "ffn_down_wgrad", tokens, h, f / t, dt, Scope::layer, full_rc);

  // Tensor-parallel collectives: 2 all-reduces per layer in forward and 2 in backward
  // (Shoeybi et al. 2019, the f/g operators); with sequence parallelism each becomes an
  // all-gather + reduce-scatter pair of the same total volume (Korthikanti et al. 2022, Sec. 4.2.2).
  if (t > 1) {
    const GroupPlacement tp_group = place_group(p.tp, 1, c.gpus_per_node);
    const units::Bytes msg = units::bytes(act * tokens * h);
    auto tp_comm = [&](Phase phase) {
      if (p.sequence_parallel) {
        b.add(CollectiveOp{"tp_all_gather", CollectiveKind::all_gather, msg, tp_group}, phase, Scope::layer, 2.0);
        b.add(CollectiveOp{"tp_reduce_scatter", CollectiveKind::reduce_scatter, msg, tp_group}, phase, Scope::layer,
              2.0);
      } else {
        b.add(CollectiveOp{"tp_all_reduce", CollectiveKind::all_reduce, msg, tp_group}, phase, Scope::layer, 2.0);
      }
    };
    tp_comm(Phase::forward);
    tp_comm(Phase::backward);
    if (full_rc) tp_comm(Phase::recompute);
  }

  // --- embedding (first stage) and output layer + loss (last stage) ---
  b.elementwise("embedding", 2.0 * act * tokens_sp * h, Scope::embedding, false);
  b.elementwise("final_layernorm", 2.0 * act * tokens_sp * h, Scope::output, false);
  b.linear("logits", "logits_dgrad", "logits_wgrad", tokens, m.vocab / t, h, dt, Scope::output, false);
  // Vocabulary-parallel cross-entropy in fp32: read logits, write softmax, write gradient.
  b.elementwise("cross_entropy", (act + 4.0 + 4.0) * tokens * (m.vocab / t), Scope::output, false);
  if (t > 1) {
    const GroupPlacement tp_group = place_group(p.tp, 1, c.gpus_per_node);
    if (p.sequence_parallel) {
      b.add(CollectiveOp{"tp_all_gather", CollectiveKind::all_gather, units::bytes(act * tokens * h), tp_group},
            Phase::forward, Scope::output);
      b.add(CollectiveOp{"tp_reduce_scatter", CollectiveKind::reduce_scatter, units::bytes(act * tokens * h),
                         tp_group},
            Phase::backward, Scope::output);
    } else {
      b.add(CollectiveOp{"tp_all_reduce", CollectiveKind::all_reduce, units::bytes(act * tokens * h), tp_group},
            Phase::backward, Scope::output);
    }
  }

  // --- pipeline point-to-point: activations forward, gradients backward, per stage boundary.
  // Megatron's scatter/gather optimisation sends 1/t of the tensor per TP rank (Narayanan 2021).
  if (p.pp > 1) {
    // Stage i occupies ranks [i*stride, (i+1)*stride). Once the pipeline spans more than one
    // node some boundary crosses the network, and the slowest boundary sets the pace.
    const long long stride = 1LL * p.tp * p.dp * p.cp;
    const bool crosses = stride * p.pp > c.gpus_per_node;
    const GroupPlacement pair{2, crosses ? 1 : 2, crosses ? 2 : 1};
    const units::Bytes msg = units::bytes(act * tokens * h / t);
    b.add(CollectiveOp{"pp_send_activations", CollectiveKind::send_recv, msg, pair, Axis::pp}, Phase::forward, Scope::pipeline);
    b.add(CollectiveOp{"pp_send_gradients", CollectiveKind::send_recv, msg, pair, Axis::pp}, Phase::backward, Scope::pipeline);
  }

  // --- data parallel and optimizer, once per step for the most loaded stage ---
  double params = 0;
  for (int stage : {0, p.pp - 1}) params = std::max(params, stage_params_per_gpu(m, p, stage));
  out.stage_params = params;
  if (p.dp > 1) {
    const GroupPlacement dp_group = place_group(p.dp, p.tp * p.cp, c.gpus_per_node);
    const units::Bytes grads = units::bytes(2.0 * params);  // bf16 gradients
    if (p.zero == 0) {
      b.add(CollectiveOp{"dp_grad_all_reduce", CollectiveKind::all_reduce, grads, dp_group, Axis::dp}, Phase::step,
            Scope::data_parallel);
    } else if (p.zero <= 2) {
      b.add(CollectiveOp{"dp_grad_reduce_scatter", CollectiveKind::reduce_scatter, grads, dp_group, Axis::dp}, Phase::step,
            Scope::data_parallel);
      b.add(CollectiveOp{"dp_param_all_gather", CollectiveKind::all_gather, grads, dp_group, Axis::dp}, Phase::step,
            Scope::data_parallel);
    } else {
      // ZeRO-3 / FSDP: parameters gathered before forward and again before backward, gradients
      // reduce-scattered after backward, for every micro-batch (Scope::layer-like cadence,
      // expressed per layer so the schedule can overlap it with that layer's compute).
      const units::Bytes layer_bytes = units::bytes(2.0 * m.layer_params() / p.tp);
      b.add(CollectiveOp{"fsdp_param_all_gather", CollectiveKind::all_gather, layer_bytes, dp_group, Axis::dp},
            Phase::forward, Scope::layer);
      b.add(CollectiveOp{"fsdp_param_all_gather", CollectiveKind::all_gather, layer_bytes, dp_group, Axis::dp},
            Phase::backward, Scope::layer);
      b.add(CollectiveOp{"fsdp_grad_reduce_scatter", CollectiveKind::reduce_scatter, layer_bytes, dp_group, Axis::dp},
            Phase::backward, Scope::layer);
    }
  }
  // Mixed-precision Adam on this rank's shard: read fp32 master, m, v and the gradient; write
  // master, m, v and the 16-bit weight: 4*3 + 2 + 4*3 + 2 = 28 bytes per parameter.
  const double shard = p.zero >= 1 ? params / p.dp : params;
  b.add(MemoryOp{"adam_step", units::bytes(28.0 * shard)}, Phase::step, Scope::optimizer);
  return out;
}

}  // namespace capplan::sim
