// SPDX-License-Identifier: Apache-2.0
// A scenario as the model reads it: one plain value per section of the scenario file (model,
// workload, training, cluster, strategy, reliability, storage, data, pricing), each with its own
// header, parsed and checked by capplan_data.
#pragma once
#include <map>

#include "capplan/sim/workload/hardware.hpp"
#include "capplan/sim/workload/pricing.hpp"
#include "capplan/sim/workload/reliability.hpp"
#include "capplan/sim/workload/storage.hpp"
#include "capplan/sim/workload/strategy.hpp"
#include "capplan/sim/workload/workload.hpp"

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

// Resolves what the workload kind derives: for a fine-tuning job, its dataset against the model's
// maximum sequence length and `micro_batch` (the strategy's, or 1 when it is left to the search):
// the step's sequence length (padded samples when unpacked), training.tokens (the tokens the job
// processes, padding included, over all epochs) and the keys per query of document-masked packing.
// Pretraining: nothing. Contract: model.seq_len > 0; idempotent only on the original scenario.
void resolve_workload(Scenario& s, int micro_batch);

// Whether the step's shape follows the micro-batch: fine-tuning on unpacked samples padded to the
// longest of their micro-batch (the padded length, and the tokens processed, grow with it).
bool shape_follows_micro_batch(const Scenario& s);
// `s` (resolved) with its workload resolved again at `micro_batch`, from the sequence length its
// samples are truncated at; `s` itself when its shape does not follow the micro-batch.
Scenario at_micro_batch(const Scenario& s, int micro_batch);

// The scenario as each micro-batch runs it, resolved once per micro-batch a search visits.
// Contract: `s` outlives this; references stay valid for its lifetime.
class ScenarioByMicroBatch {
 public:
  explicit ScenarioByMicroBatch(const Scenario& s) : s_(s), follows_(shape_follows_micro_batch(s)) {}
  const Scenario& at(int micro_batch);

 private:
  const Scenario& s_;
  bool follows_;
  std::map<int, Scenario> at_;
};

}  // namespace capplan::sim
