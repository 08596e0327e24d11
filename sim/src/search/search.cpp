// SPDX-License-Identifier: Apache-2.0
// The planner: layouts x cluster shapes x offerings, pruned by memory bounds, timed with cached
// per-micro-batch op costs, ranked by the objective under deadline and budget (docs/planner.md).
#include "capplan/sim/search.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <thread>
#include <unordered_map>
#include <utility>

#include "capplan/sim/datasheet_cost.hpp"
#include "capplan/sim/global_batch.hpp"
#include "capplan/sim/memory.hpp"
#include "capplan/sim/step_model.hpp"
#include "search/layout_space.hpp"
#include "schedule/step_timing.hpp"
#include "search/planner_worker.hpp"

namespace capplan::sim {

const char* to_string(Objective o) {
  switch (o) {
    case Objective::cheapest: return "cheapest";
    case Objective::fastest: return "fastest";
    case Objective::pareto: return "pareto";
  }
  return "cheapest";
}

std::optional<Objective> objective_from_string(const std::string& s) {
  if (s == "cheapest") return Objective::cheapest;
  if (s == "fastest") return Objective::fastest;
  if (s == "pareto") return Objective::pareto;
  return std::nullopt;
}

const char* to_string(LayoutSpace s) { return s == LayoutSpace::exhaustive ? "exhaustive" : "standard"; }

std::optional<LayoutSpace> layout_space_from_string(const std::string& s) {
  if (s == "standard") return LayoutSpace::standard;
  if (s == "exhaustive") return LayoutSpace::exhaustive;
  return std::nullopt;
}

namespace {
constexpr std::pair<DeadlineQuantile, const char*> kQuantileNames[] = {
    {DeadlineQuantile::point, "point"}, {DeadlineQuantile::p50, "p50"}, {DeadlineQuantile::p90, "p90"}};
}  // namespace

const char* to_string(DeadlineQuantile q) {
  for (const auto& [value, name] : kQuantileNames) {
    if (value == q) return name;
  }
  return "point";
}

std::optional<DeadlineQuantile> deadline_quantile_from_string(const std::string& s) {
  for (const auto& [value, name] : kQuantileNames) {
    if (s == name) return value;
  }
  return std::nullopt;
}

namespace {
LayoutSpaceKind kind_of(LayoutSpace s) {
  return s == LayoutSpace::exhaustive ? LayoutSpaceKind::exhaustive : LayoutSpaceKind::standard;
}
}  // namespace

std::vector<Parallelism> candidate_layouts(const Scenario& s, LayoutSpace space, bool even_stages) {
  std::vector<Parallelism> out;
  ShapeLayoutSpace(s.model, s.training, s.strategy, s.cluster.gpus, s.cluster.gpus_per_node, kind_of(space),
                   even_stages)
      .for_each([&](const Parallelism& p, long long) {
        if (precheck_layout(s, p).ok()) out.push_back(p);
      });
  return out;
}

const Plan* chosen_plan(const SearchResult& r) {
  if (!r.plans.empty()) return &r.plans.front();
  if (!r.failure || !r.failure->closest) return nullptr;
  return r.failure->kind == FailureKind::no_layout || r.failure->kind == FailureKind::memory ? nullptr
                                                                                             : &*r.failure->closest;
}

Scenario plan_scenario(const SearchRequest& request, const Plan& plan) {
  Scenario s = request.base;
  if (!request.offerings.empty() && plan.offering >= 0 &&
      static_cast<std::size_t>(plan.offering) < request.offerings.size()) {
    const Offering& o = request.offerings[static_cast<std::size_t>(plan.offering)];
    s.cluster = o.node;
    if (o.pricing) s.pricing = *o.pricing;
  }
  s.cluster.gpus = plan.gpus;
  resolve_global_batch(s);  // a batch asked in tokens, for this cluster as the search resolved it
  return s;
}

namespace {

// ---------------------------------------------------------------------------------------------
// The search proper.

using namespace planner;  // shapes, kept results and the worker (planner_worker.hpp)

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

}  // namespace

units::Seconds plan_time(const Estimate& e) { return e.goodput.modelled ? e.goodput.wall : e.totals.time_to_train; }
std::optional<units::Usd> plan_cost(const Estimate& e) { return e.goodput.modelled ? e.goodput.cost.total : e.totals.cost; }

namespace {

bool checks_p90(const SearchRequest& req) { return req.deadline && req.deadline_quantile == DeadlineQuantile::p90; }

// The p90 of a plan's time to train, exactly as `capplan estimate` bands it: apply_error_band on
// the plan's estimate, the slow end of wall_days (time_to_train_days where goodput is not
// modelled), in seconds. Empty when the table has no band for the plan.
std::optional<double> p90_time(const Shape& sh, const Timed& t, const ResidualTable& table) {
  Estimate e = evaluate(sh.scenario, t.p, *sh.cost);
  apply_error_band(e, sh.scenario, table);
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
  plan.estimate = evaluate(sh.scenario, sc.timed.p, *sh.cost);
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

Diagnostics validate(const SearchRequest& r) {
  Diagnostics d;
  using C = FindingCode;
  // An input error at search#/<where>, coded (data::word gives it its words); field "search.<where>".
  auto err = [&](std::string where, C code, std::initializer_list<std::pair<std::string_view, double>> numbers = {}) {
    Finding f = finding(code, "search." + where, numbers);
    d.push_back({Diagnostic::Severity::error, "search#/" + std::move(where), {}, std::move(f)});
    return &d.back().finding.value();
  };
  if (r.top_k < 1) err("top_k", C::search_below_one, {{"got", r.top_k}});
  if (r.threads < 0) err("threads", C::search_threads_negative, {{"got", r.threads}});
  if (r.max_gpus < 0) err("max_gpus", C::search_max_gpus_negative, {{"got", r.max_gpus}});
  for (std::size_t i = 0; i < r.node_counts.size(); ++i) {
    if (r.node_counts[i] < 1) err("node_counts/" + std::to_string(i), C::search_below_one, {{"got", r.node_counts[i]}});
  }
  if (r.deadline && !(r.deadline->base() > 0 && std::isfinite(r.deadline->base()))) {
    err("deadline", C::search_deadline_not_positive, {{"days", r.deadline->base() / 86400.0}});
  }
  if (r.budget && !(r.budget->base() > 0 && std::isfinite(r.budget->base()))) {
    err("budget", C::search_budget_not_positive, {{"usd", r.budget->base()}});
  }
  for (std::size_t i = 0; i < r.offerings.size(); ++i) {
    const Cluster& c = r.offerings[i].node;
    const std::string where = "offerings/" + std::to_string(i);
    if (c.gpus_per_node < 1) err(where + "/gpus_per_node", C::search_below_one, {{"got", c.gpus_per_node}});
    if (!(c.gpu.hbm_capacity.base() > 0)) with_text(*err(where + "/gpu", C::search_gpu_without_memory), "gpu", c.gpu.id);
    if (c.price_per_gpu && !(c.price_per_gpu->base() >= 0 && std::isfinite(c.price_per_gpu->base()))) {
      err(where + "/price", C::search_price_negative);
    }
    if (const auto& pr = r.offerings[i].pricing;
        pr && !(pr->currency.usd_per_unit > 0 && std::isfinite(pr->currency.usd_per_unit))) {
      err(where + "/pricing/currency", C::search_currency_rate_invalid, {{"got", pr->currency.usd_per_unit}});
    }
  }
  if (r.base.training.global_batch < 1 && !(r.base.training.global_batch_tokens > 0)) {
    err("base/training/global_batch", C::search_batch_empty);  // tokens resolve per shape
  }
  return d;
}

}  // namespace

Result<SearchResult> search(const SearchRequest& req, const ProgressCallback& progress) {
  const auto start = std::chrono::steady_clock::now();
  if (Diagnostics d = validate(req); has_errors(d)) return std::unexpected(std::move(d));

  SearchResult result;
  // Offerings (the base cluster when none are given) and their cost models.
  std::vector<Offering> offerings = req.offerings;
  if (offerings.empty()) {
    Offering o;
    o.instance_id = req.base.cluster.instance_id;
    o.node = req.base.cluster;
    offerings.push_back(o);
  }
  std::vector<std::shared_ptr<const OpCostModel>> costs;
  for (const Offering& o : offerings) {
    Cluster c = o.node;
    c.gpus = c.gpus_per_node;
    costs.push_back(req.cost_model ? req.cost_model(c) : std::make_shared<DatasheetCost>(c));
  }
  std::vector<int> node_counts = req.node_counts;
  if (node_counts.empty()) node_counts.push_back(std::max(1, req.base.cluster.nodes()));
  std::sort(node_counts.begin(), node_counts.end());
  node_counts.erase(std::unique(node_counts.begin(), node_counts.end()), node_counts.end());

  std::vector<Shape> shapes;
  for (std::size_t i = 0; i < offerings.size(); ++i) {
    const Offering& o = offerings[i];
    const std::string name = o.instance_id.empty() ? o.node.gpu.id : o.instance_id;
    bool skipped_network = false;
    for (int n : node_counts) {
      const long long gpus = 1LL * n * o.node.gpus_per_node;
      if (req.max_gpus > 0 && gpus > req.max_gpus) continue;
      if (gpus > std::numeric_limits<int>::max() / 2) continue;
      if (n > 1 && !(o.node.inter_node_bandwidth.base() > 0)) {
        skipped_network = true;
        continue;
      }
      Shape sh;
      sh.offering = static_cast<int>(i);
      sh.nodes = n;
      sh.scenario = req.base;
      sh.scenario.cluster = o.node;
      sh.scenario.cluster.gpus = static_cast<int>(gpus);
      if (o.pricing) sh.scenario.pricing = *o.pricing;
      // A property of the user's fleet, not of the offering: it applies to every shape.
      sh.scenario.cluster.gpu_speed_spread = req.base.cluster.gpu_speed_spread;
      // A batch asked in tokens becomes sequences that this shape's data parallelism can use.
      sh.batch = resolve_global_batch(sh.scenario);
      sh.cost = costs[i].get();
      shapes.push_back(std::move(sh));
    }
    if (skipped_network) {
      result.notes.push_back(text_finding(FindingCode::offering_network_unknown, "offering", name));
    }
    if (!o.node.price_per_gpu) {
      result.notes.push_back(text_finding(FindingCode::offering_price_unknown, "offering", name));
    }
  }
  if (shapes.empty()) {
    return std::unexpected(Diagnostics{{Diagnostic::Severity::error, "search#/max_gpus", {},
                                        finding(FindingCode::search_no_shape_left, "search.max_gpus",
                                                {{"max_gpus", req.max_gpus}})}});
  }

  // The work list: each shape's outer layouts (layout_space.hpp), split over the threads by
  // split_indices; every item is done by exactly one worker and results are merged by total
  // orders, so the answer does not depend on the thread count.
  const std::vector<WorkItem> items = work_items(shapes, kind_of(req.space), req.even_stages);
  // Per shape: its best layout, plus a few more for the "layout" runner-up (ties are common: with
  // fused attention selective recompute costs nothing).
  const std::size_t keep = req.one_plan_per_shape ? 6 : std::max<std::size_t>(6, static_cast<std::size_t>(req.top_k));
  int threads = req.threads > 0 ? req.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = static_cast<int>(std::clamp<std::size_t>(static_cast<std::size_t>(threads), 1, std::max<std::size_t>(1, items.size())));
  std::vector<Worker> workers;
  workers.reserve(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) workers.emplace_back(shapes, keep, req.prune, kind_of(req.space));
  const bool cancel = !run_split(workers, items, progress);
  result.stats.threads = threads;
  result.stats.shapes = static_cast<long>(shapes.size());
  if (cancel) {
    result.cancelled = true;
    result.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
  }

  // Merge.
  Counters counters;
  std::vector<ShapeResult> merged(shapes.size());
  for (const Worker& w : workers) {
    counters.add(w.counters());
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      for (const Timed& t : w.results()[i].best) keep_best(merged[i].best, t, keep);
      if (w.results()[i].least_memory) keep_least(merged[i].least_memory, *w.results()[i].least_memory);
    }
  }
  result.stats.configurations = counters.configurations;
  result.stats.timed = counters.timed;
  result.stats.memory_rejected = counters.memory_rejected;
  result.stats.pruned_by_bound = counters.pruned;
  result.configurations_evaluated = counters.configurations;

