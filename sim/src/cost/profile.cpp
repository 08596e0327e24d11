// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/cost/profile.hpp"

#include <algorithm>
#include <cmath>

namespace capplan::sim {

const char* to_string(ParamSource s) {
  switch (s) {
    case ParamSource::measured: return "measured";
    case ParamSource::fitted: return "fitted";
    case ParamSource::datasheet: return "datasheet";
  }
  return "fitted";
}

std::optional<ParamSource> param_source_from_string(const std::string& s) {
  if (s == "measured") return ParamSource::measured;
  if (s == "fitted") return ParamSource::fitted;
  if (s == "datasheet") return ParamSource::datasheet;
  return std::nullopt;
}

double tile_wave_efficiency(double m, double n, double batch, int units, int tile_m, int tile_n) {
  if (m <= 0 || n <= 0 || batch <= 0 || units <= 0) return 1.0;
  struct Tile {
    double m, n, intrinsic;
  };
  // cuBLAS picks among tile shapes; smaller tiles quantise better but run each SM less
  // efficiently (less operand reuse). Take the best of four, as a heuristic selector would. The
  // fourth is the skinny-M class of kernels (split-K GEMV, swap-AB, mma.sync m16n8k16 tiles of
  // 16 rows) that libraries dispatch for decode-sized batches, at half the large tiles' rate:
  // with it a GEMM of a handful of rows is bound by reading its weights, as measured (Frantar et
  // al. 2024, "MARLIN", Fig. 1: FP16 cuBLAS time flat from batch 1 to 16, set by the weights).
  const Tile tiles[] = {{static_cast<double>(tile_m), static_cast<double>(tile_n), 1.0},
                        {128.0, 128.0, 0.95},
                        {64.0, 128.0, 0.85},
                        {16.0, 128.0, 0.5}};
  const double sms = static_cast<double>(units);
  double best = 0.0;
  for (const auto& t : tiles) {
    const double tm = std::ceil(m / t.m), tn = std::ceil(n / t.n);
    const double tile_util = (m * n) / (tm * t.m * tn * t.n);
    const double ctas = tm * tn * batch;
    const double waves = std::ceil(ctas / sms);
    const double wave_util = ctas / (waves * sms);
    best = std::max(best, t.intrinsic * tile_util * wave_util);
  }
  return best;
}

double gemm_model_time_s(const GemmFit& fit, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch) {
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0) return 0.0;
  const double dm = static_cast<double>(m), dn = static_cast<double>(n), dk = static_cast<double>(k);
  const double db = static_cast<double>(batch);
  const double flops = 2.0 * dm * dn * dk * db;
  const double wave = fit.wave_units > 0 ? std::max(1e-3, tile_wave_efficiency(dm, dn, db, fit.wave_units)) : 1.0;
  const double ramp = (dm / (dm + fit.m_half.value)) * (dn / (dn + fit.n_half.value)) * (dk / (dk + fit.k_half.value));
  const double peak = fit.peak_flops_per_s.value;
  if (!(peak > 0) || !(ramp > 0)) return 0.0;
  return fit.launch_s.value + flops / (peak * wave * ramp);
}

double nccl_bus_factor(CollectiveKind kind, int ranks) {
  if (ranks <= 1) return 1.0;
  const double n = ranks;
  switch (kind) {
    case CollectiveKind::all_reduce: return 2.0 * (n - 1) / n;
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_to_all: return (n - 1) / n;
    case CollectiveKind::send_recv: return 1.0;
  }
  return 1.0;
}

bool tier_spans_nodes(const std::string& tier) { return tier == "network"; }

std::string profile_device_label(const Profile& profile) {
  std::string device = profile.context_value("device");
  if (device.empty()) device = "unknown device";
  std::string date = profile.context_value("date_utc");
  if (date.size() > 10 && date[4] == '-' && date[7] == '-') date = date.substr(0, 10);
  return device + (date.empty() ? "" : " (" + date + ")");
}

std::string runs_fit_source(const Profile& profile) {
  const int runs = profile.runs_fit ? profile.runs_fit->runs : 0;
  return "calibrated from " + std::to_string(runs) + (runs == 1 ? " run: " : " runs: ") + profile_device_label(profile);
}

std::string profile_cost_model_name(const Profile& profile) {
  if (profile.runs_fit && !profile.has_measurements()) return runs_fit_source(profile);
  std::string s = "calibrated: " + profile_device_label(profile);
  if (profile.runs_fit) s += ", datasheet fallback fitted to " + std::to_string(profile.runs_fit->runs) + " runs";
  return s;
}

bool profile_measured_on(const Profile& profile, const GpuSpec& gpu) {
  const std::string device = profile.context_value("device");
  // A CPU profile prices only the host itself (capplan validate's GPU "host"), never a catalog GPU.
  if (profile.context_value("backend") == "host") return gpu.id == "host";
  if (device.empty() || device == gpu.id) return true;
  const auto lower = [](char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); };
  std::string model;  // "h100" of "h100-sxm-80gb"
  for (char c : gpu.id) {
    if (c == '-' || c == '_' || c == ' ') break;
    model += lower(c);
  }
  if (model.empty()) return false;
  std::string word;
  for (std::size_t i = 0; i <= device.size(); ++i) {
    const char c = i < device.size() ? lower(device[i]) : ' ';
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      word += c;
      continue;
    }
    if (word == model) return true;
    word.clear();
  }
  return false;
}

}  // namespace capplan::sim
