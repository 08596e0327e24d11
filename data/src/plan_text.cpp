// SPDX-License-Identifier: Apache-2.0
#include "capplan/data/plan_text.hpp"

#include <cmath>
#include <optional>
#include <utility>

#include "capplan/data/currency.hpp"
#include "capplan/data/format.hpp"

namespace capplan::data {
namespace {

using sim::Parallelism;
using sim::Plan;

// format::fixed, with "?" for a number that is not finite.
std::string fixed(double v, int digits) { return std::isfinite(v) ? format::fixed(v, digits) : "?"; }

// Three significant figures for ordinary magnitudes.
std::string sig3(double v) {
  const double a = std::fabs(v);
  return fixed(v, a >= 100 ? 0 : a >= 10 ? 1 : 2);
}

// $3.34M, or CNY 23.9M in a plan's currency (appended piecewise: g++ 12 warns falsely on
// "$" + std::string&&). Budgets are US dollars, as the planner ranks.
std::string usd_text(double usd, const sim::Currency& c = {}) {
  const double v = from_usd(usd, c);
  const double a = std::fabs(v);
  std::string s = money_prefix(c);
  if (a >= 1e9) return s.append(sig3(v / 1e9)).append("B");
  if (a >= 1e6) return s.append(sig3(v / 1e6)).append("M");
  if (a >= 1e3) return s.append(sig3(v / 1e3)).append("k");
  return s.append(fixed(v, 2));
}

std::string days_text(double seconds) { return sig3(seconds / 86400.0) + " days"; }

// Whole percent, or one decimal below 10% (so a 0.4% change does not read as 0%).
std::string percent(double fraction) {
  const double p = fraction * 100.0;
  return fixed(p, std::fabs(p) < 9.95 ? 1 : 0) + "%";
}

std::string layout_text(const Parallelism& p) {
  std::string s = "tp " + std::to_string(p.tp) + " pp " + std::to_string(p.pp) + " dp " + std::to_string(p.dp);
  if (p.cp > 1) s += " cp " + std::to_string(p.cp);
  if (p.ep > 1) s += " ep " + std::to_string(p.ep);
  if (p.etp > 1) s += " etp " + std::to_string(p.etp);
  s += ", micro-batch " + std::to_string(p.micro_batch);
  if (p.virtual_stages > 1) s += ", " + std::to_string(p.virtual_stages) + " virtual stages";
  s += ", ZeRO " + std::to_string(p.zero) + ", " +
       (p.recompute == sim::Recompute::none ? std::string("no") : std::string(sim::to_string(p.recompute))) +
       " recompute";
  if (p.sequence_parallel) s += ", sequence parallel";
  return s;
}

std::string shape_text(const Plan& p) {
  const std::string what = p.instance_id.empty() ? p.gpu_id : p.instance_id;
  return what + " x " + std::to_string(p.nodes) + (p.nodes == 1 ? " node" : " nodes") + " (" +
         std::to_string(p.gpus) + " GPUs)";
}

// Shape, layout, time, cost and where a step's time goes.
std::string explain(const Plan& plan) {
  const sim::Estimate& e = plan.estimate;
  const sim::StepBreakdown& b = e.step.breakdown;
  const double total = e.step.time.base();
  std::string s = shape_text(plan) + ", " + layout_text(e.layout.strategy) + ": " + days_text(sim::plan_time(e).base());
  if (e.goodput.modelled && e.goodput.wall.base() > e.totals.time_to_train.base()) {
    s += " with failures and checkpoints (" + days_text(e.totals.time_to_train.base()) + " steady)";
  }
  if (const auto c = sim::plan_cost(e)) s += ", " + usd_text(c->base(), plan.currency);
  s += ". Step " + sig3(total) + " s: compute " + percent(b.compute.base() / total);
  if (b.recompute.base() > 0) s += " (recompute " + percent(b.recompute.base() / total) + ")";
  const std::pair<const char*, double> parts[] = {
      {"pipeline bubble", b.bubble.base()}, {"tp comm", b.tp_comm.base()}, {"pp comm", b.pp_comm.base()},
      {"dp comm", b.dp_comm.base()},        {"ep comm", b.ep_comm.base()}, {"cp comm", b.cp_comm.base()},
      {"optimizer", b.optimizer.base()}};
  for (const auto& [name, v] : parts) {
    if (v / total >= 0.005) s += ", " + std::string(name) + " " + percent(v / total);
  }
  s += "; MFU " + percent(e.step.mfu) + "; memory " + fixed(units::to_gib(e.memory.total()), 1) + " of " +
       fixed(units::to_gib(e.memory.capacity), 0) + " GiB per GPU.";
  return s;
}

// "41% faster, 12% dearer" (time: fraction of the chosen time saved or added; cost likewise).
std::string change_text(double time_ratio, std::optional<double> cost_ratio) {
  std::string s = time_ratio <= 1 ? percent(1 - time_ratio) + " faster" : percent(time_ratio - 1) + " slower";
  if (cost_ratio) {
    s += ", " + (*cost_ratio <= 1 ? percent(1 - *cost_ratio) + " cheaper" : percent(*cost_ratio - 1) + " dearer");
  } else {
    s += ", cost not comparable (price unknown)";
  }
  return s;
}

std::string nodes_text(int from, int to) {
  if (to % from == 0) return std::to_string(to / from) + "x the nodes (" + std::to_string(from) + " -> " +
                             std::to_string(to) + ")";
  if (from % to == 0) return "1/" + std::to_string(from / to) + " the nodes (" + std::to_string(from) + " -> " +
                             std::to_string(to) + ")";
  return std::to_string(to) + " nodes instead of " + std::to_string(from);
}

std::string layout_diff(const Parallelism& a, const Parallelism& b) {
  std::string s;
  auto field = [&](const char* name, int x, int y) {
    if (x != y) s += (s.empty() ? "" : ", ") + std::string(name) + " " + std::to_string(y) + " instead of " +
                     std::to_string(x);
  };
  field("tp", a.tp, b.tp);
  field("pp", a.pp, b.pp);
  field("dp", a.dp, b.dp);
  field("cp", a.cp, b.cp);
  field("ep", a.ep, b.ep);
  field("micro-batch", a.micro_batch, b.micro_batch);
  field("virtual stages", a.virtual_stages, b.virtual_stages);
  field("ZeRO", a.zero, b.zero);
  if (a.recompute != b.recompute) {
    s += (s.empty() ? "" : ", ") + std::string(sim::to_string(b.recompute)) + " recompute instead of " +
         sim::to_string(a.recompute);
  }
  if (a.sequence_parallel != b.sequence_parallel) {
    s += (s.empty() ? "" : ", ") + std::string(b.sequence_parallel ? "with" : "without") + " sequence parallelism";
  }
  return s.empty() ? "another layout" : s;
}

// What the runner-up changes, by its dimension.
std::string change_of(const sim::RunnerUp& u, const Plan& chosen) {
  if (u.dimension == "more_nodes" || u.dimension == "fewer_nodes") return nodes_text(chosen.nodes, u.plan.nodes);
  if (u.dimension == "offering") return shape_text(u.plan) + " instead of " + shape_text(chosen);
  if (u.dimension == "layout") return layout_diff(chosen.estimate.layout.strategy, u.plan.estimate.layout.strategy);
  if (u.dimension == "fastest") return "the fastest plan, " + shape_text(u.plan);
  if (u.dimension == "cheapest") return "the cheapest plan, " + shape_text(u.plan);
  return u.dimension;
}

}  // namespace

std::string constraint_name(sim::FailureKind kind) {
  switch (kind) {
    case sim::FailureKind::no_layout: return "layout";
    case sim::FailureKind::memory: return "memory";
    case sim::FailureKind::deadline: return "deadline";
    case sim::FailureKind::budget: return "budget";
    case sim::FailureKind::deadline_nor_budget:
    case sim::FailureKind::deadline_and_budget: return "deadline and budget";
  }
  return "layout";
}

std::string failure_message(const sim::ConstraintFailure& f, const sim::SearchRequest& request) {
  using K = sim::FailureKind;
  if (f.kind == K::no_layout) {
    return "no valid parallel layout exists for any cluster shape searched with this model, batch and the fixed "
           "strategy fields";
  }
  if (f.kind == K::memory) {
    std::string s = "no layout fits in GPU memory on any cluster shape searched";
    if (const auto& c = f.closest) {
      s += "; the closest, " + shape_text(*c) + " with " + layout_text(c->estimate.layout.strategy) + ", needs " +
           fixed(units::to_gib(c->estimate.memory.total()), 1) + " GiB per GPU of " +
           fixed(units::to_gib(c->estimate.memory.capacity), 0);
    }
    return s;
  }
  const std::string deadline = request.deadline ? days_text(request.deadline->base()) : "";
  const std::string budget = request.budget ? usd_text(request.budget->base()) : "";
  const std::string took = days_text(f.closest_time.base());
  std::string s;
  switch (f.kind) {
    case K::deadline: s = "no plan meets the deadline of " + deadline + ": the fastest takes " + took; break;
    case K::deadline_nor_budget:
      s = "no plan meets the deadline of " + deadline + " (nor the budget of " + budget + "): the fastest takes " + took;
      break;
    case K::budget:
      s = "no plan meets the budget of " + budget;
      s += f.any_price && f.closest_cost ? ": the cheapest costs " + usd_text(f.closest_cost->base())
                                         : ": no offering searched has a known price (give one)";
      break;
    default:
      s = "no plan meets both the deadline of " + deadline + " and the budget of " + budget + ": the closest takes " +
          took + (f.closest_cost ? " and costs " + usd_text(f.closest_cost->base()) : std::string(" at an unknown price"));
      break;
  }
  if (f.closest) s += " (" + shape_text(*f.closest) + ", " + layout_text(f.closest->estimate.layout.strategy) + ")";
  return s;
}

std::string explanation(const sim::SearchResult& r, const sim::SearchRequest& req) {
  const Plan* plan = sim::chosen_plan(r);
  if (plan == nullptr) return "";
  std::string lead;
  if (r.failure) {
    lead = "Closest plan";
  } else {
    // Pareto without a priced plan ranks by time alone (sim::FindingCode::pareto_without_prices).
    const bool no_front = sim::has(r.notes, sim::FindingCode::pareto_without_prices);
    lead = req.objective == sim::Objective::cheapest                 ? "Cheapest plan"
           : req.objective == sim::Objective::fastest || no_front ? "Fastest plan"
                                                                     : "Fastest plan on the Pareto front";
    if (req.deadline) lead += " that meets the deadline of " + days_text(req.deadline->base());
    if (req.budget) lead += std::string(req.deadline ? " and" : "") + " within the budget of " + usd_text(req.budget->base());
  }
  return lead + ": " + explain(*plan);
}

std::string runner_up_text(const sim::RunnerUp& u, const Plan& chosen) {
  std::string s = change_of(u, chosen) + ": " + change_text(u.time_ratio, u.cost_ratio);
  if (!u.plan.meets_deadline) s += " (misses the deadline)";
  if (!u.plan.meets_budget) s += u.plan.price_known ? " (over the budget)" : " (price unknown)";
  return s;
}

}  // namespace capplan::data