  // Score: each shape's best layout (or its top-K when every layout may be listed).
  std::vector<Scored> best_per_shape, candidates;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const auto& best = merged[i].best;
    for (std::size_t k = 0; k < best.size(); ++k) {
      if (k > 0 && req.one_plan_per_shape) break;  // only the best layout of a shape is a candidate
      const Scored sc = score(shapes, static_cast<int>(i), best[k], req);
      if (k == 0) best_per_shape.push_back(sc);
      if (k == 0 || !req.one_plan_per_shape) candidates.push_back(sc);
    }
  }

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

  // Nothing meets the constraints: say which, and keep the closest plan.
  std::optional<Scored> chosen;
  if (!ranked.empty()) chosen = ranked.front();
  if (ranked.empty()) {
    ConstraintFailure f;
    f.any_price = std::any_of(candidates.begin(), candidates.end(), [](auto& x) { return x.cost.has_value(); });
    if (counters.configurations == 0) {
      f.kind = FailureKind::no_layout;
    } else if (candidates.empty()) {
      f.kind = FailureKind::memory;
      std::optional<std::pair<int, Oversized>> least;
      for (std::size_t i = 0; i < shapes.size(); ++i) {
        if (merged[i].least_memory && (!least || smaller(*merged[i].least_memory, least->second))) {
          least = std::pair<int, Oversized>{static_cast<int>(i), *merged[i].least_memory};
        }
      }
      if (least) {
        Scored sc;
        sc.shape = least->first;
        sc.timed.p = least->second.p;
        f.closest = make_plan(shapes, req, sc);
      }
    } else {
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
      chosen = closest;
    }
    result.failure = std::move(f);
  }

