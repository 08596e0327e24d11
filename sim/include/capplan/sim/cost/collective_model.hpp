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
// All-gather and reduce-scatter across nodes are the exception: NCCL runs them only as rings (no
// tree; NVLS and CollNet need switch support, PAT one GPU per node), and a ring of n ranks over
// `nodes` nodes takes n - 1 pipelined steps, nodes - 1 of them over the network, each with its
// own latency. NCCL's tuner (src/graph/tuning.cc) prices that as
//   lat_p = base_p + (n - nodes) x max(intra_p, net_overhead_p) + (nodes - 1) x inter_p
// per protocol p (LL, LL128, Simple, each at a fraction of the ring bandwidth) and runs the one
// with the shortest lat_p + bytes / bw_p; RingLatency holds those constants. So the latency of a
// cross-node all-gather grows linearly with the ranks, which is what FSDP/ZeRO-3 pays per layer
// (hundreds of microseconds to milliseconds at hundreds of GPUs).
#include <array>
#include <span>
#include <utility>
#include <vector>

#include "capplan/sim/lowering/ops.hpp"
#include "capplan/sim/workload/topology.hpp"
#include "capplan/sim/units.hpp"

namespace capplan::sim {

// One tier as a cost model has priced it. Contract: busbw > 0 (nccl-tests bus bandwidth per GPU,
// achieved, not the line rate); latency_us >= 0.
struct TierLink {
  units::BytesPerSecond busbw;
  double latency_us = 0.0;  // alpha's base when the collective's outermost tier is this one
};

// One NCCL protocol of a ring all-gather / reduce-scatter across nodes: its base latency, the
// latency of each step inside a node and over the network (microseconds), and the share of the
// ring bandwidth it reaches.
struct RingProtocol {
  double base_us = 0;
  double intra_step_us = 0;
  double inter_step_us = 0;
  double bandwidth_fraction = 1;
};

// NCCL's ring constants (NVIDIA/nccl src/graph/tuning.cc at b647562, 2.19-era): baseLat Ring
// {LL 6.6, LL128 14.0, Simple 8.4} us; hwLat NVLink Ring {0.6, 1.9, 3.4}, NET Ring {2.7, 4.0, 14.0};
// each intra-node step of a multi-node ring at least the network post overhead (1 us on x86, x3
// for Simple); LL carries 1/4 of the ring bandwidth across nodes, LL128 0.92, Simple all of it.
struct RingLatency {
  std::array<RingProtocol, 3> protocols{{{6.6, 1.0, 2.7, 0.25}, {14.0, 1.9, 4.0, 0.92}, {8.4, 3.4, 14.0, 1.0}}};
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
// With `ring`, an all-gather or reduce-scatter that crosses tier 0 is priced with NCCL's ring
// latency per protocol instead of alpha (see above).
units::Seconds hierarchical_collective_time(const CollectiveOp& op, std::span<const TierLink> links,
                                            double latency_per_log2_us, const RingLatency* ring = nullptr);

class CollectiveModel {
 public:
  CollectiveModel() = default;
  CollectiveModel(std::vector<TierLink> links, double latency_per_log2_us, RingLatency ring = {})
      : links_(std::move(links)), latency_per_log2_us_(latency_per_log2_us), ring_(ring) {}

  units::Seconds time(const CollectiveOp& op) const {
    return hierarchical_collective_time(op, links_, latency_per_log2_us_, &ring_);
  }
  const std::vector<TierLink>& links() const { return links_; }
  double latency_per_log2_us() const { return latency_per_log2_us_; }
  const RingLatency& ring() const { return ring_; }

 private:
  std::vector<TierLink> links_;
  double latency_per_log2_us_ = 0.0;
  RingLatency ring_;
};

}  // namespace capplan::sim
