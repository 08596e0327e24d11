// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/lowering/stage_layout.hpp"

#include <algorithm>

#include "capplan/sim/workload/finetune.hpp"

namespace capplan::sim {

int layers_on_stage(int layers, int pp, int stage) {
  const int base = layers / pp;
  const int extra = layers % pp;
  return base + (stage < extra ? 1 : 0);
}

int stage_layer_count(int layers, const Parallelism& p, int stage) {
  const int first = p.pp > 1 ? p.first_stage_layers : 0;
  const int last = p.pp > 1 ? p.last_stage_layers : 0;
  if (first <= 0 && last <= 0) return layers_on_stage(layers, p.pp, stage);
  if (first > 0 && stage == 0) return first;
  if (last > 0 && stage == p.pp - 1) return last;
  // The stages between share what is left, evenly.
  const int lo = first > 0 ? 1 : 0;
  const int hi = last > 0 ? p.pp - 1 : p.pp;
  const int rest = layers - std::max(0, first) - std::max(0, last);
  return layers_on_stage(rest, hi - lo, stage - lo);
}

namespace {

// First layer (0-based) of `stage` when each stage holds one contiguous range (v = 1).
int stage_start(int layers, const Parallelism& p, int stage) {
  const int first = p.pp > 1 ? std::max(0, p.first_stage_layers) : 0;
  const int last = p.pp > 1 ? std::max(0, p.last_stage_layers) : 0;
  if (first == 0 && last == 0) {
    const int base = layers / p.pp, extra = layers % p.pp;
    return stage * base + std::min(stage, extra);
  }
  if (stage == 0) return 0;
  const int lo = first > 0 ? 1 : 0;
  const int middle = (last > 0 ? p.pp - 1 : p.pp) - lo;
  const int rest = layers - first - last;
  const int i = std::min(stage - lo, middle);  // middle stages before this one
  const int base = middle > 0 ? rest / middle : 0, extra = middle > 0 ? rest % middle : 0;
  return first + i * base + std::min(i, extra);
}

}  // namespace

StageLayers stage_layers(const ModelSpec& m, const Parallelism& p, int stage) {
  StageLayers out;
  out.layers = stage_layer_count(m.layers, p, stage);
  out.first = stage == 0;
  out.last = stage == p.pp - 1;
  if (!m.is_moe() && !m.is_hybrid()) return out;
  const int v = std::max(1, p.virtual_stages);
  if (m.is_hybrid()) out = {0, 0, out.first, out.last, true, 0, 0};
  auto count_moe = [&](int start, int n) {
    for (int l = start; l < start + n; ++l) {
      out.moe += m.is_moe_layer(l) ? 1 : 0;
      if (!m.is_hybrid()) continue;
      out.layers += m.is_layer(l, HybridLayer::attention) ? 1 : 0;
      out.mlp += m.is_layer(l, HybridLayer::mlp) ? 1 : 0;
      out.mamba += m.is_layer(l, HybridLayer::mamba) ? 1 : 0;
    }
  };
  if (v == 1) {
    count_moe(stage_start(m.layers, p, stage), stage_layer_count(m.layers, p, stage));
    return out;
  }
  // Model layer index where chunk k of stage i starts: all chunks of earlier rounds (k' < k, any
  // stage) and the chunks of earlier stages in round k come first.
  auto chunk_size = [&](int st, int k) { return layers_on_stage(stage_layer_count(m.layers, p, st), v, k); };
  int start = 0;
  for (int k = 0; k < v; ++k) {
    for (int st = 0; st < p.pp; ++st) {
      const int n = chunk_size(st, k);
      if (st == stage) count_moe(start, n);
      start += n;
    }
  }
  return out;
}

std::vector<StageRun> stage_runs(const ModelSpec& m, const Parallelism& p) {
  std::vector<StageRun> runs;
  auto append = [&](int stage, int count) {
    const StageLayers sl = stage_layers(m, p, stage);
    if (!runs.empty() && runs.back().layers == sl) {
      runs.back().count += count;
    } else {
      runs.push_back({sl, stage, count});
    }
  };
  if (m.is_moe() || m.is_hybrid()) {
    // MoE layer counts can change from any stage to the next (leading dense layers, every n-th),
    // and so can a hybrid pattern's.
    for (int stage = 0; stage < p.pp; ++stage) append(stage, 1);
    return runs;
  }
  // Dense: the layer count is constant between these stages (stage_layer_count).
  int cuts[6] = {0, std::min(1, p.pp), p.pp - 1, p.pp, p.pp, p.pp};
  const int first = p.pp > 1 ? std::max(0, p.first_stage_layers) : 0;
  const int last = p.pp > 1 ? std::max(0, p.last_stage_layers) : 0;
  if (first == 0 && last == 0) {
    cuts[3] = m.layers % p.pp;
  } else {
    const int lo = first > 0 ? 1 : 0;
    const int middle = (last > 0 ? p.pp - 1 : p.pp) - lo;
    if (middle > 0) cuts[3] = lo + (m.layers - first - last) % middle;
  }
  std::sort(std::begin(cuts), std::end(cuts));
  for (int i = 0; i + 1 < 6; ++i) {
    if (cuts[i + 1] > cuts[i]) append(cuts[i], cuts[i + 1] - cuts[i]);
  }
  return runs;
}

StageParams stage_params(const ModelSpec& m, const Parallelism& p, int stage) {
  return stage_params(m, p, stage_layers(m, p, stage));
}

StageParams stage_params(const ModelSpec& m, const Parallelism& p, const StageLayers& sl) {
  return stage_params(m, TrainingJob{}, p, sl);
}

StageParams stage_params(const ModelSpec& m, const TrainingJob& job, const Parallelism& p, const StageLayers& sl) {
  const FinetuneSpec& ft = job.finetune;
  StageParams out;
  // Base weights of the stage's layers: dense ones (attention, dense FFNs, Mamba mixers, router,
  // shared experts) and routed experts, the latter spread over the EP ranks (and split by ETP).
  const double norms = 2.0 * m.hidden;  // per layer, inside attention_params()
  double layers_dense = sl.layers * m.attention_params() + sl.dense() * m.dense_ffn_params();
  if (sl.mamba > 0) layers_dense += sl.mamba * m.mamba_params();
  double layers_expert = 0;
  if (sl.moe > 0) {
    layers_dense += sl.moe * (static_cast<double>(m.moe.experts) * m.hidden + m.moe.shared_experts * m.expert_params() +
                              m.ffn_norm_params());
    layers_expert = sl.moe * (static_cast<double>(m.moe.experts) / p.ep) * m.expert_params() / p.etp;
  }
  double embeddings = sl.first ? m.embedding_params() : 0.0;
  if (sl.last) {
    // With tied embeddings and pp > 1 the last stage keeps its own copy of the matrix
    // (Megatron synchronises the two copies' gradients).
    embeddings += m.tied_embeddings ? (p.pp > 1 ? m.embedding_params() : 0.0) : m.output_params();
  }
  const double final_norm = sl.last ? m.hidden : 0.0;
  // Adapters (LoRA): per layer of each kind; routed experts' adapters live with their experts.
  const double per_expert = m.is_moe() ? lora_moe_ffn_params(m, ft) / (m.moe.experts + m.moe.shared_experts) : 0.0;
  const double adapters_dense = sl.layers * lora_attention_params(m, ft) + sl.dense() * lora_dense_ffn_params(m, ft) +
                                sl.moe * m.moe.shared_experts * per_expert;
  const double adapters_expert = sl.moe * (static_cast<double>(m.moe.experts) / p.ep) * per_expert / p.etp;
  out.dense = (layers_dense + embeddings + final_norm + adapters_dense) / p.tp;
  out.expert = layers_expert + adapters_expert;
  const double share = ft.trained_layer_share(m.layers);
  const double trained_embeddings = ft.trains_embeddings() ? embeddings : 0.0;
  out.trained_dense = ((layers_dense + final_norm) * share + trained_embeddings + adapters_dense) / p.tp;
  out.trained_expert = layers_expert * share + adapters_expert;
  if (ft.quantized_base()) {
    // The layers' linear weights (not the norms, the embeddings or the output layer: bitsandbytes
    // and GPTQ leave those in 16 bits).
    out.quantized_dense = (layers_dense - sl.layers * norms) / p.tp;
    out.quantized_expert = layers_expert;
  }
  return out;
}

StageParams most_loaded_stage_params(const ModelSpec& m, const TrainingJob& job, const Parallelism& p) {
  StageParams params;
  for (const StageRun& run : stage_runs(m, p)) {
    const StageLayers& sl = run.layers;
    const StageParams sp = stage_params(m, job, p, sl);
    if (sp.total() > params.total()) params = sp;
  }
  return params;
}

double stage_params_per_gpu(const ModelSpec& m, const Parallelism& p, int stage) {
  return stage_params(m, p, stage).total();
}

}  // namespace capplan::sim
