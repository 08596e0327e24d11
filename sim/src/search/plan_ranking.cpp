// SPDX-License-Identifier: Apache-2.0
// The planner's ranking: each shape's kept layouts scored on the goodput figures, ranked by the
// objective under deadline and budget, the constraint failure and its closest plan, and the
// chosen plan's runner-ups (docs/planner.md).
#include "search/plan_ranking.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "capplan/sim/estimate/global_batch.hpp"
#include "estimate/strategy_search.hpp"

namespace capplan::sim::planner {

namespace {

// A plan's position on the two axes, computed exactly as evaluate() computes them.
struct Scored {
  int shape = 0;
  Timed timed;
  double time_s = 0;  // time to train
  std::optional<double> cost;
  std::optional<double> time_p90_s;  // with DeadlineQuantile::p90, once computed (p90_time)
  bool meets_deadline = true;
  bool meets_budget = true;
  bool feasible() const { return meets_deadline && meets_budget; }
};

bool checks_p90(const SearchRequest& req) { return req.deadline && req.deadline_quantile == DeadlineQuantile::p90; }

// The p90 of a plan's time to train, exactly as `capplan estimate` bands it: apply_error_band on
// the plan's estimate, the slow end of wall_days (time_to_train_days where goodput is not
// modelled), in seconds. Empty when the table has no band for the plan.
std::optional<double> p90_time(const Shape& sh, const Timed& t, const ResidualTable& table) {
  const Scenario s = at_micro_batch(sh.scenario, t.p.micro_batch);
  Estimate e = evaluate(s, t.p, *sh.cost);
  apply_error_band(e, s, table);
  const std::optional<Interval>& days = e.goodput.modelled ? e.uncertainty.wall_days : e.uncertainty.time_to_train_days;
  if (!days) return std::nullopt;
  return days->high * 86400.0;
}

// With p90 deadlines: computes the plan's p90 (once) and whether it meets the deadline.
void check_p90(const std::vector<Shape>& shapes, Scored& sc, const SearchRequest& req) {
  if (!checks_p90(req) || sc.time_p90_s) return;
  sc.time_p90_s = p90_time(shapes[static_cast<std::size_t>(sc.shape)], sc.timed, req.error_band);
  sc.meets_deadline = sc.time_p90_s && *sc.time_p90_s <= req.deadline->base();
}

Scored score(const std::vector<Shape>& shapes, int shape, const Timed& t, const SearchRequest& req) {
  const Scenario& s = shapes[static_cast<std::size_t>(shape)].scenario;
  Scored out;
  out.shape = shape;
  out.timed = t;
  const units::Seconds time_to_train = units::seconds(t.step_s) * training_steps(s);
  // Ranked on the goodput figures, exactly as evaluate() fills Estimate::goodput: expected wall
  // time with interruptions and checkpoints, total cost under the scenario's purchase terms.
  const double tokens_per_s = static_cast<double>(s.training.global_batch) * s.model.seq_len / t.step_s;
  const GoodputInputs in{&s.model, &s.training, &s.cluster, &s.reliability, &s.storage, &s.data, &s.pricing};
  std::vector<Finding> ignored;
  const Goodput g = compute_goodput(in, t.p, time_to_train, units::seconds(t.step_s), tokens_per_s, ignored);
  out.time_s = g.modelled ? g.wall.base() : time_to_train.base();
  if (g.modelled) {
    if (g.cost.total) out.cost = g.cost.total->base();
  } else if (s.cluster.price_per_gpu) {
    out.cost = (*s.cluster.price_per_gpu * time_to_train * static_cast<double>(s.cluster.gpus)).base();
  }
  out.meets_deadline = !req.deadline || out.time_s <= req.deadline->base();
  out.meets_budget = !req.budget || (out.cost && *out.cost <= req.budget->base());
  // A p90 deadline: checked on the band only where the plan meets it at the point (keeps it
  // cheap). The band holds the point estimate (apply_error_band), so its slow end is never
  // faster than the point: a plan that misses at the point misses at p90.
  if (checks_p90(req) && out.meets_deadline) check_p90(shapes, out, req);
  return out;
}

// Total orders: the objective first, then the other axis, then a stable key (shape, layout).
bool stable_less(const Scored& a, const Scored& b) {
  if (a.shape != b.shape) return a.shape < b.shape;
  if (a.timed.memory_bytes != b.timed.memory_bytes) return a.timed.memory_bytes < b.timed.memory_bytes;
  return a.timed.p < b.timed.p;
}
bool by_time(const Scored& a, const Scored& b) {
  if (a.time_s != b.time_s) return a.time_s < b.time_s;
  if (a.cost.has_value() != b.cost.has_value()) return a.cost.has_value();
  if (a.cost && *a.cost != *b.cost) return *a.cost < *b.cost;
  return stable_less(a, b);
}
bool by_cost(const Scored& a, const Scored& b) {
  if (a.cost.has_value() != b.cost.has_value()) return a.cost.has_value();  // known prices first
  if (a.cost && *a.cost != *b.cost) return *a.cost < *b.cost;
  if (a.time_s != b.time_s) return a.time_s < b.time_s;
  return stable_less(a, b);
}

// Non-dominated points with a known cost, fastest first. a dominates b when it is no worse on both
// axes and better on one; equal points do not dominate each other.
std::vector<Scored> pareto_front(std::vector<Scored> all) {
  std::erase_if(all, [](const Scored& x) { return !x.cost; });
  std::sort(all.begin(), all.end(), by_time);
  std::vector<Scored> front;
  double best_cost = std::numeric_limits<double>::infinity();
  for (const Scored& x : all) {
    if (*x.cost < best_cost) {
      front.push_back(x);
      best_cost = *x.cost;
    } else if (*x.cost == best_cost && !front.empty() && front.back().time_s == x.time_s) {
      front.push_back(x);  // the same point as the last one kept
    }
  }
  return front;
}

// Whether the shape's purchase terms carry the price their model charges: on demand the node's
// price; spot and reserved their own rate; on premises the node's purchase price.
bool purchase_priced(const Scenario& s) {
  switch (s.pricing.model) {
    case PurchaseModel::on_demand: return true;
    case PurchaseModel::spot: return s.pricing.spot.usd_per_gpu_hour.has_value();
    case PurchaseModel::reserved: return s.pricing.reserved.usd_per_gpu_hour.has_value();
    case PurchaseModel::on_prem: return s.pricing.on_prem.usd_per_node.has_value();
  }
  return true;
}

Plan make_plan(const std::vector<Shape>& shapes, const SearchRequest& req, const Scored& sc) {
  const Shape& sh = shapes[static_cast<std::size_t>(sc.shape)];
  Plan plan;
  plan.estimate = evaluate_and_explain(at_micro_batch(sh.scenario, sc.timed.p.micro_batch), sc.timed.p, *sh.cost);
  if (sh.batch) plan.estimate.findings.insert(plan.estimate.findings.begin(), *sh.batch);
  plan.estimate.layout.chosen_by_capplan = !req.base.strategy.fully_specified();
  plan.offering = sh.offering;
  plan.instance_id = sh.scenario.cluster.instance_id;
  plan.gpu_id = sh.scenario.cluster.gpu.id;
  plan.nodes = sh.nodes;
  plan.gpus = sh.scenario.cluster.gpus;
  plan.price_known = sh.scenario.cluster.price_per_gpu.has_value() && purchase_priced(sh.scenario);
  plan.price_source = sh.scenario.cluster.price_source;
  plan.purchase = sh.scenario.pricing.model;
  plan.currency = sh.scenario.pricing.currency;
  plan.meets_deadline = sc.meets_deadline;
  plan.meets_budget = sc.meets_budget;
  if (sc.time_p90_s) plan.time_p90 = units::seconds(*sc.time_p90_s);
  return plan;
}

RunnerUp runner_up(const std::string& dimension, const Plan& chosen, Plan other) {
  RunnerUp r;
  r.dimension = dimension;
  r.time_ratio = plan_time(other.estimate).base() / plan_time(chosen.estimate).base();
  const auto chosen_cost = plan_cost(chosen.estimate), other_cost = plan_cost(other.estimate);
  if (chosen_cost && other_cost && chosen_cost->base() > 0) r.cost_ratio = other_cost->base() / chosen_cost->base();
  r.plan = std::move(other);
  return r;
}


// Each shape's best layout (best_per_shape), and the plans ranked: the same, or every kept layout
// when each may be listed.
struct Candidates {
  std::vector<Scored> best_per_shape, all;
};

Candidates score_candidates(const std::vector<Shape>& shapes, const SearchRequest& req,
                            const std::vector<ShapeResult>& kept) {
  Candidates out;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const auto& best = kept[i].best;
    for (std::size_t k = 0; k < best.size(); ++k) {
      if (k > 0 && req.one_plan_per_shape) break;  // only the best layout of a shape is a candidate
      const Scored sc = score(shapes, static_cast<int>(i), best[k], req);
      if (k == 0) out.best_per_shape.push_back(sc);
      if (k == 0 || !req.one_plan_per_shape) out.all.push_back(sc);
    }
  }
  return out;
}

// The Pareto front (result.pareto) and the plans that meet the constraints ranked by the objective,
// at most top_k (result.plans); returns the ranking.
std::vector<Scored> rank(const std::vector<Shape>& shapes, const SearchRequest& req,
                         const std::vector<Scored>& candidates, SearchResult& result) {
  const std::vector<Scored> front = pareto_front(candidates);
  for (const Scored& sc : front) result.pareto.push_back(make_plan(shapes, req, sc));

  std::vector<Scored> feasible;
  for (const Scored& sc : candidates) {
    if (sc.feasible()) feasible.push_back(sc);
  }
  std::vector<Scored> ranked;
  if (req.objective == Objective::pareto) {
    for (const Scored& sc : front) {
      if (sc.feasible()) ranked.push_back(sc);
    }
    // The front holds priced plans only. A priced plan that meets the constraints is dominated only
    // by one that meets them too, so an empty ranking beside feasible plans means none of those has
    // a price: there is no front to rank by, and time is what can be compared.
    if (ranked.empty() && !feasible.empty()) {
      ranked = feasible;
      std::sort(ranked.begin(), ranked.end(), by_time);
      result.notes.push_back(finding(FindingCode::pareto_without_prices));
    }
  } else {
    ranked = feasible;
    std::sort(ranked.begin(), ranked.end(), req.objective == Objective::cheapest ? by_cost : by_time);
  }
  if (ranked.size() > static_cast<std::size_t>(req.top_k)) ranked.resize(static_cast<std::size_t>(req.top_k));
  for (const Scored& sc : ranked) result.plans.push_back(make_plan(shapes, req, sc));
  return ranked;
}

// No layout fits in memory: the closest plan is the layout that needs the least.
void closest_in_memory(const std::vector<Shape>& shapes, const SearchRequest& req,
                       const std::vector<ShapeResult>& kept, ConstraintFailure& f) {
  std::optional<std::pair<int, Oversized>> least;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    if (kept[i].least_memory && (!least || smaller(*kept[i].least_memory, least->second))) {
      least = std::pair<int, Oversized>{static_cast<int>(i), *kept[i].least_memory};
    }
  }
  if (least) {
    Scored sc;
    sc.shape = least->first;
    sc.timed.p = least->second.p;
    f.closest = make_plan(shapes, req, sc);
    const Scenario s = at_micro_batch(shapes[static_cast<std::size_t>(least->first)].scenario, least->second.p.micro_batch);
    f.remedy = remedy_would_fit(s, least->second.p, f.closest->estimate.layout.micro_batches);
  }
}

