// SPDX-License-Identifier: Apache-2.0
// The cluster section's `topology` and instances.json's per-instance topology: parsed into
// sim::Topology, every error naming its field.
#include <gtest/gtest.h>

#include <string>

#include "capplan/data/scenario_io.hpp"
#include "test_support.hpp"

namespace capplan::data {
namespace {

using nlohmann::json;
using test::catalogs_with;
using test::good_catalogs;
using test::has_diag;
using test::real_catalogs;

// 144 H100 as two 72-GPU NVLink domains over 400 Gbit/s per GPU (an NVL72-shaped test cluster).
json scenario(const json& topology) {
  json j = json::parse(R"({
    "model": {"preset": "llama3-70b"},
    "training": {"tokens": "2T", "global_batch_tokens": 4718592, "precision": "bf16"},
    "cluster": {"gpu": "h100-sxm-80gb", "gpus": 144},
    "strategy": "auto"
  })");
  j["cluster"]["topology"] = topology;
  return j;
}

json two_racks() {
  return json::parse(R"([
    {"name": "nvlink", "gpus": 72, "gbps_per_gpu": 7200, "latency_us": 5},
    {"name": "scale-out", "gbps_per_gpu": 400, "rails": 4, "oversubscription": 2}
  ])");
}

TEST(ScenarioTopology, TiersParseAndANodeDefaultsToTheInnermostDomain) {
  auto r = parse_scenario(scenario(two_racks()), good_catalogs());
  ASSERT_TRUE(r) << to_string(r.error());
  const sim::Cluster& c = r->scenario.cluster;
  ASSERT_EQ(c.topology.size(), 2);
  const auto& nv = c.topology.tiers[0];
  const auto& out = c.topology.tiers[1];
  EXPECT_EQ(nv.name, "nvlink");
  EXPECT_EQ(nv.kind, sim::TierKind::scale_up);  // the first tier by default
  EXPECT_EQ(nv.gpus, 72);
  EXPECT_EQ(nv.bandwidth, units::gbit_per_s(7200));
  EXPECT_DOUBLE_EQ(nv.latency.base(), 5e-6);
  EXPECT_EQ(out.kind, sim::TierKind::scale_out);  // later tiers by default
  EXPECT_EQ(out.gpus, 0);                         // omitted: unbounded
  EXPECT_EQ(out.rails, 4);
  EXPECT_EQ(out.oversubscription, 2.0);
  EXPECT_EQ(out.effective_bandwidth(), units::gbit_per_s(200));
  EXPECT_EQ(c.gpus_per_node, 72);
  EXPECT_EQ(c.nodes(), 2);
  // The two-field form follows the tiers (goodput and the search read it).
  EXPECT_EQ(c.intra_node_bandwidth, units::gbit_per_s(7200));
  EXPECT_EQ(c.inter_node_bandwidth, units::gbit_per_s(400));
  EXPECT_TRUE(r->warnings.empty());  // no assumed network: the tiers give it
}

struct BadTopology {
  const char* what;
  json topology;
  const char* where;
  const char* message;
};

TEST(ScenarioTopology, EveryErrorNamesItsField) {
  const BadTopology cases[] = {
      {"empty", json::array(), "scenario#/cluster/topology", "expected a non-empty list of tiers"},
      {"not a list", json::object(), "scenario#/cluster/topology", "expected a non-empty list of tiers"},
      {"no bandwidth", json::parse(R"([{"name": "nvlink", "gpus": 72}, {"name": "net", "gbps_per_gpu": 400}])"),
       "scenario#/cluster/topology/0/gbps_per_gpu", "required"},
      {"no name", json::parse(R"([{"gpus": 72, "gbps_per_gpu": 7200}, {"name": "net", "gbps_per_gpu": 400}])"),
       "scenario#/cluster/topology/0/name", "required"},
      {"inner tier unbounded", json::parse(R"([{"name": "nvlink", "gbps_per_gpu": 7200}, {"name": "net", "gbps_per_gpu": 400}])"),
       "scenario#/cluster/topology/0/gpus", "only the outermost tier may omit it"},
      {"not a multiple",
       json::parse(R"([{"name": "nvlink", "gpus": 8, "gbps_per_gpu": 7200}, {"name": "rail", "gpus": 100, "gbps_per_gpu": 400},
                       {"name": "spine", "gbps_per_gpu": 400}])"),
       "scenario#/cluster/topology/1/gpus", "must be a multiple of tier 0's gpus (8) and larger; got 100"},
      {"negative bandwidth",
       json::parse(R"([{"name": "nvlink", "gpus": 72, "gbps_per_gpu": -1}, {"name": "net", "gbps_per_gpu": 400}])"),
       "scenario#/cluster/topology/0/gbps_per_gpu", "must be > 0; got -1"},
      {"oversubscription below one",
       json::parse(R"([{"name": "nvlink", "gpus": 72, "gbps_per_gpu": 7200}, {"name": "net", "gbps_per_gpu": 400, "oversubscription": 0.5}])"),
       "scenario#/cluster/topology/1/oversubscription", "must be >= 1; got 0.5"},
      {"rails on NVLink",
       json::parse(R"([{"name": "nvlink", "gpus": 72, "gbps_per_gpu": 7200, "rails": 8}, {"name": "net", "gbps_per_gpu": 400}])"),
       "scenario#/cluster/topology/0/rails", "only a scale_out tier has rails"},
      {"too many rails",
       json::parse(R"([{"name": "nvlink", "gpus": 8, "gbps_per_gpu": 7200}, {"name": "net", "gbps_per_gpu": 400, "rails": 16}])"),
       "scenario#/cluster/topology/1/rails", "must be at most the innermost tier's gpus (8); got 16"},
      {"unknown kind",
       json::parse(R"([{"name": "nvlink", "gpus": 72, "gbps_per_gpu": 7200, "kind": "scaleup"}, {"name": "net", "gbps_per_gpu": 400}])"),
       "scenario#/cluster/topology/0/kind", "did you mean 'scale_up'?"},
      {"scale-up outside scale-out",
       json::parse(R"([{"name": "net", "gpus": 8, "gbps_per_gpu": 400, "kind": "scale_out"}, {"name": "nvlink", "gbps_per_gpu": 7200, "kind": "scale_up"}])"),
       "scenario#/cluster/topology/1/kind", "must come before every scale_out tier"},
      {"unknown key",
       json::parse(R"([{"name": "nvlink", "gpus": 72, "gbps_per_gpu": 7200, "gbps": 1}, {"name": "net", "gbps_per_gpu": 400}])"),
       "scenario#/cluster/topology/0/gbps", "unknown field"},
      {"outermost too small",
       json::parse(R"([{"name": "nvlink", "gpus": 8, "gbps_per_gpu": 7200}, {"name": "rail", "gpus": 64, "gbps_per_gpu": 400}])"),
       "scenario#/cluster/topology/1/gpus", "must hold every GPU of the cluster (144)"},
  };
  for (const auto& c : cases) {
    auto r = parse_scenario(scenario(c.topology), good_catalogs());
    ASSERT_FALSE(r) << c.what;
    EXPECT_TRUE(has_diag(r.error(), c.where, c.message)) << c.what;
  }
}

