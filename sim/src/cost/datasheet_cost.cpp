// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/cost/datasheet_cost.hpp"

#include "capplan/sim/cost/profile.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace capplan::sim {

namespace {

// Relative efficiency of FP8 GEMMs vs BF16 on the same GPU, for a GPU without its own FP8 MAMF,
// from the GPUs measured both ways (MAMF, ml-engineering @744d01e, data/gpus.json): the FP8 share
// of peak over the BF16 share. The two generations differ and each keeps its lowest:
//  * Hopper: H100 SXM 0.709 / 0.803 = 0.883, H200 0.92, GH200 0.93. Hopper's FP8 tensor cores
//    accumulate in limited precision (about 14 bits on H800, DeepSeek-V3 technical report,
//    arXiv:2412.19437 Sec. 3.3.2), which FP8 GEMM libraries work around by promoting partial sums
//    to FP32 on the CUDA cores, at a cost in throughput.
//  * Blackwell: B300 0.745 / 0.786 = 0.948, B200 0.98, GB200 0.99: its FP8 GEMMs keep nearly the
//    BF16 share of their (twice as high) peak.
// Any other architecture takes the lowest of all six, Hopper's (none of them is measured).
double fp8_vs_bf16_efficiency(TensorCoreGeneration g) {
  return g == TensorCoreGeneration::blackwell ? 0.745 / 0.786 : 0.709 / 0.803;
}

// A rate that saturates as x / (x + half), relative to its value at `at`: the K ramp of a GEMM
// and the sequence and head-dimension curves of fused attention.
double saturating(double x, double half, double at) { return (x / (x + half)) / (at / (at + half)); }

}  // namespace

DatasheetAssumptions with_runs_fit(DatasheetAssumptions a, const RunsFit& fit) {
  a.gemm_efficiency_scale = fit.gemm_efficiency_scale.param.value;
  a.scale_up_busbw_scale = fit.scale_up_busbw_scale.param.value;
  a.scale_out_busbw_scale = fit.scale_out_busbw_scale.param.value;
  a.per_op_overhead_us = fit.per_op_overhead_s.param.value * 1e6;
  return a;
}

DatasheetCost::DatasheetCost(const Cluster& cluster, DatasheetAssumptions a, std::string source)
    : a_(a),
      source_(std::move(source)),
      peak_(cluster.gpu.peak),
      sm_count_(cluster.gpu.sm_count > 0 ? cluster.gpu.sm_count : 108),
      // A fitted scale never lifts a ceiling above the dense peak (MFU stays at most 1).
      gemm_eff_(std::min(1.0, (cluster.gpu.gemm_efficiency > 0 ? cluster.gpu.gemm_efficiency : a.gemm_efficiency) *
                                  a.gemm_efficiency_scale)),
      gemm_fp8_eff_(cluster.gpu.gemm_fp8_efficiency > 0
                        ? std::min(1.0, cluster.gpu.gemm_fp8_efficiency * a.gemm_efficiency_scale)
                        : gemm_eff_ * fp8_vs_bf16_efficiency(cluster.gpu.tensor_cores)),
      attention_eff_(std::min(1.0, (cluster.gpu.attention_efficiency > 0 ? cluster.gpu.attention_efficiency
                                                                         : a.attention_efficiency) *
                                       a.gemm_efficiency_scale)),
      attention_v1_eff_(std::min(attention_eff_, cluster.gpu.attention_v1_efficiency > 0
                                                     ? cluster.gpu.attention_v1_efficiency * a.gemm_efficiency_scale
                                                     : attention_eff_ * a.attention_v1_vs_v2)) {
  const double hbm_eff = cluster.gpu.hbm_efficiency > 0 ? cluster.gpu.hbm_efficiency : a.hbm_efficiency;
  // A GEMM streams its operands no faster than the device copies memory: the measured copy
  // bandwidth (the catalog's hbm_efficiency), not the datasheet's, is its memory roof; element-wise
  // framework kernels reach a fraction of that.
  hbm_bw_ = cluster.gpu.hbm_bandwidth * hbm_eff;
  mem_bw_ = hbm_bw_ * a.elementwise_vs_copy;
  pcie_bw_ = cluster.gpu.pcie_bandwidth * a.pcie_efficiency;
  const int ranks_on_host = std::max(1, std::min(cluster.gpus, cluster.gpus_per_node));
  host_bw_ = units::gb_per_s(a.host_optimizer_GBps_per_node / ranks_on_host);
  network_ = cluster.network();
  std::vector<TierLink> links;
  links.reserve(network_.tiers.size());
  const double nvlink = cluster.gpu.nvlink_bandwidth.base();
  for (const NetworkTier& t : network_.tiers) {
    TierLink l;
    if (t.kind == TierKind::scale_up) {
      // Measured NCCL busbw was taken with NVLink at full width; a tier of another bandwidth
      // (a scenario override) scales it proportionally.
      if (cluster.gpu.nvlink_busbw.base() > 0 && nvlink > 0) {
        l.busbw = cluster.gpu.nvlink_busbw * (t.bandwidth.base() / nvlink);
      } else {
        l.busbw = t.bandwidth * a.nvlink_busbw_efficiency;
      }
      l.busbw = l.busbw * a.scale_up_busbw_scale;
      l.latency_us = t.latency.base() > 0 ? t.latency.base() * 1e6 : a.nvlink_latency_us;
      if (links.empty()) {
        // Fused EP kernels in the innermost domain: the GPU's measured rate, scaled as the busbw
        // is for a tier of another bandwidth, else the assumed share of the link.
        ep_fused_bw_ = cluster.gpu.ep_fused_bandwidth.base() > 0 && nvlink > 0
                           ? cluster.gpu.ep_fused_bandwidth * (t.bandwidth.base() / nvlink)
                           : t.bandwidth * a.ep_fused_vs_nvlink;
        ep_fused_bw_ = ep_fused_bw_ * a.scale_up_busbw_scale;
      }
    } else {
      l.busbw = t.effective_bandwidth() * (a.network_busbw_efficiency * a.scale_out_busbw_scale);
      l.latency_us = t.latency.base() > 0 ? t.latency.base() * 1e6 : a.network_latency_us;
    }
    links.push_back(l);
  }
  collectives_ = CollectiveModel(std::move(links), a.latency_per_log2_us);
}

