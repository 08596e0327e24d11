// SPDX-License-Identifier: Apache-2.0
// A serving scenario (`workload.kind: serve`, `capplan serve`): the workload section parsed
// strictly into a sim::ServeJob over the scenario's model, cluster and prices, and the plan
// written back as a table or JSON, amounts in the scenario's currency.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "capplan/data/catalog.hpp"
#include "capplan/data/scenario_io.hpp"
#include "capplan/data/search_io.hpp"
#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/cost/profile.hpp"
#include "capplan/sim/workload/result.hpp"
#include "capplan/sim/serve/serve.hpp"
#include "capplan/sim/serve/serve_planner.hpp"

namespace capplan::data {

struct ServeRequest {
  sim::ServeJob job;
  sim::Cluster cluster;  // the GPU, GPUs per node (instance), price; its size is not used
  std::string model_id;
  std::string engine_id;
  sim::Currency currency;
  bool compare = false;  // also plan every TP size and weight format the GPU supports
  // Offerings to plan on besides (instead of) the scenario's cluster: every catalog instance the
  // --instances filter passes, each with its price; with any, compare mode plans every offering x
  // TP x weight format (serve_request leaves it empty; plan_serve_document fills it).
  std::vector<sim::Offering> offerings;
  // Engines to compare besides the scenario's (capplan serve --engines: each at its recipe's
  // defaults; the scenario's engine overrides stay with its own engine); empty: the scenario's only.
  std::vector<sim::EngineSpec> engines;
  std::vector<std::string> warnings;
};

// The serve workload of `doc` over the parsed scenario. Errors name the field:
// "scenario#/workload/traffic/rate_per_s: must be > 0; got 0".
Result<ServeRequest> serve_request(const nlohmann::json& doc, const ParsedScenario& scenario,
                                   const Catalogs& catalogs, std::string_view where = "scenario");

// Checks a serve workload section on its own (types, ranges, unknown keys) into `diags`: every
// reader of a scenario checks it, capplan serve uses it.
void check_serve_section(const nlohmann::json& workload, std::string_view where, Diagnostics& diags);

// One planned layout: the job as planned and its plan.
// One planned layout (sim/serve_planner.hpp: the planner returns them, this file words them).
using ServeOption = sim::ServeOption;
// A model's life in money ("train, then serve"): the training or fine-tuning estimate of a
// scenario, then `months` of serving the recommended layout at the request's traffic. Amounts in
// US dollars (unknown when a price is); the JSON and table convert them to the serving request's
// currency.
struct TrainThenServe {
  std::string training_workload;   // "pretrain" or "finetune"
  std::string training_model;
  int training_gpus = 0;
  double training_days = 0;        // expected wall time (goodput: interruptions, checkpoints)
  double training_gpu_hours = 0;   // GPUs x that wall time
  std::optional<double> training_usd;
  std::string serving_layout;      // "TP1 fp8"
  int serving_gpus = 0;
  double serving_gpu_hours_per_month = 0;
  std::optional<double> serving_usd_per_month;
  int months = 0;
  // [0]: after training; [i]: after training and i months of serving (unknown once a price is).
  std::vector<std::optional<double>> cumulative_usd;
  std::optional<double> total_usd;
  std::vector<std::string> notes;  // e.g. the trained model is not the served one
};

struct ServeResult {
  ServeOption asked;
  std::vector<ServeOption> options;   // compare mode: every layout planned, cheapest first
  std::vector<std::size_t> pareto;    // indices into options
  std::string explanation;
  std::string cost_model;             // "datasheet" or the profile
  // The asked layout's latency-throughput curve (sim::latency_curve), when asked for.
  std::vector<sim::CurvePoint> curve;
  std::optional<TrainThenServe> lifecycle;  // set by train_then_serve()

  // The layout to deploy: in compare mode the cheapest feasible one, else the asked one.
  const ServeOption& recommended() const;
};
// The plan of `r` (sim::plan_serve_options): the asked layout, and with `compare` (or offerings,
// or engines) every other layout, the cheapest feasible first, with the Pareto front of cost per
// output token against the latency target's percentile; `explanation` words the choice against
// the runner-up. Priced by the datasheet model under each engine's assumptions, or by `profile` (a
// calibration profile: CalibratedCost, the datasheet where it did not measure); `curve_points` > 1
// also simulates the asked layout's latency-throughput curve.
ServeResult plan_request(const ServeRequest& r, const sim::Profile* profile = nullptr, int curve_points = 0);

// `capplan serve`'s pipeline for a serve scenario document (the desktop app's Serve tab runs the
// same): the price sheet (`sheet_file`, else the document's pricing.sheet relative to
// `scenario_file`, "-" or empty: the working directory) merged over a copy of `catalogs`,
// parse_scenario, the workload kind check, serve_request, the sheet's notes and a profile's
// other-device warning added to the request's warnings, then plan_request. Errors name the field.
struct ServePlanned {
  ServeRequest request;
  ServeResult result;
  std::string sheet;  // the price sheet read, empty when none
};
// `offerings` (non-null): also plan on every catalog instance it passes (capplan serve
// --instances), in compare mode; `engines`: engine ids to compare too (--engines), in compare mode.
// Errors name the flag ("--engines: unknown engine 'x' (known: ...)").
Result<ServePlanned> plan_serve_document(const nlohmann::json& doc, const Catalogs& catalogs,
                                         std::string_view scenario_file, const std::string& sheet_file = {},
                                         const sim::Profile* profile = nullptr, int curve_points = 0,
                                         std::string_view where = "scenario",
                                         const OfferingFilter* offerings = nullptr,
                                         const std::vector<std::string>& engines = {});

// Sets `result.lifecycle`: `training` (a parsed training or fine-tuning scenario) and its
// `estimate`, then `months` of serving `result.recommended()` (months >= 1).
void train_then_serve(ServeResult& result, const ServeRequest& r, const ParsedScenario& training,
                      const sim::Estimate& estimate, int months);

// The built-in serving example (README "Serving"): Llama 3.1 8B on one Tencent Cloud H800
// instance under vLLM at 50 requests/s, 1,000 tokens in and 300 out, p95 end-to-end under 2 s,
// every TP size and weight format compared.
nlohmann::json example_serve_scenario();

// The plan as JSON (stamped with schema_version and capplan_version, as every document capplan
// writes), as a table, and as CSV: one header line, then one row per layout planned (compare mode:
// every option, cheapest first; else the asked layout), latencies per replica named by metric and
// statistic (ttft_p95_s), amounts in the request's currency.
nlohmann::json serve_to_json(const ServeResult& result, const ServeRequest& r);
std::string serve_to_table(const ServeResult& result, const ServeRequest& r);
std::string serve_to_csv(const ServeResult& result, const ServeRequest& r);

}  // namespace capplan::data
