// SPDX-License-Identifier: Apache-2.0
#include "capplan/calibrate/records.hpp"

#include "capplan/calibrate/backend.hpp"
#include "capplan/sim/cost/profile.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <numeric>
#include <string>

namespace capplan::calib {

std::string utc_now_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

SampleStats summarize(std::vector<double> samples_s) {
  SampleStats s;
  if (samples_s.empty()) return s;
  s.samples_s = samples_s;
  std::sort(samples_s.begin(), samples_s.end());
  const std::size_t n = samples_s.size();
  s.min_s = samples_s.front();
  s.median_s = n % 2 == 1 ? samples_s[n / 2] : 0.5 * (samples_s[n / 2 - 1] + samples_s[n / 2]);
  // p99 by the nearest-rank method: the smallest sample with at least 99% of samples <= it.
  const auto rank = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(n)));
  s.p99_s = samples_s[std::clamp<std::size_t>(rank, 1, n) - 1];
  s.mean_s = std::accumulate(samples_s.begin(), samples_s.end(), 0.0) / static_cast<double>(n);
  double ss = 0;
  for (double x : samples_s) ss += (x - s.mean_s) * (x - s.mean_s);
  // Population standard deviation (the samples are the whole measurement, not an estimate of one).
  const double stddev = std::sqrt(ss / static_cast<double>(n));
  s.cv = s.mean_s > 0 ? stddev / s.mean_s : 0.0;
  return s;
}

double bus_factor(sim::CollectiveKind kind, int ranks) {
  // nccl-tests doc/PERFORMANCE.md: busbw = algbw * factor; one definition shared with the fitter.
  return sim::nccl_bus_factor(kind, ranks);
}

int rotation_sets(double operand_bytes, double cache_bytes, double budget_bytes, int max_sets) {
  if (!(operand_bytes > 0) || !(cache_bytes > 0)) return 1;
  const double want = std::ceil(2.0 * cache_bytes / operand_bytes);
  const double fit = std::floor(budget_bytes / operand_bytes);
  return static_cast<int>(std::clamp(std::min(want, fit), 1.0, static_cast<double>(std::max(max_sets, 1))));
}

}  // namespace capplan::calib
