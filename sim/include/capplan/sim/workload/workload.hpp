// SPDX-License-Identifier: Apache-2.0
// The scenario's `workload` section (what is asked), with the model and training sections it
// reads (model.hpp, training.hpp).
#pragma once
#include <optional>
#include <string>

#include "capplan/sim/workload/model.hpp"
#include "capplan/sim/workload/training.hpp"

namespace capplan::sim {

// What the scenario asks about: the seam where new workloads plug in. Each kind lowers to its own
// op list and schedule; `pretrain` (the default) is the training step of sim/step_model.hpp;
// `finetune` is that step with frozen, quantised and adapted weights (TrainingJob::finetune) over
// a dataset of samples (finetune.hpp). Serving is the next kind (the scenario parser names it and
// says it is not available yet).
// serve: a serving deployment (sim/serve.hpp, `capplan serve`); the training estimate refuses it.
enum class WorkloadKind { pretrain, finetune, serve };
const char* to_string(WorkloadKind k);
std::optional<WorkloadKind> workload_kind_from_string(const std::string& s);

struct WorkloadSpec {
  WorkloadKind kind = WorkloadKind::pretrain;
  FinetuneData dataset;  // finetune: the samples, epochs and packing
  FinetuneShape shape;   // finetune: the dataset resolved (resolve_workload, scenario.hpp)
};

}  // namespace capplan::sim
