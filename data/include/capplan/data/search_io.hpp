// SPDX-License-Identifier: Apache-2.0
// The planner's data side: offerings from the instance catalog (filtered, with the catalog's
// prices and user-given ones), and JSON / CSV / table renderings of a sim::SearchResult.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "capplan/data/catalog.hpp"
#include "capplan/data/scenario_io.hpp"
#include "capplan/sim/workload/result.hpp"
#include "capplan/sim/search/search.hpp"

namespace capplan::data {

// '*' matches any run of characters, '?' one character; case-sensitive (ids are lower case).
bool glob_match(std::string_view pattern, std::string_view text);

// Which catalog instances to offer. Each list empty = no filter on that field; an instance must
// match one entry of every non-empty list.
struct OfferingFilter {
  std::vector<std::string> instances;  // globs on instance ids: "aws-*", "gcp-a3-*"
  std::vector<std::string> gpus;       // GPU ids: "h100-sxm-80gb"
  std::vector<std::string> providers;  // "aws", "gcp", ...
  std::vector<std::string> regions;    // globs on the price's region: "us-*"
};

struct OfferingList {
  std::vector<sim::Offering> offerings;  // catalog order
  std::vector<std::string> notes;        // anything the filters or overrides changed that a user should know
  std::vector<sim::Finding> findings;    // the same, as findings (catalog prices that cannot be compared)
};

// Offerings for the instances that pass `filter`, each with the catalog's price in US dollars (its
// type, region and date in price_source) or, for ids in `prices` (USD per GPU-hour), that price
// instead ("user"). A catalog price in another currency is converted at its usd_per_unit and the
// offering carries that currency (its pricing); without a rate the price is unknown and a
// catalog_price_without_rate finding says so. `inter_node_gbps_per_gpu`, when given, replaces the catalog's network figure (and
// fills it where the catalog has none; without it such instances are offered for one node only).
// Errors name the flag: unknown GPU ids and providers ("--gpu"), price ids that are not catalog
// instances ("--price"), and a filter that leaves nothing ("--instances").
Result<OfferingList> offerings_from_catalog(const Catalogs& catalogs, const OfferingFilter& filter,
                                            const std::map<std::string, double>& prices = {},
                                            std::optional<double> inter_node_gbps_per_gpu = std::nullopt);

// The scenario's own pricing in a search over catalog offerings: its instance (when offered) gets
// the scenario's purchase terms and currency, and its price unless `prices` (the --price flag)
// names that instance; every other offering without terms of its own is on demand at its catalog
// price. `pricing_given`: the file had a pricing section. Returns what the user should know: the
// own instance not offered (scenario_pricing_not_offered), a given price replacing the file's
// (price_replaces_scenario_price).
std::vector<sim::Finding> apply_scenario_pricing(std::vector<sim::Offering>& offerings, const sim::Scenario& scenario,
                                                 bool pricing_given, const std::map<std::string, double>& prices = {});

// `capplan search --purchase MODEL`: the scenario's purchase model for every offering, not only
// for its own instance (which apply_scenario_pricing already gave the scenario's terms). The terms
// without a price apply to every offering (spot preemptions, a reserved term, the site's PUE,
// electricity, operations and utilisation); the rates (spot, reserved, idle, an on-prem node's
// price and power) are the scenario's own instance's only. Another offering is charged a catalog
// price of that model where its price is one (price type "spot" / "reserved", with its source);
// otherwise its cost is unknown (never invented, never silently on demand) and the returned note
// lists it. On demand changes nothing. Call after apply_scenario_pricing.
std::vector<sim::Finding> apply_purchase_to_all(std::vector<sim::Offering>& offerings, const sim::Scenario& scenario);

// Parses "id=usd_per_gpu_hour" (the --price flag). Errors name the flag and the text.
Result<std::pair<std::string, double>> parse_price_override(std::string_view text);

// Node counts from "8-64" (every count in the range), "8,16,32", or a mix ("8,16-20").
// Errors name `flag` and the text.
Result<std::vector<int>> parse_node_counts(std::string_view text, std::string_view flag = "--nodes");

// The result as JSON: configurations_evaluated, elapsed_s, stats, objective, constraints, plans
// (each the estimate object exactly as `capplan estimate --format json` prints it, plus
// instance, gpu, nodes, gpus, price_known, meets_deadline, meets_budget), pareto (the same),
// failure (null or {constraint, message, closest}), explanation, runner_ups and notes.
// `base` supplies the model id and parse warnings echoed in each plan's estimate.
nlohmann::json search_result_to_json(const sim::SearchResult& r, const sim::SearchRequest& request,
                                     const ParsedScenario& base);

// One header line, then one line per plan (rank, the plan's place and the estimate's scalars).
std::string search_result_to_csv(const sim::SearchResult& r, const sim::SearchRequest& request,
                                 const ParsedScenario& base);

// A terminal table: the plans, the Pareto front, the explanation and runner-ups.
std::string search_result_to_table(const sim::SearchResult& r, const sim::SearchRequest& request,
                                   const ParsedScenario& base);

}  // namespace capplan::data
