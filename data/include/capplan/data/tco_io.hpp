// SPDX-License-Identifier: Apache-2.0
// The scenario's `tco` section (own versus rent over years, `capplan tco`): parsed strictly, the
// user's amounts converted from pricing.currency to US dollars for sim::tco, and the result
// written back in that currency as a table, JSON or CSV.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "capplan/data/catalog.hpp"
#include "capplan/data/scenario_io.hpp"
#include "capplan/data/serve_io.hpp"
#include "capplan/sim/workload/result.hpp"
#include "capplan/sim/tco/tco.hpp"

namespace capplan::data {

// The serving plan a serve scenario's fleet is sized by (serving_tco_request).
struct ServingFleet {
  std::string model;   // the model served
  std::string layout;  // the recommended layout, "TP1 fp8"
  int replicas = 0;
  int gpus = 0;       // GPUs the replicas use
  int instances = 0;  // whole instances they occupy at the peak: the nodes owned
};

struct TcoRequest {
  sim::TcoInputs inputs;          // amounts in US dollars
  sim::Currency currency;         // the scenario's pricing.currency
  std::string node_power_source;  // where the node power came from (a sentence)
  std::vector<std::string> warnings;
  std::string fleet;  // "16 x tencent-hccpnv5 (128 x h800-sxm-80gb)"
  std::optional<ServingFleet> serving;  // set when a serving plan sized the fleet
};

// The `tco` section of the scenario document `doc` over the parsed scenario (fleet, currency and
// rent rates come from it). Errors name the field: "scenario#/tco/years: required (...) is missing".
Result<TcoRequest> tco_request(const nlohmann::json& doc, const ParsedScenario& scenario, const Catalogs& catalogs,
                               std::string_view where = "scenario");

// A serve scenario's fleet (workload.kind serve): the serving planner's recommended layout
// (plan_request, sim/serve) for the scenario's traffic and target, owned as the whole instances its
// replicas occupy at the peak, over the `tco` section's years; then as tco_request. Errors name the
// field; when no layout meets the target, the error says why (as capplan serve does).
Result<TcoRequest> serving_tco_request(const nlohmann::json& doc, const ParsedScenario& scenario,
                                       const Catalogs& catalogs, std::string_view where = "scenario");

// Checks a `tco` section on its own (types, ranges, unknown keys), adding what is wrong to
// `diags` under `where` ("scenario"): every reader of a scenario checks it, capplan tco uses it.
void check_tco_section(const nlohmann::json& section, std::string_view where, Diagnostics& diags);

nlohmann::json tco_to_json(const sim::Tco& t, const TcoRequest& r);
std::string tco_to_table(const sim::Tco& t, const TcoRequest& r);
std::string tco_to_csv(const sim::Tco& t, const TcoRequest& r);  // one row per year, then the total

}  // namespace capplan::data
