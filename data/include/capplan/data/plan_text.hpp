// SPDX-License-Identifier: Apache-2.0
// The planner's sentences. sim::search returns structure (a failure kind with its closest plan,
// runner-ups with their ratios, the chosen plan); these write it in English for the CLI's JSON
// and table and the GUI's plan view.
#pragma once
#include <string>
#include <vector>

#include "capplan/sim/search/search.hpp"

namespace capplan::data {

// The failure's name in the JSON output contract: "layout", "memory", "deadline", "budget",
// "deadline and budget" (both deadline_nor_budget and deadline_and_budget).
std::string constraint_name(sim::FailureKind kind);

// One sentence naming the unmet constraint, its value (from `request`) and the closest plan:
// "no plan meets the deadline of 1.00 days: the fastest takes 142 days (aws-p5.48xlarge x 16 nodes
// (128 GPUs), tp 4 pp 1 dp 32, ...)".
std::string failure_message(const sim::ConstraintFailure& failure, const sim::SearchRequest& request);
// The same as pieces (FindingCode::unmet_*, in order; see explanation_parts).
std::vector<sim::Finding> failure_parts(const sim::ConstraintFailure& failure, const sim::SearchRequest& request);

// Why sim::chosen_plan(result) wins (or came closest): a lead naming the objective and the
// constraints, then its shape, layout, time, cost and where a step's time goes. Empty when the
// result has no chosen plan.
std::string explanation(const sim::SearchResult& result, const sim::SearchRequest& request);
// The same explanation as pieces (FindingCode::why_*, in order): each renders to its part of the
// sentence (findings.hpp), so the GUI can word them through tr() and concatenate.
std::vector<sim::Finding> explanation_parts(const sim::SearchResult& result, const sim::SearchRequest& request);

// What the runner-up changes against the chosen plan and what that does:
// "2x the nodes (16 -> 32): 41% faster, 12% dearer".
std::string runner_up_text(const sim::RunnerUp& runner_up, const sim::Plan& chosen);
// The same as pieces (FindingCode::runner_up_*, in order; see explanation_parts).
std::vector<sim::Finding> runner_up_parts(const sim::RunnerUp& runner_up, const sim::Plan& chosen);

}  // namespace capplan::data
