// SPDX-License-Identifier: Apache-2.0
// Price sheets (data/price_sheet.hpp): strict reading, the merge over the catalog and its
// precedence, the purchase-model columns, the template.
#include "capplan/data/price_sheet.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "capplan/data/scenario_io.hpp"
#include "capplan/data/search_io.hpp"
#include "test_support.hpp"

namespace capplan::data {
namespace {

using nlohmann::json;

const Catalogs& catalogs() { return test::real_catalogs(); }

// CNY at 0.14 USD; tencent-hccpnv5 (8 x H800) at CNY 200 per node-hour = CNY 25 per GPU-hour.
json cny_sheet() {
  return json::parse(R"({
    "schema": "capplan-price-sheet/1", "currency": "CNY", "usd_per_unit": 0.14, "usd_per_unit_date": "2026-11-30",
    "date": "2026-11-30", "region": "ap-shanghai", "source": "negotiated, account X",
    "prices": [{"instance": "tencent-hccpnv5", "on_demand": {"per_node_hour": 200},
                "spot": {"per_gpu_hour": 10, "preemptions_per_node_hour": 0.02},
                "monthly": {"per_node_month": 98000}},
               {"instance": "tencent-hccpnv4s", "reserved": {"per_gpu_hour": 12, "term_months": 12}}]})");
}

PriceSheet parsed(const json& j) {
  auto s = parse_price_sheet(j, catalogs(), "sheet.json");
  EXPECT_TRUE(s.has_value()) << (s ? "" : to_string(s.error()));
  return s ? *s : PriceSheet{};
}

// The one error a bad sheet gives: where (file#pointer) and the message.
Diagnostic only_error(const json& j) {
  auto s = parse_price_sheet(j, catalogs(), "sheet.json");
  EXPECT_FALSE(s.has_value());
  if (s) return {};
  EXPECT_EQ(s.error().size(), 1u) << to_string(s.error());
  return s.error().front();
}

TEST(PriceSheet, ReadsRowsPerGpuHourInTheSheetsCurrency) {
  const PriceSheet s = parsed(cny_sheet());
  ASSERT_EQ(s.rows.size(), 2u);
  const PriceSheetRow* r = s.find("tencent-hccpnv5");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->currency.code, "CNY");
  EXPECT_DOUBLE_EQ(r->currency.usd_per_unit, 0.14);
  EXPECT_EQ(r->currency.rate_date, "2026-11-30");
  EXPECT_EQ(r->region, "ap-shanghai");
  EXPECT_EQ(r->date, "2026-11-30");
  EXPECT_EQ(r->source, "negotiated, account X");
  EXPECT_DOUBLE_EQ(*r->on_demand_per_gpu_hour, 25.0);  // 200 / 8
  EXPECT_DOUBLE_EQ(*r->spot_per_gpu_hour, 10.0);
  EXPECT_DOUBLE_EQ(*r->spot_preemptions_per_node_hour, 0.02);
  EXPECT_FALSE(r->reserved_per_gpu_hour.has_value());
  EXPECT_DOUBLE_EQ(*r->monthly_per_node_month, 98000.0);
}

TEST(PriceSheet, ARowOverridesCurrencyRegionAndDate) {
  json j = cny_sheet();
  j["prices"][1]["currency"] = "USD";
  j["prices"][1]["region"] = "ap-beijing";
  j["prices"][1]["date"] = "2026-10-01";
  const PriceSheet s = parsed(j);
  const PriceSheetRow* r = s.find("tencent-hccpnv4s");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->currency.code, "USD");
  EXPECT_DOUBLE_EQ(r->currency.usd_per_unit, 1.0);
  EXPECT_EQ(r->region, "ap-beijing");
  EXPECT_EQ(r->date, "2026-10-01");
}