// Plans fit but none meets the deadline and the budget: which is missed (f.kind), and the plan
// that misses by the least, returned and kept as f.closest.
Scored closest_to_constraints(const std::vector<Shape>& shapes, const SearchRequest& req,
                              std::vector<Scored>& candidates, ConstraintFailure& f) {
  // Missing a p90 deadline is said (and the closest chosen) on the p90 times.
  if (checks_p90(req)) {
    for (Scored& sc : candidates) check_p90(shapes, sc, req);
  }
  const bool any_deadline = std::any_of(candidates.begin(), candidates.end(), [](auto& x) { return x.meets_deadline; });
  const bool any_budget = std::any_of(candidates.begin(), candidates.end(), [](auto& x) { return x.meets_budget; });
  // The time a deadline is checked against: the p90 where it was asked for and is known.
  auto deadline_time = [&](const Scored& x) { return checks_p90(req) && x.time_p90_s ? *x.time_p90_s : x.time_s; };
  Scored closest;
  if (req.deadline && !any_deadline) {
    closest = *std::min_element(candidates.begin(), candidates.end(), [&](const Scored& a, const Scored& b) {
      if (deadline_time(a) != deadline_time(b)) return deadline_time(a) < deadline_time(b);
      return by_time(a, b);
    });
    f.kind = req.budget && !any_budget ? FailureKind::deadline_nor_budget : FailureKind::deadline;
  } else if (req.budget && !any_budget) {
    f.kind = FailureKind::budget;
    closest = *std::min_element(candidates.begin(), candidates.end(), by_cost);
  } else {
    // Each constraint alone is met by some plan, never both at once: the plan that misses by
    // the least (the larger of time/deadline and cost/budget is smallest).
    f.kind = FailureKind::deadline_and_budget;
    auto excess = [&](const Scored& x) {
      const double t = deadline_time(x) / req.deadline->base();
      const double c = x.cost ? *x.cost / req.budget->base() : std::numeric_limits<double>::infinity();
      return std::max(t, c);
    };
    closest = *std::min_element(candidates.begin(), candidates.end(), [&](const Scored& a, const Scored& b) {
      const double ea = excess(a), eb = excess(b);
      if (ea != eb) return ea < eb;
      return by_cost(a, b);
    });
  }
  f.closest = make_plan(shapes, req, closest);
  f.closest_time = units::seconds(deadline_time(closest));
  if (closest.cost) f.closest_cost = units::usd(*closest.cost);
  return closest;
}

