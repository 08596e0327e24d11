// SPDX-License-Identifier: Apache-2.0
// Renderings of a planner result: JSON, CSV and the terminal table. Each plan's estimate is
// rendered by estimate_to_json (estimate_to_csv), so `capplan search` and `capplan estimate` never
// drift apart.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "capplan/data/currency.hpp"
#include "capplan/data/findings.hpp"
#include "capplan/data/format.hpp"
#include "capplan/data/plan_text.hpp"
#include "capplan/data/search_io.hpp"

namespace capplan::data {
namespace {

using nlohmann::json;

// A US-dollar amount in `c`: "$1.23M", "CNY 45.6k" (README "Currencies").
std::string money(double usd, const sim::Currency& c = {}) {
  if (!std::isfinite(usd)) return "n/a";
  const double v = from_usd(usd, c);
  const std::string prefix = money_prefix(c);
  if (std::fabs(v) >= 1e6) return prefix + format::fixed(v / 1e6, 2) + "M";
  if (std::fabs(v) >= 1e3) return prefix + format::fixed(v / 1e3, 1) + "k";
  return prefix + format::fixed(v, 2);
}

// The plan's scenario as parse_scenario would have produced it (for estimate_to_json).
ParsedScenario parsed_for(const sim::SearchRequest& request, const sim::Plan& plan, const ParsedScenario& base) {
  ParsedScenario out = base;
  out.scenario = sim::plan_scenario(request, plan);
  return out;
}

json plan_to_json(const sim::Plan& plan, const sim::SearchRequest& request, const ParsedScenario& base) {
  json j = estimate_to_json(plan.estimate, parsed_for(request, plan, base));
  j.erase("schema_version");  // the search document carries them once
  j.erase("capplan_version");
  j["instance"] = plan.instance_id.empty() ? json(nullptr) : json(plan.instance_id);
  j["gpu"] = plan.gpu_id;
  j["nodes"] = plan.nodes;
  j["gpus"] = plan.gpus;
  j["price_known"] = plan.price_known;
  j["meets_deadline"] = plan.meets_deadline;
  j["meets_budget"] = plan.meets_budget;
  // With --deadline-quantile p90: the p90 time to train the deadline was checked against.
  if (request.deadline && request.deadline_quantile == sim::DeadlineQuantile::p90) {
    j["time_p90_days"] = plan.time_p90 ? format::number(units::to_days(*plan.time_p90)) : json(nullptr);
  }
  return j;
}

std::string layout_cell(const sim::Parallelism& p) {
  std::string s = std::to_string(p.tp) + "/" + std::to_string(p.pp) + "/" + std::to_string(p.dp);
  if (p.cp > 1) s += " cp" + std::to_string(p.cp);
  if (p.ep > 1) s += " ep" + std::to_string(p.ep);
  s += " mb" + std::to_string(p.micro_batch);
  if (p.virtual_stages > 1) s += " v" + std::to_string(p.virtual_stages);
  s += " z" + std::to_string(p.zero);
  s += p.recompute == sim::Recompute::none ? " rc-none" : p.recompute == sim::Recompute::full ? " rc-full" : " rc-sel";
  for (const auto& o : sim::kStrategyOptions) {
    if (o.tag != nullptr && p.*o.value) s += std::string(" ") + o.tag;
  }
  return s;
}

std::string aligned(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                    const std::vector<bool>& right) {
  std::vector<size_t> width(header.size(), 0);
  for (size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size() && c < width.size(); ++c) width[c] = std::max(width[c], r[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s = "  ";
    for (size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - cells[c].size(), ' ');
      s += (c ? "  " : "") + (right[c] ? pad + cells[c] : cells[c] + (c + 1 < cells.size() ? pad : ""));
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out = line(header);
  size_t total = 0;
  for (size_t w : width) total += w;
  out += "  " + std::string(total + 2 * (width.size() - 1), '-') + "\n";
  for (const auto& r : rows) out += line(r);
  return out;
}

// p90: a "p90" column after "days", the p90 time a p90 deadline was checked against ("-": not computed).
std::string plan_rows(const std::vector<sim::Plan>& plans, bool p90 = false) {
  std::vector<std::vector<std::string>> rows;
  int rank = 0;
  for (const auto& p : plans) {
    const sim::Estimate& e = p.estimate;
    std::string flags;
    if (!p.price_known) flags += "price unknown";
    if (!p.meets_deadline) flags += std::string(flags.empty() ? "" : "; ") + "misses deadline";
    if (!p.meets_budget && p.price_known) flags += std::string(flags.empty() ? "" : "; ") + "over budget";
    rows.push_back({std::to_string(++rank), p.instance_id.empty() ? "-" : p.instance_id, p.gpu_id,
                    std::to_string(p.nodes), std::to_string(p.gpus), layout_cell(e.layout.strategy),
                    format::fixed(units::to_days(sim::plan_time(e)), 1),
                    format::fixed(units::to_days(e.totals.time_to_train), 1),
                    sim::plan_cost(e) ? money(sim::plan_cost(e)->base(), p.currency) : "n/a",
                    sim::to_string(p.purchase), format::fixed(e.step.mfu * 100, 1) + "%",
                    format::fixed(units::to_gib(e.memory.total()), 1), flags});
    if (p90) {
      rows.back().insert(rows.back().begin() + 7, p.time_p90 ? format::fixed(units::to_days(*p.time_p90), 1) : "-");
    }
  }
  // "days": expected wall time with interruptions and checkpoints (what the planner ranks on);
  // "steady": the step model alone; "cost": total cost under the plan's purchase terms ("purchase"),
  // in its price's currency.
  std::vector<std::string> header{"#", "instance", "gpu", "nodes", "gpus", "tp/pp/dp layout", "days", "steady", "cost",
                                  "purchase", "MFU", "GiB/GPU", ""};
  std::vector<bool> right{true, false, false, true, true, false, true, true, true, false, true, true, false};
  if (p90) {
    header.insert(header.begin() + 7, "p90");
    right.insert(right.begin() + 7, true);
  }
  return aligned(header, rows, right);
}

// The header's word on money: the purchase terms (and currency) of the plans shown, with their
// offerings, and the one currency plans are ranked in.
std::string pricing_line(const sim::SearchResult& r) {
  std::vector<std::pair<std::string, std::vector<std::string>>> terms;  // in order of first appearance
  std::vector<std::string> rates;
  auto note = [&](const sim::Plan& p) {
    const std::string key = std::string(sim::to_string(p.purchase)) + (p.currency.is_usd() ? "" : " in " + p.currency.code);
    auto it = std::find_if(terms.begin(), terms.end(), [&](const auto& t) { return t.first == key; });
    if (it == terms.end()) it = terms.insert(terms.end(), {key, {}});
    const std::string what = p.instance_id.empty() ? p.gpu_id : p.instance_id;
    if (std::find(it->second.begin(), it->second.end(), what) == it->second.end()) it->second.push_back(what);
    const std::string rate = rate_text(p.currency);
    if (!rate.empty() && std::find(rates.begin(), rates.end(), rate) == rates.end()) rates.push_back(rate);
  };
  for (const auto& p : r.plans) note(p);
  for (const auto& p : r.pareto) note(p);
  if (r.failure && r.failure->closest) note(*r.failure->closest);
  std::string s = "purchase: ";
  if (terms.empty()) s += "no plan";
  for (size_t i = 0; i < terms.size(); ++i) {
    const auto& [key, offerings] = terms[i];
    s += (i ? "; " : "") + key + " (";
    for (size_t k = 0; k < offerings.size() && k < 3; ++k) s += (k ? ", " : "") + offerings[k];
    s += offerings.size() > 3 ? ", ...)" : ")";
  }
  s += "; costs ranked in USD";
  for (const auto& rate : rates) s += ", " + rate;
  return s;
}

}  // namespace

nlohmann::json search_result_to_json(const sim::SearchResult& r, const sim::SearchRequest& request,
                                     const ParsedScenario& base) {
  json out = json::object();
  format::stamp(out);
  out["configurations_evaluated"] = r.configurations_evaluated;
  out["elapsed_s"] = format::number(r.elapsed_s);
  out["stats"] = {{"configurations", r.stats.configurations}, {"timed", r.stats.timed},
                  {"memory_rejected", r.stats.memory_rejected}, {"pruned_by_bound", r.stats.pruned_by_bound},
                  {"shapes", r.stats.shapes}, {"threads", r.stats.threads}};
  out["objective"] = sim::to_string(request.objective);
  out["space"] = sim::to_string(request.space);
  out["constraints"] = {
      {"deadline_days", request.deadline ? format::number(units::to_days(*request.deadline)) : json(nullptr)},
      {"budget_usd", request.budget ? format::number(request.budget->base()) : json(nullptr)},
      {"max_gpus", request.max_gpus > 0 ? json(request.max_gpus) : json(nullptr)},
      {"deadline_quantile", sim::to_string(request.deadline_quantile)},
      {"even_stages", request.even_stages},
  };
  out["cancelled"] = r.cancelled;
  json plans = json::array();
  for (const auto& p : r.plans) plans.push_back(plan_to_json(p, request, base));
  out["plans"] = std::move(plans);
  json pareto = json::array();
  for (const auto& p : r.pareto) pareto.push_back(plan_to_json(p, request, base));
  out["pareto"] = std::move(pareto);
  if (r.failure) {
    out["failure"] = {{"constraint", constraint_name(r.failure->kind)},
                      {"message", failure_message(*r.failure, request)},
                      {"closest", r.failure->closest ? plan_to_json(*r.failure->closest, request, base) : json(nullptr)}};
  } else {
    out["failure"] = nullptr;
  }
  out["explanation"] = explanation(r, request);
  const sim::Plan* chosen = sim::chosen_plan(r);
  json runner_ups = json::array();
  for (const auto& u : r.runner_ups) {
    runner_ups.push_back({{"dimension", u.dimension},
                          {"explanation", chosen ? runner_up_text(u, *chosen) : std::string()},
                          {"time_ratio", format::number(u.time_ratio)},
                          {"cost_ratio", u.cost_ratio ? format::number(*u.cost_ratio) : json(nullptr)},
                          {"plan", plan_to_json(u.plan, request, base)}});
  }
  out["runner_ups"] = std::move(runner_ups);
  out["notes"] = render(r.notes);
  return out;
}

std::string search_result_to_csv(const sim::SearchResult& r, const sim::SearchRequest& request,
                                 const ParsedScenario& base) {
  std::string out;
  bool header_done = false;
  auto rows = [&](const char* list, const std::vector<sim::Plan>& plans) {
    int rank = 0;
    for (const auto& p : plans) {
      const std::string csv = estimate_to_csv(p.estimate, parsed_for(request, p, base));
      const size_t nl = csv.find('\n');
      if (!header_done) {
        out += "list,rank,instance,gpu,nodes,gpus,price_known,meets_deadline,meets_budget," + csv.substr(0, nl) + "\n";
        header_done = true;
      }
      out += std::string(list) + "," + std::to_string(++rank) + "," + format::csv_field(p.instance_id) + "," +
             format::csv_field(p.gpu_id) + "," + std::to_string(p.nodes) + "," + std::to_string(p.gpus) + "," +
             (p.price_known ? "true" : "false") + "," + (p.meets_deadline ? "true" : "false") + "," +
             (p.meets_budget ? "true" : "false") + "," + csv.substr(nl + 1);
    }
  };
  rows("plans", r.plans);
  rows("pareto", r.pareto);
  if (r.failure && r.failure->closest) rows("closest", {*r.failure->closest});
  if (!header_done) out = "list,rank,instance,gpu,nodes,gpus,price_known,meets_deadline,meets_budget\n";
  return out;
}

std::string search_result_to_table(const sim::SearchResult& r, const sim::SearchRequest& request,
                                   const ParsedScenario& base) {
  const sim::Scenario& sc = request.base;
  const bool p90 = request.deadline && request.deadline_quantile == sim::DeadlineQuantile::p90;
  std::ostringstream out;
  std::string model = sc.model.name.empty() ? base.model_id : sc.model.name;
  out << "capplan search: " << model << ", " << format::parameters(sc.model.total_params(), sc.model.active_params()) << ", "
      << format::tokens(sc.training.tokens) << " tokens; objective " << sim::to_string(request.objective);
  if (request.deadline) out << ", deadline " << format::fixed(units::to_days(*request.deadline), 1) << " days";
  if (request.deadline && request.deadline_quantile == sim::DeadlineQuantile::p90) {
    out << " at p90 (a plan's p90 time to train, with failures, must meet it)";
  } else if (request.deadline && request.deadline_quantile == sim::DeadlineQuantile::p50) {
    out << " at p50 (the point estimate)";
  }
  if (request.budget) out << ", budget " << money(request.budget->base());
  if (request.max_gpus > 0) out << ", at most " << request.max_gpus << " GPUs";
  out << "\n";
  out << "  " << r.configurations_evaluated << " configurations (" << sim::to_string(request.space) << " layout space"
      << (request.even_stages ? ", even stages" : "") << "; " << r.stats.timed << " timed, "
      << r.stats.memory_rejected << " over memory, " << r.stats.pruned_by_bound << " pruned by a memory bound) on "
      << r.stats.shapes << " cluster shapes in " << format::fixed(r.elapsed_s, 2) << " s with " << r.stats.threads
      << (r.stats.threads == 1 ? " thread" : " threads") << "\n";
  out << "  " << pricing_line(r) << "\n\n";
  if (r.failure) {
    out << "Constraint not met: " << constraint_name(r.failure->kind) << "\n  " << failure_message(*r.failure, request)
        << "\n";
    if (r.failure->closest) out << "\nClosest plan:\n" << plan_rows({*r.failure->closest}, p90);
  } else {
    out << "Plans (best first):\n" << plan_rows(r.plans, p90);
  }
  if (!r.pareto.empty() && request.objective != sim::Objective::pareto) {
    out << "\nPareto front (time vs cost, fastest first):\n" << plan_rows(r.pareto, p90);
  }
  if (const std::string why = explanation(r, request); !why.empty()) out << "\nWhy: " << why << "\n";
  if (const sim::Plan* chosen = sim::chosen_plan(r); chosen && !r.runner_ups.empty()) {
    out << "\nRunner-ups:\n";
    for (const auto& u : r.runner_ups) out << "  " << u.dimension << ": " << runner_up_text(u, *chosen) << "\n";
  }
  if (!r.notes.empty()) {
    out << "\nNotes:\n";
    for (const auto& n : r.notes) out << "  " << render(n) << "\n";
  }
  return out.str();
}

}  // namespace capplan::data
