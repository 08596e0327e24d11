// SPDX-License-Identifier: Apache-2.0
// Least-squares fits of the calibrated profile (docs/calibration.md, "Fitting"). All residuals
// are relative (time errors as a fraction of the measured time), so microsecond launches and
// second-long GEMMs weigh alike, as they do in a step-time estimate.
#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "capplan/calibrate/fit.hpp"
#include "fit_support.hpp"

namespace capplan::calib {
namespace detail {

using sim::FitQuality;
using sim::Param;
using sim::ParamSource;

// Goodness of fit from measured and predicted times (docs/calibration.md): RMS and max of the
// relative residual; R^2 of log(time).
FitQuality quality(const std::vector<double>& measured, const std::vector<double>& predicted) {
  FitQuality q;
  q.samples = static_cast<int>(measured.size());
  if (measured.empty()) return q;
  double ss_rel = 0, max_rel = 0, mean_log = 0;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const double rel = (predicted[i] - measured[i]) / measured[i];
    ss_rel += rel * rel;
    max_rel = std::max(max_rel, std::abs(rel));
    mean_log += std::log(measured[i]);
  }
  mean_log /= static_cast<double>(measured.size());
  double ss_res = 0, ss_tot = 0;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const double r = std::log(std::max(predicted[i], 1e-300)) - std::log(measured[i]);
    const double d = std::log(measured[i]) - mean_log;
    ss_res += r * r;
    ss_tot += d * d;
  }
  q.rms_relative_residual = std::sqrt(ss_rel / static_cast<double>(measured.size()));
  q.max_relative_residual = max_rel;
  // All measured times equal: R^2 is undefined; report 1 when the fit reproduces them, else 0.
  q.r2 = ss_tot > 0 ? 1.0 - ss_res / ss_tot : (ss_res < 1e-12 ? 1.0 : 0.0);
  return q;
}

Param fitted(double value, const FitQuality& q) {
  return Param{value, ParamSource::fitted, q.samples, q.rms_relative_residual};
}

std::string precision_name(sim::Precision p) { return sim::to_string(p); }

}  // namespace detail

namespace {

using sim::FitQuality;
using sim::Param;
using sim::ParamSource;
using detail::fitted;
using detail::precision_name;
using detail::quality;

// Weighted linear least squares for time = latency + x / rate, minimising the relative residual
// sum(((latency + x_i * inv_rate - t_i) / t_i)^2). A negative latency (the data cannot resolve it)
// is pinned to zero and the slope refitted.
struct LinearFit {
  double latency = 0, inv_rate = 0;
  bool ok = false;
};
LinearFit fit_latency_rate(const std::vector<double>& x, const std::vector<double>& t) {
  const auto n = static_cast<Eigen::Index>(x.size());
  Eigen::MatrixXd a(n, 2);
  Eigen::VectorXd b = Eigen::VectorXd::Ones(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    a(i, 0) = 1.0 / t[static_cast<std::size_t>(i)];
    a(i, 1) = x[static_cast<std::size_t>(i)] / t[static_cast<std::size_t>(i)];
  }
  LinearFit f;
  const Eigen::Vector2d sol = a.colPivHouseholderQr().solve(b);
  f.latency = sol(0);
  f.inv_rate = sol(1);
  if (!(f.latency >= 0)) {
    f.latency = 0;
    f.inv_rate = a.col(1).dot(b) / a.col(1).squaredNorm();
  }
  f.ok = std::isfinite(f.latency) && std::isfinite(f.inv_rate) && f.inv_rate > 0;
  return f;
}

int count_distinct(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return static_cast<int>(std::unique(v.begin(), v.end()) - v.begin());
}

// The SM count of the context: Context::properties first, then the keys records written before
// properties existed used (versions, clocks). 0 (no quantisation term) when absent or not a number.
int wave_units_of(const Context& c) {
  for (const auto* map : {&c.properties, &c.versions, &c.clocks}) {
    if (auto it = map->find("sm_count"); it != map->end()) {
      try {
        const int v = std::stoi(it->second);
        if (v > 0) return v;
      } catch (...) {
        return 0;  // not a number: no quantisation term
      }
    }
  }
  return 0;
}
}  // namespace

