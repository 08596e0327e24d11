// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/workload/topology.hpp"

namespace capplan::sim {

const char* to_string(TierKind k) {
  switch (k) {
    case TierKind::scale_up: return "scale_up";
    case TierKind::scale_out: return "scale_out";
  }
  return "?";
}

Topology Topology::two_tier(int gpus_per_node, units::BytesPerSecond intra, units::BytesPerSecond inter, bool nvlink) {
  Topology t;
  t.tiers.reserve(2);
  NetworkTier up;
  up.name = nvlink ? "nvlink" : "pcie";
  up.kind = TierKind::scale_up;
  up.gpus = gpus_per_node;
  up.bandwidth = intra;
  NetworkTier out;
  out.name = "scale-out";
  out.kind = TierKind::scale_out;
  out.gpus = 0;
  out.bandwidth = inter;
  t.tiers.push_back(std::move(up));
  t.tiers.push_back(std::move(out));
  return t;
}

}  // namespace capplan::sim
