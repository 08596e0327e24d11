// SPDX-License-Identifier: Apache-2.0
// The scenario's `tco` section: strict parsing, currency, defaults said, and the output.
#include "capplan/data/tco_io.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "capplan/data/scenario_io.hpp"
#include "test_support.hpp"

namespace capplan::data {
namespace {

using nlohmann::json;

// Tencent H800 nodes bought in CNY (the Tencent instance stands for the same 8-GPU server).
json h800_fleet() {
  return {
      {"model", {{"preset", "llama2-70b"}}},
      {"training", {{"tokens", "200B"}, {"global_batch", 1024}, {"precision", "bf16"}}},
      {"cluster", {{"instance", "tencent-hccpnv5"}, {"nodes", 16}}},
      {"pricing",
       {{"currency", "CNY"}, {"usd_per_unit", 0.14}, {"usd_per_gpu_hour", 25}, {"spot", {{"usd_per_gpu_hour", 10}}}}},
      {"tco",
       {{"years", 3},
        {"utilisation", 0.6},
        {"capex_per_node", 2.2e6},
        {"interest_rate", 0.05},
        {"node_power_w", 10200},
        {"pue", 1.3},
        {"price_per_kwh", 0.8},
        {"staff_per_year", 1.5e6}}}};
}

Result<TcoRequest> request_of(const json& doc) {
  auto parsed = parse_scenario(doc, test::real_catalogs());
  if (!parsed) return std::unexpected(parsed.error());
  return tco_request(doc, *parsed, test::real_catalogs());
}

std::string first_error(const Result<TcoRequest>& r) {
  if (r) return "(no error)";
  return r.error().front().where + ": " + r.error().front().message;
}

TEST(TcoSection, AmountsInTheScenariosCurrencyBecomeUsDollars) {
  auto r = request_of(h800_fleet());
  ASSERT_TRUE(r) << first_error(r);
  const sim::TcoInputs& in = r->inputs;
  EXPECT_EQ(in.nodes, 16);
  EXPECT_EQ(in.gpus_per_node, 8);
  EXPECT_EQ(in.years, 3);
  EXPECT_DOUBLE_EQ(in.utilisation, 0.6);
  EXPECT_NEAR(*in.usd_per_node, 2.2e6 * 0.14, 1e-6);
  EXPECT_NEAR(*in.usd_per_kwh, 0.8 * 0.14, 1e-12);
  EXPECT_NEAR(*in.staff_usd_per_year, 1.5e6 * 0.14, 1e-6);
  EXPECT_DOUBLE_EQ(*in.interest_rate, 0.05);  // a rate, not an amount
  EXPECT_DOUBLE_EQ(*in.node_power_w, 10200.0);
  EXPECT_DOUBLE_EQ(in.pue, 1.3);
  // Rent rates from the pricing section, already in US dollars.
  EXPECT_NEAR(*in.on_demand_usd_per_gpu_hour, 25 * 0.14, 1e-9);
  EXPECT_NEAR(*in.spot_usd_per_gpu_hour, 10 * 0.14, 1e-9);
  EXPECT_FALSE(in.reserved_usd_per_gpu_hour.has_value());
  EXPECT_EQ(r->currency.code, "CNY");
}

TEST(TcoSection, OutputIsInTheScenariosCurrencyAndListsWhatIsMissing) {
  auto r = request_of(h800_fleet());
  ASSERT_TRUE(r) << first_error(r);
  const sim::Tco t = sim::tco(r->inputs);
  const json j = tco_to_json(t, *r);
  EXPECT_EQ(j.at("currency"), "CNY");
  EXPECT_NEAR(j.at("capital").get<double>(), 16 * 2.2e6, 1e-3);  // back in CNY
  EXPECT_EQ(j.at("rent").at(0).at("purchase"), "on_demand");
  EXPECT_NEAR(j.at("rent").at(0).at("per_gpu_hour").get<double>(), 25.0, 1e-9);
  EXPECT_TRUE(j.at("rent").at(1).at("total").is_null());  // reserved: no rate given
  const auto missing = j.at("missing_inputs").get<std::vector<std::string>>();
  for (const char* f : {"pricing.reserved.usd_per_gpu_hour", "tco.network_capex_per_node", "tco.storage_capex",
                        "tco.space_per_kw_month"}) {
    EXPECT_NE(std::find(missing.begin(), missing.end(), f), missing.end()) << f;
  }
  EXPECT_EQ(j.at("schema_version"), 1);
  const std::string table = tco_to_table(t, *r);
  EXPECT_NE(table.find("CNY 35.20M"), std::string::npos) << table;  // capital
  EXPECT_NE(table.find("Missing (not invented"), std::string::npos) << table;
  const std::string csv = tco_to_csv(t, *r);
  EXPECT_EQ(csv.rfind("year,currency,depreciation,interest,energy,space,staff,total\n1,CNY,", 0), 0u) << csv;
}

TEST(TcoSection, NodePowerDefaultsToTheCatalogAndSaysSo) {
  json doc = h800_fleet();
  doc["cluster"] = {{"gpu", "h100-sxm-80gb"}, {"gpus", 64}};
  doc["tco"].erase("node_power_w");
  auto r = request_of(doc);
  ASSERT_TRUE(r) << first_error(r);
  EXPECT_DOUBLE_EQ(*r->inputs.node_power_w, 10200.0);  // DGX H100
  ASSERT_FALSE(r->warnings.empty());
  EXPECT_NE(r->warnings.back().find("tco/node_power_w: not given: NVIDIA DGX H100"), std::string::npos)
      << r->warnings.back();
}

TEST(TcoSection, NodePowerFromTheScenariosOnPremTermsWhenGivenThere) {
  json doc = h800_fleet();
  doc["tco"].erase("node_power_w");
  doc["pricing"]["purchase"] = "on_prem";
  doc["pricing"]["on_prem"] = {{"node_power_w", 9000}};
  auto r = request_of(doc);
  ASSERT_TRUE(r) << first_error(r);
  EXPECT_DOUBLE_EQ(*r->inputs.node_power_w, 9000.0);
  EXPECT_EQ(r->node_power_source, "pricing.on_prem.node_power_w");
  // Given nowhere, an H800 node has no published system power: TDP x GPUs, said.
  doc["pricing"].erase("on_prem");
  doc["pricing"]["purchase"] = "spot";
  auto tdp = request_of(doc);
  ASSERT_TRUE(tdp) << first_error(tdp);
  EXPECT_DOUBLE_EQ(*tdp->inputs.node_power_w, 700.0 * 8);
  EXPECT_NE(tdp->node_power_source.find("GPUs only"), std::string::npos) << tdp->node_power_source;
}

TEST(TcoSection, ErrorsNameTheField) {
  const std::pair<json, std::string> cases[] = {
      {{{"years", 0}}, "scenario#/tco/years"},
      {{{"utilisation", 1.5}}, "scenario#/tco/utilisation"},
      {{{"capex_per_node", -1}}, "scenario#/tco/capex_per_node"},
      {{{"capex_per_nod", 1}}, "scenario#/tco/capex_per_nod"},
      {{{"loan_years", 2.5}}, "scenario#/tco/loan_years"},
      {{{"space_per_rack_unit_month", 10}, {"space_per_kw_month", 10}}, "scenario#/tco/space_per_rack_unit_month"},
  };
  for (const auto& [patch, where] : cases) {
    json doc = h800_fleet();
    doc["tco"].merge_patch(patch);
    auto r = request_of(doc);
    EXPECT_NE(first_error(r).find(where), std::string::npos) << patch.dump() << " -> " << first_error(r);
  }
  json none = h800_fleet();
  none.erase("tco");
  EXPECT_NE(first_error(request_of(none)).find("scenario#/tco: required by capplan tco"), std::string::npos);
  json no_years = h800_fleet();
  no_years["tco"].erase("years");
  EXPECT_NE(first_error(request_of(no_years)).find("scenario#/tco/years: required"), std::string::npos);
}

}  // namespace
}  // namespace capplan::data

