// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/workload/hardware.hpp"

#include <utility>

#include "capplan/sim/workload/strategy.hpp"

namespace capplan::sim {

const char* to_string(Precision p) {
  switch (p) {
    case Precision::fp32: return "fp32";
    case Precision::tf32: return "tf32";
    case Precision::fp16: return "fp16";
    case Precision::bf16: return "bf16";
    case Precision::fp8: return "fp8";
    case Precision::fp4: return "fp4";
  }
  return "?";
}

std::optional<Precision> precision_from_string(const std::string& s) {
  for (auto p : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16, Precision::fp8, Precision::fp4}) {
    if (s == to_string(p)) return p;
  }
  return std::nullopt;
}

double element_bytes(Precision p) {
  switch (p) {
    case Precision::fp32:
    case Precision::tf32: return 4.0;
    case Precision::fp16:
    case Precision::bf16: return 2.0;
    case Precision::fp8: return 1.0;
    case Precision::fp4: return 0.5;
  }
  return 4.0;
}

units::FlopsPerSecond PeakRates::for_precision(Precision p) const {
  switch (p) {
    case Precision::fp32: return fp32;
    case Precision::tf32: return tf32;
    case Precision::fp16: return fp16;
    case Precision::bf16: return bf16;
    case Precision::fp8: return fp8;
    case Precision::fp4: return fp4;
  }
  return {};
}

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "?";
}

Topology Cluster::network() const {
  if (!topology.empty()) return topology;
  return Topology::two_tier(gpus_per_node, intra_node_bandwidth, inter_node_bandwidth, gpu.nvlink_bandwidth.base() > 0);
}

void Cluster::set_topology(Topology t) {
  for (const NetworkTier& tier : t.tiers) {
    if (tier.kind == TierKind::scale_up) {
      intra_node_bandwidth = tier.bandwidth;
      break;
    }
  }
  for (const NetworkTier& tier : t.tiers) {
    if (tier.kind == TierKind::scale_out) {
      inter_node_bandwidth = tier.bandwidth;
      break;
    }
  }
  topology = std::move(t);
}

std::optional<Recompute> recompute_from_string(const std::string& s) {
  for (auto r : {Recompute::none, Recompute::selective, Recompute::full}) {
    if (s == to_string(r)) return r;
  }
  return std::nullopt;
}

}  // namespace capplan::sim
