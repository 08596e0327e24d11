// SPDX-License-Identifier: Apache-2.0
// Private to the planner: the sentences it writes about plans (explanation, runner-ups, notes)
// and the number formats they use. Kept apart from the search so they can move to the
// front ends with the rest of the prose (issue 13, point 6).
#pragma once
#include <optional>
#include <string>

#include "capplan/sim/search.hpp"
#include "capplan/sim/strategy.hpp"

namespace capplan::sim::plan_text {

std::string fixed(double v, int digits);
std::string sig3(double v);        // three significant figures for ordinary magnitudes
std::string usd_text(double v);    // $3.34M
std::string days_text(double seconds);
std::string percent(double fraction);  // whole percent, one decimal below 10%
std::string layout_text(const Parallelism& p);
std::string shape_text(const Plan& p);
// Why this plan: shape, layout, time, cost and where a step's time goes.
std::string explain(const Plan& plan);
// "41% faster, 12% dearer".
std::string change_text(double time_ratio, std::optional<double> cost_ratio);
std::string nodes_text(int from, int to);
std::string layout_diff(const Parallelism& a, const Parallelism& b);

}  // namespace capplan::sim::plan_text
