// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/workload/variability.hpp"

#include <cmath>
#include <numbers>

namespace capplan::sim {

double inverse_normal_cdf(double p) {
  if (!(p > 0.0) || !(p < 1.0)) return p <= 0.0 ? -INFINITY : INFINITY;
  // Rational approximation of the central region and the tails (P. J. Acklam, relative error
  // below 1.15e-9), then one Halley step on the exact CDF 0.5 erfc(-x / sqrt 2).
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                                 1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01,  -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                 3.754408661907416e+00};
  constexpr double p_low = 0.02425;
  // Lower tail at probability t; the upper tail is its mirror image (1 - p is exact for p >= 0.5).
  auto tail = [&](double t) {
    const double q = std::sqrt(-2.0 * std::log(t));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  };
  double x = 0.0;
  if (p < p_low) {
    x = tail(p);
  } else if (p <= 1.0 - p_low) {
    const double q = p - 0.5;
    const double r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
  } else {
    x = -tail(1.0 - p);
  }
  const double e = 0.5 * std::erfc(-x / std::numbers::sqrt2) - p;
  const double u = e * std::sqrt(2.0 * std::numbers::pi) * std::exp(0.5 * x * x);
  return x - u / (1.0 + 0.5 * x * u);
}

double expected_max_standard_normal(long long n) {
  if (n <= 1) return 0.0;
  const double nn = static_cast<double>(n);
  return inverse_normal_cdf((nn - 0.375) / (nn + 0.25));
}

double slowest_gpu_slowdown(long long gpus, double spread) {
  if (gpus <= 1 || !(spread > 0.0)) return 0.0;
  return spread * expected_max_standard_normal(gpus);
}

double random_routing_busiest_rank(long long tokens_per_rank, int top_k, int experts, int ep) {
  if (ep <= 1 || top_k <= 0 || top_k >= experts || tokens_per_rank <= 0) return 1.0;
  const double mean = static_cast<double>(tokens_per_rank) * top_k;
  const double var = mean * (1.0 - 1.0 / ep) * (experts - top_k) / (experts - 1.0);
  return 1.0 + expected_max_standard_normal(ep) * std::sqrt(var) / mean;
}

}  // namespace capplan::sim
