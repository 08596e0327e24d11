// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/workload/workload.hpp"

#include <algorithm>

#include "capplan/sim/workload/framework.hpp"

namespace capplan::sim {

const char* to_string(WorkloadKind k) {
  switch (k) {
    case WorkloadKind::pretrain: return "pretrain";
    case WorkloadKind::finetune: return "finetune";
    case WorkloadKind::serve: return "serve";
  }
  return "?";
}

std::optional<WorkloadKind> workload_kind_from_string(const std::string& s) {
  if (s == "pretrain") return WorkloadKind::pretrain;
  if (s == "finetune") return WorkloadKind::finetune;
  if (s == "serve") return WorkloadKind::serve;
  return std::nullopt;
}

const char* to_string(Framework f) { return f == Framework::pytorch ? "pytorch" : "megatron"; }

FrameworkRecipe kernel_style_recipe(Framework kernels) {
  FrameworkRecipe r;
  r.id = to_string(kernels);
  r.name = kernels == Framework::pytorch ? "eager PyTorch kernels, capplan defaults" : "fused kernels, capplan defaults";
  r.kernels = kernels;
  return r;
}

std::optional<Framework> framework_from_string(const std::string& s) {
  if (s == "megatron") return Framework::megatron;
  if (s == "pytorch") return Framework::pytorch;
  return std::nullopt;
}

const char* to_string(LossKernel k) {
  switch (k) {
    case LossKernel::unfused: return "unfused";
    case LossKernel::fused: return "fused";
    case LossKernel::te: return "te";
    case LossKernel::eager: return "eager";
  }
  return "fused";
}

std::optional<LossKernel> loss_kernel_from_string(const std::string& s) {
  for (LossKernel k : {LossKernel::unfused, LossKernel::fused, LossKernel::te, LossKernel::eager}) {
    if (s == to_string(k)) return k;
  }
  return std::nullopt;
}

const char* to_string(AttentionKernel k) { return k == AttentionKernel::flash1 ? "flash1" : "flash2"; }

std::optional<AttentionKernel> attention_kernel_from_string(const std::string& s) {
  for (AttentionKernel k : {AttentionKernel::flash2, AttentionKernel::flash1}) {
    if (s == to_string(k)) return k;
  }
  return std::nullopt;
}

const char* to_string(Fp8Recipe r) {
  switch (r) {
    case Fp8Recipe::delayed: return "delayed";
    case Fp8Recipe::current: return "current";
    case Fp8Recipe::mxfp8: return "mxfp8";
  }
  return "delayed";
}

std::optional<Fp8Recipe> fp8_recipe_from_string(const std::string& s) {
  for (Fp8Recipe r : {Fp8Recipe::delayed, Fp8Recipe::current, Fp8Recipe::mxfp8}) {
    if (s == to_string(r)) return r;
  }
  return std::nullopt;
}

double fp8_cast_bytes_per_element(Fp8Recipe r) {
  switch (r) {
    case Fp8Recipe::delayed: return 4.0;
    case Fp8Recipe::current: return 6.0;
    case Fp8Recipe::mxfp8: return 4.0 + 2.0 / 32.0;
  }
  return 4.0;
}

double fp8_cast_kernels_per_tensor(Fp8Recipe r) { return r == Fp8Recipe::current ? 3.0 : 1.0; }

bool fp8_casts_fuse_across_tensors(Fp8Recipe r) { return r == Fp8Recipe::delayed; }

LossBytes loss_bytes_per_logit(LossKernel k) {
  switch (k) {
    case LossKernel::unfused: return {6.0 + 4.0 + 8.0 + 8.0 + 4.0 + 8.0, 8.0 + 6.0};
    case LossKernel::fused: return {6.0 + 8.0 + 8.0, 8.0 + 6.0};
    case LossKernel::te: return {2.0 + 2.0 + 2.0, 4.0};
    case LossKernel::eager: return {6.0 + 16.0, 4.0 + 16.0 + 6.0};  // 22 | 26
  }
  return {};
}

int ModelSpec::moe_layer_count() const {
  int n = 0;
  for (int l = 0; l < layers; ++l) n += is_moe_layer(l) ? 1 : 0;
  return n;
}

namespace {
int pattern_count(const std::string& pattern, HybridLayer kind) {
  return static_cast<int>(std::count(pattern.begin(), pattern.end(), static_cast<char>(kind)));
}
}  // namespace

int ModelSpec::attention_layer_count() const {
  return is_hybrid() ? pattern_count(layer_pattern, HybridLayer::attention) : layers;
}

int ModelSpec::dense_ffn_layer_count() const {
  return is_hybrid() ? pattern_count(layer_pattern, HybridLayer::mlp) : layers - moe_layer_count();
}

int ModelSpec::mamba_layer_count() const { return is_hybrid() ? pattern_count(layer_pattern, HybridLayer::mamba) : 0; }

double ModelSpec::ffn_norm_params() const { return is_hybrid() ? static_cast<double>(hidden) : 0.0; }

// Megatron-Core's MambaMixer parameters (mamba_mixer.py @d98e8a6): in_proj (hidden x in_proj_dim),
// conv1d weight and bias over [x, B, C] (conv_dim x (d_conv + 1)), dt_bias, A_log and D per head,
// the grouped RMSNorm's scale (d_inner) and out_proj (d_inner x hidden); plus the layer's pre-norm.
double ModelSpec::mamba_params() const {
  const double h = hidden;
  return h * static_cast<double>(mamba.in_proj_dim()) +
         static_cast<double>(mamba.conv_dim()) * (mamba.conv_kernel + 1.0) + 3.0 * mamba.heads +
         static_cast<double>(mamba.d_inner()) * (1.0 + h) + h;
}

// Weights only (no biases, as in Llama; GPT biases are < 0.1% of the total), plus the two
// norm scales per layer.
double ModelSpec::attention_params() const {
  const double h = hidden;
  const double norms = (is_hybrid() ? 1.0 : 2.0) * h;  // a hybrid's attention layer has its own norm only
  if (attention == Attention::mla) {
    // DeepSeek-V2 Sec. 2.1: Q = W_UQ (norm(W_DQ h)); [c_KV, k_rope] = W_DKV h;
    // [k_nope, v] = W_UKV norm(c_KV); output W_O over heads * v_head_dim.
    const double qk = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
    const double q = mla.q_lora_rank > 0 ? h * mla.q_lora_rank + mla.q_lora_rank + static_cast<double>(mla.q_lora_rank) * heads * qk
                                         : h * heads * qk;
    const double kv = h * (mla.kv_lora_rank + mla.qk_rope_head_dim) + mla.kv_lora_rank +
                      static_cast<double>(mla.kv_lora_rank) * heads * (mla.qk_nope_head_dim + mla.v_head_dim);
    const double out = static_cast<double>(heads) * mla.v_head_dim * h;
    return q + kv + out + norms;
  }
  const double q = static_cast<double>(heads) * head_dim();
  return h * (q + 2.0 * static_cast<double>(kv_dim())) + q * h + norms;  // QKV + output projection
}

double ModelSpec::dense_ffn_params() const {
  return (gated_ffn ? 3.0 : 2.0) * hidden * ffn_hidden + ffn_norm_params();
}

double ModelSpec::expert_params() const { return (gated_ffn ? 3.0 : 2.0) * hidden * moe.expert_ffn_hidden; }

double ModelSpec::moe_ffn_params() const {
  return static_cast<double>(moe.experts) * hidden + (moe.experts + moe.shared_experts) * expert_params() +
         ffn_norm_params();
}

double ModelSpec::moe_active_ffn_params() const {
  return static_cast<double>(moe.experts) * hidden + (moe.top_k + moe.shared_experts) * expert_params() +
         ffn_norm_params();
}

double ModelSpec::layer_params() const { return attention_params() + dense_ffn_params(); }

double ModelSpec::layers_params() const {
  const double moe_layers = moe_layer_count();
  return attention_layer_count() * attention_params() + dense_ffn_layer_count() * dense_ffn_params() +
         moe_layers * moe_ffn_params() + mamba_layer_count() * mamba_params();
}

double ModelSpec::embedding_params() const { return static_cast<double>(vocab) * hidden; }

double ModelSpec::output_params() const { return tied_embeddings ? 0.0 : static_cast<double>(vocab) * hidden; }

double ModelSpec::total_params() const {
  return layers_params() + embedding_params() + output_params() + hidden;  // + final norm
}

double ModelSpec::active_params() const {
  const double moe_layers = moe_layer_count();
  return attention_layer_count() * attention_params() + dense_ffn_layer_count() * dense_ffn_params() +
         moe_layers * moe_active_ffn_params() + mamba_layer_count() * mamba_params() + embedding_params() +
         output_params() + hidden;
}

}  // namespace capplan::sim