// Nothing meets the constraints: says which (result.failure) and keeps the closest plan; returns
// it where the runner-ups compare with it (not when nothing fits in memory).
std::optional<Scored> explain_failure(const std::vector<Shape>& shapes, const SearchRequest& req,
                                      const std::vector<ShapeResult>& kept, const Counters& counters,
                                      std::vector<Scored>& candidates, SearchResult& result) {
  std::optional<Scored> chosen;
  ConstraintFailure f;
  f.any_price = std::any_of(candidates.begin(), candidates.end(), [](auto& x) { return x.cost.has_value(); });
  if (counters.configurations == 0) {
    f.kind = FailureKind::no_layout;
  } else if (candidates.empty()) {
    f.kind = FailureKind::memory;
    closest_in_memory(shapes, req, kept, f);
  } else {
    chosen = closest_to_constraints(shapes, req, candidates, f);
  }
  result.failure = std::move(f);
  return chosen;
}

// Constraints met first, then the objective's order.
bool better(const SearchRequest& req, const Scored& a, const Scored& b) {
  const auto order = req.objective == Objective::fastest ? by_time : by_cost;
  if (a.feasible() != b.feasible()) return a.feasible();
  return order(a, b);
}

// What the chosen plan is compared with: the same shapes, its plan and its shape's place.
struct Comparison {
  const std::vector<Shape>& shapes;
  const SearchRequest& req;
  const std::vector<Scored>& best_per_shape;
  const Scored& chosen;
  const Plan& picked;
  const Shape& shape_of(const Scored& sc) const { return shapes[static_cast<std::size_t>(sc.shape)]; }
  RunnerUp against(const std::string& dimension, const Scored& other) const {
    return runner_up(dimension, picked, make_plan(shapes, req, other));
  }
};

