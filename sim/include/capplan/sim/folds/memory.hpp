// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <optional>
#include <vector>

#include "capplan/sim/workload/hardware.hpp"
#include "capplan/sim/lowering/ops.hpp"
#include "capplan/sim/lowering/scope.hpp"
#include "capplan/sim/lowering/stage_layout.hpp"
#include "capplan/sim/workload/strategy.hpp"
#include "capplan/sim/units.hpp"
#include "capplan/sim/workload/workload.hpp"

namespace capplan::sim {

// Peak memory on the most loaded GPU, by kind. Contract: total() is the sum of the parts.
struct MemoryBreakdown {
  units::Bytes weights;
  units::Bytes gradients;
  units::Bytes optimizer;
  units::Bytes activations;
  units::Bytes logits;  // output-layer logits and loss buffers (last stage)
  units::Bytes reserve;  // CUDA context, library workspaces, allocator fragmentation
  units::Bytes capacity;
  int stage = 0;  // pipeline stage that holds the peak (the most loaded of all stages)

  units::Bytes total() const { return weights + gradients + optimizer + activations + logits + reserve; }
  bool fits() const { return total() <= capacity; }
};

// Bytes per parameter (Rajbhandari et al. 2020, ZeRO, Sec. 3.1): the compute weights
// (TrainingJob::weight_bytes()), the gradients (TrainingJob::gradient_bytes()) and the optimizer
// state (TrainingJob::optimizer_state_bytes(): 12 under mixed precision, 8 in fp32 training),
// all from the training precision and the framework's gradient dtype.
struct MemoryAssumptions {
  // Overrides the optimizer state bytes per parameter (empty: from the precision).
  std::optional<double> optimizer_bytes;
  // Fixed part of the reserve: CUDA context (~0.5 GiB) + cuBLAS/NCCL workspaces and buffers.
  double reserve_fixed_gib = 2.0;
  // Allocator fragmentation and transient buffers, as a fraction of the rest (PyTorch caching
  // allocator typically shows 5-10% reserved-but-unallocated in large runs).
  double reserve_fraction = 0.07;
};

// What one micro-batch keeps for its backward pass, folded from the op list (StepOp::saved):
// `kept` is held from an op's forward to its backward (per occurrence of the scope: one layer,
// one FFN of that kind, the embedding, the output layer); `remat` exists only while one layer is
// recomputed before its backward (the saved bytes of the recomputed ops).
struct ActivationFootprint {
  struct Part {
    double kept = 0;
    double remat = 0;
  };
  PerScope<Part> parts;  // the per-step scopes keep nothing
  Part& operator[](Scope s) { return parts[s]; }
  const Part& operator[](Scope s) const { return parts[s]; }
};
// Contract: `ops` holds the micro-batch part of a step's op list (StepOpParts::micro_batch).
ActivationFootprint activation_footprint(const std::vector<StepOp>& ops);

// Activation bytes of one transformer layer for one micro-batch on one TP rank, by part (the
// attention block with norms, residuals and masks; a dense FFN; an MoE FFN), derived from the op
// list. They reproduce Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
// Transformer Models", Sec. 4 and Table 2), generalised to GQA, MLA, gated FFNs, MoE, optional
// dropout and fused attention: the tests check them against those closed forms.
struct LayerActivations {
  units::Bytes attention;
  units::Bytes dense_mlp;
  units::Bytes moe_mlp;
};
LayerActivations layer_activations(const ModelSpec& m, const Parallelism& p, Precision precision);
units::Bytes layer_activation_bytes(const ModelSpec& m, const Parallelism& p, Precision precision);

// Micro-batches' worth of a stage's activations held at the peak of its schedule (1F1B or
// interleaved 1F1B), never more than the micro-batches that exist.
double in_flight(const Parallelism& p, int micro_batches, int stage);

// Memory of every pipeline stage from the op list's footprint and the stage's parameters; the
// most loaded stage is reported.
MemoryBreakdown memory_per_gpu(const ActivationFootprint& footprint, const ModelSpec& m, const TrainingJob& job,
                               const Parallelism& p, const GpuSpec& gpu, int micro_batches,
                               const MemoryAssumptions& a = {});
// The same with the layout's stage runs given (a planner computes them once per pipeline shape).
MemoryBreakdown memory_per_gpu(const ActivationFootprint& footprint, const std::vector<StageRun>& runs,
                               const ModelSpec& m, const TrainingJob& job, const Parallelism& p, const GpuSpec& gpu,
                               int micro_batches, const MemoryAssumptions& a = {});
// The same, building the op list of `p` first.
MemoryBreakdown memory_per_gpu(const ModelSpec& m, const TrainingJob& job, const Parallelism& p,
                               const GpuSpec& gpu, int micro_batches, const MemoryAssumptions& a = {});

}  // namespace capplan::sim
