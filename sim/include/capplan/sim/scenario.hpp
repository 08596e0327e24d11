// SPDX-License-Identifier: Apache-2.0
// A scenario as the model reads it: one plain value per section of the scenario file (model,
// workload, training, cluster, strategy, reliability, storage, data, pricing), each with its own
// header, parsed and checked by capplan_data.
#pragma once
#include "capplan/sim/hardware.hpp"
#include "capplan/sim/pricing.hpp"
#include "capplan/sim/reliability.hpp"
#include "capplan/sim/storage.hpp"
#include "capplan/sim/strategy.hpp"
#include "capplan/sim/workload.hpp"

namespace capplan::sim {

// Everything one estimate needs, as plain values (parsed and checked by capplan_data).
struct Scenario {
  WorkloadSpec workload;  // what is asked: pretrain (the training step below)
  ModelSpec model;
  TrainingJob training;
  Cluster cluster;
  StrategyRequest strategy;
  // Goodput and cost beyond the sticker (sim/goodput.hpp); defaults model failures at the
  // published Llama 3 rate, sync checkpoints at the Daly interval, on-demand pricing.
  ReliabilitySpec reliability;
  StorageSpec storage;
  DataLoadingSpec data;
  PricingTerms pricing;
};

}  // namespace capplan::sim
