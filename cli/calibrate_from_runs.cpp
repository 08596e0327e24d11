// SPDX-License-Identifier: Apache-2.0
// `capplan calibrate --from-runs FILE [--out PROFILE] [--format table|json]`: fits the datasheet
// model's efficiency parameters to a team's measured training steps (calib::fit_runs) and writes
// a profile with that runs_fit, which estimate, search and validate-published take with --profile.
// Prints each run (measured, predicted before and after the fit, leave-one-out), the parameters
// with their standard errors, and the leave-one-out MAPE.
#include <cmath>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "calibrate_command.hpp"
#include "capplan/calibrate/records.hpp"
#include "capplan/calibrate/runs_fit.hpp"
#include "capplan/data/profile_io.hpp"
#include "capplan/data/runs_io.hpp"

namespace capplan::cli {
namespace {

using nlohmann::json;

const sim::RunsFitParam& param(const sim::RunsFit& f, int j) {
  const sim::RunsFitParam* all[] = {&f.gemm_efficiency_scale, &f.scale_up_busbw_scale, &f.scale_out_busbw_scale,
                                    &f.per_op_overhead_s};
  return *all[j];
}

// The profile's runs_fit section as written (one spelling of the fit), what was not fitted and why,
// and the notes.
json summary_json(const calib::RunsFitResult& r, const sim::Profile& written, const data::RunsFile& runs,
                  const std::string& runs_file, const std::string& profile) {
  json j;
  j["profile"] = profile;
  j["runs_file"] = runs_file;
  j["gpu"] = runs.gpu_id;
  j["runs_fit"] = json::parse(data::profile_to_json(written))["runs_fit"];
  json why = json::object();
  for (int k = 0; k < calib::kRunsParams; ++k) {
    if (!r.not_fitted[k].empty()) why[calib::to_string(static_cast<calib::RunsParam>(k))] = r.not_fitted[k];
  }
  j["not_fitted"] = why;
  j["notes"] = r.notes;
  return j;
}

std::string seconds_text(double s) { return s > 0 ? fixed(s, 4) + " s" : "n/a"; }

// "1.2345 s (+3.1%)": a prediction and its error against the measurement.
std::string against(double predicted, double measured) {
  if (!(predicted > 0)) return "n/a";
  const double e = 100.0 * (predicted / measured - 1.0);
  return fixed(predicted, 4) + " s (" + (e >= 0 ? "+" : "") + fixed(e, 1) + "%)";
}

std::string param_text(int k, double v) {
  return k == static_cast<int>(calib::RunsParam::per_op_overhead_s) ? fixed(v * 1e6, 2) + " us" : fixed(v, 3);
}

std::string summary_table(const calib::RunsFitResult& r, const data::RunsFile& runs, const std::string& runs_file,
                          const std::string& profile) {
  std::ostringstream o;
  o << "Calibrated from " << r.fit.runs << (r.fit.runs == 1 ? " run" : " runs") << " on " << runs.gpu_id << " ("
    << runs_file << ")\n  profile: " << profile << "\n";
  if (!runs.note.empty()) o << "  note: " << runs.note << "\n";
  o << "\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& run : r.fit.per_run) {
    rows.push_back({run.label, seconds_text(run.measured_s), against(run.before_s, run.measured_s),
                    against(run.after_s, run.measured_s), against(run.loo_s, run.measured_s)});
  }
  o << render_table({"run", "measured", "datasheet", "fitted", "leave-one-out"}, rows,
                    {false, true, true, true, true}, "  ");
  o << "\n";
  std::vector<std::vector<std::string>> prow;
  for (int k = 0; k < calib::kRunsParams; ++k) {
    const auto& p = param(r.fit, k);
    const bool fitted = p.param.source == sim::ParamSource::fitted;
    prow.push_back({calib::to_string(static_cast<calib::RunsParam>(k)), param_text(k, p.param.value),
                    fitted ? "+/- " + param_text(k, p.std_error) : "", fitted ? "fitted" : r.not_fitted[k]});
  }
  o << render_table({"parameter", "value", "std. error", ""}, prow, {false, true, true, false}, "  ");
  o << "\n  in sample: RMS error " << fixed(100.0 * r.fit.rms_log_residual, 2) << "%, max "
    << fixed(100.0 * r.fit.max_abs_log_residual, 2) << "% (log residuals); leave-one-out MAPE "
    << fixed(100.0 * r.fit.loo_mape, 2) << "% over " << r.fit.runs << " runs\n";
  if (!r.notes.empty()) {
    o << "\nNotes\n";
    for (const auto& n : r.notes) o << "  - " << n << "\n";
  }
  return o.str();
}

}  // namespace

int run_calibrate_from_runs(const CalibrateOptions& opt, const GlobalOptions& global) {
  if (opt.quick || !opt.scenarios.empty() || opt.collectives_only || opt.resume || opt.step.any()) {
    print_error("--from-runs fits measured runs; it takes no measurement flags (--quick, --for-scenario, "
                "--collectives-only, --resume, the step flags)");
    return code(Exit::invalid_input);
  }
  const std::filesystem::path out = opt.out;
  if (const std::string problem = file_out_problem(out); !problem.empty()) {
    print_error("--out '" + opt.out + "': " + problem);
    return code(Exit::invalid_input);
  }
  const auto catalogs = load_catalogs_or_report(global);
  if (!catalogs) return code(Exit::invalid_input);
  if (!input_file_ok_or_report(opt.from_runs, "--from-runs")) return code(Exit::invalid_input);
  const auto runs = data::load_runs(opt.from_runs, *catalogs);
  if (!runs) {
    print_diagnostics(runs.error());
    return code(Exit::invalid_input);
  }
  const auto fit = calib::fit_runs(runs->runs);
  if (!fit) {
    print_diagnostics(fit.error());
    return code(Exit::invalid_input);
  }

  sim::Profile profile;
  profile.context = {{"backend", "runs"},
                     {"device", runs->gpu_id},
                     {"host", std::filesystem::path(opt.from_runs).filename().string()},
                     {"date_utc", calib::utc_now_iso8601()},
                     {"capplan_version", CAPPLAN_VERSION}};
  profile.runs_fit = fit->fit;
  if (!runs->note.empty()) profile.notes.push_back("runs file: " + runs->note);
  for (int k = 0; k < calib::kRunsParams; ++k) {
    if (!fit->not_fitted[k].empty()) {
      profile.notes.push_back(std::string(calib::to_string(static_cast<calib::RunsParam>(k))) + ": " +
                              fit->not_fitted[k]);
    }
  }
  for (const auto& n : fit->notes) profile.notes.push_back(n);
  if (auto w = write_atomically(out, data::profile_to_json(profile)); !w) {
    print_error("--out '" + opt.out + "': " + w.error());
    return code(Exit::internal);
  }
  if (opt.format == "json") {
    std::cout << summary_json(*fit, profile, *runs, opt.from_runs, out.string()).dump(2) << "\n";
  } else {
    std::cout << summary_table(*fit, *runs, opt.from_runs, out.string());
  }
  return code(Exit::ok);
}

}  // namespace capplan::cli
