// SPDX-License-Identifier: Apache-2.0
// Every framework recipe default (data/frameworks.json) against the value its source gives; the
// comment above each assertion is the source the value was read from. A null default (no such
// default, or not read) is an empty optional: capplan's own default applies.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "capplan/data/catalog.hpp"
#include "capplan/data/scenario_io.hpp"
#include "test_support.hpp"

namespace capplan::data {
namespace {

using sim::Fp8Recipe;
using sim::Framework;
using sim::LossKernel;
using sim::Recompute;
using test::catalogs_with;
using test::real_catalogs;
using test::write_file;

const sim::FrameworkRecipe& recipe(const std::string& id) {
  const auto* e = real_catalogs().find_framework(id);
  if (e == nullptr) {
    ADD_FAILURE() << "no recipe '" << id << "' in data/frameworks.json";
    static const sim::FrameworkRecipe kNone;
    return kNone;
  }
  return e->recipe;
}


TEST(FrameworkRecipe, MegatronDefaultsMatchTheirSources) {
  const auto& r = recipe("megatron");
  // capplan docs/model.md, section 1 (training.framework "megatron" before recipes were data)
  EXPECT_EQ(r.kernels, Framework::megatron);
  // not set: capplan's default for fused kernels (fused)
  EXPECT_FALSE(r.loss_kernel.has_value());
  // not set: capplan's default (fp32 except fp16)
  EXPECT_FALSE(r.grad_reduce_in_fp32_bf16.has_value());
  EXPECT_FALSE(r.grad_reduce_in_fp32_fp16.has_value());
  EXPECT_FALSE(r.grad_reduce_in_fp32_fp8.has_value());
  // not set: capplan's default (overlapped)
  EXPECT_FALSE(r.overlap_dp_comm.has_value());
  // not set: capplan's default (off)
  EXPECT_FALSE(r.tp_comm_overlap.has_value());
  // not set: searched
  EXPECT_FALSE(r.recompute.has_value());
  // not set: capplan's default (off)
  EXPECT_FALSE(r.fp8_param_gather.has_value());
  // not modelled
  EXPECT_FALSE(r.cuda_graphs.has_value());
}

TEST(FrameworkRecipe, PytorchDefaultsMatchTheirSources) {
  const auto& r = recipe("pytorch");
  // capplan docs/model.md, section 1 (training.framework "pytorch" before recipes were data)
  EXPECT_EQ(r.kernels, Framework::pytorch);
  // not set: capplan's default for eager kernels (eager)
  EXPECT_FALSE(r.loss_kernel.has_value());
  // not set: capplan's default (fp32 except fp16)
  EXPECT_FALSE(r.grad_reduce_in_fp32_bf16.has_value());
  EXPECT_FALSE(r.grad_reduce_in_fp32_fp16.has_value());
  EXPECT_FALSE(r.grad_reduce_in_fp32_fp8.has_value());
  // not set: capplan's default (overlapped)
  EXPECT_FALSE(r.overlap_dp_comm.has_value());
  // not set: capplan's default (off)
  EXPECT_FALSE(r.tp_comm_overlap.has_value());
  // not set: searched
  EXPECT_FALSE(r.recompute.has_value());
  // not set: capplan's default (off)
  EXPECT_FALSE(r.fp8_param_gather.has_value());
  // not modelled
  EXPECT_FALSE(r.cuda_graphs.has_value());
}

TEST(FrameworkRecipe, MegatronLmDefaultsMatchTheirSources) {
  const auto& r = recipe("megatron-lm");
  // https://github.com/NVIDIA/Megatron-LM/blob/d98e8a64ddf34856e74b24714e3bedb2f5a39553/megatron/training/arguments.py#L2887-L2905 (--no-masked-softmax-fusion, --no-bias-gelu-fusion, --no-bias-swiglu-fusion, --no-bias-dropout-fusion, --no-rope-fusion: fusions on unless disabled)
  EXPECT_EQ(r.kernels, Framework::megatron);
  // https://github.com/NVIDIA/Megatron-LM/blob/d98e8a64ddf34856e74b24714e3bedb2f5a39553/megatron/core/model_parallel_config.py#L320 (cross_entropy_loss_fusion: bool = False)
  EXPECT_EQ(r.loss_kernel, LossKernel::unfused);
  // https://github.com/NVIDIA/Megatron-LM/blob/d98e8a64ddf34856e74b24714e3bedb2f5a39553/megatron/training/arguments.py#L1204-L1217 (bf16 forces accumulate_allreduce_grads_in_fp32 = True unless --grad-reduce-in-bf16); #L3069 (store_true: off for fp16); FP8 runs on --bf16
  EXPECT_EQ(r.grad_reduce_in_fp32_bf16, true);
  EXPECT_EQ(r.grad_reduce_in_fp32_fp16, false);
  EXPECT_EQ(r.grad_reduce_in_fp32_fp8, true);
  // https://github.com/NVIDIA/Megatron-LM/blob/d98e8a64ddf34856e74b24714e3bedb2f5a39553/megatron/training/arguments.py#L2016 (--fp8-param-gather, store_true)
  EXPECT_EQ(r.fp8_param_gather, false);
  // https://github.com/NVIDIA/Megatron-LM/blob/d98e8a64ddf34856e74b24714e3bedb2f5a39553/megatron/core/transformer/transformer_config.py#L594 (fp8_recipe = "delayed")
  EXPECT_EQ(r.fp8_recipe, Fp8Recipe::delayed);
  // https://github.com/NVIDIA/Megatron-LM/blob/d98e8a64ddf34856e74b24714e3bedb2f5a39553/megatron/training/arguments.py#L3121 (--overlap-grad-reduce, default False)
  EXPECT_EQ(r.overlap_dp_comm, false);
  // https://github.com/NVIDIA/Megatron-LM/blob/d98e8a64ddf34856e74b24714e3bedb2f5a39553/megatron/core/model_parallel_config.py#L265 (tp_comm_overlap: bool = False)
  EXPECT_EQ(r.tp_comm_overlap, false);
  // https://github.com/NVIDIA/Megatron-LM/blob/d98e8a64ddf34856e74b24714e3bedb2f5a39553/megatron/training/arguments.py#L3118 (--no-overlap-p2p-communication, store_false: overlap_p2p_comm on; used by the interleaved schedule)
  EXPECT_EQ(r.pp_comm_overlap, true);
  // https://github.com/NVIDIA/Megatron-LM/blob/d98e8a64ddf34856e74b24714e3bedb2f5a39553/megatron/core/model_parallel_config.py#L343 (overlap_moe_expert_parallel_comm: bool = False)
  EXPECT_EQ(r.ep_comm_overlap, false);
  // https://github.com/NVIDIA/Megatron-LM/blob/d98e8a64ddf34856e74b24714e3bedb2f5a39553/megatron/core/transformer/transformer_config.py#L532 (recompute_granularity = None)
  EXPECT_EQ(r.recompute, Recompute::none);
  // https://github.com/NVIDIA/Megatron-LM/blob/d98e8a64ddf34856e74b24714e3bedb2f5a39553/megatron/core/transformer/transformer_config.py#L151 (attention_backend = AttnBackend.auto: Transformer Engine's fused/flash attention)
  EXPECT_EQ(r.flash_attention, true);
  // argument default 0.1 (transformer_config.py#L188-L191 hidden_dropout, attention_dropout), but the repository's recipes for current models pass 0.0: the model's own setting decides
  EXPECT_FALSE(r.dropout.has_value());
  // https://github.com/NVIDIA/Megatron-LM/blob/d98e8a64ddf34856e74b24714e3bedb2f5a39553/megatron/training/arguments.py#L587-L588 (expert_tensor_parallel_size None -> tensor_model_parallel_size)
  EXPECT_EQ(r.expert_tp_follows_tp, true);
  // https://github.com/NVIDIA/Megatron-LM/blob/d98e8a64ddf34856e74b24714e3bedb2f5a39553/megatron/core/transformer/transformer_config.py#L1075 (cuda_graph_impl = "none")
  EXPECT_EQ(r.cuda_graphs, false);
}

TEST(FrameworkRecipe, MegatronLm285068c8DefaultsMatchTheirSources) {
  const auto& r = recipe("megatron-lm-285068c8");
  // https://github.com/NVIDIA/Megatron-LM/blob/285068c8108e0e8e6538f54fe27c3ee86c5217a2/megatron/arguments.py#L644 (--no-masked-softmax-fusion and the bias-gelu / bias-dropout fusion flags: on unless disabled)
  EXPECT_EQ(r.kernels, Framework::megatron);
  // https://github.com/NVIDIA/Megatron-LM/blob/285068c8108e0e8e6538f54fe27c3ee86c5217a2/megatron/model/gpt_model.py (vocab_parallel_cross_entropy: separate PyTorch ops; no loss fusion option at this commit)
  EXPECT_EQ(r.loss_kernel, LossKernel::unfused);
  // https://github.com/NVIDIA/Megatron-LM/blob/285068c8108e0e8e6538f54fe27c3ee86c5217a2/megatron/arguments.py#L152-L158 (bf16 forces accumulate_allreduce_grads_in_fp32); no FP8 at this commit
  EXPECT_EQ(r.grad_reduce_in_fp32_bf16, true);
  EXPECT_EQ(r.grad_reduce_in_fp32_fp16, false);
  EXPECT_FALSE(r.grad_reduce_in_fp32_fp8.has_value());
  // no FP8 training at this commit
  EXPECT_FALSE(r.fp8_param_gather.has_value());
  // https://github.com/NVIDIA/Megatron-LM/blob/285068c8108e0e8e6538f54fe27c3ee86c5217a2/megatron/arguments.py#L838 (--DDP-impl local: gradients all-reduced after the backward pass in megatron/training.py train_step)
  EXPECT_EQ(r.overlap_dp_comm, false);
  // https://github.com/NVIDIA/Megatron-LM/blob/285068c8108e0e8e6538f54fe27c3ee86c5217a2/megatron/arguments.py (no tensor-parallel communication overlap option at this commit)
  EXPECT_EQ(r.tp_comm_overlap, false);
  // https://github.com/NVIDIA/Megatron-LM/blob/285068c8108e0e8e6538f54fe27c3ee86c5217a2/megatron/arguments.py#L593 (--recompute-granularity default None)
  EXPECT_EQ(r.recompute, Recompute::none);
  // https://github.com/NVIDIA/Megatron-LM/blob/285068c8108e0e8e6538f54fe27c3ee86c5217a2/megatron/arguments.py#L655 (--use-flash-attn, store_true: off by default)
  EXPECT_EQ(r.flash_attention, false);
  // https://github.com/NVIDIA/Megatron-LM/blob/285068c8108e0e8e6538f54fe27c3ee86c5217a2/megatron/arguments.py#L531-L533 (--attention-dropout 0.1, --hidden-dropout 0.1)
  EXPECT_EQ(r.dropout, true);
  // https://github.com/NVIDIA/Megatron-LM/blob/285068c8108e0e8e6538f54fe27c3ee86c5217a2/megatron/arguments.py (no CUDA graph option at this commit)
  EXPECT_EQ(r.cuda_graphs, false);
}

TEST(FrameworkRecipe, MegatronLm2022DefaultsMatchTheirSources) {
  const auto& r = recipe("megatron-lm-2022");
  // https://github.com/NVIDIA/Megatron-LM/blob/bbab79f869/megatron/arguments.py (--no-masked-softmax-fusion, --no-bias-gelu-fusion, --no-bias-dropout-fusion: on unless disabled)
  EXPECT_EQ(r.kernels, Framework::megatron);
  // https://github.com/NVIDIA/Megatron-LM/blob/bbab79f869/megatron/mpu/cross_entropy.py (vocab_parallel_cross_entropy as separate PyTorch ops)
  EXPECT_EQ(r.loss_kernel, LossKernel::unfused);
  // https://github.com/NVIDIA/Megatron-LM/blob/bbab79f869/megatron/arguments.py#L162-L168 (bf16 forces accumulate_allreduce_grads_in_fp32); no FP8
  EXPECT_EQ(r.grad_reduce_in_fp32_bf16, true);
  EXPECT_EQ(r.grad_reduce_in_fp32_fp16, false);
  EXPECT_FALSE(r.grad_reduce_in_fp32_fp8.has_value());
  // no FP8 training in this version
  EXPECT_FALSE(r.fp8_param_gather.has_value());
  // https://github.com/NVIDIA/Megatron-LM/blob/bbab79f869/megatron/arguments.py#L731 (--DDP-impl local: gradients all-reduced after the backward pass)
  EXPECT_EQ(r.overlap_dp_comm, false);
  // https://github.com/NVIDIA/Megatron-LM/blob/bbab79f869/megatron/arguments.py (no tensor-parallel communication overlap option)
  EXPECT_EQ(r.tp_comm_overlap, false);
  // https://github.com/NVIDIA/Megatron-LM/blob/bbab79f869/megatron/arguments.py#L497 (--recompute-granularity default None)
  EXPECT_EQ(r.recompute, Recompute::none);
  // https://github.com/NVIDIA/Megatron-LM/commit/d693034ecf (FlashAttention integrated 2022-12-08, after this version)
  EXPECT_EQ(r.flash_attention, false);
  // https://github.com/NVIDIA/Megatron-LM/blob/bbab79f869/megatron/arguments.py#L437 (--hidden-dropout 0.1; --attention-dropout 0.1)
  EXPECT_EQ(r.dropout, true);
  // https://github.com/NVIDIA/Megatron-LM/blob/bbab79f869/megatron/arguments.py (no CUDA graph option)
  EXPECT_EQ(r.cuda_graphs, false);
}

TEST(FrameworkRecipe, MegatronLmV2DefaultsMatchTheirSources) {
  const auto& r = recipe("megatron-lm-v2");
  // https://github.com/NVIDIA/Megatron-LM/blob/e269e200649555069454bf78335466f9658b2044/megatron/arguments.py#L419-L427 (--no-masked-softmax-fusion, --no-bias-gelu-fusion, --no-bias-dropout-fusion: on unless disabled)
  EXPECT_EQ(r.kernels, Framework::megatron);
  // https://github.com/NVIDIA/Megatron-LM/blob/e269e200649555069454bf78335466f9658b2044/megatron/mpu/cross_entropy.py (vocab_parallel_cross_entropy as separate PyTorch ops)
  EXPECT_EQ(r.loss_kernel, LossKernel::unfused);
  // https://github.com/NVIDIA/Megatron-LM/blob/e269e200649555069454bf78335466f9658b2044/megatron/arguments.py#L136-L145 (bf16 forces accumulate_allreduce_grads_in_fp32); #L553 (store_true: off for fp16); no FP8
  EXPECT_EQ(r.grad_reduce_in_fp32_bf16, true);
  EXPECT_EQ(r.grad_reduce_in_fp32_fp16, false);
  EXPECT_FALSE(r.grad_reduce_in_fp32_fp8.has_value());
  // no FP8 training in this version
  EXPECT_FALSE(r.fp8_param_gather.has_value());
  // https://github.com/NVIDIA/Megatron-LM/blob/e269e200649555069454bf78335466f9658b2044/megatron/training.py#L365-L369 (DDP-impl local, the default at arguments.py#L578: allreduce_gradients() after the backward pass)
  EXPECT_EQ(r.overlap_dp_comm, false);
  // https://github.com/NVIDIA/Megatron-LM/blob/e269e200649555069454bf78335466f9658b2044/megatron/arguments.py (no tensor-parallel communication overlap option)
  EXPECT_EQ(r.tp_comm_overlap, false);
  // https://github.com/NVIDIA/Megatron-LM/blob/e269e200649555069454bf78335466f9658b2044/megatron/arguments.py#L393 (--checkpoint-activations, store_true)
  EXPECT_EQ(r.recompute, Recompute::none);
  // https://github.com/NVIDIA/Megatron-LM/blob/e269e200649555069454bf78335466f9658b2044/megatron/arguments.py#L393 (only --checkpoint-activations, whole layers; selective recompute came in 2022)
  EXPECT_EQ(r.selective_recompute, false);
  // FlashAttention (Dao et al., arXiv:2205.14135) was published in May 2022, after this version
  EXPECT_EQ(r.flash_attention, false);
  // https://github.com/NVIDIA/Megatron-LM/blob/e269e200649555069454bf78335466f9658b2044/megatron/arguments.py#L341-L343 (--attention-dropout 0.1, --hidden-dropout 0.1)
  EXPECT_EQ(r.dropout, true);
  // https://github.com/NVIDIA/Megatron-LM/blob/e269e200649555069454bf78335466f9658b2044/megatron/arguments.py (no CUDA graph option)
  EXPECT_EQ(r.cuda_graphs, false);
}

TEST(FrameworkRecipe, MegatronLmV1DefaultsMatchTheirSources) {
  const auto& r = recipe("megatron-lm-v1");
  // https://github.com/NVIDIA/Megatron-LM/blob/03d2880923ffeec494cb0ef0cfc3d7234b2bacc7/megatron/model/transformer.py#L21 (apex FusedLayerNorm) and megatron/model/utils.py#L52 (jit-fused GeLU)
  EXPECT_EQ(r.kernels, Framework::megatron);
  // https://github.com/NVIDIA/Megatron-LM/blob/03d2880923ffeec494cb0ef0cfc3d7234b2bacc7/megatron/mpu/cross_entropy.py (vocab_parallel_cross_entropy as separate PyTorch ops)
  EXPECT_EQ(r.loss_kernel, LossKernel::unfused);
  // https://github.com/NVIDIA/Megatron-LM/blob/03d2880923ffeec494cb0ef0cfc3d7234b2bacc7/megatron/training.py#L239 (allreduce_params(fp32_allreduce=args.fp32_allreduce), --fp32-allreduce off by default); fp16 only
  EXPECT_FALSE(r.grad_reduce_in_fp32_bf16.has_value());
  EXPECT_EQ(r.grad_reduce_in_fp32_fp16, false);
  EXPECT_FALSE(r.grad_reduce_in_fp32_fp8.has_value());
  // no FP8 training in this version
  EXPECT_FALSE(r.fp8_param_gather.has_value());
  // https://github.com/NVIDIA/Megatron-LM/blob/03d2880923ffeec494cb0ef0cfc3d7234b2bacc7/megatron/training.py#L236-L240 (DDP-impl local, the default at arguments.py#L285: all-reduce after the backward pass)
  EXPECT_EQ(r.overlap_dp_comm, false);
  // https://github.com/NVIDIA/Megatron-LM/blob/03d2880923ffeec494cb0ef0cfc3d7234b2bacc7/megatron/arguments.py (no tensor-parallel communication overlap option)
  EXPECT_EQ(r.tp_comm_overlap, false);
  // https://github.com/NVIDIA/Megatron-LM/blob/03d2880923ffeec494cb0ef0cfc3d7234b2bacc7/megatron/arguments.py#L159 (--checkpoint-activations, store_true)
  EXPECT_EQ(r.recompute, Recompute::none);
  // https://github.com/NVIDIA/Megatron-LM/blob/03d2880923ffeec494cb0ef0cfc3d7234b2bacc7/megatron/arguments.py#L159 (only --checkpoint-activations, whole layers)
  EXPECT_EQ(r.selective_recompute, false);
  // FlashAttention (Dao et al., arXiv:2205.14135) was published in May 2022, after this version
  EXPECT_EQ(r.flash_attention, false);
  // https://github.com/NVIDIA/Megatron-LM/blob/03d2880923ffeec494cb0ef0cfc3d7234b2bacc7/megatron/arguments.py#L140-L142 (--attention-dropout 0.1, --hidden-dropout 0.1)
  EXPECT_EQ(r.dropout, true);
  // https://github.com/NVIDIA/Megatron-LM/blob/03d2880923ffeec494cb0ef0cfc3d7234b2bacc7/megatron/arguments.py (no CUDA graph option)
  EXPECT_EQ(r.cuda_graphs, false);
}

TEST(FrameworkRecipe, MegascaleDefaultsMatchTheirSources) {
  const auto& r = recipe("megascale");
  // Jiang et al., MegaScale, NSDI'24, Sec. 3.4 (fused LayerNorm and GeLU kernels)
  EXPECT_EQ(r.kernels, Framework::megatron);
  // not published
  EXPECT_FALSE(r.loss_kernel.has_value());
  // not published
  EXPECT_FALSE(r.grad_reduce_in_fp32_bf16.has_value());
  EXPECT_FALSE(r.grad_reduce_in_fp32_fp16.has_value());
  EXPECT_FALSE(r.grad_reduce_in_fp32_fp8.has_value());
  // not published; no FP8 in the paper
  EXPECT_FALSE(r.fp8_param_gather.has_value());
  // Jiang et al., MegaScale, NSDI'24, Sec. 3.2 (data-parallel all-gather and reduce-scatter overlapped with compute)
  EXPECT_EQ(r.overlap_dp_comm, true);
  // Jiang et al., MegaScale, NSDI'24, Sec. 3.2 (tensor/sequence-parallel communication fused with the GEMMs)
  EXPECT_EQ(r.tp_comm_overlap, true);
  // not published
  EXPECT_FALSE(r.recompute.has_value());
  // Jiang et al., MegaScale, NSDI'24, Sec. 3.4 (FlashAttention-2)
  EXPECT_EQ(r.flash_attention, true);
  // not published
  EXPECT_FALSE(r.cuda_graphs.has_value());
}

TEST(FrameworkRecipe, Nemo2DefaultsMatchTheirSources) {
  const auto& r = recipe("nemo-2");
  // https://github.com/NVIDIA/NeMo/blob/8cfedd7203462cb251a914e700e5605444277561/nemo/collections/llm/gpt/model/base.py (GPTConfig: Megatron-Core fused kernels, masked_softmax_fusion and bias fusions on)
  EXPECT_EQ(r.kernels, Framework::megatron);
  // https://github.com/NVIDIA/NeMo/blob/8cfedd7203462cb251a914e700e5605444277561/nemo/collections/llm/gpt/model/base.py#L303 (cross_entropy_loss_fusion: bool = True; Megatron-Core's native implementation)
  EXPECT_EQ(r.loss_kernel, LossKernel::fused);
  // https://github.com/NVIDIA/NeMo/blob/8cfedd7203462cb251a914e700e5605444277561/nemo/collections/llm/recipes/precision/mixed_precision.py#L35 (bf16_mixed: grad_reduce_in_fp32=True), #L52 (fp16_mixed: False); the FP8 plugins start from bf16_mixed
  EXPECT_EQ(r.grad_reduce_in_fp32_bf16, true);
  EXPECT_EQ(r.grad_reduce_in_fp32_fp16, false);
  EXPECT_EQ(r.grad_reduce_in_fp32_fp8, true);
  // https://github.com/NVIDIA/NeMo/blob/8cfedd7203462cb251a914e700e5605444277561/nemo/collections/llm/recipes/precision/mixed_precision.py#L70 (bf16_with_fp8_mixed: fp8_param_gather = True)
  EXPECT_EQ(r.fp8_param_gather, true);
  // https://github.com/NVIDIA/NeMo/blob/8cfedd7203462cb251a914e700e5605444277561/nemo/collections/llm/recipes/precision/mixed_precision.py#L66 (fp8_recipe = "delayed")
  EXPECT_EQ(r.fp8_recipe, Fp8Recipe::delayed);
  // https://github.com/NVIDIA/NeMo/blob/8cfedd7203462cb251a914e700e5605444277561/nemo/collections/llm/recipes/llama3_70b.py#L119-L120 (DistributedDataParallelConfig overlap_grad_reduce=True, overlap_param_gather=True)
  EXPECT_EQ(r.overlap_dp_comm, true);
  // per model recipe (MegatronCommOverlapCallback, tp_comm_overlap None by default: nemo/lightning/pytorch/callbacks/megatron_comm_overlap.py#L44)
  EXPECT_FALSE(r.tp_comm_overlap.has_value());
  // per model recipe
  EXPECT_FALSE(r.recompute.has_value());
  // Megatron-Core attention_backend auto (Transformer Engine fused/flash attention)
  EXPECT_EQ(r.flash_attention, true);
  // Megatron-Core megatron/core/parallel_state.py (expert_tensor_parallel_size None -> tensor_model_parallel_size)
  EXPECT_EQ(r.expert_tp_follows_tp, true);
  // per model recipe
  EXPECT_FALSE(r.cuda_graphs.has_value());
}

TEST(FrameworkRecipe, Nemo2PerfDefaultsMatchTheirSources) {
  const auto& r = recipe("nemo-2-perf");
  // as nemo-2 (GPTConfig on Megatron-Core)
  EXPECT_EQ(r.kernels, Framework::megatron);
  // https://github.com/NVIDIA/NeMo/blob/8cfedd7203462cb251a914e700e5605444277561/nemo/collections/llm/gpt/model/base.py#L303 (cross_entropy_loss_fusion: bool = True)
  EXPECT_EQ(r.loss_kernel, LossKernel::fused);
  // https://github.com/NVIDIA/NeMo/blob/8cfedd7203462cb251a914e700e5605444277561/scripts/performance/helpers.py#L234 (set_precision_configs: recipe.trainer.plugins.grad_reduce_in_fp32 = False)
  EXPECT_EQ(r.grad_reduce_in_fp32_bf16, false);
  EXPECT_EQ(r.grad_reduce_in_fp32_fp16, false);
  EXPECT_EQ(r.grad_reduce_in_fp32_fp8, false);
  // https://github.com/NVIDIA/NeMo/blob/8cfedd7203462cb251a914e700e5605444277561/nemo/collections/llm/recipes/precision/mixed_precision.py#L70 (the FP8 plugins set_precision_configs picks set fp8_param_gather = True)
  EXPECT_EQ(r.fp8_param_gather, true);
  // https://github.com/NVIDIA/NeMo/blob/8cfedd7203462cb251a914e700e5605444277561/scripts/performance/helpers.py (set_precision_configs: fp8_recipe defaults to "ds", delayed scaling)
  EXPECT_EQ(r.fp8_recipe, Fp8Recipe::delayed);
  // https://github.com/NVIDIA/NeMo/blob/8cfedd7203462cb251a914e700e5605444277561/nemo/collections/llm/recipes/llama3_70b.py#L119-L120 (overlap_grad_reduce=True)
  EXPECT_EQ(r.overlap_dp_comm, true);
  // per model recipe
  EXPECT_FALSE(r.tp_comm_overlap.has_value());
  // per model recipe
  EXPECT_FALSE(r.recompute.has_value());
  // Megatron-Core attention_backend auto (Transformer Engine fused/flash attention)
  EXPECT_EQ(r.flash_attention, true);
  // Megatron-Core megatron/core/parallel_state.py (expert_tensor_parallel_size None -> tensor_model_parallel_size)
  EXPECT_EQ(r.expert_tp_follows_tp, true);
  // per model recipe
  EXPECT_FALSE(r.cuda_graphs.has_value());
}

TEST(FrameworkRecipe, Nemo1DefaultsMatchTheirSources) {
  const auto& r = recipe("nemo-1");
  // https://github.com/NVIDIA/NeMo/blob/v1.23.0/examples/nlp/language_modeling/conf/megatron_gpt_config.yaml (Megatron-Core GPT with Transformer Engine)
  EXPECT_EQ(r.kernels, Framework::megatron);
  // not read
  EXPECT_FALSE(r.loss_kernel.has_value());
  // not read for the published performance configs
  EXPECT_FALSE(r.grad_reduce_in_fp32_bf16.has_value());
  EXPECT_FALSE(r.grad_reduce_in_fp32_fp16.has_value());
  EXPECT_FALSE(r.grad_reduce_in_fp32_fp8.has_value());
  // no fp8_params key in v1.23.0's megatron_gpt_config.yaml; the 24.07 performance configs were not read
  EXPECT_FALSE(r.fp8_param_gather.has_value());
  // not read
  EXPECT_FALSE(r.overlap_dp_comm.has_value());
  // https://github.com/NVIDIA/NeMo/blob/v1.23.0/examples/nlp/language_modeling/conf/megatron_gpt_config.yaml#L194 (ub_tp_comm_overlap: False)
  EXPECT_EQ(r.tp_comm_overlap, false);
  // https://github.com/NVIDIA/NeMo/blob/v1.23.0/examples/nlp/language_modeling/conf/megatron_gpt_config.yaml#L155 (activations_checkpoint_granularity: null)
  EXPECT_EQ(r.recompute, Recompute::none);
  // Megatron-Core with Transformer Engine (use_flash_attention 'does nothing when transformer_engine=True', megatron_gpt_config.yaml#L203)
  EXPECT_EQ(r.flash_attention, true);
  // Megatron-Core megatron/core/parallel_state.py (expert_tensor_parallel_size None -> tensor_model_parallel_size)
  EXPECT_EQ(r.expert_tp_follows_tp, true);
  // not read
  EXPECT_FALSE(r.cuda_graphs.has_value());
}

TEST(FrameworkRecipe, MegatronBridgeDefaultsMatchTheirSources) {
  const auto& r = recipe("megatron-bridge");
  // https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/models/gpt_provider.py#L204 (masked_softmax_fusion: bool = True; Megatron-Core fused kernels)
  EXPECT_EQ(r.kernels, Framework::megatron);
  // https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/models/gpt_provider.py#L205 (cross_entropy_loss_fusion: bool = True; Megatron-Core's native implementation)
  EXPECT_EQ(r.loss_kernel, LossKernel::fused);
  // https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/training/mixed_precision.py#L185-L197 (bf16_mixed: grad_reduce_in_fp32=True), #L201-L213 (fp16_mixed: False); FP8 configs start from bf16_mixed
  EXPECT_EQ(r.grad_reduce_in_fp32_bf16, true);
  EXPECT_EQ(r.grad_reduce_in_fp32_fp16, false);
  EXPECT_EQ(r.grad_reduce_in_fp32_fp8, true);
  // https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/training/mixed_precision.py#L231 (bf16_with_fp8_delayed_scaling_mixed: fp8_param_gather = True; also #L302 current scaling, #L264 MXFP8)
  EXPECT_EQ(r.fp8_param_gather, true);
  // https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/training/mixed_precision.py#L227
  EXPECT_EQ(r.fp8_recipe, Fp8Recipe::delayed);
  // https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/recipes/common.py#L82-L84 (DistributedDataParallelConfig overlap_grad_reduce=True, overlap_param_gather=True)
  EXPECT_EQ(r.overlap_dp_comm, true);
  // per model recipe (CommOverlapConfig, src/megatron/bridge/training/comm_overlap.py#L356)
  EXPECT_FALSE(r.tp_comm_overlap.has_value());
  // per model recipe
  EXPECT_FALSE(r.recompute.has_value());
  // Megatron-Core attention_backend auto (Transformer Engine fused/flash attention)
  EXPECT_EQ(r.flash_attention, true);
  // Megatron-Core megatron/core/parallel_state.py (expert_tensor_parallel_size None -> tensor_model_parallel_size)
  EXPECT_EQ(r.expert_tp_follows_tp, true);
  // per model recipe
  EXPECT_FALSE(r.cuda_graphs.has_value());
}

TEST(FrameworkRecipe, MegatronBridgePerfDefaultsMatchTheirSources) {
  const auto& r = recipe("megatron-bridge-perf");
  // as megatron-bridge
  EXPECT_EQ(r.kernels, Framework::megatron);
  // https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/perf_recipes/_common.py#L70 (_benchmark_common: cross_entropy_fusion_impl = "te")
  EXPECT_EQ(r.loss_kernel, LossKernel::te);
  // https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/perf_recipes/_common.py#L72-L74 (mixed_precision.grad_reduce_in_fp32 = False, ddp.grad_reduce_in_fp32 = False) and #L122 (_perf_precision)
  EXPECT_EQ(r.grad_reduce_in_fp32_bf16, false);
  EXPECT_EQ(r.grad_reduce_in_fp32_fp16, false);
  EXPECT_EQ(r.grad_reduce_in_fp32_fp8, false);
  // https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/training/mixed_precision.py#L302 (bf16_with_fp8_current_scaling_mixed, which _perf_precision uses for fp8_cs: fp8_param_gather = True)
  EXPECT_EQ(r.fp8_param_gather, true);
  // chosen per run: https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/perf_recipes/_common.py#L99-L122 (_perf_precision: fp8_cs current scaling, fp8_ds delayed, fp8_mx MXFP8)
  EXPECT_FALSE(r.fp8_recipe.has_value());
  // https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/recipes/common.py#L82-L84 (overlap_grad_reduce=True)
  EXPECT_EQ(r.overlap_dp_comm, true);
  // per model recipe
  EXPECT_FALSE(r.tp_comm_overlap.has_value());
  // per model recipe
  EXPECT_FALSE(r.recompute.has_value());
  // Megatron-Core attention_backend auto (Transformer Engine fused/flash attention)
  EXPECT_EQ(r.flash_attention, true);
  // Megatron-Core megatron/core/parallel_state.py (expert_tensor_parallel_size None -> tensor_model_parallel_size)
  EXPECT_EQ(r.expert_tp_follows_tp, true);
  // per model recipe (cuda_graph_impl set by the recipe or --cuda_graph_impl)
  EXPECT_FALSE(r.cuda_graphs.has_value());
}

TEST(FrameworkRecipe, MegatronBridgePerfGptOssDefaultsMatchTheirSources) {
  const auto& r = recipe("megatron-bridge-perf-gpt-oss");
  // as megatron-bridge
  EXPECT_EQ(r.kernels, Framework::megatron);
  // https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/perf_recipes/_common.py#L70 (_benchmark_common: cross_entropy_fusion_impl = "te")
  EXPECT_EQ(r.loss_kernel, LossKernel::te);
  // https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/perf_recipes/gpt_oss/common.py#L81-L82 (mixed_precision.grad_reduce_in_fp32 = False, ddp.grad_reduce_in_fp32 = False)
  EXPECT_EQ(r.grad_reduce_in_fp32_bf16, false);
  EXPECT_EQ(r.grad_reduce_in_fp32_fp16, false);
  EXPECT_EQ(r.grad_reduce_in_fp32_fp8, false);
  // https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/training/mixed_precision.py#L302 (bf16_with_fp8_current_scaling_mixed: fp8_param_gather = True)
  EXPECT_EQ(r.fp8_param_gather, true);
  // chosen per preset (bf16 and fp8cs presets in src/megatron/bridge/perf_recipes/gpt_oss/h100/gpt_oss.py)
  EXPECT_FALSE(r.fp8_recipe.has_value());
  // https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/recipes/common.py#L82-L84 (overlap_grad_reduce=True)
  EXPECT_EQ(r.overlap_dp_comm, true);
  // per preset
  EXPECT_FALSE(r.tp_comm_overlap.has_value());
  // https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/perf_recipes/gpt_oss/h100/gpt_oss.py#L40 (recompute_granularity = "selective")
  EXPECT_EQ(r.recompute, Recompute::selective);
  // https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/perf_recipes/gpt_oss/h100/gpt_oss.py#L39 (recompute_modules = ["layernorm", "moe_act"])
  EXPECT_EQ(r.recompute_norms, true);
  EXPECT_EQ(r.recompute_moe_act, true);
  // Megatron-Core attention_backend auto (Transformer Engine fused/flash attention)
  EXPECT_EQ(r.flash_attention, true);
  // Megatron-Core megatron/core/parallel_state.py (expert_tensor_parallel_size None -> tensor_model_parallel_size)
  EXPECT_EQ(r.expert_tp_follows_tp, true);
  // per preset
  EXPECT_FALSE(r.cuda_graphs.has_value());
}

TEST(FrameworkRecipe, NemoAutomodelDefaultsMatchTheirSources) {
  const auto& r = recipe("nemo-automodel");
  // NeMo AutoModel: Hugging Face model code on PyTorch; TE kernels opt-in per config (examples/benchmark/configs/*_te_*.yaml: backend rms_norm te, rope_fusion true)
  EXPECT_EQ(r.kernels, Framework::pytorch);
  // not read
  EXPECT_FALSE(r.loss_kernel.has_value());
  // not read
  EXPECT_FALSE(r.grad_reduce_in_fp32_bf16.has_value());
  EXPECT_FALSE(r.grad_reduce_in_fp32_fp16.has_value());
  EXPECT_FALSE(r.grad_reduce_in_fp32_fp8.has_value());
  // not read
  EXPECT_FALSE(r.fp8_param_gather.has_value());
  // not read (FSDP2)
  EXPECT_FALSE(r.overlap_dp_comm.has_value());
  // not read
  EXPECT_FALSE(r.tp_comm_overlap.has_value());
  // not read
  EXPECT_FALSE(r.recompute.has_value());
  // not Megatron-Core: experts are not split by tensor parallelism unless configured
  EXPECT_EQ(r.expert_tp_follows_tp, false);
  // not read
  EXPECT_FALSE(r.cuda_graphs.has_value());
}

TEST(FrameworkRecipe, MegatronDeepspeedDefaultsMatchTheirSources) {
  const auto& r = recipe("megatron-deepspeed");
  // https://github.com/bigscience-workshop/Megatron-DeepSpeed/blob/0f23a729ec5ed6ef46e1fecc8071ac11acdb91c6/megatron/arguments.py (Megatron's masked-softmax and bias fusions, on unless disabled)
  EXPECT_EQ(r.kernels, Framework::megatron);
  // https://github.com/bigscience-workshop/Megatron-DeepSpeed/blob/0f23a729ec5ed6ef46e1fecc8071ac11acdb91c6/megatron/mpu/cross_entropy.py (vocab_parallel_cross_entropy as separate PyTorch ops)
  EXPECT_EQ(r.loss_kernel, LossKernel::unfused);
  // https://github.com/bigscience-workshop/Megatron-DeepSpeed/blob/0f23a729ec5ed6ef46e1fecc8071ac11acdb91c6/megatron/arguments.py#L182 (bf16 forces accumulate_allreduce_grads_in_fp32); no FP8
  EXPECT_EQ(r.grad_reduce_in_fp32_bf16, true);
  EXPECT_EQ(r.grad_reduce_in_fp32_fp16, false);
  EXPECT_FALSE(r.grad_reduce_in_fp32_fp8.has_value());
  // no FP8 training in this version
  EXPECT_FALSE(r.fp8_param_gather.has_value());
  // https://github.com/deepspeedai/DeepSpeed/blob/edaa7221267243c7be7fb49c5d5f5c4fb97b4641/deepspeed/runtime/zero/config.py#L383-L386 (overlap_comm defaults to True only for ZeRO stage 3) and https://github.com/bigscience-workshop/Megatron-DeepSpeed/blob/0f23a729ec5ed6ef46e1fecc8071ac11acdb91c6/megatron/arguments.py#L728 (--DDP-impl local)
  EXPECT_EQ(r.overlap_dp_comm, false);
  // https://github.com/deepspeedai/DeepSpeed/blob/edaa7221267243c7be7fb49c5d5f5c4fb97b4641/deepspeed/runtime/zero/config.py#L383-L386
  EXPECT_EQ(r.overlap_dp_comm_zero3, true);
  // https://github.com/bigscience-workshop/Megatron-DeepSpeed/blob/0f23a729ec5ed6ef46e1fecc8071ac11acdb91c6/megatron/arguments.py (no tensor-parallel communication overlap option)
  EXPECT_EQ(r.tp_comm_overlap, false);
  // https://github.com/bigscience-workshop/Megatron-DeepSpeed/blob/0f23a729ec5ed6ef46e1fecc8071ac11acdb91c6/megatron/arguments.py#L512 (--checkpoint-activations, store_true)
  EXPECT_EQ(r.recompute, Recompute::none);
  // https://github.com/bigscience-workshop/Megatron-DeepSpeed/blob/0f23a729ec5ed6ef46e1fecc8071ac11acdb91c6/megatron/arguments.py#L512 (only --checkpoint-activations, whole layers)
  EXPECT_EQ(r.selective_recompute, false);
  // FlashAttention (Dao et al., arXiv:2205.14135) was published in May 2022, after this version
  EXPECT_EQ(r.flash_attention, false);
  // https://github.com/bigscience-workshop/Megatron-DeepSpeed/blob/0f23a729ec5ed6ef46e1fecc8071ac11acdb91c6/megatron/arguments.py#L460-L462 (--attention-dropout 0.1, --hidden-dropout 0.1)
  EXPECT_EQ(r.dropout, true);
  // https://github.com/bigscience-workshop/Megatron-DeepSpeed/blob/0f23a729ec5ed6ef46e1fecc8071ac11acdb91c6/megatron/arguments.py (no CUDA graph option)
  EXPECT_EQ(r.cuda_graphs, false);
}

TEST(FrameworkRecipe, DeepspeedDefaultsMatchTheirSources) {
  const auto& r = recipe("deepspeed");
  // the wrapped model's code decides
  EXPECT_EQ(r.kernels, Framework::megatron);  // null: capplan default (fused)
  // the wrapped model's code decides
  EXPECT_FALSE(r.loss_kernel.has_value());
  // https://github.com/deepspeedai/DeepSpeed/blob/edaa7221267243c7be7fb49c5d5f5c4fb97b4641/deepspeed/runtime/engine.py#L1405-L1416 (communication_data_type: the training dtype, fp16 or bf16, unless set; COMMUNICATION_DATA_TYPE_DEFAULT = None in deepspeed/runtime/constants.py#L286)
  EXPECT_EQ(r.grad_reduce_in_fp32_bf16, false);
  EXPECT_EQ(r.grad_reduce_in_fp32_fp16, false);
  EXPECT_FALSE(r.grad_reduce_in_fp32_fp8.has_value());
  // not a DeepSpeed default
  EXPECT_FALSE(r.fp8_param_gather.has_value());
  // https://github.com/deepspeedai/DeepSpeed/blob/edaa7221267243c7be7fb49c5d5f5c4fb97b4641/deepspeed/runtime/zero/config.py#L138 and #L383-L386 (overlap_comm None -> True only for stage 3)
  EXPECT_EQ(r.overlap_dp_comm, false);
  // https://github.com/deepspeedai/DeepSpeed/blob/edaa7221267243c7be7fb49c5d5f5c4fb97b4641/deepspeed/runtime/zero/config.py#L383-L386
  EXPECT_EQ(r.overlap_dp_comm_zero3, true);
  // no tensor parallelism of its own
  EXPECT_FALSE(r.tp_comm_overlap.has_value());
  // https://github.com/deepspeedai/DeepSpeed/blob/edaa7221267243c7be7fb49c5d5f5c4fb97b4641/deepspeed/runtime/activation_checkpointing/config.py (activation checkpointing only when the model calls deepspeed.checkpointing)
  EXPECT_EQ(r.recompute, Recompute::none);
  // the wrapped model's code decides
  EXPECT_FALSE(r.flash_attention.has_value());
  // not modelled
  EXPECT_FALSE(r.cuda_graphs.has_value());
}

TEST(FrameworkRecipe, PytorchFsdpDefaultsMatchTheirSources) {
  const auto& r = recipe("pytorch-fsdp");
  // plain PyTorch modules: each element-wise op its own kernel (no compile by default)
  EXPECT_EQ(r.kernels, Framework::pytorch);
  // torch.nn.functional.cross_entropy in the training script
  EXPECT_EQ(r.loss_kernel, LossKernel::eager);
  // MixedPrecision(param_dtype=None, reduce_dtype=None): whatever the user's policy sets (https://github.com/pytorch/pytorch/blob/01d5c2cc8ac53ec6f45d10e2b90f7387df1f1ac4/torch/distributed/fsdp/api.py)
  EXPECT_FALSE(r.grad_reduce_in_fp32_bf16.has_value());
  EXPECT_FALSE(r.grad_reduce_in_fp32_fp16.has_value());
  EXPECT_FALSE(r.grad_reduce_in_fp32_fp8.has_value());
  // FSDP1 has no FP8 all-gather
  EXPECT_EQ(r.fp8_param_gather, false);
  // reduce-scatter issued from post-backward hooks on a separate stream; capplan's default (overlapped)
  EXPECT_FALSE(r.overlap_dp_comm.has_value());
  // no tensor parallelism of its own
  EXPECT_FALSE(r.tp_comm_overlap.has_value());
  // activation checkpointing only where the user wraps modules (torch.distributed.algorithms._checkpoint.checkpoint_wrapper)
  EXPECT_EQ(r.recompute, Recompute::none);
  // not used by FSDP
  EXPECT_EQ(r.cuda_graphs, false);
}

TEST(FrameworkRecipe, PytorchFsdp2DefaultsMatchTheirSources) {
  const auto& r = recipe("pytorch-fsdp2");
  // plain PyTorch modules: each element-wise op its own kernel (no compile by default)
  EXPECT_EQ(r.kernels, Framework::pytorch);
  // torch.nn.functional.cross_entropy in the training script
  EXPECT_EQ(r.loss_kernel, LossKernel::eager);
  // https://github.com/pytorch/pytorch/blob/01d5c2cc8ac53ec6f45d10e2b90f7387df1f1ac4/torch/distributed/fsdp/_fully_shard/_fsdp_api.py#L27-L49 (MixedPrecisionPolicy reduce_dtype None: the original parameter dtype, fp32 for fp32 master weights; bf16 when the model itself is bf16)
  EXPECT_FALSE(r.grad_reduce_in_fp32_bf16.has_value());
  EXPECT_FALSE(r.grad_reduce_in_fp32_fp16.has_value());
  EXPECT_FALSE(r.grad_reduce_in_fp32_fp8.has_value());
  // FP8 all-gather only through torchao's Float8 training with enable_fsdp_float8_all_gather
  EXPECT_EQ(r.fp8_param_gather, false);
  // reduce-scatter on a separate stream overlapping backward; capplan's default (overlapped)
  EXPECT_FALSE(r.overlap_dp_comm.has_value());
  // no tensor parallelism of its own
  EXPECT_FALSE(r.tp_comm_overlap.has_value());
  // activation checkpointing only where the user applies it
  EXPECT_EQ(r.recompute, Recompute::none);
  // not used by FSDP2
  EXPECT_EQ(r.cuda_graphs, false);
}

TEST(FrameworkRecipe, TorchtitanDefaultsMatchTheirSources) {
  const auto& r = recipe("torchtitan");
  // https://github.com/pytorch/torchtitan/blob/f6a9daa13e04f01adde911ab412c617e8dee6a9d/torchtitan/config_manager.py#L399-L403 (--training.compile, store_true: eager unless compiled)
  EXPECT_EQ(r.kernels, Framework::pytorch);
  // https://github.com/pytorch/torchtitan/blob/f6a9daa13e04f01adde911ab412c617e8dee6a9d/train.py (loss_fn: torch.nn.functional.cross_entropy on pred.float())
  EXPECT_EQ(r.loss_kernel, LossKernel::eager);
  // https://github.com/pytorch/torchtitan/blob/f6a9daa13e04f01adde911ab412c617e8dee6a9d/torchtitan/config_manager.py#L388-L396 (--training.mixed_precision_reduce default float32)
  EXPECT_EQ(r.grad_reduce_in_fp32_bf16, true);
  EXPECT_FALSE(r.grad_reduce_in_fp32_fp16.has_value());
  EXPECT_EQ(r.grad_reduce_in_fp32_fp8, true);
  // https://github.com/pytorch/torchtitan/blob/f6a9daa13e04f01adde911ab412c617e8dee6a9d/torchtitan/config_manager.py#L541-L545 (--float8.enable_fsdp_float8_all_gather, store_true)
  EXPECT_EQ(r.fp8_param_gather, false);
  // FSDP2's default; capplan's default (overlapped)
  EXPECT_FALSE(r.overlap_dp_comm.has_value());
  // https://github.com/pytorch/torchtitan/blob/f6a9daa13e04f01adde911ab412c617e8dee6a9d/torchtitan/config_manager.py#L287-L291 (--experimental.enable_async_tensor_parallel, store_true)
  EXPECT_EQ(r.tp_comm_overlap, false);
  // https://github.com/pytorch/torchtitan/blob/f6a9daa13e04f01adde911ab412c617e8dee6a9d/torchtitan/config_manager.py#L515-L528: --activation_checkpoint.mode selective with selective_ac_option "2" (every second layer fully checkpointed), which capplan has no mode for
  EXPECT_FALSE(r.recompute.has_value());
  // torch.nn.functional.scaled_dot_product_attention (flash backend) in torchtitan/models/llama/model.py
  EXPECT_EQ(r.flash_attention, true);
  // not used
  EXPECT_EQ(r.cuda_graphs, false);
}

TEST(FrameworkRecipe, LlmFoundryDefaultsMatchTheirSources) {
  const auto& r = recipe("llm-foundry");
  // llm-foundry MPT modules in plain PyTorch (no compile by default)
  EXPECT_EQ(r.kernels, Framework::pytorch);
  // torch.nn.CrossEntropyLoss in llm-foundry's model classes
  EXPECT_EQ(r.loss_kernel, LossKernel::eager);
  // https://github.com/mosaicml/composer/blob/6405188805a0054b4551ec49e4919c54c971d0e8/composer/utils/parallelism.py#L34 (mixed_precision: str = 'DEFAULT') and composer/distributed/mosaic_parallelism.py#L78-L80 (DEFAULT: reduce_dtype = torch.float32; PURE: the training dtype, #L82-L84)
  EXPECT_EQ(r.grad_reduce_in_fp32_bf16, true);
  EXPECT_EQ(r.grad_reduce_in_fp32_fp16, true);
  EXPECT_EQ(r.grad_reduce_in_fp32_fp8, true);
  // FP8 only through Transformer Engine layers (amp_fp8); parameters stay 16-bit
  EXPECT_EQ(r.fp8_param_gather, false);
  // FSDP's default; capplan's default (overlapped)
  EXPECT_FALSE(r.overlap_dp_comm.has_value());
  // no tensor parallelism by default
  EXPECT_FALSE(r.tp_comm_overlap.has_value());
  // llm-foundry FSDP config activation_checkpointing: false unless set
  EXPECT_EQ(r.recompute, Recompute::none);
  // not used
  EXPECT_EQ(r.cuda_graphs, false);
}

TEST(FrameworkRecipe, FmsFsdp202403DefaultsMatchTheirSources) {
  const auto& r = recipe("fms-fsdp-2024-03");
  // https://github.com/foundation-model-stack/fms-fsdp/blob/3cb16b4f8dc693050a69024ad9e70e842bf7a76b/fms_fsdp/config/training.py#L42 (use_torch_compile: bool = False: eager element-wise kernels)
  EXPECT_EQ(r.kernels, Framework::pytorch);
  // torch.nn.CrossEntropyLoss in fms_fsdp/utils/train_utils.py (outside the compiled model)
  EXPECT_EQ(r.loss_kernel, LossKernel::eager);
  // https://github.com/foundation-model-stack/fms-fsdp/blob/3cb16b4f8dc693050a69024ad9e70e842bf7a76b/fms_fsdp/policies/mixed_precision.py#L11-L15 (bfSixteen: param_dtype, reduce_dtype, buffer_dtype bfloat16) and fms_fsdp/utils/train_utils.py#L150 (mixed_precision True -> bfSixteen)
  EXPECT_EQ(r.grad_reduce_in_fp32_bf16, false);
  EXPECT_EQ(r.grad_reduce_in_fp32_fp16, false);
  EXPECT_FALSE(r.grad_reduce_in_fp32_fp8.has_value());
  // no FP8 in this version
  EXPECT_FALSE(r.fp8_param_gather.has_value());
  // FSDP's default; capplan's default (overlapped)
  EXPECT_FALSE(r.overlap_dp_comm.has_value());
  // no tensor parallelism
  EXPECT_FALSE(r.tp_comm_overlap.has_value());
  // https://github.com/foundation-model-stack/fms-fsdp/blob/3cb16b4f8dc693050a69024ad9e70e842bf7a76b/fms_fsdp/config/training.py#L22 (fsdp_activation_checkpointing: bool = False)
  EXPECT_EQ(r.recompute, Recompute::none);
  // not used
  EXPECT_EQ(r.cuda_graphs, false);
}

TEST(FrameworkRecipe, FmsFsdpDefaultsMatchTheirSources) {
  const auto& r = recipe("fms-fsdp");
  // https://github.com/foundation-model-stack/fms-fsdp/blob/9031328050b05d3d1f3a12ed1c9b637c8c8a43b5/fms_fsdp/config/training.py#L54 (use_torch_compile: bool = True: inductor fuses the element-wise ops)
  EXPECT_EQ(r.kernels, Framework::megatron);
  // torch.nn.CrossEntropyLoss in fms_fsdp/utils/train_utils.py (outside the compiled model)
  EXPECT_EQ(r.loss_kernel, LossKernel::eager);
  // https://github.com/foundation-model-stack/fms-fsdp/blob/9031328050b05d3d1f3a12ed1c9b637c8c8a43b5/fms_fsdp/policies/mixed_precision.py (bfSixteen: param_dtype, reduce_dtype, buffer_dtype bfloat16) and fms_fsdp/utils/train_utils.py#L204 (mixed_precision True -> bfSixteen)
  EXPECT_EQ(r.grad_reduce_in_fp32_bf16, false);
  EXPECT_EQ(r.grad_reduce_in_fp32_fp16, false);
  EXPECT_FALSE(r.grad_reduce_in_fp32_fp8.has_value());
  // no FP8 in this version
  EXPECT_FALSE(r.fp8_param_gather.has_value());
  // FSDP's default; capplan's default (overlapped)
  EXPECT_FALSE(r.overlap_dp_comm.has_value());
  // no tensor parallelism
  EXPECT_FALSE(r.tp_comm_overlap.has_value());
  // https://github.com/foundation-model-stack/fms-fsdp/blob/9031328050b05d3d1f3a12ed1c9b637c8c8a43b5/fms_fsdp/config/training.py#L28 (fsdp_activation_checkpointing: bool = False)
  EXPECT_EQ(r.recompute, Recompute::none);
  // not used
  EXPECT_EQ(r.cuda_graphs, false);
}

TEST(FrameworkRecipe, HfTrainerDefaultsMatchTheirSources) {
  const auto& r = recipe("hf-trainer");
  // Hugging Face modeling code in plain PyTorch (torch_compile and use_liger_kernel off by default in TrainingArguments)
  EXPECT_EQ(r.kernels, Framework::pytorch);
  // https://github.com/huggingface/transformers/blob/0114da07ec0e101b420a923dedeb6032b6ac3a44/src/transformers/loss/loss_utils.py (ForCausalLMLoss: logits.float(), nn.functional.cross_entropy)
  EXPECT_EQ(r.loss_kernel, LossKernel::eager);
  // bf16/fp16 through torch.autocast: gradients in the parameters' dtype, fp32 unless the model is loaded in 16 bits
  EXPECT_FALSE(r.grad_reduce_in_fp32_bf16.has_value());
  EXPECT_FALSE(r.grad_reduce_in_fp32_fp16.has_value());
  EXPECT_FALSE(r.grad_reduce_in_fp32_fp8.has_value());
  // no FP8 all-gather
  EXPECT_EQ(r.fp8_param_gather, false);
  // torch DDP buckets overlap backward; capplan's default (overlapped)
  EXPECT_FALSE(r.overlap_dp_comm.has_value());
  // no tensor parallelism by default
  EXPECT_FALSE(r.tp_comm_overlap.has_value());
  // TrainingArguments.gradient_checkpointing defaults to False
  EXPECT_EQ(r.recompute, Recompute::none);
  // not used
  EXPECT_EQ(r.cuda_graphs, false);
}

TEST(FrameworkCatalog, EveryDefaultHasASourceOrANote) {
  ASSERT_GE(real_catalogs().frameworks.size(), 20u);
  for (const auto& f : real_catalogs().frameworks) {
    for (const auto& d : f.defaults) {
      if (d.value == "null") {
        EXPECT_FALSE(d.note.empty()) << f.recipe.id << "/" << d.key;
      } else {
        EXPECT_FALSE(d.source.empty()) << f.recipe.id << "/" << d.key;
      }
    }
  }
}

TEST(FrameworkCatalog, ADefaultWithoutSourceOrWithAnUnknownKeyIsAnErrorNamingTheField) {
  auto dir = catalogs_with("none", [](nlohmann::json&) {});
  write_file(dir / "frameworks.json", R"({"schema": 1, "frameworks": [{
      "id": "x", "name": "X", "version": "1", "summary": "s",
      "defaults": {"kernels": {"value": "fused"}, "loss_kernel": {"value": null, "note": "n"},
                   "grad_reduce_in_fp32": {"value": {"bf16": true, "fp16": false, "fp8": null}, "source": "s"},
                   "fp8_param_gather": {"value": false, "source": "s"}, "overlap_dp_comm": {"value": null},
                   "tp_comm_overlap": {"value": "yes", "source": "s"}, "recompute": {"value": "none", "source": "s"},
                   "cuda_graphs": {"value": false, "source": "s"}, "cuda_graph": {"value": false, "source": "s"}}}]})");
  auto r = load_catalogs(dir);
  ASSERT_FALSE(r.has_value());
  const std::string all = to_string(r.error());
  EXPECT_NE(all.find("frameworks.json#/frameworks/0/defaults/kernels/source: required"), std::string::npos) << all;
  EXPECT_NE(all.find("frameworks.json#/frameworks/0/defaults/overlap_dp_comm/note: required"), std::string::npos) << all;
  EXPECT_NE(all.find("frameworks.json#/frameworks/0/defaults/tp_comm_overlap/value"), std::string::npos) << all;
  EXPECT_NE(all.find("frameworks.json#/frameworks/0/defaults/cuda_graph: unknown"), std::string::npos) << all;
}

