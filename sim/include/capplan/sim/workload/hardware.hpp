// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <optional>
#include <string>

#include "capplan/sim/workload/topology.hpp"
#include "capplan/sim/units.hpp"
#include "capplan/sim/workload/variability.hpp"

namespace capplan::sim {

// fp4: NVFP4 (E2M1 with an FP8 scale per 16 elements) on Blackwell tensor cores; serving only
// (weight and activation quantisation), not a training precision.
enum class Precision { fp32, tf32, fp16, bf16, fp8, fp4 };

const char* to_string(Precision p);
std::optional<Precision> precision_from_string(const std::string& s);
// Bytes of one element as stored: fp32/tf32 4 (tf32 is an fp32 tensor fed to TF32 tensor cores),
// fp16/bf16 2, fp8 1, fp4 0.5 (its block scales are the serving weight format's: serve.hpp).
double element_bytes(Precision p);

// Dense (no structured sparsity) peak per precision; zero means "not supported by this GPU".
struct PeakRates {
  units::FlopsPerSecond fp32;
  units::FlopsPerSecond tf32;
  units::FlopsPerSecond fp16;
  units::FlopsPerSecond bf16;
  units::FlopsPerSecond fp8;
  units::FlopsPerSecond fp4;  // 0 = no FP4 tensor cores (or unknown)

  units::FlopsPerSecond for_precision(Precision p) const;
};

// The tensor-core generation, where the cost model's defaults differ by it (the FP8 GEMM ceiling
// of a GPU without its own FP8 measurement, DatasheetCost). `other` for every other architecture.
enum class TensorCoreGeneration { other, hopper, blackwell };

// A GPU as the datasheet (and, where published, measurements) describe it.
// Contract: bandwidths are unidirectional per GPU; efficiencies are fractions in (0, 1];
// an efficiency of 0 means "unknown: use the model's stated default".
struct GpuSpec {
  std::string id;
  std::string name;
  PeakRates peak;
  units::Bytes hbm_capacity;
  units::BytesPerSecond hbm_bandwidth;
  units::BytesPerSecond nvlink_bandwidth;  // one direction, per GPU; 0 = no NVLink (PCIe only)
  units::BytesPerSecond pcie_bandwidth;    // one direction, x16
  int sm_count = 0;                        // streaming multiprocessors (or CUs); 0 = unknown
  double gemm_efficiency = 0.0;            // best large-GEMM achieved / dense peak (MAMF)
  // The same for FP8 (E4M3) GEMMs against the dense FP8 peak; 0 = unknown (the cost model then
  // takes gemm_efficiency times the FP8/BF16 ratio measured on its tensor-core generation,
  // DatasheetCost).
  double gemm_fp8_efficiency = 0.0;
  TensorCoreGeneration tensor_cores = TensorCoreGeneration::other;
  double hbm_efficiency = 0.0;             // measured device copy / datasheet HBM bandwidth
  units::BytesPerSecond nvlink_busbw;      // measured single-node NCCL all-reduce busbw; 0 = unknown
  // Fused expert-parallel dispatch / combine kernels (DeepEP, HybridEP) inside one NVLink domain:
  // their measured "algorithm bandwidth", the hidden vectors a rank receives (one per token and
  // destination rank, its own share included) per second, the lower of dispatch and combine.
  // 0 = unknown (DatasheetCost then takes a share of the NVLink bandwidth).
  units::BytesPerSecond ep_fused_bandwidth;
  double attention_efficiency = 0.0;       // fused (flash) attention, fwd+bwd, vs dense peak; 0 = unknown
  // The same for FlashAttention-1-class kernels (AttentionKernel::flash1); 0 = unknown.
  double attention_v1_efficiency = 0.0;
};

// What one training job runs on. Contract: gpus is a multiple of gpus_per_node unless
// gpus < gpus_per_node (a partial node); inter-node bandwidth is per GPU, one direction.
// A node is the unit one buys and loses (an instance, a rack sold whole); the network is
// `topology`, or, when that is empty, two tiers built from gpus_per_node and the two bandwidths.
struct Cluster {
  GpuSpec gpu;
  int gpus = 0;
  int gpus_per_node = 8;
  units::BytesPerSecond intra_node_bandwidth;      // per GPU one direction (NVLink or PCIe)
  units::BytesPerSecond inter_node_bandwidth;      // per GPU one direction (NIC share)
  std::optional<units::UsdPerSecond> price_per_gpu;  // empty = unknown price
  std::string instance_id;                           // empty when given by GPU + count
  std::string price_source;                          // "catalog: ..." or "scenario override"
  // Relative standard deviation of per-GPU compute speed within the cluster (variability.hpp):
  // the job's compute runs at the pace of the slowest of its GPUs. 0 = identical GPUs.
  double gpu_speed_spread = kDefaultGpuSpeedSpread;
  // The network's tiers (topology.hpp); empty = the two-tier network of the fields above.
  Topology topology;

  int nodes() const { return (gpus + gpus_per_node - 1) / gpus_per_node; }
  // `topology`, or Topology::two_tier(gpus_per_node, intra, inter) when it is empty.
  Topology network() const;
  // Sets `topology` and keeps the two-field form in step: intra_node_bandwidth = the innermost
  // scale-up tier's bandwidth, inter_node_bandwidth = the first scale-out tier's (either kept when
  // the topology has no such tier).
  void set_topology(Topology t);
};

}  // namespace capplan::sim
