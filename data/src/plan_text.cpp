// SPDX-License-Identifier: Apache-2.0
#include "capplan/data/plan_text.hpp"

#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "capplan/data/findings.hpp"
#include "capplan/data/format.hpp"

namespace capplan::data {
namespace {

using sim::Parallelism;
using sim::Plan;

// format::fixed, with "?" for a number that is not finite.
std::string fixed(double v, int digits) { return std::isfinite(v) ? format::fixed(v, digits) : "?"; }

// The shared formats (findings.hpp spec_number): $3.34M, 142 days, 41%.
std::string usd_text(double v) { return spec_number(v, "usd"); }
std::string days_text(double seconds) { return spec_number(seconds / 86400.0, "s3") + " days"; }
std::string percent(double fraction) { return spec_number(fraction, "pct"); }

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

// Shape, layout, time, cost and where a step's time goes, as pieces of the explanation.
void explain(const Plan& plan, std::vector<sim::Finding>& out) {
  using C = sim::FindingCode;
  const sim::Estimate& e = plan.estimate;
  const sim::StepBreakdown& b = e.step.breakdown;
  const double total = e.step.time.base();
  sim::Finding head = sim::finding(C::why_plan, "", {{"days", sim::plan_time(e).base() / 86400.0}});
  sim::with_text(head, "shape", shape_text(plan));
  sim::with_text(head, "layout", layout_text(e.layout.strategy));
  out.push_back(std::move(head));
  if (e.goodput.modelled && e.goodput.wall.base() > e.totals.time_to_train.base()) {
    out.push_back(sim::finding(C::why_with_failures, "", {{"steady_days", e.totals.time_to_train.base() / 86400.0}}));
  }
  if (const auto c = sim::plan_cost(e)) out.push_back(sim::finding(C::why_cost, "", {{"usd", c->base()}}));
  out.push_back(sim::finding(C::why_step, "", {{"step_s", total}, {"compute", b.compute.base() / total}}));
  if (b.recompute.base() > 0) out.push_back(sim::finding(C::why_recompute, "", {{"share", b.recompute.base() / total}}));
  const std::pair<C, double> parts[] = {{C::why_bubble, b.bubble.base()}, {C::why_tp_comm, b.tp_comm.base()},
                                        {C::why_pp_comm, b.pp_comm.base()}, {C::why_dp_comm, b.dp_comm.base()},
                                        {C::why_ep_comm, b.ep_comm.base()}, {C::why_cp_comm, b.cp_comm.base()},
                                        {C::why_optimizer, b.optimizer.base()}};
  for (const auto& [code, v] : parts) {
    if (v / total >= 0.005) out.push_back(sim::finding(code, "", {{"share", v / total}}));
  }
  out.push_back(sim::finding(C::why_mfu_and_memory, "",
                             {{"mfu", e.step.mfu},
                              {"memory_gib", units::to_gib(e.memory.total())},
                              {"capacity_gib", units::to_gib(e.memory.capacity)}}));
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

std::vector<sim::Finding> explanation_parts(const sim::SearchResult& r, const sim::SearchRequest& req) {
  using C = sim::FindingCode;
  std::vector<sim::Finding> out;
  const Plan* plan = sim::chosen_plan(r);
  if (plan == nullptr) return out;
  if (r.failure) {
    out.push_back(sim::finding(C::why_closest));
  } else {
    // Pareto without a priced plan ranks by time alone (sim::FindingCode::pareto_without_prices).
    const bool no_front = sim::has(r.notes, C::pareto_without_prices);
    out.push_back(sim::finding(req.objective == sim::Objective::cheapest                 ? C::why_cheapest
                               : req.objective == sim::Objective::fastest || no_front ? C::why_fastest
                                                                                         : C::why_fastest_on_front));
    if (req.deadline) out.push_back(sim::finding(C::why_meets_deadline, "", {{"days", req.deadline->base() / 86400.0}}));
    if (req.budget) {
      out.push_back(sim::finding(req.deadline ? C::why_and_within_budget : C::why_within_budget, "",
                                 {{"usd", req.budget->base()}}));
    }
  }
  explain(*plan, out);
  return out;
}

std::string explanation(const sim::SearchResult& r, const sim::SearchRequest& req) {
  std::string s;
  for (const auto& part : explanation_parts(r, req)) s += render(part);
  return s;
}

std::string runner_up_text(const sim::RunnerUp& u, const Plan& chosen) {
  std::string s = change_of(u, chosen) + ": " + change_text(u.time_ratio, u.cost_ratio);
  if (!u.plan.meets_deadline) s += " (misses the deadline)";
  if (!u.plan.meets_budget) s += u.plan.price_known ? " (over the budget)" : " (price unknown)";
  return s;
}

}  // namespace capplan::data
