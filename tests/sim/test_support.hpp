// SPDX-License-Identifier: Apache-2.0
// Hand-built hardware, models and scenarios for the sim tests. The sim library has no JSON, so
// every value here is typed in from its datasheet or paper, with the source next to it.
#pragma once
#include <cmath>
#include <cstring>
#include <string>
#include <variant>

#include "capplan/sim/estimate.hpp"
#include "capplan/sim/hardware.hpp"
#include "capplan/sim/ops.hpp"
#include "capplan/sim/step_model.hpp"
#include "capplan/sim/strategy.hpp"
#include "capplan/sim/units.hpp"
#include "capplan/sim/workload.hpp"

namespace capplan::sim::test {

// NVIDIA A100 80GB SXM4 (A100 datasheet; 108 SMs from the GA100 whitepaper). Measured figures as
// used by Korthikanti et al.'s hardware generation: MAMF 271.2/312 = 0.869, ChipBenchmarker copy
// 1519.8 GB/s of 2039, 8-GPU NCCL all-reduce busbw 233 GB/s.
inline GpuSpec a100_80gb() {
  GpuSpec g;
  g.id = "a100-80gb-sxm";
  g.name = "NVIDIA A100 80GB SXM4";
  g.peak.fp32 = units::tflop_per_s(19.5);
  g.peak.tf32 = units::tflop_per_s(156);
  g.peak.fp16 = units::tflop_per_s(312);
  g.peak.bf16 = units::tflop_per_s(312);
  g.peak.fp8 = units::tflop_per_s(0);  // not supported
  g.hbm_capacity = units::gib(80);
  g.hbm_bandwidth = units::gb_per_s(2039);
  g.nvlink_bandwidth = units::gb_per_s(300);  // 600 GB/s bidirectional
  g.pcie_bandwidth = units::gb_per_s(32);
  g.sm_count = 108;
  g.gemm_efficiency = 0.869;
  g.hbm_efficiency = 1519.8 / 2039.0;
  g.nvlink_busbw = units::gb_per_s(233);
  return g;
}

// NVIDIA H100 SXM5 80GB (datasheet: 989.4 dense BF16, 1978.9 dense FP8, 3.35 TB/s, NVLink4
// 900 GB/s bidirectional, 132 SMs). Efficiencies left at 0 ("unknown") so that the datasheet
// model's stated defaults apply.
inline GpuSpec h100_sxm() {
  GpuSpec g;
  g.id = "h100-sxm";
  g.name = "NVIDIA H100 SXM5 80GB";
  g.peak.fp32 = units::tflop_per_s(66.9);
  g.peak.tf32 = units::tflop_per_s(494.7);
  g.peak.fp16 = units::tflop_per_s(989.4);
  g.peak.bf16 = units::tflop_per_s(989.4);
  g.peak.fp8 = units::tflop_per_s(1978.9);
  g.hbm_capacity = units::gib(80);
  g.hbm_bandwidth = units::gb_per_s(3350);
  g.nvlink_bandwidth = units::gb_per_s(450);
  g.pcie_bandwidth = units::gb_per_s(64);
  g.sm_count = 132;
  return g;
}

inline Cluster cluster_of(const GpuSpec& gpu, int gpus, int gpus_per_node = 8,
                          units::BytesPerSecond inter = units::gbit_per_s(200)) {
  Cluster c;
  c.gpu = gpu;
  c.gpus = gpus;
  c.gpus_per_node = gpus_per_node;
  c.intra_node_bandwidth = gpu.nvlink_bandwidth;
  c.inter_node_bandwidth = inter;
  return c;
}

// GPT-3 175B (Brown et al. 2020, Table 2.1): 96 layers, d_model 12288, 96 heads, ffn 4h,
// vocabulary 51200 as padded by Megatron, 2048 tokens. Korthikanti et al. train it with dropout
// and without fused attention.
inline ModelSpec gpt3_175b() {
  ModelSpec m;
  m.name = "gpt3-175b";
  m.layers = 96;
  m.hidden = 12288;
  m.heads = 96;
  m.kv_heads = 96;
  m.ffn_hidden = 4 * 12288;
  m.vocab = 51200;
  m.seq_len = 2048;
  m.gated_ffn = false;
  m.tied_embeddings = true;
  m.dropout = true;
  m.flash_attention = false;
  return m;
}

// Megatron-Turing NLG 530B as run by Korthikanti et al. (Table 3): 105 layers, h 20480, 128 heads.
inline ModelSpec mt_nlg_530b() {
  ModelSpec m = gpt3_175b();
  m.name = "mt-nlg-530b";
  m.layers = 105;
  m.hidden = 20480;
  m.heads = 128;
  m.kv_heads = 128;
  m.ffn_hidden = 4 * 20480;
  return m;
}

// Mixtral 8x7B (Jiang et al. 2024; mistralai/Mixtral-8x7B-v0.1 config.json): 32 layers, hidden
// 4096, 32 heads, 8 KV heads, 8 experts of 14336 (SwiGLU), top-2, vocab 32000, untied.
inline ModelSpec mixtral_8x7b() {
  ModelSpec m;
  m.name = "mixtral-8x7b";
  m.layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 8;
  m.ffn_hidden = 14336;
  m.vocab = 32000;
  m.seq_len = 4096;
  m.gated_ffn = true;
  m.rmsnorm = true;
  m.rope = true;
  m.moe.experts = 8;
  m.moe.top_k = 2;
  m.moe.expert_ffn_hidden = 14336;
  return m;
}

// Llama-2-70B (Touvron et al. 2023; HF config): 80 layers, 8192 hidden, 64 heads, 8 KV heads,
// SwiGLU ffn 28672, vocabulary 32000, untied embeddings, 4096 tokens.
inline ModelSpec llama2_70b() {
  ModelSpec m;
  m.name = "llama2-70b";
  m.layers = 80;
  m.hidden = 8192;
  m.heads = 64;
  m.kv_heads = 8;
  m.ffn_hidden = 28672;
  m.vocab = 32000;
  m.seq_len = 4096;
  m.gated_ffn = true;
  m.tied_embeddings = false;
  m.dropout = false;
  m.flash_attention = true;
  return m;
}

// Llama-3.1-405B shape: 126 layers, 16384 hidden, 128 heads, 8 KV heads, ffn 53248, vocab 128256.
inline ModelSpec llama3_405b() {
  ModelSpec m = llama2_70b();
  m.name = "llama3-405b";
  m.layers = 126;
  m.hidden = 16384;
  m.heads = 128;
  m.kv_heads = 8;
  m.ffn_hidden = 53248;
  m.vocab = 128256;
  m.seq_len = 8192;
  return m;
}

// A GPT-style 1.3B model (24 layers, h 2048, 16 heads, ffn 4h, vocab 51200, 2048 tokens).
inline ModelSpec gpt_1_3b() {
  ModelSpec m;
  m.name = "gpt-1.3b";
  m.layers = 24;
  m.hidden = 2048;
  m.heads = 16;
  m.kv_heads = 16;
  m.ffn_hidden = 8192;
  m.vocab = 51200;
  m.seq_len = 2048;
  m.gated_ffn = false;
  m.tied_embeddings = true;
  m.dropout = false;
  m.flash_attention = true;
  return m;
}

// A deliberately tiny model: 2 layers, h 64, 4 heads, 2 KV heads, gated ffn 128, vocab 256.
inline ModelSpec tiny_model() {
  ModelSpec m;
  m.name = "tiny";
  m.layers = 2;
  m.hidden = 64;
  m.heads = 4;
  m.kv_heads = 2;
  m.ffn_hidden = 128;
  m.vocab = 256;
  m.seq_len = 128;
  m.gated_ffn = true;
  m.tied_embeddings = false;
  m.dropout = false;
  m.flash_attention = true;
  return m;
}

// DeepSeek-V3 (DeepSeek-AI 2024, arXiv:2412.19437, Sec. 4.2; deepseek-ai/DeepSeek-V3 config.json):
// 61 layers, hidden 7168, 128 heads with MLA (q_lora 1536, kv_lora 512, 128 + 64 RoPE, v 128),
// dense FFN 18432 on the first 3 layers, then 256 routed experts of 2048 (top 8) + 1 shared.
inline ModelSpec deepseek_v3() {
  ModelSpec m;
  m.name = "deepseek-v3";
  m.layers = 61;
  m.hidden = 7168;
  m.heads = 128;
  m.kv_heads = 128;
  m.ffn_hidden = 18432;
  m.vocab = 129280;
  m.seq_len = 4096;
  m.gated_ffn = true;
  m.rmsnorm = true;
  m.rope = true;
  m.attention = Attention::mla;
  m.mla = {1536, 512, 128, 64, 128};
  m.moe.experts = 256;
  m.moe.top_k = 8;
  m.moe.expert_ffn_hidden = 2048;
  m.moe.shared_experts = 1;
  m.moe.dense_layers = 3;
  return m;
}

inline TrainingJob job_of(std::int64_t global_batch, double tokens = 300e9, Precision precision = Precision::bf16) {
  TrainingJob j;
  j.global_batch = global_batch;
  j.tokens = tokens;
  j.precision = precision;
  return j;
}

// The same job with 16-bit gradient buffers and reduction (grad_reduce_in_fp32 off), for tests
// of the ZeRO byte counts written in the ZeRO paper's 2 + 2 + 12.
inline TrainingJob with_16bit_gradients(TrainingJob j) {
  j.grad_reduce_in_fp32 = false;
  return j;
}

inline Parallelism layout(int tp, int pp, int dp, int micro_batch = 1, Recompute rc = Recompute::selective,
                          bool sp = false, int zero = 0, int virtual_stages = 1) {
  Parallelism p;
  p.tp = tp;
  p.pp = pp;
  p.dp = dp;
  p.micro_batch = micro_batch;
  p.recompute = rc;
  p.sequence_parallel = sp;
  p.zero = zero;
  p.virtual_stages = virtual_stages;
  return p;
}

// A request with every field fixed to `p` (estimate() then only checks and evaluates it).
inline StrategyRequest fixed_request(const Parallelism& p) {
  StrategyRequest r;
  r.tp = p.tp;
  r.pp = p.pp;
  r.dp = p.dp;
  r.cp = p.cp;
  r.ep = p.ep;
  r.micro_batch = p.micro_batch;
  r.virtual_stages = p.virtual_stages;
  r.zero = p.zero;
  r.recompute = p.recompute;
  r.sequence_parallel = p.sequence_parallel;
  r.overlap_dp_comm = p.overlap_dp_comm;
  return r;
}

inline Scenario scenario_of(const ModelSpec& m, const TrainingJob& job, const Cluster& c,
                            const StrategyRequest& r = {}) {
  Scenario s;
  s.model = m;
  s.training = job;
  s.cluster = c;
  s.strategy = r;
  return s;
}

inline bool finite(double x) { return std::isfinite(x); }

// Bytes of the named memory or collective op in one step (all phases), over its repetitions.
inline double op_bytes(const StepOps& ops, const char* name) {
  double total = 0;
  for (const StepOp& so : ops.ops) {
    if (const auto* c = std::get_if<CollectiveOp>(&so.op); c != nullptr && std::strcmp(c->name, name) == 0) {
      total += c->bytes.base() * so.count;
    }
    if (const auto* m = std::get_if<MemoryOp>(&so.op); m != nullptr && std::strcmp(m->name, name) == 0) {
      total += m->bytes.base() * so.count;
    }
  }
  return total;
}

}  // namespace capplan::sim::test
