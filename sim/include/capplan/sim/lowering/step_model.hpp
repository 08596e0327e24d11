// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "capplan/sim/workload/hardware.hpp"
#include "capplan/sim/lowering/ops.hpp"
#include "capplan/sim/lowering/stage_layout.hpp"
#include "capplan/sim/workload/strategy.hpp"
#include "capplan/sim/workload/workload.hpp"

namespace capplan::sim {

// The operations of one training step on one GPU, described once: the datasheet and calibrated
// cost models price this list, and calibration measures exactly these shapes.
// Contract: layer ops are for one layer and one micro-batch on one TP rank; data-parallel and
// optimizer ops are for the parameters of the most loaded pipeline stage (`stage_params`).

struct StepOps {
  std::vector<StepOp> ops;
  double stage_params = 0;  // parameters held by one GPU of the most loaded of all stages (before ZeRO)
  StageParams params;       // the same, split dense / expert
};


// Ranks that hold the same expert shard: tp*dp*cp / (ep*etp) (Megatron-Core's expert data parallel).
int expert_data_parallel(const Parallelism& p);

// Communicator placement for a group of `size` ranks whose members are `stride` ranks apart, with
// ranks laid out TP fastest, then DP, then PP (Megatron's order), on the tiers of `topology`: at
// each tier, min(size, domain GPUs / stride) members share a domain (one when stride >= domain).
GroupPlacement place_group(int size, int stride, const Topology& topology);
// The same on the two-tier network of nodes of `gpus_per_node` GPUs.
GroupPlacement place_group(int size, int stride, int gpus_per_node);

// Expected distinct expert-parallel ranks one token's top_k experts lie on, its own rank
// included, for top_k distinct experts drawn uniformly from `experts` held E/ep per rank (the
// ranks a fused EP dispatch sends the token to: 4.47 of 8 for top 6 of 128). 1 when ep <= 1.
double expected_destination_ranks(int experts, int top_k, int ep);

StepOps build_step_ops(const ModelSpec& m, const TrainingJob& job, const Parallelism& p, const Cluster& c);

// One forward pass of a serving engine's step on one GPU of a model replica (sim/serve.hpp builds
// it): `prefill_tokens` prompt tokens (whole prompts or chunks of them) and `decode_sequences`
// sequences generating one token each, in one batch, as continuous batching runs them.
// Contract: counts >= 0; the model's own seq_len, dropout and training options are not read.
struct InferencePass {
  Precision compute = Precision::bf16;  // GEMM math: bf16/fp16, fp8 (W8A8), fp4 (W4A4, Blackwell)
  double weight_bytes = 0;              // stored bytes per layer weight with its scales (0: compute's)
  double kv_bytes = 2.0;                // bytes per KV-cache element
  std::int64_t prefill_tokens = 0;
  double prefill_keys = 0;              // mean keys a prefill token attends to (prefix + causal half)
  std::int64_t decode_sequences = 0;
  double decode_context = 0;            // mean tokens in a decoding sequence's KV cache
  std::int64_t logits_rows = 0;         // sequences that sample a token in this pass
};

// The pass's ops: the training step's forward ops (the same builder) with the attention of a
// serving engine (prefill: fused attention over the prompt's keys; decode: the KV cache read per
// query group), the new tokens' K and V written to the cache, logits only for the sampled rows,
// routed experts only where tokens were sent, and no loss, backward, data-parallel or optimizer
// ops. Parallelism: tp (attention heads, dense FFN, and the experts' width unless ep > 1), ep
// (whole experts per rank), pp (the stage's layers, priced by the caller); micro_batch, dp, cp,
// zero and recompute are not read.
StepOps build_pass_ops(const ModelSpec& m, const InferencePass& pass, const Parallelism& p, const Cluster& c);

// The parts of the op list, so a search can price once what does not change between layouts.
// micro_batch: the per-micro-batch ops of the layers, embedding and output (they depend on tp, cp,
// ep, etp, micro_batch, sequence_parallel and recompute, not on pp, dp, zero or virtual_stages);
// pipeline: the stage-boundary send/recv; step: data-parallel and ZeRO-3 collectives and the
// optimizer. Contract: the three parts, built separately, hold exactly the ops of
// build_step_ops, each part in the same order.
enum class StepOpParts : unsigned { micro_batch = 1, pipeline = 2, step = 4, all = 7 };
StepOpParts part_of(const Op& op, Scope scope);
StepOpParts part_of(const StepOp& op);
// Like build_step_ops, keeping only the ops of `parts`; reuses `out.ops`' storage.
void build_step_ops_into(StepOps& out, const ModelSpec& m, const TrainingJob& job, const Parallelism& p,
                         const Cluster& c, StepOpParts parts);

// The layout with the fields that only the pipeline and step parts read reset: two layouts with
// the same key have identical micro-batch ops (a planner's cache key). A field not reset here is
// part of the key, so a new option is cached correctly by default.
Parallelism micro_batch_key(const Parallelism& p);
std::size_t hash_value(const Parallelism& p);

}  // namespace capplan::sim
