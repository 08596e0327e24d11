// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/datasheet_cost.hpp"

#include "capplan/sim/profile.hpp"

#include <algorithm>
#include <cmath>

namespace capplan::sim {

namespace {

// Relative efficiency of FP8 GEMMs vs BF16 on the same GPU: MAMF on H100 SXM reaches 70.9% of
// the FP8 peak vs 80.3% of the BF16 peak (ml-engineering, data/README.md), ratio 0.883.
constexpr double kFp8VsBf16Efficiency = 0.709 / 0.803;

}  // namespace

DatasheetCost::DatasheetCost(const Cluster& cluster, DatasheetAssumptions a)
    : a_(a),
      peak_(cluster.gpu.peak),
      sm_count_(cluster.gpu.sm_count > 0 ? cluster.gpu.sm_count : 108),
      gemm_eff_(cluster.gpu.gemm_efficiency > 0 ? cluster.gpu.gemm_efficiency : a.gemm_efficiency),
      attention_eff_(cluster.gpu.attention_efficiency > 0 ? cluster.gpu.attention_efficiency
                                                          : a.attention_efficiency),
      hbm_bw_(cluster.gpu.hbm_bandwidth) {
  const double hbm_eff = cluster.gpu.hbm_efficiency > 0 ? cluster.gpu.hbm_efficiency : a.hbm_efficiency;
  mem_bw_ = cluster.gpu.hbm_bandwidth * (hbm_eff * a.elementwise_vs_copy);
  // Measured NCCL busbw was taken with NVLink at full width; a scenario override of the
  // intra-node bandwidth scales it proportionally.
  const double nvlink = cluster.gpu.nvlink_bandwidth.base();
  const double intra = cluster.intra_node_bandwidth.base();
  if (cluster.gpu.nvlink_busbw.base() > 0 && nvlink > 0) {
    intra_busbw_ = cluster.gpu.nvlink_busbw * (intra / nvlink);
  } else {
    intra_busbw_ = cluster.intra_node_bandwidth * a.nvlink_busbw_efficiency;
  }
  inter_busbw_ = cluster.inter_node_bandwidth * a.network_busbw_efficiency;
}

double DatasheetCost::shape_efficiency(const GemmOp& op) const {
  if (op.m <= 0 || op.n <= 0 || op.k <= 0 || op.batch <= 0) return 1.0;
  const double m = static_cast<double>(op.m), n = static_cast<double>(op.n), k = static_cast<double>(op.k);
  const double batch = static_cast<double>(op.batch);
  // Best of three CUTLASS-style tiles (sim/profile.hpp), shared with the calibrated GEMM model.
  const double best = tile_wave_efficiency(m, n, batch, sm_count_, a_.tile_m, a_.tile_n);
  // K ramp normalised to the large-K shapes on which the MAMF ceiling was measured (K >= 4096).
  const double ramp = (k / (k + a_.k_half)) / (4096.0 / (4096.0 + a_.k_half));
  return std::clamp(best * std::min(1.0, ramp), 1e-3, 1.0);
}

units::Seconds DatasheetCost::gemm(const GemmOp& op) const {
  if (op.m <= 0 || op.n <= 0 || op.k <= 0 || op.batch <= 0) return {};
  units::FlopsPerSecond peak = peak_.for_precision(op.dtype);
  double ceiling = gemm_eff_;
  if (op.dtype == Precision::fp8) ceiling *= kFp8VsBf16Efficiency;
  if (peak.base() <= 0) peak = peak_.fp32.base() > 0 ? peak_.fp32 : units::tflop_per_s(1.0);
  if (op.fused_attention) {
    // One fused kernel: its throughput is the kernel's published rate, not a GEMM's.
    return op.flops() / (peak * attention_eff_) + units::microseconds(a_.gemm_launch_us);
  }
  const units::Seconds compute = op.flops() / (peak * (ceiling * shape_efficiency(op)));
  const units::Seconds memory = op.min_bytes() / hbm_bw_;
  return std::max(compute, memory) + units::microseconds(a_.gemm_launch_us);
}

units::Seconds DatasheetCost::memory(const MemoryOp& op) const {
  if (op.bytes.base() <= 0) return {};
  return op.bytes / mem_bw_ + units::microseconds(a_.memory_launch_us);
}

units::Seconds DatasheetCost::collective(const CollectiveOp& op) const {
  const int n = op.group.size;
  if (n <= 1 || op.bytes.base() <= 0) return {};
  const double S = op.bytes.base();
  const double g = std::max(1, op.group.ranks_per_node);
  const double N = std::max(1, op.group.nodes);
  const bool inter = op.group.spans_nodes();
  const double alpha_us =
      (inter ? a_.network_latency_us : a_.nvlink_latency_us) + a_.latency_per_log2_us * std::log2(double(n));
  const double bw_intra = intra_busbw_.base();
  const double bw_inter = inter_busbw_.base();
  double seconds = 0.0;
  // nccl-tests bus-bandwidth factors (doc/PERFORMANCE.md): all-reduce 2(n-1)/n, all-gather and
  // reduce-scatter (n-1)/n, send/recv 1. Across nodes: hierarchical, the intra-node phases over
  // NVLink and the inter-node phase over the GPUs' NICs in parallel (each carries S/g).
  switch (op.kind) {
    case CollectiveKind::all_reduce:
      if (!inter) {
        seconds = 2.0 * (n - 1) / n * S / bw_intra;
      } else {
        seconds = 2.0 * (g - 1) / g * S / bw_intra + 2.0 * (N - 1) / N * (S / g) / bw_inter;
      }
      break;
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
      if (!inter) {
        seconds = double(n - 1) / n * S / bw_intra;
      } else {
        seconds = (g - 1) / g * S / bw_intra + (N - 1) / N * (S / g) / bw_inter;
      }
      break;
    case CollectiveKind::all_to_all:
      if (!inter) {
        seconds = double(n - 1) / n * S / bw_intra;
      } else {
        // Share of each rank's data that stays on its node vs crosses the network; both run at once.
        seconds = std::max((g - 1) / n * S / bw_intra, (n - g) / n * S / bw_inter);
      }
      break;
    case CollectiveKind::send_recv:
      seconds = S / (inter ? bw_inter : bw_intra);
      break;
  }
  return units::seconds(seconds) + units::microseconds(alpha_us);
}

}  // namespace capplan::sim
