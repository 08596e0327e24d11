// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <vector>

#include "capplan/sim/workload/strategy.hpp"
#include "capplan/sim/workload/workload.hpp"

namespace capplan::sim {

// Layers held by pipeline stage `stage` when `layers` split evenly over `pp` stages: the first
// layers % pp stages take one layer more.
int layers_on_stage(int layers, int pp, int stage);

// What one pipeline stage runs per micro-batch: its layers by FFN kind, and whether it holds the
// embedding (first stage) and the output layer with the loss (last stage). Every fold over the
// op list (time, memory, FLOPs, gradient and checkpoint bytes) multiplies the ops of a scope by
// these counts, stage by stage.
// A hybrid model's stage counts each pattern symbol on it (Megatron-Core splits the pattern's
// layers over the stages like any other layers: mamba_block.py @d98e8a6, MambaStack takes its
// layer_type_list slice at the stage's layer offset): `layers` then counts the attention layers
// (`*`, Scope::layer), `mlp` the MLP layers (`-`), `moe` the MoE layers (`E`), `mamba` the Mamba
// layers (`M`).
struct StageLayers {
  int layers = 0;
  int moe = 0;
  bool first = false;
  bool last = false;
  bool hybrid = false;
  int mlp = 0;
  int mamba = 0;
  int dense() const { return hybrid ? mlp : layers - moe; }
  bool operator==(const StageLayers&) const = default;
};

// Layers on `stage` of layout `p`: Parallelism::first_stage_layers / last_stage_layers when set,
// the rest split evenly (layers_on_stage). With interleaving (virtual_stages v > 1) a stage holds
// v chunks, chunk k of stage i being model chunk k*pp + i (Megatron's interleaved order), so an
// MoE model's leading dense layers fall on the stages that hold the first chunks.
// Contract: p passed check_layout (the stage counts are positive and sum to the layers).
StageLayers stage_layers(const ModelSpec& m, const Parallelism& p, int stage);

// A maximal run of consecutive stages that hold the same layers (same parameters, same ops per
// micro-batch); `stage` is its first. A layout has a handful of runs however deep its pipeline
// (first, last, the stages with one layer more, the rest), so every per-stage fold (time,
// memory, gradient and checkpoint bytes) visits runs, not stages: the first stage of a run holds
// the most in-flight micro-batches of it, and each run's time counts `count` times.
struct StageRun {
  StageLayers layers;
  int stage = 0;
  int count = 0;
};
std::vector<StageRun> stage_runs(const ModelSpec& m, const Parallelism& p);

// Number of layers each stage holds; layer counts are all >= 1 when the layout is valid.
int stage_layer_count(int layers, const Parallelism& p, int stage);

// Parameters held by one GPU of a pipeline stage, before ZeRO sharding: dense ones (attention,
// dense FFNs, shared experts, router, embeddings; TP-split, replicated over dp*cp ranks) and
// routed-expert ones (E/ep experts per GPU, replicated over the expert-data-parallel ranks).
// Fine-tuning splits them further (FinetuneSpec): the trained ones (every one in pre-training;
// the adapters, and the embeddings if trained, under LoRA) and the frozen ones stored in a
// quantised base format (QLoRA's 4-bit linears). Adapters count as parameters held.
struct StageParams {
  double dense = 0;
  double expert = 0;
  double trained_dense = 0;
  double trained_expert = 0;
  double quantized_dense = 0;
  double quantized_expert = 0;
  double total() const { return dense + expert; }
  double trained() const { return trained_dense + trained_expert; }
};

// Pre-training (everything trained):
StageParams stage_params(const ModelSpec& m, const Parallelism& p, int stage);
StageParams stage_params(const ModelSpec& m, const Parallelism& p, const StageLayers& layers);
// The job's fine-tuning method decides what is trained, added and quantised:
StageParams stage_params(const ModelSpec& m, const TrainingJob& job, const Parallelism& p, const StageLayers& layers);
// The parameters of the stage that holds the most (StageParams::total; the first of equals): the
// ones a step's data-parallel and optimizer ops are for.
StageParams most_loaded_stage_params(const ModelSpec& m, const TrainingJob& job, const Parallelism& p);

// Parameters on one GPU of pipeline stage `stage` (before ZeRO sharding), TP-split.
double stage_params_per_gpu(const ModelSpec& m, const Parallelism& p, int stage);

}  // namespace capplan::sim
