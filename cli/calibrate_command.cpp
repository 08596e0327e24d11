// SPDX-License-Identifier: Apache-2.0
// `capplan calibrate --backend host|cuda [--quick] [--for-scenario FILE] [--collectives-only]
//  [--out FILE] [--resume] [--format table|json]`: measures this machine and writes a profile.
//
// The measurements go to FILE's records file (<stem>.records.json next to it), rewritten
// atomically after every case, so an interrupted run loses at most the case it was measuring and
// `--resume` continues from there; the profile (fitted from all records) is written atomically at
// the end, and also when the run stops early (a signal, a lost device): then it is fitted to the
// cases measured so far and its notes say it is partial. `--fit-only RECORDS` fits a profile to a
// records file without measuring. Under mpirun every rank measures the collectives; only rank 0
// measures the rest, prints and writes.
#include <unistd.h>

#include <csignal>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "backends.hpp"
#include "capplan/calibrate/calibration_run.hpp"
#include "capplan/calibrate/fit.hpp"
#include "capplan/data/profile_io.hpp"
#include "capplan/data/scenario_io.hpp"
#include "capplan/data/serve_io.hpp"
#include "capplan/sim/serve/serve.hpp"
#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/cost/layer_step.hpp"
#include "calibrate_command.hpp"
#include "step_shape.hpp"

