// SPDX-License-Identifier: Apache-2.0
// The attention core of a serving pass (paged KV cache, as vLLM, SGLang and TensorRT-LLM run it):
// the new tokens' K and V written to the cache, prefill's fused attention over the prompt's keys
// and decode's reads of the cache. The rest of the attention block is attention.cpp's.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "lowering/blocks.hpp"

namespace capplan::sim::lowering {

void lower_serving_attention(OpListBuilder& b, const Context& cx) {
  const ModelSpec& m = cx.m;
  const InferencePass& ip = cx.pass;
  const Precision attn_dt = cx.attn_dt;
  const bool mla = cx.mla;
  const std::int64_t heads = cx.heads, kv_heads = cx.kv_heads, d_qk = cx.d_qk, d_v = cx.d_v;
  const double act = cx.act, td = cx.td;
  const double share = 1.0 / std::max(1, m.sliding_window_every);  // windowed layers
  const auto windowed = [&](double keys) {
    return m.sliding_window > 0 ? share * std::min<double>(keys, m.sliding_window) + (1.0 - share) * keys : keys;
  };
  const std::int64_t latent = mla ? m.mla.kv_lora_rank + m.mla.qk_rope_head_dim : 0;
  // The cache per token on this rank: K and V of its KV heads; MLA's latent and RoPE key
  // (replicated over TP ranks).
  const double kv_elems = mla ? static_cast<double>(latent) : static_cast<double>(kv_heads) * (d_qk + d_v);
  // The new tokens' K and V written into their cache blocks (vLLM's reshape_and_cache): read in
  // 16 bits, written in the cache's precision.
  b.add(MemoryOp{"kv_cache_write", units::bytes((act + ip.kv_bytes) * td * kv_elems), MemoryLink::hbm,
                 units::bytes(ip.kv_bytes * td * kv_elems)},
        Phase::forward, Scope::layer, 1.0, OpRole::kv_cache);
  if (ip.prefill_tokens > 0 && ip.prefill_keys > 0) {
    // Prefill: one varlen fused (flash) attention over the batch's prompt tokens, each meeting
    // `prefill_keys` keys on average (its cached prefix plus the causal half of its prompt).
    // MLA prefills without absorption: K and V up-projected per head (the kv_up linear).
    const double keys = windowed(ip.prefill_keys);
    const std::int64_t n_keys = std::max<std::int64_t>(1, std::llround(keys));
    const double pd = static_cast<double>(ip.prefill_tokens);
    // Its rate follows the causal sequence of the same mean keys per query (twice them).
    GemmOp score{"prefill_attn_score", ip.prefill_tokens, n_keys, d_qk, heads, attn_dt, true};
    GemmOp context{"prefill_attn_context", ip.prefill_tokens, d_v, n_keys, heads, attn_dt, true};
    score.attention_tokens = context.attention_tokens = 2 * n_keys;
    score.attention_head_dim = context.attention_head_dim = std::max(d_qk, d_v);
    b.add(score, Phase::forward, Scope::layer, 1.0, OpRole::attention_core, 2.0 * pd * keys * heads * d_qk);
    b.add(context, Phase::forward, Scope::layer, 1.0, OpRole::attention_core, 2.0 * pd * keys * heads * d_v);
  }
  if (ip.decode_sequences > 0 && ip.decode_context > 0) {
    const double ctx = windowed(ip.decode_context);
    const std::int64_t n_ctx = std::max<std::int64_t>(1, std::llround(ctx));
    const double dd = static_cast<double>(ip.decode_sequences);
    if (mla) {
      // Absorbed MLA decode (DeepSeek-V2 Sec. 2.1.3; FlashMLA and vLLM's MLA backend): each
      // head's query, moved into the latent space (the kv_up linear's shape and FLOPs), meets
      // the shared latent cache: 2 (2 kv_lora + rope) FLOPs per head and key, the cache read
      // once (the op's B is latent + kv_lora wide, read at latent / that of kv_bytes).
      const std::int64_t width = m.mla.kv_lora_rank + latent;
      GemmOp att{"decode_mla_attention", heads, n_ctx, width, ip.decode_sequences, attn_dt};
      att.weight_bytes = ip.kv_bytes * static_cast<double>(latent) / static_cast<double>(width);
      b.add(att, Phase::forward, Scope::layer, 1.0, OpRole::attention_core, 2.0 * dd * heads * ctx * width);
    } else {
      // Decode (PagedAttention, FlashDecoding): per sequence and KV head, the query heads of its
      // group meet the cached keys and values, read from the cache in its precision: two
      // skinny GEMMs (group x ctx x d_qk and group x d_v x ctx), bound by the cache reads.
      // The P V reduction runs over the context: split into chunks of 512 keys reduced in
      // parallel and combined (Flash-Decoding, Dao et al. 2023; vLLM's paged attention v2 and
      // FlashInfer split the same way), so a short batch still fills the GPU.
      const std::int64_t group = std::max<std::int64_t>(1, heads / std::max<std::int64_t>(1, kv_heads));
      const std::int64_t batch = ip.decode_sequences * kv_heads;
      const std::int64_t splits = std::max<std::int64_t>(1, (n_ctx + 511) / 512);
      GemmOp score{"decode_attn_score", group, n_ctx, d_qk, batch, attn_dt};
      GemmOp context{"decode_attn_context", group, d_v, std::max<std::int64_t>(1, n_ctx / splits), batch * splits,
                     attn_dt};
      score.weight_bytes = context.weight_bytes = ip.kv_bytes;
      b.add(score, Phase::forward, Scope::layer, 1.0, OpRole::attention_core, 2.0 * dd * heads * ctx * d_qk);
      b.add(context, Phase::forward, Scope::layer, 1.0, OpRole::attention_core, 2.0 * dd * heads * ctx * d_v);
    }
  }
}

}  // namespace capplan::sim::lowering
