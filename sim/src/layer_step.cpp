// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/layer_step.hpp"

#include <cstdint>
#include <string>

namespace capplan::sim {

Diagnostics check(const LayerStepShape& s) {
  Diagnostics d;
  auto positive = [&](int v, const char* field) {
    if (v <= 0) d.push_back({Diagnostic::Severity::error, std::string("step/") + field,
                             "must be a positive integer; got " + std::to_string(v)});
  };
  positive(s.layers, "layers");
  positive(s.hidden, "hidden");
  positive(s.heads, "heads");
  positive(s.ffn_hidden, "ffn_hidden");
  positive(s.seq_len, "seq_len");
  positive(s.micro_batch, "micro_batch");
  if (s.hidden > 0 && s.heads > 0 && s.hidden % s.heads != 0) {
    d.push_back({Diagnostic::Severity::error, "step/heads",
                 "must divide hidden (" + std::to_string(s.hidden) + "); got " + std::to_string(s.heads)});
  }
  return d;
}

const char* to_string(LayerComponent c) {
  switch (c) {
    case LayerComponent::gemm:
      return "gemm";
    case LayerComponent::attention:
      return "attention";
    case LayerComponent::memory:
      return "memory";
  }
  return "?";
}


std::vector<LayerStepOp> layer_step_ops(const LayerStepShape& s) {
  using I = std::int64_t;
  const I T = I{s.micro_batch} * s.seq_len, h = s.hidden, f = s.ffn_hidden, sq = s.seq_len;
  const I heads = I{s.micro_batch} * s.heads, d = h / s.heads;
  const double e = element_bytes(s.dtype);
  const double Th = static_cast<double>(T * h), Tf = static_cast<double>(T * f);
  const double scores = static_cast<double>(heads * sq * sq);  // elements of S (and P) over all heads

  std::vector<LayerStepOp> ops;
  auto gemm = [&](const char* name, I m, I n, I k, I batch, LayerComponent c, Phase phase) {
    ops.push_back({StepOp{GemmOp{name, m, n, k, batch, s.dtype, false}, phase, Scope::layer, 1.0}, c});
  };
  auto mem = [&](const char* name, double bytes, LayerComponent c, Phase phase) {
    ops.push_back({StepOp{MemoryOp{name, units::bytes(bytes)}, phase, Scope::layer, 1.0}, c});
  };
  const auto G = LayerComponent::gemm, A = LayerComponent::attention, M = LayerComponent::memory;
  const auto F = Phase::forward, B = Phase::backward;

  // Forward. LayerNorm reads x and writes y; residual adds read two tensors and write one;
  // GELU reads u and writes g; softmax reads S and writes P.
  mem("layernorm_fwd", 2 * Th * e, M, F);
  gemm("qkv", T, 3 * h, h, 1, G, F);
  gemm("attn_scores", sq, sq, d, heads, A, F);         // S = Q K^T per (batch, head)
  mem("softmax_fwd", 2 * scores * e, A, F);
  gemm("attn_context", sq, d, sq, heads, A, F);        // O = P V
  gemm("attn_proj", T, h, h, 1, G, F);
  mem("residual_add", 3 * Th * e, M, F);
  mem("layernorm_fwd", 2 * Th * e, M, F);
  gemm("fc1", T, f, h, 1, G, F);
  mem("gelu_fwd", 2 * Tf * e, M, F);
  gemm("fc2", T, h, f, 1, G, F);
  mem("residual_add", 3 * Th * e, M, F);

  // Backward. GELU backward reads dg and u, writes du; LayerNorm backward reads dy and x, writes dx;
  // softmax backward reads P and dP, writes dS.
  gemm("fc2_dgrad", T, f, h, 1, G, B);                 // dg = dz W2^T
  gemm("fc2_wgrad", f, h, T, 1, G, B);                 // dW2 = g^T dz
  mem("gelu_bwd", 3 * Tf * e, M, B);
  gemm("fc1_dgrad", T, h, f, 1, G, B);                 // dy2 = du W1^T
  gemm("fc1_wgrad", h, f, T, 1, G, B);                 // dW1 = y2^T du
  mem("layernorm_bwd", 3 * Th * e, M, B);
  mem("residual_add", 3 * Th * e, M, B);               // dx2 = dout + LN2 backward
  gemm("attn_proj_dgrad", T, h, h, 1, G, B);           // dO = dx2 Wo^T
  gemm("attn_proj_wgrad", h, h, T, 1, G, B);           // dWo = O^T dx2
  gemm("attn_dprobs", sq, sq, d, heads, A, B);         // dP = dO V^T
  gemm("attn_dv", sq, d, sq, heads, A, B);             // dV = P^T dO
  mem("softmax_bwd", 3 * scores * e, A, B);
  gemm("attn_dq", sq, d, sq, heads, A, B);             // dQ = dS K
  gemm("attn_dk", sq, d, sq, heads, A, B);             // dK = dS^T Q
  gemm("qkv_dgrad", T, h, 3 * h, 1, G, B);             // dy1 = dqkv Wqkv^T
  gemm("qkv_wgrad", h, 3 * h, T, 1, G, B);             // dWqkv = y1^T dqkv
  mem("layernorm_bwd", 3 * Th * e, M, B);
  mem("residual_add", 3 * Th * e, M, B);               // dx = dx2 + LN1 backward
  return ops;
}

LayerStepPrediction predict_layer_step(const LayerStepShape& shape, const OpCostModel& cost) {
  LayerStepPrediction p;
  for (const auto& op : layer_step_ops(shape)) {
    const units::Seconds t = cost.cost(op.op.op) * (op.op.count * shape.layers);
    switch (op.component) {
      case LayerComponent::gemm:
        p.gemm += t;
        break;
      case LayerComponent::attention:
        p.attention += t;
        break;
      case LayerComponent::memory:
        p.memory += t;
        break;
    }
  }
  return p;
}

units::Flops layer_step_flops(const LayerStepShape& shape) {
  units::Flops total;
  for (const auto& op : layer_step_ops(shape)) {
    if (const auto* g = std::get_if<GemmOp>(&op.op.op)) total += g->flops() * (op.op.count * shape.layers);
  }
  return total;
}

}  // namespace capplan::sim
