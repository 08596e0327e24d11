// SPDX-License-Identifier: Apache-2.0
#pragma once
// Prices operations with a calibrated Profile: measured numbers where the profile has them, the
// fitted models inside the measured range, and the datasheet model (built from the scenario's
// Cluster) everywhere else. Fallback rules in docs/calibration.md ("Using a profile").
// Collectives: a profile's curves measured inside a node (nvlink, pcie, host-shm) price tier 0 of
// the topology and those across nodes ("network") tier 1, as measured; a group that crosses a
// tier beyond them (a spine, an oversubscribed fabric) goes through the shared CollectiveModel
// with the measured busbw in tiers 0 and 1 and, outside, the measured network busbw scaled by the
// topology's tier bandwidths (effective, after oversubscription) relative to tier 1.
// Contract: immutable after construction, no I/O, safe to call from several threads at once;
// every time is finite and >= 0, zero-sized ops cost zero.
#include <string>
#include <vector>

#include "capplan/sim/datasheet_cost.hpp"
#include "capplan/sim/op_cost.hpp"
#include "capplan/sim/profile.hpp"

namespace capplan::sim {

class CalibratedCost final : public OpCostModel {
 public:
  CalibratedCost(Profile profile, const Cluster& cluster, DatasheetAssumptions a = {});

  units::Seconds gemm(const GemmOp& op) const override;
  units::Seconds memory(const MemoryOp& op) const override;
  units::Seconds collective(const CollectiveOp& op) const override;
  // "calibrated: <device> (<date>)"
  std::string source() const override;

  // One line per kind of op the profile could not price, each saying the datasheet was used:
  // "gemm bf16 m=8192 n=24576 k=8192 outside the measured range (m 64..4096, ...); datasheet used",
  // "all_to_all across nodes not measured; datasheet used". Deduplicated, in op order.
  std::vector<std::string> coverage_warnings(const std::vector<StepOp>& ops) const;

  // How an op is priced (for tests and reports): "measured", "interpolated", "fitted", "scaled"
  // (a collective beyond the measured tiers) or "datasheet".
  std::string pricing(const Op& op) const;

  const Profile& profile() const { return profile_; }

 private:
  struct Choice;
  Choice gemm_choice(const GemmOp& op, std::string* warning = nullptr) const;
  Choice memory_choice(const MemoryOp& op, std::string* warning = nullptr) const;
  Choice collective_choice(const CollectiveOp& op, std::string* warning = nullptr) const;

  Profile profile_;
  DatasheetCost datasheet_;
};

}  // namespace capplan::sim
