// SPDX-License-Identifier: Apache-2.0
// Fine-tuning (workload.kind "finetune"): what the step trains, how it stores what it does not, and
// the data it runs over. The op list (sim/src/lowering/) reads FinetuneSpec through TrainingJob; the
// dataset resolves to the step's sequence length and the tokens it processes (resolve_finetune).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace capplan::sim {

struct ModelSpec;

// full: every weight trained (SFT), unless frozen below; lora: the base frozen, low-rank adapters
// trained (Hu et al. 2021, arXiv:2106.09685); qlora: lora over a 4-bit base (Dettmers et al. 2023,
// arXiv:2305.14314), dequantised to 16 bits for every GEMM that reads it.
enum class TuneMethod { full, lora, qlora };
const char* to_string(TuneMethod m);
std::optional<TuneMethod> tune_method_from_string(const std::string& s);

// The linear layers an adapter can attach to, by the names Hugging Face PEFT gives a Llama-style
// model's modules (Megatron-Core fuses q, k, v into linear_qkv and gate, up into linear_fc1; an
// adapter on the fused module is one on each of its parts). MLA's projections count as q (the
// query path) and k, v (the latent KV path); routed experts' projections as gate, up and down.
enum LoraTarget : unsigned {
  lora_q = 1u << 0,
  lora_k = 1u << 1,
  lora_v = 1u << 2,
  lora_o = 1u << 3,
  lora_gate = 1u << 4,
  lora_up = 1u << 5,
  lora_down = 1u << 6,
};
constexpr unsigned kLoraAttention = lora_q | lora_k | lora_v | lora_o;
constexpr unsigned kLoraAllLinear = kLoraAttention | lora_gate | lora_up | lora_down;
const char* lora_target_name(LoraTarget t);
std::optional<LoraTarget> lora_target_from_string(const std::string& s);

// How the frozen base weights are stored. same: in the training precision (bf16, or FP8's copies);
// nf4: bitsandbytes NormalFloat4 with one fp32 absmax per 64 weights (Dettmers et al. 2023 Sec. 3),
// or with double quantisation an 8-bit absmax plus one fp32 per 256 of those (0.127 bits per
// weight, Sec. 3 "Double Quantization"); int4: GPTQ/AWQ 4-bit with an fp16 scale and a 4-bit zero
// per group of 128 (the AutoGPTQ and AWQ defaults).
enum class BaseFormat { same, nf4, int4 };
const char* to_string(BaseFormat f);
std::optional<BaseFormat> base_format_from_string(const std::string& s);

struct StackSupport;

// The stack's support narrowed by the method. QLoRA's frozen base is bitsandbytes' Params4bit:
// each weight is quantised whole, with its absmax blocks, on the device that holds it
// (bitsandbytes nn.Linear4bit); neither it nor PEFT's LoRA layers over it have a tensor-parallel
// split (peft/tuners/lora/bnb.py wraps the whole Linear4bit), so QLoRA runs without tensor
// (and so sequence) parallelism in every stack. Data parallelism, ZeRO / FSDP sharding
// (bnb_4bit_quant_storage) and pipelining whole layers are unaffected.
StackSupport stack_support(StackSupport recipe, TuneMethod method);

struct FinetuneSpec {
  TuneMethod method = TuneMethod::full;
  int lora_rank = 16;                   // PEFT's LoraConfig default is 8; recipes set their own
  unsigned lora_targets = kLoraAllLinear;
  // LoRA: the embedding and output layer are trained as well (PEFT modules_to_save; Qwen's
  // finetune.py does so when new special tokens need learning).
  bool train_embeddings = false;
  // Full SFT: the embedding and output layer stay frozen.
  bool freeze_embeddings = false;
  // Full SFT: the first this many layers stay frozen (their weights get no gradient).
  int frozen_layers = 0;
  // Empty: nf4 for qlora, same otherwise.
  std::optional<BaseFormat> base_format;
  bool double_quant = true;  // QLoRA's default (bnb_4bit_use_double_quant in its scripts)

  bool adapters() const { return method != TuneMethod::full; }
  BaseFormat base() const { return base_format.value_or(method == TuneMethod::qlora ? BaseFormat::nf4 : BaseFormat::same); }
  bool quantized_base() const { return base() != BaseFormat::same; }
  // Bytes per weight of a quantised frozen matrix (0 when the base is kept in the training
  // precision): 4 bits plus the block scales.
  double quantized_bytes_per_param() const;
  // Whether a linear layer with adapter target bits `targets` carries an adapter.
  bool adapted(unsigned targets) const { return adapters() && targets != 0 && (lora_targets & targets) == targets; }
  // Share of the layers whose weights are trained (1 unless full SFT freezes the first layers).
  double trained_layer_share(int layers) const;
  bool trains_embeddings() const { return adapters() ? train_embeddings : !freeze_embeddings; }
};

// The data a fine-tuning job runs over (workload.dataset).
// Sequences are packed (documents concatenated up to the model's seq_len; Krell et al. 2021,
// arXiv:2107.02027) or not: then each sample is one sequence, padded to the longest sample of
// its micro-batch (Hugging Face's DataCollatorWithPadding; `pad_to_max`: to seq_len).
struct FinetuneData {
  double tokens = 0;              // dataset tokens of one epoch (the samples' real tokens)
  double epochs = 1;
  double mean_sample_tokens = 0;  // 0: unknown (packed data then needs none; unpacked needs it)
  double p95_sample_tokens = 0;   // 0: unknown
  bool packing = true;
  bool pad_to_max = false;        // unpacked: pad every sample to seq_len
  // Packed sequences attend only within their documents (Megatron-Core's packed THD sequences with
  // cu_seqlens, flash-attention varlen); false: over the whole packed sequence (plain
  // concatenation, as Hugging Face Trainer packs without a document-aware collator).
  bool document_mask = false;
};

// The dataset resolved against the model's maximum sequence length and the micro-batch.
struct FinetuneShape {
  int step_tokens = 0;        // tokens of one sequence as the step runs it (the op list's seq_len)
  int max_tokens = 0;         // the sequence length samples are truncated at (the model's seq_len)
  int micro_batch = 1;        // the micro-batch the padding was resolved at
  double useful_share = 1;    // real tokens / processed tokens (1 - padding waste)
  double processed_tokens = 0;  // tokens × epochs / useful_share
  // Keys each query attends over on average, E[l^2]/E[l] of the sequences attention runs over
  // (0: the whole sequence): packed documents masked apart (below step_tokens), or unpacked
  // samples of varying padded length (above it: a square grows faster than its side).
  double attention_tokens = 0;
};
// Sample lengths follow a log-normal through the mean and p95 (the usual shape of SFT sample
// lengths); with the mean alone they are taken as equal. Contract: data.tokens > 0, seq_len > 0.
FinetuneShape resolve_finetune(const FinetuneData& data, int seq_len, int micro_batch);

// Parameters of the adapters of one transformer layer (dense FFN or MoE FFN) and of the whole
// model: r (k + n) per adapted linear of k inputs and n outputs.
double lora_attention_params(const ModelSpec& m, const FinetuneSpec& f);
double lora_dense_ffn_params(const ModelSpec& m, const FinetuneSpec& f);
double lora_moe_ffn_params(const ModelSpec& m, const FinetuneSpec& f);
double lora_params(const ModelSpec& m, const FinetuneSpec& f);
// Parameters the job trains (adapters, or the unfrozen base weights, plus embeddings if trained).
double trainable_params(const ModelSpec& m, const FinetuneSpec& f);

}  // namespace capplan::sim
