// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "capplan/sim/cost/collective_model.hpp"
#include "capplan/sim/workload/hardware.hpp"
#include "capplan/sim/cost/op_cost.hpp"
#include "capplan/sim/cost/profile.hpp"

#include <string>

namespace capplan::sim {

// Default efficiencies of the datasheet model, each with where it comes from
// (figures in data/README.md and docs/model.md). A GPU's own measured value, where the catalog
// has one, takes precedence over these.
struct DatasheetAssumptions {
  // Large-GEMM ceiling when the GPU has no published MAMF figure: the low end of the
  // 0.75-0.80 x dense peak that ml-engineering's MAMF results show for Hopper/Blackwell.
  double gemm_efficiency = 0.75;
  // CUTLASS/cuBLAS-style output tile (rows x cols) used for tile and wave quantisation.
  int tile_m = 128;
  int tile_n = 256;
  // K at which the main loop reaches half its asymptotic efficiency (prologue/epilogue and
  // pipeline fill amortised over K); 128 reproduces the known drop of d_head = 64..128 attention.
  double k_half = 128.0;
  // Fixed kernel launch + tail cost per GEMM (CUDA launch latency is ~3-5 us).
  double gemm_launch_us = 4.0;
  // Fused (flash) attention when the GPU has no figure, at the catalog's reference shape
  // (forward + backward, causal, head dimension 128, 2k tokens): FlashAttention-2 reaches 265
  // TFLOP/s on H100 SXM5 (0.268 of the dense peak) and 155 on A100 SXM4 80GB (0.497) in the
  // FlashAttention-2 README charts (Dao-AILab/flash-attention @4f285b35, panel (d)). The lowest
  // is the default.
  double attention_efficiency = 0.268;
  // The same charts across sequence lengths (panel (d), causal, head dimension 128, 512 to 16k
  // tokens): A100 99/133/155/173/182/189 and H100 163/221/265/294/308/328 TFLOP/s, both close to
  // rate(s) = rate_inf * s / (s + s_half) with s_half 500 (A100) and 560 (H100) tokens: the
  // per-query-block work (loading Q, the final rescale and write of O, the half-masked diagonal
  // block) amortised over the keys it sweeps. The middle is taken; the catalog figure is the
  // rate at 2048 tokens.
  double attention_tokens_half = 530.0;
  // Head dimension: panel (c) (head dimension 64) over panel (d) (128) at every length is
  // 0.87-0.89 on H100 and 0.89-0.91 on A100, i.e. d / (d + d_half) with d_half about 20 (the
  // per-element softmax and rescale work does not shrink with d; the GEMMs' K does).
  double attention_head_dim_half = 20.0;
  // A FlashAttention-1-class kernel when the GPU has no figure of its own: this share of the
  // GPU's FlashAttention-2 efficiency. FlashAttention-2 README charts (Dao-AILab/flash-attention
  // @4f285b35), causal, head dim 128, 2k tokens, forward + backward: A100 69 / 155 = 0.45
  // (Triton 68), H100 108 / 265 = 0.41; the newer GPU's, the lower, is taken.
  double attention_v1_vs_v2 = 0.41;
  // Memory-bound kernels when the GPU has no measured copy bandwidth: A100 copy is 75%,
  // H800 copy is 84% of datasheet (ChipBenchmarker); element-wise framework kernels sit lower.
  double hbm_efficiency = 0.75;
  // Element-wise kernels in frameworks reach this fraction of a pure device copy.
  double elementwise_vs_copy = 0.85;
  double memory_launch_us = 3.0;
  // Host offload. Pinned host<->GPU copies reach this share of the PCIe x16 line rate: nvbandwidth
  // on H200, Gen5 host-to-device 55.4 GB/s of 63 (data/gpus.json, h200-sxm-141gb notes).
  double pcie_efficiency = 0.88;
  // The optimizer step run on the CPU (offload), as host-memory bytes per second of one node,
  // shared by the node's GPUs (each rank steps its own shard at the same time). From a measured
  // CPU Adam: GLM-4.5-Air (106B) on 4 nodes of 8 H100, Megatron's CPU optimizer offload, 9.6 s of
  // CPU Adam per step (THUDM/slime issue #1139, 2025-12): 26.5e9 parameters per node x 30 bytes
  // (TrainingJob::adam_step_bytes) / 9.6 s = 83 GB/s. DeepSpeed's CPUAdam measured 11.6e9
  // parameters in 8.2 s on an older host (deepspeedai/DeepSpeed PR #735, 2021): 42 GB/s.
  double host_optimizer_GBps_per_node = 83.0;
  // Host time to issue one op's kernel (cudaLaunchKernel and the runtime's bookkeeping): the
  // floor under every framework's own dispatch (TrainingJob::host_s_per_op), since the host
  // issues each kernel before the GPU can run it. The low end of "the launch time on the CPU side
  // is between 5-20 microseconds" in PyTorch traces (Meta's Holistic Trace Analysis,
  // docs/source/features/cuda_kernel_launch_stats.rst). A calibration profile's measured launch
  // or dispatch cost replaces it (Profile::host_issue_s_per_op).
  double host_launch_us = 5.0;
  // NCCL ring busbw over NVLink when no measurement is catalogued: 8xA100 232-235 of 300 GB/s
  // one-way (78%); 8xH100/H200 ring 368-370 of 450 (82%). Applies to every scale-up tier.
  double nvlink_busbw_efficiency = 0.80;
  // Fused expert-parallel dispatch and combine (DeepEP, HybridEP) inside an NVLink domain on a
  // GPU without its own measurement (GpuSpec::ep_fused_bandwidth): this share of the per-GPU
  // NVLink bandwidth, one direction. The lowest of the measured ones (algorithm bandwidth, BF16,
  // 8 ranks, through the PyTorch API): 8 x B200 HybridEP with 16 SMs, combine 530.86 of 900 GB/s
  // = 0.590 (dispatch 535.94; DeepEP branch hybrid-ep @94a9f8f, docs/README_Hybrid-EP.md); 8 x
  // GB200 HybridEP with 32 SMs 545.71 / 900 = 0.606; 8 x H800 DeepEP 153 / 200 = 0.765 (DeepEP
  // README @567632d, FP8 dispatch; combine 158). The kernels run on a few SMs and reach less of
  // NVLink 5 than NCCL's all-to-all; a share of the link, not a copy of another GPU's figure.
  double ep_fused_vs_nvlink = 0.590;
  // Inter-node busbw as a fraction of the NIC line rate per GPU: measured 76% (p6-b200),
  // 91% (p5en), 96% (DGX A100 HDR); we take the middle. Applies to every scale-out tier, after
  // its oversubscription (NetworkTier::effective_bandwidth).
  double network_busbw_efficiency = 0.85;
  // Per-collective latency: NCCL small-message all-reduce is ~10-20 us inside a node and
  // grows with log2(ranks) across nodes (tree/NVLS). alpha = base + per_log2 * log2(size), the
  // base of the outermost tier crossed: a tier's latency_us where the topology gives one, else
  // nvlink_latency_us for scale-up and network_latency_us for scale-out tiers.
  double nvlink_latency_us = 8.0;
  double network_latency_us = 15.0;
  double latency_per_log2_us = 3.0;
  // Fitted to a team's measured steps (RunsFit; 1 and 0 leave the model as above): the GEMM and
  // fused-attention ceilings are multiplied by gemm_efficiency_scale (capped at the dense peak), each
  // scale-up / scale-out tier's busbw by its scale, and every op pays per_op_overhead_us more.
  double gemm_efficiency_scale = 1.0;
  double scale_up_busbw_scale = 1.0;
  double scale_out_busbw_scale = 1.0;
  double per_op_overhead_us = 0.0;
};

// `a` with a runs fit's parameters.
DatasheetAssumptions with_runs_fit(DatasheetAssumptions a, const RunsFit& fit);

// Roofline with shape-dependent efficiency for GEMMs, a fraction of HBM bandwidth for
// memory-bound ops, and collectives through the hierarchical CollectiveModel over the cluster's
// topology tiers (collective_model.hpp), each tier's busbw a datasheet efficiency of its links.
class DatasheetCost final : public OpCostModel {
 public:
  // `source` is what source() says ("datasheet"; a runs fit names its runs).
  explicit DatasheetCost(const Cluster& cluster, DatasheetAssumptions a = {}, std::string source = "datasheet");

