// SPDX-License-Identifier: Apache-2.0
// estimate(): a batch asked in tokens resolved for the cluster, then the request's own layout
// when it fixes every field that matters, else the "auto" choice (estimate/strategy_search.cpp).
#include <utility>

#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/estimate/global_batch.hpp"
#include "estimate/estimate_entry.hpp"
#include "estimate/layout_space.hpp"
#include "estimate/strategy_search.hpp"

namespace capplan::sim {

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
  p.sequence_parallel = r.sequence_parallel.value_or(p.tp > 1 && StackSupport::runs(r.support.sequence_parallel));
  p.first_stage_layers = r.first_stage_layers.value_or(0);
  p.last_stage_layers = r.last_stage_layers.value_or(0);
  return p;
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

  if (r.fully_specified() || (r.tp && r.pp && r.dp && r.micro_batch && r.virtual_stages && r.zero && r.recompute &&
                              (r.sequence_parallel || *r.tp == 1) && (r.ep || !m.is_moe()) &&
                              (r.cp || !searches_cp(m, s.training.global_batch, gpus)))) {
    const Parallelism p = fill_defaults(s);
    if (Diagnostics d = check_layout(s, p); has_errors(d)) return std::unexpected(std::move(d));
    return evaluate_and_explain(s, p, cost);
  }
  return estimate_auto_layout(s, cost);
}

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

}  // namespace capplan::sim
