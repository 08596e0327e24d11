// SPDX-License-Identifier: Apache-2.0
// Filling the "auto" fields of a strategy: enumerate the layouts the fixed fields allow, keep those
// that pass check_layout, and choose the fastest that fits in memory.
#include "estimate/strategy_search.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "estimate/estimate_entry.hpp"
#include "estimate/layout_space.hpp"
#include "schedule/step_timing.hpp"

namespace capplan::sim {

// What would make the layout that needs the least memory fit, where the user and the recipe left
// it open and the stack runs it: full recompute first (it costs a forward pass, nothing else), then
// host offload of the optimizer alone, then ZeRO-3 with the parameters too. Said, never chosen:
// recompute was searched where it was open, and offload trades memory for a CPU step whose rate
// depends on the host.
std::optional<Finding> remedy_would_fit(const Scenario& s, const Parallelism& least_memory, int micro_batches) {
  const StrategyRequest& r = s.strategy;
  const StackSupport& sup = r.support;
  auto fitted = [&](const Parallelism& q) -> std::optional<MemoryBreakdown> {
    if (!precheck_layout(s, q).ok()) return std::nullopt;
    const MemoryBreakdown mb = memory_per_gpu(s.model, s.training, q, s.cluster.gpu, micro_batches);
    return mb.fits() ? std::optional(mb) : std::nullopt;
  };
  std::optional<MemoryBreakdown> mb;
  FindingCode code = FindingCode::recompute_would_fit;
  // Recompute fixed by the scenario or the recipe's default: full recompute is the remedy to name.
  if (least_memory.recompute != Recompute::full) {
    Parallelism full = least_memory;
    full.recompute = Recompute::full;
    mb = fitted(full);
  }
  const bool offload_open = !r.offload_optimizer && !r.offload_params;
  Parallelism q = least_memory;
  if (!mb && offload_open && StackSupport::runs(sup.offload_optimizer)) {
    q.offload_optimizer = true;
    mb = fitted(q);
    code = FindingCode::offload_optimizer_would_fit;
  }
  if (!mb && offload_open && (!r.zero || *r.zero == 3) && StackSupport::runs(sup.offload_params) &&
      (q.dp == 1 || sup.allows_zero(3))) {
    q.zero = 3;
    q.offload_params = true;
    mb = fitted(q);
    code = FindingCode::offload_params_would_fit;
  }
  if (!mb) return std::nullopt;
  return finding(code, "strategy", {{"need_gib", units::to_gib(mb->total())}, {"have_gib", units::to_gib(mb->capacity)}});
}

Result<Estimate> estimate_auto_layout(const Scenario& s, const OpCostModel& cost) {
  const StrategyRequest& r = s.strategy;
  const ModelSpec& m = s.model;
  const int gpus = s.cluster.gpus;
  const int gpn = s.cluster.gpus_per_node;

  long evaluated = 0;
  StepOps ops;
  bool have_fit = false;
  Parallelism best_fit, least_memory;
  double best_time = std::numeric_limits<double>::infinity();
  double best_fit_mem = 0;
  double least_mem = std::numeric_limits<double>::infinity();
  double least_mem_time = 0;

  // Unpacked fine-tuning pads each micro-batch to its longest sample: each layout is priced with
  // the scenario resolved at its own micro-batch (ScenarioByMicroBatch).
  ScenarioByMicroBatch by_micro_batch(s);
  const ShapeLayoutSpace space(m, s.training, r, gpus, gpn);
  for (const OuterLayout& o : space.outer_layouts()) {
    space.inner(o).for_each([&](const Parallelism& p, long long micro_batches) {
      const Scenario& sc = by_micro_batch.at(p.micro_batch);
      if (!precheck_layout(sc, p).ok()) return;
      ++evaluated;
      // One op list per layout: memory and time are folds over it.
      build_step_ops_into(ops, sc.model, sc.training, p, sc.cluster, StepOpParts::all);
      const std::vector<StageRun> runs = stage_runs(sc.model, p);
      const MemoryBreakdown mem = memory_per_gpu(activation_footprint(ops.ops), runs, sc.model, sc.training, p,
                                                 sc.cluster.gpu, static_cast<int>(micro_batches));
      const double bytes = mem.total().base();
      const bool fits = mem.fits();
      if (!fits && have_fit) return;  // cannot beat a layout that fits
      OpBuckets buckets;
      add_op_costs(buckets, ops.ops, cost);
      const double t = schedule_step(sc, p, buckets, ops.stage_params, runs).breakdown.total().base();
      if (fits) {
        // The planner's rule (better(): time, then memory, then layout order).
        if (!have_fit || better({t, bytes, p}, {best_time, best_fit_mem, best_fit})) {
          best_fit = p;
          best_time = t;
          best_fit_mem = bytes;
        }
        have_fit = true;
      } else if (bytes < least_mem || (bytes == least_mem && t < least_mem_time)) {
        least_memory = p;
        least_mem = bytes;
        least_mem_time = t;
      }
    });
  }

  if (evaluated == 0) {
    Diagnostics d = check_layout(s, fill_defaults(s));
    d.insert(d.begin(), {Diagnostic::Severity::error, "scenario#/strategy", {},
                         finding(FindingCode::no_valid_layout, "strategy", {{"gpus", gpus}})});
    return std::unexpected(std::move(d));
  }
  const Parallelism& chosen = have_fit ? best_fit : least_memory;
  Estimate e = evaluate_and_explain(by_micro_batch.at(chosen.micro_batch), chosen, cost);
  e.layout.chosen_by_capplan = true;
  e.layout.configurations_evaluated = evaluated;
  if (!have_fit) {
    e.findings.insert(e.findings.begin(),
                      finding(FindingCode::no_layout_fits, "", {{"evaluated", static_cast<double>(evaluated)}}));
    if (auto remedy = remedy_would_fit(s, least_memory, e.layout.micro_batches)) {
      e.findings.insert(e.findings.begin() + 1, std::move(*remedy));
    }
  }
  return e;
}

}  // namespace capplan::sim
