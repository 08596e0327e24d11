// SPDX-License-Identifier: Apache-2.0
#pragma once
// Calibrated profile JSON (docs/calibration.md, "Profile file"): the only place a sim::Profile
// meets JSON. Contract: profile_to_json never writes NaN/Inf; parse_profile checks
// schema_version, every field's type and range, and treats unknown keys as errors, collecting
// all diagnostics, each naming the field ("profile.json#/gemm/0/peak_flops_per_s/value: must be
// > 0; got -1"); a syntax error (a truncated file) names the file, line and column.
#include <string>

#include "capplan/sim/cost/profile.hpp"
#include "capplan/sim/workload/result.hpp"

namespace capplan::data {

std::string profile_to_json(const sim::Profile& profile);
Result<sim::Profile> parse_profile(const std::string& text, const std::string& where);

}  // namespace capplan::data
