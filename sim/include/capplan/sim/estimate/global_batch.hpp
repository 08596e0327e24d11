// SPDX-License-Identifier: Apache-2.0
// The global batch a job asks for in tokens ("4M"), resolved to whole sequences that the layout
// can use, and the check that a batch leaves data parallelism some room.
//
// Contract: a batch given in sequences (TrainingJob::global_batch_tokens == 0) is never changed.
// A batch given in tokens becomes, per cluster and fixed strategy fields:
//  - dp fixed (or implied by fixed tp, pp and cp): the nearest multiple of dp x micro_batch
//    (micro_batch 1 when it is searched), at least one;
//  - dp searched: the tokens as they are when they are a whole number of sequences that
//    micro_batch divides; otherwise, among the sequence counts within kBatchTokensTolerance of the
//    tokens asked, the one that lets data parallelism take the most of the GPUs (the greatest
//    common divisor of sequences / micro_batch and the GPUs left to DP), the nearest of those.
//    "4M" tokens of 4096-token sequences on 512 GPUs is 1024 sequences (2^22 tokens, what
//    practitioners mean by a 4M batch), not 977 (a prime, so dp = 1).
// Both are findings (finding.hpp) naming the tokens asked and the sequences chosen.
#pragma once
#include <cstdint>
#include <optional>

#include "capplan/sim/workload/finding.hpp"
#include "capplan/sim/workload/scenario.hpp"

namespace capplan::sim {

// Sequence counts this close to the tokens asked (relative) are candidates when DP is searched:
// a batch written with a decimal suffix is often meant in binary units (4M for 2^22, 4.9% more).
inline constexpr double kBatchTokensTolerance = 0.05;

struct BatchChoice {
  std::int64_t sequences = 1;
  std::optional<Finding> finding;  // what was chosen from the tokens; empty when taken as asked
};

// The global batch of `s` in sequences for its cluster and fixed strategy fields (the contract
// above); s.training.global_batch when the batch was given in sequences.
BatchChoice choose_global_batch(const Scenario& s);

// Sets s.training.global_batch by choose_global_batch and returns its finding.
std::optional<Finding> resolve_global_batch(Scenario& s);

// The most data-parallel ways the cluster leaves for the batch: the GPUs divided by the fixed
// tp x pp x cp (1 when they do not divide), or the fixed dp.
int data_parallel_room(const Scenario& s);

// The finding when the batch alone forces dp = 1 although the GPUs could hold several model
// replicas (sequences / micro_batch share no factor with data_parallel_room(s), dp not fixed):
// a prime batch, say. It names a batch near it that would not (nullopt when there is none).
std::optional<Finding> batch_forces_one_replica(const Scenario& s);

// Optimizer steps to train s.training.tokens: whole steps, the last one a full global batch, so
// the run covers at least the tokens asked (ceil(tokens / (global_batch x seq_len))). Megatron-LM
// counts --train-samples the same way in whole iterations; a fraction of a step is not a step.
double training_steps(const Scenario& s);

}  // namespace capplan::sim