TEST(PriceSheet, ErrorsNameTheFilePointerAndValue) {
  struct Case {
    std::function<void(json&)> edit;
    std::string where, message;
  };
  const std::vector<Case> cases = {
      {[](json& j) { j["prices"][0]["on_demnd"] = json::object(); }, "sheet.json#/prices/0/on_demnd",
       "unknown field"},
      {[](json& j) { j["prices"][0]["instance"] = "tencent-hccpnv6"; }, "sheet.json#/prices/0/instance",
       "unknown instance 'tencent-hccpnv6' (did you mean 'tencent-hccpnv5'"},
      {[](json& j) { j["prices"][0]["on_demand"]["per_node_hour"] = -3; }, "sheet.json#/prices/0/on_demand/per_node_hour",
       "must be > 0; got -3"},
      {[](json& j) { j["prices"][0]["spot"]["per_gpu_hour"] = 0; }, "sheet.json#/prices/0/spot/per_gpu_hour",
       "must be > 0; got 0"},
      {[](json& j) { j["prices"][0]["spot"]["preemptions_per_node_hour"] = 2; },
       "sheet.json#/prices/0/spot/preemptions_per_node_hour", "must be at most 1; got 2"},
      {[](json& j) { j["prices"][0]["monthly"]["per_node_month"] = "98k"; },
       "sheet.json#/prices/0/monthly/per_node_month", "expected a number; got string \"98k\""},
      {[](json& j) { j["currency"] = "RMB"; }, "sheet.json#/currency", "'RMB' (did you mean 'CNY'?)"},
      {[](json& j) {
         j.erase("usd_per_unit");
         j["prices"].erase(1);  // else each row priced in CNY says so
       },
       "sheet.json#/usd_per_unit",
       "required with currency CNY (US dollars per CNY, e.g. 0.14) is missing; /prices/0 (tencent-hccpnv5)"},
      {[](json& j) { j["prices"][1]["currency"] = "EUR"; }, "sheet.json#/prices/1/usd_per_unit",
       "required with currency EUR"},
      {[](json& j) { j["schema"] = "capplan-price-sheet/2"; }, "sheet.json#/schema",
       "must be \"capplan-price-sheet/1\"; got \"capplan-price-sheet/2\""},
      {[](json& j) { j["date"] = "30.11.2026"; }, "sheet.json#/date", "YYYY-MM-DD; got \"30.11.2026\""},
      {[](json& j) { j["prices"][1]["instance"] = "tencent-hccpnv5"; }, "sheet.json#/prices/1/instance",
       "already priced at /prices/0"},
      {[](json& j) { j["prices"][0]["on_demand"]["per_gpu_hour"] = 25; }, "sheet.json#/prices/0/on_demand",
       "give per_gpu_hour or per_node_hour, not both"},
  };
  for (const auto& c : cases) {
    json j = cny_sheet();
    c.edit(j);
    const Diagnostic d = only_error(j);
    EXPECT_EQ(d.where, c.where) << d.message;
    EXPECT_NE(d.message.find(c.message), std::string::npos) << d.where << ": " << d.message;
  }
}

TEST(PriceSheet, AMissingFileAndBadJsonNameTheFile) {
  const auto dir = test::scratch_dir();
  auto missing = load_price_sheet(dir / "none.json", catalogs());
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(to_string(missing.error()).find("none.json"), std::string::npos);
  test::write_file(dir / "bad.json", "{\"schema\": \"capplan-price-sheet/1\",\n \"prices\": [}");
  auto bad = load_price_sheet(dir / "bad.json", catalogs());
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(to_string(bad.error()).find("bad.json: invalid JSON at line 2"), std::string::npos) << to_string(bad.error());
}

TEST(PriceSheet, MergedOverTheCatalogItsPriceIsConvertedAtTheSheetsRate) {
  Catalogs c = catalogs();
  merge_price_sheet(c, parsed(cny_sheet()));
  const InstancePrice& p = c.find_instance("tencent-hccpnv5")->price;
  EXPECT_EQ(p.type, "sheet");
  EXPECT_EQ(p.currency, "CNY");
  // CNY 200 per node-hour / 8 GPUs = CNY 25 per GPU-hour; x 0.14 = USD 3.50 per GPU-hour.
  EXPECT_NEAR(*p.per_gpu_hour_usd(8), 3.50, 1e-12);
  // A row without an on_demand column replaces the catalog's price with none.
  EXPECT_FALSE(c.find_instance("tencent-hccpnv4s")->price.per_gpu_hour(8).has_value());
  EXPECT_EQ(c.find_instance("tencent-hccpnv4s")->price.type, "sheet");
  // Instances the sheet does not name keep the catalog's price.
  EXPECT_EQ(c.find_instance("aws-p5.48xlarge")->price.type, catalogs().find_instance("aws-p5.48xlarge")->price.type);

  OfferingFilter filter;
  filter.instances = {"tencent-hccpnv5"};
  auto list = offerings_from_catalog(c, filter);
  ASSERT_TRUE(list.has_value());
  ASSERT_EQ(list->offerings.size(), 1u);
  const sim::Offering& o = list->offerings.front();
  EXPECT_EQ(o.price_type, "sheet");
  EXPECT_NEAR(units::to_usd_per_hour(*o.node.price_per_gpu), 3.50, 1e-12);
  EXPECT_EQ(o.node.price_source, "price sheet: tencent-hccpnv5 sheet ap-shanghai 2026-11-30 CNY");
  ASSERT_TRUE(o.pricing.has_value());
  EXPECT_EQ(o.pricing->currency.code, "CNY");
}

