// SPDX-License-Identifier: Apache-2.0
#pragma once
// The network a cluster's GPUs talk over, as data: an ordered list of tiers, innermost first
// (ASTRA-sim's analytical MultiDimTopology stacks dimensions the same way). A domain of tier i
// holds gpus(i) GPUs, that is gpus(i) / gpus(i-1) domains of tier i-1; traffic between two GPUs
// travels over the innermost tier whose domain holds both.
//
// Contract: tiers are non-empty for a placed cluster; gpus strictly increase outwards and each is
// a multiple of the one inside it; the outermost tier may be unbounded (gpus == 0); scale-up tiers
// come before scale-out ones; bandwidth > 0 is per GPU, one direction (the link rate, which is the
// ceiling of nccl-tests' bus bandwidth); latency 0 means "the cost model's default for the kind";
// rails >= 1 and oversubscription >= 1 only mean something on scale-out tiers.
#include <string>
#include <vector>

#include "capplan/sim/units.hpp"

namespace capplan::sim {

// At most this many tiers (NVLink, rail leaf, spine, core, and two spare).
inline constexpr int kMaxTiers = 6;

enum class TierKind { scale_up, scale_out };  // NVLink/NVSwitch or PCIe | a NIC-based fabric
const char* to_string(TierKind k);

struct NetworkTier {
  std::string name;  // "nvlink", "pcie", "scale-out", "rail", "spine", ...
  TierKind kind = TierKind::scale_up;
  int gpus = 0;  // GPUs in one domain of this tier; 0 = unbounded (outermost tier only)
  units::BytesPerSecond bandwidth;
  units::Seconds latency;  // zero: the cost model's default for the kind
  // Rail planes of a rail-optimised fabric: NICs per innermost domain, NIC k on its own leaf
  // switches. Recorded and checked; hierarchical collectives keep every ring on one rail, so the
  // rail count changes no collective time in this model (docs/model.md, "Network tiers").
  int rails = 1;
  // Downlink : uplink capacity of the switches that join this tier's sub-domains (the rail
  // groups below it), 1 = non-blocking. Traffic that leaves a rail group, i.e. crosses this tier,
  // gets bandwidth / oversubscription (the fat-tree definition; NVIDIA's DGX SuperPOD reference
  // architecture builds its compute fabric 1:1).
  double oversubscription = 1.0;

  units::BytesPerSecond effective_bandwidth() const { return bandwidth / oversubscription; }
};

struct Topology {
  std::vector<NetworkTier> tiers;  // innermost first

  bool empty() const { return tiers.empty(); }
  int size() const { return static_cast<int>(tiers.size()); }
  // GPUs of one innermost (NVLink) domain; 0 when unbounded or empty.
  int innermost_gpus() const { return tiers.empty() ? 0 : tiers.front().gpus; }

  // Today's two-field cluster as a topology: a scale-up tier of `gpus_per_node` GPUs at
  // `intra` (named "nvlink", or "pcie" when the GPU has no NVLink) and an unbounded scale-out
  // tier at `inter` per GPU, both with default latency, one rail and no oversubscription.
  static Topology two_tier(int gpus_per_node, units::BytesPerSecond intra, units::BytesPerSecond inter,
                           bool nvlink = true);
};

}  // namespace capplan::sim
