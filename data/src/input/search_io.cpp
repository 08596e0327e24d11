// SPDX-License-Identifier: Apache-2.0
// Offerings from the instance catalog and renderings of a planner result. Each plan's estimate is
// rendered by estimate_to_json, so `capplan search` and `capplan estimate` never drift apart.
#include "capplan/data/search_io.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "capplan/data/currency.hpp"
#include "capplan/data/findings.hpp"
#include "capplan/data/format.hpp"
#include "capplan/data/plan_text.hpp"

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

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (true) {
    const size_t next = text.find(sep, pos);
    out.emplace_back(text.substr(pos, next == std::string_view::npos ? std::string_view::npos : next - pos));
    if (next == std::string_view::npos) break;
    pos = next + 1;
  }
  return out;
}

std::optional<long long> to_integer(std::string_view s) {
  long long v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

template <class Match>
bool any_of(const std::vector<std::string>& list, Match&& match) {
  return list.empty() || std::any_of(list.begin(), list.end(), match);
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

bool glob_match(std::string_view pattern, std::string_view text) {
  // Iterative matcher with backtracking to the last '*'.
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

Result<OfferingList> offerings_from_catalog(const Catalogs& catalogs, const OfferingFilter& filter,
                                            const std::map<std::string, double>& prices,
                                            std::optional<double> inter_node_gbps_per_gpu) {
  Diagnostics errors;
  auto error = [&](std::string where, std::string message) {
    errors.push_back({Diagnostic::Severity::error, std::move(where), std::move(message)});
  };
  std::vector<std::string> gpu_ids, providers, instance_ids;
  for (const auto& g : catalogs.gpus) gpu_ids.push_back(g.spec.id);
  for (const auto& i : catalogs.instances) {
    instance_ids.push_back(i.id);
    if (std::find(providers.begin(), providers.end(), i.provider) == providers.end()) providers.push_back(i.provider);
  }
  for (const auto& g : filter.gpus) {
    if (catalogs.find_gpu(g) == nullptr) error("--gpu", "unknown GPU '" + g + "' (" + suggest(g, gpu_ids) + ")");
  }
  for (const auto& p : filter.providers) {
    if (std::find(providers.begin(), providers.end(), p) == providers.end()) {
      error("--provider", "unknown provider '" + p + "' (" + suggest(p, providers) + ")");
    }
  }
  for (const auto& [id, usd_per_gpu_hour] : prices) {
    if (catalogs.find_instance(id) == nullptr) {
      error("--price", "unknown instance '" + id + "' (" + suggest(id, instance_ids) + ")");
    }
    if (!(usd_per_gpu_hour >= 0) || !std::isfinite(usd_per_gpu_hour)) {
      error("--price", "price of '" + id + "' must be a non-negative number of USD per GPU-hour");
    }
  }
  if (inter_node_gbps_per_gpu && !(*inter_node_gbps_per_gpu > 0 && std::isfinite(*inter_node_gbps_per_gpu))) {
    error("--inter-node-gbps-per-gpu",
          "must be a positive number of Gbit/s; got " + format::fixed(*inter_node_gbps_per_gpu, 3));
  }
  if (!errors.empty()) return std::unexpected(std::move(errors));

  OfferingList out;
  for (const auto& inst : catalogs.instances) {
    if (!any_of(filter.instances, [&](const std::string& g) { return glob_match(g, inst.id); })) continue;
    if (!any_of(filter.gpus, [&](const std::string& g) { return g == inst.gpu; })) continue;
    if (!any_of(filter.providers, [&](const std::string& p) { return p == inst.provider; })) continue;
    if (!any_of(filter.regions, [&](const std::string& g) { return glob_match(g, inst.price.region); })) continue;
    const GpuEntry* gpu = catalogs.find_gpu(inst.gpu);
    if (gpu == nullptr || inst.gpus_per_node < 1) continue;  // load_catalogs' cross-checks reject these
    sim::Offering o;
    o.instance_id = inst.id;
    o.provider = inst.provider;
    o.region = inst.price.region;
    o.price_type = inst.price.type;
    sim::Cluster& c = o.node;
    c.gpu = gpu->spec;
    c.gpus_per_node = inst.gpus_per_node;
    c.gpus = inst.gpus_per_node;
    c.instance_id = inst.id;
    // As parse_scenario does for an instance: NVLink when the GPU has it, else PCIe; the network
    // per node shared by its GPUs.
    c.intra_node_bandwidth = c.gpu.nvlink_bandwidth.base() > 0 ? c.gpu.nvlink_bandwidth : c.gpu.pcie_bandwidth;
    if (inter_node_gbps_per_gpu) {
      c.inter_node_bandwidth = units::gbit_per_s(*inter_node_gbps_per_gpu);
    } else if (inst.network_gbps) {
      c.inter_node_bandwidth = units::gbit_per_s(*inst.network_gbps / inst.gpus_per_node);
    }  // else: unknown (0); the search offers it for one node only and says so
    if (inst.topology) {
      sim::Topology t = *inst.topology;
      if (inter_node_gbps_per_gpu) {
        for (auto& tier : t.tiers) {
          if (tier.kind == sim::TierKind::scale_out) tier.bandwidth = units::gbit_per_s(*inter_node_gbps_per_gpu);
        }
      }
      c.set_topology(std::move(t));
    }
    if (auto it = prices.find(inst.id); it != prices.end()) {
      c.price_per_gpu = units::usd_per_hour(it->second);
      c.price_source = "user: --price " + inst.id;
      o.price_type = "user";
    } else if (auto price = inst.price.per_gpu_hour_usd(inst.gpus_per_node)) {
      c.price_per_gpu = units::usd_per_hour(*price);
      std::string source = (inst.price.type == "sheet" ? "price sheet: " : "catalog: ") + inst.id;
      for (const auto* part : {&inst.price.type, &inst.price.region, &inst.price.date}) {
        if (!part->empty()) source += " " + *part;
      }
      if (inst.price.currency != "USD") {
        source += " " + inst.price.currency;
        o.pricing = sim::PricingTerms{};  // on demand, shown in the price's currency
        o.pricing->currency = inst.price.money();
      }
      c.price_source = source;
    } else if (inst.price.per_gpu_hour(inst.gpus_per_node)) {
      sim::Finding f = text_finding(sim::FindingCode::catalog_price_without_rate, "offering", inst.id);
      f.values.push_back({"currency", 0, inst.price.currency, true});
      out.findings.push_back(std::move(f));
    }
    out.offerings.push_back(std::move(o));
  }
  if (out.offerings.empty()) {
    std::string what;
    auto list = [&](const char* name, const std::vector<std::string>& v) {
      if (v.empty()) return;
      std::string joined;
      for (const auto& x : v) joined += (joined.empty() ? "" : ",") + x;
      what += std::string(what.empty() ? "" : ", ") + name + " " + joined;
    };
    list("--instances", filter.instances);
    list("--gpu", filter.gpus);
    list("--provider", filter.providers);
    list("--region", filter.regions);
    return fail("--instances", "no catalog instance matches " + (what.empty() ? std::string("the filters") : what) +
                                   " (capplan catalog instances lists them)");
  }
  return out;
}

std::vector<sim::Finding> apply_scenario_pricing(std::vector<sim::Offering>& offerings, const sim::Scenario& scenario,
                                                 bool pricing_given, const std::map<std::string, double>& prices) {
  std::vector<sim::Finding> out;
  const sim::Cluster& own = scenario.cluster;
  bool offered = false;
  for (auto& o : offerings) {
    if (own.instance_id.empty() || o.instance_id != own.instance_id) {
      if (!o.pricing) o.pricing = sim::PricingTerms{};  // on demand at the catalog price
      continue;
    }
    offered = true;
    o.pricing = scenario.pricing;
    const bool file_price = own.price_source == "scenario pricing" && own.price_per_gpu;
    if (prices.contains(o.instance_id)) {
      if (file_price) {
        sim::Finding f = sim::finding(sim::FindingCode::price_replaces_scenario_price, "pricing.usd_per_gpu_hour",
                                      {{"given_usd", prices.at(o.instance_id)},
                                       {"file_usd", units::to_usd_per_hour(*own.price_per_gpu)}});
        f.values.push_back({"offering", 0, o.instance_id, true});
        f.values.push_back({"purchase", 0, sim::to_string(scenario.pricing.model), true});
        out.push_back(std::move(f));
      }
    } else if (own.price_per_gpu) {
      o.node.price_per_gpu = own.price_per_gpu;  // the file's (or, with terms only, the catalog's reference)
      o.node.price_source = own.price_source;
      o.price_type = file_price ? "user" : o.price_type;
    }
  }
  if (pricing_given && !offered && !own.instance_id.empty()) {
    out.push_back(text_finding(sim::FindingCode::scenario_pricing_not_offered, "instance", own.instance_id));
  }
  return out;
}

std::vector<sim::Finding> apply_purchase_to_all(std::vector<sim::Offering>& offerings, const sim::Scenario& scenario) {
  const sim::PricingTerms& own = scenario.pricing;
  if (own.model == sim::PurchaseModel::on_demand) return {};
  const char* model = sim::to_string(own.model);
  // The catalog's price types for a model ("spot", "reserved"); on premises has none.
  const std::string type = own.model == sim::PurchaseModel::on_prem ? "" : model;
  std::vector<std::string> unpriced;
  for (auto& o : offerings) {
    if (!scenario.cluster.instance_id.empty() && o.instance_id == scenario.cluster.instance_id) continue;
    sim::PricingTerms t;
    t.model = own.model;
    if (o.pricing) t.currency = o.pricing->currency;  // the catalog price's
    t.spot.preemptions_per_node_hour = own.spot.preemptions_per_node_hour;
    t.reserved.term_hours = own.reserved.term_hours;
    t.on_prem.amortisation_years = own.on_prem.amortisation_years;
    t.on_prem.pue = own.on_prem.pue;
    t.on_prem.usd_per_kwh = own.on_prem.usd_per_kwh;
    t.on_prem.ops_usd_per_year = own.on_prem.ops_usd_per_year;
    t.on_prem.utilisation = own.on_prem.utilisation;
    const bool catalog_rate = !type.empty() && o.price_type == type && o.node.price_per_gpu;
    if (catalog_rate && own.model == sim::PurchaseModel::spot) {
      t.spot.usd_per_gpu_hour = units::to_usd_per_hour(*o.node.price_per_gpu);
    } else if (catalog_rate && own.model == sim::PurchaseModel::reserved) {
      t.reserved.usd_per_gpu_hour = units::to_usd_per_hour(*o.node.price_per_gpu);
    } else {
      unpriced.push_back(o.instance_id.empty() ? o.node.gpu.id : o.instance_id);
    }
    o.pricing = std::move(t);
  }
  if (unpriced.empty()) return {};
  std::string list;
  for (std::size_t i = 0; i < unpriced.size() && i < 6; ++i) list += (i ? ", " : "") + unpriced[i];
  if (unpriced.size() > 6) list += ", ... (" + std::to_string(unpriced.size()) + " offerings)";
  const std::string own_id = scenario.cluster.instance_id.empty() ? "none" : scenario.cluster.instance_id;
  return {sim::note("--purchase " + std::string(model) + ": no " + model + " price for " + list +
                    std::string(unpriced.size() == 1 ? ", so its cost is unknown (never its on-demand price)" : ", so their cost is unknown (never their on-demand price)") + "; the scenario's " + model +
                    " terms with a price apply to its own instance (" + own_id + ") only")};
}

Result<std::pair<std::string, double>> parse_price_override(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size()) {
    return fail("--price", "expected INSTANCE=USD_PER_GPU_HOUR, e.g. tencent-hccpnv5=2.1; got '" + std::string(text) + "'");
  }
  const std::string id(text.substr(0, eq));
  const auto value = parse_si(text.substr(eq + 1));
  if (!value || !(*value >= 0) || !std::isfinite(*value)) {
    return fail("--price", "price of '" + id + "' must be a non-negative number of USD per GPU-hour; got '" +
                               std::string(text.substr(eq + 1)) + "'");
  }
  return std::pair<std::string, double>{id, *value};
}

Result<std::vector<int>> parse_node_counts(std::string_view text, std::string_view flag) {
  std::set<int> counts;
  constexpr long long kMaxNodes = 100000;
  auto bad = [&](const std::string& why) {
    return fail(std::string(flag), why + "; got '" + std::string(text) + "' (give a range 8-64 or a list 8,16,32)");
  };
  if (text.empty()) return bad("expected node counts");
  for (const std::string& part : split(text, ',')) {
    const size_t dash = part.find('-');
    if (dash == std::string::npos) {
      const auto n = to_integer(part);
      if (!n || *n < 1 || *n > kMaxNodes) return bad("node counts must be integers from 1 to 100000");
      counts.insert(static_cast<int>(*n));
    } else {
      const auto lo = to_integer(std::string_view(part).substr(0, dash));
      const auto hi = to_integer(std::string_view(part).substr(dash + 1));
      if (!lo || !hi || *lo < 1 || *hi > kMaxNodes) return bad("node counts must be integers from 1 to 100000");
      if (*lo > *hi) return bad("a range must go from low to high");
      for (long long n = *lo; n <= *hi; ++n) counts.insert(static_cast<int>(n));
    }
  }
  return std::vector<int>(counts.begin(), counts.end());
}

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
