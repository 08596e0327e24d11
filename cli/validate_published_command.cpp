// SPDX-License-Identifier: Apache-2.0
// `capplan validate-published [CSV] [--format table|json]`: how far the estimate is from published
// training runs. A report: it exits 0 whatever the accuracy; 2 only when the CSV cannot be read.
//
// Error bars: each predicted row also gets the p10-p90 interval capplan estimate would give it,
// from a residual table fitted on every OTHER predicted row (leave-one-out), and the report says
// how often the measured value lies inside. --write-error-bands writes the table fitted on all
// rows (data/error_bands.json is made this way).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "capplan/data/error_bands.hpp"
#include "capplan/data/published_runs.hpp"
#include "capplan/data/scenario_io.hpp"
#include "capplan/data/format.hpp"
#include "capplan/data/validation.hpp"
#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/estimate/uncertainty.hpp"
#include "commands.hpp"

namespace capplan::cli {
namespace {

using nlohmann::json;

// A report document with the output schema's version and the tool's (CONTRACT.md).
json stamped(json doc) {
  data::format::stamp(doc);
  return doc;
}

struct ValidateOptions {
  std::string csv;
  std::string format = "table";
  std::string out;
  double max_mape = -1;      // percent; < 0 = no gate
  double max_memory_mape = -1;  // percent, of the rows that measure peak memory; < 0 = no gate
  double min_coverage = -1;  // fraction; < 0 = no gate
  std::string gate_arch = "all";  // rows the gates apply to: all, dense or moe
  std::string write_error_bands;  // FILE: the residual table fitted on every predicted row
  bool whole_run = false;         // report the whole-run GPU-hour rows with the goodput model instead
  std::string profile;            // FILE: price every row with this calibration profile
  // FILEs: validated runs of other tables whose residuals join the error bands (leave-one-out
  // intervals and --write-error-bands); on the shipped development set (no csv), the shipped
  // hybrid table when none is given.
  std::vector<std::string> pool;
};

// The harness lives in capplan_data (capplan/data/validation.hpp); this file renders it.
using RowResult = data::ValidationRow;
using Report = data::ValidationReport;
using data::Accuracy;
using data::accuracy;
using data::coverage;
using data::one_line;
using sim::kScaleBuckets;

json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json accuracy_json(const Accuracy& a) {
  return {{"predicted", a.predicted},
          {"mape", number(a.mape)},
          {"median_ape", number(a.median_ape)},
          {"within_10pct", number(a.within_10pct)},
          {"interval_coverage", number(a.interval_coverage)},
          {"interval_rows", a.with_interval},
          {"group_out_interval_coverage", number(a.group_interval_coverage)},
          {"group_out_interval_rows", a.with_group_interval}};
}

std::string layout_text(const RowResult& r) {
  const auto& p = r.layout;
  std::string text = "tp" + std::to_string(p.tp) + " pp" + std::to_string(p.pp) + " dp" + std::to_string(p.dp);
  if (p.cp != 1) text += " cp" + std::to_string(p.cp);
  if (p.ep != 1) text += " ep" + std::to_string(p.ep);
  text += " mb" + std::to_string(p.micro_batch) + " v" + std::to_string(p.virtual_stages) + " " +
          sim::to_string(p.recompute);
  return text;
}

std::string shorten(const std::string& s, size_t width) {
  return s.size() <= width ? s : s.substr(0, width - 3) + "...";
}

json report_json(const Report& rep, const std::string& csv) {
  json rows = json::array();
  for (const auto& r : rep.results) {
    json row = {
        {"row_id", r.run->row_id},
        {"model", r.run->model_name},
        {"arch_type", r.run->arch_type},
        {"gpu", r.gpu},
        {"gpu_model", r.run->gpu_model},
        {"gpus", r.gpus},
        {"status", r.predicted ? "predicted" : "failed"},
        {"measured_tokens_per_s_per_gpu", number(r.measured)},
        {"measured_how", r.run->measured_how},
        {"predicted_tokens_per_s_per_gpu", r.predicted ? number(r.estimate) : json(nullptr)},
        {"error_pct", r.predicted ? number(100.0 * r.error_frac) : json(nullptr)},
        {"error", r.error.empty() ? json(nullptr) : json(r.error)},
        {"error_category", r.category.empty() ? json(nullptr) : json(r.category)},
        {"p10_tokens_per_s_per_gpu", r.has_interval ? number(r.p10) : json(nullptr)},
        {"p90_tokens_per_s_per_gpu", r.has_interval ? number(r.p90) : json(nullptr)},
        {"inside_p10_p90", r.has_interval ? json(r.inside) : json(nullptr)},
        {"inside_group_out_p10_p90", r.has_group_interval ? json(r.inside_group) : json(nullptr)},
        {"error_band_category", r.has_interval ? json(r.band_category) : json(nullptr)},
        {"source_group", r.run->source_group.empty() ? json(nullptr) : json(r.run->source_group)},
        {"measured_peak_memory_gib", r.memory_predicted ? number(r.measured_memory_gib) : json(nullptr)},
        {"predicted_peak_memory_gib", r.memory_predicted ? number(r.memory_estimate_gib) : json(nullptr)},
        {"memory_error_pct", r.memory_predicted ? number(100.0 * r.memory_error_frac) : json(nullptr)},
        {"memory_definition", r.memory_predicted ? json(r.run->memory_definition) : json(nullptr)},
        {"assumptions", r.run->assumptions},
        {"scenario", r.run->scenario},  // reproduce a row with `capplan estimate`
    };
    if (r.predicted) {
      row["layout"] = data::parallelism_to_json(r.layout, r.micro_batches);
      row["fits_in_memory"] = r.fits;
    } else {
      row["layout"] = nullptr;
      row["fits_in_memory"] = nullptr;
    }
    rows.push_back(std::move(row));
  }
  json skipped = json::array();
  for (const auto* run : rep.skipped) {
    skipped.push_back({{"row_id", run->row_id}, {"model", run->model_name}, {"reason", run->skip_reason}});
  }
  auto groups_json = [](const std::map<std::string, Accuracy>& groups) {
    json out = json::object();
    for (const auto& [name, a] : groups) out[name] = accuracy_json(a);
    return out;
  };
  return {
      {"csv", csv},
      {"cost_model", "datasheet"},
      {"rows", rows},
      {"skipped", skipped},
      {"summary",
       {{"rows", rep.rows},
        {"usable", rep.usable},
        {"predicted", rep.overall.predicted},
        {"coverage", number(coverage(rep))},
        {"mape", number(rep.overall.mape)},
        {"median_ape", number(rep.overall.median_ape)},
        {"within_10pct", number(rep.overall.within_10pct)},
        {"interval_coverage", number(rep.overall.interval_coverage)},
        {"interval_rows", rep.overall.with_interval},
        {"interval_method", "p10-p90 of each row from a residual table fitted without that row (leave-one-out)"},
        {"group_out_interval_coverage", number(rep.overall.group_interval_coverage)},
        {"group_out_interval_rows", rep.overall.with_group_interval},
        {"group_out_interval_method",
         "p10-p90 of each row from a residual table fitted without every row of its source group "
         "(leave-one-source-group-out; a row with no group leaves out itself)"},
        {"by_arch", groups_json(rep.by_arch)},
        {"by_framework", groups_json(rep.by_framework)},
        {"by_gpu", groups_json(rep.by_gpu)},
        {"by_scale", groups_json(rep.by_scale)},
        {"by_source", groups_json(rep.by_source)},
        {"memory", accuracy_json(rep.memory)},
        {"memory_by_source", groups_json(rep.memory_by_source)}}},
  };
}

// A share as a percentage; "n/a" (no "%") where there is none (no row predicted).
std::string percent(double fraction) {
  return std::isfinite(fraction) ? fixed(100.0 * fraction, 1) + "%" : std::string("n/a");
}
// A value already in percent, the same way.
std::string in_percent(double value) { return std::isfinite(value) ? fixed(value, 1) + "%" : std::string("n/a"); }

std::string accuracy_table(const std::string& title, const std::map<std::string, Accuracy>& groups,
                           const std::vector<std::string>& order = {}) {
  std::vector<std::string> names = order;
  for (const auto& [name, a] : groups) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& name : names) {
    auto it = groups.find(name);
    if (it == groups.end()) continue;
    const Accuracy& a = it->second;
    rows.push_back({name, std::to_string(a.predicted), in_percent(a.mape), in_percent(a.median_ape),
                    percent(a.within_10pct), a.with_interval > 0 ? percent(a.interval_coverage) : "n/a"});
  }
  return render_table({title, "rows", "MAPE", "median |err|", "within 10%", "in p10-p90"}, rows,
                      {false, true, true, true, true, true}, "  ");
}

std::string report_table(const Report& rep, const std::string& csv) {
  std::string out = "capplan validate-published: " + csv + " (datasheet cost model)\n\n";
  std::vector<std::vector<std::string>> rows;
  std::vector<const RowResult*> failed;
  for (const auto& r : rep.results) {
    if (!r.predicted) {
      failed.push_back(&r);
      continue;
    }
    std::string layout = layout_text(r);
    if (!r.fits) layout += " (no fit)";
    rows.push_back({r.run->row_id, shorten(r.run->model_name, 32), r.gpu, std::to_string(r.gpus), layout,
                    fixed(r.measured, 0), fixed(r.estimate, 0),
                    (r.error_frac >= 0 ? "+" : "") + fixed(100.0 * r.error_frac, 1) + "%",
                    r.has_interval ? fixed(r.p10, 0) + "-" + fixed(r.p90, 0) : "n/a",
                    r.has_interval ? (r.inside ? "yes" : "no") : ""});
  }
  out += "Estimated rows (tokens/s per GPU; error = (predicted - measured) / measured; p10-p90 from the other rows)\n";
  out += render_table({"row", "model", "gpu", "GPUs", "layout", "measured", "predicted", "error", "p10-p90", "inside"},
                      rows, {false, false, false, true, false, true, true, true, true, false}, "  ");
  std::vector<std::vector<std::string>> memory_rows;
  for (const auto& r : rep.results) {
    if (!r.memory_predicted) continue;
    memory_rows.push_back({r.run->row_id, shorten(r.run->model_name, 32), fixed(r.measured_memory_gib, 1),
                           fixed(r.memory_estimate_gib, 1),
                           (r.memory_error_frac >= 0 ? "+" : "") + fixed(100.0 * r.memory_error_frac, 1) + "%",
                           shorten(r.run->memory_definition, 40)});
  }
  if (!memory_rows.empty()) {
    out += "\nPeak memory per GPU (GiB; as each table defines it)\n";
    out += render_table({"row", "model", "measured", "predicted", "error", "definition"}, memory_rows,
                        {false, false, true, true, true, false}, "  ");
  }
  if (!failed.empty()) {
    out += "\nUsable rows that could not be estimated\n";
    for (const auto* r : failed) out += "  " + r->run->row_id + ": " + r->error + "\n";
  }
  if (!rep.skipped.empty()) {
    out += "\nSkipped rows (not usable as a benchmark)\n";
    for (const auto* run : rep.skipped) out += "  " + run->row_id + ": " + run->skip_reason + "\n";
  }
  const Accuracy& a = rep.overall;
  out += "\nSummary\n";
  out += "  rows " + std::to_string(rep.rows) + ", usable " + std::to_string(rep.usable) + ", predicted " +
         std::to_string(a.predicted) + " (coverage " + percent(coverage(rep)) + ")\n";
  out += "  MAPE " + in_percent(a.mape) + ", median |error| " + in_percent(a.median_ape) +
         ", within 10%: " + percent(a.within_10pct) + "\n";
  out += "  measured inside the leave-one-out p10-p90 interval: " +
         (a.with_interval > 0 ? percent(a.interval_coverage) + " of " + std::to_string(a.with_interval) + " rows"
                              : std::string("n/a (too few rows for a residual table)")) +
         "\n";
  out += "  measured inside the leave-one-source-group-out p10-p90 interval: " +
         (a.with_group_interval > 0
              ? percent(a.group_interval_coverage) + " of " + std::to_string(a.with_group_interval) + " rows"
              : std::string("n/a (too few rows for a residual table)")) +
         "\n\n";
  out += accuracy_table("by architecture", rep.by_arch, {"dense", "moe"}) + "\n";
  out += accuracy_table("by framework family", rep.by_framework, {"megatron", "pytorch"}) + "\n";
  out += accuracy_table("by GPU", rep.by_gpu) + "\n";
  out += accuracy_table("by scale (GPUs)", rep.by_scale,
                        std::vector<std::string>(std::begin(kScaleBuckets), std::end(kScaleBuckets)));
  if (!rep.by_source.empty()) out += "\n" + accuracy_table("throughput by source", rep.by_source);
  if (rep.memory.predicted > 0) {
    out += "\n  peak memory: " + std::to_string(rep.memory.predicted) + " rows, MAPE " + fixed(rep.memory.mape, 1) +
           "%, median |error| " + fixed(rep.memory.median_ape, 1) + "%, within 10%: " +
           percent(rep.memory.within_10pct) + "\n";
    out += accuracy_table("peak memory by source", rep.memory_by_source);
  }
  return out;
}

std::string today() {
  const std::chrono::year_month_day d{std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now())};
  auto two = [](unsigned v) { return (v < 10 ? "0" : "") + std::to_string(v); };
  return std::to_string(static_cast<int>(d.year())) + "-" + two(static_cast<unsigned>(d.month())) + "-" +
         two(static_cast<unsigned>(d.day()));
}

