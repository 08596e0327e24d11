// SPDX-License-Identifier: Apache-2.0
// The scenario's `workload` section (what is asked), with the model and training sections it
// reads (model.hpp, training.hpp).
#pragma once
#include <optional>
#include <string>

#include "capplan/sim/model.hpp"
#include "capplan/sim/training.hpp"

namespace capplan::sim {

// What the scenario asks about: the seam where new workloads plug in. Each kind lowers to its own
// op list and schedule; `pretrain` (the default) is the training step of sim/step_model.hpp.
// Fine-tuning and serving are the next kinds (the scenario parser names them and says they are
// not available yet).
enum class WorkloadKind { pretrain };
const char* to_string(WorkloadKind k);
std::optional<WorkloadKind> workload_kind_from_string(const std::string& s);

struct WorkloadSpec {
  WorkloadKind kind = WorkloadKind::pretrain;
};

}  // namespace capplan::sim
