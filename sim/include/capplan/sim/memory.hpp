// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "capplan/sim/hardware.hpp"
#include "capplan/sim/strategy.hpp"
#include "capplan/sim/units.hpp"
#include "capplan/sim/workload.hpp"

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
  int stage = 0;  // pipeline stage that holds the peak

  units::Bytes total() const { return weights + gradients + optimizer + activations + logits + reserve; }
  bool fits() const { return total() <= capacity; }
};

// Bytes per parameter of mixed-precision Adam (Rajbhandari et al. 2020, ZeRO, Sec. 3.1):
// the weights (TrainingJob::weight_bytes(): 2 in bf16/fp16; FP8 training adds an FP8 copy and its
// transpose, +2, unless the weights themselves are FP8: 1 + 1) + 12 (fp32 master, momentum,
// variance), plus the gradients: 2 bytes
// in 16 bits, 4 where the framework accumulates and reduces them in fp32
// (TrainingJob::gradient_bytes(); Megatron-LM's bf16 default: 2 + 4 + 12 = 18).
struct MemoryAssumptions {
  double optimizer_bytes = 12.0;
  // Fixed part of the reserve: CUDA context (~0.5 GiB) + cuBLAS/NCCL workspaces and buffers.
  double reserve_fixed_gib = 2.0;
  // Allocator fragmentation and transient buffers, as a fraction of the rest (PyTorch caching
  // allocator typically shows 5-10% reserved-but-unallocated in large runs).
  double reserve_fraction = 0.07;
};

// Activation bytes of one transformer layer for one micro-batch on one TP rank, following
// Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer Models",
// Sec. 4), generalised to GQA, gated FFNs, optional dropout and fused (flash) attention.
units::Bytes layer_activation_bytes(const ModelSpec& m, const Parallelism& p, Precision precision);

// The same split by part: the attention block (with norms, residual inputs and masks), a dense
// FFN, and an MoE FFN (routed experts on the busiest rank, router, shared experts).
struct LayerActivations {
  units::Bytes attention;
  units::Bytes dense_mlp;
  units::Bytes moe_mlp;
};
LayerActivations layer_activations(const ModelSpec& m, const Parallelism& p, Precision precision);

// Layers held by pipeline stage `stage` when `layers` do not split evenly: the first
// layers % pp stages take one layer more (the slowest stage then sets the pace).
int layers_on_stage(int layers, int pp, int stage);

MemoryBreakdown memory_per_gpu(const ModelSpec& m, const TrainingJob& job, const Parallelism& p,
                               const GpuSpec& gpu, int micro_batches, const MemoryAssumptions& a = {});

}  // namespace capplan::sim
