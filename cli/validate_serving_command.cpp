// SPDX-License-Identifier: Apache-2.0
// `capplan validate-serving [CSV] [--format table|json] [--max-mape PCT] [--min-coverage FRAC]`:
// how far the serving simulation is from measured serving runs (throughput tables, online serving,
// batch-1 speed benchmarks). A report: it exits 0 whatever the accuracy unless a gate is asked
// for; 3 when a gate is missed (as validate-published's gates); 2 when the CSV cannot be read.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "capplan/data/format.hpp"
#include "capplan/data/serving_validation.hpp"
#include "capplan/sim/serve/serve.hpp"
#include "commands.hpp"

namespace capplan::cli {
namespace {

using nlohmann::json;
using data::format::number;

struct ValidateServingOptions {
  std::string csv;
  std::string format = "table";
  std::string out;
  double max_mape = -1;      // percent; < 0 = no gate
  double min_coverage = -1;  // fraction of all rows that are usable; < 0 = no gate
};

json accuracy_json(const data::ServingAccuracy& a) {
  return {{"predicted", a.predicted},
          {"mape", number(a.mape)},
          {"median_ape", number(a.median_ape)},
          {"within_10pct", number(a.within_10pct)},
          {"within_25pct", number(a.within_25pct)}};
}

// Skipped rows grouped by their reason, most rows first (then by reason).
std::vector<std::pair<std::string, std::vector<const data::ServingRun*>>> skipped_by_reason(
    const data::ServingReport& rep) {
  std::map<std::string, std::vector<const data::ServingRun*>> groups;
  for (const auto* run : rep.skipped) groups[run->skip_reason].push_back(run);
  std::vector<std::pair<std::string, std::vector<const data::ServingRun*>>> out(groups.begin(), groups.end());
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  return out;
}

std::string in_out(const data::ServingRun& r) { return std::to_string(r.input_len) + "/" + std::to_string(r.output_len); }

std::string traffic_text(const sim::Traffic& t) {
  switch (t.arrival) {
    case sim::Arrival::offline: return "offline";
    case sim::Arrival::closed_loop: return "concurrency " + std::to_string(t.concurrency);
    case sim::Arrival::poisson: return data::format::in_sentence(t.rate, 2) + " req/s";
  }
  return "?";
}

json report_json(const data::ServingReport& rep, const std::string& csv) {
  json rows = json::array();
  for (const auto& c : rep.comparisons) {
    const data::ServingRun& r = *c.run;
    rows.push_back({
        {"row_id", r.row_id},
        {"source_group", r.source_group},
        {"model", r.model_name},
        {"preset", r.job.model.name},
        {"gpu", r.cluster.gpu.id},
        {"gpu_model", r.gpu_model},
        {"engine", r.engine_id},
        {"weights", sim::to_string(r.job.weights)},
        {"kv_cache", sim::to_string(r.job.kv)},
        {"tp", r.job.tp},
        {"pp", r.job.pp},
        {"ep", r.job.ep},
        {"input_len", r.input_len},
        {"output_len", r.output_len},
        {"traffic", traffic_text(r.job.traffic)},
        {"simulated_requests", r.job.traffic.requests},
        {"metric", data::to_string(c.metric->kind)},
        {"unit", data::unit(c.metric->kind)},
        {"column", c.metric->column},
        {"status", c.predicted ? "predicted" : "failed"},
        {"measured", number(c.metric->value)},
        {"predicted", c.predicted ? number(c.predicted_value) : json(nullptr)},
        {"error_pct", c.predicted ? number(100.0 * c.error_frac) : json(nullptr)},
        {"saturated", c.saturated},
        {"simulation",
         {{"mean_batch", number(c.mean_batch)},
          {"preemptions", c.preemptions},
          {"limit", c.limit},
          {"kv_cache_tokens", c.kv_tokens}}},
        {"error", c.error.empty() ? json(nullptr) : json(c.error)},
        {"assumptions", r.assumptions},
    });
  }
  json skipped = json::array();
  for (const auto* run : rep.skipped) {
    skipped.push_back({{"row_id", run->row_id}, {"model", run->model_name}, {"reason", run->skip_reason}});
  }
  json reasons = json::array();
  for (const auto& [reason, runs] : skipped_by_reason(rep)) {
    json ids = json::array();
    for (const auto* run : runs) ids.push_back(run->row_id);
    reasons.push_back({{"reason", reason}, {"rows", runs.size()}, {"row_ids", ids}});
  }
  auto groups_json = [](const std::map<std::string, data::ServingAccuracy>& groups) {
    json out = json::object();
    for (const auto& [name, a] : groups) out[name] = accuracy_json(a);
    return out;
  };
  int failed = 0;
  for (const auto& c : rep.comparisons) failed += c.predicted ? 0 : 1;
  json summary = {{"rows", rep.rows},
                  {"usable", rep.usable},
                  {"coverage", number(data::serving_coverage(rep))},
                  {"comparisons", rep.comparisons.size()},
                  {"failed", failed}};
  summary.update(accuracy_json(rep.overall));
  summary["by_metric"] = groups_json(rep.by_metric);
  summary["by_source"] = groups_json(rep.by_source);
  summary["by_engine"] = groups_json(rep.by_engine);
  json doc = {{"csv", csv},
              {"cost_model", "datasheet"},
              {"rows", rows},
              {"skipped", skipped},
              {"skipped_by_reason", reasons},
              {"summary", summary}};
  data::format::stamp(doc);
  return doc;
}

// A percentage, or "n/a" where nothing was compared (the figure is NaN).
std::string in_percent(double value) { return std::isfinite(value) ? fixed(value, 1) + "%" : std::string("n/a"); }
std::string percent(double fraction) { return in_percent(100.0 * fraction); }

std::string shorten(const std::string& s, size_t width) {
  return s.size() <= width ? s : s.substr(0, width - 3) + "...";
}

// Measured and predicted figures with the decimals their size needs (0.3 ms, 12.5 req/s, 25399 tok/s).
std::string figure(double v) { return fixed(v, std::fabs(v) >= 100 ? 0 : std::fabs(v) >= 10 ? 1 : 2); }

std::string accuracy_table(const std::string& title, const std::map<std::string, data::ServingAccuracy>& groups) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& [name, a] : groups) {
    rows.push_back({name, std::to_string(a.predicted), in_percent(a.mape), in_percent(a.median_ape),
                    percent(a.within_10pct), percent(a.within_25pct)});
  }
  return render_table({title, "n", "MAPE", "median |err|", "within 10%", "within 25%"}, rows,
                      {false, true, true, true, true, true}, "  ");
}

