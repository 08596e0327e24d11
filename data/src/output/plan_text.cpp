// SPDX-License-Identifier: Apache-2.0
#include "capplan/data/plan_text.hpp"

#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "capplan/data/findings.hpp"
#include "capplan/data/currency.hpp"
#include "capplan/data/format.hpp"

namespace capplan::data {
namespace {

using sim::Parallelism;
using sim::Plan;

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
  if (const auto c = sim::plan_cost(e)) {
    // In the plan's own currency (a CNY-priced offering reads in CNY); ranking stays in US dollars.
    sim::Finding cost = sim::finding(C::why_cost, "", {{"amount", from_usd(c->base(), plan.currency)}});
    sim::with_text(cost, "unit", money_prefix(plan.currency));
    out.push_back(std::move(cost));
  }
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
  return s;
}

sim::Finding with_texts(sim::Finding f, std::initializer_list<std::pair<std::string_view, std::string>> texts) {
  for (const auto& [name, text] : texts) sim::with_text(f, name, text);
  return f;
}

// What the runner-up changes, by its dimension.
sim::Finding change_of(const sim::RunnerUp& u, const Plan& chosen) {
  using C = sim::FindingCode;
  if (u.dimension == "more_nodes" || u.dimension == "fewer_nodes") {
    const int from = chosen.nodes, to = u.plan.nodes;
    if (to % from == 0) return sim::finding(C::runner_up_more_nodes, "", {{"times", to / from}, {"from", from}, {"to", to}});
    if (from % to == 0) return sim::finding(C::runner_up_fewer_nodes, "", {{"times", from / to}, {"from", from}, {"to", to}});
    return sim::finding(C::runner_up_other_nodes, "", {{"from", from}, {"to", to}});
  }
  if (u.dimension == "offering") {
    return with_texts(sim::finding(C::runner_up_offering), {{"shape", shape_text(u.plan)}, {"chosen_shape", shape_text(chosen)}});
  }
  if (u.dimension == "layout") {
    std::string diff = layout_diff(chosen.estimate.layout.strategy, u.plan.estimate.layout.strategy);
    if (diff.empty()) return sim::finding(C::runner_up_same_layout);
    return sim::text_finding(C::runner_up_layout, "diff", std::move(diff));
  }
  if (u.dimension == "fastest") return sim::text_finding(C::runner_up_fastest, "shape", shape_text(u.plan));
  if (u.dimension == "cheapest") return sim::text_finding(C::runner_up_cheapest, "shape", shape_text(u.plan));
  if (u.dimension == "regime") return sim::text_finding(C::runner_up_regime, "shape", shape_text(u.plan));
  return sim::text_finding(C::runner_up_dimension, "dimension", u.dimension);
}

std::string words(const std::vector<sim::Finding>& parts) {
  std::string s;
  for (const auto& part : parts) s += render(part);
  return s;
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

std::vector<sim::Finding> failure_parts(const sim::ConstraintFailure& f, const sim::SearchRequest& request) {
  using K = sim::FailureKind;
  using C = sim::FindingCode;
  std::vector<sim::Finding> out;
  if (f.kind == K::no_layout) {
    out.push_back(sim::finding(C::unmet_no_layout));
    return out;
  }
  if (f.kind == K::memory) {
    out.push_back(sim::finding(C::unmet_memory));
    if (const auto& c = f.closest) {
      out.push_back(with_texts(sim::finding(C::unmet_memory_closest, "",
                                            {{"need_gib", units::to_gib(c->estimate.memory.total())},
                                             {"have_gib", units::to_gib(c->estimate.memory.capacity)}}),
                               {{"shape", shape_text(*c)}, {"layout", layout_text(c->estimate.layout.strategy)}}));
    }
    if (f.remedy) out.push_back(sim::text_finding(C::unmet_memory_remedy, "remedy", render(*f.remedy)));
    return out;
  }
  // The failure kinds below come only with the constraints they name (sim/search.cpp).
  const double deadline = request.deadline ? request.deadline->base() / 86400.0 : 0;
  const double budget = request.budget ? request.budget->base() : 0;
  const double took = f.closest_time.base() / 86400.0;
  switch (f.kind) {
    case K::deadline:
      out.push_back(sim::finding(C::unmet_deadline, "", {{"deadline_days", deadline}, {"took_days", took}}));
      break;
    case K::deadline_nor_budget:
      out.push_back(sim::finding(C::unmet_deadline_nor_budget, "",
                                 {{"deadline_days", deadline}, {"budget_usd", budget}, {"took_days", took}}));
      break;
    case K::budget:
      out.push_back(sim::finding(C::unmet_budget, "", {{"budget_usd", budget}}));
      out.push_back(f.any_price && f.closest_cost
                        ? sim::finding(C::unmet_budget_cheapest, "", {{"cost_usd", f.closest_cost->base()}})
                        : sim::finding(C::unmet_budget_no_price));
      break;
    default:
      out.push_back(sim::finding(C::unmet_both, "", {{"deadline_days", deadline}, {"budget_usd", budget}, {"took_days", took}}));
      out.push_back(f.closest_cost ? sim::finding(C::unmet_both_cost, "", {{"cost_usd", f.closest_cost->base()}})
                                   : sim::finding(C::unmet_both_unknown_price));
      break;
  }
  if (f.closest) {
    out.push_back(with_texts(sim::finding(C::unmet_closest_plan),
                             {{"shape", shape_text(*f.closest)}, {"layout", layout_text(f.closest->estimate.layout.strategy)}}));
  }
  return out;
}

std::string failure_message(const sim::ConstraintFailure& f, const sim::SearchRequest& request) {
  return words(failure_parts(f, request));
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

std::string explanation(const sim::SearchResult& r, const sim::SearchRequest& req) { return words(explanation_parts(r, req)); }

std::vector<sim::Finding> runner_up_parts(const sim::RunnerUp& u, const Plan& chosen) {
  using C = sim::FindingCode;
  std::vector<sim::Finding> out = {change_of(u, chosen)};
  // Time: the fraction of the chosen time saved or added; cost likewise.
  const double t = u.time_ratio;
  out.push_back(t <= 1 ? sim::finding(C::runner_up_faster, "", {{"share", 1 - t}})
                       : sim::finding(C::runner_up_slower, "", {{"share", t - 1}}));
  if (const auto c = u.cost_ratio) {
    out.push_back(*c <= 1 ? sim::finding(C::runner_up_cheaper, "", {{"share", 1 - *c}})
                          : sim::finding(C::runner_up_dearer, "", {{"share", *c - 1}}));
  } else {
    out.push_back(sim::finding(C::runner_up_cost_unknown));
  }
  if (!u.plan.meets_deadline) out.push_back(sim::finding(C::runner_up_misses_deadline));
  if (!u.plan.meets_budget) {
    out.push_back(sim::finding(u.plan.price_known ? C::runner_up_over_budget : C::runner_up_price_unknown));
  }
  return out;
}

std::string runner_up_text(const sim::RunnerUp& u, const Plan& chosen) { return words(runner_up_parts(u, chosen)); }

}  // namespace capplan::data
