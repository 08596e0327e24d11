// SPDX-License-Identifier: Apache-2.0
#pragma once
// The one collective model both cost models price through: hierarchical collectives that walk
// a topology's tiers (docs/model.md, "Network tiers and the collective model").
//
// A group spans span[0] ranks inside each innermost domain, span[1] innermost domains inside
// each tier-1 domain, ... up to its outermost tier t (n = size = span[0] x ... x span[t]). The
// collective runs as NCCL's hierarchical algorithms do: a ring inside each innermost domain over
// the full buffer S, then, in parallel for every local rank, rings across the next tier over the
// S / (span[0] x ... x span[i-1]) each rank still holds, and so on outwards. A phase at tier i is a
// ring among GPUs in different tier-(i-1) domains, so all its hops are tier-i links and the ring
// runs at that tier's bus bandwidth (the slowest link it crosses sets the pace). Per tier, the
// nccl-tests bus-bandwidth factors (nccl-tests doc/PERFORMANCE.md):
//   all-reduce      sum_i 2 (s_i - 1) / s_i x S_i / busbw_i,   S_i = S / (s_0 ... s_{i-1})
//   all-gather, reduce-scatter   sum_i (s_i - 1) / s_i x S_i / busbw_i
//   all-to-all      max_i (P_i - P_{i-1}) / n x S / busbw_i,  P_i = s_0 ... s_i (P_t = n), P_-1 = 1:
//                   the share of each rank's data whose nearest common domain is tier i; all
//                   tiers carry their share at once
//   send/recv       S / busbw_t
// plus alpha = latency_t + latency_per_log2 x log2(n) (NCCL's tree/NVLS latency grows with log2 of
// the ranks). With two tiers this is exactly the intra-node + inter-node model capplan had before.
#include <array>
#include <span>
#include <utility>
#include <vector>

#include "capplan/sim/ops.hpp"
#include "capplan/sim/topology.hpp"
#include "capplan/sim/units.hpp"

namespace capplan::sim {

// One tier as a cost model has priced it. Contract: busbw > 0 (nccl-tests bus bandwidth per GPU,
// achieved, not the line rate); latency_us >= 0.
struct TierLink {
  units::BytesPerSecond busbw;
  double latency_us = 0.0;  // alpha's base when the collective's outermost tier is this one
};

// A group's fan-out per tier. A placement without tier data (tier < 0, as built by hand) reads as
// two tiers: ranks_per_node inside a domain, `nodes` domains across tier 1.
struct TierSpan {
  int outer = 0;  // outermost tier the group crosses; 0 = inside one innermost domain
  std::array<int, kMaxTiers> span{};
};
// Contract: tiers >= 1; outer is clamped to tiers - 1.
TierSpan tier_span(const GroupPlacement& g, int tiers);

// Hierarchical time of `op` over `links` (innermost first). Zero for groups of one or empty buffers.
units::Seconds hierarchical_collective_time(const CollectiveOp& op, std::span<const TierLink> links,
                                            double latency_per_log2_us);

class CollectiveModel {
 public:
  CollectiveModel() = default;
  CollectiveModel(std::vector<TierLink> links, double latency_per_log2_us)
      : links_(std::move(links)), latency_per_log2_us_(latency_per_log2_us) {}

  units::Seconds time(const CollectiveOp& op) const {
    return hierarchical_collective_time(op, links_, latency_per_log2_us_);
  }
  const std::vector<TierLink>& links() const { return links_; }
  double latency_per_log2_us() const { return latency_per_log2_us_; }

 private:
  std::vector<TierLink> links_;
  double latency_per_log2_us_ = 0.0;
};

}  // namespace capplan::sim
