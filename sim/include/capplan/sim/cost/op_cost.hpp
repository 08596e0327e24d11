// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <string>

#include "capplan/sim/lowering/ops.hpp"

namespace capplan::sim {

// Prices one operation on one GPU (or one communicator).
// Contract: every method returns a finite, non-negative time for any op whose sizes are >= 0;
// a zero-sized op costs zero; implementations are immutable after construction and may be
// called from several threads at once.
class OpCostModel {
 public:
  virtual ~OpCostModel() = default;
  virtual units::Seconds gemm(const GemmOp& op) const = 0;
  virtual units::Seconds memory(const MemoryOp& op) const = 0;
  virtual units::Seconds collective(const CollectiveOp& op) const = 0;
  // "datasheet" or "calibrated: <profile>"; shown next to every estimate.
  virtual std::string source() const = 0;
  // The least host time to issue one op of the op list (at least its kernel's launch): a
  // micro-batch takes at least its ops times this (schedule/step_timing.cpp), whatever the
  // framework's own dispatch (TrainingJob::host_s_per_op) adds. 0: no figure.
  virtual double host_issue_s_per_op() const { return 0; }

  units::Seconds cost(const Op& op) const;
};

}  // namespace capplan::sim
