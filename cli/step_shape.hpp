// SPDX-License-Identifier: Apache-2.0
// Private helper of capplan-calibrate: the measured training step from its flags (step_flags.hpp).
#pragma once
#include <optional>
#include <string>

#include "capplan/calibrate/records.hpp"
#include "step_flags.hpp"

namespace capplan::cli {

// The backend's default step with the flags applied; reports errors by flag name ("--heads: must
// divide hidden (512); got 7") and returns nothing on error.
std::optional<calib::StepShape> step_from_flags(const StepFlags& flags, const std::string& backend);

}  // namespace capplan::cli