  // The chosen plan (or the closest) and its runner-ups along each dimension.
  if (chosen) {
    const Plan picked = make_plan(shapes, req, *chosen);
    // The chosen plan's batch, first among the notes: how a batch asked in tokens became its
    // shape's sequences (other shapes may use other counts), or that it forces dp = 1.
    std::vector<Finding> batch_notes;
    for (const Finding& f : picked.estimate.findings) {
      if (f.code == FindingCode::batch_rounded_to_layout || f.code == FindingCode::batch_chosen_for_dp ||
          f.code == FindingCode::batch_forces_one_replica) {
        batch_notes.push_back(f);
      }
    }
    result.notes.insert(result.notes.begin(), batch_notes.begin(), batch_notes.end());
    const int offering = shapes[static_cast<std::size_t>(chosen->shape)].offering;
    const int nodes = shapes[static_cast<std::size_t>(chosen->shape)].nodes;
    const auto order = req.objective == Objective::fastest ? by_time : by_cost;
    // Constraints met first, then the objective's order.
    auto better = [&](const Scored& a, const Scored& b) {
      if (a.feasible() != b.feasible()) return a.feasible();
      return order(a, b);
    };
    // Other node counts on the same offering: the best plan with more nodes and the best with fewer.
    std::optional<Scored> more, fewer;
    for (const Scored& sc : best_per_shape) {
      const Shape& sh = shapes[static_cast<std::size_t>(sc.shape)];
      if (sh.offering != offering) continue;
      if (sh.nodes > nodes && (!more || better(sc, *more))) more = sc;
      if (sh.nodes < nodes && (!fewer || better(sc, *fewer))) fewer = sc;
    }
    for (const auto& o : {more, fewer}) {
      if (!o) continue;
      const int n = shapes[static_cast<std::size_t>(o->shape)].nodes;
      result.runner_ups.push_back(runner_up(n > nodes ? "more_nodes" : "fewer_nodes", picked, make_plan(shapes, req, *o)));
    }
    // The best plan on another offering (by the objective's order, constraints met first).
    std::optional<Scored> other;
    for (const Scored& sc : best_per_shape) {
      if (shapes[static_cast<std::size_t>(sc.shape)].offering == offering) continue;
      if (!other || better(sc, *other)) other = sc;
    }
    if (other) result.runner_ups.push_back(runner_up("offering", picked, make_plan(shapes, req, *other)));
    // The next layout on the same shape that is not just as fast (layouts that tie add nothing).
    const auto& same = merged[static_cast<std::size_t>(chosen->shape)].best;
    for (const Timed& t : same) {
      if (t.p == chosen->timed.p || t.step_s == chosen->timed.step_s) continue;
      result.runner_ups.push_back(runner_up("layout", picked, make_plan(shapes, req, score(shapes, chosen->shape, t, req))));
      break;
    }
    // The extremes, when they are not the chosen plan.
    if (!best_per_shape.empty()) {
      const Scored fastest = *std::min_element(best_per_shape.begin(), best_per_shape.end(), by_time);
      if (fastest.shape != chosen->shape) {
        result.runner_ups.push_back(runner_up("fastest", picked, make_plan(shapes, req, fastest)));
      }
      const Scored cheapest = *std::min_element(best_per_shape.begin(), best_per_shape.end(), by_cost);
      if (cheapest.cost && cheapest.shape != chosen->shape) {
        result.runner_ups.push_back(runner_up("cheapest", picked, make_plan(shapes, req, cheapest)));
      }
    }
    // A chosen plan where the model is known to be optimistic is said so, with how much longer it
    // likely takes, and the best plan of a category where it is not (the category follows the
    // GPU count, so that is another shape). Ranking stays on the model's own figures.
    auto optimistic = [&](const Scored& sc) {
      return optimistic_regime(req.error_band, shapes[static_cast<std::size_t>(sc.shape)].scenario);
    };
    if (const ResidualQuantiles* q = optimistic(*chosen)) {
      std::optional<Scored> fair;
      for (const Scored& sc : best_per_shape) {
        if (!optimistic(sc) && (!fair || better(sc, *fair))) fair = sc;
      }
      const double days = units::to_days(plan_time(picked.estimate));
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
      if (fair) result.runner_ups.push_back(runner_up("regime", picked, make_plan(shapes, req, *fair)));
    }
  }

  // Each plan's estimate reports the search it came from (as estimate() does for "auto").
  auto stamp = [&](Plan& p) { p.estimate.layout.configurations_evaluated = result.configurations_evaluated; };
  for (Plan& p : result.plans) stamp(p);
  for (Plan& p : result.pareto) stamp(p);
  for (RunnerUp& u : result.runner_ups) stamp(u.plan);
  if (result.failure && result.failure->closest) stamp(*result.failure->closest);
  result.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace capplan::sim
