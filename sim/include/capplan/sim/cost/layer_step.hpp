// SPDX-License-Identifier: Apache-2.0
#pragma once
// The op list of the measured training step: one transformer layer (or a stack of identical
// layers) forward + backward, as a one-stage slice of the estimate's op list (build_step_ops,
// step_model.hpp): the Scope::layer and Scope::dense_ffn ops of Phase forward and backward of the
// model the shape describes, on one GPU (tp = pp = dp = 1, recompute none). The host backend
// (calibrate/host/host_layer.cpp) and the CUDA backend (calibrate/cuda/cuda_layer_step.cpp) run
// one kernel per entry of this list; `capplan validate` prices the same list with any
// OpCostModel and compares it with the measured step. So what calibration measures is exactly
// what estimates price: there is no second description of a layer.
//
// The default shape is the GPT-style layer (pre-LayerNorm, bias-free, GELU MLP, multi-head causal
// self-attention with explicit scores + softmax, no RoPE, no dropout); the flags below turn it into
// the layers the estimates use (SwiGLU, GQA, RMSNorm, RoPE, fused attention, fp8 GEMMs).
// Each entry's count is its repetitions per layer (e.g. 2 norms; fused attention's share of the
// score square, fractional): the bytes and FLOPs of one entry are one repetition's.
#include <string>
#include <vector>

#include "capplan/sim/workload/hardware.hpp"
#include "capplan/sim/cost/op_cost.hpp"
#include "capplan/sim/lowering/ops.hpp"
#include "capplan/sim/workload/result.hpp"
#include "capplan/sim/lowering/step_model.hpp"

namespace capplan::sim {

struct LayerStepShape {
  int layers = 1;
  int hidden = 0;
  int heads = 0;
  int ffn_hidden = 0;
  int seq_len = 0;
  int micro_batch = 1;
  Precision dtype = Precision::fp32;  // GEMM dtype; fp8 keeps the attention core and activations in bf16
  int kv_heads = 0;                   // 0 = heads (MHA); fewer for GQA, 1 for MQA
  bool gated_ffn = false;             // SwiGLU (up + gate, ffn_hidden each) instead of GELU
  bool rmsnorm = false;               // RMSNorm instead of LayerNorm
  bool rope = false;                  // rotary embedding of Q and K
  bool flash_attention = false;       // fused attention (no s x s scores, no softmax op)
  // > 0: a serving decode step instead: `micro_batch` sequences each decode one
  // token over `decode_context` cached tokens, forward only, the layer slice of the serving pass
  // (build_pass_ops: the KV cache written and read per query group, no logits). seq_len is then
  // unused (the model's context is decode_context + 1).
  int decode_context = 0;

  int kv_heads_or_heads() const { return kv_heads > 0 ? kv_heads : heads; }
  bool decode() const { return decode_context > 0; }
};

// Contract: hidden, heads, ffn_hidden, seq_len, micro_batch, layers > 0, heads divides hidden,
// kv_heads >= 0 and divides heads; errors name the field ("step/heads: must divide hidden (512); got 6").
Diagnostics check(const LayerStepShape& shape);

// The model, job, layout and cluster whose op list the slice is taken from (one GPU, tp = pp =
// dp = 1, the shape's micro_batch and seq_len, recompute none, Megatron's fused kernels).
struct LayerStepScenario {
  ModelSpec model;
  TrainingJob job;
  Parallelism layout;
  Cluster cluster;
};
LayerStepScenario layer_step_scenario(const LayerStepShape& shape);

// Which measured component an op's time belongs to: linear -> gemm; attention_core and softmax
// -> attention; every other role -> memory.
enum class LayerComponent { gemm, attention, memory };
const char* to_string(LayerComponent c);
LayerComponent component_of(OpRole role);

struct LayerStepOp {
  StepOp op;  // GemmOp or MemoryOp with its role, phase, scope and count (repetitions per layer)
  LayerComponent component = LayerComponent::gemm;
};

// The ops of ONE layer: the forward ops, then the backward ops, each in the op list's order (a
// decode step: the serving pass's forward ops of one layer).
// Contract: shape passes check().
std::vector<LayerStepOp> layer_step_ops(const LayerStepShape& shape);

struct LayerStepPrediction {
  units::Seconds gemm, attention, memory;  // whole step (all layers)
  units::Seconds total() const { return gemm + attention + memory; }
};

// Prices every op of the step (times its count and `layers`) with `cost`.
LayerStepPrediction predict_layer_step(const LayerStepShape& shape, const OpCostModel& cost);

// FLOPs of the step's GEMMs as they run (shape FLOPs times count, all layers), for reports and tests.
units::Flops layer_step_flops(const LayerStepShape& shape);

}  // namespace capplan::sim
