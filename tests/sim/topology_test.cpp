// SPDX-License-Identifier: Apache-2.0
// Network tiers as data and the one hierarchical collective model (collective_model.hpp). Every
// expected time is written out from the formula in docs/model.md ("Network tiers and the
// collective model"): per tier, nccl-tests' bus-bandwidth factor times the bytes each rank holds
// there over that tier's busbw, plus alpha = latency(outermost tier) + 3 us x log2(ranks).
#include <gtest/gtest.h>

#include <cmath>

#include "capplan/sim/cost/calibrated_cost.hpp"
#include "capplan/sim/cost/collective_model.hpp"
#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/lowering/step_model.hpp"
#include "capplan/sim/workload/topology.hpp"
#include "test_support.hpp"

namespace capplan::sim {
namespace {

constexpr double kRel = 1e-12;  // same closed form, another order of operations
constexpr double kGB = 1e9;
constexpr double kS = 1073741824.0;  // 1 GiB buffer

// Datasheet defaults (DatasheetAssumptions): busbw 80% of NVLink, 85% of the NIC after
// oversubscription; latency 8 us (scale-up) or 15 us (scale-out) + 3 us x log2(n).
constexpr double kNvlinkEff = 0.80;
constexpr double kNicEff = 0.85;
double alpha(double base_us, int n) { return (base_us + 3.0 * std::log2(double(n))) * 1e-6; }

// NVIDIA B200 / GB200 (Blackwell): NVLink 5 is 1.8 TB/s bidirectional per GPU = 900 GB/s one
// way (gpus.json b200-hgx, gb200-nvl72). No measured busbw here, so the 80% default applies.
GpuSpec blackwell() {
  GpuSpec g = test::h100_sxm();
  g.id = "blackwell";
  g.peak.bf16 = units::tflop_per_s(2250);
  g.nvlink_bandwidth = units::gb_per_s(900);
  return g;
}

NetworkTier tier(const char* name, TierKind kind, int gpus, units::BytesPerSecond bw) {
  NetworkTier t;
  t.name = name;
  t.kind = kind;
  t.gpus = gpus;
  t.bandwidth = bw;
  return t;
}

// A GB200 NVL72 cluster: racks of 72 GPUs on one NVLink domain, 400 Gbit/s per GPU between racks.
Cluster nvl72(int gpus) {
  Cluster c = test::cluster_of(blackwell(), gpus, 72, units::gbit_per_s(400));
  Topology t;
  t.tiers = {tier("nvlink", TierKind::scale_up, 72, units::gb_per_s(900)),
             tier("scale-out", TierKind::scale_out, 0, units::gbit_per_s(400))};
  c.set_topology(t);
  return c;
}

// HGX B200: 8-GPU NVLink nodes, 400 Gbit/s per GPU (one 400G NIC per GPU).
Cluster hgx_b200(int gpus) { return test::cluster_of(blackwell(), gpus, 8, units::gbit_per_s(400)); }

// A rail-optimised HGX fabric: 8-GPU nodes, rail groups of 32 nodes (256 GPUs, one leaf per
// rail, non-blocking inside), and a spine with `oversub`:1 for traffic that leaves a rail group.
Cluster railed(int gpus, double oversub) {
  Cluster c = hgx_b200(gpus);
  Topology t;
  NetworkTier rail = tier("rail", TierKind::scale_out, 256, units::gbit_per_s(400));
  rail.rails = 8;
  NetworkTier spine = tier("spine", TierKind::scale_out, 0, units::gbit_per_s(400));
  spine.oversubscription = oversub;
  t.tiers = {tier("nvlink", TierKind::scale_up, 8, units::gb_per_s(900)), rail, spine};
  c.set_topology(t);
  return c;
}

CollectiveOp op(CollectiveKind kind, double bytes, GroupPlacement g) {
  CollectiveOp o;
  o.kind = kind;
  o.bytes = units::bytes(bytes);
  o.group = g;
  return o;
}

// ---------------------------------------------------------------------------------------------
// place_group on tiers
// ---------------------------------------------------------------------------------------------

// The two-tier placement as capplan computed it before topologies existed.
GroupPlacement legacy_place_group(int size, int stride, int gpus_per_node) {
  GroupPlacement g;
  g.size = std::max(1, size);
  if (g.size == 1) return g;
  g.ranks_per_node = stride >= gpus_per_node ? 1 : std::clamp(gpus_per_node / std::max(1, stride), 1, g.size);
  g.nodes = (g.size + g.ranks_per_node - 1) / g.ranks_per_node;
  return g;
}

TEST(PlaceGroup, OnTwoTiersSpansWhatTheNodeFormSpanned) {
  for (int gpn : {1, 2, 4, 8, 16, 72}) {
    for (int size : {1, 2, 3, 4, 8, 16, 64, 96}) {
      for (int stride : {0, 1, 2, 3, 4, 8, 16, 64}) {
        const GroupPlacement old = legacy_place_group(size, stride, gpn);
        const GroupPlacement now = place_group(size, stride, gpn);
        EXPECT_EQ(now.ranks_per_node, old.ranks_per_node) << size << " " << stride << " " << gpn;
        EXPECT_EQ(now.nodes, old.nodes) << size << " " << stride << " " << gpn;
        EXPECT_EQ(now.tier, old.nodes > 1 ? 1 : 0);
        EXPECT_EQ(now.span[0], now.ranks_per_node);
        if (now.tier == 1) {
          EXPECT_EQ(now.span[1], old.nodes);
        }
      }
    }
  }
}

TEST(PlaceGroup, Tp16StaysInsideAnNvl72RackButCrossesHgxNodes) {
  const GroupPlacement rack = place_group(16, 1, nvl72(144).network());
  EXPECT_EQ(rack.tier, 0);
  EXPECT_EQ(rack.ranks_per_node, 16);
  EXPECT_EQ(rack.nodes, 1);
  const GroupPlacement hgx = place_group(16, 1, hgx_b200(144).network());
  EXPECT_EQ(hgx.tier, 1);
  EXPECT_EQ(hgx.ranks_per_node, 8);
  EXPECT_EQ(hgx.nodes, 2);
}

TEST(PlaceGroup, ADataParallelGroupCountsRailGroupsAtEachTier) {
  // 64 ranks 8 apart (TP=8 below them): one per node; 256 / 8 = 32 per rail group; 2 rail groups.
  const GroupPlacement g = place_group(64, 8, railed(512, 1.0).network());
  EXPECT_EQ(g.tier, 2);
  EXPECT_EQ(g.span[0], 1);
  EXPECT_EQ(g.span[1], 32);
  EXPECT_EQ(g.span[2], 2);
  EXPECT_EQ(g.nodes, 64);
  // 32 of them fit in one rail group and never reach the spine.
  EXPECT_EQ(place_group(32, 8, railed(512, 1.0).network()).tier, 1);
}

// ---------------------------------------------------------------------------------------------
// Two tiers: today's H100 cluster, unchanged
// ---------------------------------------------------------------------------------------------

TEST(TieredCollective, TwoTierH100AllReduceIsIntraPlusInterNodeRing) {
  // 16 H100 (450 GB/s NVLink one way) on 2 nodes with 400 Gbit/s per GPU; TP-fastest 16-rank group.
  const Cluster c = test::cluster_of(test::h100_sxm(), 16, 8, units::gbit_per_s(400));
  const DatasheetCost cost(c);
  const double intra = 450 * kGB * kNvlinkEff, inter = 50 * kGB * kNicEff;
  const double expected = 2.0 * 7 / 8 * kS / intra + 2.0 * 1 / 2 * (kS / 8) / inter + alpha(15, 16);
  const GroupPlacement placed = place_group(16, 1, c.network());
  EXPECT_NEAR(cost.collective(op(CollectiveKind::all_reduce, kS, placed)).base(), expected, kRel * expected);
  // The placement from the topology and the hand-written node form price bit for bit the same.
  const GroupPlacement by_hand{16, 8, 2};
  for (CollectiveKind k : {CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::reduce_scatter,
                           CollectiveKind::all_to_all, CollectiveKind::send_recv}) {
    EXPECT_EQ(cost.collective(op(k, kS, placed)).base(), cost.collective(op(k, kS, by_hand)).base()) << to_string(k);
  }
}

TEST(TieredCollective, AnExplicitTwoTierTopologyPricesAsTheTwoFieldCluster) {
  Cluster flat = test::cluster_of(test::h100_sxm(), 64, 8, units::gbit_per_s(400));
  Cluster tiered = flat;
  tiered.set_topology(Topology::two_tier(8, flat.intra_node_bandwidth, flat.inter_node_bandwidth));
  const DatasheetCost a(flat), b(tiered);
  for (CollectiveKind k : {CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::reduce_scatter,
                           CollectiveKind::all_to_all, CollectiveKind::send_recv}) {
    for (int stride : {1, 2, 8}) {
      const CollectiveOp o = op(k, kS, place_group(16, stride, flat.network()));
      EXPECT_EQ(a.collective(o).base(), b.collective(o).base()) << to_string(k) << " stride " << stride;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// NVL72: a 72-GPU NVLink domain
// ---------------------------------------------------------------------------------------------

TEST(TieredCollective, Tp16AllReduceOnNvl72PricesAsNvlinkOnHgxAsTheNetwork) {
  const double nv = 900 * kGB * kNvlinkEff, nic = 50 * kGB * kNicEff;
  const Cluster rack = nvl72(144), hgx = hgx_b200(144);
  const double on_rack = 2.0 * 15 / 16 * kS / nv + alpha(8, 16);
  const double on_hgx = 2.0 * 7 / 8 * kS / nv + 2.0 * 1 / 2 * (kS / 8) / nic + alpha(15, 16);
  const double t_rack = DatasheetCost(rack).collective(op(CollectiveKind::all_reduce, kS, place_group(16, 1, rack.network()))).base();
  const double t_hgx = DatasheetCost(hgx).collective(op(CollectiveKind::all_reduce, kS, place_group(16, 1, hgx.network()))).base();
  EXPECT_NEAR(t_rack, on_rack, kRel * on_rack);
  EXPECT_NEAR(t_hgx, on_hgx, kRel * on_hgx);
  EXPECT_LT(t_rack, t_hgx);
}

TEST(TieredCollective, Ep64AllToAllStaysOnNvlinkInAnNvl72Rack) {
  const double nv = 900 * kGB * kNvlinkEff, nic = 50 * kGB * kNicEff;
  const Cluster rack = nvl72(144), hgx = hgx_b200(144);
  // Inside the rack every peer is on NVLink: (n-1)/n of the buffer.
  const double on_rack = 63.0 / 64 * kS / nv + alpha(8, 64);
  // On 8-GPU nodes, 7/64 stays on NVLink and 56/64 crosses the network, both at once.
  const double on_hgx = std::max(7.0 / 64 * kS / nv, 56.0 / 64 * kS / nic) + alpha(15, 64);
  const GroupPlacement in_rack = place_group(64, 1, rack.network());
  EXPECT_EQ(in_rack.tier, 0);
  EXPECT_NEAR(DatasheetCost(rack).collective(op(CollectiveKind::all_to_all, kS, in_rack)).base(), on_rack,
              kRel * on_rack);
  EXPECT_NEAR(DatasheetCost(hgx).collective(op(CollectiveKind::all_to_all, kS, place_group(64, 1, hgx.network()))).base(),
              on_hgx, kRel * on_hgx);
}

TEST(TieredCollective, AGroupLargerThanARackCrossesTheScaleOutTier) {
  // 144 ranks on two racks: 72 per rack over NVLink, then 2 racks over the network with S/72 each.
  const Cluster rack = nvl72(144);
  const double nv = 900 * kGB * kNvlinkEff, nic = 50 * kGB * kNicEff;
  const double expected = 2.0 * 71 / 72 * kS / nv + 2.0 * 1 / 2 * (kS / 72) / nic + alpha(15, 144);
  const double got =
      DatasheetCost(rack).collective(op(CollectiveKind::all_reduce, kS, place_group(144, 1, rack.network()))).base();
  EXPECT_NEAR(got, expected, kRel * expected);
}

// ---------------------------------------------------------------------------------------------
// Rails and oversubscription
// ---------------------------------------------------------------------------------------------

TEST(TieredCollective, OversubscriptionSlowsOnlyTrafficThatLeavesARailGroup) {
  const double nic = 50 * kGB * kNicEff;
  const Cluster full = railed(512, 1.0), half = railed(512, 2.0);
  // 64 DP ranks one per node: a ring over 32 nodes of a rail group, then over the 2 rail groups
  // through the spine, whose effective bandwidth is 400 Gbit/s / 2.
  const GroupPlacement dp = place_group(64, 8, full.network());
  const double expected = 2.0 * 31 / 32 * kS / nic + 2.0 * 1 / 2 * (kS / 32) / (nic / 2.0) + alpha(15, 64);
  const double t_half = DatasheetCost(half).collective(op(CollectiveKind::all_reduce, kS, dp)).base();
  const double t_full = DatasheetCost(full).collective(op(CollectiveKind::all_reduce, kS, dp)).base();
  EXPECT_NEAR(t_half, expected, kRel * expected);
  EXPECT_GT(t_half, t_full);
  // Inside one rail group nothing crosses the spine, so the spine's ratio changes nothing.
  const GroupPlacement inside = place_group(32, 8, full.network());
  EXPECT_EQ(DatasheetCost(half).collective(op(CollectiveKind::all_reduce, kS, inside)).base(),
            DatasheetCost(full).collective(op(CollectiveKind::all_reduce, kS, inside)).base());
}

TEST(TieredCollective, AllToAllAcrossRailGroupsMovesEachTiersShareAtItsPace) {
  // 512 ranks, TP-fastest: 8 per node, 32 nodes per rail group, 2 rail groups. Shares of each
  // rank's data: 7/512 on NVLink, (256-8)/512 inside the rail group, 256/512 across the spine.
  const Cluster half = railed(512, 2.0);
  const double nv = 900 * kGB * kNvlinkEff, nic = 50 * kGB * kNicEff;
  const double expected =
      std::max({7.0 / 512 * kS / nv, 248.0 / 512 * kS / nic, 256.0 / 512 * kS / (nic / 2.0)}) + alpha(15, 512);
  const double got =
      DatasheetCost(half).collective(op(CollectiveKind::all_to_all, kS, place_group(512, 1, half.network()))).base();
  EXPECT_NEAR(got, expected, kRel * expected);
}

TEST(TieredCollective, TierLatencyFromTheTopologyReplacesTheDefault) {
  Cluster c = nvl72(144);
  Topology t = c.topology;
  t.tiers[0].latency = units::microseconds(5);
  c.set_topology(t);
  const double nv = 900 * kGB * kNvlinkEff;
  const double expected = 2.0 * 7 / 8 * kS / nv + alpha(5, 8);
  const double got =
      DatasheetCost(c).collective(op(CollectiveKind::all_reduce, kS, place_group(8, 1, c.network()))).base();
  EXPECT_NEAR(got, expected, kRel * expected);
}

// ---------------------------------------------------------------------------------------------
// The calibrated model shares the collective model
// ---------------------------------------------------------------------------------------------

CollectiveFit fit(CollectiveKind kind, int ranks, const char* where, double busbw, double latency_s) {
  CollectiveFit f;
  f.kind = kind;
  f.ranks = ranks;
  f.tier = where;
  f.busbw_Bps.value = busbw;
  f.latency_s.value = latency_s;
  f.min_bytes = 1;
  f.max_bytes = 1e12;
  return f;
}

TEST(TieredCollective, CalibratedScalesTheMeasuredNetworkBusbwBeyondTheMeasuredTiers) {
  // Measured on the machine: all-reduce 8 ranks inside a node at 600 GB/s, 16 ranks across nodes
  // at 30 GB/s. A group that crosses the oversubscribed spine uses them for tiers 0 and 1 and
  // 30 GB/s x (spine effective / rail) = 15 GB/s across the spine.
  Profile p;
  p.collectives = {fit(CollectiveKind::all_reduce, 8, "nvlink", 600 * kGB, 20e-6),
                   fit(CollectiveKind::all_reduce, 16, "network", 30 * kGB, 40e-6)};
  const Cluster half = railed(512, 2.0);
  const CalibratedCost cost(p, half);
  const CollectiveOp dp = op(CollectiveKind::all_reduce, kS, place_group(64, 8, half.network()));
  EXPECT_EQ(cost.pricing(dp), "scaled");
  const double expected = 2.0 * 31 / 32 * kS / (30 * kGB) + 2.0 * 1 / 2 * (kS / 32) / (15 * kGB) + alpha(15, 64);
  EXPECT_NEAR(cost.collective(dp).base(), expected, kRel * expected);
  // Inside one rail group the measured curve itself is used, as on two tiers.
  const CollectiveOp rail = op(CollectiveKind::all_reduce, kS, place_group(16, 8, half.network()));
  EXPECT_EQ(cost.pricing(rail), "fitted");
  const auto warnings = cost.coverage({StepOp{dp}});
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].code, FindingCode::profile_tier_scaled);
  EXPECT_EQ(warnings[0].text("kind"), "all_reduce");
  EXPECT_EQ(warnings[0].text("tier"), "spine");
}

}  // namespace
}  // namespace capplan::sim
