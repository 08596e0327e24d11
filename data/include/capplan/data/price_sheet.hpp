// SPDX-License-Identifier: Apache-2.0
// Price sheets: the prices a user keeps (negotiated, from a provider's logged-in calculator), per
// instance and purchase model, with their currency, date and region, merged over the catalog
// (`--prices FILE`, scenario `pricing.sheet`; README "Keeping negotiated prices").
//
//   {"schema": "capplan-price-sheet/1", "currency": "CNY", "usd_per_unit": 0.14,
//    "usd_per_unit_date": "2026-11-30", "date": "2026-11-30", "region": "ap-shanghai",
//    "source": "negotiated, account X",
//    "prices": [{"instance": "tencent-hccpnv5",
//                "on_demand": {"per_node_hour": 220},          // or per_gpu_hour
//                "spot": {"per_gpu_hour": 9.5, "preemptions_per_node_hour": 0.02},
//                "reserved": {"per_gpu_hour": 18, "term_months": 12},
//                "monthly": {"per_node_month": 98000},         // 包年包月: whole months
//                "region": ..., "date": ..., "currency": ..., "usd_per_unit": ...}]}  // row overrides
//
// Prices are in the row's currency (the sheet's unless the row names one). null = not given. This
// file only maps a sheet onto the catalog and the purchase terms; the money is computed in sim/.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "capplan/data/catalog.hpp"
#include "capplan/data/scenario_io.hpp"
#include "capplan/sim/search/search.hpp"
#include "capplan/sim/workload/pricing.hpp"
#include "capplan/sim/workload/result.hpp"

namespace capplan::data {

inline constexpr std::string_view kPriceSheetSchema = "capplan-price-sheet/1";

// One instance's prices, per GPU-hour in `currency` units (a per-node figure divided by the
// instance's GPUs); empty = the sheet does not give it.
struct PriceSheetRow {
  std::string instance;
  std::string pointer;     // "/prices/3", for messages
  sim::Currency currency;  // the row's, else the sheet's (code, usd_per_unit, rate date)
  std::string region, date, source;
  int gpus_per_node = 0;  // the catalog's
  // One line per column of the sheet: on_demand, spot, reserved, monthly.
  std::optional<double> on_demand_per_gpu_hour;
  std::optional<double> spot_per_gpu_hour, spot_preemptions_per_node_hour;
  std::optional<double> reserved_per_gpu_hour, reserved_term_months;
  std::optional<double> monthly_per_node_month;
};

struct PriceSheet {
  std::string file;  // as the user named it
  sim::Currency currency;
  std::string date, region, source;
  std::vector<PriceSheetRow> rows;
  const PriceSheetRow* find(std::string_view instance) const;
};

// Validates a sheet strictly: unknown keys, instance ids not in the catalog (with a did-you-mean),
// duplicate rows, prices that are not positive finite numbers, unknown ISO 4217 codes, a non-USD
// currency without usd_per_unit. Errors read "<where>#<JSON pointer>: <message>; got <value>".
Result<PriceSheet> parse_price_sheet(const nlohmann::json& j, const Catalogs& catalogs, std::string_view where);
// Reads and parses the file (syntax errors by line and column); `where` defaults to the path.
Result<PriceSheet> load_price_sheet(const std::filesystem::path& file, const Catalogs& catalogs);

// The sheet over the catalog: each row replaces its instance's price (type "sheet", the row's
// on-demand figure, currency, region, date and source; a row without on_demand leaves the
// instance without an on-demand price, never the catalog's).
void merge_price_sheet(Catalogs& catalogs, const PriceSheet& sheet);

// Fills what `terms` leaves empty for its purchase model from the row: spot price and preemption
// rate; reserved price and term (the `reserved` column, else `monthly`: a per-node monthly price
// bought in whole months). Amounts are converted to US dollars; when `take_currency`, costs are
// shown in the row's currency. Returns what was taken and what the sheet lacks, in words.
std::vector<std::string> apply_price_sheet_terms(sim::PricingTerms& terms, const PriceSheetRow& row,
                                                 bool take_currency);

// The same for search offerings with a row in the sheet (their pricing's purchase model), plus a
// note for each --price replacing a sheet's on-demand price. Terms an offering already has (the
// scenario's own instance: the file's) are kept; only what they leave empty comes from the sheet.
std::vector<std::string> apply_price_sheet_to_offerings(std::vector<sim::Offering>& offerings,
                                                        const PriceSheet& sheet);

// The sheet applied to a parsed scenario's own instance: its purchase terms filled from the row
// (apply_price_sheet_terms; `currency_given`: the file named pricing.currency, which stays), and
// which on-demand price applied (the file's, the sheet's, or none), in words.
std::vector<std::string> apply_price_sheet_to_scenario(sim::Scenario& scenario, const PriceSheet& sheet,
                                                       bool currency_given);

// apply_price_sheet_to_scenario, plus the row's spot and reserved rates (and terms) for the
// purchase models the scenario does not use but where it leaves them empty: `capplan tco` compares
// owning with every way of renting.
std::vector<std::string> apply_price_sheet_rates(sim::Scenario& scenario, const PriceSheet& sheet, bool currency_given);

// The sheet a scenario document names (pricing.sheet), relative to the scenario file's directory
// (`scenario_file` "-" or empty: the working directory); nullopt when it names none.
std::optional<std::filesystem::path> scenario_price_sheet(const nlohmann::json& scenario,
                                                          std::string_view scenario_file);

// A scenario document read with its price sheet, as `capplan estimate FILE` reads it: the sheet
// (`sheet_file`, else the document's pricing.sheet relative to `scenario_file`) merged over a copy
// of the catalogs, parse_scenario over that copy, and the sheet's rates applied to the scenario's
// own instance (apply_price_sheet_to_scenario; a pricing.currency the document names stays).
// Errors name the field, or the sheet's file.
struct PricedScenario {
  ParsedScenario parsed;
  std::vector<std::string> sheet_notes;  // which on-demand price applied, in words
  std::string sheet;                     // the sheet read, empty when none
  std::optional<Catalogs> merged;        // the catalogs with the sheet, when one was read
  const Catalogs& catalogs(const Catalogs& base) const { return merged ? *merged : base; }
};
Result<PricedScenario> parse_priced_scenario(const nlohmann::json& doc, const Catalogs& catalogs,
                                             std::string_view scenario_file, const std::string& sheet_file = {},
                                             std::string_view where = "scenario");

// A sheet listing every catalog instance of `provider` with null prices, to fill in. Errors name
// "--provider" with a did-you-mean.
Result<nlohmann::ordered_json> price_sheet_template(const Catalogs& catalogs, std::string_view provider);

}  // namespace capplan::data