// Other node counts on the same offering (the best plan with more nodes and the best with fewer),
// then the best plan on another offering (by the objective's order, constraints met first).
void add_shape_runner_ups(const Comparison& cmp, SearchResult& result) {
  const int offering = cmp.shape_of(cmp.chosen).offering;
  const int nodes = cmp.shape_of(cmp.chosen).nodes;
  std::optional<Scored> more, fewer;
  for (const Scored& sc : cmp.best_per_shape) {
    const Shape& sh = cmp.shape_of(sc);
    if (sh.offering != offering) continue;
    if (sh.nodes > nodes && (!more || better(cmp.req, sc, *more))) more = sc;
    if (sh.nodes < nodes && (!fewer || better(cmp.req, sc, *fewer))) fewer = sc;
  }
  for (const auto& o : {more, fewer}) {
    if (!o) continue;
    const int n = cmp.shape_of(*o).nodes;
    result.runner_ups.push_back(cmp.against(n > nodes ? "more_nodes" : "fewer_nodes", *o));
  }
  std::optional<Scored> other;
  for (const Scored& sc : cmp.best_per_shape) {
    if (cmp.shape_of(sc).offering == offering) continue;
    if (!other || better(cmp.req, sc, *other)) other = sc;
  }
  if (other) result.runner_ups.push_back(cmp.against("offering", *other));
}