data::ErrorBands error_bands_of(const Report& rep, const std::filesystem::path& csv,
                                const std::vector<std::filesystem::path>& pool_files, int pooled_rows) {
  data::ErrorBands bands;
  bands.table = rep.table;
  bands.generated = today();
  bands.source = std::string("capplan ") + CAPPLAN_VERSION + " validate-published --write-error-bands on " +
                 csv.filename().string() + " (" + std::to_string(rep.overall.predicted) + " predicted rows";
  if (!pool_files.empty()) {
    bands.source += ", pooled with " + std::to_string(pooled_rows) + " of";
    for (const auto& f : pool_files) bands.source += " " + f.filename().string();
  }
  bands.source += ", datasheet cost model)";
  bands.method = "r = ln(measured / predicted) of tokens/s per GPU for every predicted row; per category "
                 "(<arch>/<framework>/<scale>, <arch>/<framework>, <arch>/<scale>, <arch>, all: the lookup order) "
                 "with at least " +
                 std::to_string(sim::kMinResidualSamples) +
                 " rows, p10 and p90 of r at plotting position (n+1)p with linear interpolation (Hyndman-Fan "
                 "definition 6, a distribution-free 80% prediction interval); the band (log_ratio_low/high) is that "
                 "p10-p90, or where it lies on one side of 0 the quantile pair (a, a + 0.8), a in [0, 0.2], nearest 0; "
                 "leave_one_out_coverage is the share of "
                 "rows whose measured value lies inside the interval fitted without them";
  if (std::isfinite(rep.overall.interval_coverage)) bands.leave_one_out_coverage = rep.overall.interval_coverage;
  return bands;
}

