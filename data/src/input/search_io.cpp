// SPDX-License-Identifier: Apache-2.0
// What a search is asked over: offerings from the instance catalog (filtered by name patterns),
// a scenario's prices applied to them, and the node counts and price overrides a user gives. The
// planner's result is rendered in output/search_output.cpp.
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

}  // namespace capplan::data
