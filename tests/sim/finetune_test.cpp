// SPDX-License-Identifier: Apache-2.0
// Fine-tuning (sim/finetune.hpp): the op list of a LoRA and a QLoRA layer against FLOPs and bytes
// derived by hand here, LoRA's model FLOPs against NeMo's published figures, the parameters,
// memory and data-parallel bytes over the trained weights only, and the dataset's resolution.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/workload/finetune.hpp"
#include "capplan/sim/folds/memory.hpp"
#include "capplan/sim/workload/scenario.hpp"
#include "capplan/sim/lowering/step_model.hpp"
#include "test_support.hpp"

namespace capplan::sim {
namespace {

using test::cluster_of;
using test::layout;

// Sums of a few dozen doubles of order 1e9-1e15, grouped differently from the closed forms below.
constexpr double kSumOrder = 1e-12;

// A Llama-style layer small enough to write every shape out: h 1024, 8 heads of 128, 2 KV heads
// (GQA), SwiGLU FFN of 2816, vocabulary 4096, 512 tokens.
ModelSpec small_llama(int layers = 2) {
  return {.name = "small", .layers = layers, .hidden = 1024, .heads = 8, .kv_heads = 2, .ffn_hidden = 2816,
          .vocab = 4096, .seq_len = 512, .gated_ffn = true, .rmsnorm = true, .rope = true};
}

TrainingJob tuned_job(TuneMethod method, int rank = 16, unsigned targets = kLoraAllLinear) {
  TrainingJob j = test::job_of(8, 1e9);
  j.finetune.method = method;
  j.finetune.lora_rank = rank;
  j.finetune.lora_targets = targets;
  return j;
}

double sum_flops(const std::vector<StepOp>& ops, Scope scope, OpRole role, Phase phase) {
  double f = 0;
  for (const StepOp& o : ops) {
    if (o.scope == scope && o.role == role && o.phase == phase) f += o.flops;
  }
  return f;
}

double sum_bytes(const std::vector<StepOp>& ops, const char* name, Phase phase) {
  double b = 0;
  for (const StepOp& o : ops) {
    if (o.phase != phase) continue;
    if (const auto* m = std::get_if<MemoryOp>(&o.op); m && std::strcmp(m->name, name) == 0) b += m->bytes.base() * o.count;
  }
  return b;
}

bool has_gemm(const std::vector<StepOp>& ops, const char* name) {
  for (const StepOp& o : ops) {
    if (const auto* g = std::get_if<GemmOp>(&o.op); g && std::strcmp(g->name, name) == 0) return true;
  }
  return false;
}

TEST(Finetune, LoraLayerHasNoBaseWeightGradientsAndAddsTheAdaptersFlops) {
  // One micro-batch of T = 512 tokens, tp 1, rank r = 16 on q, k, v, o, gate, up, down.
  // Base linears per token: q 1024x1024, k and v 1024x256, o 1024x1024, gate and up 1024x2816,
  // down 2816x1024: N_lin = 1024*(1024+256+256+1024) + 3*1024*2816 = 2,621,440 + 8,650,752 = 11,272,192.
  // Forward 2 N_lin T, input gradients 2 N_lin T, no weight gradients.
  // Adapters: r (k + n) each: q 16*2048, k 16*1280, v 16*1280, o 16*2048, gate 16*3840, up 16*3840,
  // down 16*3840 = 16*(2048+1280+1280+2048+3*3840) = 16*18,176 = 290,816 parameters per layer;
  // forward 2 N_a T, backward 4 N_a T (input and weight gradients of A and B).
  const ModelSpec m = small_llama();
  const StepOps ops = build_step_ops(m, tuned_job(TuneMethod::lora), layout(1, 1, 1, 1, Recompute::none),
                                     cluster_of(test::h100_sxm(), 1));
  const double T = 512, N_lin = 11272192, N_a = 290816;
  const double fwd = sum_flops(ops.ops, Scope::layer, OpRole::linear, Phase::forward) +
                     sum_flops(ops.ops, Scope::dense_ffn, OpRole::linear, Phase::forward);
  const double bwd = sum_flops(ops.ops, Scope::layer, OpRole::linear, Phase::backward) +
                     sum_flops(ops.ops, Scope::dense_ffn, OpRole::linear, Phase::backward);
  EXPECT_NEAR(fwd, 2 * N_lin * T, kSumOrder * fwd);
  EXPECT_NEAR(bwd, 2 * N_lin * T, kSumOrder * bwd);  // dgrad only
  const double a_fwd = sum_flops(ops.ops, Scope::layer, OpRole::adapter, Phase::forward) +
                       sum_flops(ops.ops, Scope::dense_ffn, OpRole::adapter, Phase::forward);
  const double a_bwd = sum_flops(ops.ops, Scope::layer, OpRole::adapter, Phase::backward) +
                       sum_flops(ops.ops, Scope::dense_ffn, OpRole::adapter, Phase::backward);
  EXPECT_NEAR(a_fwd, 2 * N_a * T, kSumOrder * a_fwd);
  EXPECT_NEAR(a_bwd, 4 * N_a * T, kSumOrder * a_bwd);
  EXPECT_FALSE(has_gemm(ops.ops, "qkv_wgrad"));
  EXPECT_FALSE(has_gemm(ops.ops, "ffn_up_wgrad"));
  EXPECT_FALSE(has_gemm(ops.ops, "logits_wgrad"));  // the output layer is frozen too
  EXPECT_TRUE(has_gemm(ops.ops, "lora_a_wgrad"));
  // The adapter parameters the op list prices are the ones the model counts.
  EXPECT_DOUBLE_EQ(lora_attention_params(m, tuned_job(TuneMethod::lora).finetune) +
                       lora_dense_ffn_params(m, tuned_job(TuneMethod::lora).finetune),
                   N_a);
  // Fused (Megatron) adapter add: read base and adapter outputs, write the sum: 3 * 2 bytes * T * n
  // over n = 1024 + 256 + 256 + 1024 + 2816 + 2816 + 1024 = 9216.
  EXPECT_DOUBLE_EQ(sum_bytes(ops.ops, "lora_add", Phase::forward), 3.0 * 2.0 * T * 9216);
}

TEST(Finetune, LoraOnQAndVOnlyAdaptsThoseTwo) {
  // PEFT's default targets for Llama-style models (q_proj, v_proj): 16*(2048 + 1280) per layer.
  const ModelSpec m = small_llama();
  const FinetuneSpec f = tuned_job(TuneMethod::lora, 16, lora_q | lora_v).finetune;
  EXPECT_DOUBLE_EQ(lora_attention_params(m, f), 16.0 * (2048 + 1280));
  EXPECT_DOUBLE_EQ(lora_dense_ffn_params(m, f), 0.0);
  const StepOps ops = build_step_ops(m, tuned_job(TuneMethod::lora, 16, lora_q | lora_v),
                                     layout(1, 1, 1, 1, Recompute::none), cluster_of(test::h100_sxm(), 1));
  const double T = 512;
  EXPECT_NEAR(sum_flops(ops.ops, Scope::layer, OpRole::adapter, Phase::forward), 2 * T * 16.0 * (2048 + 1280), 1.0);
}

TEST(Finetune, QloraDequantisesEveryBaseMatrixBeforeEachGemmThatReadsIt) {
  // NF4 with double quantisation: 4 bits + 8/64 + 32/(64*256) = 4.127 bits = 0.51587 bytes per
  // weight (Dettmers et al. 2023: 0.127 bits of constants). Dequantising writes 2 bytes per weight.
  // Per layer the base matrices hold N_lin = 11,272,192 weights (as above); forward and the input-
  // gradient GEMMs each dequantise them once (no recomputation here).
  const FinetuneSpec f = tuned_job(TuneMethod::qlora).finetune;
  const double q = (4.0 + 8.0 / 64.0 + 32.0 / (64.0 * 256.0)) / 8.0;
  EXPECT_DOUBLE_EQ(f.quantized_bytes_per_param(), q);
  EXPECT_NEAR(q * 8.0 - 4.0, 0.127, 0.001);  // the paper's figure
  const StepOps ops = build_step_ops(small_llama(), tuned_job(TuneMethod::qlora), layout(1, 1, 1, 1, Recompute::none),
                                     cluster_of(test::h100_sxm(), 1));
  const double N_lin = 11272192;
  EXPECT_NEAR(sum_bytes(ops.ops, "dequantize_base", Phase::forward), (q + 2.0) * N_lin, 1.0);
  EXPECT_NEAR(sum_bytes(ops.ops, "dequantize_base", Phase::backward), (q + 2.0) * N_lin, 1.0);
  // Without double quantisation the absmax is fp32 per 64: 4.5 bits.
  FinetuneSpec plain = f;
  plain.double_quant = false;
  EXPECT_DOUBLE_EQ(plain.quantized_bytes_per_param(), 4.5 / 8.0);
}

TEST(Finetune, GptqInt4UnpacksEagerlyInForwardAndKeepsTheCopyForBackward) {
  // AutoGPTQ's QuantLinear at 128 rows or more (qlinear_cuda.py): shift the packed words (0.5 read,
  // 4 written per weight), cast to int8 (4 + 1), mask (1 + 1), gather the zero points (1), subtract
  // (1 + 1 + 1), gather the scales (2), multiply (2 + 1 + 2): 22.5 bytes per weight in 7 kernels.
  // Forward and recomputation unpack; backward reuses the 16-bit copy autograd kept (2 bytes per
  // weight, an activation of the layer).
  TrainingJob job = tuned_job(TuneMethod::qlora);
  job.finetune.base_format = BaseFormat::int4;
  const double N_lin = 11272192;  // the base matrices of one layer (as above)
  const StepOps none = build_step_ops(small_llama(), job, layout(1, 1, 1, 1, Recompute::none),
                                      cluster_of(test::h100_sxm(), 1));
  EXPECT_NEAR(sum_bytes(none.ops, "dequantize_base_eager", Phase::forward), 22.5 * N_lin, 1.0);
  EXPECT_EQ(sum_bytes(none.ops, "dequantize_base_eager", Phase::backward), 0.0);
  EXPECT_EQ(sum_bytes(none.ops, "dequantize_base", Phase::forward), 0.0) << "not bitsandbytes' kernel as well";
  double kernels = 0, saved = 0;
  for (const StepOp& o : none.ops) {
    const auto* m = std::get_if<MemoryOp>(&o.op);
    if (m == nullptr || std::strcmp(m->name, "dequantize_base_eager") != 0 || o.scope != Scope::layer) continue;
    kernels += o.count;
    saved += o.saved;
  }
  // Attention: the fused QKV and the output projection, 7 kernels each.
  EXPECT_DOUBLE_EQ(kernels, 2 * 7.0);
  const ModelSpec m = small_llama();
  EXPECT_NEAR(saved, 2.0 * (m.attention_params() - 2.0 * m.hidden), 1.0);
  // Full recomputation unpacks again before backward and keeps the copy only while recomputing.
  const StepOps full = build_step_ops(small_llama(), job, layout(1, 1, 1, 1, Recompute::full),
                                      cluster_of(test::h100_sxm(), 1));
  EXPECT_NEAR(sum_bytes(full.ops, "dequantize_base_eager", Phase::recompute), 22.5 * N_lin, 1.0);
  EXPECT_EQ(sum_bytes(full.ops, "dequantize_base_eager", Phase::backward), 0.0);
}

TEST(Finetune, LoraModelFlopsPerTokenMatchNemosPublishedFigures) {
  // NeMo 24.07 performance summary, "Finetuning" table (github NVIDIA/NeMo
  // docs/source/performance/performance_summary.md @070a0bb): LoRA on Llama 2 7B at 25,206 tokens/s
  // and 673 model TFLOP/s per GPU = 26.7 GFLOP per token; Llama 2 70B at 2,557 and 705 = 275.7.
  // NeMo's LoRA (nemo/collections/llm/peft/lora.py @0044d77) adapts every linear at dim 32; its
  // data is SQuAD packed to 4096 with each sample's own attention, so the attention term is small:
  // compare the linear layers (frozen: forward and input gradients) plus the adapters, 4 N + 6 N_a
  // per token. Tolerance 2%: NeMo's own formula counts the model slightly differently (it is 2/3
  // of its SFT formula), and the packed documents' attention adds a little on its side.
  struct Case {
    ModelSpec m;
    double nemo_gflop_per_token;
  };
  const Case cases[] = {
      {{.name = "llama2-7b", .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 32, .ffn_hidden = 11008,
        .vocab = 32000, .seq_len = 4096, .gated_ffn = true, .rmsnorm = true, .rope = true},
       673e12 / 25206 / 1e9},
      {{.name = "llama2-70b", .layers = 80, .hidden = 8192, .heads = 64, .kv_heads = 8, .ffn_hidden = 28672,
        .vocab = 32000, .seq_len = 4096, .gated_ffn = true, .rmsnorm = true, .rope = true},
       705e12 / 2557 / 1e9},
  };
  for (const Case& c : cases) {
    TrainingJob job = tuned_job(TuneMethod::lora, 32);
    job.global_batch = 1;
    const StepOps ops = build_step_ops(c.m, job, layout(1, 1, 1, 1, Recompute::none), cluster_of(test::h100_sxm(), 1));
    double flops = 0;
    for (const StepOp& o : ops.ops) {
      if (o.role == OpRole::linear || o.role == OpRole::adapter) flops += (o.phase == Phase::recompute ? 0.0 : o.flops);
    }
    // The op list counts per layer once: scale the layer scopes by the layer count.
    double per_layer = 0;
    for (const StepOp& o : ops.ops) {
      if ((o.role == OpRole::linear || o.role == OpRole::adapter) && o.scope != Scope::output) per_layer += o.flops;
    }
    const double total = (flops - per_layer) + per_layer * c.m.layers;
    const double per_token = total / c.m.seq_len / 1e9;
    EXPECT_NEAR(per_token, c.nemo_gflop_per_token, 0.02 * c.nemo_gflop_per_token) << c.m.name;
    // And it is 4N + 6 N_a within the embedding lookup's share (no GEMM): 4 (N - V h) + 6 N_a.
    const double N = c.m.total_params(), Na = lora_params(c.m, job.finetune);
    EXPECT_NEAR(per_token * 1e9, 4.0 * (N - c.m.embedding_params()) + 6.0 * Na, 0.001 * per_token * 1e9) << c.m.name;
  }
}

TEST(Finetune, TrainedParametersAloneHaveGradientsOptimizerStateAndDataParallelBytes) {
  // LoRA on 8 GPUs of data parallelism: the GPU holds every base weight in bf16 (2 bytes) and the
  // adapters; gradients (fp32: Megatron's bf16 default) and Adam's 12 bytes only for the adapters;
  // the DP all-reduce moves the adapters' fp32 gradients.
  const ModelSpec m = small_llama(4);
  const TrainingJob job = tuned_job(TuneMethod::lora);
  const Parallelism p = layout(1, 1, 8, 1, Recompute::none);
  const double Na = lora_params(m, job.finetune);
  EXPECT_DOUBLE_EQ(Na, 4 * 290816.0);
  EXPECT_DOUBLE_EQ(trainable_params(m, job.finetune), Na);
  const MemoryBreakdown mem = memory_per_gpu(m, job, p, test::h100_sxm(), 1);
  EXPECT_NEAR(mem.weights.base(), 2.0 * (m.total_params() + Na), 1.0);
  EXPECT_NEAR(mem.gradients.base(), 4.0 * Na, 1e-6);
  EXPECT_NEAR(mem.optimizer.base(), 12.0 * Na, 1e-6);
  const StepOps ops = build_step_ops(m, job, p, cluster_of(test::h100_sxm(), 8));
  double dp_bytes = 0;
  for (const StepOp& o : ops.ops) {
    if (const auto* c = std::get_if<CollectiveOp>(&o.op); c && o.scope == Scope::data_parallel) dp_bytes += c->bytes.base();
  }
  EXPECT_NEAR(dp_bytes, 4.0 * Na, 1e-6);
  // QLoRA: the layers' linear weights at 0.51587 bytes, norms, embeddings and output in bf16, plus
  // the 16-bit copy of the largest matrix being dequantised (gate and up: 2 * 1024 * 2816 weights).
  const TrainingJob qjob = tuned_job(TuneMethod::qlora);
  const MemoryBreakdown qmem = memory_per_gpu(m, qjob, p, test::h100_sxm(), 1);
  const double linear = m.layers * (m.attention_params() - 2.0 * m.hidden + m.dense_ffn_params());
  const double rest = m.total_params() - linear;
  const double expected = qjob.finetune.quantized_bytes_per_param() * linear + 2.0 * (rest + Na) + 2.0 * 2 * 1024 * 2816;
  EXPECT_NEAR(qmem.weights.base(), expected, 1e-3 * expected);
}

TEST(Finetune, FullSftWithFrozenEmbeddingsOrLayersTrainsTheRest) {
  const ModelSpec m = small_llama(4);
  FinetuneSpec f;
  f.freeze_embeddings = true;
  EXPECT_DOUBLE_EQ(trainable_params(m, f), m.total_params() - m.embedding_params() - m.output_params());
  f.freeze_embeddings = false;
  f.frozen_layers = 1;
  EXPECT_DOUBLE_EQ(f.trained_layer_share(m.layers), 0.75);
  TrainingJob job = test::job_of(8, 1e9);
  job.finetune = f;
  const StepOps ops = build_step_ops(m, job, layout(1, 1, 1, 1, Recompute::none), cluster_of(test::h100_sxm(), 1));
  // A quarter of the layers' weight gradients are skipped (averaged over the layers).
  for (const StepOp& o : ops.ops) {
    if (const auto* g = std::get_if<GemmOp>(&o.op); g && std::strcmp(g->name, "qkv_wgrad") == 0) {
      EXPECT_DOUBLE_EQ(o.count, 0.75);
    }
  }
}

TEST(Finetune, PackedDocumentsMaskedApartShrinkTheAttentionSquare) {
  // Documents of one length l = 128 packed into S = 512 and masked apart: each computes its own
  // causal l x l triangle, S l / 2 of the S x S square: work fraction l / (2 S) = 1/8.
  ModelSpec m = small_llama();
  TrainingJob job = tuned_job(TuneMethod::full);
  job.attention_tokens = 128;
  const StepOps ops = build_step_ops(m, job, layout(1, 1, 1, 1, Recompute::none), cluster_of(test::h100_sxm(), 1));
  for (const StepOp& o : ops.ops) {
    if (o.role == OpRole::attention_core && o.phase == Phase::forward) { EXPECT_DOUBLE_EQ(o.count, 0.125); }
  }
  // Model FLOPs count each document's full square: 2 * T * l * heads * d per GEMM.
  EXPECT_DOUBLE_EQ(sum_flops(ops.ops, Scope::layer, OpRole::attention_core, Phase::forward),
                   2.0 * (2.0 * 512 * 128 * 8 * 128));
}

TEST(Finetune, UnpackedSamplesOfVaryingLengthPayTheMeanSquare) {
  // Attention is quadratic in each sequence's length, so sequences of varying length cost
  // E[L^2] / 2 per sequence, not E[L]^2 / 2 (Jensen). Log-normal lengths through mean 600 and
  // p95 2000 (sigma = 1.645 - sqrt(1.645^2 - 2 ln(10/3)) = 0.836), one sample per micro-batch,
  // truncation far away: E[L^2] / E[L] = mean exp(sigma^2) = 600 x 2.01 = 1,206 keys per query.
  FinetuneData d;
  d.tokens = 1e9;
  d.epochs = 1;
  d.packing = false;
  d.mean_sample_tokens = 600;
  d.p95_sample_tokens = 2000;
  const double z = 1.6448536269514722;
  const double sigma = z - std::sqrt(z * z - 2.0 * std::log(2000.0 / 600.0));
  const FinetuneShape s = resolve_finetune(d, 1 << 20, 1);
  EXPECT_EQ(s.step_tokens, 600);
  // The midpoint rule's 1e-6 relative accuracy, twice (two moments).
  EXPECT_NEAR(s.attention_tokens, 600.0 * std::exp(sigma * sigma), 600.0 * std::exp(sigma * sigma) * 1e-5);
  // Equal lengths (the mean alone) and padding to the maximum keep the plain square.
  FinetuneData equal = d;
  equal.p95_sample_tokens = 0;
  EXPECT_EQ(resolve_finetune(equal, 4096, 1).attention_tokens, 0.0);
  FinetuneData padded = d;
  padded.pad_to_max = true;
  EXPECT_EQ(resolve_finetune(padded, 4096, 1).attention_tokens, 0.0);

  // The op list: sequences of S = 512 tokens whose squares average S x 1,024 (a = 2 S): the
  // attention core runs twice the causal half of the S x S square, and the model FLOPs count
  // a keys per query.
  ModelSpec m = small_llama();
  TrainingJob job = tuned_job(TuneMethod::full);
  job.attention_tokens = 1024;
  const StepOps ops = build_step_ops(m, job, layout(1, 1, 1, 1, Recompute::none), cluster_of(test::h100_sxm(), 1));
  for (const StepOp& o : ops.ops) {
    if (o.role == OpRole::attention_core && o.phase == Phase::forward) { EXPECT_DOUBLE_EQ(o.count, 1.0); }
  }
  EXPECT_DOUBLE_EQ(sum_flops(ops.ops, Scope::layer, OpRole::attention_core, Phase::forward),
                   2.0 * (2.0 * 512 * 1024 * 8 * 128));
}

TEST(Finetune, DatasetResolution) {
  FinetuneData d;
  d.tokens = 2e9;
  d.epochs = 3;
  // Packed: every token processed once per epoch, no padding.
  FinetuneShape s = resolve_finetune(d, 4096, 4);
  EXPECT_EQ(s.step_tokens, 4096);
  EXPECT_DOUBLE_EQ(s.processed_tokens, 6e9);
  EXPECT_DOUBLE_EQ(s.useful_share, 1.0);
  // Unpacked, equal lengths (mean only): no padding, sequences of the mean length.
  d.packing = false;
  d.mean_sample_tokens = 600;
  s = resolve_finetune(d, 4096, 4);
  EXPECT_EQ(s.step_tokens, 600);
  EXPECT_NEAR(s.processed_tokens, 6e9, 1e-6 * 6e9);
  // Padded to max: every sample a 4096-token sequence.
  d.pad_to_max = true;
  s = resolve_finetune(d, 4096, 4);
  EXPECT_EQ(s.step_tokens, 4096);
  EXPECT_NEAR(s.processed_tokens, 6e9 / 600 * 4096, 1.0);
  EXPECT_NEAR(s.useful_share, 600.0 / 4096, 1e-12);
  // Log-normal lengths through mean 600 and p95 2000, padded to the longest of 2: for two iid
  // log-normals E[max] = 2 E[X] Phi(sigma / sqrt 2) (the max of two is their sum minus the min).
  // sigma from ln(2000/600) = 1.645 sigma - sigma^2/2: sigma = 1.645 - sqrt(1.645^2 - 2 ln(10/3)).
  d.pad_to_max = false;
  d.p95_sample_tokens = 2000;
  const double z = 1.6448536269514722;
  const double sigma = z - std::sqrt(z * z - 2.0 * std::log(2000.0 / 600.0));
  const double emax = 2.0 * 600.0 * 0.5 * std::erfc(-(sigma / std::sqrt(2.0)) / std::sqrt(2.0));
  s = resolve_finetune(d, 1 << 20, 2);  // a cap far above every sample: no truncation
  EXPECT_NEAR(s.step_tokens, emax, 1.0);  // rounded to whole tokens
  // Document masks over packed data: E[l^2]/E[l] = mean exp(sigma^2).
  d.packing = true;
  d.document_mask = true;
  s = resolve_finetune(d, 4096, 1);
  EXPECT_NEAR(s.attention_tokens, 600.0 * std::exp(sigma * sigma), 1e-9);
}

// Llama 3 8B (meta-llama/Meta-Llama-3-8B config.json: 32 layers, hidden 4096, 32 heads, 8 KV
// heads, SwiGLU 14336, vocabulary 128256), LoRA rank 8 on every linear, 2,048 tokens.
Scenario lora_llama3_8b() {
  const ModelSpec m{.name = "llama3-8b", .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8,
                    .ffn_hidden = 14336, .vocab = 128256, .seq_len = 2048, .gated_ffn = true, .rmsnorm = true,
                    .rope = true};
  Scenario sc = test::scenario_of(m, tuned_job(TuneMethod::lora, 8), cluster_of(test::h100_sxm(), 8));
  sc.training.global_batch = 64;
  sc.workload.kind = WorkloadKind::finetune;
  return sc;
}

const Finding* lora_finding(const Estimate& e) {
  for (const Finding& f : e.findings) {
    if (f.code == FindingCode::lora_adapters_cost_more_than_skipped_gradients) return &f;
  }
  return nullptr;
}

TEST(Finetune, LoraSlowerThanFullFineTuningOnWideTensorParallelismSaysWhy) {
  // tp 8 with sequence parallelism, 2 sequences per micro-batch: the base GEMMs are split 8 ways,
  // the adapters' passes over the gathered 4,096 x 4,096 activations are not (a column-parallel
  // adapter's input-gradient add alone moves 3 x 4096 x 4096 x 2 bytes = 100.7 MB), so the
  // adapters cost more than the weight gradients LoRA skips and the step is slower than full SFT.
  const Scenario sc = lora_llama3_8b();
  const DatasheetCost cost(sc.cluster);
  const Parallelism wide = layout(8, 1, 1, 2, Recompute::none, true);
  const Estimate e = evaluate_and_explain(sc, wide, cost);
  Scenario full = sc;
  full.training.finetune.method = TuneMethod::full;
  const Estimate f = evaluate(full, wide, cost);
  ASSERT_GT(e.step.time.base(), f.step.time.base());
  const Finding* why = lora_finding(e);
  ASSERT_NE(why, nullptr);
  EXPECT_EQ(why->field, "workload.method");
  EXPECT_DOUBLE_EQ(why->number("lora_step_s"), e.step.time.base());
  EXPECT_DOUBLE_EQ(why->number("full_step_s"), f.step.time.base());
  EXPECT_GT(why->number("adapter_s"), why->number("skipped_s"));
  EXPECT_GT(why->number("skipped_s"), 0.0);
  EXPECT_EQ(why->number("tp"), 8);
  EXPECT_EQ(why->number("rank"), 8);
  // evaluate() alone (a search's candidates) does not pay for the comparison.
  EXPECT_EQ(lora_finding(evaluate(sc, wide, cost)), nullptr);

  // tp 1, data parallel 8: the base GEMMs are whole, their weight gradients outweigh the adapters,
  // LoRA is faster and nothing is said.
  const Parallelism narrow = layout(1, 1, 8, 2, Recompute::full);
  const Estimate n = evaluate_and_explain(sc, narrow, cost);
  EXPECT_LT(n.step.time.base(), evaluate(full, narrow, cost).step.time.base());
  EXPECT_EQ(lora_finding(n), nullptr);
}

TEST(Finetune, ResolveWorkloadSetsTheStepAndTheTokens) {
  Scenario sc;
  sc.model = small_llama();
  sc.workload.kind = WorkloadKind::finetune;
  sc.workload.dataset.tokens = 1e8;
  sc.workload.dataset.epochs = 2;
  resolve_workload(sc, 1);
  EXPECT_DOUBLE_EQ(sc.training.tokens, 2e8);
  EXPECT_EQ(sc.model.seq_len, 512);
  // Pre-training is left alone.
  Scenario pre;
  pre.model = small_llama();
  pre.training.tokens = 5;
  resolve_workload(pre, 1);
  EXPECT_DOUBLE_EQ(pre.training.tokens, 5);
}

}  // namespace
}  // namespace capplan::sim