// True when the tables hold the same categories and counts, and quantiles equal to 1e-6 (far below
// any change that matters, above what build flags may do to the last bits).
bool same_table(const sim::ResidualTable& a, const sim::ResidualTable& b) {
  if (a.categories.size() != b.categories.size()) return false;
  for (const auto& q : a.categories) {
    const auto* other = b.find(q.category);
    if (other == nullptr || other->n != q.n || std::fabs(other->log_ratio_p10 - q.log_ratio_p10) > 1e-6 ||
        std::fabs(other->log_ratio_p90 - q.log_ratio_p90) > 1e-6 ||
        std::fabs(other->log_ratio_low - q.log_ratio_low) > 1e-6 ||
        std::fabs(other->log_ratio_high - q.log_ratio_high) > 1e-6) {
      return false;
    }
  }
  return true;
}

// --- whole-run rows (--whole-run): GPU-hours predicted with the goodput model ---------------

struct WholeRunResult {
  const data::PublishedRun* run = nullptr;
  bool predicted = false;
  std::string error;
  int gpus = 0;
  double tokens = 0;
  double steady_gpu_hours = 0;   // step model only
  double goodput_gpu_hours = 0;  // with interruptions, checkpoints, restarts
  double steady_error = 0;       // (predicted - measured) / measured
  double goodput_error = 0;
  double fraction = 0;
  double interruptions = 0;
  std::string layout;
};