namespace {

// time = latency + x / rate over one series of (size, median time) pairs: the fit, its quality
// and the measured range, or why there is none (`sizes` names what x counts, `grows` what the
// time must grow with).
struct SeriesFit {
  LinearFit line;
  FitQuality quality;
  double min_x = 0, max_x = 0;
};
Result<SeriesFit> fit_series(const std::vector<double>& x, const std::vector<double>& t, const std::string& where,
                             const std::string& sizes, const std::string& grows) {
  if (count_distinct(x) < kMinSizes) {
    return fail(where, std::to_string(count_distinct(x)) + " distinct " + sizes + " measured; a fit needs " +
                           std::to_string(kMinSizes));
  }
  SeriesFit f;
  f.line = fit_latency_rate(x, t);
  if (!f.line.ok) return fail(where, "time does not grow with " + grows);
  std::vector<double> predicted;
  for (double v : x) predicted.push_back(f.line.latency + v * f.line.inv_rate);
  f.quality = quality(t, predicted);
  f.min_x = *std::min_element(x.begin(), x.end());
  f.max_x = *std::max_element(x.begin(), x.end());
  return f;
}

}  // namespace

Result<sim::MemoryFit> fit_memory(const std::vector<MemoryRecord>& records, const std::string& pattern) {
  std::vector<double> x, t;
  for (const auto& r : records) {
    if (r.pattern != pattern || !(r.bytes > 0) || !(r.time.median_s > 0)) continue;
    x.push_back(r.bytes);
    t.push_back(r.time.median_s);
  }
  const auto series = fit_series(x, t, "memory/" + pattern, "sizes", "bytes; no bandwidth can be fitted");
  if (!series) return std::unexpected(series.error());
  sim::MemoryFit fit;
  fit.pattern = pattern;
  fit.quality = series->quality;
  fit.latency_s = fitted(series->line.latency, fit.quality);
  fit.bandwidth_Bps = fitted(1.0 / series->line.inv_rate, fit.quality);
  fit.min_bytes = series->min_x;
  fit.max_bytes = series->max_x;
  return fit;
}

Result<sim::LaunchFit> fit_launch(const std::vector<LaunchRecord>& records, const std::string& pattern) {
  std::vector<double> x, t;
  for (const auto& r : records) {
    if (r.pattern != pattern || r.kernels <= 0 || !(r.time.median_s > 0)) continue;
    x.push_back(static_cast<double>(r.kernels));
    t.push_back(r.time.median_s);
  }
  const auto series = fit_series(x, t, "launch/" + pattern, "batch sizes",
                                 "the number of kernels; no cost per kernel can be fitted");
  if (!series) return std::unexpected(series.error());
  sim::LaunchFit fit;
  fit.pattern = pattern;
  fit.quality = series->quality;
  fit.per_kernel_s = fitted(series->line.inv_rate, fit.quality);
  fit.fixed_s = fitted(series->line.latency, fit.quality);
  fit.min_kernels = static_cast<int>(series->min_x);
  fit.max_kernels = static_cast<int>(series->max_x);
  return fit;
}

Result<sim::CollectiveFit> fit_collective(const std::vector<CollectiveRecord>& records, sim::CollectiveKind kind,
                                          int ranks, const std::string& tier) {
  const std::string where = std::string("collectives/") + sim::to_string(kind) + "/" + std::to_string(ranks) + "/" + tier;
  const double factor = sim::nccl_bus_factor(kind, ranks);
  std::vector<double> x, t, bytes;
  int nodes = 1;
  for (const auto& r : records) {
    if (r.kind != kind || r.ranks != ranks || r.tier != tier || !(r.bytes > 0) || !(r.time.median_s > 0)) continue;
    bytes.push_back(r.bytes);
    x.push_back(r.bytes * factor);
    t.push_back(r.time.median_s);
    nodes = std::max(nodes, r.nodes);
  }
  if (count_distinct(bytes) < kMinSizes) {
    return fail(where, std::to_string(count_distinct(bytes)) + " distinct sizes measured; a fit needs " +
                           std::to_string(kMinSizes));
  }
  const LinearFit lf = fit_latency_rate(x, t);
  if (!lf.ok) return fail(where, "time does not grow with bytes; no bus bandwidth can be fitted");
  sim::CollectiveFit fit;
  fit.kind = kind;
  fit.ranks = ranks;
  fit.nodes = nodes;
  fit.tier = tier;
  std::vector<double> predicted;
  for (double v : x) predicted.push_back(lf.latency + v * lf.inv_rate);
  fit.quality = quality(t, predicted);
  fit.latency_s = fitted(lf.latency, fit.quality);
  fit.busbw_Bps = fitted(1.0 / lf.inv_rate, fit.quality);
  fit.min_bytes = *std::min_element(bytes.begin(), bytes.end());
  fit.max_bytes = *std::max_element(bytes.begin(), bytes.end());
  return fit;
}