std::string report_table(const data::ServingReport& rep, const std::string& csv) {
  std::string out = "capplan validate-serving: " + csv + " (datasheet cost model, one simulated replica per row)\n\n";
  std::vector<std::vector<std::string>> rows;
  std::vector<const data::ServingComparison*> failed;
  for (const auto& c : rep.comparisons) {
    if (!c.predicted) {
      failed.push_back(&c);
      continue;
    }
    const data::ServingRun& r = *c.run;
    rows.push_back({r.row_id, shorten(r.model_name, 24), r.cluster.gpu.id, r.engine_id, sim::to_string(r.job.weights),
                    std::to_string(r.job.tp), in_out(r), std::string(data::to_string(c.metric->kind)) + " " +
                    data::unit(c.metric->kind), figure(c.metric->value), figure(c.predicted_value),
                    (c.error_frac >= 0 ? "+" : "") + fixed(100.0 * c.error_frac, 1) + "%" + (c.saturated ? " sat" : "")});
  }
  out += "Compared figures (error = (predicted - measured) / measured; sat: the simulated replica cannot keep up)\n";
  out += render_table({"row", "model", "gpu", "engine", "format", "tp", "in/out", "metric", "measured", "predicted",
                       "error"},
                      rows, {false, false, false, false, false, true, true, false, true, true, true}, "  ");
  if (!failed.empty()) {
    out += "\nUsable rows without a prediction\n";
    for (const auto* c : failed) {
      out += "  " + c->run->row_id + " " + data::to_string(c->metric->kind) + ": " + c->error + "\n";
    }
  }
  if (!rep.skipped.empty()) {
    out += "\nSkipped rows, by reason\n";
    for (const auto& [reason, runs] : skipped_by_reason(rep)) {
      std::string ids;
      for (std::size_t i = 0; i < runs.size() && i < 6; ++i) ids += (i == 0 ? "" : ", ") + runs[i]->row_id;
      if (runs.size() > 6) ids += ", ...";
      out += "  " + std::to_string(runs.size()) + " x " + reason + " (" + ids + ")\n";
    }
  }
  const data::ServingAccuracy& a = rep.overall;
  out += "\nSummary\n";
  out += "  rows " + std::to_string(rep.rows) + ", usable " + std::to_string(rep.usable) + " (coverage " +
         percent(data::serving_coverage(rep)) + "), compared figures " + std::to_string(rep.comparisons.size()) +
         ", predicted " + std::to_string(a.predicted) + "\n";
  out += "  MAPE " + in_percent(a.mape) + ", median |error| " + in_percent(a.median_ape) + ", within 10%: " +
         percent(a.within_10pct) + ", within 25%: " + percent(a.within_25pct) + "\n\n";
  out += accuracy_table("by metric", rep.by_metric) + "\n";
  out += accuracy_table("by source", rep.by_source) + "\n";
  out += accuracy_table("by engine", rep.by_engine);
  return out;
}