units::BytesPerSecond DatasheetCost::intra_busbw() const {
  const auto& l = collectives_.links();
  return l.empty() ? units::BytesPerSecond{} : l.front().busbw;
}

units::BytesPerSecond DatasheetCost::inter_busbw() const {
  const auto& l = collectives_.links();
  return l.size() < 2 ? units::BytesPerSecond{} : l[1].busbw;
}

double DatasheetCost::shape_efficiency(const GemmOp& op) const {
  if (op.m <= 0 || op.n <= 0 || op.k <= 0 || op.batch <= 0) return 1.0;
  const double m = static_cast<double>(op.m), n = static_cast<double>(op.n), k = static_cast<double>(op.k);
  const double batch = static_cast<double>(op.batch);
  // Best of three CUTLASS-style tiles (sim/profile.hpp), shared with the calibrated GEMM model.
  const double best = tile_wave_efficiency(m, n, batch, sm_count_, a_.tile_m, a_.tile_n);
  // K ramp normalised to the large-K shapes on which the MAMF ceiling was measured (K >= 4096).
  const double ramp = saturating(k, a_.k_half, 4096.0);
  return std::clamp(best * std::min(1.0, ramp), 1e-3, 1.0);
}

double DatasheetCost::attention_shape(const GemmOp& op) const {
  if (op.attention_v1) return 1.0;
  double f = 1.0;
  if (op.attention_tokens > 0) {
    f *= saturating(static_cast<double>(op.attention_tokens), a_.attention_tokens_half, 2048.0);
  }
  if (op.attention_head_dim > 0) {
    f *= saturating(static_cast<double>(op.attention_head_dim), a_.attention_head_dim_half, 128.0);
  }
  return f;
}

units::Seconds DatasheetCost::gemm(const GemmOp& op) const {
  if (op.m <= 0 || op.n <= 0 || op.k <= 0 || op.batch <= 0) return {};
  units::FlopsPerSecond peak = peak_.for_precision(op.dtype);
  // FP8 at the GPU's FP8 MAMF; FP4 (serving) has no published MAMF: taken at FP8's share of its
  // peak.
  const double ceiling = op.dtype == Precision::fp8 || op.dtype == Precision::fp4 ? gemm_fp8_eff_ : gemm_eff_;
  if (peak.base() <= 0) peak = peak_.fp32.base() > 0 ? peak_.fp32 : units::tflop_per_s(1.0);
  if (op.fused_attention) {
    // One fused kernel: its throughput is the kernel's published rate at the op's shape, not a
    // GEMM's.
    const double eff = op.attention_v1 ? attention_v1_eff_ : std::min(1.0, attention_eff_ * attention_shape(op));
    return op.flops() / (peak * eff) + units::microseconds(a_.gemm_launch_us + a_.per_op_overhead_us);
  }
  const units::Seconds compute = op.flops() / (peak * (ceiling * shape_efficiency(op)));
  const units::Seconds memory = op.min_bytes() / hbm_bw_;
  return std::max(compute, memory) + units::microseconds(a_.gemm_launch_us + a_.per_op_overhead_us);
}

units::Seconds DatasheetCost::memory(const MemoryOp& op) const {
  if (op.bytes.base() <= 0) return {};
  switch (op.link) {
    case MemoryLink::hbm: break;
    case MemoryLink::host_to_device:
    case MemoryLink::device_to_host:
      // A cudaMemcpyAsync over PCIe; a GPU with no PCIe figure copies at its HBM rate (never free).
      return op.bytes / (pcie_bw_.base() > 0 ? pcie_bw_ : mem_bw_) + units::microseconds(a_.memory_launch_us);
    case MemoryLink::host: return op.bytes / host_bw_;
  }
  return op.bytes / mem_bw_ + units::microseconds(a_.memory_launch_us + a_.per_op_overhead_us);
}

units::Seconds DatasheetCost::collective(const CollectiveOp& op) const {
  const auto& links = collectives_.links();
  const bool fused =
      op.fused_ep_in_node() && op.group.size > 1 && op.bytes.base() > 0 && ep_fused_bw_.base() > 0 && !links.empty();
  // A fused EP kernel moves the bytes its rank receives at its measured rate (the rate already
  // counts the rank's own share), after the innermost tier's latency.
  const units::Seconds t = fused ? op.bytes / ep_fused_bw_ + units::microseconds(links.front().latency_us)
                                 : collectives_.time(op);
  if (!(a_.per_op_overhead_us > 0) || !(t.base() > 0)) return t;
  return t + units::microseconds(a_.per_op_overhead_us);
}

}  // namespace capplan::sim
