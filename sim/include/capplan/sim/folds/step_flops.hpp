// SPDX-License-Identifier: Apache-2.0
// Model and hardware FLOPs of a step, folded from its op list (folds/step_flops.cpp).
#pragma once
#include <cstdint>

#include "capplan/sim/workload/strategy.hpp"
#include "capplan/sim/workload/training.hpp"
#include "capplan/sim/units.hpp"
#include "capplan/sim/workload/workload.hpp"

namespace capplan::sim {

struct StepFlops {
  units::Flops model;     // model FLOPs of one step (no recomputation), whole cluster
  units::Flops hardware;  // including recomputation
};

struct StepOps;
// Model and hardware FLOPs of one step for the whole cluster, folded from the op list `ops` of
// layout `p` (StepOp::flops: Megatron's model-FLOPs convention, recomputation counted only in
// the hardware FLOPs).
StepFlops step_flops(const StepOps& ops, const ModelSpec& m, const Parallelism& p, std::int64_t global_batch);
// The same on one GPU with `recompute` (model FLOPs do not depend on the layout).
StepFlops step_flops(const ModelSpec& m, const TrainingJob& job, Recompute recompute);

}  // namespace capplan::sim
