// SPDX-License-Identifier: Apache-2.0
// Storage and data loading: the tier a run reads and writes, and whether its input pipeline
// (storage reads, CPU tokenisation) keeps up with the GPUs (docs/model.md, "Goodput and cost").
#include <algorithm>
#include <cmath>
#include <utility>

#include "goodput/goodput_parts.hpp"

namespace capplan::sim {

DataLoadingCheck data_loading(double tokens_per_s, const DataLoadingSpec& d, int vocab, const StorageTier& tier,
                              int nodes) {
  DataLoadingCheck out;
  out.bytes_per_token = d.bytes_per_token > 0 ? d.bytes_per_token : (vocab < 65500 ? 2.0 : 4.0);
  out.required_bytes_per_s = tokens_per_s * out.bytes_per_token;
  double limit = kInf;
  if (tier.read.aggregate.base() > 0) limit = tier.read.aggregate.base();
  if (tier.read.per_node.base() > 0) limit = std::min(limit, tier.read.per_node.base() * nodes);
  if (std::isfinite(limit)) out.storage_read_bytes_per_s = limit;
  if (d.cpu_tokens_per_s_per_node) out.cpu_tokens_per_s = *d.cpu_tokens_per_s_per_node * nodes;
  const double by_storage = std::isfinite(limit) && limit > 0 ? out.required_bytes_per_s / limit : 0.0;
  const double by_cpu = out.cpu_tokens_per_s && *out.cpu_tokens_per_s > 0 ? tokens_per_s / *out.cpu_tokens_per_s : 0.0;
  if (by_storage > 1.0 && by_storage >= by_cpu) {
    out.bound = "storage";
    out.slowdown = by_storage;
  } else if (by_cpu > 1.0) {
    out.bound = "cpu";
    out.slowdown = by_cpu;
  }
  return out;
}

StorageTier resolve_storage_tier(const GoodputInputs& in, std::vector<Finding>& findings) {
  const Cluster& c = *in.cluster;
  StorageTier tier = in.storage->tier;
  const bool tier_known = tier.write.known() || tier.read.known();
  if (!in.storage->given && in.storage->assumed && tier_known) {
    Finding f = finding(FindingCode::storage_tier_assumed, "storage.tier",
                        {{"write_gb_per_s", tier.write.aggregate.base() / 1e9},
                         {"read_gb_per_s", tier.read.aggregate.base() / 1e9}});
    f.values.push_back({"tier", 0, tier.id, true});
    findings.push_back(std::move(f));
  } else if (!in.storage->given || !tier_known) {
    const units::BytesPerSecond nic = c.inter_node_bandwidth * static_cast<double>(c.gpus_per_node);
    tier.write.per_node = nic;
    tier.read.per_node = nic;
    findings.push_back(finding(FindingCode::no_storage_tier, "storage.tier", {{"node_gb_per_s", nic.base() / 1e9}}));
  }
  return tier;
}

void check_data_loading(Goodput& g, const GoodputInputs& in, const StorageTier& tier, double tokens_per_s,
                        std::vector<Finding>& findings) {
  g.data = data_loading(tokens_per_s, *in.data, in.model->vocab, tier, in.cluster->nodes());
  if (g.data.bound != "none") {
    Finding f = finding(FindingCode::data_loading_bound, {},
                        {{"gb_per_s", g.data.required_bytes_per_s / 1e9},
                         {"bytes_per_token", g.data.bytes_per_token},
                         {"slowdown", g.data.slowdown}});
    f.values.push_back({"bound", 0, g.data.bound, true});
    findings.push_back(std::move(f));
  }
}

}  // namespace capplan::sim
