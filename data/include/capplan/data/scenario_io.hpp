// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "capplan/data/catalog.hpp"
#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/workload/result.hpp"

namespace capplan::data {

// A scenario after parsing: the plain sim struct plus what output needs to echo.
struct ParsedScenario {
  sim::Scenario scenario;
  std::string model_id;  // preset id or "custom"
  bool strategy_all_auto = false;
  std::vector<std::string> warnings;  // e.g. renamed keys
  // The warnings about inputs given where nothing reads them, each also in `warnings`: capplan
  // search, which words the scenario's other findings itself, notes these.
  std::vector<std::string> unused_inputs;
};

// Numbers or strings with SI suffixes: "2T" = 2e12, "4M" = 4e6, "1.5k", "3e9".
// Returns nullopt for anything else (including NaN/Inf and negatives are allowed here:
// range checks belong to the field).
std::optional<double> parse_si(std::string_view text);
// Counts (tokens): parse_si's suffixes, decimal as there, and the binary ones, powers of 1024:
// "4Ki" = 4096, "4Mi" = 4194304 (2^22), "2Gi", "1Ti", "1Pi".
std::optional<double> parse_count(std::string_view text);

// Parses and validates a scenario (CONTRACT.md). Unknown keys, wrong types, out-of-range and
// unknown catalog ids are errors naming the field: "scenario#/cluster/gpus: must be a positive
// integer; got -4". All errors are collected. `where` prefixes the JSON pointers.
Result<ParsedScenario> parse_scenario(const nlohmann::json& j, const Catalogs& catalogs,
                                      std::string_view where = "scenario");

// A scenario read for the fleet it owns (capplan tco): as parse_scenario, except that the model may
// be left out, and with it the training section; such a scenario has its cluster, pricing and tco
// terms only (a workload, training or strategy section without a model is an error), and
// ParsedScenario::model_id stays empty.
Result<ParsedScenario> parse_fleet_scenario(const nlohmann::json& j, const Catalogs& catalogs,
                                            std::string_view where = "scenario");

// Parses text first ("scenario: invalid JSON at line 3, column 5: ...").
Result<ParsedScenario> parse_scenario_text(std::string_view text, const Catalogs& catalogs,
                                           std::string_view where = "scenario");

// The JSON document of a scenario file, not yet validated, so that command-line flags can be
// applied before parse_scenario: syntax errors by line and column, and duplicate keys, as
// parse_scenario_text reports them.
Result<nlohmann::json> parse_scenario_document(std::string_view text, std::string_view where = "scenario");

// The built-in example scenario used by the README's first command.
nlohmann::json example_scenario();

// Output per CONTRACT.md (plus extensions). Never contains NaN/Inf (they become null).
nlohmann::json estimate_to_json(const sim::Estimate& e, const ParsedScenario& s);
// What the user should know, in words: the estimate's loud findings (sim::loud), the scenario's
// warnings, then the other findings (data/findings.hpp), each once.
std::vector<std::string> estimate_warnings(const sim::Estimate& e, const ParsedScenario& s);

// A model as a scenario's "model" object of explicit dimensions (no preset): every key the
// parser reads, so parse_scenario reads the same model back.
nlohmann::json model_to_json(const sim::ModelSpec& m);

// A complete layout as a scenario's "strategy" object (every field fixed; parse_scenario reads it
// back to the same layout): the numbers, recompute and every sim::kStrategyOptions key.
nlohmann::json strategy_to_json(const sim::Parallelism& p);

// strategy_to_json plus grad_accumulation: the "strategy" object of the output.
nlohmann::json parallelism_to_json(const sim::Parallelism& p, int micro_batches);

// One header line and one value line with the scalar fields of estimate_to_json.
std::string estimate_to_csv(const sim::Estimate& e, const ParsedScenario& s);

// Human-readable table for terminals.
std::string estimate_to_table(const sim::Estimate& e, const ParsedScenario& s);

}  // namespace capplan::data