Result<sim::Profile> fit_profile(const Measurements& m) {
  // Records must be physical: a non-positive time or size is a broken backend or a bad file.
  Diagnostics diags;
  auto check = [&](bool ok, const std::string& where, const std::string& what, double got) {
    if (!ok) diags.push_back({Diagnostic::Severity::error, "records#" + where, what + "; got " + std::to_string(got)});
  };
  for (std::size_t i = 0; i < m.gemms.size(); ++i) {
    const auto& r = m.gemms[i];
    const std::string w = "/gemms/" + std::to_string(i);
    check(r.shape.m > 0, w + "/m", "must be > 0", static_cast<double>(r.shape.m));
    check(r.shape.n > 0, w + "/n", "must be > 0", static_cast<double>(r.shape.n));
    check(r.shape.k > 0, w + "/k", "must be > 0", static_cast<double>(r.shape.k));
    check(r.shape.batch > 0, w + "/batch", "must be > 0", static_cast<double>(r.shape.batch));
    check(r.time.median_s >= 0 && std::isfinite(r.time.median_s), w + "/time/median_s", "must be >= 0", r.time.median_s);
  }
  for (std::size_t i = 0; i < m.memory.size(); ++i) {
    const auto& r = m.memory[i];
    const std::string w = "/memory/" + std::to_string(i);
    check(r.bytes > 0 && std::isfinite(r.bytes), w + "/bytes", "must be > 0", r.bytes);
    check(r.time.median_s >= 0 && std::isfinite(r.time.median_s), w + "/time/median_s", "must be >= 0", r.time.median_s);
  }
  for (std::size_t i = 0; i < m.collectives.size(); ++i) {
    const auto& r = m.collectives[i];
    const std::string w = "/collectives/" + std::to_string(i);
    check(r.bytes > 0 && std::isfinite(r.bytes), w + "/bytes", "must be > 0", r.bytes);
    check(r.ranks >= 2, w + "/ranks", "must be >= 2", r.ranks);
    check(r.time.median_s >= 0 && std::isfinite(r.time.median_s), w + "/time/median_s", "must be >= 0", r.time.median_s);
  }
  for (std::size_t i = 0; i < m.launches.size(); ++i) {
    const auto& r = m.launches[i];
    const std::string w = "/launches/" + std::to_string(i);
    check(r.kernels > 0, w + "/kernels", "must be > 0", r.kernels);
    check(r.time.median_s >= 0 && std::isfinite(r.time.median_s), w + "/time/median_s", "must be >= 0", r.time.median_s);
  }
  for (std::size_t i = 0; i < m.steps.size(); ++i) {
    const auto& r = m.steps[i];
    check(r.time.median_s >= 0 && std::isfinite(r.time.median_s), "/steps/" + std::to_string(i) + "/time/median_s",
          "must be >= 0", r.time.median_s);
  }
  if (!diags.empty()) return std::unexpected(std::move(diags));

  // A median of exactly 0 s is a kernel below the timer's resolution: it says nothing about the
  // model, so the record is left out of the fits and the profile, with a note naming it.
  std::vector<std::string> skipped;
  auto keep = [&](const auto& records, const char* list) {
    std::decay_t<decltype(records)> out;
    for (std::size_t i = 0; i < records.size(); ++i) {
      if (records[i].time.median_s > 0) {
        out.push_back(records[i]);
      } else {
        skipped.push_back(std::string("records#/") + list + "/" + std::to_string(i) +
                          ": median time 0 s (below the timer's resolution); record left out");
      }
    }
    return out;
  };
  const std::vector<GemmRecord> gemms = keep(m.gemms, "gemms");
  const std::vector<MemoryRecord> memory = keep(m.memory, "memory");
  const std::vector<CollectiveRecord> collectives = keep(m.collectives, "collectives");
  const std::vector<StepRecord> steps = keep(m.steps, "steps");
  const std::vector<LaunchRecord> launches = keep(m.launches, "launches");

  sim::Profile p;
  const Context& c = m.context;
  p.context["backend"] = c.backend;
  p.context["device"] = c.device;
  p.context["host"] = c.host;
  p.context["date_utc"] = c.date_utc;
  p.context["capplan_version"] = c.capplan_version;
  p.context["ranks"] = std::to_string(c.ranks);
  p.context["ranks_per_node"] = std::to_string(c.ranks_per_node);
  p.context["devices_per_rank"] = std::to_string(c.devices_per_rank);
  p.context["threads"] = std::to_string(c.threads);
  for (const auto& [k, v] : c.versions) p.context["version." + k] = v;
  for (const auto& [k, v] : c.clocks) p.context["clock." + k] = v;
  for (const auto& [k, v] : c.properties) p.context["property." + k] = v;

  p.notes = skipped;
  auto note = [&](const Diagnostics& d) {
    for (const auto& x : d) p.notes.push_back(x.where + ": " + x.message);
  };

  // GEMMs: every measured point, and one fit per dtype.
  std::set<sim::Precision> dtypes;
  for (const auto& r : gemms) {
    dtypes.insert(r.shape.dtype);
    p.gemm_points.push_back({r.shape.m, r.shape.n, r.shape.k, r.shape.batch, r.shape.dtype, r.time.median_s,
                             static_cast<int>(r.time.samples_s.size()), r.time.cv});
  }
  const int units = wave_units_of(c);
  for (sim::Precision d : dtypes) {
    if (auto f = fit_gemm(gemms, d, units)) {
      p.gemm.push_back(*f);
    } else {
      note(f.error());
    }
  }
  std::set<std::string> patterns;
  for (const auto& r : memory) {
    patterns.insert(r.pattern);
    p.memory_points.push_back({r.pattern, r.bytes, r.time.median_s, static_cast<int>(r.time.samples_s.size()), r.time.cv});
  }
  for (const auto& pat : patterns) {
    if (auto f = fit_memory(memory, pat)) {
      p.memory.push_back(*f);
    } else {
      note(f.error());
    }
  }
  std::set<std::tuple<int, int, std::string>> groups;
  for (const auto& r : collectives) groups.insert({static_cast<int>(r.kind), r.ranks, r.tier});
  for (const auto& [kind, ranks, tier] : groups) {
    if (auto f = fit_collective(collectives, static_cast<sim::CollectiveKind>(kind), ranks, tier)) {
      p.collectives.push_back(*f);
    } else {
      note(f.error());
    }
  }
  std::vector<std::string> launch_patterns;
  for (const auto& r : launches) {
    if (std::find(launch_patterns.begin(), launch_patterns.end(), r.pattern) == launch_patterns.end()) {
      launch_patterns.push_back(r.pattern);
    }
  }
  for (const auto& pat : launch_patterns) {
    if (auto f = fit_launch(launches, pat)) {
      p.launch.push_back(*f);
    } else {
      note(f.error());
    }
  }
  for (const auto& s : steps) {
    sim::MeasuredStep ms;
    ms.layers = s.shape.layers;
    ms.hidden = s.shape.hidden;
    ms.heads = s.shape.heads;
    ms.ffn_hidden = s.shape.ffn_hidden;
    ms.seq_len = s.shape.seq_len;
    ms.micro_batch = s.shape.micro_batch;
    ms.gated_ffn = s.shape.gated_ffn;
    ms.dtype = s.shape.dtype;
    ms.kv_heads = s.shape.kv_heads;
    ms.rmsnorm = s.shape.rmsnorm;
    ms.rope = s.shape.rope;
    ms.flash_attention = s.shape.flash_attention;
    ms.time_s = s.time.median_s;
    ms.samples = static_cast<int>(s.time.samples_s.size());
    ms.cv = s.time.cv;
    ms.components_s = s.components_s;
    p.steps.push_back(std::move(ms));
  }
  // Which NCCL measured (or would measure) the collectives: the library loaded at run time, the
  // headers built against and the all-to-all path, so a summary shows a version mismatch at once.
  if (const auto v = c.versions.find("nccl"); v != c.versions.end()) {
    std::string text = "nccl: " + v->second + " loaded";
    if (const auto h = c.versions.find("nccl_headers"); h != c.versions.end()) text += ", headers " + h->second;
    if (const auto a = c.versions.find("nccl_alltoall"); a != c.versions.end()) text += "; all-to-all " + a->second;
    p.notes.push_back(text);
  }
  return p;
}

}  // namespace capplan::calib