WholeRunResult evaluate_whole_run(const data::PublishedRun& run, const data::Catalogs& catalogs) {
  WholeRunResult r;
  r.run = &run;
  auto parsed = data::parse_scenario(run.whole_run_scenario, catalogs, run.row_id);
  if (!parsed) {
    r.error = one_line(parsed.error());
    return r;
  }
  r.gpus = parsed->scenario.cluster.gpus;
  r.tokens = parsed->scenario.training.tokens;
  const sim::DatasheetCost cost(parsed->scenario.cluster);
  auto e = sim::estimate(parsed->scenario, cost);
  if (!e) {
    r.error = one_line(e.error());
    return r;
  }
  RowResult tmp;
  tmp.layout = e->layout.strategy;
  tmp.micro_batches = e->layout.micro_batches;
  r.layout = layout_text(tmp);
  r.steady_gpu_hours = e->totals.gpu_hours;
  r.goodput_gpu_hours = r.gpus * units::to_hours(e->goodput.wall);
  if (!std::isfinite(r.goodput_gpu_hours) || !(run.measured_gpu_hours > 0)) {
    r.error = "no finite prediction";
    return r;
  }
  r.steady_error = (r.steady_gpu_hours - run.measured_gpu_hours) / run.measured_gpu_hours;
  r.goodput_error = (r.goodput_gpu_hours - run.measured_gpu_hours) / run.measured_gpu_hours;
  r.fraction = e->goodput.fraction;
  r.interruptions = e->goodput.expected_interruptions;
  r.predicted = true;
  return r;
}

