// SPDX-License-Identifier: Apache-2.0
// The GEMM fit of the calibrated profile (docs/calibration.md, "Fitting"): a roofline with
// half-efficiency sizes per dimension, fitted by Levenberg-Marquardt on log(time).
#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <string>
#include <limits>
#include <tuple>
#include <vector>

#include "capplan/calibrate/fit.hpp"
#include "fit_support.hpp"

namespace capplan::calib {
namespace {

using sim::FitQuality;
using sim::Param;
using sim::ParamSource;
using detail::fitted;
using detail::precision_name;
using detail::quality;

// ---------------------------------------------------------------------------------------------
// GEMM: time = launch + F / (peak * wave * m/(m+mh) * n/(n+nh) * k/(k+kh)), fitted by
// Levenberg-Marquardt on log(time) over theta = log(launch, peak, mh, nh, kh) (positivity for free).

struct GemmSample {
  double m, n, k, flops_over_wave, t;
};

struct GemmTheta {
  // log launch, log peak, log m_half, log n_half, log k_half
  std::array<double, 5> v{};
  std::array<bool, 5> free{true, true, true, true, true};
};

double gemm_model(const std::array<double, 5>& th, const std::array<bool, 5>& free, const GemmSample& s) {
  const double mh = free[2] ? std::exp(th[2]) : 0.0;
  const double nh = free[3] ? std::exp(th[3]) : 0.0;
  const double kh = free[4] ? std::exp(th[4]) : 0.0;
  const double g = (1 + mh / s.m) * (1 + nh / s.n) * (1 + kh / s.k);
  return std::exp(th[0]) + s.flops_over_wave / std::exp(th[1]) * g;
}

double gemm_cost(const std::array<double, 5>& th, const std::array<bool, 5>& free,
                 const std::vector<GemmSample>& data) {
  double c = 0;
  for (const auto& s : data) {
    const double r = std::log(gemm_model(th, free, s)) - std::log(s.t);
    c += r * r;
  }
  return c;
}

// Bounds of the log parameters: halves between 0.01 and 1e6 elements, launch between 1 ns and
// 10 s; they keep LM away from flat directions that would run to +-infinity.
constexpr double kLogHalfLo = -4.6, kLogHalfHi = 13.8;
constexpr double kLogLaunchLo = -20.7, kLogLaunchHi = 2.3;

void clamp_theta(std::array<double, 5>& th) {
  th[0] = std::clamp(th[0], kLogLaunchLo, kLogLaunchHi);
  for (int i = 2; i < 5; ++i) th[static_cast<std::size_t>(i)] = std::clamp(th[static_cast<std::size_t>(i)], kLogHalfLo, kLogHalfHi);
}

std::array<double, 5> levenberg_marquardt(std::array<double, 5> th, const std::array<bool, 5>& free,
                                          const std::vector<GemmSample>& data) {
  std::vector<int> idx;
  for (int i = 0; i < 5; ++i) {
    if (free[static_cast<std::size_t>(i)]) idx.push_back(i);
  }
  const auto p = static_cast<Eigen::Index>(idx.size());
  const auto n = static_cast<Eigen::Index>(data.size());
  double lambda = 1e-3;
  double cost = gemm_cost(th, free, data);
  for (int iter = 0; iter < 200; ++iter) {
    Eigen::MatrixXd jac(n, p);
    Eigen::VectorXd r(n);
    const double launch = std::exp(th[0]), peak = std::exp(th[1]);
    for (Eigen::Index i = 0; i < n; ++i) {
      const auto& s = data[static_cast<std::size_t>(i)];
      const std::array<double, 3> dims{s.m, s.n, s.k};
      std::array<double, 3> term{};  // half/dim for each free half
      double g = 1;
      for (int d = 0; d < 3; ++d) {
        const auto du = static_cast<std::size_t>(d);
        term[du] = free[du + 2] ? std::exp(th[du + 2]) / dims[du] : 0.0;
        g *= 1 + term[du];
      }
      const double work = s.flops_over_wave / peak * g;
      const double model = launch + work;
      r(i) = std::log(model) - std::log(s.t);
      for (Eigen::Index c = 0; c < p; ++c) {
        const int which = idx[static_cast<std::size_t>(c)];
        double d_model = 0;
        if (which == 0) {
          d_model = launch;
        } else if (which == 1) {
          d_model = -work;
        } else {
          const auto du = static_cast<std::size_t>(which - 2);
          d_model = work * term[du] / (1 + term[du]);
        }
        jac(i, c) = d_model / model;
      }
    }
    const Eigen::MatrixXd jtj = jac.transpose() * jac;
    const Eigen::VectorXd jtr = jac.transpose() * r;
    bool improved = false;
    for (int tries = 0; tries < 20 && !improved; ++tries) {
      Eigen::MatrixXd a = jtj;
      for (Eigen::Index c = 0; c < p; ++c) a(c, c) += lambda * std::max(jtj(c, c), 1e-12);
      const Eigen::VectorXd step = a.ldlt().solve(-jtr);
      std::array<double, 5> trial = th;
      for (Eigen::Index c = 0; c < p; ++c) trial[static_cast<std::size_t>(idx[static_cast<std::size_t>(c)])] += step(c);
      clamp_theta(trial);
      const double trial_cost = gemm_cost(trial, free, data);
      if (std::isfinite(trial_cost) && trial_cost < cost) {
        const double gain = cost - trial_cost;
        th = trial;
        cost = trial_cost;
        lambda = std::max(lambda / 3, 1e-12);
        improved = true;
        if (gain < 1e-14 * std::max(1.0, cost)) return th;
      } else {
        lambda *= 4;
      }
    }
    if (!improved) break;
  }
  return th;
}
}  // namespace

Result<sim::GemmFit> fit_gemm(const std::vector<GemmRecord>& records, sim::Precision dtype, int wave_units) {
  const std::string where = "gemm/" + precision_name(dtype);
  std::vector<GemmSample> data;
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>> shapes;
  sim::GemmFit fit;
  fit.dtype = dtype;
  fit.wave_units = wave_units;
  bool first = true;
  for (const auto& r : records) {
    const auto& s = r.shape;
    if (s.dtype != dtype || s.m <= 0 || s.n <= 0 || s.k <= 0 || s.batch <= 0 || !(r.time.median_s > 0)) continue;
    const double m = static_cast<double>(s.m), n = static_cast<double>(s.n), k = static_cast<double>(s.k);
    const double b = static_cast<double>(s.batch);
    const double wave = wave_units > 0 ? std::max(1e-3, sim::tile_wave_efficiency(m, n, b, wave_units)) : 1.0;
    data.push_back({m, n, k, 2.0 * m * n * k * b / wave, r.time.median_s});
    shapes.insert({s.m, s.n, s.k, s.batch});
    fit.min_m = first ? s.m : std::min(fit.min_m, s.m);
    fit.max_m = first ? s.m : std::max(fit.max_m, s.m);
    fit.min_n = first ? s.n : std::min(fit.min_n, s.n);
    fit.max_n = first ? s.n : std::max(fit.max_n, s.n);
    fit.min_k = first ? s.k : std::min(fit.min_k, s.k);
    fit.max_k = first ? s.k : std::max(fit.max_k, s.k);
    first = false;
  }
  if (static_cast<int>(shapes.size()) < kMinGemmShapes) {
    return fail(where, std::to_string(shapes.size()) + " distinct shapes measured; a fit needs " +
                           std::to_string(kMinGemmShapes));
  }
  // A dimension that never varied cannot tell its ramp from the peak: its half is fixed at 0.
  GemmTheta theta;
  theta.free[2] = fit.min_m != fit.max_m;
  theta.free[3] = fit.min_n != fit.max_n;
  theta.free[4] = fit.min_k != fit.max_k;
  double max_rate = 0, min_t = std::numeric_limits<double>::infinity();
  for (const auto& s : data) {
    max_rate = std::max(max_rate, s.flops_over_wave / s.t);
    min_t = std::min(min_t, s.t);
  }
  // Several starts for the halves (small, medium, large), keep the best: the log-cost surface has
  // shallow valleys where a launch term and a ramp trade off.
  std::array<double, 5> best{};
  double best_cost = std::numeric_limits<double>::infinity();
  for (double half0 : {4.0, 64.0, 1024.0}) {
    std::array<double, 5> th{std::log(std::max(0.3 * min_t, 1e-9)), std::log(1.2 * max_rate), std::log(half0),
                             std::log(half0), std::log(half0)};
    clamp_theta(th);
    th = levenberg_marquardt(th, theta.free, data);
    const double c = gemm_cost(th, theta.free, data);
    if (c < best_cost) {
      best_cost = c;
      best = th;
    }
  }
  if (!std::isfinite(best_cost)) return fail(where, "the fit did not converge");
  // A parameter left at its lower bound was not resolved by the data (a CPU has no measurable
  // launch cost; a ramp that never bends): it is reported as 0, which is what the bound stands for.
  if (best[0] <= kLogLaunchLo + 1e-6) best[0] = -std::numeric_limits<double>::infinity();
  for (int i = 2; i < 5; ++i) {
    if (best[static_cast<std::size_t>(i)] <= kLogHalfLo + 1e-6) best[static_cast<std::size_t>(i)] = -std::numeric_limits<double>::infinity();
  }
  fit.launch_s.value = std::exp(best[0]);
  fit.peak_flops_per_s.value = std::exp(best[1]);
  fit.m_half.value = theta.free[2] ? std::exp(best[2]) : 0.0;
  fit.n_half.value = theta.free[3] ? std::exp(best[3]) : 0.0;
  fit.k_half.value = theta.free[4] ? std::exp(best[4]) : 0.0;
  std::vector<double> measured, predicted;
  for (const auto& r : records) {
    const auto& s = r.shape;
    if (s.dtype != dtype || s.m <= 0 || s.n <= 0 || s.k <= 0 || s.batch <= 0 || !(r.time.median_s > 0)) continue;
    measured.push_back(r.time.median_s);
    predicted.push_back(sim::gemm_model_time_s(fit, s.m, s.n, s.k, s.batch));
  }
  fit.quality = quality(measured, predicted);
  for (Param* p : {&fit.launch_s, &fit.peak_flops_per_s, &fit.m_half, &fit.n_half, &fit.k_half}) {
    *p = fitted(p->value, fit.quality);
  }
  // Halves held at 0 because their dimension never varied rest on no sample of their own.
  if (!theta.free[2]) fit.m_half.samples = 0;
  if (!theta.free[3]) fit.n_half.samples = 0;
  if (!theta.free[4]) fit.k_half.samples = 0;
  return fit;
}

}  // namespace capplan::calib