namespace capplan::cli {
namespace {

using nlohmann::json;

std::filesystem::path records_path(const std::filesystem::path& profile) {
  auto p = profile;
  p.replace_filename(profile.stem().string() + ".records.json");
  return p;
}

// The GEMMs the simulator generates for each scenario (at the layout capplan would choose).
bool scenario_gemms(const CalibrateOptions& opt, const GlobalOptions& global, std::vector<calib::GemmShape>& out) {
  if (opt.scenarios.empty()) return true;
  const auto catalogs = load_catalogs_or_report(global);
  if (!catalogs) return false;
  for (const auto& file : opt.scenarios) {
    const auto text = read_input(file);
    if (!text) {
      print_error("--for-scenario '" + file + "': " + text.error());
      return false;
    }
    const auto parsed = data::parse_scenario_text(*text, *catalogs, file);
    if (!parsed) {
      print_diagnostics(parsed.error());
      return false;
    }
    const auto& s = parsed->scenario;
    if (s.workload.kind == sim::WorkloadKind::serve) {
      // A serving scenario: the GEMMs of the passes its replica runs (decode batches and a
      // prefill chunk, sim::serving_passes), at its layout and weight format.
      const auto doc = data::parse_scenario_document(*text, file);
      if (!doc) {
        print_diagnostics(doc.error());
        return false;
      }
      const auto request = data::serve_request(*doc, *parsed, *catalogs, file);
      if (!request) {
        print_diagnostics(request.error());
        return false;
      }
      for (const auto& pass : sim::serving_passes(request->job, request->cluster)) {
        for (const auto& g : calib::gemm_shapes_of(pass)) out.push_back(g);
      }
      continue;
    }
    const sim::DatasheetCost datasheet(s.cluster);
    const auto e = sim::estimate(s, datasheet);
    if (!e) {
      print_diagnostics(e.error());
      return false;
    }
    const auto ops = sim::build_step_ops(s.model, s.training, e->layout.strategy, s.cluster);
    for (const auto& g : calib::gemm_shapes_of(ops)) out.push_back(g);
  }
  return true;
}

// "[#########...........]  41/120  ETA 0:37  gemm fp32 m=512 n=512 k=512" on one line of stderr.
void draw_progress(const calib::Progress& p) {
  constexpr int width = 28;
  const double frac = p.total > 0 ? static_cast<double>(p.done) / static_cast<double>(p.total) : 1.0;
  const int filled = static_cast<int>(std::lround(frac * width));
  std::string line = "\r[" + std::string(static_cast<std::size_t>(filled), '#') +
                     std::string(static_cast<std::size_t>(width - filled), '.') + "] " + std::to_string(p.done) +
                     "/" + std::to_string(p.total) + "  ETA " + clock_text(p.eta_s) + "  " + p.label;
  if (line.size() > 100) line.resize(100);
  line += std::string(100 - line.size(), ' ');
  std::cerr << line << std::flush;
}

double safe(double v) { return std::isfinite(v) ? v : 0.0; }

// Ctrl-C or SIGTERM (kill, a batch scheduler's time limit) during a single-rank run: finish the
// case being measured, keep the records, say how to resume, exit 128 + the signal. (Under mpirun,
// mpirun itself handles the signal for all ranks.)
volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_interrupt(int sig) { g_interrupted = sig; }

constexpr const char* kOneRank = "collectives skipped: this process is 1 rank (run under `mpirun -np N` to measure them)";

json summary_json(const calib::Measurements& m, const calib::RunReport& report, const std::string& profile,
                  const std::string& records, double elapsed_s, const sim::Profile& fitted) {
  json j;
  j["profile"] = profile;
  j["records"] = records;
  j["backend"] = m.context.backend;
  j["device"] = m.context.device;
  j["ranks"] = m.context.ranks;
  j["elapsed_s"] = safe(elapsed_s);
  j["measured"] = report.measured;
  j["resumed"] = report.resumed;
  j["records_count"] = {{"gemm", m.gemms.size()},
                        {"memory", m.memory.size()},
                        {"collective", m.collectives.size()},
                        {"step", m.steps.size()},
                        {"launch", m.launches.size()}};
  json gemm = json::object();
  for (const auto& r : m.gemms) {
    auto& best = gemm[sim::to_string(r.shape.dtype)];
    const double tf = safe(r.achieved_flops_per_s() / 1e12);
    if (best.is_null() || best.get<double>() < tf) best = tf;
  }
  j["gemm_best_tflops"] = gemm;
  json mem = json::object();
  for (const auto& r : m.memory) {
    auto& best = mem[r.pattern];
    const double gbps = safe(r.bandwidth_Bps() / 1e9);
    if (best.is_null() || best.get<double>() < gbps) best = gbps;
  }
  j["memory_best_GBps"] = mem;
  json coll = json::object();
  for (const auto& r : m.collectives) {
    auto& best = coll[sim::to_string(r.kind)];
    const double gbps = safe(r.busbw_Bps / 1e9);
    if (best.is_null() || best.get<double>() < gbps) best = gbps;
  }
  j["collective_best_busbw_GBps"] = coll;
  json steps = json::array();
  for (const auto& s : m.steps) {
    steps.push_back({{"hidden", s.shape.hidden},
                     {"heads", s.shape.heads},
                     {"seq_len", s.shape.seq_len},
                     {"micro_batch", s.shape.micro_batch},
                     {"layers", s.shape.layers},
                     {"dtype", sim::to_string(s.shape.dtype)},
                     {"step_s", safe(s.time.median_s)}});
  }
  j["steps"] = steps;
  json launch = json::object();
  for (const auto& f : fitted.launch) launch[f.pattern] = safe(f.per_kernel_s.value * 1e6);
  j["launch_us_per_kernel"] = launch;
  json notes = json::array();
  for (const auto& d : report.notes) notes.push_back(d.where + ": " + d.message);
  for (const auto& n : fitted.notes) notes.push_back(n);
  j["notes"] = notes;
  return j;
}

std::string summary_table(const json& j) {
  std::ostringstream o;
  const std::string where = j["device"].get<std::string>() + " (" + j["backend"].get<std::string>() + ", " +
                            std::to_string(j["ranks"].get<int>()) + (j["ranks"].get<int>() == 1 ? " rank" : " ranks") +
                            ")";
  if (j.value("fit_only", false)) {
    o << "Fitted a profile of " << where << " to " << j["resumed"].get<std::size_t>() << " records";
  } else {
    o << "Calibrated " << where << " in " << fixed(j["elapsed_s"].get<double>(), 1) << " s: "
      << j["measured"].get<std::size_t>() << " cases measured";
    if (j["resumed"].get<std::size_t>() > 0) o << ", " << j["resumed"].get<std::size_t>() << " resumed";
  }
  o << "\n  profile: " << j["profile"].get<std::string>() << "\n  records: " << j["records"].get<std::string>()
    << "\n\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& [dtype, tf] : j["gemm_best_tflops"].items()) {
    rows.push_back({"gemm " + dtype, fixed(tf.get<double>() * 1000, 1) + " GFLOP/s (best)"});
  }
  for (const auto& [pattern, bw] : j["memory_best_GBps"].items()) {
    rows.push_back({"memory " + pattern, fixed(bw.get<double>(), 1) + " GB/s (best)"});
  }
  for (const auto& [kind, bw] : j["collective_best_busbw_GBps"].items()) {
    rows.push_back({kind, fixed(bw.get<double>(), 2) + " GB/s busbw (best)"});
  }
  for (const auto& [pattern, us] : j["launch_us_per_kernel"].items()) {
    const double v = us.get<double>();  // a CPU's dispatch is nanoseconds, a GPU launch microseconds
    rows.push_back({"launch " + pattern, (v >= 1.0 ? fixed(v, 2) + " us" : fixed(v * 1000, 1) + " ns") +
                                             " per kernel (fitted)"});
  }
  for (const auto& s : j["steps"]) {
    rows.push_back({"training step", fixed(s["step_s"].get<double>() * 1000, 1) + " ms (h " +
                                         std::to_string(s["hidden"].get<int>()) + ", seq " +
                                         std::to_string(s["seq_len"].get<int>()) + ", " +
                                         s["dtype"].get<std::string>() + ")"});
  }
  o << render_table({"measured", "value"}, rows, {false, false}, "  ");
  if (!j["notes"].empty()) {
    o << "\nNotes\n";
    for (const auto& n : j["notes"]) o << "  - " << n.get<std::string>() << "\n";
  }
  return o.str();
}

// Fits `m` and writes the profile to `out` atomically; `partial`, when not empty, is the profile's
// first note (what was not measured and how to finish).
Result<sim::Profile> write_profile(const calib::Measurements& m, const std::filesystem::path& out,
                                   const std::string& partial) {
  auto profile = calib::fit_profile(m);
  if (!profile) return std::unexpected(profile.error());
  if (!partial.empty()) profile->notes.insert(profile->notes.begin(), partial);
  if (auto w = write_atomically(out, data::profile_to_json(*profile)); !w) {
    return fail("--out '" + out.string() + "'", w.error());
  }
  return profile;
}

}  // namespace