TEST(ScenarioTopology, TheFlatBandwidthKeysAreNotUsedWithATopology) {
  json j = scenario(two_racks());
  j["cluster"]["intra_node_gbps"] = 800;
  auto r = parse_scenario(j, good_catalogs());
  ASSERT_FALSE(r);
  EXPECT_TRUE(has_diag(r.error(), "scenario#/cluster/intra_node_gbps", "not used with topology"));
}

TEST(InstanceTopology, Nvl72OfferingIsOneNvlinkDomainOf72) {
  const InstanceEntry* e = real_catalogs().find_instance("aws-u-p6e-gb200x72");
  ASSERT_NE(e, nullptr);
  ASSERT_TRUE(e->topology.has_value());
  ASSERT_EQ(e->topology->size(), 2);
  EXPECT_EQ(e->topology->tiers[0].kind, sim::TierKind::scale_up);
  EXPECT_EQ(e->topology->tiers[0].gpus, 72);
  EXPECT_EQ(e->topology->tiers[1].kind, sim::TierKind::scale_out);
  const InstanceEntry* b200 = real_catalogs().find_instance("aws-p6-b200.48xlarge");
  ASSERT_NE(b200, nullptr);
  ASSERT_TRUE(b200->topology.has_value());
  EXPECT_EQ(b200->topology->tiers[0].gpus, 8);
  EXPECT_EQ(b200->topology->tiers[1].rails, 8);
}

TEST(InstanceTopology, AScenarioOnTheInstanceTakesItsTiersAndTheNetworkOverride) {
  json j = scenario(nullptr);
  j["cluster"] = {{"instance", "aws-u-p6e-gb200x72"}, {"nodes", 2}, {"inter_node_gbps_per_gpu", 800}};
  auto r = parse_scenario(j, real_catalogs());
  ASSERT_TRUE(r) << to_string(r.error());
  const sim::Cluster& c = r->scenario.cluster;
  EXPECT_EQ(c.gpus, 144);
  EXPECT_EQ(c.gpus_per_node, 72);
  ASSERT_EQ(c.topology.size(), 2);
  EXPECT_EQ(c.topology.tiers[0].gpus, 72);
  EXPECT_EQ(c.topology.tiers[1].bandwidth, units::gbit_per_s(800));
  EXPECT_EQ(c.inter_node_bandwidth, units::gbit_per_s(800));
}

TEST(InstanceTopology, CatalogTiersNeedASourceAndAnUnboundedOutermostTier) {
  auto dir = catalogs_with("instances.json", [](json& j) {
    j["instances"][0]["topology"] = json::parse(R"([
      {"name": "nvlink", "gpus": 8, "gbps_per_gpu": 7200, "source": ["datasheet"]},
      {"name": "net", "gbps_per_gpu": 400, "gpus": 1024}
    ])");
  });
  auto r = load_catalogs(dir);
  ASSERT_FALSE(r);
  EXPECT_TRUE(has_diag(r.error(), "instances.json#/instances/0/topology/1/source", "required"));
  auto dir2 = catalogs_with("instances.json", [](json& j) {
    j["instances"][0]["topology"] = json::parse(R"([
      {"name": "nvlink", "gpus": 8, "gbps_per_gpu": 7200, "source": ["datasheet"]},
      {"name": "net", "gbps_per_gpu": 400, "gpus": 1024, "source": ["provider page"]}
    ])");
  });
  auto r2 = load_catalogs(dir2);
  ASSERT_FALSE(r2);
  EXPECT_TRUE(has_diag(r2.error(), "instances.json#/instances/0/topology/1/gpus", "must omit gpus"));
}

}  // namespace
}  // namespace capplan::data
