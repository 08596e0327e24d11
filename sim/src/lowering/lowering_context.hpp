// SPDX-License-Identifier: Apache-2.0
// Private to sim/src/lowering/: what the lowering of one training step or one serving pass works
// out once, before its blocks (blocks.hpp) append their ops through one OpListBuilder.
#pragma once
#include <cstdint>
#include <vector>

#include "capplan/sim/workload/hardware.hpp"
#include "capplan/sim/lowering/recompute_policy.hpp"
#include "capplan/sim/lowering/step_model.hpp"
#include "capplan/sim/workload/topology.hpp"
#include "lowering/op_list_builder.hpp"

namespace capplan::sim::lowering {

// What is lowered: a training step (forward, backward, recomputation, data parallel and optimizer)
// or one forward pass of a serving engine (build_pass_ops).
enum class PassKind { training, serving };

// The inputs of one lowering and the shapes, dtypes, groups and flags its blocks share. Built once
// per step; the blocks only read it. Notation as in Korthikanti et al. 2022: t the TP size, s the
// tokens of a sequence on this rank, h the hidden size.
struct Context {
  // A training step of `training` on `layout`.
  Context(const ModelSpec& model, const TrainingJob& training, const Parallelism& layout, const Cluster& cluster);
  // One serving pass (`training` and `layout` as build_pass_ops sets them for the engine).
  Context(const ModelSpec& model, const TrainingJob& training, const Parallelism& layout, const Cluster& cluster,
          const InferencePass& serving_pass);

  bool serving() const { return kind == PassKind::serving; }
  // The builder that appends this step's ops of `parts` to `ops` (it reads `policy`, so this
  // context outlives it).
  OpListBuilder builder(std::vector<StepOp>& ops, StepOpParts parts) const;

  const ModelSpec& m;
  const TrainingJob& job;
  const Parallelism& p;
  const Cluster& c;
  PassKind kind = PassKind::training;
  InferencePass pass;  // serving: the pass's batch, cache and weights (training: not read)
  RecomputePolicy policy;

  Precision dt = Precision::bf16;
  // Attention core stays in 16-bit under FP8 recipes (Transformer Engine keeps it in bf16).
  Precision attn_dt = Precision::bf16;
  Topology topology;        // built once: every communicator is placed on it
  GroupPlacement tp_group;  // the TP communicator
  // Fine-tuning: frozen, quantised and adapted linears (LoRA adapters run in 16 bits, as PEFT and
  // Megatron-Core's adapters do under FP8 recipes).
  TuneContext tune;
  // Bytes an FP8 (or FP4) cast moves per element. Serving quantises activations per token in one
  // fused pass (vLLM's dynamic per-token FP8 quantisation: read 16-bit, write the narrow copy and
  // its scales).
  double cast_bytes = 0;

  std::int64_t t = 1;          // TP size
  std::int64_t s = 0;          // tokens of a sequence on this rank (context parallel)
  std::int64_t tokens = 0;     // tokens of the micro-batch (serving: of the pass)
  std::int64_t tokens_sp = 0;  // the same, split over TP under sequence parallelism
  std::int64_t h = 0;          // hidden size
  std::int64_t heads = 0;      // query heads on this rank
  bool mla = false;
  std::int64_t dh = 0;
  std::int64_t kv_heads = 0;  // replicated when tp > kv_heads
  std::int64_t d_qk = 0;
  std::int64_t d_v = 0;
  std::int64_t f = 0;  // FFN hidden size
  bool eager = false;  // eager PyTorch (unfused kernels)
  // Bytes per activation element (the training precision's; FP8 recipes keep bf16 activations)
  // and per saved GEMM input (Transformer Engine saves the FP8 copy it made for the GEMM).
  double act = 0;
  double gemm_in = 0;
  double td = 0, tsp = 0, hd = 0;  // tokens, tokens_sp and h as doubles
  double qk_elems = 0;             // Q and K elements of the micro-batch on this rank
  bool full_rc = false;            // full recompute
  // An MoE layer's collectives run again with it (full recompute, or the `moe` module).
  bool moe_rc = false;
  // A column-parallel linear's input-gradient collective runs during its weight-gradient GEMM
  // (tp_block_comm in shared_ops.hpp).
  bool tp_async = false;
  bool hybrid = false;  // a hybrid (Mamba) pattern: each layer owns its pre-norm and residual

 private:
  Context(const ModelSpec& model, const TrainingJob& training, const Parallelism& layout, const Cluster& cluster,
          PassKind pass_kind, const InferencePass& serving_pass);
};

}  // namespace capplan::sim::lowering