int run_calibrate_fit_only(const CalibrateOptions& opt, const GlobalOptions& /*global*/) {
  const bool quiet = opt.format == "json";
  const std::filesystem::path out = opt.out;
  if (const std::string problem = file_out_problem(out); !problem.empty()) {
    print_error("--out '" + opt.out + "': " + problem);
    return code(Exit::invalid_input);
  }
  std::error_code ec;
  if (std::filesystem::equivalent(opt.fit_only, out, ec)) {
    print_error("--out '" + opt.out + "': is the records file --fit-only reads; name another file");
    return code(Exit::invalid_input);
  }
  if (!input_file_ok_or_report(opt.fit_only, "--fit-only")) return code(Exit::invalid_input);
  const auto text = read_input(opt.fit_only);
  if (!text) {
    print_error("--fit-only '" + opt.fit_only + "': " + text.error());
    return code(Exit::invalid_input);
  }
  auto parsed = calib::parse_measurements(*text, std::filesystem::path(opt.fit_only).filename().string());
  if (!parsed) {
    print_diagnostics(parsed.error());
    return code(Exit::invalid_input);
  }
  const calib::Measurements& m = *parsed;
  const std::size_t records_count = m.gemms.size() + m.memory.size() + m.collectives.size() + m.steps.size() +
                                    m.launches.size();
  if (records_count == 0) {
    print_error("--fit-only '" + opt.fit_only + "': holds no measurements; nothing to fit");
    return code(Exit::invalid_input);
  }
  // What a complete sweep always ends with: a measured step. Without one the sweep was cut off.
  const std::string partial = m.steps.empty()
      ? "partial calibration: fitted to the " + std::to_string(records_count) + " records of '" +
            std::filesystem::path(opt.fit_only).filename().string() +
            "', a sweep cut off before its training step; `capplan calibrate --resume` completes it"
      : "";
  auto profile = write_profile(m, out, partial);
  if (!profile) {
    print_diagnostics(profile.error());
    return code(Exit::invalid_input);
  }
  calib::RunReport report;
  report.resumed = records_count;
  json summary = summary_json(m, report, out.string(), opt.fit_only, 0.0, *profile);
  summary["fit_only"] = true;
  if (quiet) {
    std::cout << summary.dump(2) << "\n";
  } else {
    std::cout << summary_table(summary);
  }
  return code(Exit::ok);
}

