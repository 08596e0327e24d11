// SPDX-License-Identifier: Apache-2.0
// Where a step's seconds go, as the schedule places the priced op list (schedule/step_timing.cpp).
#pragma once

#include "capplan/sim/units.hpp"

namespace capplan::sim {

// Seconds per optimizer step by where they go. Contract: total() == step time.
struct StepBreakdown {
  units::Seconds compute;    // GEMMs and memory-bound kernels of the slowest stage, all micro-batches
  units::Seconds recompute;  // the part of compute spent recomputing activations
  units::Seconds tp_comm;    // exposed tensor-parallel collectives
  units::Seconds pp_comm;    // exposed pipeline send/recv
  units::Seconds dp_comm;    // exposed data-parallel gradient / parameter collectives
  units::Seconds ep_comm;
  units::Seconds cp_comm;
  units::Seconds bubble;     // pipeline fill and drain
  units::Seconds optimizer;  // optimizer step (memory-bound)
  // Waiting for the slowest GPU: compute and optimizer x spread x E[max of N] (variability.hpp).
  units::Seconds variability;
  // Launch-bound: the GPU idle while the host issues kernels, where a micro-batch's host time
  // (TrainingJob::host_s_per_op per op) exceeds its GPU time (schedule/step_timing.cpp).
  units::Seconds host;
  units::Seconds other;      // reserved for data loading, logging (0 in this model)

  units::Seconds total() const {
    return compute + tp_comm + pp_comm + dp_comm + ep_comm + cp_comm + bubble + optimizer + variability + host + other;
  }
};

}  // namespace capplan::sim