namespace capplan::data {
namespace {

// A serving scenario at 100 requests/s, TP1 FP8 on 8-GPU H800 instances, owned for 2 years.
json served_fleet() {
  return {{"workload",
           {{"kind", "serve"},
            {"engine", "vllm"},
            {"weights", "fp8"},
            {"tp", 1},
            {"traffic", {{"arrival", "poisson"}, {"rate_per_s", 100}, {"input_tokens", 1000}, {"output_tokens", 300}}},
            {"slo", {{"e2e_s", 2.0}, {"percentile", 0.95}}}}},
          {"model", {{"preset", "llama3.1-8b"}}},
          {"cluster", {{"instance", "tencent-hccpnv5"}}},
          {"pricing", {{"usd_per_gpu_hour", 2}}},
          {"tco", {{"years", 2}, {"utilisation", 0.5}, {"capex_per_node", 300000}}}};
}

TEST(TcoServing, TheFleetIsTheWholeInstancesTheServingPlanNeeds) {
  const json doc = served_fleet();
  auto parsed = parse_fleet_scenario(doc, test::real_catalogs());
  ASSERT_TRUE(parsed) << to_string(parsed.error());
  auto r = serving_tco_request(doc, *parsed, test::real_catalogs());
  ASSERT_TRUE(r) << first_error(r);
  // The plan capplan serve makes for the same scenario.
  auto request = serve_request(doc, *parsed, test::real_catalogs());
  ASSERT_TRUE(request);
  const ServeResult planned = plan_request(*request);
  const sim::ServePlan& plan = planned.recommended().plan;
  ASSERT_TRUE(plan.feasible);
  ASSERT_TRUE(r->serving);
  EXPECT_EQ(r->serving->replicas, plan.replicas);
  EXPECT_EQ(r->serving->gpus, plan.gpus);
  EXPECT_GT(plan.replicas, 8);  // more than one instance's GPUs: whole nodes, rounded up
  EXPECT_EQ(r->inputs.nodes, (plan.gpus + 7) / 8);
  EXPECT_EQ(r->inputs.gpus_per_node, 8);
  const sim::Tco t = sim::tco(r->inputs);
  EXPECT_DOUBLE_EQ(t.capital, r->inputs.nodes * 300000.0);
  EXPECT_DOUBLE_EQ(t.useful_gpu_hours, r->inputs.nodes * 8 * 8760.0 * 2 * 0.5);
  const json out = tco_to_json(t, *r);
  EXPECT_EQ(out["serving"]["layout"], "TP1 fp8");
  EXPECT_EQ(out["fleet"]["nodes"], r->inputs.nodes);
}

TEST(TcoServing, NoLayoutMeetingTheTargetIsAnErrorSayingWhy) {
  json doc = served_fleet();
  doc["workload"]["slo"]["e2e_s"] = 0.01;
  auto parsed = parse_fleet_scenario(doc, test::real_catalogs());
  ASSERT_TRUE(parsed);
  auto r = serving_tco_request(doc, *parsed, test::real_catalogs());
  ASSERT_FALSE(r);
  EXPECT_NE(first_error(r).find("scenario#/workload: no layout meets the serving target"), std::string::npos)
      << first_error(r);
}

TEST(TcoFleet, NeedsNoModelOrTrainingButRefusesARunWithoutAModel) {
  const json fleet = {{"cluster", {{"gpu", "h100-sxm-80gb"}, {"gpus", 32}}},
                      {"tco", {{"years", 3}, {"utilisation", 0.5}, {"capex_per_node", 250000}}}};
  auto parsed = parse_fleet_scenario(fleet, test::real_catalogs());
  ASSERT_TRUE(parsed) << to_string(parsed.error());
  auto r = tco_request(fleet, *parsed, test::real_catalogs());
  ASSERT_TRUE(r) << first_error(r);
  EXPECT_EQ(r->inputs.nodes, 4);
  EXPECT_EQ(r->inputs.gpus_per_node, 8);
  EXPECT_FALSE(parse_scenario(fleet, test::real_catalogs()));  // estimate still needs the model
  json run = fleet;
  run["training"] = {{"tokens", "1T"}, {"global_batch", 64}};
  auto refused = parse_fleet_scenario(run, test::real_catalogs());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().front().where, "scenario#/training");
  EXPECT_NE(refused.error().front().message.find("give the model too"), std::string::npos);
}

}  // namespace
}  // namespace capplan::data