std::string whole_run_report(const std::vector<data::PublishedRun>& runs, const data::Catalogs& catalogs,
                             const std::string& csv, bool as_json) {
  std::vector<WholeRunResult> results;
  std::vector<const data::PublishedRun*> skipped;
  for (const auto& run : runs) {
    if (!run.whole_run) continue;
    if (!run.whole_run_usable) {
      skipped.push_back(&run);
      continue;
    }
    results.push_back(evaluate_whole_run(run, catalogs));
  }
  double sum_steady = 0, sum_goodput = 0;
  int n = 0;
  for (const auto& r : results) {
    if (!r.predicted) continue;
    sum_steady += std::fabs(r.steady_error);
    sum_goodput += std::fabs(r.goodput_error);
    ++n;
  }
  const double mape_steady = n > 0 ? 100.0 * sum_steady / n : NAN;
  const double mape_goodput = n > 0 ? 100.0 * sum_goodput / n : NAN;
  if (as_json) {
    json rows = json::array();
    for (const auto& r : results) {
      rows.push_back({{"row_id", r.run->row_id},
                      {"model", r.run->model_name},
                      {"status", r.predicted ? "predicted" : "failed"},
                      {"error", r.error.empty() ? json(nullptr) : json(r.error)},
                      {"gpus", r.gpus},
                      {"tokens", number(r.tokens)},
                      {"measured_gpu_hours", number(r.run->measured_gpu_hours)},
                      {"steady_state_gpu_hours", r.predicted ? number(r.steady_gpu_hours) : json(nullptr)},
                      {"goodput_gpu_hours", r.predicted ? number(r.goodput_gpu_hours) : json(nullptr)},
                      {"steady_state_error_pct", r.predicted ? number(100.0 * r.steady_error) : json(nullptr)},
                      {"goodput_error_pct", r.predicted ? number(100.0 * r.goodput_error) : json(nullptr)},
                      {"goodput_fraction", r.predicted ? number(r.fraction) : json(nullptr)},
                      {"expected_interruptions", r.predicted ? number(r.interruptions) : json(nullptr)},
                      {"layout", r.layout},
                      {"assumptions", r.run->whole_run_assumptions},
                      {"step_assumptions", r.run->assumptions},
                      {"scenario", r.run->whole_run_scenario}});
    }
    json skip = json::array();
    for (const auto* run : skipped) {
      skip.push_back({{"row_id", run->row_id}, {"model", run->model_name}, {"reason", run->whole_run_skip_reason}});
    }
    return stamped(json{{"csv", csv},
                {"mode", "whole-run"},
                {"cost_model", "datasheet + goodput defaults"},
                {"rows", rows},
                {"skipped", skip},
                {"summary",
                 {{"predicted", n},
                  {"mape_steady_state", number(mape_steady)},
                  {"mape_goodput", number(mape_goodput)}}}})
               .dump(2) +
           "\n";
  }
  std::string out = "capplan validate-published --whole-run: " + csv +
                    " (GPU-hours of whole runs; datasheet step model + goodput model with default reliability)\n\n";
  std::vector<std::vector<std::string>> table;
  auto pct = [](double f) { return (f >= 0 ? "+" : "") + fixed(100.0 * f, 1) + "%"; };
  std::vector<const WholeRunResult*> failed;
  for (const auto& r : results) {
    if (!r.predicted) {
      failed.push_back(&r);
      continue;
    }
    table.push_back({r.run->row_id, shorten(r.run->model_name, 28), std::to_string(r.gpus),
                     fixed(r.tokens / 1e12, 2) + "T", fixed(r.run->measured_gpu_hours / 1e3, 0) + "k",
                     fixed(r.steady_gpu_hours / 1e3, 0) + "k", pct(r.steady_error),
                     fixed(r.goodput_gpu_hours / 1e3, 0) + "k", pct(r.goodput_error), fixed(100.0 * r.fraction, 1) + "%",
                     fixed(r.interruptions, 0)});
  }
  out += render_table({"row", "model", "GPUs", "tokens", "measured", "steady", "error", "goodput", "error",
                       "fraction", "interrupts"},
                      table, {false, false, true, true, true, true, true, true, true, true, true}, "  ");
  out += "\nAssumptions per row\n";
  for (const auto& r : results) {
    for (const auto& a : r.run->whole_run_assumptions) out += "  " + r.run->row_id + ": " + a + "\n";
  }
  if (!failed.empty()) {
    out += "\nRows that could not be estimated\n";
    for (const auto* r : failed) out += "  " + r->run->row_id + ": " + r->error + "\n";
  }
  if (!skipped.empty()) {
    out += "\nWhole-run rows skipped\n";
    for (const auto* run : skipped) out += "  " + run->row_id + ": " + run->whole_run_skip_reason + "\n";
  }
  out += "\nSummary: " + std::to_string(n) + " rows; MAPE steady-state " + fixed(mape_steady, 1) + "%, with goodput " +
         fixed(mape_goodput, 1) + "% (docs/accuracy.md, \"Whole runs\", explains the gaps)\n";
  return out;
}

