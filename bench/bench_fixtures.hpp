// SPDX-License-Identifier: Apache-2.0
// The models and GPUs the benchmarks plan for, built by hand (no JSON, no catalogs) so only the
// model is measured. GPU figures as in data/gpus.json (datasheet and measured efficiencies).
#pragma once
#include "capplan/sim/workload/hardware.hpp"
#include "capplan/sim/workload/model.hpp"
#include "capplan/sim/units.hpp"

namespace capplan::bench {

using namespace capplan::units;

// Llama-2-70B (Touvron et al. 2023, Table 1; hidden 8192, GQA with 8 KV heads, SwiGLU 28672).
inline sim::ModelSpec llama2_70b() {
  return {.name = "llama2-70b", .layers = 80, .hidden = 8192, .heads = 64, .kv_heads = 8, .ffn_hidden = 28672,
          .vocab = 32000, .seq_len = 4096, .gated_ffn = true, .rmsnorm = true, .rope = true};
}

// The Megatron 22B GPT of Korthikanti et al. 2022 (Table 3): 48 layers, hidden 6144, 64 heads.
inline sim::ModelSpec megatron_gpt_22b() {
  return {.name = "megatron-gpt-22b", .layers = 48, .hidden = 6144, .heads = 64, .kv_heads = 64,
          .ffn_hidden = 4 * 6144, .vocab = 51200, .seq_len = 2048};
}

inline sim::GpuSpec h100() {
  sim::GpuSpec g;
  g.id = "h100-sxm-80gb";
  g.peak.bf16 = tflop_per_s(989);
  g.peak.fp16 = tflop_per_s(989);
  g.peak.fp8 = tflop_per_s(1979);
  g.peak.fp32 = tflop_per_s(67);
  g.peak.tf32 = tflop_per_s(494);
  g.hbm_capacity = gib(80);
  g.hbm_bandwidth = gb_per_s(3350);
  g.nvlink_bandwidth = gb_per_s(450);
  g.pcie_bandwidth = gb_per_s(64);
  g.sm_count = 132;
  g.gemm_efficiency = 0.803;
  g.nvlink_busbw = gb_per_s(370);
  g.attention_efficiency = 0.35;
  return g;
}

inline sim::GpuSpec h200() {
  sim::GpuSpec g = h100();
  g.id = "h200-sxm-141gb";
  g.hbm_capacity = gib(141);
  g.hbm_bandwidth = gb_per_s(4800);
  g.gemm_efficiency = 0.8;
  g.nvlink_busbw = gb_per_s(367.6);
  return g;
}

inline sim::GpuSpec a100(bool big) {
  sim::GpuSpec g;
  g.id = big ? "a100-80gb-sxm" : "a100-40gb-sxm";
  g.peak.bf16 = tflop_per_s(312);
  g.peak.fp16 = tflop_per_s(312);
  g.peak.tf32 = tflop_per_s(156);
  g.peak.fp32 = tflop_per_s(19.5);
  g.hbm_capacity = big ? gib(80) : gib(40);
  g.hbm_bandwidth = big ? gb_per_s(2039) : gb_per_s(1555);
  g.nvlink_bandwidth = gb_per_s(300);
  g.pcie_bandwidth = gb_per_s(32);
  g.sm_count = 108;
  g.gemm_efficiency = 0.869;
  g.nvlink_busbw = gb_per_s(234.9);
  g.attention_efficiency = 0.5;
  return g;
}

}  // namespace capplan::bench