int run_validate_serving(const ValidateServingOptions& opt, const GlobalOptions& global) {
  if (!output_path_ok_or_report(opt.out)) return code(Exit::invalid_input);  // before any work
  auto catalogs = load_catalogs_or_report(global);
  if (!catalogs) return code(Exit::invalid_input);
  const std::filesystem::path csv = opt.csv.empty() ? data_dir(global) / "benchmarks" / "inference_runs_dev.csv"
                                                    : std::filesystem::path(opt.csv);
  if (!input_file_ok_or_report(csv, "serving runs")) return code(Exit::invalid_input);
  auto runs = data::load_serving_runs(csv, *catalogs);
  if (!runs) {
    print_diagnostics(runs.error());
    return code(Exit::invalid_input);
  }
  const data::ServingReport rep = data::validate_serving(*runs);
  const std::string text =
      opt.format == "json" ? report_json(rep, csv.string()).dump(2) + "\n" : report_table(rep, csv.string());
  if (!emit(opt.out, text)) return code(Exit::invalid_input);
  // Accuracy gates for scripts and CI: the report is printed either way.
  bool met = true;
  if (opt.max_mape >= 0 && !(rep.overall.mape <= opt.max_mape)) {
    print_error("accuracy gate: serving MAPE " + fixed(rep.overall.mape, 2) + "% exceeds --max-mape " +
                fixed(opt.max_mape, 2) + "%");
    met = false;
  }
  const double coverage = data::serving_coverage(rep);
  if (opt.min_coverage >= 0 && !(coverage >= opt.min_coverage)) {
    print_error("accuracy gate: coverage " + fixed(coverage, 3) + " (usable rows / all rows) is below --min-coverage " +
                fixed(opt.min_coverage, 3));
    met = false;
  }
  return met ? code(Exit::ok) : code(Exit::infeasible);
}

}  // namespace

Command add_validate_serving_command(CLI::App& app, const GlobalOptions& global) {
  auto opt = std::make_shared<ValidateServingOptions>();
  CLI::App* cmd = app.add_subcommand(
      "validate-serving",
      "Compare the serving simulation with measured serving runs (accuracy report: MAPE per metric, coverage)");
  cmd->add_option("csv", opt->csv, "Serving-runs CSV (default: <data dir>/benchmarks/inference_runs_dev.csv)");
  cmd->add_option("--format", opt->format, "Output format (default: table)")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--out", opt->out, "Write the report to this file (atomically) instead of stdout")
      ->check(output_file_name());
  cmd->add_option("--max-mape", opt->max_mape, "Exit 3 when the MAPE (percent) of the predicted figures exceeds this")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--min-coverage", opt->min_coverage, "Exit 3 when usable rows / all rows fall below this (0-1)")
      ->check(CLI::Range(0.0, 1.0));
  return Command{cmd, [opt, &global] { return run_validate_serving(*opt, global); }};
}

}  // namespace capplan::cli
