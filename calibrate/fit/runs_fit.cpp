// SPDX-License-Identifier: Apache-2.0
// calibrate --from-runs: the datasheet model's efficiency parameters fitted to measured steps
// (docs/calibration.md, "From your own runs").
#include "capplan/calibrate/runs_fit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <utility>

#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/workload/strategy.hpp"

namespace capplan::calib {
namespace {

using Vec = std::array<double, kRunsParams>;

// The LM works in these units (the overhead in microseconds) so that every parameter's range is of
// order one and J^T J is well conditioned.
constexpr Vec kUnit = {1.0, 1.0, 1.0, 1e-6};

// A parameter that moves no run's step time by more than this (relative, over its whole range) is
// not identifiable from the runs: 0.1% is below any measurement's noise.
constexpr double kIdentifiable = 1e-3;

// Forward-difference step as a fraction of the parameter's range: far above the simulator's
// floating-point noise (1e-12 relative), small against the range (the model is smooth between
// its max() kinks).
constexpr double kStep = 1e-4;

constexpr int kMaxIterations = 100;

Vec neutral() {
  Vec x{};
  for (int j = 0; j < kRunsParams; ++j) x[j] = kRunsBounds[j].neutral;
  return x;
}

double clamp_param(int j, double v) { return std::clamp(v, kRunsBounds[j].lo, kRunsBounds[j].hi); }

// One run ready to fit: its layout fixed as the datasheet model chose it (so that the parameters
// price the same op list throughout), its measurement as a step time.
struct Prepared {
  sim::Scenario scenario;
  double measured_s = 0;
};

// The request that pins `p`, the layout an estimate chose.
sim::StrategyRequest pinned(sim::StrategyRequest r, const sim::Parallelism& p) {
  r.tp = p.tp;
  r.pp = p.pp;
  r.dp = p.dp;
  r.cp = p.cp;
  r.ep = p.ep;
  r.etp = p.etp;
  r.micro_batch = p.micro_batch;
  r.virtual_stages = p.virtual_stages;
  r.zero = p.zero;
  r.recompute = p.recompute;
  if (p.first_stage_layers > 0) r.first_stage_layers = p.first_stage_layers;
  if (p.last_stage_layers > 0) r.last_stage_layers = p.last_stage_layers;
  for (const auto& o : sim::kStrategyOptions) r.*(o.request) = p.*(o.value);
  return r;
}

Result<double> step_s(const sim::Scenario& s, const Vec& x, const std::string& where) {
  const sim::DatasheetCost cost(s.cluster, sim::with_runs_fit({}, runs_fit_of(x)));
  auto e = sim::estimate(s, cost);
  if (!e) {
    Diagnostics d = e.error();
    for (auto& x_d : d) x_d.where = where + ": " + x_d.where;
    return std::unexpected(std::move(d));
  }
  const double t = e->step.time.base();
  if (!std::isfinite(t) || !(t > 0)) return fail(where, "the simulator gives no finite step time for this run");
  return t;
}

Result<Prepared> prepare(const data::MeasuredRun& run) {
  const sim::DatasheetCost datasheet(run.scenario.cluster);
  auto e = sim::estimate(run.scenario, datasheet);
  if (!e) {
    Diagnostics d = e.error();
    for (auto& x : d) x.where = run.where + ": " + x.where;
    return std::unexpected(std::move(d));
  }
  Prepared p;
  p.scenario = run.scenario;
  p.scenario.strategy = pinned(run.scenario.strategy, e->layout.strategy);
  // Tokens per step do not depend on the cost model once the layout is fixed.
  const double tokens_per_step = e->step.tokens_per_s * e->step.time.base();
  const double gpus = static_cast<double>(run.scenario.cluster.gpus);
  switch (run.metric) {
    case data::RunMetric::step_time_s: p.measured_s = run.value; break;
    case data::RunMetric::tokens_per_s: p.measured_s = tokens_per_step / run.value; break;
    case data::RunMetric::tokens_per_s_per_gpu: p.measured_s = tokens_per_step / (run.value * gpus); break;
  }
  if (!std::isfinite(p.measured_s) || !(p.measured_s > 0)) {
    return fail(run.where, "the measurement gives no finite step time (tokens per step " +
                               std::to_string(tokens_per_step) + ")");
  }
  return p;
}

// The log residuals ln(predicted / measured) of `runs` at `x`.
Result<Eigen::VectorXd> residuals(const std::vector<const Prepared*>& runs, const Vec& x) {
  Eigen::VectorXd r(static_cast<Eigen::Index>(runs.size()));
  for (std::size_t i = 0; i < runs.size(); ++i) {
    auto t = step_s(runs[i]->scenario, x, "run");
    if (!t) return std::unexpected(t.error());
    r[static_cast<Eigen::Index>(i)] = std::log(*t / runs[i]->measured_s);
  }
  return r;
}

// d r / d u_j (u in kUnit) by forward differences, stepping inward at the upper bound.
Result<Eigen::MatrixXd> jacobian(const std::vector<const Prepared*>& runs, const Vec& x, const Eigen::VectorXd& r0,
                                 const std::array<bool, kRunsParams>& free) {
  Eigen::MatrixXd jac = Eigen::MatrixXd::Zero(r0.size(), kRunsParams);
  for (int j = 0; j < kRunsParams; ++j) {
    if (!free[j]) continue;
    double h = kStep * (kRunsBounds[j].hi - kRunsBounds[j].lo);
    if (x[j] + h > kRunsBounds[j].hi) h = -h;
    Vec xh = x;
    xh[j] += h;
    auto r = residuals(runs, xh);
    if (!r) return std::unexpected(r.error());
    jac.col(j) = (*r - r0) / (h / kUnit[j]);
  }
  return jac;
}

struct Solution {
  Vec x{};
  Eigen::VectorXd r;
  Eigen::MatrixXd jac;
  int iterations = 0;
};

// Bounded Levenberg-Marquardt (Marquardt's diagonal scaling; a step is projected on the bounds and
// accepted only when it lowers the sum of squares).
Result<Solution> levenberg_marquardt(const std::vector<const Prepared*>& runs, Vec x,
                                     const std::array<bool, kRunsParams>& free) {
  auto r = residuals(runs, x);
  if (!r) return std::unexpected(r.error());
  double cost = r->squaredNorm();
  auto jac = jacobian(runs, x, *r, free);
  if (!jac) return std::unexpected(jac.error());
  double lambda = 1e-3;
  int it = 0;
  for (; it < kMaxIterations; ++it) {
    const Eigen::MatrixXd a = jac->transpose() * *jac;
    const Eigen::VectorXd g = jac->transpose() * *r;
    bool moved = false;
    while (lambda < 1e12) {
      Eigen::MatrixXd damped = a;
      for (int j = 0; j < kRunsParams; ++j) damped(j, j) += lambda * std::max(a(j, j), 1e-12) + (free[j] ? 0 : 1.0);
      const Eigen::VectorXd delta = damped.ldlt().solve(-g);
      Vec xn = x;
      for (int j = 0; j < kRunsParams; ++j) {
        if (free[j]) xn[j] = clamp_param(j, x[j] + delta[j] * kUnit[j]);
      }
      auto rn = residuals(runs, xn);
      if (!rn) return std::unexpected(rn.error());
      const double cn = rn->squaredNorm();
      if (cn < cost) {
        const double gain = cost - cn;
        x = xn;
        *r = std::move(*rn);
        cost = cn;
        lambda = std::max(lambda / 3.0, 1e-9);
        moved = gain > 1e-14 * std::max(cost, 1e-30) && gain > 1e-24;
        break;
      }
      lambda *= 4.0;
    }
    if (!moved) break;
    jac = jacobian(runs, x, *r, free);
    if (!jac) return std::unexpected(jac.error());
  }
  return Solution{x, std::move(*r), std::move(*jac), it};
}

// Which parameters the runs can identify: a column of J (scaled to the parameter's whole range)
// that moves no run by kIdentifiable is out; then, while there are not more runs than parameters,
// the least identifiable (smallest scaled column norm) is held at its neutral value.
std::array<bool, kRunsParams> identifiable(const Eigen::MatrixXd& jac, std::size_t runs,
                                           std::array<bool, kRunsParams> free,
                                           std::array<std::string, kRunsParams>* why) {
  std::array<double, kRunsParams> reach{};
  for (int j = 0; j < kRunsParams; ++j) {
    const double range = (kRunsBounds[j].hi - kRunsBounds[j].lo) / kUnit[j];
    reach[j] = jac.col(j).cwiseAbs().maxCoeff() * range;
    if (free[j] && !(reach[j] > kIdentifiable)) {
      free[j] = false;
      if (why != nullptr) {
        (*why)[j] = j == 1 || j == 2 ? std::string("not identifiable from these runs (no run has traffic on the ") +
                                           (j == 1 ? "scale-up" : "scale-out") + " tier)"
                                     : "not identifiable from these runs (it moves no run's step time)";
      }
    }
  }
  for (;;) {
    int n_free = 0, weakest = -1;
    for (int j = 0; j < kRunsParams; ++j) {
      if (!free[j]) continue;
      ++n_free;
      if (weakest < 0 || reach[j] * jac.col(j).norm() < reach[weakest] * jac.col(weakest).norm()) weakest = j;
    }
    if (n_free == 0 || static_cast<std::size_t>(n_free) < runs) break;
    free[weakest] = false;
    if (why != nullptr) {
      (*why)[weakest] = "held at " + std::string(weakest == 3 ? "0" : "1") + ": " + std::to_string(runs) +
                        (runs == 1 ? " run" : " runs") + " cannot fit " + std::to_string(n_free) +
                        " parameters (need more runs than parameters; this one moved the runs least)";
    }
  }
  return free;
}

// A starting point inside the bounds where every parameter has a slope (an overhead at exactly 0
// has one, forward differences step inward).
Vec start() { return neutral(); }

struct FitOutcome {
  Solution solution;
  std::array<bool, kRunsParams> free{};
};

Result<FitOutcome> fit_subset(const std::vector<const Prepared*>& runs, const RunsFitOptions& options,
                              std::array<std::string, kRunsParams>* why) {
  std::array<bool, kRunsParams> free{};
  for (int j = 0; j < kRunsParams; ++j) free[j] = !options.fixed[j];
  if (why != nullptr) {
    for (int j = 0; j < kRunsParams; ++j) {
      if (options.fixed[j]) (*why)[j] = "held at its datasheet value (asked)";
    }
  }
  const Vec x0 = start();
  auto r0 = residuals(runs, x0);
  if (!r0) return std::unexpected(r0.error());
  auto j0 = jacobian(runs, x0, *r0, free);
  if (!j0) return std::unexpected(j0.error());
  free = identifiable(*j0, runs.size(), free, why);
  auto s = levenberg_marquardt(runs, x0, free);
  if (!s) return std::unexpected(s.error());
  return FitOutcome{std::move(*s), free};
}

}  // namespace

const char* to_string(RunsParam p) {
  switch (p) {
    case RunsParam::gemm_efficiency_scale: return "gemm_efficiency_scale";
    case RunsParam::scale_up_busbw_scale: return "scale_up_busbw_scale";
    case RunsParam::scale_out_busbw_scale: return "scale_out_busbw_scale";
    case RunsParam::per_op_overhead_s: return "per_op_overhead_s";
  }
  return "gemm_efficiency_scale";
}

sim::RunsFit runs_fit_of(const std::array<double, kRunsParams>& x) {
  sim::RunsFit f;
  const auto p = [](double v) { return sim::RunsFitParam{sim::Param{v, sim::ParamSource::fitted, 0, 0}, 0}; };
  f.gemm_efficiency_scale = p(x[0]);
  f.scale_up_busbw_scale = p(x[1]);
  f.scale_out_busbw_scale = p(x[2]);
  f.per_op_overhead_s = p(x[3]);
  return f;
}

Result<double> predict_step_s(const data::MeasuredRun& run, const std::array<double, kRunsParams>& x) {
  auto p = prepare(run);
  if (!p) return std::unexpected(p.error());
  return step_s(p->scenario, x, run.where);
}

Result<RunsFitResult> fit_runs(const std::vector<data::MeasuredRun>& runs, const RunsFitOptions& options) {
  if (runs.empty()) return fail("runs", "no runs to fit");
  std::vector<Prepared> prepared;
  Diagnostics diags;
  for (const auto& run : runs) {
    auto p = prepare(run);
    if (!p) {
      diags.insert(diags.end(), p.error().begin(), p.error().end());
      continue;
    }
    prepared.push_back(std::move(*p));
  }
  if (!diags.empty()) return std::unexpected(std::move(diags));
  std::vector<const Prepared*> all;
  for (const auto& p : prepared) all.push_back(&p);

  RunsFitResult out;
  auto fit = fit_subset(all, options, &out.not_fitted);
  if (!fit) return std::unexpected(fit.error());
  const Solution& s = fit->solution;
  out.iterations = s.iterations;
  const auto n = static_cast<Eigen::Index>(all.size());
  int n_free = 0;
  for (bool f : fit->free) n_free += f;

  // Standard errors: (J^T J)^-1 s^2 over the free parameters, s^2 = SSR / (n - p).
  std::array<double, kRunsParams> se{};
  if (n_free > 0 && n > n_free) {
    Eigen::MatrixXd jf(n, n_free);
    for (int j = 0, c = 0; j < kRunsParams; ++j) {
      if (fit->free[j]) jf.col(c++) = s.jac.col(j);
    }
    const double s2 = s.r.squaredNorm() / static_cast<double>(n - n_free);
    const Eigen::MatrixXd cov = (jf.transpose() * jf).completeOrthogonalDecomposition().pseudoInverse() * s2;
    for (int j = 0, c = 0; j < kRunsParams; ++j) {
      if (!fit->free[j]) continue;
      se[j] = std::sqrt(std::max(0.0, cov(c, c))) * kUnit[j];
      ++c;
    }
  }

  const double rms = std::sqrt(s.r.squaredNorm() / static_cast<double>(n));
  out.fit = runs_fit_of(s.x);
  sim::RunsFitParam* params[] = {&out.fit.gemm_efficiency_scale, &out.fit.scale_up_busbw_scale,
                                 &out.fit.scale_out_busbw_scale, &out.fit.per_op_overhead_s};
  for (int j = 0; j < kRunsParams; ++j) {
    auto& p = *params[j];
    if (fit->free[j]) {
      p = {sim::Param{s.x[j], sim::ParamSource::fitted, static_cast<int>(n), rms}, se[j]};
      if (s.x[j] <= kRunsBounds[j].lo || s.x[j] >= kRunsBounds[j].hi) {
        out.notes.push_back(std::string(to_string(static_cast<RunsParam>(j))) +
                            " ended at its bound; the runs ask for a value outside the plausible range");
      }
    } else {
      p = {sim::Param{kRunsBounds[j].neutral, sim::ParamSource::datasheet, 0, 0}, 0};
    }
  }
  out.fit.runs = static_cast<int>(n);
  out.fit.rms_log_residual = rms;
  out.fit.max_abs_log_residual = s.r.cwiseAbs().maxCoeff();

  // Before / after and leave-one-out, run by run. Refitting without each run in turn cost n fits of
  // n - 1 runs (quadratic: 128 runs took 4 s, 2,000 never ended). The leave-one-out residual of a
  // least-squares fit follows from the full fit instead: e_(i) = e_i / (1 - h_ii), with h_ii the
  // leverage, the diagonal of the hat matrix H = J (J^T J)^-1 J^T over the free parameters (Allen
  // 1974, the PRESS residual; Cook & Weisberg 1982, "Residuals and Influence in Regression", 2.2).
  // For this nonlinear fit it is the identity of the model linearised at the solution. A run with
  // leverage near 1 pins a parameter alone, where the linearisation says nothing: that run (at most
  // a few, since the leverages sum to the free parameters) is refitted without it as before.
  const Vec x_neutral = neutral();
  double loo_sum = 0;
  int loo_count = 0;
  Eigen::VectorXd leverage = Eigen::VectorXd::Zero(n);
  if (n_free > 0) {
    Eigen::MatrixXd jf(n, n_free);
    for (int j = 0, c = 0; j < kRunsParams; ++j) {
      if (fit->free[j]) jf.col(c++) = s.jac.col(j);
    }
    const Eigen::MatrixXd inv = (jf.transpose() * jf).completeOrthogonalDecomposition().pseudoInverse();
    for (Eigen::Index i = 0; i < n; ++i) leverage[i] = jf.row(i) * inv * jf.row(i).transpose();
  }
  constexpr double kMaxLeverage = 0.99;
  for (std::size_t i = 0; i < prepared.size(); ++i) {
    sim::RunResidual rr;
    rr.label = runs[i].label;
    rr.measured_s = prepared[i].measured_s;
    rr.before_s = step_s(prepared[i].scenario, x_neutral, runs[i].where).value_or(0);
    const double r_i = s.r[static_cast<Eigen::Index>(i)];
    rr.after_s = rr.measured_s * std::exp(r_i);
    if (options.leave_one_out && prepared.size() >= 2) {
      const double h = leverage[static_cast<Eigen::Index>(i)];
      if (h < kMaxLeverage) {
        rr.loo_s = rr.measured_s * std::exp(r_i / (1.0 - h));
      } else {
        std::vector<const Prepared*> others;
        for (std::size_t k = 0; k < prepared.size(); ++k) {
          if (k != i) others.push_back(&prepared[k]);
        }
        RunsFitOptions held = options;
        for (int j = 0; j < kRunsParams; ++j) held.fixed[j] = held.fixed[j] || !fit->free[j];
        if (auto loo = fit_subset(others, held, nullptr)) {
          rr.loo_s = step_s(prepared[i].scenario, loo->solution.x, runs[i].where).value_or(0);
        }
      }
      if (rr.loo_s > 0 && std::isfinite(rr.loo_s)) {
        loo_sum += std::fabs(rr.loo_s / rr.measured_s - 1.0);
        ++loo_count;
      } else {
        rr.loo_s = 0;
      }
    }
    out.fit.per_run.push_back(std::move(rr));
  }
  out.fit.loo_mape = loo_count > 0 ? loo_sum / loo_count : 0;
  if (loo_count == 0) out.notes.push_back("leave-one-out: not computed (it needs at least 2 runs)");
  return out;
}

}  // namespace capplan::calib
