// SPDX-License-Identifier: Apache-2.0
#pragma once
// The datasheet model fitted to a team's measured training steps (`capplan calibrate --from-runs`;
// docs/calibration.md, "From your own runs"). Each run is predicted by the real simulator
// (sim::estimate) with the datasheet cost model and four bounded parameters applied to it
// (sim::with_runs_fit): the GEMM efficiency scale, the busbw scale of the scale-up and of the
// scale-out tiers, and a per-op overhead. The fit minimises sum ln(predicted / measured)^2 by a
// bounded Levenberg-Marquardt (projection on the bounds, forward-difference Jacobian, Eigen dense
// solves). Contract: pure, no I/O, no printing; deterministic.
#include <array>
#include <string>
#include <vector>

#include "capplan/data/runs_io.hpp"
#include "capplan/sim/cost/profile.hpp"
#include "capplan/sim/workload/result.hpp"

namespace capplan::calib {

// The parameters in the order of RunsFitParams::value.
enum class RunsParam { gemm_efficiency_scale, scale_up_busbw_scale, scale_out_busbw_scale, per_op_overhead_s };
inline constexpr int kRunsParams = 4;
const char* to_string(RunsParam p);  // the profile's key: "gemm_efficiency_scale", ...

struct RunsParamBounds {
  double lo, hi, neutral;  // neutral: the datasheet model's value (1 for a scale, 0 for the overhead)
};
// gemm 0.3..1.3 (never above the dense peak: DatasheetCost caps the ceiling at 1); busbw scales
// 0.1..1.5; overhead 0..200 us per op.
inline constexpr std::array<RunsParamBounds, kRunsParams> kRunsBounds = {
    RunsParamBounds{0.3, 1.3, 1.0}, RunsParamBounds{0.1, 1.5, 1.0}, RunsParamBounds{0.1, 1.5, 1.0},
    RunsParamBounds{0.0, 200e-6, 0.0}};

struct RunsFitOptions {
  bool leave_one_out = true;
  // Parameters held at their neutral value whatever the runs say (tests, and a user's choice).
  std::array<bool, kRunsParams> fixed{};
};

// Why a parameter was not fitted ("" when it was).
struct RunsFitResult {
  sim::RunsFit fit;
  std::array<std::string, kRunsParams> not_fitted;  // "not identifiable from these runs (...)", ...
  std::vector<std::string> notes;                    // what the fit says beyond the parameters
  int iterations = 0;
};

// The parameters applied to the datasheet model, as a profile's runs fit holds them.
sim::RunsFit runs_fit_of(const std::array<double, kRunsParams>& x);

// The step time (seconds) the simulator predicts for `run` with parameters `x`, at the run's
// layout fixed as the datasheet model chooses it (error when the scenario cannot be estimated).
Result<double> predict_step_s(const data::MeasuredRun& run, const std::array<double, kRunsParams>& x);

// Fits `runs` (one GPU type). Errors name the run whose scenario cannot be estimated.
Result<RunsFitResult> fit_runs(const std::vector<data::MeasuredRun>& runs, const RunsFitOptions& options = {});

}  // namespace capplan::calib