  units::Seconds gemm(const GemmOp& op) const override;
  units::Seconds memory(const MemoryOp& op) const override;
  units::Seconds collective(const CollectiveOp& op) const override;
  std::string source() const override { return source_; }
  double host_issue_s_per_op() const override { return a_.host_launch_us * 1e-6; }

  // Shape efficiency in (0, 1]: tile quantisation x wave quantisation x K ramp, without the
  // large-GEMM ceiling. Public so that tests and calibration can reason about it.
  double shape_efficiency(const GemmOp& op) const;
  double gemm_ceiling() const { return gemm_eff_; }
  // Busbw of the innermost tier and of the first tier outside it (zero when there is none).
  units::BytesPerSecond intra_busbw() const;
  units::BytesPerSecond inter_busbw() const;
  const CollectiveModel& collectives() const { return collectives_; }
  const Topology& network() const { return network_; }
  units::BytesPerSecond elementwise_bandwidth() const { return mem_bw_; }

 private:
  DatasheetAssumptions a_;
  std::string source_;
  PeakRates peak_;
  int sm_count_;
  double gemm_eff_;
  double gemm_fp8_eff_;  // the FP8 GEMM ceiling: the GPU's FP8 MAMF, else gemm_eff_ x H100's ratio
  double attention_eff_;
  double attention_v1_eff_;
  // A FlashAttention-2-class kernel's rate at `op`'s shape over its rate at the reference shape
  // (2k tokens, head dimension 128); 1 for a FlashAttention-1 kernel, whose charts (same README)
  // do not follow that curve (A100 Triton 69-83 TFLOP/s from 1k to 16k, head dimension 64 faster
  // than 128), and for an op whose shape is not known.
  double attention_shape(const GemmOp& op) const;
  units::BytesPerSecond hbm_bw_;       // the GEMM memory roof: the measured copy bandwidth
  units::BytesPerSecond mem_bw_;       // achieved by element-wise kernels
  units::BytesPerSecond pcie_bw_;      // pinned host<->GPU copies, one direction
  units::BytesPerSecond host_bw_;      // the CPU optimizer step, this GPU's share of its host
  units::BytesPerSecond ep_fused_bw_;  // fused EP dispatch / combine inside the NVLink domain
  Topology network_;
  CollectiveModel collectives_;  // one TierLink per tier of network_
};

}  // namespace capplan::sim
