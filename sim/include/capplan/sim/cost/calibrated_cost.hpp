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

#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/workload/finding.hpp"
#include "capplan/sim/cost/op_cost.hpp"
#include "capplan/sim/cost/profile.hpp"

namespace capplan::sim {

class CalibratedCost final : public OpCostModel {
 public:
  CalibratedCost(Profile profile, const Cluster& cluster, DatasheetAssumptions a = {});

  units::Seconds gemm(const GemmOp& op) const override;
  units::Seconds memory(const MemoryOp& op) const override;
  units::Seconds collective(const CollectiveOp& op) const override;
  // "calibrated: <device> (<date>)", then ", datasheet fallback fitted to N runs" with a runs fit and
  // "; measured on another device than the scenario's <gpu id>" for another device's profile.
  std::string source() const override;
  // The profile's measured host issue time per op (Profile::host_issue_s_per_op) when it was
  // measured on the scenario's GPU, else the datasheet model's.
  double host_issue_s_per_op() const override;

  // One finding per kind of op the profile could not price (FindingCode::profile_*, field empty),
  // or priced with a poor fit or by scaling: profile_gemm_outside_range {dtype, m, n, k, min_m, ...},
  // profile_collective_not_measured {kind, across_nodes}, profile_gemm_above_peak {dtype, tflops,
  // peak_tflops, operations}, ... data::render words them ("gemm bf16
  // m=8192 n=24576 k=8192 outside the measured range (m 64..4096, ...); datasheet used").
  // Deduplicated, in op order. A profile measured on another device (profile_measured_on) gives
  // one finding instead: profile_other_device {device, backend, gpu, operations, datasheet}.
  // Then, for either, the physical ceilings the profile's times were held to, each once with the
  // count of ops it raised: profile_gemm_above_peak (per dtype), profile_memory_above_peak,
  // profile_collective_above_link.
  std::vector<Finding> coverage(const std::vector<StepOp>& ops) const;

  // How an op is priced (for tests and reports): "measured", "interpolated", "fitted", "scaled"
  // (a collective beyond the measured tiers) or "datasheet".
  std::string pricing(const Op& op) const;

  const Profile& profile() const { return profile_; }

 private:
  struct Choice;
  Choice gemm_choice(const GemmOp& op, Finding* warning = nullptr) const;
  Choice memory_choice(const MemoryOp& op, Finding* warning = nullptr) const;
  Choice collective_choice(const CollectiveOp& op, Finding* warning = nullptr) const;

  // The fastest a GEMM can run on the scenario's GPU: 2 m n k batch at the datasheet dense peak
  // of its dtype (0 when the datasheet has none). A profile time below it (a profile measured on a
  // faster device, or a bad fit) is raised to it, so MFU never exceeds 1, and coverage() says so
  // (profile_gemm_above_peak).
  double gemm_floor_s(const GemmOp& op) const;
  // The same for memory-bound ops (bytes at the datasheet HBM bandwidth; profile_memory_above_peak)
  // and collectives (profile_collective_above_link). A collective's bytes must leave or enter each
  // rank once, less its own share: (n-1)/n of the buffer for all-reduce (in-switch reduction,
  // NVLS/SHARP, does no better), all-gather, reduce-scatter and all-to-all, the whole buffer for
  // send/recv; so busbw (nccl-tests) is at most twice the rank's one-direction link bandwidth for
  // an all-reduce and at most that bandwidth otherwise. The link is tier 0's (intra_node_bandwidth)
  // inside a node, plus the NIC share (inter_node_bandwidth) for a group that spans nodes: a
  // generous ceiling that no fabric beats. 0 when the datasheet has no figure (the host "GPU").
  double memory_floor_s(const MemoryOp& op) const;
  double collective_floor_s(const CollectiveOp& op) const;
  // A kernel occupies the GPU at least the measured back-to-back time per kernel (its launch
  // throughput; Profile::kernel_floor_s), on the profile's own device only.
  double kernel_floor_s() const { return own_device_ ? profile_.kernel_floor_s() : 0.0; }

  Profile profile_;
  DatasheetCost datasheet_;  // with the profile's runs_fit, when it has one
  PeakRates peak_;
  units::BytesPerSecond hbm_;    // datasheet HBM bandwidth
  units::BytesPerSecond intra_;  // per GPU one direction, inside a node
  units::BytesPerSecond inter_;  // per GPU one direction, across nodes
  std::string gpu_id_;
  bool own_device_;  // profile_measured_on(profile_, the cluster's GPU)
};

}  // namespace capplan::sim
