// SPDX-License-Identifier: Apache-2.0
// Private to sim/src/lowering/step_model.cpp: the helper that appends the ops of one step (each with its
// role, FLOPs, kept bytes and recompute flag, as RecomputePolicy decides) and the attention work
// fraction of fused kernels.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "capplan/sim/ops.hpp"
#include "capplan/sim/recompute_policy.hpp"
#include "capplan/sim/step_model.hpp"
#include "capplan/sim/workload.hpp"

namespace capplan::sim::lowering {

class OpListBuilder {
 public:
  OpListBuilder(std::vector<StepOp>& ops, StepOpParts parts, double fp8_cast_bytes, const RecomputePolicy& policy)
      : ops_(ops), parts_(static_cast<unsigned>(parts)), fp8_cast_bytes_(fp8_cast_bytes), policy_(policy) {}
  const RecomputePolicy& policy() const { return policy_; }
  // Appends one op (kept only when it belongs to the requested parts). `flops` and `saved` are
  // totals over the `count` repetitions (StepOp).
  void add(Op op, Phase phase, Scope scope, double count, OpRole role, double flops = 0, double saved = 0,
           bool recomputed = false) {
    if (parts_ != static_cast<unsigned>(StepOpParts::all) && (static_cast<unsigned>(part_of(op, scope)) & parts_) == 0) {
      return;
    }
    ops_.push_back({op, phase, scope, count, role, flops, saved, recomputed});
  }
  // A forward op, its backward (`bwd_bytes`, `bwd_count` times) and, when the policy recomputes
  // ops of `role` in this scope, its recomputation.
  bool recomputes(OpRole role, Scope scope) const {
    return (scope == Scope::layer || scope == Scope::dense_ffn || scope == Scope::moe_ffn || scope == Scope::mamba) &&
           policy_.recomputes(role);
  }
  // A linear layer Y[T x n] = X[T x k] W[k x n] (`batch` independent ones, e.g. local experts):
  // forward, plus dgrad and wgrad in backward.
  // `kernels` > 1: that many separate GEMM kernels of this shape (experts run one after another).
  // `model_flops`: the forward FLOPs the model-FLOPs convention credits (< 0: the shape's own);
  // `saved`: bytes of its output kept for backward (the input is kept by its producer).
  void linear(const char* name, const char* dgrad, const char* wgrad, std::int64_t tokens, std::int64_t n,
              std::int64_t k, Precision dt, Scope scope, double saved = 0, double model_flops = -1,
              std::int64_t batch = 1, double kernels = 1.0) {
    if (tokens <= 0 || n <= 0 || k <= 0) return;
    const GemmOp fwd{name, tokens, n, k, batch, dt};
    const double flops = model_flops >= 0 ? model_flops : fwd.flops().base() * kernels;
    const bool rc = recomputes(OpRole::linear, scope);
    add(fwd, Phase::forward, scope, kernels, OpRole::linear, flops, saved, rc);
    add(GemmOp{dgrad, tokens, k, n, batch, dt}, Phase::backward, scope, kernels, OpRole::linear, flops);
    add(GemmOp{wgrad, k, n, tokens, batch, dt}, Phase::backward, scope, kernels, OpRole::linear, flops);
    if (rc) add(fwd, Phase::recompute, scope, kernels, OpRole::linear, flops);
    if (dt == Precision::fp8) {
      // Transformer Engine quantises each GEMM input to FP8 with a fused cast + transpose
      // (read 16-bit, write the row- and column-major FP8 copies: 2 + 1 + 1 bytes per element,
      // plus a 16-bit amax pass under current scaling; Fp8Recipe): the activation in forward,
      // the incoming gradient in backward. FP8 weights are cached across the micro-batches of
      // a step, so their casts are left out.
      const double x = static_cast<double>(tokens) * static_cast<double>(k) * static_cast<double>(batch) * kernels;
      const double dy = static_cast<double>(tokens) * static_cast<double>(n) * static_cast<double>(batch) * kernels;
      const MemoryOp cast_x{"fp8_cast_transpose", units::bytes(fp8_cast_bytes_ * x)};
      add(cast_x, Phase::forward, scope, 1.0, OpRole::fp8_cast, 0, 0, rc);
      add(MemoryOp{"fp8_cast_transpose", units::bytes(fp8_cast_bytes_ * dy)}, Phase::backward, scope, 1.0,
          OpRole::fp8_cast);
      if (rc) add(cast_x, Phase::recompute, scope, 1.0, OpRole::fp8_cast);
    }
  }
  // An element-wise kernel: forward moves `bytes`, backward about twice that (it reads the
  // saved input and the incoming gradient and writes the outgoing gradient).
  void elementwise(const char* name, double bytes, Scope scope, OpRole role, double count = 1.0, double saved = 0) {
    if (bytes <= 0) return;
    const bool rc = recomputes(role, scope);
    add(MemoryOp{name, units::bytes(bytes)}, Phase::forward, scope, count, role, 0, saved, rc);
    add(MemoryOp{name, units::bytes(2.0 * bytes)}, Phase::backward, scope, count, role);
    if (rc) add(MemoryOp{name, units::bytes(bytes)}, Phase::recompute, scope, count, role);
  }
  // One collective in forward and backward (and again when the forward is recomputed).
  void collective(const CollectiveOp& op, Scope scope, bool recompute, double count = 1.0) {
    add(op, Phase::forward, scope, count, OpRole::collective, 0, 0, recompute);
    add(op, Phase::backward, scope, count, OpRole::collective);
    if (recompute) add(op, Phase::recompute, scope, count, OpRole::collective);
  }

 private:
  std::vector<StepOp>& ops_;
  unsigned parts_;
  double fp8_cast_bytes_;
  const RecomputePolicy& policy_;
};

// Share of the full s_q x s_kv score square a kernel computes. Unfused attention computes the
// whole square and masks it; fused kernels skip masked blocks: half for a causal mask, about
// w/s - w^2/(2 s^2) of it for a causal sliding window of w tokens.
// With windowed layers only every n-th (gpt-oss alternates), the per-layer figure is the average
// over the pattern: exact for the step's total, since the shapes are the same.
inline double attention_work_fraction(const ModelSpec& m) {
  if (!m.flash_attention) return 1.0;
  const double s = m.seq_len;
  if (m.sliding_window > 0 && m.sliding_window < m.seq_len) {
    const double w = m.sliding_window;
    const double windowed = std::min(0.5, w / s - w * w / (2.0 * s * s));
    const double share = 1.0 / std::max(1, m.sliding_window_every);
    return share * windowed + (1.0 - share) * 0.5;
  }
  return 0.5;
}

}  // namespace capplan::sim::lowering
