// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/cost/layer_step.hpp"

#include <string>

namespace capplan::sim {

Diagnostics check(const LayerStepShape& s) {
  Diagnostics d;
  // Coded (FindingCode::step_*, field "step.<name>"); data::word gives them words.
  auto fail = [&](const char* field, FindingCode code, std::initializer_list<std::pair<std::string_view, double>> v) {
    d.push_back({Diagnostic::Severity::error, std::string("step/") + field, {},
                 finding(code, std::string("step.") + field, v)});
  };
  auto positive = [&](int v, const char* field) {
    if (v <= 0) fail(field, FindingCode::step_not_positive, {{"got", v}});
  };
  positive(s.layers, "layers");
  positive(s.hidden, "hidden");
  positive(s.heads, "heads");
  positive(s.ffn_hidden, "ffn_hidden");
  positive(s.seq_len, "seq_len");
  positive(s.micro_batch, "micro_batch");
  if (s.hidden > 0 && s.heads > 0 && s.hidden % s.heads != 0) {
    fail("heads", FindingCode::step_heads_divide_hidden, {{"hidden", s.hidden}, {"got", s.heads}});
  }
  if (s.decode_context < 0) fail("decode_context", FindingCode::step_not_positive, {{"got", s.decode_context}});
  if (s.kv_heads < 0 || (s.kv_heads > 0 && s.heads > 0 && s.heads % s.kv_heads != 0)) {
    fail("kv_heads", FindingCode::step_kv_heads_divide_heads, {{"heads", s.heads}, {"got", s.kv_heads}});
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

LayerComponent component_of(OpRole role) {
  switch (role) {
    case OpRole::linear:
      return LayerComponent::gemm;
    case OpRole::attention_core:
    case OpRole::softmax:
      return LayerComponent::attention;
    default:
      return LayerComponent::memory;
  }
}

LayerStepScenario layer_step_scenario(const LayerStepShape& s) {
  LayerStepScenario sc;
  ModelSpec& m = sc.model;
  m.name = "layer_step";
  m.layers = s.layers;
  m.hidden = s.hidden;
  m.heads = s.heads;
  m.kv_heads = s.kv_heads_or_heads();
  m.ffn_hidden = s.ffn_hidden;
  m.vocab = 0;  // no embedding or output layer in the slice
  m.seq_len = s.decode() ? s.decode_context + 1 : s.seq_len;
  m.gated_ffn = s.gated_ffn;
  m.dropout = false;
  m.flash_attention = s.flash_attention;
  m.rmsnorm = s.rmsnorm;
  m.rope = s.rope;
  sc.job.precision = s.dtype;
  sc.job.framework = Framework::megatron;
  sc.job.softmax_kernel_limits = false;  // the runners' softmax is one kernel whatever the shape
  sc.job.global_batch = s.micro_batch;
  sc.job.tokens = static_cast<double>(s.micro_batch) * s.seq_len;
  sc.layout.micro_batch = s.micro_batch;
  sc.layout.recompute = Recompute::none;
  sc.cluster.gpus = 1;
  sc.cluster.gpus_per_node = 1;
  return sc;
}

std::vector<LayerStepOp> layer_step_ops(const LayerStepShape& shape) {
  const LayerStepScenario sc = layer_step_scenario(shape);
  if (shape.decode()) {
    // The serving pass the engine runs for a batch of decoding sequences (no prompt tokens, no
    // sampled rows: the layer slice has no logits).
    InferencePass ip;
    ip.compute = shape.dtype;
    ip.kv_bytes = shape.dtype == Precision::fp32 ? 4.0 : 2.0;  // the cache in the activations' precision
    ip.decode_sequences = shape.micro_batch;
    ip.decode_context = shape.decode_context;
    const StepOps pass = build_pass_ops(sc.model, ip, sc.layout, sc.cluster);
    std::vector<LayerStepOp> ops;
    for (const StepOp& op : pass.ops) {
      if (op.phase != Phase::forward || (op.scope != Scope::layer && op.scope != Scope::dense_ffn)) continue;
      ops.push_back({op, component_of(op.role)});
    }
    return ops;
  }
  StepOps list;
  build_step_ops_into(list, sc.model, sc.job, sc.layout, sc.cluster, StepOpParts::micro_batch);
  std::vector<LayerStepOp> ops;
  for (const Phase phase : {Phase::forward, Phase::backward}) {
    for (const StepOp& op : list.ops) {
      if (op.phase != phase || (op.scope != Scope::layer && op.scope != Scope::dense_ffn)) continue;
      ops.push_back({op, component_of(op.role)});
    }
  }
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