TEST(PriceSheet, PricePrecedenceFlagOverSheetOverCatalog) {
  Catalogs c = catalogs();
  const PriceSheet sheet = parsed(cny_sheet());
  merge_price_sheet(c, sheet);
  OfferingFilter filter;
  filter.instances = {"tencent-hccpnv5"};
  auto list = offerings_from_catalog(c, filter, {{"tencent-hccpnv5", 2.1}});
  ASSERT_TRUE(list.has_value());
  EXPECT_EQ(list->offerings.front().price_type, "user");
  EXPECT_DOUBLE_EQ(units::to_usd_per_hour(*list->offerings.front().node.price_per_gpu), 2.1);
  const auto notes = apply_price_sheet_to_offerings(list->offerings, sheet);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "the price given for tencent-hccpnv5 replaces the price sheet's on-demand CNY 25 per GPU-hour");
}

sim::Scenario scenario_on(const Catalogs& c, const std::string& pricing) {
  const std::string text = R"({"model": {"preset": "llama2-7b"},
    "training": {"tokens": "10B", "global_batch": 64, "precision": "bf16"},
    "cluster": {"instance": "tencent-hccpnv5", "nodes": 1})" +
                           (pricing.empty() ? std::string() : ", \"pricing\": " + pricing) + "}";
  auto p = parse_scenario_text(text, c);
  EXPECT_TRUE(p.has_value()) << (p ? "" : to_string(p.error()));
  return p ? p->scenario : sim::Scenario{};
}

TEST(PriceSheet, TheScenariosOwnPriceWinsOverTheSheet) {
  Catalogs c = catalogs();
  const PriceSheet sheet = parsed(cny_sheet());
  merge_price_sheet(c, sheet);

  sim::Scenario from_sheet = scenario_on(c, "");
  EXPECT_NEAR(units::to_usd_per_hour(*from_sheet.cluster.price_per_gpu), 3.50, 1e-12);
  EXPECT_EQ(from_sheet.pricing.currency.code, "CNY");
  auto notes = apply_price_sheet_to_scenario(from_sheet, sheet, false);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "on-demand price of tencent-hccpnv5 from the price sheet sheet.json (CNY 25 per GPU-hour, "
                      "ap-shanghai, 2026-11-30)");

  sim::Scenario own = scenario_on(c, R"({"usd_per_gpu_hour": 2.0})");
  EXPECT_DOUBLE_EQ(units::to_usd_per_hour(*own.cluster.price_per_gpu), 2.0);
  notes = apply_price_sheet_to_scenario(own, sheet, false);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "the scenario's pricing.usd_per_gpu_hour applies, not the price sheet's on-demand CNY 25 per "
                      "GPU-hour for tencent-hccpnv5");

  // Without the sheet the catalog has no Tencent price at all.
  EXPECT_FALSE(scenario_on(catalogs(), "").cluster.price_per_gpu.has_value());
}

TEST(PriceSheet, SpotColumnFillsWhatTheScenarioLeavesEmpty) {
  const PriceSheet sheet = parsed(cny_sheet());
  sim::PricingTerms terms{.model = sim::PurchaseModel::spot};
  auto notes = apply_price_sheet_terms(terms, *sheet.find("tencent-hccpnv5"), true);
  EXPECT_NEAR(*terms.spot.usd_per_gpu_hour, 1.40, 1e-12);  // CNY 10 x 0.14
  EXPECT_DOUBLE_EQ(*terms.spot.preemptions_per_node_hour, 0.02);
  EXPECT_EQ(terms.currency.code, "CNY");
  EXPECT_EQ(notes.size(), 2u);

  sim::PricingTerms given{.model = sim::PurchaseModel::spot, .spot = {.usd_per_gpu_hour = 1.0}};
  apply_price_sheet_terms(given, *sheet.find("tencent-hccpnv5"), false);
  EXPECT_DOUBLE_EQ(*given.spot.usd_per_gpu_hour, 1.0);  // the scenario's
  EXPECT_DOUBLE_EQ(*given.spot.preemptions_per_node_hour, 0.02);
  EXPECT_EQ(given.currency.code, "USD");
}

