// SPDX-License-Identifier: Apache-2.0
// The sentences a serving plan carries (output/serve_output.cpp), shared with the pipeline that
// plans it (input/serve_plan.cpp).
#pragma once
#include <string>
#include <vector>

#include "capplan/data/serve_io.hpp"

namespace capplan::data::serve_words {

// Why a plan is not feasible, in words (empty when it is).
std::string reason_text(const sim::ServePlan& p);

// Why the cheapest, in words, against the runner-up (empty unless both are feasible).
std::string explain_choice(const std::vector<ServeOption>& options);

}  // namespace capplan::data::serve_words
