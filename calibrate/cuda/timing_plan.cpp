// SPDX-License-Identifier: Apache-2.0
#include "timing_plan.hpp"

#include <algorithm>
#include <cmath>

namespace capplan::calib::cuda {

QueuePlan plan_queue(int iterations, double host_s_per_iteration, int launches_per_iteration) {
  iterations = std::max(1, iterations);
  const double host = std::isfinite(host_s_per_iteration) && host_s_per_iteration > 0 ? host_s_per_iteration : 0.0;
  const int by_queue = std::max(1, kMaxQueuedLaunches / std::max(1, launches_per_iteration));
  // Iterations whose enqueueing, doubled, fits in the longest spin.
  const double by_spin = host > 0 ? std::floor(kMaxSpinS / (2.0 * host)) : static_cast<double>(iterations);
  QueuePlan q;
  q.per_batch = static_cast<int>(std::clamp(std::min(by_spin, static_cast<double>(by_queue)), 1.0,
                                            static_cast<double>(iterations)));
  q.spin_s = std::clamp(2.0 * q.per_batch * host, kMinSpinS, kMaxSpinS);
  return q;
}

}  // namespace capplan::calib::cuda