TEST(PriceSheet, AMissingColumnLeavesThePriceUnknownAndSaysSo) {
  const PriceSheet sheet = parsed(cny_sheet());
  sim::PricingTerms terms{.model = sim::PurchaseModel::spot};
  auto notes = apply_price_sheet_terms(terms, *sheet.find("tencent-hccpnv4s"), true);
  EXPECT_FALSE(terms.spot.usd_per_gpu_hour.has_value());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "the price sheet's row for tencent-hccpnv4s has no spot column, so the spot price is unknown");
}

TEST(PriceSheet, ReservedColumnAndMonthlySubscription) {
  const PriceSheet sheet = parsed(cny_sheet());
  sim::PricingTerms reserved{.model = sim::PurchaseModel::reserved};
  apply_price_sheet_terms(reserved, *sheet.find("tencent-hccpnv4s"), true);
  EXPECT_NEAR(*reserved.reserved.usd_per_gpu_hour, 12 * 0.14, 1e-12);
  EXPECT_NEAR(*reserved.reserved.term_hours, 12 * 730.0, 1e-9);
  EXPECT_FALSE(reserved.reserved.term_block_hours.has_value());

  // No reserved column: the monthly subscription, CNY 98,000 per node-month for 8 GPUs at 0.14 =
  // USD 13,720 per node-month = 13,720 / 8 / 730 = USD 2.349315... per GPU-hour, in whole months.
  sim::PricingTerms monthly{.model = sim::PurchaseModel::reserved};
  auto notes = apply_price_sheet_terms(monthly, *sheet.find("tencent-hccpnv5"), true);
  EXPECT_NEAR(*monthly.reserved.usd_per_gpu_hour, 13720.0 / 8 / 730, 1e-12);
  EXPECT_FALSE(monthly.reserved.term_hours.has_value());
  EXPECT_DOUBLE_EQ(*monthly.reserved.term_block_hours, 730.0);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("monthly subscription"), std::string::npos) << notes[0];
}

TEST(PriceSheet, ScenarioSheetPathIsRelativeToTheScenarioFile) {
  const json doc = {{"pricing", {{"sheet", "prices/mine.json"}}}};
  EXPECT_EQ(*scenario_price_sheet(doc, "/home/u/plans/run.json"), std::filesystem::path("/home/u/plans/prices/mine.json"));
  EXPECT_EQ(*scenario_price_sheet(doc, "-"), std::filesystem::path("prices/mine.json"));
  EXPECT_EQ(*scenario_price_sheet(doc, ""), std::filesystem::path("prices/mine.json"));
  EXPECT_FALSE(scenario_price_sheet(json{{"pricing", {{"usd_per_gpu_hour", 2}}}}, "a.json").has_value());
}

TEST(PriceSheet, TheScenarioReaderAcceptsPricingSheet) {
  sim::Scenario s = scenario_on(catalogs(), R"({"sheet": "mine.json"})");
  EXPECT_EQ(s.pricing.model, sim::PurchaseModel::on_demand);
  auto bad = parse_scenario_text(R"({"model": {"preset": "llama2-7b"},
    "training": {"tokens": "10B", "global_batch": 64, "precision": "bf16"},
    "cluster": {"instance": "tencent-hccpnv5", "nodes": 1}, "pricing": {"sheet": 3}})",
                                 catalogs());
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(to_string(bad.error()).find("scenario#/pricing/sheet: expected a string"), std::string::npos)
      << to_string(bad.error());
}

TEST(PriceSheet, TheTemplateListsEveryTencentInstanceAndLoads) {
  auto t = price_sheet_template(catalogs(), "tencent");
  ASSERT_TRUE(t.has_value());
  std::vector<std::string> expected;
  for (const auto& i : catalogs().instances) {
    if (i.provider == "tencent") expected.push_back(i.id);
  }
  std::vector<std::string> listed;
  for (const auto& row : (*t)["prices"]) listed.push_back(row["instance"]);
  EXPECT_EQ(listed, expected);
  EXPECT_GE(listed.size(), 10u);
  const json sheet = json::parse(t->dump());
  const PriceSheet s = parsed(sheet);  // null prices = not given
  ASSERT_EQ(s.rows.size(), expected.size());
  for (const auto& r : s.rows) {
    EXPECT_FALSE(r.on_demand_per_gpu_hour || r.spot_per_gpu_hour || r.reserved_per_gpu_hour ||
                 r.monthly_per_node_month);
  }
  // The committed template is this output.
  EXPECT_EQ(test::read_json(test::source_data_dir() / "price-sheets" / "tencent-template.json"), sheet);

  auto unknown = price_sheet_template(catalogs(), "tencnet");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(to_string(unknown.error()).find("did you mean 'tencent'"), std::string::npos) << to_string(unknown.error());
}

}  // namespace
}  // namespace capplan::data
