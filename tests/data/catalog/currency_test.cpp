// SPDX-License-Identifier: Apache-2.0
// Currencies (ISO 4217 codes, rates to US dollars, money in the user's currency) and the
// scenario's own pricing in a search over catalog offerings.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "capplan/data/catalog.hpp"
#include "capplan/data/currency.hpp"
#include "capplan/data/findings.hpp"
#include "capplan/data/scenario_io.hpp"
#include "capplan/data/search_io.hpp"
#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/search/search.hpp"
#include "test_support.hpp"

namespace capplan::data {
namespace {

using nlohmann::json;
using test::has_diag;

TEST(Currency, Iso4217CodesAreCheckedAndCommonMistakesNamed) {
  EXPECT_TRUE(is_currency_code("USD"));
  EXPECT_TRUE(is_currency_code("CNY"));
  EXPECT_TRUE(is_currency_code("EUR"));
  EXPECT_FALSE(is_currency_code("RMB"));
  EXPECT_FALSE(is_currency_code("cny"));
  EXPECT_FALSE(is_currency_code("$"));
  EXPECT_NE(currency_code_error("RMB").find("did you mean 'CNY'?"), std::string::npos);
  EXPECT_NE(currency_code_error("cny").find("did you mean 'CNY'?"), std::string::npos);
  EXPECT_NE(currency_code_error("XYZ").find("ISO 4217"), std::string::npos);
}

TEST(Currency, MoneyIsLabelledAndConvertedBack) {
  const sim::Currency cny{"CNY", 0.1389, "2026-12-01"};
  EXPECT_EQ(money_prefix(sim::Currency{}), "$");
  EXPECT_EQ(money_prefix(cny), "CNY ");
  EXPECT_EQ(from_usd(15.0 * 0.1389, cny), 15.0);  // a price typed as 15 reads back as 15
  EXPECT_EQ(from_usd(2.5, sim::Currency{}), 2.5);  // US dollars untouched
  EXPECT_EQ(rate_text(cny), "CNY at 0.1389 USD per unit (2026-12-01)");
  EXPECT_EQ(rate_text(sim::Currency{}), "");
}

// The good fixtures with lambda-8x-a100-80gb priced at CNY 2.79 (rate 0.14) and aws-p5.48xlarge
// priced in CNY without a rate.
std::filesystem::path cny_catalogs() {
  return test::catalogs_with("instances.json", [](json& j) {
    j["instances"][1]["price"]["currency"] = "CNY";
    j["instances"][1]["price"]["usd_per_unit"] = 0.14;
    j["instances"][0]["price"]["currency"] = "CNY";
  });
}

TEST(CatalogCurrency, UnknownCodeIsAnErrorAtLoad) {
  auto dir = test::catalogs_with("instances.json", [](json& j) { j["instances"][0]["price"]["currency"] = "RMB"; });
  auto c = load_catalogs(dir);
  ASSERT_FALSE(c);
  EXPECT_TRUE(has_diag(c.error(), "instances.json#/instances/0/price/currency", "did you mean 'CNY'?"));
}

TEST(CatalogCurrency, NonUsdPriceIsConvertedAtItsRateOrUnknownWithoutOne) {
  auto c = load_catalogs(cny_catalogs());
  ASSERT_TRUE(c) << to_string(c.error());
  const InstanceEntry* lambda = c->find_instance("lambda-8x-a100-80gb");
  const InstanceEntry* p5 = c->find_instance("aws-p5.48xlarge");
  ASSERT_TRUE(lambda && p5);
  EXPECT_EQ(*lambda->price.per_gpu_hour(8), 2.79);  // in CNY, as the catalog writes it
  EXPECT_DOUBLE_EQ(*lambda->price.per_gpu_hour_usd(8), 2.79 * 0.14);
  EXPECT_EQ(lambda->price.money().code, "CNY");
  EXPECT_TRUE(p5->price.per_gpu_hour(8).has_value());
  EXPECT_FALSE(p5->price.per_gpu_hour_usd(8).has_value());  // never read as dollars

  // A scenario on each: the converted price shown in CNY; the unconvertible one unknown, said so.
  auto scenario = [&](const char* instance) {
    return parse_scenario(json{{"model", {{"preset", "llama2-7b"}}},
                               {"training", {{"tokens", "10B"}, {"global_batch", 64}, {"precision", "bf16"}}},
                               {"cluster", {{"instance", instance}, {"nodes", 1}}},
                               {"strategy", "auto"}},
                          *c);
  };
  auto on_lambda = scenario("lambda-8x-a100-80gb");
  ASSERT_TRUE(on_lambda) << to_string(on_lambda.error());
  EXPECT_DOUBLE_EQ(units::to_usd_per_hour(*on_lambda->scenario.cluster.price_per_gpu), 2.79 * 0.14);
  EXPECT_EQ(on_lambda->scenario.pricing.currency.code, "CNY");
  auto on_p5 = scenario("aws-p5.48xlarge");
  ASSERT_TRUE(on_p5) << to_string(on_p5.error());
  EXPECT_FALSE(on_p5->scenario.cluster.price_per_gpu.has_value());
  ASSERT_EQ(on_p5->warnings.size(), 1u);
  EXPECT_TRUE(on_p5->warnings[0].starts_with("scenario#/cluster/instance: the catalog's price of 'aws-p5.48xlarge' is "
                                             "in CNY without a rate to US dollars"))
      << on_p5->warnings[0];

  // As offerings: the same, with a finding for the price that cannot be compared.
  OfferingFilter f;
  f.instances = {"lambda-8x-a100-80gb", "aws-p5.48xlarge"};
  auto l = offerings_from_catalog(*c, f);
  ASSERT_TRUE(l.has_value());
  ASSERT_EQ(l->offerings.size(), 2u);
  for (const auto& o : l->offerings) {
    if (o.instance_id == "lambda-8x-a100-80gb") {
      ASSERT_TRUE(o.pricing.has_value());
      EXPECT_EQ(o.pricing->currency.code, "CNY");
      EXPECT_DOUBLE_EQ(units::to_usd_per_hour(*o.node.price_per_gpu), 2.79 * 0.14);
    } else {
      EXPECT_FALSE(o.node.price_per_gpu.has_value());
    }
  }
  ASSERT_EQ(l->findings.size(), 1u);
  EXPECT_EQ(render(l->findings[0]),
            "aws-p5.48xlarge: its catalog price is in CNY with no rate to US dollars (price.usd_per_unit), so it is "
            "treated as unknown, never as dollars (give a price)");
}

// Llama 2 7B on Tencent HCCPNV5 (H800) with CNY spot terms, against the shipped catalog.
json tencent_spot() {
  return json::parse(R"({
    "model": {"preset": "llama2-7b"},
    "training": {"tokens": "20B", "global_batch": 256, "precision": "bf16"},
    "cluster": {"instance": "tencent-hccpnv5", "nodes": 2},
    "strategy": "auto",
    "pricing": {"currency": "CNY", "usd_per_unit": 0.14, "usd_per_unit_date": "2026-12-01",
                "usd_per_gpu_hour": 25, "purchase": "spot",
                "spot": {"usd_per_gpu_hour": 10, "preemptions_per_node_hour": 0.002}}})");
}

TEST(ScenarioCurrency, PricesAreReadInTheirCurrencyAndKeptInUsd) {
  auto p = parse_scenario(tencent_spot(), test::real_catalogs());
  ASSERT_TRUE(p) << to_string(p.error());
  const sim::PricingTerms& t = p->scenario.pricing;
  EXPECT_EQ(t.currency, (sim::Currency{"CNY", 0.14, "2026-12-01"}));
  EXPECT_DOUBLE_EQ(units::to_usd_per_hour(*p->scenario.cluster.price_per_gpu), 25 * 0.14);
  EXPECT_DOUBLE_EQ(*t.spot.usd_per_gpu_hour, 10 * 0.14);
  EXPECT_EQ(*t.spot.preemptions_per_node_hour, 0.002);  // not money: untouched
}

TEST(ScenarioCurrency, BadCodesAndMissingRatesNameTheField) {
  auto with = [](const json& pricing) {
    json j = tencent_spot();
    j["pricing"] = pricing;
    return parse_scenario(j, test::real_catalogs());
  };
  auto rmb = with({{"currency", "RMB"}, {"usd_per_unit", 0.14}, {"usd_per_gpu_hour", 25}});
  ASSERT_FALSE(rmb);
  EXPECT_TRUE(has_diag(rmb.error(), "scenario#/pricing/currency", "did you mean 'CNY'?"));
  auto no_rate = with({{"currency", "CNY"}, {"usd_per_gpu_hour", 25}});
  ASSERT_FALSE(no_rate);
  EXPECT_TRUE(has_diag(no_rate.error(), "scenario#/pricing/usd_per_unit", "required with currency CNY"));
  auto usd_rate = with({{"usd_per_unit", 0.5}, {"usd_per_gpu_hour", 25}});
  ASSERT_FALSE(usd_rate);
  EXPECT_TRUE(has_diag(usd_rate.error(), "scenario#/pricing/usd_per_unit", "must be 1 (or absent) with currency USD"));
  auto bad_date = with({{"currency", "CNY"}, {"usd_per_unit", 0.14}, {"usd_per_unit_date", "Dec 1"},
                        {"usd_per_gpu_hour", 25}});
  ASSERT_FALSE(bad_date);
  EXPECT_TRUE(has_diag(bad_date.error(), "scenario#/pricing/usd_per_unit_date", "must be a date"));
}

TEST(ScenarioCurrency, EstimateOutputsLabelEveryCostWithTheCurrency) {
  auto p = parse_scenario(tencent_spot(), test::real_catalogs());
  ASSERT_TRUE(p) << to_string(p.error());
  auto e = sim::estimate(p->scenario, sim::DatasheetCost(p->scenario.cluster));
  ASSERT_TRUE(e) << to_string(e.error());
  const json j = estimate_to_json(*e, *p);
  EXPECT_EQ(j["currency"], "CNY");
  EXPECT_EQ(j["usd_per_unit"], 0.14);
  EXPECT_EQ(j["usd_per_unit_date"], "2026-12-01");
  EXPECT_EQ(j["purchase"], "spot");
  EXPECT_EQ(j["price_per_gpu_hour"], 25.0);
  EXPECT_NEAR(j["usd_per_gpu_hour"].get<double>(), 3.5, 1e-12);  // the *_usd keys stay US dollars
  EXPECT_NEAR(j["cost"].get<double>() * 0.14, j["cost_usd"].get<double>(), 1e-6 * j["cost_usd"].get<double>());
  EXPECT_NEAR(j["total_cost"].get<double>() * 0.14, j["total_cost_usd"].get<double>(),
              1e-6 * j["total_cost_usd"].get<double>());
  EXPECT_EQ(j["cost_breakdown"]["currency"], "CNY");
  EXPECT_EQ(j["cost_breakdown"]["per_gpu_hour"], 10.0);

  const std::string table = estimate_to_table(*e, *p);
  EXPECT_EQ(table.find('$'), std::string::npos) << table;
  EXPECT_NE(table.find("CNY 25.00 per GPU-hour"), std::string::npos) << table;
  EXPECT_NE(table.find("CNY at 0.14 USD per unit (2026-12-01)"), std::string::npos) << table;

  const std::string csv = estimate_to_csv(*e, *p);
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_NE(header.find(",currency,usd_per_unit,purchase,cost,price_per_gpu_hour,total_cost,"), std::string::npos);
  EXPECT_NE(csv.find(",CNY,0.14,spot,"), std::string::npos) << csv;
}

// The search path: `--gpu h800-sxm-80gb` selects the scenario's own instance from the catalog.
struct OwnSearch {
  ParsedScenario parsed;
  sim::SearchRequest request;
  std::vector<sim::Finding> findings;
};
OwnSearch own_search(const std::map<std::string, double>& prices, std::vector<std::string> gpus) {
  OwnSearch s;
  auto p = parse_scenario(tencent_spot(), test::real_catalogs());
  EXPECT_TRUE(p) << to_string(p.error());
  s.parsed = *p;
  OfferingFilter f;
  f.gpus = std::move(gpus);
  auto l = offerings_from_catalog(test::real_catalogs(), f, prices);
  EXPECT_TRUE(l.has_value());
  s.request.base = p->scenario;
  s.request.offerings = l->offerings;
  s.request.node_counts = {2};
  s.request.threads = 1;
  s.findings = apply_scenario_pricing(s.request.offerings, s.request.base, true, prices);
  return s;
}

TEST(ScenarioPricingInSearch, ItsOwnInstanceKeepsPriceTermsAndCurrency) {
  OwnSearch s = own_search({}, {"h800-sxm-80gb"});
  EXPECT_TRUE(s.findings.empty());
  auto result = sim::search(s.request);
  ASSERT_TRUE(result.has_value());
  ASSERT_FALSE(result->plans.empty());
  const sim::Plan& plan = result->plans.front();
  EXPECT_EQ(plan.instance_id, "tencent-hccpnv5");
  EXPECT_TRUE(plan.price_known);
  EXPECT_EQ(plan.purchase, sim::PurchaseModel::spot);
  EXPECT_EQ(plan.currency.code, "CNY");
  EXPECT_GT(plan.estimate.goodput.preemptions_per_node_hour, 0.0);
  ASSERT_TRUE(plan.estimate.goodput.cost.usd_per_gpu_hour.has_value());
  EXPECT_DOUBLE_EQ(*plan.estimate.goodput.cost.usd_per_gpu_hour, 10 * 0.14);
  const json j = search_result_to_json(*result, s.request, s.parsed);
  EXPECT_EQ(j["plans"][0]["currency"], "CNY");
  EXPECT_EQ(j["plans"][0]["purchase"], "spot");
  const std::string table = search_result_to_table(*result, s.request, s.parsed);
  EXPECT_EQ(table.find("price unknown"), std::string::npos) << table;
  EXPECT_NE(table.find("purchase: spot in CNY (tencent-hccpnv5); costs ranked in USD, CNY at 0.14 USD per unit"),
            std::string::npos)
      << table;
}

TEST(ScenarioPricingInSearch, AGivenPriceReplacesTheFilesAndSaysSoKeepingTheTerms) {
  OwnSearch s = own_search({{"tencent-hccpnv5", 3.0}}, {"h800-sxm-80gb"});
  ASSERT_EQ(s.findings.size(), 1u);
  EXPECT_EQ(render(s.findings[0]),
            "tencent-hccpnv5: the price given (3 USD per GPU-hour) replaces the scenario's (3.5 USD); the scenario's "
            "purchase terms (spot) and currency still apply");
  ASSERT_EQ(s.request.offerings.size(), 1u);
  const sim::Offering& o = s.request.offerings[0];
  EXPECT_EQ(units::to_usd_per_hour(*o.node.price_per_gpu), 3.0);
  ASSERT_TRUE(o.pricing.has_value());
  EXPECT_EQ(o.pricing->model, sim::PurchaseModel::spot);
  EXPECT_EQ(*o.pricing->spot.preemptions_per_node_hour, 0.002);
}

TEST(ScenarioPricingInSearch, OtherOfferingsAreOnDemandAndAnUnofferedInstanceIsSaid) {
  OwnSearch s = own_search({}, {"h100-sxm-80gb"});
  ASSERT_FALSE(s.request.offerings.empty());
  for (const auto& o : s.request.offerings) {
    ASSERT_TRUE(o.pricing.has_value()) << o.instance_id;
    EXPECT_EQ(o.pricing->model, sim::PurchaseModel::on_demand) << o.instance_id;
  }
  ASSERT_EQ(s.findings.size(), 1u);
  EXPECT_EQ(s.findings[0].code, sim::FindingCode::scenario_pricing_not_offered);
  EXPECT_NE(render(s.findings[0]).find("its own instance tencent-hccpnv5, which is not among the offerings"),
            std::string::npos);
}

}  // namespace
}  // namespace capplan::data
