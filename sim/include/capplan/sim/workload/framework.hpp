// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <optional>
#include <string>

#include "capplan/sim/workload/hardware.hpp"
#include "capplan/sim/workload/strategy.hpp"
#include "capplan/sim/workload/workload.hpp"

namespace capplan::sim {

// What a training framework (one version of it) does when the user does not say otherwise: the
// defaults of its arguments, config classes or recipes. data/frameworks.json holds them, each
// with its source; this struct carries the values. An empty optional = the framework has no
// such default, or it is not known: capplan's own default applies (TrainingJob, Parallelism).
struct FrameworkRecipe {
  std::string id;    // kebab-case, as in training.framework
  std::string name;  // display name with the version
  Framework kernels = Framework::megatron;  // fused (Megatron/TE) or eager PyTorch element-wise kernels
  std::optional<LossKernel> loss_kernel;
  std::optional<AttentionKernel> attention_kernel;  // the fused attention kernel's generation
  // Gradients accumulated and reduced in fp32, per training precision (tf32/fp32 always are).
  std::optional<bool> grad_reduce_in_fp32_bf16;
  std::optional<bool> grad_reduce_in_fp32_fp16;
  std::optional<bool> grad_reduce_in_fp32_fp8;
  std::optional<bool> fp8_param_gather;  // FP8 weights and FP8 parameter all-gathers (fp8 only)
  std::optional<bool> master_weights;    // fp32 master weights and optimizer state (TrainingJob::master_weights)
  std::optional<Fp8Recipe> fp8_recipe;
  std::optional<bool> overlap_dp_comm;        // gradient reduction overlapped with backward
  std::optional<bool> overlap_dp_comm_zero3;  // the same with ZeRO-3 / full sharding, where it differs
  std::optional<bool> tp_comm_overlap;
  std::optional<bool> pp_comm_overlap;
  std::optional<bool> ep_comm_overlap;
  std::optional<Recompute> recompute;  // activation recompute when the strategy does not give it
  bool selective_recompute = true;     // false: the version has only full-layer checkpointing
  // Megatron-Core recompute_modules beyond core_attn (Parallelism::recompute_norms, recompute_moe_act).
  std::optional<bool> recompute_norms;
  std::optional<bool> recompute_moe_act;
  std::optional<bool> recompute_moe;
  std::optional<bool> flash_attention;  // fused (flash) attention when the model does not say
  std::optional<bool> dropout;          // dropout kept in training when the model does not say
  // MoE: the expert tensor-parallel size defaults to the tensor-parallel size (Megatron-Core).
  std::optional<bool> expert_tp_follows_tp;
  // CUDA graphs captured by default. Carried for output only: graphs would remove the host time
  // below, and no recipe with graphs has a measured host time yet.
  std::optional<bool> cuda_graphs;
  // Host time to issue one op of capplan's op list (TrainingJob::host_s_per_op), microseconds.
  std::optional<double> host_us_per_op;
  // Pipeline sends and receives batched into one call per neighbour (TrainingJob::pp_p2p_batched).
  std::optional<bool> pp_p2p_batched;
  // A column-parallel linear's input-gradient collective overlaps its weight-gradient GEMM
  // (TrainingJob::tp_async_dgrad).
  std::optional<bool> tp_async_dgrad;
  // ZeRO-3 parameter elements prefetched ahead of use (TrainingJob::zero3_prefetch_params).
  std::optional<double> zero3_prefetch_params;
  // ZeRO-3 gathers once more for the recomputed forward (TrainingJob::zero3_regather_recompute).
  std::optional<bool> zero3_regather_recompute;
  // DeepSpeed ZeRO-3's hook time per layer and pass (TrainingJob::zero3_host_s_per_layer), microseconds.
  std::optional<double> zero3_host_us_per_layer;
  // The ZeRO stage of the recipe's full-parameter fine-tuning script, when the strategy does not
  // give one (Qwen's finetune_ds.sh runs ZeRO-3 on any number of GPUs).
  std::optional<int> zero_full_finetune;
  // Fine-tuning (finetune.hpp): the LoRA rank and target modules when the scenario does not give
  // them, and whether packed sequences attend only within their documents.
  std::optional<int> lora_rank;
  std::optional<unsigned> lora_targets;
  std::optional<bool> packed_document_mask;
  // What the stack can run at all (TP, SP, PP, CP, EP, ZeRO stages, host offload): the planners
  // search only that and a scenario fixing anything else is refused. Empty fields: not stated.
  StackSupport supports;

  std::optional<bool> grad_reduce_in_fp32(Precision p) const {
    switch (p) {
      case Precision::bf16: return grad_reduce_in_fp32_bf16;
      case Precision::fp16: return grad_reduce_in_fp32_fp16;
      case Precision::fp8: return grad_reduce_in_fp32_fp8;
      default: return std::nullopt;  // tf32 / fp32: gradients are fp32 anyway
    }
  }
  // The data-parallel overlap default for a ZeRO stage (nullopt stage: not known yet).
  std::optional<bool> overlap_dp_comm_for(std::optional<int> zero) const {
    if (!overlap_dp_comm_zero3 || *overlap_dp_comm_zero3 == overlap_dp_comm) return overlap_dp_comm;
    if (!zero) return std::nullopt;  // differs by stage and the stage is searched
    return *zero == 3 ? overlap_dp_comm_zero3 : overlap_dp_comm;
  }
};

// The two kernel-style recipes capplan had before recipes were data (training.framework
// "megatron" and "pytorch"): only the kernel style, every other default capplan's own.
FrameworkRecipe kernel_style_recipe(Framework kernels);

}  // namespace capplan::sim