nlohmann::json scenario_with(const nlohmann::json& training_extra) {
  nlohmann::json j = {{"model", {{"preset", "llama3-8b"}}},
                      {"training", {{"tokens", "1T"}, {"global_batch", 512}, {"precision", "bf16"}}},
                      {"cluster", {{"gpu", "h100-sxm-80gb"}, {"gpus", 64}}},
                      {"strategy", {{"tp", 1}, {"pp", 1}, {"dp", 64}, {"micro_batch", 1}}}};
  for (const auto& [k, v] : training_extra.items()) j["training"][k] = v;
  return j;
}

TEST(FrameworkScenario, ARecipeIdSetsItsDefaults) {
  auto r = parse_scenario(scenario_with({{"framework", "megatron-lm"}}), real_catalogs());
  ASSERT_TRUE(r.has_value()) << to_string(r.error());
  const auto& s = r->scenario;
  EXPECT_EQ(s.training.framework_id, "megatron-lm");
  EXPECT_EQ(s.training.framework, sim::Framework::megatron);
  EXPECT_EQ(s.training.loss(), LossKernel::unfused);
  EXPECT_TRUE(s.training.fp32_gradients());
  EXPECT_EQ(s.strategy.overlap_dp_comm, false);
  EXPECT_EQ(s.strategy.tp_comm_overlap, false);
  EXPECT_EQ(s.strategy.recompute, Recompute::none);  // not given in the strategy: the recipe's
}

