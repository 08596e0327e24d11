// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <vector>

#include "capplan/sim/cost/op_cost.hpp"
#include "capplan/sim/schedule/step_breakdown.hpp"
#include "capplan/sim/workload/scenario.hpp"
#include "capplan/sim/lowering/scope.hpp"
#include "capplan/sim/lowering/step_model.hpp"

namespace capplan::sim {

struct StepTiming {
  StepBreakdown breakdown;
  int micro_batches = 1;
  // Host time of DeepSpeed's ZeRO-3 hooks on the slowest stage over the step
  // (TrainingJob::zero3_host_s_per_layer): part of the host time, hidden or not.
  double zero3_hooks_s = 0;
};

// Seconds per micro-batch spent by one scope, split the way the breakdown reports them.
struct Bucket {
  double compute = 0;    // GEMMs and memory-bound kernels (forward + backward + recompute)
  double recompute = 0;  // part of compute spent recomputing
  double backward = 0;   // backward compute only (the window DP reduction can hide behind)
  double tp = 0;         // tensor-parallel collectives (not overlapped)
  double tp_async = 0;   // asynchronous input-gradient TP collectives (StepOp::tp_async)
  double tp_window = 0;  // the backward GEMMs they run behind (StepOp::tp_window)
  double pp = 0;         // pipeline send/recv
  double fsdp = 0;       // ZeRO-3 parameter/gradient collectives of the scope
  double fsdp_gather = 0;  // the parameter all-gathers among them (forward, backward, recompute)
  double fsdp_regather = 0;  // of those, the recomputed forward's (ZeRO-3 releasing before backward)
  double ep = 0;         // expert-parallel all-to-alls (not overlapped)
  double cp = 0;         // context-parallel K/V exchange (overlaps the attention core)
  double attention = 0;  // attention-core kernels (the window ring attention hides behind)
  double launches = 0;   // kernels (and collectives) the host issues: each op's count
};

// The priced op list, summed by scope. Contract: each field is a sum over the ops of one
// StepOpParts part only, in list order, so the parts can be priced separately (and the
// micro-batch part cached) with bit-identical results.
struct OpBuckets {
  // The scopes that run per micro-batch (Repeat other than per_step); the once-per-step ones are
  // the fields below.
  PerScope<Bucket> scopes;
  Bucket& operator[](Scope s) { return scopes[s]; }
  const Bucket& operator[](Scope s) const { return scopes[s]; }
  double dp_step = 0, dp_grad = 0, optimizer = 0;  // once per step
  // Once per step, serially with the gradient reduction and never overlapped: the tied
  // embedding's gradient all-reduce between the first and last pipeline stages.
  double dp_sync = 0;
  // The cost model's least host time per op (OpCostModel::host_issue_s_per_op): not a sum, the
  // same for every part.
  double host_issue_s_per_op = 0;
};

// Adds the cost of `ops` to `into`.
void add_op_costs(OpBuckets& into, const std::vector<StepOp>& ops, const OpCostModel& cost);

// Places the priced ops on the pipeline schedule. `stage_params`: StepOps::stage_params.
StepTiming schedule_step(const Scenario& s, const Parallelism& p, const OpBuckets& buckets, double stage_params);
// The same with the layout's stage runs given (stage_runs(s.model, p)).
StepTiming schedule_step(const Scenario& s, const Parallelism& p, const OpBuckets& buckets, double stage_params,
                         const std::vector<StageRun>& runs);

}  // namespace capplan::sim
