// SPDX-License-Identifier: Apache-2.0
// The runs file of `capplan calibrate --from-runs` (docs/calibration.md, "From your own runs"):
// JSON or CSV, validated like every other input, all problems collected, each naming its run.
#include "capplan/data/runs_io.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "capplan/data/scenario_io.hpp"
#include "reading/csv.hpp"
#include "reading/json_reader.hpp"

namespace capplan::data {
namespace {

using detail::describe;
using nlohmann::json;

constexpr RunMetric kMetrics[] = {RunMetric::step_time_s, RunMetric::tokens_per_s, RunMetric::tokens_per_s_per_gpu};
constexpr const char* kMetricHelp = "one of step_time_s, tokens_per_s, tokens_per_s_per_gpu";

void error(Diagnostics& diags, std::string where, std::string message) {
  diags.push_back({Diagnostic::Severity::error, std::move(where), std::move(message)});
}

// A measurement: finite, positive and not denormal (a value below 1e-300 is no measurement).
bool valid_measurement(double v) { return std::isfinite(v) && v > 0 && std::isnormal(v); }

// Marks parse_scenario's diagnostics, which we then re-anchor under the run.
constexpr std::string_view kMark = "\x1f";

// The scenario `doc` of one run parsed, its diagnostics placed at `where` (the run's scenario
// field for an inline scenario, the scenario file for a path) and `context` appended to them.
std::optional<sim::Scenario> run_scenario(const json& doc, const Catalogs& catalogs, const std::string& where,
                                          const std::string& context, Diagnostics& diags) {
  auto parsed = parse_scenario(doc, catalogs, kMark);
  if (parsed) return parsed->scenario;
  for (auto d : parsed.error()) {
    if (d.where.starts_with(kMark)) d.where = where + d.where.substr(kMark.size());
    if (!context.empty()) d.message += " (" + context + ")";
    diags.push_back(std::move(d));
  }
  return std::nullopt;
}

// The scenario document of `path` (relative to the runs file's folder), or nullopt after an error at `where`.
std::optional<json> scenario_file(const std::string& path, const std::filesystem::path& runs_file,
                                  const std::string& where, Diagnostics& diags) {
  if (path.empty()) {
    error(diags, where, "must name a scenario file or be a scenario object; got \"\"");
    return std::nullopt;
  }
  std::filesystem::path p(path);
  if (p.is_relative()) p = runs_file.parent_path() / p;
  auto text = detail::read_text_file(p, where);
  if (!text) {
    for (auto& d : text.error()) diags.push_back(d);
    return std::nullopt;
  }
  auto doc = parse_scenario_document(*text, p.string());
  if (!doc) {
    for (auto& d : doc.error()) diags.push_back(d);
    return std::nullopt;
  }
  return *doc;
}

// Checks the one-GPU-type rule and appends `run`.
void add_run(RunsFile& out, MeasuredRun run, const std::string& scenario_where, Diagnostics& diags) {
  const std::string& gpu = run.scenario.cluster.gpu.id;
  if (out.runs.empty() || out.gpu_id.empty()) {
    out.gpu_id = gpu;
  } else if (gpu != out.gpu_id) {
    error(diags, scenario_where,
          "GPU '" + gpu + "' differs from run 1's '" + out.gpu_id + "': all runs must be on the same GPU type");
  }
  out.runs.push_back(std::move(run));
}

Result<RunsFile> parse_runs_json(std::string_view text, const std::filesystem::path& file, const Catalogs& catalogs) {
  const std::string name = file.filename().string();
  auto parsed = detail::parse_json_text(text, name);
  if (!parsed) return std::unexpected(parsed.error());
  const json& root = *parsed;
  Diagnostics diags;
  const auto at = [&](const std::string& pointer) { return name + "#" + pointer; };
  if (!root.is_object()) return fail(at(""), std::string("expected an object; got ") + root.type_name());
  RunsFile out;
  for (const auto& [key, value] : root.items()) {
    if (key != "format" && key != "runs" && key != "note") {
      error(diags, at("/" + key), "unknown field (known: format, runs, note)");
    }
  }
  if (auto f = root.find("format"); f == root.end()) {
    error(diags, at("/format"), std::string("required (\"") + kRunsFormat + "\") is missing");
  } else if (!f->is_string() || f->get<std::string>() != kRunsFormat) {
    error(diags, at("/format"), std::string("must be \"") + kRunsFormat + "\"; got " + describe(*f));
  }
  if (auto n = root.find("note"); n != root.end()) {
    if (n->is_string()) {
      out.note = n->get<std::string>();
    } else {
      error(diags, at("/note"), std::string("expected a string; got ") + n->type_name());
    }
  }
  const auto runs = root.find("runs");
  if (runs == root.end() || !runs->is_array() || runs->empty()) {
    error(diags, at("/runs"), runs == root.end() ? "required (a list of runs) is missing"
                                                 : "expected a non-empty list of runs; got " + describe(*runs));
    return std::unexpected(std::move(diags));
  }
  for (std::size_t i = 0; i < runs->size(); ++i) {
    const json& r = (*runs)[i];
    const std::string base = "/runs/" + std::to_string(i);
    if (!r.is_object()) {
      error(diags, at(base), std::string("expected an object; got ") + r.type_name());
      continue;
    }
    MeasuredRun run;
    run.where = at(base);
    run.label = "run " + std::to_string(i + 1);
    int measurements = 0;
    for (const auto& [key, value] : r.items()) {
      const std::string where = at(detail::child(base, key));
      bool metric = false;
      for (RunMetric m : kMetrics) {
        if (key != to_string(m)) continue;
        metric = true;
        ++measurements;
        run.metric = m;
        if (!value.is_number()) {
          error(diags, where, std::string("expected a number; got ") + value.type_name() + " " + describe(value));
        } else if (const double v = value.get<double>(); !valid_measurement(v)) {
          error(diags, where, "must be a positive measurement; got " + describe(value));
        } else {
          run.value = v;
        }
      }
      if (metric) continue;
      if (key == "label") {
        if (value.is_string() && !value.get<std::string>().empty()) {
          run.label = value.get<std::string>();
        } else {
          error(diags, where, "expected a non-empty string; got " + describe(value));
        }
      } else if (key != "scenario" && key != "override") {
        error(diags, where,
              "unknown field (known: label, scenario, override, step_time_s, tokens_per_s, tokens_per_s_per_gpu)");
      }
    }
    if (measurements != 1) {
      error(diags, at(base), "needs exactly one measurement (" + std::string(kMetricHelp) + "); got " +
                                 std::to_string(measurements));
    }
    const auto s = r.find("scenario");
    const std::string swhere = at(base + "/scenario");
    std::optional<json> doc;
    std::string scenario_where = swhere;
    std::string context;
    if (s == r.end()) {
      error(diags, swhere, "required (a scenario object, or the path of a scenario file) is missing");
    } else if (s->is_object()) {
      doc = *s;
    } else if (s->is_string()) {
      doc = scenario_file(s->get<std::string>(), file, swhere, diags);
      scenario_where = s->get<std::string>();
      context = "scenario of " + name + " run " + std::to_string(i + 1);
    } else {
      error(diags, swhere, "expected a scenario object or a file name; got " + describe(*s));
    }
    if (auto o = r.find("override"); o != r.end()) {
      if (!o->is_object()) {
        error(diags, at(base + "/override"), "expected an object of scenario fields; got " + describe(*o));
      } else if (doc) {
        doc->merge_patch(*o);
        context = context.empty() ? "with " + name + " run " + std::to_string(i + 1) + "'s override"
                                  : context + ", with its override";
      }
    }
    if (!doc) continue;
    auto scenario = run_scenario(*doc, catalogs, scenario_where, context, diags);
    if (!scenario) continue;
    run.scenario = std::move(*scenario);
    add_run(out, std::move(run), swhere, diags);
  }
  if (!diags.empty()) return std::unexpected(std::move(diags));
  return out;
}

// A CSV cell as a measurement (the whole cell a number).
std::optional<double> cell_number(const std::string& cell) {
  if (cell.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(cell.c_str(), &end);
  if (end != cell.c_str() + cell.size() || errno == ERANGE) return std::nullopt;
  return v;
}

Result<RunsFile> parse_runs_csv(std::string_view text, const std::filesystem::path& file, const Catalogs& catalogs) {
  const std::string name = file.filename().string();
  auto rows = detail::parse_csv(text, name);
  if (!rows) return std::unexpected(rows.error());
  if (rows->empty()) return fail(name + ":1", "empty file (expected a header: scenario, a measurement column, label)");
  Diagnostics diags;
  const auto& header = rows->front();
  std::map<std::string, std::size_t> col;
  std::optional<RunMetric> metric;
  for (std::size_t i = 0; i < header.cells.size(); ++i) {
    const std::string c = detail::trim(header.cells[i]);
    bool known = c == "scenario" || c == "label";
    for (RunMetric m : kMetrics) {
      if (c != to_string(m)) continue;
      known = true;
      if (metric) {
        error(diags, name + ":" + std::to_string(header.line),
              "two measurement columns ('" + std::string(to_string(*metric)) + "' and '" + c + "'); give one");
      }
      metric = m;
    }
    if (!known) {
      error(diags, name + ":" + std::to_string(header.line),
            "unknown column '" + c + "' (known: scenario, label, step_time_s, tokens_per_s, tokens_per_s_per_gpu)");
    }
    if (!col.emplace(c, i).second) {
      error(diags, name + ":" + std::to_string(header.line), "column '" + c + "' appears twice");
    }
  }
  if (!col.contains("scenario")) {
    error(diags, name + ":" + std::to_string(header.line), "missing column 'scenario' (a scenario file per run)");
  }
  if (!metric) {
    error(diags, name + ":" + std::to_string(header.line), std::string("missing a measurement column (") +
                                                               kMetricHelp + ")");
  }
  if (rows->size() < 2) error(diags, name + ":" + std::to_string(header.line), "no runs after the header");
  if (!diags.empty()) return std::unexpected(std::move(diags));
  RunsFile out;
  for (std::size_t i = 1; i < rows->size(); ++i) {
    const auto& row = (*rows)[i];
    const std::string where = name + ":" + std::to_string(row.line);
    if (row.cells.size() != header.cells.size()) {
      error(diags, where, "expected " + std::to_string(header.cells.size()) + " fields (as the header); got " +
                              std::to_string(row.cells.size()));
      continue;
    }
    const auto cell = [&](const std::string& c) { return detail::trim(row.cells[col.at(c)]); };
    MeasuredRun run;
    run.where = where;
    run.metric = *metric;
    run.label = col.contains("label") && !cell("label").empty() ? cell("label") : "run " + std::to_string(i);
    const std::string m = to_string(*metric);
    if (const auto v = cell_number(cell(m)); !v || !valid_measurement(*v)) {
      error(diags, where + ": " + m, "must be a positive measurement; got '" + cell(m) + "'");
    } else {
      run.value = *v;
    }
    const auto doc = scenario_file(cell("scenario"), file, where + ": scenario", diags);
    if (!doc) continue;
    auto scenario = run_scenario(*doc, catalogs, cell("scenario"), "scenario of " + where, diags);
    if (!scenario) continue;
    run.scenario = std::move(*scenario);
    add_run(out, std::move(run), where + ": scenario", diags);
  }
  if (!diags.empty()) return std::unexpected(std::move(diags));
  return out;
}

}  // namespace

const char* to_string(RunMetric m) {
  switch (m) {
    case RunMetric::step_time_s: return "step_time_s";
    case RunMetric::tokens_per_s: return "tokens_per_s";
    case RunMetric::tokens_per_s_per_gpu: return "tokens_per_s_per_gpu";
  }
  return "step_time_s";
}

Result<RunsFile> parse_runs(std::string_view text, const std::filesystem::path& file, const Catalogs& catalogs) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return fail(file.filename().string(), "empty file (no runs)");
  }
  if (file.extension() == ".csv") return parse_runs_csv(text, file, catalogs);
  return parse_runs_json(text, file, catalogs);
}

Result<RunsFile> load_runs(const std::filesystem::path& file, const Catalogs& catalogs) {
  auto text = detail::read_text_file(file, file.string());
  if (!text) return std::unexpected(text.error());
  return parse_runs(*text, file, catalogs);
}

}  // namespace capplan::data
