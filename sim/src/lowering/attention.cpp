// SPDX-License-Identifier: Apache-2.0
// The attention block of every layer, one micro-batch: the layer's residual stream, RoPE, the Q, K
// and V projections (MHA / GQA, or MLA), the attention core of a training step (a serving pass's
// is lowered by serving_attention.cpp), the output projection and its TP collectives.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "lowering/blocks.hpp"
#include "lowering/shared_ops.hpp"

namespace capplan::sim::lowering {
namespace {

// Whether Megatron's FusedScaleMaskSoftmax runs its fused CUDA kernel for a causal self-attention
// of `attn_batches` = micro-batch x heads per rank, `sq` queries and `sk` keys, or falls back to
// PyTorch ops (megatron/model/fused_softmax.py, and megatron/core/fusions/fused_softmax.py in
// Megatron-Core, is_kernel_available; the same test in Megatron-DeepSpeed): 16-bit input,
// 16 < sk <= 4096, sq and sk multiples of 4, attn_batches a multiple of 4 and of the kernel's
// batches per 128-thread block (get_batch_per_block in scaled_upper_triang_masked_softmax.h:
// warps of min(32, next_pow2(sk)) threads, two rows per warp when next_pow2(sk) <= 128).
bool megatron_fused_softmax_runs(std::int64_t attn_batches, std::int64_t sq, std::int64_t sk, double act_bytes) {
  if (act_bytes != 2.0 || !(sk > 16 && sk <= 4096) || sq % 4 != 0 || sk % 4 != 0 || attn_batches % 4 != 0) {
    return false;
  }
  std::int64_t pow2 = 1;
  while (pow2 < sk) pow2 *= 2;
  const std::int64_t warp = std::min<std::int64_t>(pow2, 32);
  const std::int64_t per_block = (128 / warp) * (pow2 <= 128 ? 2 : 1);
  return attn_batches % per_block == 0;
}

// The Q, K and V projections of this rank's heads.
void qkv_projections(OpListBuilder& b, const Context& cx) {
  const ModelSpec& m = cx.m;
  const Precision dt = cx.dt;
  const std::int64_t t = cx.t, tokens = cx.tokens, h = cx.h, heads = cx.heads, dh = cx.dh, kv_heads = cx.kv_heads;
  const std::int64_t d_qk = cx.d_qk, d_v = cx.d_v;
  const double act = cx.act, td = cx.td, hd = cx.hd;
  if (cx.mla) {
    // DeepSeek-V2 Sec. 2.1: down-projections to the latents are replicated across TP ranks
    // (Megatron-Core), up-projections split by heads. Kept: the normed latents (the up
    // projections' inputs) and the shared RoPE key, replicated; Q, K and V split by heads.
    const auto& a = m.mla;
    const double qk = static_cast<double>(d_qk);
    if (a.q_lora_rank > 0) {
      b.linear(Tuned{lora_q}, "q_down", "q_down_dgrad", "q_down_wgrad", tokens, a.q_lora_rank, h, dt, Scope::layer, 0,
               2.0 * td * hd * a.q_lora_rank / static_cast<double>(t));
      b.linear(Tuned{lora_q}, "q_up", "q_up_dgrad", "q_up_wgrad", tokens, heads * d_qk, a.q_lora_rank, dt, Scope::layer,
               act * td * heads * qk);
      b.elementwise("q_latent_norm", 2.0 * act * td * a.q_lora_rank, Scope::layer, OpRole::latent_norm, 1.0,
                    act * td * a.q_lora_rank);
    } else {
      b.linear(Tuned{lora_q}, "q_proj", "q_proj_dgrad", "q_proj_wgrad", tokens, heads * d_qk, h, dt, Scope::layer,
               act * td * heads * qk);
    }
    b.linear(Tuned{lora_k | lora_v}, "kv_down", "kv_down_dgrad", "kv_down_wgrad", tokens, a.kv_lora_rank + a.qk_rope_head_dim, h, dt,
             Scope::layer, act * td * a.qk_rope_head_dim,
             2.0 * td * hd * (a.kv_lora_rank + a.qk_rope_head_dim) / static_cast<double>(t));
    b.elementwise("kv_latent_norm", 2.0 * act * td * a.kv_lora_rank, Scope::layer, OpRole::latent_norm, 1.0,
                  act * td * a.kv_lora_rank);
    b.linear(Tuned{lora_k | lora_v}, "kv_up", "kv_up_dgrad", "kv_up_wgrad", tokens, heads * (a.qk_nope_head_dim + a.v_head_dim),
             a.kv_lora_rank, dt, Scope::layer, act * td * heads * (qk + d_v));
  } else {
    // Q, K and V (after RoPE) kept for the attention backward; the model-FLOPs convention counts
    // the K and V projections once, not per replicated head.
    b.linear("qkv", "qkv_dgrad", "qkv_wgrad", tokens, (heads + 2 * kv_heads) * dh, h, dt, Scope::layer,
             act * td * (heads + 2 * kv_heads) * dh,
             2.0 * td * hd * (static_cast<double>(m.heads) * dh + 2.0 * m.kv_dim()) / static_cast<double>(t));
    tp_window(b, cx);
    b.adapter(Tuned{lora_q}, tokens, heads * dh, h, Scope::layer);
    b.adapter(Tuned{lora_k}, tokens, kv_heads * dh, h, Scope::layer);
    b.adapter(Tuned{lora_v}, tokens, kv_heads * dh, h, Scope::layer);
  }
}

// The unfused softmax over the `batch` heads' s x `s_kv` scores.
void unfused_softmax(OpListBuilder& b, const Context& cx, std::int64_t batch, std::int64_t s_kv) {
  const ModelSpec& m = cx.m;
  const std::int64_t s = cx.s;
  const double act = cx.act;
  // Unfused softmax (+ dropout): reads and writes the s x s scores of every head; keeps the
  // softmax output, and with dropout its 1-byte mask and output (Korthikanti's 5as^2b).
  const double sq = static_cast<double>(batch) * s * s_kv;
  const double dropout = m.dropout ? (2.0 * act + 1.0) * sq : 0.0;
  const double dropout_kept = m.dropout ? (act + 1.0) * sq : 0.0;
  if (cx.eager || !cx.job.softmax_kernel_limits || megatron_fused_softmax_runs(batch, s, s_kv, act)) {
    b.elementwise("softmax", 2.0 * act * sq + dropout, Scope::layer, OpRole::softmax, 1.0, act * sq + dropout_kept);
  } else {
    // Megatron's FusedScaleMaskSoftmax without its kernel: PyTorch's ops in fp32 (the
    // apply_query_key_layer_scaling default makes the softmax fp32). 16-bit scores: cast up
    // (act + 4 bytes per score), scale (8), masked_fill_ (9: the 1-byte mask), softmax (8),
    // cast back (4 + act); backward their gradients: cast (act + 4), softmax (12), mask (9),
    // scale (8), cast (4 + act): five kernels each way instead of one. fp32 scores skip the
    // casts: three kernels, 25 and 29 bytes. It keeps the fp32 probabilities for the softmax
    // backward, and the 16-bit ones the P V GEMM reads.
    const bool half = act < 4.0;
    const double kernels = half ? 5.0 : 3.0;
    const double fwd_bytes = half ? 33.0 + 2.0 * act : 25.0;
    const double bwd_bytes = half ? 37.0 + 2.0 * act : 29.0;
    const bool softmax_rc = b.recomputes(OpRole::softmax, Scope::layer);
    const MemoryOp fwd{"softmax_torch", units::bytes((fwd_bytes * sq + dropout) / kernels)};
    const MemoryOp bwd{"softmax_torch", units::bytes((bwd_bytes * sq + 2.0 * dropout) / kernels)};
    b.add(fwd, Phase::forward, Scope::layer, kernels, OpRole::softmax, 0, (4.0 + (half ? act : 0.0)) * sq + dropout_kept,
          softmax_rc);
    b.add(bwd, Phase::backward, Scope::layer, kernels, OpRole::softmax);
    if (softmax_rc) b.add(fwd, Phase::recompute, Scope::layer, kernels, OpRole::softmax);
  }
}

// Context parallelism's K and V exchange around the attention core (`rc`: recomputed with it).
void ring_attention_comm(OpListBuilder& b, const Context& cx, bool rc) {
  const Parallelism& p = cx.p;
  const double act = cx.act, td = cx.td;
  const std::int64_t kv_heads = cx.kv_heads, d_qk = cx.d_qk, d_v = cx.d_v;
  // Ring attention: cp-1 steps, each passing this rank's K and V chunk (s/cp tokens) to the
  // next rank, overlapped with the attention of the chunk in hand; backward passes K, V and
  // their gradients (twice the bytes). Megatron-Core orders ranks TP, CP, DP: stride tp.
  const GroupPlacement cp_group = place_group(p.cp, p.tp, cx.topology);
  const units::Bytes chunk = units::bytes(act * td * kv_heads * (d_qk + d_v));  // K and V
  const CollectiveOp kv{"cp_kv_send_recv", CollectiveKind::send_recv, chunk, cp_group, Axis::cp};
  b.add(kv, Phase::forward, Scope::layer, p.cp - 1.0, OpRole::collective, 0, 0, rc);
  b.add(kv, Phase::backward, Scope::layer, 2.0 * (p.cp - 1.0), OpRole::collective);
  if (rc) b.add(kv, Phase::recompute, Scope::layer, p.cp - 1.0, OpRole::collective);
}

// The attention core of a training step's layer.
void attention_core(OpListBuilder& b, const Context& cx) {
  const ModelSpec& m = cx.m;
  const TrainingJob& job = cx.job;
  const Parallelism& p = cx.p;
  const Precision attn_dt = cx.attn_dt;
  const std::int64_t s = cx.s, heads = cx.heads, d_qk = cx.d_qk, d_v = cx.d_v;
  const double td = cx.td;
  // Attention core: S = Q K^T and O = P V per head (batched); backward has twice the GEMMs.
  // Fused (flash) attention skips masked blocks and recomputes S in its backward: 5 GEMMs there
  // instead of 4 (Dao 2023). With context parallelism each rank's s/cp queries meet all s keys
  // (ring attention; Megatron-Core balances the causal work across ranks).
  // Model FLOPs (Megatron's convention; Narayanan et al. 2021 Appendix, Korthikanti et al.
  // 2022 Sec. 6): 2*keys*(d_qk + d_v) per query and head over the full square, keys being the
  // window for sliding-window layers; backward twice the forward.
  const std::int64_t s_kv = m.seq_len;
  const std::int64_t batch = static_cast<std::int64_t>(p.micro_batch) * heads;
  double work = attention_work_fraction(m);
  // The framework's attention kernel generation (TrainingJob::attention_kernel) sets its rate.
  const bool v1 = m.flash_attention && job.attention_kernel == AttentionKernel::flash1;
  GemmOp score{"attn_score", s, s_kv, d_qk, batch, attn_dt, m.flash_attention, 0.0, v1};
  GemmOp context{"attn_context", s, d_v, s_kv, batch, attn_dt, m.flash_attention, 0.0, v1};
  const double share = 1.0 / std::max(1, m.sliding_window_every);  // windowed layers
  const bool windowed = m.sliding_window > 0 && m.sliding_window < m.seq_len;
  double keys = windowed ? share * m.sliding_window + (1.0 - share) * m.seq_len : static_cast<double>(m.seq_len);
  // The causal sequence the fused kernel's query blocks sweep (its rate depends on it,
  // DatasheetCost::attention_shape): the sequence; a window of w keys when every layer is
  // windowed (w keys per query, the mean of a causal 2w); the full layers' sequence when only
  // some are (they hold nearly all the FLOPs); a context-parallel rank's chunk (ring attention
  // runs the kernel chunk by chunk).
  std::int64_t swept = windowed && share >= 1.0 ? std::min<std::int64_t>(m.seq_len, 2LL * m.sliding_window)
                                                : m.seq_len;
  // Packed documents masked apart (TrainingJob::attention_tokens = E[l^2]/E[l]): each document's
  // causal square, sum l^2 / 2 = S a / 2 of the S x S shape, by a varlen fused kernel.
  const double doc = job.attention_tokens;
  if (m.flash_attention && doc > 0 && doc < m.seq_len) {
    work = std::min(work, doc / (2.0 * m.seq_len));
    keys = std::min(keys, doc);
    swept = std::min<std::int64_t>(swept, std::max<std::int64_t>(1, std::llround(doc)));
  } else if (doc > m.seq_len && !windowed) {
    // Unpacked samples of varying length (FinetuneShape::attention_tokens = E[L^2]/E[L] above
    // the mean padded length S): the sequences' squares average S a, more than S^2, whichever
    // kernel runs them; a fused kernel sweeps longer sequences on average.
    work *= doc / static_cast<double>(m.seq_len);
    keys *= doc / static_cast<double>(m.seq_len);
    if (m.flash_attention) swept = std::max<std::int64_t>(swept, std::llround(doc));
  }
  if (m.flash_attention) {
    score.attention_tokens = context.attention_tokens = std::max<std::int64_t>(1, swept / p.cp);
    score.attention_head_dim = context.attention_head_dim = std::max(d_qk, d_v);
  }
  // Hybrid models follow Megatron-Bridge's hybrid formula instead (flop_utils.py
  // attn_layer_flops, NVIDIA-NeMo/Megatron-Bridge @067f987: 2 b s h p s for both core GEMMs,
  // the causal half of the square), which its performance tables report for these models.
  const double convention = m.is_hybrid() ? 0.5 : 1.0;
  const double score_flops = convention * 2.0 * td * keys * heads * d_qk;
  const double context_flops = convention * 2.0 * td * keys * heads * d_v;
  const bool rc = b.recomputes(OpRole::attention_core, Scope::layer);
  // Fused attention keeps its fp32 log-sum-exp per query and head.
  const double lse = m.flash_attention ? 4.0 * td * heads : 0.0;
  b.add(score, Phase::forward, Scope::layer, work, OpRole::attention_core, score_flops, lse, rc);
  b.add(context, Phase::forward, Scope::layer, work, OpRole::attention_core, context_flops, 0, rc);
  b.add(score, Phase::backward, Scope::layer, (m.flash_attention ? 3.0 : 2.0) * work, OpRole::attention_core,
        2.0 * score_flops);
  b.add(context, Phase::backward, Scope::layer, 2.0 * work, OpRole::attention_core, 2.0 * context_flops);
  if (rc) {
    b.add(score, Phase::recompute, Scope::layer, work, OpRole::attention_core, score_flops);
    b.add(context, Phase::recompute, Scope::layer, work, OpRole::attention_core, context_flops);
  }
  if (!m.flash_attention) unfused_softmax(b, cx, batch, s_kv);
  if (p.cp > 1) ring_attention_comm(b, cx, rc);
}

}  // namespace

// The attention block of every layer, one micro-batch (Korthikanti et al. 2022, Fig. 4/5).
// Tensors kept for backward (Korthikanti et al. 2022, Sec. 4.1, generalised): each op saves what
// it produces and a backward pass needs. Replicated over the TP ranks unless sequence parallel:
// the two residual-stream tensors (the norms' inputs), the two norm outputs (the QKV and FFN
// GEMM inputs), the dropout masks; split over TP: Q, K, V, the attention output (projection
// input), the FFN up outputs and the activation output (down input).
void lower_attention(OpListBuilder& b, const Context& cx) {
  const ModelSpec& m = cx.m;
  const double act = cx.act, td = cx.td, gemm_in = cx.gemm_in, qk_elems = cx.qk_elems;
  const std::int64_t tokens = cx.tokens, h = cx.h, heads = cx.heads, d_v = cx.d_v;
  residual_stream(b, cx, Scope::layer, cx.hybrid ? 1.0 : 2.0);
  if (m.rope) {
    // Rotary embedding on Q and K. Fused: read and write once. Eager (torchtitan / Llama
    // reference): .float() (2+4), complex multiply (4+4), view_as_real + type_as (4+2).
    // Its backward needs no saved tensor (a rotation by the conjugate).
    if (cx.eager) {
      for (double bytes_per_elem : {6.0, 8.0, 6.0}) {
        b.elementwise("rope_eager", bytes_per_elem * qk_elems, Scope::layer, OpRole::rope);
      }
    } else {
      b.elementwise("rope", 2.0 * act * qk_elems, Scope::layer, OpRole::rope);
    }
  }
  if (cx.eager) {
    // The attention output (batch, heads, s, d) is made contiguous as (batch, s, heads*d).
    b.elementwise("attn_out_transpose", 2.0 * act * td * heads * d_v, Scope::layer, OpRole::copy);
  }
  qkv_projections(b, cx);
  if (cx.serving()) {
    lower_serving_attention(b, cx);
  } else {
    attention_core(b, cx);
  }
  // The projection's input (the attention output) is the output of the attention core, kept as
  // the output of the recomputed region under selective recompute: the projection owns it.
  b.linear(Tuned{lora_o, true}, "attn_proj", "attn_proj_dgrad", "attn_proj_wgrad", tokens, h, heads * d_v, cx.dt,
           Scope::layer, gemm_in * td * heads * d_v);
  tp_block_comm(b, cx, Scope::layer);
}

}  // namespace capplan::sim::lowering
