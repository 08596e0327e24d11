// SPDX-License-Identifier: Apache-2.0
// Hand-built hardware, models and scenarios for the sim tests. The sim library has no JSON, so
// every value here is typed in from its datasheet or paper, with the source next to it.
#pragma once
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/workload/hardware.hpp"
#include "capplan/sim/lowering/ops.hpp"
#include "capplan/sim/lowering/step_model.hpp"
#include "capplan/sim/workload/strategy.hpp"
#include "capplan/sim/units.hpp"
#include "capplan/sim/workload/workload.hpp"

namespace capplan::sim::test {

// NVIDIA A100 80GB SXM4 (A100 datasheet; 108 SMs from the GA100 whitepaper). Measured figures as
// used by Korthikanti et al.'s hardware generation: MAMF 271.2/312 = 0.869, ChipBenchmarker copy
// 1519.8 GB/s of 2039, 8-GPU NCCL all-reduce busbw 233 GB/s.
inline GpuSpec a100_80gb() {
  using namespace units;
  return {.id = "a100-80gb-sxm",
          .name = "NVIDIA A100 80GB SXM4",
          .peak = {.fp32 = tflop_per_s(19.5), .tf32 = tflop_per_s(156), .fp16 = tflop_per_s(312),
                   .bf16 = tflop_per_s(312), .fp8 = tflop_per_s(0)},  // fp8 not supported
          .hbm_capacity = gib(80),
          .hbm_bandwidth = gb_per_s(2039),
          .nvlink_bandwidth = gb_per_s(300),  // 600 GB/s bidirectional
          .pcie_bandwidth = gb_per_s(32),
          .sm_count = 108,
          .gemm_efficiency = 0.869,
          .hbm_efficiency = 1519.8 / 2039.0,
          .nvlink_busbw = gb_per_s(233)};
}

// NVIDIA H100 SXM5 80GB (datasheet: 989.4 dense BF16, 1978.9 dense FP8, 3.35 TB/s, NVLink4
// 900 GB/s bidirectional, 132 SMs). Efficiencies left at 0 ("unknown") so that the datasheet
// model's stated defaults apply.
inline GpuSpec h100_sxm() {
  using namespace units;
  return {.id = "h100-sxm", .name = "NVIDIA H100 SXM5 80GB",
          .peak = {.fp32 = tflop_per_s(66.9), .tf32 = tflop_per_s(494.7), .fp16 = tflop_per_s(989.4),
                   .bf16 = tflop_per_s(989.4), .fp8 = tflop_per_s(1978.9)},
          .hbm_capacity = gib(80), .hbm_bandwidth = gb_per_s(3350), .nvlink_bandwidth = gb_per_s(450),
          .pcie_bandwidth = gb_per_s(64), .sm_count = 132};
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
  return {.name = "gpt3-175b", .layers = 96, .hidden = 12288, .heads = 96, .kv_heads = 96, .ffn_hidden = 4 * 12288,
          .vocab = 51200, .seq_len = 2048, .gated_ffn = false, .tied_embeddings = true, .dropout = true,
          .flash_attention = false};
}

// Megatron-Turing NLG 530B as run by Korthikanti et al. (Table 3): 105 layers, h 20480, 128 heads;
// otherwise GPT-3 175B's architecture (ffn 4h, vocabulary 51200, 2048 tokens, dropout, no fused attention).
inline ModelSpec mt_nlg_530b() {
  return {.name = "mt-nlg-530b", .layers = 105, .hidden = 20480, .heads = 128, .kv_heads = 128,
          .ffn_hidden = 4 * 20480, .vocab = 51200, .seq_len = 2048, .gated_ffn = false, .tied_embeddings = true,
          .dropout = true, .flash_attention = false};
}

// Mixtral 8x7B (Jiang et al. 2024; mistralai/Mixtral-8x7B-v0.1 config.json): 32 layers, hidden
// 4096, 32 heads, 8 KV heads, 8 experts of 14336 (SwiGLU), top-2, vocab 32000, untied.
inline ModelSpec mixtral_8x7b() {
  return {.name = "mixtral-8x7b", .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8, .ffn_hidden = 14336,
          .vocab = 32000, .seq_len = 4096, .gated_ffn = true, .rmsnorm = true, .rope = true,
          .moe = {.experts = 8, .top_k = 2, .expert_ffn_hidden = 14336}};
}

// Llama-2-70B (Touvron et al. 2023; HF config): 80 layers, 8192 hidden, 64 heads, 8 KV heads,
// SwiGLU ffn 28672, vocabulary 32000, untied embeddings, 4096 tokens.
inline ModelSpec llama2_70b() {
  return {.name = "llama2-70b", .layers = 80, .hidden = 8192, .heads = 64, .kv_heads = 8, .ffn_hidden = 28672,
          .vocab = 32000, .seq_len = 4096, .gated_ffn = true, .tied_embeddings = false, .dropout = false,
          .flash_attention = true};
}

// Llama-3.1-405B shape: 126 layers, 16384 hidden, 128 heads, 8 KV heads, ffn 53248, vocab 128256,
// 8192 tokens; otherwise as Llama-2-70B above (SwiGLU, untied, no dropout, fused attention).
inline ModelSpec llama3_405b() {
  return {.name = "llama3-405b", .layers = 126, .hidden = 16384, .heads = 128, .kv_heads = 8, .ffn_hidden = 53248,
          .vocab = 128256, .seq_len = 8192, .gated_ffn = true, .tied_embeddings = false, .dropout = false,
          .flash_attention = true};
}

// A GPT-style 1.3B model (24 layers, h 2048, 16 heads, ffn 4h, vocab 51200, 2048 tokens).
inline ModelSpec gpt_1_3b() {
  return {.name = "gpt-1.3b", .layers = 24, .hidden = 2048, .heads = 16, .kv_heads = 16, .ffn_hidden = 8192,
          .vocab = 51200, .seq_len = 2048, .gated_ffn = false, .tied_embeddings = true, .dropout = false,
          .flash_attention = true};
}

// A deliberately tiny model: 2 layers, h 64, 4 heads, 2 KV heads, gated ffn 128, vocab 256.
inline ModelSpec tiny_model() {
  return {.name = "tiny", .layers = 2, .hidden = 64, .heads = 4, .kv_heads = 2, .ffn_hidden = 128, .vocab = 256,
          .seq_len = 128, .gated_ffn = true, .tied_embeddings = false, .dropout = false, .flash_attention = true};
}

// DeepSeek-V3 (DeepSeek-AI 2024, arXiv:2412.19437, Sec. 4.2; deepseek-ai/DeepSeek-V3 config.json):
// 61 layers, hidden 7168, 128 heads with MLA (q_lora 1536, kv_lora 512, 128 + 64 RoPE, v 128),
// dense FFN 18432 on the first 3 layers, then 256 routed experts of 2048 (top 8) + 1 shared.
inline ModelSpec deepseek_v3() {
  return {.name = "deepseek-v3", .layers = 61, .hidden = 7168, .heads = 128, .kv_heads = 128, .ffn_hidden = 18432,
          .vocab = 129280, .seq_len = 4096, .gated_ffn = true, .rmsnorm = true, .rope = true,
          .attention = Attention::mla, .mla = {1536, 512, 128, 64, 128},
          .moe = {.experts = 256, .top_k = 8, .expert_ffn_hidden = 2048, .shared_experts = 1, .dense_layers = 3}};
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
  return {.tp = tp, .pp = pp, .dp = dp, .micro_batch = micro_batch, .virtual_stages = virtual_stages, .zero = zero,
          .recompute = rc, .sequence_parallel = sp};
}

// A request with every field fixed to `p` (estimate() then only checks and evaluates it).
inline StrategyRequest fixed_request(const Parallelism& p) {
  StrategyRequest r{.tp = p.tp, .pp = p.pp, .dp = p.dp, .cp = p.cp, .ep = p.ep, .micro_batch = p.micro_batch,
                    .virtual_stages = p.virtual_stages, .zero = p.zero, .recompute = p.recompute};
  for (const auto& o : kStrategyOptions) r.*o.request = p.*o.value;
  return r;
}

inline Scenario scenario_of(const ModelSpec& m, const TrainingJob& job, const Cluster& c,
                            const StrategyRequest& r = {}) {
  return {.model = m, .training = job, .cluster = c, .strategy = r};
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

// The forward entries of the named GEMM in one step, each with the step op that carries it (its
// count of kernels).
inline std::vector<std::pair<const StepOp*, const GemmOp*>> forward_gemms(const StepOps& ops, const char* name) {
  std::vector<std::pair<const StepOp*, const GemmOp*>> found;
  for (const StepOp& so : ops.ops) {
    const auto* g = std::get_if<GemmOp>(&so.op);
    if (g != nullptr && so.phase == Phase::forward && std::strcmp(g->name, name) == 0) found.emplace_back(&so, g);
  }
  return found;
}

}  // namespace capplan::sim::test
