// SPDX-License-Identifier: Apache-2.0
// The cluster section: instance or GPU, size, network; the catalog price and node power.
#include "input/scenario/parser.hpp"

#include <algorithm>

#include "capplan/data/fields.hpp"
#include "capplan/data/tco_io.hpp"
#include "catalog/topology_io.hpp"
#include "input/fields/read_table.hpp"

namespace capplan::data::scenario_detail {

// --- cluster ----------------------------------------------------------------------------
namespace {

bool has_scale_out(const std::optional<sim::Topology>& topo) {
  if (!topo) return false;
  for (const auto& t : topo->tiers) {
    if (t.kind == sim::TierKind::scale_out) return true;
  }
  return false;
}

}  // namespace

std::optional<sim::Cluster> ScenarioParser::parse_cluster(const json& j) {
  const std::string p = "/cluster";
  if (!r_.object(j, p)) return std::nullopt;
  const auto before = r_.count();
  std::vector<std::string> known;
  fields_detail::add_keys(cluster_fields(), "", known);
  r_.unknown_keys(j, p, known);
  // The links and the speed spread (input/fields/cluster_fields.cpp), each set only when valid.
  ClusterLinks links;
  fields_detail::read_table(j, p, cluster_fields(), links, r_);
  std::optional<double> intra = links.intra_node_gbps, inter = links.inter_node_gbps_per_gpu;
  const std::optional<double> spread = links.gpu_speed_spread;
  // Network tiers: the scenario's own, else the instance's (below), else two tiers from the
  // two bandwidths. A scenario topology carries its bandwidths, so the two flat keys are not used.
  std::optional<sim::Topology> topo;
  const json* topo_json = find(j, "topology");
  if (topo_json != nullptr) {
    topo = detail::read_topology(*topo_json, child(p, "topology"), r_, false);
    for (const char* key : {"intra_node_gbps", "inter_node_gbps_per_gpu"}) {
      if (find(j, key) != nullptr) {
        r_.error(child(p, key), "not used with topology (give each tier's gbps_per_gpu)");
      }
    }
  }
  const bool user_inter = inter.has_value();
  const json* instance = find(j, "instance");
  const json* gpu = find(j, "gpu");
  if (instance != nullptr && gpu != nullptr) {
    r_.error(p, "give either instance (with nodes) or gpu (with gpus), not both");
    return std::nullopt;
  }
  if (instance == nullptr && gpu == nullptr) {
    r_.error(child(p, "instance"), "required (instance with nodes, or gpu with gpus) is missing");
    return std::nullopt;
  }

  sim::Cluster c;
  if (instance != nullptr ? !size_by_instance(j, *instance, c, topo, inter)
                          : !size_by_gpu(j, *gpu, before, c, topo, inter)) {
    return std::nullopt;
  }
  if (r_.count() != before || !inter) return std::nullopt;
  c.inter_node_bandwidth = units::gbit_per_s(*inter);
  if (spread) c.gpu_speed_spread = *spread;
  if (intra) {
    c.intra_node_bandwidth = units::gbit_per_s(*intra);
  } else {
    c.intra_node_bandwidth = c.gpu.nvlink_bandwidth.base() > 0 ? c.gpu.nvlink_bandwidth : c.gpu.pcie_bandwidth;
  }
  if (topo) {
    // The flat keys override an instance's tiers: intra_node_gbps the innermost scale-up tier,
    // inter_node_gbps_per_gpu every scale-out tier (each keeps its oversubscription).
    if (intra && topo->tiers[0].kind == sim::TierKind::scale_up) topo->tiers[0].bandwidth = c.intra_node_bandwidth;
    for (auto& t : topo->tiers) {
      if (user_inter && t.kind == sim::TierKind::scale_out) t.bandwidth = c.inter_node_bandwidth;
    }
    detail::check_topology_fits(*topo, c.gpus, c.gpus_per_node,
                                topo_json != nullptr ? child(p, "topology") : child(p, "instance"), r_);
    if (r_.count() != before) return std::nullopt;
    c.set_topology(std::move(*topo));
  }
  return c;
}

// A size read by hand (which sizes apply depends on instance or gpu), checked against its row.
std::optional<std::int64_t> ScenarioParser::cluster_size(const json& v, const char* key) {
  if (!fields_detail::check_value(fields_detail::spec_of(cluster_fields(), key), v, child("/cluster", key), r_)) {
    return std::nullopt;
  }
  return v.is_number_integer() ? v.get<std::int64_t>() : static_cast<std::int64_t>(v.get<double>());
}

// An instance with nodes: the catalog's GPU, GPUs per node, tiers and network bandwidth (`inter`
// when the scenario gives none). False when the cluster cannot be made (reported).
bool ScenarioParser::size_by_instance(const json& j, const json& instance, sim::Cluster& c,
                                      std::optional<sim::Topology>& topo, std::optional<double>& inter) {
  const std::string p = "/cluster";
  const InstanceEntry* inst = nullptr;
  for (const char* key : {"gpus", "gpus_per_node"}) {
    if (find(j, key) != nullptr) {
      r_.error(child(p, key), "not used with instance (the instance fixes the GPUs per node); give nodes");
    }
  }
  if (auto id = r_.string(instance, child(p, "instance"))) {
    inst = cat_.find_instance(*id);
    if (inst == nullptr) {
      std::vector<std::string> ids;
      for (const auto& e : cat_.instances) ids.push_back(e.id);
      r_.error(child(p, "instance"), "unknown instance '" + *id + "' (" + suggest(*id, ids) + ")");
    }
  }
  std::optional<std::int64_t> nodes;
  if (serve_ && find(j, "nodes") == nullptr) {
    nodes = 1;  // serving: the plan decides how many instances
  } else if (const json* v = required_in(j, p, "nodes", "number of instances")) {
    nodes = cluster_size(*v, "nodes");
  }
  if (inst == nullptr || !nodes) return false;
  const GpuEntry* g = cat_.find_gpu(inst->gpu);
  if (g == nullptr) {
    r_.error(child(p, "instance"),
             "instance '" + inst->id + "' names GPU '" + inst->gpu + "', which gpus.json lacks");
    return false;
  }
  if (static_cast<double>(*nodes) * inst->gpus_per_node > kMaxGpus) {
    r_.error(child(p, "nodes"), "nodes x gpus_per_node (" + std::to_string(inst->gpus_per_node) +
                                    ") must be at most " + fmt(kMaxGpus) + " GPUs; got " +
                                    describe(*find(j, "nodes")));
    return false;
  }
  c.gpu = g->spec;
  c.gpus_per_node = inst->gpus_per_node;
  c.gpus = static_cast<int>(*nodes) * inst->gpus_per_node;
  c.instance_id = inst->id;
  if (!topo && inst->topology) topo = inst->topology;
  if (!inter) {
    if (inst->network_gbps) {
      inter = *inst->network_gbps / inst->gpus_per_node;
    } else if (*nodes > 1 && !has_scale_out(topo)) {
      r_.error(child(p, "instance"), "network bandwidth of '" + inst->id +
                                         "' is unknown in the catalog; give cluster.inter_node_gbps_per_gpu");
      return false;
    } else {
      inter = kDefaultInterNodeGbpsPerGpu;  // one node: never used
    }
  }
  return true;
}

// A GPU with gpus, nodes or gpus_per_node: the size checked whole (a partial node allowed), a
// node's GPUs by default its topology's scale-up domain, else 8. `before`: the count of
// diagnostics before the section, whose errors stop the sizing. False when the cluster cannot be
// made (reported).
bool ScenarioParser::size_by_gpu(const json& j, const json& gpu, std::size_t before, sim::Cluster& c,
                                 const std::optional<sim::Topology>& topo, std::optional<double>& inter) {
  const std::string p = "/cluster";
  const GpuEntry* g = nullptr;
  if (auto id = r_.string(gpu, child(p, "gpu"))) {
    g = cat_.find_gpu(*id);
    if (g == nullptr) {
      std::vector<std::string> ids;
      for (const auto& e : cat_.gpus) ids.push_back(e.spec.id);
      r_.error(child(p, "gpu"), "unknown GPU '" + *id + "' (" + suggest(*id, ids) + ")");
    }
  }
  std::optional<std::int64_t> gpn = 8, gpus, nodes;
  // With a topology, a node defaults to its innermost (NVLink) domain.
  if (topo && topo->tiers[0].kind == sim::TierKind::scale_up && topo->tiers[0].gpus > 0) gpn = topo->tiers[0].gpus;
  if (const json* v = find(j, "gpus_per_node")) gpn = cluster_size(*v, "gpus_per_node");
  if (const json* v = find(j, "gpus")) gpus = cluster_size(*v, "gpus");
  if (const json* v = find(j, "nodes")) nodes = cluster_size(*v, "nodes");
  if (find(j, "gpus") == nullptr && find(j, "nodes") == nullptr) {
    if (serve_) {
      nodes = 1;  // serving: the plan decides how many GPUs; one node's worth until then
    } else {
      r_.error(child(p, "gpus"), "required (number of GPUs) is missing");
    }
  }
  if (r_.count() != before || g == nullptr || !gpn) return false;
  if (nodes && gpus && *gpus != *nodes * *gpn) {
    r_.error(child(p, "gpus"), "must equal nodes x gpus_per_node (" + std::to_string(*nodes * *gpn) + "); got " +
                                   std::to_string(*gpus));
    return false;
  }
  if (!gpus) {
    if (static_cast<double>(*nodes) * static_cast<double>(*gpn) > kMaxGpus) {
      r_.error(child(p, "nodes"), "nodes x gpus_per_node must be at most " + fmt(kMaxGpus) + " GPUs; got " +
                                      std::to_string(*nodes) + " x " + std::to_string(*gpn));
      return false;
    }
    gpus = *nodes * *gpn;
  }
  if (*gpus < *gpn) {
    gpn = gpus;  // a partial node
  } else if (*gpus % *gpn != 0) {
    r_.error(child(p, "gpus"), "must be a multiple of gpus_per_node (" + std::to_string(*gpn) +
                                   ") or fewer than one node; got " + std::to_string(*gpus));
    return false;
  }
  c.gpu = g->spec;
  c.gpus = static_cast<int>(*gpus);
  c.gpus_per_node = static_cast<int>(*gpn);
  if (!inter) {
    inter = kDefaultInterNodeGbpsPerGpu;
    if (c.gpus > c.gpus_per_node && !has_scale_out(topo)) {
      warn(child(p, "inter_node_gbps_per_gpu"),
           "assumed 400 Gbit/s per GPU inter-node (DGX reference); set cluster.inter_node_gbps_per_gpu");
    }
  }
  return true;
}

// On-premises node power when not given: the maximum system power of the GPU's server in the
// catalog (with its source), else the GPUs' TDP (CPUs, NICs and fans not counted), said either way.
void ScenarioParser::on_prem_power(const sim::Cluster& c) {
  sim::OnPremTerms& op = out_.scenario.pricing.on_prem;
  if (out_.scenario.pricing.model != sim::PurchaseModel::on_prem || op.node_power_w) return;
  if (auto w = default_node_power(cat_, c)) {
    op.node_power_w = w->w;
    op.node_power_from_tdp = w->from_tdp;
    warn("/pricing/on_prem/node_power_w", "not given: " + w->said);
  }
}

// The catalog's price of the cluster's instance, in US dollars. A price in another currency
// needs the catalog's usd_per_unit (without it the price is unknown, and said so); with no
// currency of the user's, costs are shown in the catalog price's currency.
void ScenarioParser::catalog_price(sim::Cluster& c) {
  const InstanceEntry* inst = c.instance_id.empty() ? nullptr : cat_.find_instance(c.instance_id);
  if (inst == nullptr) return;
  auto price = inst->price.per_gpu_hour_usd(inst->gpus_per_node);
  if (!price) {
    if (inst->price.per_gpu_hour(inst->gpus_per_node)) {
      warn("/cluster/instance", "the catalog's price of '" + inst->id + "' is in " + inst->price.currency +
                                    " without a rate to US dollars (price.usd_per_unit), so it is not used; give "
                                    "pricing.usd_per_gpu_hour with pricing.currency and pricing.usd_per_unit");
    }
    return;
  }
  if (!currency_given_) out_.scenario.pricing.currency = inst->price.money();
  c.price_per_gpu = units::usd_per_hour(*price);
  std::string source = (inst->price.type == "sheet" ? "price sheet: " : "catalog: ") + inst->id;
  for (const auto* part : {&inst->price.type, &inst->price.region, &inst->price.date}) {
    if (!part->empty()) source += " " + *part;
  }
  c.price_source = source;
}

}  // namespace capplan::data::scenario_detail
