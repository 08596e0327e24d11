// SPDX-License-Identifier: Apache-2.0
// The planner: layouts x cluster shapes x offerings, pruned by memory bounds, timed with cached
// per-micro-batch op costs, ranked by the objective under deadline and budget (docs/planner.md).
#include "capplan/sim/search/search.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>

#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/estimate/global_batch.hpp"
#include "capplan/sim/folds/memory.hpp"
#include "capplan/sim/lowering/step_model.hpp"
#include "estimate/layout_space.hpp"
#include "schedule/step_timing.hpp"
#include "search/plan_ranking.hpp"
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

units::Seconds plan_time(const Estimate& e) { return e.goodput.modelled ? e.goodput.wall : e.totals.time_to_train; }
std::optional<units::Usd> plan_cost(const Estimate& e) { return e.goodput.modelled ? e.goodput.cost.total : e.totals.cost; }

namespace {

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

using namespace planner;  // shapes, kept results and the worker (planner_worker.hpp)

// The cluster shapes searched (offerings x node counts) and the cost models their layouts are
// priced with (a shape points at its offering's).
struct ShapeSet {
  std::vector<std::shared_ptr<const OpCostModel>> costs;
  std::vector<Shape> shapes;
};

// Offerings: the request's, or the base cluster when none are given.
std::vector<Offering> offerings_of(const SearchRequest& req) {
  std::vector<Offering> offerings = req.offerings;
  if (offerings.empty()) {
    Offering o;
    o.instance_id = req.base.cluster.instance_id;
    o.node = req.base.cluster;
    offerings.push_back(o);
  }
  return offerings;
}

// Node counts asked for (the base cluster's when none are), ascending, once each.
std::vector<int> node_counts_of(const SearchRequest& req) {
  std::vector<int> node_counts = req.node_counts;
  if (node_counts.empty()) node_counts.push_back(std::max(1, req.base.cluster.nodes()));
  std::sort(node_counts.begin(), node_counts.end());
  node_counts.erase(std::unique(node_counts.begin(), node_counts.end()), node_counts.end());
  return node_counts;
}

// Every offering, with its cost model, at every node count within max_gpus; an offering skipped
// for its network or without a price is noted.
void enumerate_shapes(const SearchRequest& req, ShapeSet& set, std::vector<Finding>& notes) {
  const std::vector<Offering> offerings = offerings_of(req);
  for (const Offering& o : offerings) {
    Cluster c = o.node;
    c.gpus = c.gpus_per_node;
    set.costs.push_back(req.cost_model ? req.cost_model(c) : std::make_shared<DatasheetCost>(c));
  }
  const std::vector<int> node_counts = node_counts_of(req);
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
      sh.cost = set.costs[i].get();
      set.shapes.push_back(std::move(sh));
    }
    if (skipped_network) notes.push_back(text_finding(FindingCode::offering_network_unknown, "offering", name));
    if (!o.node.price_per_gpu) notes.push_back(text_finding(FindingCode::offering_price_unknown, "offering", name));
  }
}

// The workers' kept layouts merged per shape, and their counters summed.
struct Merged {
  Counters counters;
  std::vector<ShapeResult> per_shape;
};

Merged merge(const std::vector<Worker>& workers, std::size_t shapes, std::size_t keep) {
  Merged out;
  out.per_shape.resize(shapes);
  for (const Worker& w : workers) {
    out.counters.add(w.counters());
    for (std::size_t i = 0; i < shapes; ++i) {
      for (const Timed& t : w.results()[i].best) keep_best(out.per_shape[i].best, t, keep);
      if (w.results()[i].least_memory) keep_least(out.per_shape[i].least_memory, *w.results()[i].least_memory);
    }
  }
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Result<SearchResult> search(const SearchRequest& req, const ProgressCallback& progress) {
  const auto start = std::chrono::steady_clock::now();
  if (Diagnostics d = validate(req); has_errors(d)) return std::unexpected(std::move(d));

  SearchResult result;
  ShapeSet set;
  enumerate_shapes(req, set, result.notes);
  const std::vector<Shape>& shapes = set.shapes;
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
    result.elapsed_s = seconds_since(start);
    return result;
  }

  const Merged merged = merge(workers, shapes.size(), keep);
  result.stats.configurations = merged.counters.configurations;
  result.stats.timed = merged.counters.timed;
  result.stats.memory_rejected = merged.counters.memory_rejected;
  result.stats.pruned_by_bound = merged.counters.pruned;
  result.configurations_evaluated = merged.counters.configurations;

  // Scored, ranked, the constraint failure and the runner-ups (plan_ranking.cpp).
  rank_plans(shapes, req, merged.per_shape, merged.counters, result);

  // Each plan's estimate reports the search it came from (as estimate() does for "auto").
  auto stamp = [&](Plan& p) { p.estimate.layout.configurations_evaluated = result.configurations_evaluated; };
  for (Plan& p : result.plans) stamp(p);
  for (Plan& p : result.pareto) stamp(p);
  for (RunnerUp& u : result.runner_ups) stamp(u.plan);
  if (result.failure && result.failure->closest) stamp(*result.failure->closest);
  result.elapsed_s = seconds_since(start);
  return result;
}

}  // namespace capplan::sim