TEST(FrameworkScenario, ScenarioKeysOverrideTheRecipeFieldByField) {
  auto r = parse_scenario(
      scenario_with({{"framework", "megatron-lm"}, {"loss_kernel", "te"}, {"grad_reduce_in_fp32", false},
                     {"kernels", "eager"}}),
      real_catalogs());
  ASSERT_TRUE(r.has_value()) << to_string(r.error());
  EXPECT_EQ(r->scenario.training.loss(), LossKernel::te);
  EXPECT_FALSE(r->scenario.training.fp32_gradients());
  EXPECT_EQ(r->scenario.training.framework, sim::Framework::pytorch);
  auto j = scenario_with({{"framework", "megatron-lm"}});
  j["strategy"]["overlap_dp_comm"] = true;
  j["strategy"]["recompute"] = "auto";
  auto o = parse_scenario(j, real_catalogs());
  ASSERT_TRUE(o.has_value()) << to_string(o.error());
  EXPECT_EQ(o->scenario.strategy.overlap_dp_comm, true);
  EXPECT_FALSE(o->scenario.strategy.recompute.has_value());  // "auto": searched
}

TEST(FrameworkScenario, LegacyKernelStylesKeepWorkingWithoutACatalogEntry) {
  Catalogs without = real_catalogs();
  without.frameworks.clear();  // as a data folder without frameworks.json
  for (const char* id : {"megatron", "pytorch"}) {
    auto r = parse_scenario(scenario_with({{"framework", id}}), without);
    ASSERT_TRUE(r.has_value()) << to_string(r.error());
    EXPECT_EQ(r->scenario.training.framework_id, id);
    EXPECT_EQ(r->scenario.training.framework,
              std::string(id) == "pytorch" ? sim::Framework::pytorch : sim::Framework::megatron);
    EXPECT_FALSE(r->scenario.training.loss_kernel.has_value());
    EXPECT_FALSE(r->scenario.strategy.overlap_dp_comm.has_value());
  }
}

TEST(FrameworkScenario, UnknownIdNamesTheFieldWithASuggestion) {
  auto r = parse_scenario(scenario_with({{"framework", "megatron-lmm"}}), real_catalogs());
  ASSERT_FALSE(r.has_value());
  const std::string all = to_string(r.error());
  EXPECT_NE(all.find("scenario#/training/framework: unknown framework 'megatron-lmm'; did you mean 'megatron-lm'? "
                     "(known: "),
            std::string::npos)
      << all;
}

TEST(FrameworkScenario, FullCheckpointingOnlyVersionsRejectSelective) {
  auto j = scenario_with({{"framework", "megatron-lm-v2"}});
  j["strategy"]["recompute"] = "selective";
  auto r = parse_scenario(j, real_catalogs());
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(to_string(r.error()).find("/strategy/recompute: framework 'megatron-lm-v2' has no selective recompute"),
            std::string::npos);
}

}  // namespace
}  // namespace capplan::data
