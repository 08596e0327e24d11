// SPDX-License-Identifier: Apache-2.0
// Filling the "auto" fields of a strategy: enumerate the layouts the fixed fields allow, keep those
// that pass check_layout, and choose the fastest that fits in memory.
#include <algorithm>
#include <limits>
#include <vector>

#include "capplan/sim/estimate.hpp"
#include "capplan/sim/global_batch.hpp"
#include "search/layout_space.hpp"
#include "schedule/step_timing.hpp"

namespace capplan::sim {

namespace {

// A complete layout built from the request, with defaults for what is unset: used to report
// why nothing matched when the fixed fields themselves are inconsistent.
Parallelism fill_defaults(const Scenario& s) {
  const StrategyRequest& r = s.strategy;
  Parallelism p;
  p.tp = r.tp.value_or(1);
  p.pp = r.pp.value_or(1);
  p.cp = r.cp.value_or(1);
  p.ep = r.ep.value_or(1);
  p.etp = r.etp.value_or(1);
  const long long rest = 1LL * p.tp * p.pp * p.cp;
  p.dp = r.dp.value_or(rest > 0 && s.cluster.gpus % rest == 0 ? static_cast<int>(s.cluster.gpus / rest) : 1);
  p.micro_batch = r.micro_batch.value_or(1);
  p.virtual_stages = r.virtual_stages.value_or(1);
  p.zero = r.zero.value_or(0);
  p.recompute = r.recompute.value_or(r.selective_recompute ? Recompute::selective : Recompute::full);
  for (const auto& o : kStrategyOptions) p.*o.value = (r.*o.request).value_or(o.fallback);
  p.sequence_parallel = r.sequence_parallel.value_or(p.tp > 1);
  p.first_stage_layers = r.first_stage_layers.value_or(0);
  p.last_stage_layers = r.last_stage_layers.value_or(0);
  return p;
}

Result<Estimate> estimate_for_batch(const Scenario& s, const OpCostModel& cost);

}  // namespace

Result<Estimate> estimate(const Scenario& s, const OpCostModel& cost) {
  // A batch asked in tokens: the sequences for this cluster and strategy (global_batch.hpp), and
  // the finding that says which were chosen. A scenario parsed by data/ has them already.
  BatchChoice batch = choose_global_batch(s);
  Result<Estimate> e;
  if (batch.sequences == s.training.global_batch) {
    e = estimate_for_batch(s, cost);
  } else {
    Scenario resolved = s;
    resolved.training.global_batch = batch.sequences;
    e = estimate_for_batch(resolved, cost);
  }
  if (e && batch.finding) e->findings.insert(e->findings.begin(), std::move(*batch.finding));
  return e;
}

namespace {

Result<Estimate> estimate_for_batch(const Scenario& s, const OpCostModel& cost) {
  // The workload seam: each kind has its own lowering and schedule. Fine-tuning is the training
  // step with its frozen, quantised and adapted weights (TrainingJob::finetune) over the tokens
  // its dataset resolved to (resolve_workload).
  switch (s.workload.kind) {
    case WorkloadKind::pretrain:
    case WorkloadKind::finetune:
    case WorkloadKind::serve: break;
  }
  const StrategyRequest& r = s.strategy;
  const ModelSpec& m = s.model;
  const int gpus = s.cluster.gpus;
  const int gpn = s.cluster.gpus_per_node;

  if (r.fully_specified() || (r.tp && r.pp && r.dp && r.micro_batch && r.virtual_stages && r.zero && r.recompute &&
                              (r.sequence_parallel || *r.tp == 1) && (r.ep || !m.is_moe()) &&
                              (r.cp || !searches_cp(m, s.training.global_batch, gpus)))) {
    const Parallelism p = fill_defaults(s);
    if (Diagnostics d = check_layout(s, p); has_errors(d)) return std::unexpected(std::move(d));
    return evaluate(s, p, cost);
  }

  long evaluated = 0;
  StepOps ops;
  bool have_fit = false;
  Parallelism best_fit, least_memory;
  double best_time = std::numeric_limits<double>::infinity();
  double best_fit_mem = 0;
  double least_mem = std::numeric_limits<double>::infinity();
  double least_mem_time = 0;

  const ShapeLayoutSpace space(m, s.training, r, gpus, gpn);
  for (const OuterLayout& o : space.outer_layouts()) {
    space.inner(o).for_each([&](const Parallelism& p, long long micro_batches) {
      if (!precheck_layout(s, p).ok()) return;
      ++evaluated;
      // One op list per layout: memory and time are folds over it.
      build_step_ops_into(ops, m, s.training, p, s.cluster, StepOpParts::all);
      const std::vector<StageRun> runs = stage_runs(m, p);
      const MemoryBreakdown mem = memory_per_gpu(activation_footprint(ops.ops), runs, m, s.training, p, s.cluster.gpu,
                                                 static_cast<int>(micro_batches));
      const double bytes = mem.total().base();
      const bool fits = mem.fits();
      if (!fits && have_fit) return;  // cannot beat a layout that fits
      OpBuckets buckets;
      add_op_costs(buckets, ops.ops, cost);
      const double t = schedule_step(s, p, buckets, ops.stage_params, runs).breakdown.total().base();
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
  Estimate e = evaluate(s, have_fit ? best_fit : least_memory, cost);
  e.layout.chosen_by_capplan = true;
  e.layout.configurations_evaluated = evaluated;
  if (!have_fit) {
    e.findings.insert(e.findings.begin(),
                      finding(FindingCode::no_layout_fits, "", {{"evaluated", static_cast<double>(evaluated)}}));
    // What host offload would do for that layout, where the user left it open: the optimizer
    // alone first, then ZeRO-3 with the parameters too. Said, never chosen: offload trades memory
    // for a CPU step whose rate depends on the host.
    if (!r.offload_optimizer && !r.offload_params) {
      auto fitted = [&](Parallelism q) -> std::optional<MemoryBreakdown> {
        if (!precheck_layout(s, q).ok()) return std::nullopt;
        const MemoryBreakdown mb = memory_per_gpu(m, s.training, q, s.cluster.gpu, e.layout.micro_batches);
        return mb.fits() ? std::optional(mb) : std::nullopt;
      };
      Parallelism q = least_memory;
      q.offload_optimizer = true;
      std::optional<MemoryBreakdown> mb = fitted(q);
      FindingCode code = FindingCode::offload_optimizer_would_fit;
      if (!mb && (!r.zero || *r.zero == 3)) {
        q.zero = 3;
        q.offload_params = true;
        mb = fitted(q);
        code = FindingCode::offload_params_would_fit;
      }
      if (mb) {
        e.findings.insert(e.findings.begin() + 1,
                          finding(code, "strategy", {{"need_gib", units::to_gib(mb->total())},
                                                     {"have_gib", units::to_gib(mb->capacity)}}));
      }
    }
  }
  return e;
}

}  // namespace
}  // namespace capplan::sim
