// SPDX-License-Identifier: Apache-2.0
// The cluster section's fields: the instance or GPU, the cluster's size, its links and network
// tiers, below /cluster. The rows are in the order of the command-line flags.
#include "capplan/data/fields.hpp"
#include "input/scenario/parser.hpp"

namespace capplan::data {
namespace {

using nlohmann::json;
using scenario_detail::kAbsurd;
using scenario_detail::kMaxGpus;
using scenario_detail::kMaxGpusPerNode;
using scenario_detail::kMaxLinkGbps;
using scenario_detail::kMaxNodes;
using scenario_detail::kMinLinkGbps;

constexpr const char* kGroup = "Cluster";
constexpr const char* kSlowLink = "1 Mbit/s: a slower link is no GPU interconnect";

// The cluster is what capplan search chooses: the cluster's flags are not search's (its --gpu and
// --nodes are offering filters of its own), except the speed spread, which applies to every offering.
const Field<ClusterLinks> kCluster[] = {
    // The catalog ids and the sizes are read by hand: which of them apply (instance with nodes, or
    // gpu with gpus and gpus_per_node) and their defaults follow from the catalog entry.
    {{.pointer = "instance",
      .kind = FieldKind::text,
      .help = "instance id (capplan catalog instances)",
      .flag = {"--instance", "ID", "Instance id (capplan catalog instances)", kGroup, nullptr}},
     nullptr},
    {{.pointer = "nodes",
      .kind = FieldKind::integer,
      .min = 1,
      .max = kMaxNodes,
      .help = "number of instances",
      .bound = kAbsurd,
      .flag = {"--nodes", "INT", "Number of instances", kGroup, nullptr}},
     nullptr},
    {{.pointer = "gpu",
      .kind = FieldKind::text,
      .help = "GPU id (capplan catalog gpus), with gpus",
      .flag = {"--gpu", "ID", "GPU id (capplan catalog gpus)", kGroup, nullptr}},
     nullptr},
    {{.pointer = "gpus",
      .kind = FieldKind::integer,
      .min = 1,
      .max = kMaxGpus,
      .help = "number of GPUs (with gpu)",
      .bound = kAbsurd,
      .flag = {"--gpus", "INT", "Number of GPUs (with --gpu)", kGroup, nullptr}},
     nullptr},
    {{.pointer = "gpus_per_node",
      .kind = FieldKind::integer,
      .min = 1,
      .max = kMaxGpusPerNode,
      .help = "GPUs per node (with gpu)",
      .bound = "more GPUs than any node or scale-up domain holds",
      .flag = {"--gpus-per-node", "INT", "GPUs per node (with --gpu)", kGroup, nullptr}},
     nullptr},
    {{.pointer = "intra_node_gbps",
      .kind = FieldKind::number,
      .unit = "Gbit/s",
      .min = 0,
      .max = kMaxLinkGbps,
      .min_open = true,
      .least = kMinLinkGbps,
      .help = "intra-node link bandwidth per GPU, one direction, Gbit/s",
      .bound = kSlowLink,
      .flag = {"--intra-node-gbps", "GBPS", "Intra-node link bandwidth per GPU, one direction, Gbit/s", kGroup,
               nullptr}},
     [](ClusterLinks& c, const json& v) { c.intra_node_gbps = v.get<double>(); }},
    {{.pointer = "inter_node_gbps_per_gpu",
      .kind = FieldKind::number,
      .unit = "Gbit/s",
      .min = 0,
      .max = kMaxLinkGbps,
      .min_open = true,
      .least = kMinLinkGbps,
      .help = "inter-node bandwidth per GPU, one direction, Gbit/s",
      .bound = kSlowLink,
      .flag = {"--inter-node-gbps-per-gpu", "GBPS", "Inter-node bandwidth per GPU, one direction, Gbit/s", kGroup,
               nullptr}},
     [](ClusterLinks& c, const json& v) { c.inter_node_gbps_per_gpu = v.get<double>(); }},
    {{.pointer = "gpu_speed_spread",
      .kind = FieldKind::number,
      .min = 0,
      .max = 0.5,
      .help = "relative spread of per-GPU speed (default 0.015)",
      .bound = "a relative spread: half the mean speed is far beyond any fleet's",
      .flag = {"--gpu-speed-spread", "FRACTION",
               "Relative spread of per-GPU speed; the step waits for the slowest GPU (default 0.015)", kGroup,
               "Relative spread of per-GPU speed in your fleet (default 0.015); applies to every offering"}},
     [](ClusterLinks& c, const json& v) { c.gpu_speed_spread = v.get<double>(); }},
    {{.pointer = "topology", .kind = FieldKind::records, .help = "network tiers, innermost first", .record = "tier"},
     nullptr},  // read by hand: each tier's kind, size, bandwidth and oversubscription
};

}  // namespace

std::span<const Field<ClusterLinks>> cluster_fields() { return kCluster; }

}  // namespace capplan::data
