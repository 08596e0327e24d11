// SPDX-License-Identifier: Apache-2.0
// What the profile's fits share (fit.cpp, gemm_fit.cpp): goodness of fit and a fitted parameter.
#pragma once
#include <string>
#include <vector>

#include "capplan/calibrate/fit.hpp"

namespace capplan::calib::detail {

// Goodness of fit from measured and predicted times (docs/calibration.md): RMS and max of the
// relative residual; R^2 of log(time).
sim::FitQuality quality(const std::vector<double>& measured, const std::vector<double>& predicted);
// A fitted value with its quality.
sim::Param fitted(double value, const sim::FitQuality& q);
std::string precision_name(sim::Precision p);

}  // namespace capplan::calib::detail