int run_calibrate(const CalibrateOptions& opt, const GlobalOptions& global) {
  if (!opt.from_runs.empty()) return run_calibrate_from_runs(opt, global);
  if (!opt.fit_only.empty()) return run_calibrate_fit_only(opt, global);
  const bool quiet = opt.format == "json";
  const std::filesystem::path out = opt.out;
  const auto records = records_path(out);
  // Refused before anything is measured (a folder, a device, a missing or read-only folder).
  if (const std::string problem = file_out_problem(out); !problem.empty()) {
    print_error("--out '" + opt.out + "': " + problem);
    return code(Exit::invalid_input);
  }

  calib::PlanOptions plan_options;
  plan_options.quick = opt.quick;
  plan_options.collectives_only = opt.collectives_only;
  if (!scenario_gemms(opt, global, plan_options.extra_gemms)) return code(Exit::invalid_input);
  if (opt.step.any()) {
    const auto step = step_from_flags(opt.step, opt.backend);
    if (!step) return code(Exit::invalid_input);
    plan_options.steps.push_back(*step);
  }

  calib::Measurements start;
  bool resumed_file = false;
  if (opt.resume && std::filesystem::exists(records)) {
    const auto text = read_input(records.string());
    if (!text) {
      print_error("--resume: '" + records.string() + "': " + text.error());
      return code(Exit::invalid_input);
    }
    auto parsed = calib::parse_measurements(*text, records.filename().string());
    if (!parsed) {
      print_diagnostics(parsed.error());
      return code(Exit::invalid_input);
    }
    start = std::move(*parsed);
    resumed_file = true;
  }

  auto opened = open_backend(opt.backend);
  if (!opened.backend) return code(opened.exit);
  auto& backend = *opened.backend;
  const bool leader = backend.rank() == 0;
  const auto ctx = backend.context();
  if (resumed_file && (start.context.backend != ctx.backend || start.context.device != ctx.device ||
                       start.context.ranks != ctx.ranks)) {
    if (leader) {
      print_error("--resume: '" + records.string() + "' was measured on " + start.context.device + " (" +
                  start.context.backend + ", " + std::to_string(start.context.ranks) + " ranks), not on " +
                  ctx.device + " (" + ctx.backend + ", " + std::to_string(ctx.ranks) +
                  " ranks); remove it or calibrate without --resume");
    }
    return code(Exit::invalid_input);
  }
  if (opt.resume && !resumed_file && leader && !quiet) {
    print_note("--resume: no records at '" + records.string() + "'; starting from the beginning");
  }
  if (backend.ranks() < 2) {
    if (opt.collectives_only) {
      if (leader) {
        print_error("--collectives-only: this process is 1 rank, so there is nothing to measure; run it under "
                    "mpirun, e.g. `mpirun -np 2 capplan calibrate --backend " + opt.backend +
                    " --collectives-only`");
      }
      return code(Exit::infeasible);
    }
    if (leader && !quiet) print_note(kOneRank);
  }

  const auto plan = calib::plan_sweep(backend, plan_options);
  calib::RunOptions run_options;
  if (opt.quick) {
    run_options.warmup = 2;
    run_options.iterations = 7;
    run_options.max_seconds_per_case = 0.5;
  }
  const bool bar = leader && !quiet && isatty(STDERR_FILENO) == 1;
  std::string checkpoint_error;
  const bool single = backend.ranks() == 1;
  if (single) {
    g_interrupted = 0;
    std::signal(SIGINT, on_interrupt);
    std::signal(SIGTERM, on_interrupt);
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto report = calib::run_calibration(
      backend, plan, std::move(start), run_options,
      [&](const calib::Progress& p) {
        if (bar) draw_progress(p);
      },
      [&](const calib::Measurements& m) {
        if (!leader || !checkpoint_error.empty()) return;
        if (auto w = write_atomically(records, calib::measurements_to_json(m)); !w) checkpoint_error = w.error();
      },
      single ? calib::StopFn([] { return g_interrupted != 0; }) : calib::StopFn{});
  if (single) {
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // --format json prints no notes on stderr: the JSON summary carries this one.
  if (backend.ranks() < 2 && quiet) {
    report.notes.insert(report.notes.begin(), {Diagnostic::Severity::warning, "calibrate", kOneRank});
  }
  if (bar) std::cerr << "\r" << std::string(100, ' ') << "\r" << std::flush;
  if (!leader) return code(Exit::ok);

  if (!checkpoint_error.empty()) {
    print_error("records '" + records.string() + "': " + checkpoint_error);
    return code(Exit::internal);
  }
  if (report.stopped || !report.lost.empty()) {
    if (auto w = write_atomically(records, calib::measurements_to_json(report.measurements)); !w) {
      print_error("records '" + records.string() + "': " + w.error());
      return code(Exit::internal);
    }
    const std::size_t have = report.measured + report.resumed;
    const std::string why = !report.lost.empty()                ? "the backend stopped working at '" + report.lost + "'"
                            : g_interrupted == SIGTERM           ? "terminated"
                                                                 : "interrupted";
    // What was measured is still a profile: fitted and written now, marked partial, so a run cut
    // off by a time limit leaves something to price with.
    std::string wrote = "no profile was written (nothing measured yet)";
    if (have > 0) {
      const std::string partial = "partial calibration: " + std::to_string(have) + " of " +
                                  std::to_string(plan.size()) + " planned cases measured (" + why +
                                  "); `capplan calibrate --resume` with the same flags completes it";
      if (auto written = write_profile(report.measurements, out, partial); written) {
        wrote = "a partial profile of those cases was written to '" + out.string() + "'";
      } else {
        print_diagnostics(written.error());
        wrote = "no profile was written (the fit failed)";
      }
    }
    const std::string kept = std::to_string(have) + " of " + std::to_string(plan.size()) + " cases are in '" +
                             records.string() + "'; " + wrote +
                             ". Run the same command with --resume to continue.";
    if (!report.lost.empty()) {
      // The backend cannot measure any more (a lost device): the failed case's notes say why.
      print_diagnostics(report.notes);
      print_error("the " + opt.backend + " backend stopped working at '" + report.lost +
                  "': " + kept);
      return code(Exit::internal);
    }
    print_error(std::string(g_interrupted == SIGTERM ? "terminated" : "interrupted") + ": " + kept);
    return 128 + (g_interrupted == SIGTERM ? SIGTERM : SIGINT);  // what a shell reports for the signal
  }
  // Also write when nothing new was measured (a complete resume) so the records match the profile.
  if (auto w = write_atomically(records, calib::measurements_to_json(report.measurements)); !w) {
    print_error("records '" + records.string() + "': " + w.error());
    return code(Exit::internal);
  }
  auto profile = write_profile(report.measurements, out, "");
  if (!profile) {
    print_diagnostics(profile.error());
    return code(Exit::internal);
  }
  const json summary = summary_json(report.measurements, report, out.string(), records.string(), elapsed, *profile);
  if (quiet) {
    std::cout << summary.dump(2) << "\n";
  } else {
    std::cout << summary_table(summary);
  }
  return code(Exit::ok);
}

}  // namespace capplan::cli
