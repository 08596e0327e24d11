// SPDX-License-Identifier: Apache-2.0
// Offerings from the shipped catalog and the JSON/CSV of a planner result.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "capplan/data/catalog.hpp"
#include "capplan/data/findings.hpp"
#include "capplan/data/scenario_io.hpp"
#include "capplan/data/search_io.hpp"
#include "test_support.hpp"

namespace capplan::data {
namespace {

const Catalogs& catalogs() {
  static const Catalogs c = [] {
    auto loaded = load_catalogs(test::source_data_dir());
    EXPECT_TRUE(loaded.has_value());
    return loaded.value_or(Catalogs{});
  }();
  return c;
}

std::vector<std::string> ids(const OfferingList& l) {
  std::vector<std::string> out;
  for (const auto& o : l.offerings) out.push_back(o.instance_id);
  return out;
}

TEST(GlobMatch, StarMatchesAnyRunAndQuestionMarkOneCharacter) {
  EXPECT_TRUE(glob_match("aws-*", "aws-p5.48xlarge"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("*h100*", "lambda-8x-h100-sxm"));
  EXPECT_TRUE(glob_match("aws-p?.48xlarge", "aws-p5.48xlarge"));
  EXPECT_FALSE(glob_match("aws-p?.48xlarge", "aws-p5en.48xlarge"));
  EXPECT_FALSE(glob_match("aws-*", "gcp-a3-highgpu-8g"));
  EXPECT_TRUE(glob_match("a*b*c", "aXbYbZc"));
  EXPECT_FALSE(glob_match("a*b*c", "aXbYbZ"));
}

TEST(Offerings, InstanceGlobSelectsOnlyMatchingIds) {
  OfferingFilter f;
  f.instances = {"aws-*"};
  auto l = offerings_from_catalog(catalogs(), f);
  ASSERT_TRUE(l.has_value());
  ASSERT_FALSE(l->offerings.empty());
  for (const auto& o : l->offerings) EXPECT_TRUE(o.instance_id.starts_with("aws-")) << o.instance_id;
  // Every aws instance of the catalog is there, in catalog order.
  long aws = std::count_if(catalogs().instances.begin(), catalogs().instances.end(),
                           [](const InstanceEntry& e) { return e.id.starts_with("aws-"); });
  EXPECT_EQ(static_cast<long>(l->offerings.size()), aws);
}

TEST(Offerings, GpuProviderAndRegionFiltersCombine) {
  OfferingFilter f;
  f.gpus = {"h100-sxm-80gb", "h200-sxm-141gb"};
  f.providers = {"aws", "gcp"};
  auto l = offerings_from_catalog(catalogs(), f);
  ASSERT_TRUE(l.has_value());
  for (const auto& o : l->offerings) {
    EXPECT_TRUE(o.node.gpu.id == "h100-sxm-80gb" || o.node.gpu.id == "h200-sxm-141gb") << o.instance_id;
    EXPECT_TRUE(o.provider == "aws" || o.provider == "gcp") << o.instance_id;
  }
  const auto got = ids(*l);
  EXPECT_NE(std::find(got.begin(), got.end(), "aws-p5.48xlarge"), got.end());
  EXPECT_NE(std::find(got.begin(), got.end(), "gcp-a3-ultragpu-8g"), got.end());
  f.regions = {"us-east-*"};
  auto east = offerings_from_catalog(catalogs(), f);
  ASSERT_TRUE(east.has_value());
  for (const auto& o : east->offerings) EXPECT_TRUE(o.region.starts_with("us-east-")) << o.instance_id;
}

TEST(Offerings, PricesComeFromTheCatalogAndUnknownStaysUnknown) {
  OfferingFilter f;
  f.instances = {"aws-p5.48xlarge", "aws-p5e.48xlarge"};
  auto l = offerings_from_catalog(catalogs(), f);
  ASSERT_TRUE(l.has_value());
  ASSERT_EQ(l->offerings.size(), 2u);
  const InstanceEntry* p5 = catalogs().find_instance("aws-p5.48xlarge");
  ASSERT_NE(p5, nullptr);
  const auto& a = l->offerings[0];
  ASSERT_TRUE(a.node.price_per_gpu.has_value());
  EXPECT_DOUBLE_EQ(units::to_usd_per_hour(*a.node.price_per_gpu), *p5->price.per_gpu_hour(p5->gpus_per_node));
  EXPECT_EQ(a.price_type, p5->price.type);
  EXPECT_NE(a.node.price_source.find("catalog: aws-p5.48xlarge"), std::string::npos);
  // The catalog has no price for p5e: none is invented.
  EXPECT_FALSE(l->offerings[1].node.price_per_gpu.has_value());
  // Network per GPU = the node's figure / GPUs per node (as parse_scenario does).
  EXPECT_DOUBLE_EQ(a.node.inter_node_bandwidth.base(), units::gbit_per_s(*p5->network_gbps / 8).base());
}

TEST(Offerings, UserPriceOverridesTheCatalogAndIsLabelled) {
  OfferingFilter f;
  f.instances = {"tencent-hccpnv5"};
  auto l = offerings_from_catalog(catalogs(), f, {{"tencent-hccpnv5", 2.1}});
  ASSERT_TRUE(l.has_value());
  ASSERT_EQ(l->offerings.size(), 1u);
  const auto& o = l->offerings[0];
  ASSERT_TRUE(o.node.price_per_gpu.has_value());
  EXPECT_DOUBLE_EQ(units::to_usd_per_hour(*o.node.price_per_gpu), 2.1);
  EXPECT_EQ(o.price_type, "user");
  EXPECT_NE(o.node.price_source.find("--price"), std::string::npos);
}

TEST(Offerings, MissingNetworkStaysUnknownUnlessGiven) {
  OfferingFilter f;
  f.instances = {"lambda-8x-h100-sxm"};
  auto l = offerings_from_catalog(catalogs(), f);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->offerings.at(0).node.inter_node_bandwidth.base(), 0.0);
  auto given = offerings_from_catalog(catalogs(), f, {}, 400.0);
  ASSERT_TRUE(given.has_value());
  EXPECT_DOUBLE_EQ(given->offerings.at(0).node.inter_node_bandwidth.base(), units::gbit_per_s(400).base());
}

TEST(Offerings, BadFiltersNameTheFlag) {
  const struct {
    OfferingFilter filter;
    std::map<std::string, double> prices;
    const char* where;
    const char* names;  // the message quotes it (nullptr: not checked)
  } cases[] = {
      {{.gpus = {"h100-sxm"}}, {}, "--gpu", "h100-sxm"},
      {{}, {{"no-such-instance", 1.0}}, "--price", nullptr},
      {{.instances = {"nothing-*"}}, {}, "--instances", "nothing-*"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.where);
    auto l = offerings_from_catalog(catalogs(), c.filter, c.prices);
    ASSERT_FALSE(l.has_value());
    EXPECT_EQ(l.error().front().where, c.where);
    if (c.names != nullptr) {
      EXPECT_NE(l.error().front().message.find(c.names), std::string::npos);
    }
  }
}

TEST(NodeCounts, RangesListsAndMixes) {
  EXPECT_EQ(parse_node_counts("8-10").value(), (std::vector<int>{8, 9, 10}));
  EXPECT_EQ(parse_node_counts("32,8,16").value(), (std::vector<int>{8, 16, 32}));
  EXPECT_EQ(parse_node_counts("4,8-9,8").value(), (std::vector<int>{4, 8, 9}));
  for (const char* bad : {"", "0", "8-", "10-8", "a,b", "-3", "1.5"}) {
    auto r = parse_node_counts(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().front().where, "--nodes") << bad;
  }
}

TEST(PriceOverride, ParsesIdEqualsUsd) {
  auto p = parse_price_override("tencent-hccpnv5=2.5");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->first, "tencent-hccpnv5");
  EXPECT_DOUBLE_EQ(p->second, 2.5);
  for (const char* bad : {"tencent-hccpnv5", "=2", "x=", "x=-1", "x=abc"}) {
    auto r = parse_price_override(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().front().where, "--price");
  }
}

// A search over two catalog instances, rendered as JSON: each plan is the estimate object of
// `capplan estimate` for its scenario, plus where it runs.
TEST(SearchJson, PlansAreEstimateObjectsPlusTheirPlace) {
  auto parsed = parse_scenario_text(R"({
    "model": {"preset": "llama2-7b"},
    "training": {"tokens": "100B", "global_batch": 256, "precision": "bf16"},
    "cluster": {"instance": "aws-p5.48xlarge", "nodes": 1},
    "strategy": "auto"})", catalogs());
  ASSERT_TRUE(parsed.has_value());
  OfferingFilter f;
  f.instances = {"aws-p5.48xlarge", "aws-p4de.24xlarge"};
  auto offerings = offerings_from_catalog(catalogs(), f);
  ASSERT_TRUE(offerings.has_value());
  sim::SearchRequest r;
  r.base = parsed->scenario;
  r.offerings = offerings->offerings;
  r.node_counts = {1, 2};
  r.threads = 1;
  auto result = sim::search(r);
  ASSERT_TRUE(result.has_value());
  const nlohmann::json j = search_result_to_json(*result, r, *parsed);
  for (const char* key : {"configurations_evaluated", "elapsed_s", "stats", "objective", "constraints", "plans",
                          "pareto", "failure", "explanation", "runner_ups", "notes"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_GT(j["configurations_evaluated"].get<long>(), 0);
  ASSERT_FALSE(j["plans"].empty());
  const nlohmann::json& plan = j["plans"][0];
  for (const char* key : {"instance", "gpu", "nodes", "gpus", "price_known", "step_time_s", "time_to_train_days",
                          "cost_usd", "strategy", "breakdown_s", "memory_per_gpu_bytes", "warnings"}) {
    EXPECT_TRUE(plan.contains(key)) << key;
  }
  // The same object `capplan estimate` prints for that plan's scenario (plus the place keys).
  ParsedScenario ps = *parsed;
  ps.scenario = sim::plan_scenario(r, result->plans[0]);
  nlohmann::json expected = estimate_to_json(result->plans[0].estimate, ps);
  // ... less the document stamp, which the search document carries once.
  EXPECT_TRUE(expected.contains("schema_version") && !plan.contains("schema_version"));
  EXPECT_EQ(j["schema_version"], expected["schema_version"]);
  expected.erase("schema_version");
  expected.erase("capplan_version");
  nlohmann::json got = plan;
  for (const char* key : {"instance", "gpu", "nodes", "gpus", "price_known", "meets_deadline", "meets_budget"}) {
    got.erase(key);
  }
  EXPECT_EQ(got, expected);
  EXPECT_EQ(plan["scenario"]["instance"], plan["instance"]);
  EXPECT_EQ(plan["scenario"]["nodes"], plan["nodes"]);

  const std::string csv = search_result_to_csv(*result, r, *parsed);
  EXPECT_TRUE(csv.starts_with("list,rank,instance,gpu,nodes,gpus,"));
  EXPECT_NE(csv.find("\nplans,1,"), std::string::npos);
  const std::string table = search_result_to_table(*result, r, *parsed);
  EXPECT_NE(table.find("Plans (best first)"), std::string::npos);
}

// ---- --purchase for every offering ----

sim::Offering priced(const char* id, const char* type, double usd_per_gpu_hour) {
  sim::Offering o;
  o.instance_id = id;
  o.price_type = type;
  o.node.instance_id = id;
  o.node.gpu.id = "gpu";
  o.node.price_per_gpu = units::usd_per_hour(usd_per_gpu_hour);
  return o;
}

TEST(PurchaseForAllOfferings, RatesStayWithTheOwnInstanceTermsGoToAllAndACatalogSpotPriceIsUsed) {
  sim::Scenario s;
  s.cluster.instance_id = "own";
  s.pricing.model = sim::PurchaseModel::spot;
  s.pricing.spot.usd_per_gpu_hour = 1.1;
  s.pricing.spot.preemptions_per_node_hour = 0.003;
  std::vector<sim::Offering> offerings{priced("own", "on-demand", 3), priced("other", "on-demand", 2.5),
                                       priced("market", "spot", 0.9)};
  auto notes = apply_scenario_pricing(offerings, s, true);
  EXPECT_TRUE(notes.empty());
  notes = apply_purchase_to_all(offerings, s);
  // The own instance keeps the scenario's terms, with its spot price.
  ASSERT_TRUE(offerings[0].pricing.has_value());
  EXPECT_EQ(offerings[0].pricing->spot.usd_per_gpu_hour, 1.1);
  // Another instance: spot, the preemption rate, but no spot price (its on-demand 2.5 is not one).
  ASSERT_TRUE(offerings[1].pricing.has_value());
  EXPECT_EQ(offerings[1].pricing->model, sim::PurchaseModel::spot);
  EXPECT_FALSE(offerings[1].pricing->spot.usd_per_gpu_hour.has_value());
  EXPECT_EQ(offerings[1].pricing->spot.preemptions_per_node_hour, 0.003);
  // A catalog price of type spot is that instance's spot price.
  ASSERT_TRUE(offerings[2].pricing.has_value());
  ASSERT_TRUE(offerings[2].pricing->spot.usd_per_gpu_hour.has_value());
  EXPECT_DOUBLE_EQ(*offerings[2].pricing->spot.usd_per_gpu_hour, 0.9);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(render(notes[0]),
            "--purchase spot: no spot price for other, so its cost is unknown (never its on-demand price); the "
            "scenario's spot terms with a price apply to its own instance (own) only");
}

TEST(PurchaseForAllOfferings, OnDemandChangesNothing) {
  sim::Scenario s;
  s.cluster.instance_id = "own";
  std::vector<sim::Offering> offerings{priced("own", "on-demand", 3), priced("other", "on-demand", 2.5)};
  apply_scenario_pricing(offerings, s, false);
  const auto before = offerings;
  EXPECT_TRUE(apply_purchase_to_all(offerings, s).empty());
  ASSERT_TRUE(offerings[1].pricing.has_value());
  EXPECT_EQ(offerings[1].pricing->model, sim::PurchaseModel::on_demand);
  EXPECT_EQ(offerings[1].node.price_per_gpu, before[1].node.price_per_gpu);
}

}  // namespace
}  // namespace capplan::data