int run_validate_published(const ValidateOptions& opt, const GlobalOptions& global) {
  // Every file this run writes is checked before any work, so an unwritable one fails fast.
  if (!output_path_ok_or_report(opt.out)) return code(Exit::invalid_input);
  if (!opt.write_error_bands.empty()) {
    // A rename over /dev/null or a FIFO would replace it with a plain file: a regular file only.
    if (auto ok = check_output_path(opt.write_error_bands, /*allow_device=*/false); !ok) {
      print_error("--write-error-bands '" + opt.write_error_bands + "': " + ok.error());
      return code(Exit::invalid_input);
    }
  }
  auto catalogs = load_catalogs_or_report(global);
  if (!catalogs) return code(Exit::invalid_input);
  std::optional<sim::Profile> profile;
  if (!load_optional_profile(!opt.profile.empty(), opt.profile, profile)) return code(Exit::invalid_input);
  if (profile) {
    if (opt.whole_run || !opt.write_error_bands.empty()) {
      print_error(std::string(opt.whole_run ? "--whole-run" : "--write-error-bands") +
                  ": the error bands and whole-run rows are the datasheet model's; --profile applies to the "
                  "per-step report only");
      return code(Exit::invalid_input);
    }
  }
  const std::filesystem::path csv =
      opt.csv.empty() ? data_dir(global) / "benchmarks" / "published_runs_dev.csv" : std::filesystem::path(opt.csv);
  if (!input_file_ok_or_report(csv, "published runs")) return code(Exit::invalid_input);
  auto runs = data::load_published_runs(csv, *catalogs);
  if (!runs) {
    print_diagnostics(runs.error());
    return code(Exit::invalid_input);
  }
  if (opt.whole_run) {
    if (!opt.write_error_bands.empty() || opt.max_mape >= 0 || opt.min_coverage >= 0 || opt.max_memory_mape >= 0) {
      print_error("--whole-run: --write-error-bands, --max-mape and --min-coverage apply to the per-step rows only");
      return code(Exit::invalid_input);
    }
    const std::string text = whole_run_report(*runs, *catalogs, csv.string(), opt.format == "json");
    return emit(opt.out, text) ? code(Exit::ok) : code(Exit::invalid_input);
  }
  // The pool: the rows of the other validated tables whose residuals join the error bands.
  std::vector<std::filesystem::path> pool_files;
  for (const auto& f : opt.pool) pool_files.emplace_back(f);
  if (opt.pool.empty() && opt.csv.empty()) {
    const auto shipped_pool = data_dir(global) / "benchmarks" / "hybrid_runs_dev.csv";
    std::error_code ec;
    if (std::filesystem::is_regular_file(shipped_pool, ec)) pool_files.push_back(shipped_pool);
  }
  std::vector<data::ValidationRow> pool;
  std::vector<std::vector<data::PublishedRun>> pool_runs;  // the rows point into these
  pool_runs.reserve(pool_files.size());
  for (const auto& f : pool_files) {
    if (!input_file_ok_or_report(f, "--pool")) return code(Exit::invalid_input);
    auto more = data::load_published_runs(f, *catalogs);
    if (!more) {
      print_diagnostics(more.error());
      return code(Exit::invalid_input);
    }
    pool_runs.push_back(std::move(*more));
    // Only the estimates are needed (no intervals or summaries of the pooled table).
    for (const auto& run : pool_runs.back()) {
      if (!run.usable) continue;
      data::ValidationRow r = data::evaluate_row(run, *catalogs, profile ? &*profile : nullptr);
      if (r.predicted) pool.push_back(std::move(r));
    }
  }
  const Report rep = data::validate_published(*runs, *catalogs, profile ? &*profile : nullptr, &pool);
  // The cost model every row was priced with (the first predicted row's; they all share the profile).
  std::string cost_model = "datasheet";
  for (const auto& r : rep.results) {
    if (r.predicted) {
      cost_model = r.full.step.cost_model;
      break;
    }
  }
  std::string text;
  // What the intervals were fitted on besides this table's own other rows.
  std::string pool_names;
  for (const auto& f : pool_files) pool_names += (pool_names.empty() ? "" : ", ") + f.filename().string();
  if (opt.format == "json") {
    json doc = stamped(report_json(rep, csv.string()));
    doc["cost_model"] = cost_model;
    json files = json::array();
    for (const auto& f : pool_files) files.push_back(f.string());
    doc["pool"] = {{"files", files}, {"rows", pool.size()}};
    text = doc.dump(2) + "\n";
  } else {
    text = report_table(rep, csv.string());
    const std::string coverage_line = "measured inside the leave-one-out p10-p90 interval";
    if (const auto at = text.find(coverage_line); at != std::string::npos && !pool_files.empty()) {
      const auto eol = text.find('\n', at);
      if (eol != std::string::npos) {
        text.insert(eol + 1, "  intervals also fitted on " + std::to_string(pool.size()) + " pooled rows of " +
                                 pool_names + " (--pool)\n");
      }
    }
    if (profile) {
      const std::string datasheet = " (datasheet cost model)\n";
      if (const auto at = text.find(datasheet); at != std::string::npos) {
        text.replace(at, datasheet.size(), " (cost model: " + cost_model + ")\n");
      }
    }
  }
  if (!emit(opt.out, text)) return code(Exit::invalid_input);
  if (!opt.write_error_bands.empty()) {
    const std::string doc =
        data::error_bands_to_json(error_bands_of(rep, csv, pool_files, static_cast<int>(pool.size()))).dump(2) + "\n";
    if (auto written = write_atomically(opt.write_error_bands, doc); !written) {
      print_error("--write-error-bands '" + opt.write_error_bands + "': " + written.error());
      return code(Exit::invalid_input);
    }
    if (rep.table.empty()) {
      print_warning("--write-error-bands: fewer than " + std::to_string(sim::kMinResidualSamples) +
                    " predicted rows, so the table is empty (estimates will carry no interval)");
    }
  } else if (opt.csv.empty() && !profile) {
    // On the shipped development set: say when the shipped table no longer matches the model
    // (the datasheet model's: with a profile the residuals are another model's).
    const auto shipped = data::error_bands_path(data_dir(global));
    auto bands = data::load_error_bands(shipped);
    if (!bands) {
      for (const auto& d : bands.error()) print_warning((d.where.empty() ? "" : d.where + ": ") + d.message);
    } else if (*bands && !same_table((*bands)->table, rep.table)) {
      print_warning(shipped.string() + " differs from this model's residuals on the development set; regenerate "
                    "it with: capplan validate-published --write-error-bands " + shipped.string());
    }
  }
  // Accuracy gates for scripts and CI: the report is printed either way; exit 3 says the model
  // does not meet the requested accuracy on this set.
  bool met = true;
  const bool all = opt.gate_arch == "all";
  const Accuracy gated = all ? rep.overall : (rep.by_arch.contains(opt.gate_arch) ? rep.by_arch.at(opt.gate_arch)
                                                                                  : Accuracy{});
  int usable = all ? rep.usable : 0;
  if (!all) {
    for (const auto& r : rep.results) usable += r.run->arch_type == opt.gate_arch ? 1 : 0;
  }
  const double gated_coverage = usable > 0 ? static_cast<double>(gated.predicted) / usable : NAN;
  const std::string rows = all ? std::string() : " (" + opt.gate_arch + " rows)";
  if (opt.max_mape >= 0 && !(gated.mape <= opt.max_mape)) {
    print_error("accuracy gate: MAPE " + fixed(gated.mape, 2) + "%" + rows + " exceeds --max-mape " +
                fixed(opt.max_mape, 2) + "%");
    met = false;
  }
  if (opt.min_coverage >= 0 && !(gated_coverage >= opt.min_coverage)) {
    print_error("accuracy gate: coverage " + fixed(gated_coverage, 3) + rows + " is below --min-coverage " +
                fixed(opt.min_coverage, 3));
    met = false;
  }
  // No row that measures peak memory was predicted: the gate cannot be checked. A script that asks
  // for it expects it to hold on rows that exist; passing it silently (exit 0) would hide a table
  // without memory columns, and exit 3 would say the model failed a check that never ran. So this
  // is invalid input (exit 2) naming the flag, as for a gate given to a report that has no such rows.
  if (opt.max_memory_mape >= 0 && rep.memory.predicted == 0) {
    print_error("--max-memory-mape " + fixed(opt.max_memory_mape, 2) + ": no row of '" + csv.string() +
                "' measures peak memory, so the peak-memory gate cannot be checked");
    return code(Exit::invalid_input);
  }
  if (opt.max_memory_mape >= 0 && !(rep.memory.mape <= opt.max_memory_mape)) {
    print_error("accuracy gate: peak-memory MAPE " + fixed(rep.memory.mape, 2) + "% exceeds --max-memory-mape " +
                fixed(opt.max_memory_mape, 2) + "%");
    met = false;
  }
  return met ? code(Exit::ok) : code(Exit::infeasible);
}

}  // namespace

