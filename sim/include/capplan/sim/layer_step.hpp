// SPDX-License-Identifier: Apache-2.0
#pragma once
// The op list of the measured training step: one transformer layer (or a stack of identical
// layers) forward + backward, exactly the kernels the host backend (calibrate/host/host_layer.cpp)
// and the CUDA backend run, in the simulator's GemmOp/MemoryOp terms. `capplan validate` prices
// this list with any OpCostModel and compares it with the measured step.
//
// The layer (pre-norm, bias-free, GELU MLP, causal self-attention with explicit scores):
//   forward:  y1 = LN(x); qkv = y1 Wqkv; per (batch, head): S = Q K^T, P = softmax(S*scale, causal),
//             O = P V; c = O Wo; x2 = x + c; y2 = LN(x2); u = y2 W1; g = gelu(u); z = g W2; out = x2 + z
//   backward: dgrad (dX = dY W^T) and wgrad (dW = X^T dY) per dense GEMM, dP = dO V^T, dV = P^T dO,
//             softmax backward, dQ = dS K, dK = dS^T Q, GELU and LayerNorm backward, residual adds.
// Contract: T = micro_batch*seq_len tokens, h = hidden, a = heads, d = h/a, f = ffn_hidden.
// GEMM FLOPs per layer: forward 2*T*h*(3h + h + 2f) + 4*T*s*h, backward twice that.
// Memory ops move the bytes the kernels read + write (element size of dtype; LayerNorm statistics
// and weight gradients of the norms are not counted: O(T) and O(h)).
#include <string>
#include <vector>

#include "capplan/sim/hardware.hpp"
#include "capplan/sim/op_cost.hpp"
#include "capplan/sim/ops.hpp"
#include "capplan/sim/result.hpp"

namespace capplan::sim {

struct LayerStepShape {
  int layers = 1;
  int hidden = 0;
  int heads = 0;
  int ffn_hidden = 0;
  int seq_len = 0;
  int micro_batch = 1;
  Precision dtype = Precision::fp32;
};

// Contract: hidden, heads, ffn_hidden, seq_len, micro_batch, layers > 0 and heads divides hidden;
// errors name the field ("step/heads: must divide hidden (512); got 6").
Diagnostics check(const LayerStepShape& shape);

// Which measured component an op's time belongs to.
enum class LayerComponent { gemm, attention, memory };
const char* to_string(LayerComponent c);

struct LayerStepOp {
  StepOp op;  // GemmOp or MemoryOp; count = repetitions per layer
  LayerComponent component = LayerComponent::gemm;
};

// The ops of ONE layer, forward then backward, in execution order.
// Contract: shape passes check().
std::vector<LayerStepOp> layer_step_ops(const LayerStepShape& shape);


struct LayerStepPrediction {
  units::Seconds gemm, attention, memory;  // whole step (all layers)
  units::Seconds total() const { return gemm + attention + memory; }
};

// Prices every op of the step (times `layers`) with `cost`.
LayerStepPrediction predict_layer_step(const LayerStepShape& shape, const OpCostModel& cost);

// Analytical FLOPs of the step's GEMMs (all layers), for reports and tests.
units::Flops layer_step_flops(const LayerStepShape& shape);

}  // namespace capplan::sim
