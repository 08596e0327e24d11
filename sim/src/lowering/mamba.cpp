// SPDX-License-Identifier: Apache-2.0
// The Mamba-2 mixer of a hybrid model's M layers: in_proj, the causal conv1d, the chunked SSD scan,
// the grouped RMSNorm and out_proj, with context-parallel all-to-alls and the TP collectives.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "lowering/blocks.hpp"
#include "lowering/shared_ops.hpp"

namespace capplan::sim::lowering {
namespace {

// The chunked SSD scan over this rank's `heads_l` heads and `groups_l` groups (`d_l`: its
// d_inner, `conv_l`: its x, B and C channels).
void ssd_scan(OpListBuilder& b, const Context& cx, std::int64_t heads_l, std::int64_t groups_l, std::int64_t d_l,
              std::int64_t conv_l) {
  const MambaSpec& mb = cx.m.mamba;
  const std::int64_t tokens = cx.tokens;
  const double act = cx.act, td = cx.td;
  const double dl = static_cast<double>(d_l), n_state = mb.state;
  // The chunked SSD scan (Dao & Gu 2024, Sec. 6; megatron/core/ssm/ops/mamba2/ssd_combined.py
  // @d98e8a6): per chunk of Q tokens, C B^T within the chunk (per group), its masked product
  // with x, the chunk states B^T x and the outputs C h (per head): about
  // 2 T (Q N G + Q P H + 2 N P H) FLOPs forward, which for Q = N = 2P is 7 T d_inner N when
  // G << H. Model FLOPs: Megatron-Bridge's 7 T d_inner N (flop_utils.py mamba_layer_flops,
  // NVIDIA-NeMo/Megatron-Bridge @067f987), priced as batched tensor-core GEMMs of T x P x N
  // per head (2 T d_inner N each, 3.5 of them forward, twice that backward).
  const double scan_flops = 7.0 * td * dl * n_state;
  const GemmOp scan{"ssd_scan", tokens, mb.head_dim, mb.state, heads_l, cx.attn_dt};
  const bool rc = b.recomputes(OpRole::ssm, Scope::mamba);
  b.add(scan, Phase::forward, Scope::mamba, 3.5, OpRole::ssm, scan_flops, 0, rc);
  b.add(scan, Phase::backward, Scope::mamba, 7.0, OpRole::ssm, 2.0 * scan_flops);
  if (rc) b.add(scan, Phase::recompute, Scope::mamba, 3.5, OpRole::ssm, scan_flops);
  // Its memory-bound part: reads x, B, C (the conv output), dt and z, writes y; the fp32 chunk
  // states (T/Q chunks x heads x P x N) are written by _chunk_state_fwd (states_in_fp32),
  // read by _state_passing_fwd, which writes them in the activation dtype for
  // _chunk_scan_fwd to read (4 + 4 + 2 + 2 bytes per element); C B^T in fp32 (_bmm_chunk_fwd:
  // T/Q x groups x Q x Q) written and read. Kept: the ungated output out_x and the gated y
  // (the norm's input).
  const double chunks = std::ceil(td / std::max(1, mb.chunk));
  const double states = chunks * static_cast<double>(heads_l) * mb.head_dim * n_state;
  const double cb = chunks * static_cast<double>(groups_l) * mb.chunk * mb.chunk;
  const double io = act * td * (static_cast<double>(conv_l) + heads_l + 2.0 * dl) + 12.0 * states + 8.0 * cb;
  b.elementwise("ssd_scan_io", io, Scope::mamba, OpRole::ssm, 1.0, 2.0 * act * td * dl);
  // Its backward first reruns the forward's state pipeline (_mamba_chunk_scan_combined_bwd,
  // mamba_ssm/ops/triton/ssd_combined.py, state-spaces/mamba: _chunk_cumsum_fwd,
  // _bmm_chunk_fwd, _chunk_state_fwd, _state_passing_fwd): the chunk states B^T x (one
  // T x P x N GEMM per head, 2 T d_inner N FLOPs) with their reads of x, B, C and dt and the
  // state and C B^T passes. Hardware FLOPs only: recomputation.
  b.add(scan, Phase::recompute, Scope::mamba, 1.0, OpRole::ssm, 2.0 * td * dl * n_state);
  b.add(MemoryOp{"ssd_state_recompute",
                 units::bytes(act * td * (static_cast<double>(conv_l) + heads_l) + 12.0 * states + 8.0 * cb)},
        Phase::recompute, Scope::mamba, 1.0, OpRole::ssm);
}

}  // namespace

void lower_mamba(OpListBuilder& b, const Context& cx) {
  const ModelSpec& m = cx.m;
  if (!(cx.hybrid && m.mamba.heads > 0)) return;
  const Parallelism& p = cx.p;
  const Precision dt = cx.dt;
  const std::int64_t t = cx.t, tokens = cx.tokens, h = cx.h;
  const double act = cx.act, td = cx.td;
  const bool full_rc = cx.full_rc;
  // Megatron-Core's MambaMixer in training (megatron/core/ssm/mamba_mixer.py @d98e8a6, forward
  // and _ssm_training): in_proj (column-parallel: z, x, B, C, dt of this rank's heads and
  // groups), the fused mamba_split_conv1d_scan_combined (causal conv1d over x, B, C, then the
  // chunked SSD scan gated by silu(z)), the grouped RMSNorm (ExtendedRMSNorm) and out_proj
  // (row-parallel), with the TP collectives of any TP-split block around them.
  const MambaSpec& mb = m.mamba;
  const std::int64_t heads_l = mb.heads / t, groups_l = std::max<std::int64_t>(1, mb.groups / t);
  const std::int64_t d_l = heads_l * mb.head_dim;                     // d_inner on this rank
  const std::int64_t conv_l = d_l + 2 * groups_l * mb.state;          // x, B, C
  const std::int64_t proj_l = 2 * d_l + 2 * groups_l * mb.state + heads_l;  // z, x, B, C, dt
  const double dl = static_cast<double>(d_l);
  residual_stream(b, cx, Scope::mamba, 1.0);
  // in_proj's output is what the fused scan keeps for its backward (it recomputes the conv).
  b.linear("mamba_in_proj", "mamba_in_proj_dgrad", "mamba_in_proj_wgrad", tokens, proj_l, h, dt, Scope::mamba,
           act * td * static_cast<double>(proj_l));
  tp_window(b, cx);
  if (p.cp > 1) {
    // Mamba's context parallelism (mamba_context_parallel.py @d98e8a6, pre_conv_ssm /
    // post_conv_ssm): all-to-alls trade the sequence split for a head split around the conv
    // and scan: z, x, B, C and dt before, y after; forward and backward. Ranks ordered TP, CP.
    const GroupPlacement cp_group = place_group(p.cp, p.tp, cx.topology);
    b.collective(CollectiveOp{"mamba_cp_all_to_all_in", CollectiveKind::all_to_all,
                              units::bytes(act * td * static_cast<double>(proj_l)), cp_group, Axis::cp},
                 Scope::mamba, full_rc);
    b.collective(CollectiveOp{"mamba_cp_all_to_all_out", CollectiveKind::all_to_all, units::bytes(act * td * dl),
                              cp_group, Axis::cp},
                 Scope::mamba, full_rc);
  }
  // _ssm_training makes zxBCdt batch-major (rearrange "l b d -> b l d" + contiguous) and y
  // sequence-major again after the scan: a copy each (read + write) when the micro-batch holds
  // more than one sequence (one sequence: already contiguous, no copy), and a copy of each
  // gradient in backward.
  if (p.micro_batch > 1) {
    const double copies = 2.0 * act * td * static_cast<double>(proj_l + d_l);
    const bool rc = b.recomputes(OpRole::copy, Scope::mamba);
    b.add(MemoryOp{"mamba_layout_copy", units::bytes(copies)}, Phase::forward, Scope::mamba, 1.0, OpRole::copy, 0, 0,
          rc);
    b.add(MemoryOp{"mamba_layout_copy", units::bytes(copies)}, Phase::backward, Scope::mamba, 1.0, OpRole::copy);
    if (rc) b.add(MemoryOp{"mamba_layout_copy", units::bytes(copies)}, Phase::recompute, Scope::mamba, 1.0, OpRole::copy);
  }
  // Depthwise causal conv1d of d_conv taps over x, B, C: reads and writes them (its 2 d_conv
  // FLOPs per element are left out, as Megatron-Bridge's model-FLOPs formula leaves them). The
  // fused function keeps only its input: its backward runs the conv forward again
  // (mamba_ssm MambaSplitConv1dScanCombinedFn.backward, state-spaces/mamba), a recomputation
  // whatever the recompute policy.
  const double conv_bytes = 2.0 * act * td * static_cast<double>(conv_l);
  b.elementwise("mamba_conv1d", conv_bytes, Scope::mamba, OpRole::ssm);
  b.add(MemoryOp{"mamba_conv1d", units::bytes(conv_bytes)}, Phase::recompute, Scope::mamba, 1.0, OpRole::ssm);
  ssd_scan(b, cx, heads_l, groups_l, d_l, conv_l);
  // Grouped RMSNorm over d_inner / groups (mamba_mixer.py ExtendedRMSNorm, group_size
  // d_inner_local_tp / ngroups_local_tp): its output is out_proj's input.
  b.elementwise("mamba_gated_rmsnorm", 2.0 * act * td * dl, Scope::mamba, OpRole::norm, 1.0, cx.gemm_in * td * dl);
  b.linear("mamba_out_proj", "mamba_out_proj_dgrad", "mamba_out_proj_wgrad", tokens, h, d_l, dt, Scope::mamba);
  tp_block_comm(b, cx, Scope::mamba);
}

}  // namespace capplan::sim::lowering