Command add_validate_published_command(CLI::App& app, const GlobalOptions& global) {
  auto opt = std::make_shared<ValidateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "validate-published", "Compare estimates with published training runs (accuracy report: MAPE, coverage)");
  cmd->add_option("csv", opt->csv, "Published-runs CSV (default: <data dir>/benchmarks/published_runs_dev.csv)");
  cmd->add_option("--format", opt->format, "Output format (default: table)")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--out", opt->out, "Write the report to this file (atomically) instead of stdout")
      ->check(output_file_name());
  cmd->add_option("--max-mape", opt->max_mape, "Exit 3 when the MAPE (percent) of predicted rows exceeds this")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--write-error-bands", opt->write_error_bands,
                  "Also write the residual table fitted on every predicted row to FILE (atomically): "
                  "the error bars of capplan estimate (data/error_bands.json)")
      ->type_name("FILE")
      ->check(output_file_name());
  cmd->add_option("--pool", opt->pool,
                  "Validated runs of another table (any layout validate-published reads) whose residuals join the "
                  "error bands: every leave-one-out interval and --write-error-bands; their rows are not reported "
                  "(repeatable; default on the shipped development set: <data dir>/benchmarks/hybrid_runs_dev.csv)")
      ->type_name("FILE");
  cmd->add_option("--gate-arch", opt->gate_arch, "Rows the --max-mape/--min-coverage gates apply to (default all)")
      ->check(CLI::IsMember({"all", "dense", "moe"}));
  cmd->add_option("--profile", opt->profile,
                  "Calibration profile (capplan calibrate --out, or --from-runs) to price every row with")
      ->type_name("FILE");
  cmd->add_flag("--whole-run", opt->whole_run,
                "Report the whole-run GPU-hour rows (BLOOM, Llama, DeepSeek, ...) predicted with the goodput model "
                "(interruptions, checkpoints, restarts) instead of the per-step rows");
  cmd->add_option("--max-memory-mape", opt->max_memory_mape,
                  "Exit 3 when the peak-memory MAPE (percent) of the rows that measure it exceeds this")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--min-coverage", opt->min_coverage, "Exit 3 when predicted/usable rows fall below this (0-1)")
      ->check(CLI::Range(0.0, 1.0));
  return Command{cmd, [opt, &global] { return run_validate_published(*opt, global); }};
}

}  // namespace capplan::cli