// The next layout on the same shape that is not just as fast (layouts that tie add nothing), then
// the extremes, when they are not the chosen plan.
void add_layout_and_extreme_runner_ups(const Comparison& cmp, const std::vector<ShapeResult>& kept,
                                       SearchResult& result) {
  const Scored& chosen = cmp.chosen;
  const auto& same = kept[static_cast<std::size_t>(chosen.shape)].best;
  for (const Timed& t : same) {
    if (t.p == chosen.timed.p || t.step_s == chosen.timed.step_s) continue;
    result.runner_ups.push_back(cmp.against("layout", score(cmp.shapes, chosen.shape, t, cmp.req)));
    break;
  }
  const std::vector<Scored>& best_per_shape = cmp.best_per_shape;
  if (!best_per_shape.empty()) {
    const Scored fastest = *std::min_element(best_per_shape.begin(), best_per_shape.end(), by_time);
    if (fastest.shape != chosen.shape) result.runner_ups.push_back(cmp.against("fastest", fastest));
    const Scored cheapest = *std::min_element(best_per_shape.begin(), best_per_shape.end(), by_cost);
    if (cheapest.cost && cheapest.shape != chosen.shape) {
      result.runner_ups.push_back(cmp.against("cheapest", cheapest));
    }
  }
}

// A chosen plan where the model is known to be optimistic is said so, with how much longer it
// likely takes, and the best plan of a category where it is not (the category follows the
// GPU count, so that is another shape). Ranking stays on the model's own figures.
void add_regime_note(const Comparison& cmp, SearchResult& result) {
  auto optimistic = [&](const Scored& sc) { return optimistic_regime(cmp.req.error_band, cmp.shape_of(sc).scenario); };
  const ResidualQuantiles* q = optimistic(cmp.chosen);
  if (!q) return;
  std::optional<Scored> fair;
  for (const Scored& sc : cmp.best_per_shape) {
    if (!optimistic(sc) && (!fair || better(cmp.req, sc, *fair))) fair = sc;
  }
  const double days = units::to_days(plan_time(cmp.picked.estimate));
  const double middle = std::exp(0.5 * (q->log_ratio_p10 + q->log_ratio_p90));  // measured / predicted
  Finding f = finding(FindingCode::plan_regime_optimistic, "",
                      {{"ratio_p10", std::exp(q->log_ratio_p10)},
                       {"ratio_p90", std::exp(q->log_ratio_p90)},
                       {"runs", static_cast<double>(q->n)},
                       {"time_days", days},
                       {"likely_days", days / middle},
                       {"has_alternative", fair ? 1.0 : 0.0}});
  with_text(f, "category", q->category);
  result.notes.push_back(std::move(f));
  if (fair) result.runner_ups.push_back(cmp.against("regime", *fair));
}

// The chosen plan's batch, first among the notes: how a batch asked in tokens became its shape's
// sequences (other shapes may use other counts), or that it forces dp = 1.
void note_chosen_batch(const Plan& picked, SearchResult& result) {
  std::vector<Finding> batch_notes;
  for (const Finding& f : picked.estimate.findings) {
    if (f.code == FindingCode::batch_rounded_to_layout || f.code == FindingCode::batch_chosen_for_dp ||
        f.code == FindingCode::batch_forces_one_replica) {
      batch_notes.push_back(f);
    }
  }
  result.notes.insert(result.notes.begin(), batch_notes.begin(), batch_notes.end());
}

}  // namespace

void rank_plans(const std::vector<Shape>& shapes, const SearchRequest& req, const std::vector<ShapeResult>& kept,
                const Counters& counters, SearchResult& result) {
  Candidates candidates = score_candidates(shapes, req, kept);
  const std::vector<Scored> ranked = rank(shapes, req, candidates.all, result);

  // Nothing meets the constraints: say which, and keep the closest plan.
  std::optional<Scored> chosen;
  if (!ranked.empty()) chosen = ranked.front();
  if (ranked.empty()) chosen = explain_failure(shapes, req, kept, counters, candidates.all, result);

  // The chosen plan (or the closest) and its runner-ups along each dimension.
  if (!chosen) return;
  const Plan picked = make_plan(shapes, req, *chosen);
  note_chosen_batch(picked, result);
  const Comparison cmp{shapes, req, candidates.best_per_shape, *chosen, picked};
  add_shape_runner_ups(cmp, result);
  add_layout_and_extreme_runner_ups(cmp, kept, result);
  add_regime_note(cmp, result);
}

}  // namespace capplan::sim::planner
