// SPDX-License-Identifier: Apache-2.0
// Private to the planner (search.cpp): what it does with the layouts its workers kept, per shape
// (plan_ranking.cpp): score them on time and cost, rank them by the objective under the deadline
// and budget, say why nothing met them and which plan came closest, and find the chosen plan's
// runner-ups.
#pragma once
#include <vector>

#include "capplan/sim/search/search.hpp"
#include "search/planner_worker.hpp"

namespace capplan::sim::planner {

// Fills result's plans, Pareto front, failure (when no plan meets the constraints), runner-ups
// and the notes they bring, from each shape's kept layouts (`kept`, one per shape) and the
// workers' counters.
void rank_plans(const std::vector<Shape>& shapes, const SearchRequest& req, const std::vector<ShapeResult>& kept,
                const Counters& counters, SearchResult& result);

}  // namespace capplan::sim::planner
