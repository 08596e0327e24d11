// SPDX-License-Identifier: Apache-2.0
#include "lowering/lowering_context.hpp"

namespace capplan::sim::lowering {

Context::Context(const ModelSpec& model, const TrainingJob& training, const Parallelism& layout,
                 const Cluster& cluster)
    : Context(model, training, layout, cluster, PassKind::training, InferencePass{}) {}

Context::Context(const ModelSpec& model, const TrainingJob& training, const Parallelism& layout,
                 const Cluster& cluster, const InferencePass& serving_pass)
    : Context(model, training, layout, cluster, PassKind::serving, serving_pass) {}

Context::Context(const ModelSpec& model, const TrainingJob& training, const Parallelism& layout,
                 const Cluster& cluster, PassKind pass_kind, const InferencePass& serving_pass)
    : m(model), job(training), p(layout), c(cluster), kind(pass_kind), pass(serving_pass),
      policy(model, training, layout) {
  dt = job.precision;
  attn_dt = dt == Precision::fp8 || dt == Precision::fp4 ? Precision::bf16 : dt;
  topology = c.network();
  tp_group = place_group(p.tp, 1, topology);
  tune = TuneContext{job.finetune, job.finetune.trained_layer_share(m.layers), job.framework == Framework::pytorch,
                     attn_dt, element_bytes(attn_dt), tp_group};
  cast_bytes = serving() ? 2.0 + element_bytes(dt) + (dt == Precision::fp4 ? 1.0 / 16.0 : 0.0)
                         : fp8_cast_bytes_per_element(job.fp8_recipe);
  t = p.tp;
  s = m.seq_len / p.cp;
  tokens = serving() ? pass.prefill_tokens + pass.decode_sequences : static_cast<std::int64_t>(p.micro_batch) * s;
  tokens_sp = p.sequence_parallel ? tokens / t : tokens;
  h = m.hidden;
  heads = m.heads / t;
  mla = m.attention == Attention::mla;
  dh = m.head_dim();
  kv_heads = mla ? heads : (m.kv_heads + t - 1) / t;
  d_qk = mla ? m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim : dh;
  d_v = mla ? m.mla.v_head_dim : dh;
  f = m.ffn_hidden;
  eager = job.framework == Framework::pytorch;
  act = element_bytes(attn_dt);
  gemm_in = dt == Precision::fp8 ? 1.0 : act;
  td = static_cast<double>(tokens);
  tsp = static_cast<double>(tokens_sp);
  hd = static_cast<double>(h);
  qk_elems = td * (heads + kv_heads) * d_qk;
  full_rc = policy.full();
  moe_rc = full_rc || policy.moe_layer();
  tp_async = job.tp_async_dgrad && !eager && !p.tp_comm_overlap;
  hybrid = m.is_hybrid();
}

OpListBuilder Context::builder(std::vector<StepOp>& ops, StepOpParts parts) const {
  OpListBuilder b(ops, parts, cast_bytes, policy, tune);
  if (serving()) {
    b.set_inference(pass.weight_bytes);
  } else {
    b.set_fp8_cast_kernels(fp8_cast_kernels_per_tensor(job.fp8_recipe), fp8_casts_fuse_across_tensors(job.fp8_recipe));
  }
  return b;
}

}  // namespace capplan::sim::lowering
