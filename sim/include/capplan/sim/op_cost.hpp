// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <string>

#include "capplan/sim/ops.hpp"

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

  units::Seconds cost(const Op& op) const;
};

}  // namespace capplan::sim
