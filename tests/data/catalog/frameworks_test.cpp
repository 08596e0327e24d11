// SPDX-License-Identifier: Apache-2.0
// Every framework recipe default (data/frameworks.json) against the value its source gives; each
// row of the table defaults() names the source the value was read from. A null default (no such
// default, or not read) is an empty optional: capplan's own default applies.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "capplan/data/catalog.hpp"
#include "capplan/data/scenario_io.hpp"
#include "test_support.hpp"

namespace capplan::data {
namespace {

using sim::AttentionKernel;
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

// A recipe field as the table below reads it: its value, or std::monostate where the recipe leaves
// it null (an empty optional: capplan's own default applies).
using Value = std::variant<std::monostate, bool, double, Framework, LossKernel, Fp8Recipe, Recompute, AttentionKernel>;
constexpr std::monostate kNull;

template <class T>
Value value_of(const std::optional<T>& v) {
  return v ? Value(*v) : Value();
}
template <class T>
Value value_of(const T& v) {
  return Value(v);
}

std::string show(const Value& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return "null";
        } else if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else if constexpr (std::is_same_v<T, double>) {
          return std::to_string(x);
        } else {
          return sim::to_string(x);
        }
      },
      v);
}

struct Field {
  const char* name;
  Value (*read)(const sim::FrameworkRecipe&);
};
template <auto member>
constexpr Field field(const char* name) {
  return {name, [](const sim::FrameworkRecipe& r) { return value_of(r.*member); }};
}

namespace f {
using R = sim::FrameworkRecipe;
constexpr Field kernels = field<&R::kernels>("kernels");
constexpr Field loss_kernel = field<&R::loss_kernel>("loss_kernel");
constexpr Field attention_kernel = field<&R::attention_kernel>("attention_kernel");
constexpr Field grad_reduce_in_fp32_bf16 = field<&R::grad_reduce_in_fp32_bf16>("grad_reduce_in_fp32_bf16");
constexpr Field grad_reduce_in_fp32_fp16 = field<&R::grad_reduce_in_fp32_fp16>("grad_reduce_in_fp32_fp16");
constexpr Field grad_reduce_in_fp32_fp8 = field<&R::grad_reduce_in_fp32_fp8>("grad_reduce_in_fp32_fp8");
constexpr Field fp8_param_gather = field<&R::fp8_param_gather>("fp8_param_gather");
constexpr Field master_weights = field<&R::master_weights>("master_weights");
constexpr Field fp8_recipe = field<&R::fp8_recipe>("fp8_recipe");
constexpr Field overlap_dp_comm = field<&R::overlap_dp_comm>("overlap_dp_comm");
constexpr Field overlap_dp_comm_zero3 = field<&R::overlap_dp_comm_zero3>("overlap_dp_comm_zero3");
constexpr Field tp_comm_overlap = field<&R::tp_comm_overlap>("tp_comm_overlap");
constexpr Field pp_comm_overlap = field<&R::pp_comm_overlap>("pp_comm_overlap");
constexpr Field ep_comm_overlap = field<&R::ep_comm_overlap>("ep_comm_overlap");
constexpr Field recompute = field<&R::recompute>("recompute");
constexpr Field selective_recompute = field<&R::selective_recompute>("selective_recompute");
constexpr Field recompute_norms = field<&R::recompute_norms>("recompute_norms");
constexpr Field recompute_moe_act = field<&R::recompute_moe_act>("recompute_moe_act");
constexpr Field flash_attention = field<&R::flash_attention>("flash_attention");
constexpr Field dropout = field<&R::dropout>("dropout");
constexpr Field expert_tp_follows_tp = field<&R::expert_tp_follows_tp>("expert_tp_follows_tp");
constexpr Field cuda_graphs = field<&R::cuda_graphs>("cuda_graphs");
constexpr Field host_us_per_op = field<&R::host_us_per_op>("host_us_per_op");
constexpr Field pp_p2p_batched = field<&R::pp_p2p_batched>("pp_p2p_batched");
constexpr Field tp_async_dgrad = field<&R::tp_async_dgrad>("tp_async_dgrad");
constexpr Field zero3_regather_recompute = field<&R::zero3_regather_recompute>("zero3_regather_recompute");
}  // namespace f

// One recipe default and the source it was read from. An empty source: the row above's source
// (one line of a source often gives several fields).
struct Default {
  const char* recipe;
  Field field;
  Value expected;
  const char* source;
};

// The table: one row per default of every recipe, grouped by recipe.
const std::vector<Default>& defaults() {
  // The values: the recipe enums' names unqualified (no two of these enums share a name), true,
  // false, and kNull for a null default.
  using enum Framework;
  using enum LossKernel;
  using enum Fp8Recipe;
  using enum Recompute;
  using enum AttentionKernel;
  // clang-format off
  static const std::vector<Default> table = {
    {"megatron", f::kernels, megatron, "capplan docs/model.md, section 1 (training.framework \"megatron\" before recipes were data)"},
    {"megatron", f::loss_kernel, kNull, "not set: capplan's default for fused kernels (fused)"},
    {"megatron", f::grad_reduce_in_fp32_bf16, kNull, "not set: capplan's default (fp32 except fp16)"},
    {"megatron", f::grad_reduce_in_fp32_fp16, kNull, ""},
    {"megatron", f::grad_reduce_in_fp32_fp8, kNull, ""},
    {"megatron", f::overlap_dp_comm, kNull, "not set: capplan's default (overlapped)"},
    {"megatron", f::tp_comm_overlap, kNull, "not set: capplan's default (off)"},
    {"megatron", f::recompute, kNull, "not set: searched"},
    {"megatron", f::fp8_param_gather, kNull, "not set: capplan's default (off)"},
    {"megatron", f::cuda_graphs, kNull, "not modelled"},

    {"pytorch", f::kernels, pytorch, "capplan docs/model.md, section 1 (training.framework \"pytorch\" before recipes were data)"},
    {"pytorch", f::loss_kernel, kNull, "not set: capplan's default for eager kernels (eager)"},
    {"pytorch", f::grad_reduce_in_fp32_bf16, kNull, "not set: capplan's default (fp32 except fp16)"},
    {"pytorch", f::grad_reduce_in_fp32_fp16, kNull, ""},
    {"pytorch", f::grad_reduce_in_fp32_fp8, kNull, ""},
    {"pytorch", f::overlap_dp_comm, kNull, "not set: capplan's default (overlapped)"},
    {"pytorch", f::tp_comm_overlap, kNull, "not set: capplan's default (off)"},
    {"pytorch", f::recompute, kNull, "not set: searched"},
    {"pytorch", f::fp8_param_gather, kNull, "not set: capplan's default (off)"},
    {"pytorch", f::cuda_graphs, kNull, "not modelled"},

    {"megatron-lm", f::kernels, megatron, "https://github.com/NVIDIA/Megatron-LM/blob/d98e8a64ddf34856e74b24714e3bedb2f5a39553/megatron/training/arguments.py#L2887-L2905 (--no-masked-softmax-fusion, --no-bias-gelu-fusion, --no-bias-swiglu-fusion, --no-bias-dropout-fusion, --no-rope-fusion: fusions on unless disabled)"},
    {"megatron-lm", f::loss_kernel, unfused, "https://github.com/NVIDIA/Megatron-LM/blob/d98e8a64ddf34856e74b24714e3bedb2f5a39553/megatron/core/model_parallel_config.py#L320 (cross_entropy_loss_fusion: bool = False)"},
    {"megatron-lm", f::grad_reduce_in_fp32_bf16, true, "https://github.com/NVIDIA/Megatron-LM/blob/d98e8a64ddf34856e74b24714e3bedb2f5a39553/megatron/training/arguments.py#L1204-L1217 (bf16 forces accumulate_allreduce_grads_in_fp32 = True unless --grad-reduce-in-bf16); #L3069 (store_true: off for fp16); FP8 runs on --bf16"},
    {"megatron-lm", f::grad_reduce_in_fp32_fp16, false, ""},
    {"megatron-lm", f::grad_reduce_in_fp32_fp8, true, ""},
    {"megatron-lm", f::fp8_param_gather, false, "https://github.com/NVIDIA/Megatron-LM/blob/d98e8a64ddf34856e74b24714e3bedb2f5a39553/megatron/training/arguments.py#L2016 (--fp8-param-gather, store_true)"},
    {"megatron-lm", f::fp8_recipe, delayed, "https://github.com/NVIDIA/Megatron-LM/blob/d98e8a64ddf34856e74b24714e3bedb2f5a39553/megatron/core/transformer/transformer_config.py#L594 (fp8_recipe = \"delayed\")"},
    {"megatron-lm", f::overlap_dp_comm, false, "https://github.com/NVIDIA/Megatron-LM/blob/d98e8a64ddf34856e74b24714e3bedb2f5a39553/megatron/training/arguments.py#L3121 (--overlap-grad-reduce, default False)"},
    {"megatron-lm", f::tp_comm_overlap, false, "https://github.com/NVIDIA/Megatron-LM/blob/d98e8a64ddf34856e74b24714e3bedb2f5a39553/megatron/core/model_parallel_config.py#L265 (tp_comm_overlap: bool = False)"},
    {"megatron-lm", f::tp_async_dgrad, true, "https://github.com/NVIDIA/Megatron-LM/blob/d98e8a64ddf34856e74b24714e3bedb2f5a39553/megatron/core/tensor_parallel/layers.py#L1144-L1146 (ColumnParallelLinear: allreduce_dgrad whenever TP > 1 without sequence parallelism) and #L693-L712 (LinearWithGradAccumulationAndAsyncCommunication.backward: all_reduce or reduce_scatter of grad_input with async_op=True before the weight-gradient GEMM; the sequence-parallel input re-gather at #L666-L679 before the input-gradient GEMM); with Transformer Engine layers the same in https://github.com/NVIDIA/TransformerEngine/blob/40c69e751a47ec87786283e125c5eb264101270f/transformer_engine/pytorch/module/linear.py#L733-L743 and layernorm_linear.py#L742-L752 (v2.8)"},
    {"megatron-lm", f::pp_comm_overlap, true, "https://github.com/NVIDIA/Megatron-LM/blob/d98e8a64ddf34856e74b24714e3bedb2f5a39553/megatron/training/arguments.py#L3118 (--no-overlap-p2p-communication, store_false: overlap_p2p_comm on; used by the interleaved schedule)"},
    {"megatron-lm", f::ep_comm_overlap, false, "https://github.com/NVIDIA/Megatron-LM/blob/d98e8a64ddf34856e74b24714e3bedb2f5a39553/megatron/core/model_parallel_config.py#L343 (overlap_moe_expert_parallel_comm: bool = False)"},
    {"megatron-lm", f::recompute, none, "https://github.com/NVIDIA/Megatron-LM/blob/d98e8a64ddf34856e74b24714e3bedb2f5a39553/megatron/core/transformer/transformer_config.py#L532 (recompute_granularity = None)"},
    {"megatron-lm", f::flash_attention, true, "https://github.com/NVIDIA/Megatron-LM/blob/d98e8a64ddf34856e74b24714e3bedb2f5a39553/megatron/core/transformer/transformer_config.py#L151 (attention_backend = AttnBackend.auto: Transformer Engine's fused/flash attention)"},
    {"megatron-lm", f::dropout, kNull, "argument default 0.1 (transformer_config.py#L188-L191 hidden_dropout, attention_dropout), but the repository's recipes for current models pass 0.0: the model's own setting decides"},
    {"megatron-lm", f::expert_tp_follows_tp, true, "https://github.com/NVIDIA/Megatron-LM/blob/d98e8a64ddf34856e74b24714e3bedb2f5a39553/megatron/training/arguments.py#L587-L588 (expert_tensor_parallel_size None -> tensor_model_parallel_size)"},
    {"megatron-lm", f::cuda_graphs, false, "https://github.com/NVIDIA/Megatron-LM/blob/d98e8a64ddf34856e74b24714e3bedb2f5a39553/megatron/core/transformer/transformer_config.py#L1075 (cuda_graph_impl = \"none\")"},

    {"megatron-lm-285068c8", f::kernels, megatron, "https://github.com/NVIDIA/Megatron-LM/blob/285068c8108e0e8e6538f54fe27c3ee86c5217a2/megatron/arguments.py#L644 (--no-masked-softmax-fusion and the bias-gelu / bias-dropout fusion flags: on unless disabled)"},
    {"megatron-lm-285068c8", f::loss_kernel, unfused, "https://github.com/NVIDIA/Megatron-LM/blob/285068c8108e0e8e6538f54fe27c3ee86c5217a2/megatron/model/gpt_model.py (vocab_parallel_cross_entropy: separate PyTorch ops; no loss fusion option at this commit)"},
    {"megatron-lm-285068c8", f::grad_reduce_in_fp32_bf16, true, "https://github.com/NVIDIA/Megatron-LM/blob/285068c8108e0e8e6538f54fe27c3ee86c5217a2/megatron/arguments.py#L152-L158 (bf16 forces accumulate_allreduce_grads_in_fp32); no FP8 at this commit"},
    {"megatron-lm-285068c8", f::grad_reduce_in_fp32_fp16, false, ""},
    {"megatron-lm-285068c8", f::grad_reduce_in_fp32_fp8, kNull, ""},
    {"megatron-lm-285068c8", f::fp8_param_gather, kNull, "no FP8 training at this commit"},
    {"megatron-lm-285068c8", f::overlap_dp_comm, false, "https://github.com/NVIDIA/Megatron-LM/blob/285068c8108e0e8e6538f54fe27c3ee86c5217a2/megatron/arguments.py#L838 (--DDP-impl local: gradients all-reduced after the backward pass in megatron/training.py train_step)"},
    {"megatron-lm-285068c8", f::tp_comm_overlap, false, "https://github.com/NVIDIA/Megatron-LM/blob/285068c8108e0e8e6538f54fe27c3ee86c5217a2/megatron/arguments.py (no tensor-parallel communication overlap option at this commit)"},
    {"megatron-lm-285068c8", f::tp_async_dgrad, true, "https://github.com/NVIDIA/Megatron-LM/blob/285068c8108e0e8e6538f54fe27c3ee86c5217a2/megatron/arguments.py#L664 (--no-async-tensor-model-parallel-allreduce, store_false: on by default) and megatron/core/tensor_parallel/layers.py at that commit (LinearWithGradAccumulationAndAsyncCommunication)"},
    {"megatron-lm-285068c8", f::recompute, none, "https://github.com/NVIDIA/Megatron-LM/blob/285068c8108e0e8e6538f54fe27c3ee86c5217a2/megatron/arguments.py#L593 (--recompute-granularity default None)"},
    {"megatron-lm-285068c8", f::flash_attention, false, "https://github.com/NVIDIA/Megatron-LM/blob/285068c8108e0e8e6538f54fe27c3ee86c5217a2/megatron/arguments.py#L655 (--use-flash-attn, store_true: off by default)"},
    {"megatron-lm-285068c8", f::dropout, true, "https://github.com/NVIDIA/Megatron-LM/blob/285068c8108e0e8e6538f54fe27c3ee86c5217a2/megatron/arguments.py#L531-L533 (--attention-dropout 0.1, --hidden-dropout 0.1)"},
    {"megatron-lm-285068c8", f::cuda_graphs, false, "https://github.com/NVIDIA/Megatron-LM/blob/285068c8108e0e8e6538f54fe27c3ee86c5217a2/megatron/arguments.py (no CUDA graph option at this commit)"},

    {"megatron-lm-2022", f::kernels, megatron, "https://github.com/NVIDIA/Megatron-LM/blob/bbab79f869/megatron/arguments.py (--no-masked-softmax-fusion, --no-bias-gelu-fusion, --no-bias-dropout-fusion: on unless disabled)"},
    {"megatron-lm-2022", f::loss_kernel, unfused, "https://github.com/NVIDIA/Megatron-LM/blob/bbab79f869/megatron/mpu/cross_entropy.py (vocab_parallel_cross_entropy as separate PyTorch ops)"},
    {"megatron-lm-2022", f::grad_reduce_in_fp32_bf16, true, "https://github.com/NVIDIA/Megatron-LM/blob/bbab79f869/megatron/arguments.py#L162-L168 (bf16 forces accumulate_allreduce_grads_in_fp32); no FP8"},
    {"megatron-lm-2022", f::grad_reduce_in_fp32_fp16, false, ""},
    {"megatron-lm-2022", f::grad_reduce_in_fp32_fp8, kNull, ""},
    {"megatron-lm-2022", f::fp8_param_gather, kNull, "no FP8 training in this version"},
    {"megatron-lm-2022", f::overlap_dp_comm, false, "https://github.com/NVIDIA/Megatron-LM/blob/bbab79f869/megatron/arguments.py#L731 (--DDP-impl local: gradients all-reduced after the backward pass)"},
    {"megatron-lm-2022", f::tp_comm_overlap, false, "https://github.com/NVIDIA/Megatron-LM/blob/bbab79f869/megatron/arguments.py (no tensor-parallel communication overlap option)"},
    {"megatron-lm-2022", f::tp_async_dgrad, true, "https://github.com/NVIDIA/Megatron-LM/blob/bbab79f869/megatron/arguments.py#L565 (--no-async-tensor-model-parallel-allreduce, store_false: on by default) and megatron/mpu/layers.py#L259-L295 (input re-gather, all-reduce and reduce-scatter with async_op=True around the weight-gradient GEMM)"},
    {"megatron-lm-2022", f::recompute, none, "https://github.com/NVIDIA/Megatron-LM/blob/bbab79f869/megatron/arguments.py#L497 (--recompute-granularity default None)"},
    {"megatron-lm-2022", f::flash_attention, false, "https://github.com/NVIDIA/Megatron-LM/commit/d693034ecf (FlashAttention integrated 2022-12-08, after this version)"},
    {"megatron-lm-2022", f::dropout, true, "https://github.com/NVIDIA/Megatron-LM/blob/bbab79f869/megatron/arguments.py#L437 (--hidden-dropout 0.1; --attention-dropout 0.1)"},
    {"megatron-lm-2022", f::cuda_graphs, false, "https://github.com/NVIDIA/Megatron-LM/blob/bbab79f869/megatron/arguments.py (no CUDA graph option)"},

    {"megatron-lm-v2", f::kernels, megatron, "https://github.com/NVIDIA/Megatron-LM/blob/e269e200649555069454bf78335466f9658b2044/megatron/arguments.py#L419-L427 (--no-masked-softmax-fusion, --no-bias-gelu-fusion, --no-bias-dropout-fusion: on unless disabled)"},
    {"megatron-lm-v2", f::loss_kernel, unfused, "https://github.com/NVIDIA/Megatron-LM/blob/e269e200649555069454bf78335466f9658b2044/megatron/mpu/cross_entropy.py (vocab_parallel_cross_entropy as separate PyTorch ops)"},
    {"megatron-lm-v2", f::grad_reduce_in_fp32_bf16, true, "https://github.com/NVIDIA/Megatron-LM/blob/e269e200649555069454bf78335466f9658b2044/megatron/arguments.py#L136-L145 (bf16 forces accumulate_allreduce_grads_in_fp32); #L553 (store_true: off for fp16); no FP8"},
    {"megatron-lm-v2", f::grad_reduce_in_fp32_fp16, false, ""},
    {"megatron-lm-v2", f::grad_reduce_in_fp32_fp8, kNull, ""},
    {"megatron-lm-v2", f::fp8_param_gather, kNull, "no FP8 training in this version"},
    {"megatron-lm-v2", f::overlap_dp_comm, false, "https://github.com/NVIDIA/Megatron-LM/blob/e269e200649555069454bf78335466f9658b2044/megatron/training.py#L365-L369 (DDP-impl local, the default at arguments.py#L578: allreduce_gradients() after the backward pass)"},
    {"megatron-lm-v2", f::tp_comm_overlap, false, "https://github.com/NVIDIA/Megatron-LM/blob/e269e200649555069454bf78335466f9658b2044/megatron/arguments.py (no tensor-parallel communication overlap option)"},
    {"megatron-lm-v2", f::tp_async_dgrad, false, "https://github.com/NVIDIA/Megatron-LM/commit/16c90445e71e34e0e1bbae6dfb6c915ea0f4a645 (2021-09-02: --async-tensor-model-parallel-allreduce added, after this v2.5 e269e20 of 2021-08-10, whose megatron/mpu/layers.py runs the backward all-reduce synchronously in copy_to_tensor_model_parallel_region)"},
    {"megatron-lm-v2", f::recompute, none, "https://github.com/NVIDIA/Megatron-LM/blob/e269e200649555069454bf78335466f9658b2044/megatron/arguments.py#L393 (--checkpoint-activations, store_true)"},
    {"megatron-lm-v2", f::selective_recompute, false, "https://github.com/NVIDIA/Megatron-LM/blob/e269e200649555069454bf78335466f9658b2044/megatron/arguments.py#L393 (only --checkpoint-activations, whole layers; selective recompute came in 2022)"},
    {"megatron-lm-v2", f::flash_attention, false, "FlashAttention (Dao et al., arXiv:2205.14135) was published in May 2022, after this version"},
    {"megatron-lm-v2", f::dropout, true, "https://github.com/NVIDIA/Megatron-LM/blob/e269e200649555069454bf78335466f9658b2044/megatron/arguments.py#L341-L343 (--attention-dropout 0.1, --hidden-dropout 0.1)"},
    {"megatron-lm-v2", f::cuda_graphs, false, "https://github.com/NVIDIA/Megatron-LM/blob/e269e200649555069454bf78335466f9658b2044/megatron/arguments.py (no CUDA graph option)"},

    {"megatron-lm-v1", f::kernels, megatron, "https://github.com/NVIDIA/Megatron-LM/blob/03d2880923ffeec494cb0ef0cfc3d7234b2bacc7/megatron/model/transformer.py#L21 (apex FusedLayerNorm) and megatron/model/utils.py#L52 (jit-fused GeLU)"},
    {"megatron-lm-v1", f::loss_kernel, unfused, "https://github.com/NVIDIA/Megatron-LM/blob/03d2880923ffeec494cb0ef0cfc3d7234b2bacc7/megatron/mpu/cross_entropy.py (vocab_parallel_cross_entropy as separate PyTorch ops)"},
    {"megatron-lm-v1", f::grad_reduce_in_fp32_bf16, kNull, "https://github.com/NVIDIA/Megatron-LM/blob/03d2880923ffeec494cb0ef0cfc3d7234b2bacc7/megatron/training.py#L239 (allreduce_params(fp32_allreduce=args.fp32_allreduce), --fp32-allreduce off by default); fp16 only"},
    {"megatron-lm-v1", f::grad_reduce_in_fp32_fp16, false, ""},
    {"megatron-lm-v1", f::grad_reduce_in_fp32_fp8, kNull, ""},
    {"megatron-lm-v1", f::fp8_param_gather, kNull, "no FP8 training in this version"},
    {"megatron-lm-v1", f::overlap_dp_comm, false, "https://github.com/NVIDIA/Megatron-LM/blob/03d2880923ffeec494cb0ef0cfc3d7234b2bacc7/megatron/training.py#L236-L240 (DDP-impl local, the default at arguments.py#L285: all-reduce after the backward pass)"},
    {"megatron-lm-v1", f::tp_comm_overlap, false, "https://github.com/NVIDIA/Megatron-LM/blob/03d2880923ffeec494cb0ef0cfc3d7234b2bacc7/megatron/arguments.py (no tensor-parallel communication overlap option)"},
    {"megatron-lm-v1", f::tp_async_dgrad, false, "https://github.com/NVIDIA/Megatron-LM/commit/16c90445e71e34e0e1bbae6dfb6c915ea0f4a645 (2021-09-02: the asynchronous all-reduce was added two years after Megatron-LM v1; copy_to_model_parallel_region's backward all-reduce is synchronous)"},
    {"megatron-lm-v1", f::recompute, none, "https://github.com/NVIDIA/Megatron-LM/blob/03d2880923ffeec494cb0ef0cfc3d7234b2bacc7/megatron/arguments.py#L159 (--checkpoint-activations, store_true)"},
    {"megatron-lm-v1", f::selective_recompute, false, "https://github.com/NVIDIA/Megatron-LM/blob/03d2880923ffeec494cb0ef0cfc3d7234b2bacc7/megatron/arguments.py#L159 (only --checkpoint-activations, whole layers)"},
    {"megatron-lm-v1", f::flash_attention, false, "FlashAttention (Dao et al., arXiv:2205.14135) was published in May 2022, after this version"},
    {"megatron-lm-v1", f::dropout, true, "https://github.com/NVIDIA/Megatron-LM/blob/03d2880923ffeec494cb0ef0cfc3d7234b2bacc7/megatron/arguments.py#L140-L142 (--attention-dropout 0.1, --hidden-dropout 0.1)"},
    {"megatron-lm-v1", f::cuda_graphs, false, "https://github.com/NVIDIA/Megatron-LM/blob/03d2880923ffeec494cb0ef0cfc3d7234b2bacc7/megatron/arguments.py (no CUDA graph option)"},

    {"megascale", f::kernels, megatron, "Jiang et al., MegaScale, NSDI'24, Sec. 3.4 (fused LayerNorm and GeLU kernels)"},
    {"megascale", f::loss_kernel, kNull, "not published"},
    {"megascale", f::grad_reduce_in_fp32_bf16, kNull, "not published"},
    {"megascale", f::grad_reduce_in_fp32_fp16, kNull, ""},
    {"megascale", f::grad_reduce_in_fp32_fp8, kNull, ""},
    {"megascale", f::fp8_param_gather, kNull, "not published; no FP8 in the paper"},
    {"megascale", f::overlap_dp_comm, true, "Jiang et al., MegaScale, NSDI'24, Sec. 3.2 (data-parallel all-gather and reduce-scatter overlapped with compute)"},
    {"megascale", f::tp_comm_overlap, true, "Jiang et al., MegaScale, NSDI'24, Sec. 3.2 (tensor/sequence-parallel communication fused with the GEMMs)"},
    {"megascale", f::tp_async_dgrad, true, "MegaScale (Jiang et al., NSDI'24) builds on Megatron-LM 285068c8, whose --no-async-tensor-model-parallel-allreduce default (https://github.com/NVIDIA/Megatron-LM/blob/285068c8108e0e8e6538f54fe27c3ee86c5217a2/megatron/arguments.py#L664) keeps the asynchronous input-gradient all-reduce on"},
    {"megascale", f::recompute, kNull, "not published"},
    {"megascale", f::flash_attention, true, "Jiang et al., MegaScale, NSDI'24, Sec. 3.4 (FlashAttention-2)"},
    {"megascale", f::cuda_graphs, kNull, "not published"},

    {"nemo-2", f::kernels, megatron, "https://github.com/NVIDIA/NeMo/blob/8cfedd7203462cb251a914e700e5605444277561/nemo/collections/llm/gpt/model/base.py (GPTConfig: Megatron-Core fused kernels, masked_softmax_fusion and bias fusions on)"},
    {"nemo-2", f::loss_kernel, fused, "https://github.com/NVIDIA/NeMo/blob/8cfedd7203462cb251a914e700e5605444277561/nemo/collections/llm/gpt/model/base.py#L303 (cross_entropy_loss_fusion: bool = True; Megatron-Core's native implementation)"},
    {"nemo-2", f::grad_reduce_in_fp32_bf16, true, "https://github.com/NVIDIA/NeMo/blob/8cfedd7203462cb251a914e700e5605444277561/nemo/collections/llm/recipes/precision/mixed_precision.py#L35 (bf16_mixed: grad_reduce_in_fp32=True), #L52 (fp16_mixed: False); the FP8 plugins start from bf16_mixed"},
    {"nemo-2", f::grad_reduce_in_fp32_fp16, false, ""},
    {"nemo-2", f::grad_reduce_in_fp32_fp8, true, ""},
    {"nemo-2", f::fp8_param_gather, true, "https://github.com/NVIDIA/NeMo/blob/8cfedd7203462cb251a914e700e5605444277561/nemo/collections/llm/recipes/precision/mixed_precision.py#L70 (bf16_with_fp8_mixed: fp8_param_gather = True)"},
    {"nemo-2", f::fp8_recipe, delayed, "https://github.com/NVIDIA/NeMo/blob/8cfedd7203462cb251a914e700e5605444277561/nemo/collections/llm/recipes/precision/mixed_precision.py#L66 (fp8_recipe = \"delayed\")"},
    {"nemo-2", f::overlap_dp_comm, true, "https://github.com/NVIDIA/NeMo/blob/8cfedd7203462cb251a914e700e5605444277561/nemo/collections/llm/recipes/llama3_70b.py#L119-L120 (DistributedDataParallelConfig overlap_grad_reduce=True, overlap_param_gather=True)"},
    {"nemo-2", f::tp_comm_overlap, kNull, "per model recipe (MegatronCommOverlapCallback, tp_comm_overlap None by default: nemo/lightning/pytorch/callbacks/megatron_comm_overlap.py#L44)"},
    {"nemo-2", f::tp_async_dgrad, true, "https://github.com/NVIDIA/TransformerEngine/blob/40c69e751a47ec87786283e125c5eb264101270f/transformer_engine/pytorch/module/linear.py#L733-L743 and layernorm_linear.py#L742-L752 (v2.8: the input gradient's reduce-scatter or all-reduce with async_op=True, waited for after the weight-gradient GEMM; the sequence-parallel input re-gather with async_op=True before the input-gradient GEMM, linear.py#L655-L661), the layers Megatron-Core builds with Transformer Engine"},
    {"nemo-2", f::recompute, kNull, "per model recipe"},
    {"nemo-2", f::flash_attention, true, "Megatron-Core attention_backend auto (Transformer Engine fused/flash attention)"},
    {"nemo-2", f::expert_tp_follows_tp, true, "Megatron-Core megatron/core/parallel_state.py (expert_tensor_parallel_size None -> tensor_model_parallel_size)"},
    {"nemo-2", f::cuda_graphs, kNull, "per model recipe"},

    {"nemo-2-perf", f::kernels, megatron, "as nemo-2 (GPTConfig on Megatron-Core)"},
    {"nemo-2-perf", f::loss_kernel, fused, "https://github.com/NVIDIA/NeMo/blob/8cfedd7203462cb251a914e700e5605444277561/nemo/collections/llm/gpt/model/base.py#L303 (cross_entropy_loss_fusion: bool = True)"},
    {"nemo-2-perf", f::grad_reduce_in_fp32_bf16, false, "https://github.com/NVIDIA/NeMo/blob/8cfedd7203462cb251a914e700e5605444277561/scripts/performance/helpers.py#L234 (set_precision_configs: recipe.trainer.plugins.grad_reduce_in_fp32 = False)"},
    {"nemo-2-perf", f::grad_reduce_in_fp32_fp16, false, ""},
    {"nemo-2-perf", f::grad_reduce_in_fp32_fp8, false, ""},
    {"nemo-2-perf", f::fp8_param_gather, true, "https://github.com/NVIDIA/NeMo/blob/8cfedd7203462cb251a914e700e5605444277561/nemo/collections/llm/recipes/precision/mixed_precision.py#L70 (the FP8 plugins set_precision_configs picks set fp8_param_gather = True)"},
    {"nemo-2-perf", f::fp8_recipe, delayed, "https://github.com/NVIDIA/NeMo/blob/8cfedd7203462cb251a914e700e5605444277561/scripts/performance/helpers.py (set_precision_configs: fp8_recipe defaults to \"ds\", delayed scaling)"},
    {"nemo-2-perf", f::overlap_dp_comm, true, "https://github.com/NVIDIA/NeMo/blob/8cfedd7203462cb251a914e700e5605444277561/nemo/collections/llm/recipes/llama3_70b.py#L119-L120 (overlap_grad_reduce=True)"},
    {"nemo-2-perf", f::tp_comm_overlap, kNull, "per model recipe"},
    {"nemo-2-perf", f::tp_async_dgrad, true, "https://github.com/NVIDIA/TransformerEngine/blob/40c69e751a47ec87786283e125c5eb264101270f/transformer_engine/pytorch/module/linear.py#L733-L743 and layernorm_linear.py#L742-L752 (v2.8: the input gradient's reduce-scatter or all-reduce with async_op=True, waited for after the weight-gradient GEMM; the sequence-parallel input re-gather with async_op=True before the input-gradient GEMM, linear.py#L655-L661), the layers Megatron-Core builds with Transformer Engine"},
    {"nemo-2-perf", f::recompute, kNull, "per model recipe"},
    {"nemo-2-perf", f::flash_attention, true, "Megatron-Core attention_backend auto (Transformer Engine fused/flash attention)"},
    {"nemo-2-perf", f::expert_tp_follows_tp, true, "Megatron-Core megatron/core/parallel_state.py (expert_tensor_parallel_size None -> tensor_model_parallel_size)"},
    {"nemo-2-perf", f::cuda_graphs, kNull, "per model recipe"},

    {"nemo-1", f::kernels, megatron, "https://github.com/NVIDIA/NeMo/blob/v1.23.0/examples/nlp/language_modeling/conf/megatron_gpt_config.yaml (Megatron-Core GPT with Transformer Engine)"},
    {"nemo-1", f::loss_kernel, kNull, "not read"},
    {"nemo-1", f::grad_reduce_in_fp32_bf16, kNull, "not read for the published performance configs"},
    {"nemo-1", f::grad_reduce_in_fp32_fp16, kNull, ""},
    {"nemo-1", f::grad_reduce_in_fp32_fp8, kNull, ""},
    {"nemo-1", f::fp8_param_gather, kNull, "no fp8_params key in v1.23.0's megatron_gpt_config.yaml; the 24.07 performance configs were not read"},
    {"nemo-1", f::overlap_dp_comm, kNull, "not read"},
    {"nemo-1", f::tp_comm_overlap, false, "https://github.com/NVIDIA/NeMo/blob/v1.23.0/examples/nlp/language_modeling/conf/megatron_gpt_config.yaml#L194 (ub_tp_comm_overlap: False)"},
    {"nemo-1", f::tp_async_dgrad, true, "https://github.com/NVIDIA/TransformerEngine/blob/40c69e751a47ec87786283e125c5eb264101270f/transformer_engine/pytorch/module/linear.py#L733-L743 and layernorm_linear.py#L742-L752 (v2.8: the input gradient's reduce-scatter or all-reduce with async_op=True, waited for after the weight-gradient GEMM; the sequence-parallel input re-gather with async_op=True before the input-gradient GEMM, linear.py#L655-L661), the layers Megatron-Core builds with Transformer Engine"},
    {"nemo-1", f::recompute, none, "https://github.com/NVIDIA/NeMo/blob/v1.23.0/examples/nlp/language_modeling/conf/megatron_gpt_config.yaml#L155 (activations_checkpoint_granularity: null)"},
    {"nemo-1", f::flash_attention, true, "Megatron-Core with Transformer Engine (use_flash_attention 'does nothing when transformer_engine=True', megatron_gpt_config.yaml#L203)"},
    {"nemo-1", f::expert_tp_follows_tp, true, "Megatron-Core megatron/core/parallel_state.py (expert_tensor_parallel_size None -> tensor_model_parallel_size)"},
    {"nemo-1", f::cuda_graphs, kNull, "not read"},

    {"megatron-bridge", f::kernels, megatron, "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/models/gpt_provider.py#L204 (masked_softmax_fusion: bool = True; Megatron-Core fused kernels)"},
    {"megatron-bridge", f::loss_kernel, fused, "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/models/gpt_provider.py#L205 (cross_entropy_loss_fusion: bool = True; Megatron-Core's native implementation)"},
    {"megatron-bridge", f::grad_reduce_in_fp32_bf16, true, "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/training/mixed_precision.py#L185-L197 (bf16_mixed: grad_reduce_in_fp32=True), #L201-L213 (fp16_mixed: False); FP8 configs start from bf16_mixed"},
    {"megatron-bridge", f::grad_reduce_in_fp32_fp16, false, ""},
    {"megatron-bridge", f::grad_reduce_in_fp32_fp8, true, ""},
    {"megatron-bridge", f::fp8_param_gather, true, "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/training/mixed_precision.py#L231 (bf16_with_fp8_delayed_scaling_mixed: fp8_param_gather = True; also #L302 current scaling, #L264 MXFP8)"},
    {"megatron-bridge", f::fp8_recipe, delayed, "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/training/mixed_precision.py#L227"},
    {"megatron-bridge", f::overlap_dp_comm, true, "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/recipes/common.py#L82-L84 (DistributedDataParallelConfig overlap_grad_reduce=True, overlap_param_gather=True)"},
    {"megatron-bridge", f::tp_comm_overlap, kNull, "per model recipe (CommOverlapConfig, src/megatron/bridge/training/comm_overlap.py#L356)"},
    {"megatron-bridge", f::tp_async_dgrad, true, "https://github.com/NVIDIA/TransformerEngine/blob/40c69e751a47ec87786283e125c5eb264101270f/transformer_engine/pytorch/module/linear.py#L733-L743 and layernorm_linear.py#L742-L752 (v2.8: the input gradient's reduce-scatter or all-reduce with async_op=True, waited for after the weight-gradient GEMM; the sequence-parallel input re-gather with async_op=True before the input-gradient GEMM, linear.py#L655-L661), the layers Megatron-Core builds with Transformer Engine"},
    {"megatron-bridge", f::recompute, kNull, "per model recipe"},
    {"megatron-bridge", f::flash_attention, true, "Megatron-Core attention_backend auto (Transformer Engine fused/flash attention)"},
    {"megatron-bridge", f::expert_tp_follows_tp, true, "Megatron-Core megatron/core/parallel_state.py (expert_tensor_parallel_size None -> tensor_model_parallel_size)"},
    {"megatron-bridge", f::cuda_graphs, kNull, "per model recipe"},

    {"megatron-bridge-perf", f::kernels, megatron, "as megatron-bridge"},
    {"megatron-bridge-perf", f::loss_kernel, te, "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/perf_recipes/_common.py#L70 (_benchmark_common: cross_entropy_fusion_impl = \"te\")"},
    {"megatron-bridge-perf", f::grad_reduce_in_fp32_bf16, false, "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/perf_recipes/_common.py#L72-L74 (mixed_precision.grad_reduce_in_fp32 = False, ddp.grad_reduce_in_fp32 = False) and #L122 (_perf_precision)"},
    {"megatron-bridge-perf", f::grad_reduce_in_fp32_fp16, false, ""},
    {"megatron-bridge-perf", f::grad_reduce_in_fp32_fp8, false, ""},
    {"megatron-bridge-perf", f::fp8_param_gather, true, "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/training/mixed_precision.py#L302 (bf16_with_fp8_current_scaling_mixed, which _perf_precision uses for fp8_cs: fp8_param_gather = True)"},
    {"megatron-bridge-perf", f::fp8_recipe, kNull, "chosen per run: https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/perf_recipes/_common.py#L99-L122 (_perf_precision: fp8_cs current scaling, fp8_ds delayed, fp8_mx MXFP8)"},
    {"megatron-bridge-perf", f::overlap_dp_comm, true, "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/recipes/common.py#L82-L84 (overlap_grad_reduce=True)"},
    {"megatron-bridge-perf", f::tp_comm_overlap, kNull, "per model recipe"},
    {"megatron-bridge-perf", f::tp_async_dgrad, true, "https://github.com/NVIDIA/TransformerEngine/blob/40c69e751a47ec87786283e125c5eb264101270f/transformer_engine/pytorch/module/linear.py#L733-L743 and layernorm_linear.py#L742-L752 (v2.8: the input gradient's reduce-scatter or all-reduce with async_op=True, waited for after the weight-gradient GEMM; the sequence-parallel input re-gather with async_op=True before the input-gradient GEMM, linear.py#L655-L661), the layers Megatron-Core builds with Transformer Engine"},
    {"megatron-bridge-perf", f::recompute, kNull, "per model recipe"},
    {"megatron-bridge-perf", f::flash_attention, true, "Megatron-Core attention_backend auto (Transformer Engine fused/flash attention)"},
    {"megatron-bridge-perf", f::expert_tp_follows_tp, true, "Megatron-Core megatron/core/parallel_state.py (expert_tensor_parallel_size None -> tensor_model_parallel_size)"},
    {"megatron-bridge-perf", f::cuda_graphs, kNull, "per model recipe (cuda_graph_impl set by the recipe or --cuda_graph_impl)"},

    {"megatron-bridge-perf-gpt-oss", f::kernels, megatron, "as megatron-bridge"},
    {"megatron-bridge-perf-gpt-oss", f::loss_kernel, te, "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/perf_recipes/_common.py#L70 (_benchmark_common: cross_entropy_fusion_impl = \"te\")"},
    {"megatron-bridge-perf-gpt-oss", f::grad_reduce_in_fp32_bf16, false, "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/perf_recipes/gpt_oss/common.py#L81-L82 (mixed_precision.grad_reduce_in_fp32 = False, ddp.grad_reduce_in_fp32 = False)"},
    {"megatron-bridge-perf-gpt-oss", f::grad_reduce_in_fp32_fp16, false, ""},
    {"megatron-bridge-perf-gpt-oss", f::grad_reduce_in_fp32_fp8, false, ""},
    {"megatron-bridge-perf-gpt-oss", f::fp8_param_gather, true, "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/training/mixed_precision.py#L302 (bf16_with_fp8_current_scaling_mixed: fp8_param_gather = True)"},
    {"megatron-bridge-perf-gpt-oss", f::fp8_recipe, kNull, "chosen per preset (bf16 and fp8cs presets in src/megatron/bridge/perf_recipes/gpt_oss/h100/gpt_oss.py)"},
    {"megatron-bridge-perf-gpt-oss", f::overlap_dp_comm, true, "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/recipes/common.py#L82-L84 (overlap_grad_reduce=True)"},
    {"megatron-bridge-perf-gpt-oss", f::tp_comm_overlap, kNull, "per preset"},
    {"megatron-bridge-perf-gpt-oss", f::tp_async_dgrad, true, "https://github.com/NVIDIA/TransformerEngine/blob/40c69e751a47ec87786283e125c5eb264101270f/transformer_engine/pytorch/module/linear.py#L733-L743 and layernorm_linear.py#L742-L752 (v2.8: the input gradient's reduce-scatter or all-reduce with async_op=True, waited for after the weight-gradient GEMM; the sequence-parallel input re-gather with async_op=True before the input-gradient GEMM, linear.py#L655-L661), the layers Megatron-Core builds with Transformer Engine"},
    {"megatron-bridge-perf-gpt-oss", f::recompute, selective, "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/perf_recipes/gpt_oss/h100/gpt_oss.py#L40 (recompute_granularity = \"selective\")"},
    {"megatron-bridge-perf-gpt-oss", f::recompute_norms, true, "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/src/megatron/bridge/perf_recipes/gpt_oss/h100/gpt_oss.py#L39 (recompute_modules = [\"layernorm\", \"moe_act\"])"},
    {"megatron-bridge-perf-gpt-oss", f::recompute_moe_act, true, ""},
    {"megatron-bridge-perf-gpt-oss", f::flash_attention, true, "Megatron-Core attention_backend auto (Transformer Engine fused/flash attention)"},
    {"megatron-bridge-perf-gpt-oss", f::expert_tp_follows_tp, true, "Megatron-Core megatron/core/parallel_state.py (expert_tensor_parallel_size None -> tensor_model_parallel_size)"},
    {"megatron-bridge-perf-gpt-oss", f::cuda_graphs, kNull, "per preset"},

    {"nemo-automodel", f::kernels, pytorch, "NeMo AutoModel: Hugging Face model code on PyTorch; TE kernels opt-in per config (examples/benchmark/configs/*_te_*.yaml: backend rms_norm te, rope_fusion true)"},
    {"nemo-automodel", f::loss_kernel, kNull, "not read"},
    {"nemo-automodel", f::grad_reduce_in_fp32_bf16, kNull, "not read"},
    {"nemo-automodel", f::grad_reduce_in_fp32_fp16, kNull, ""},
    {"nemo-automodel", f::grad_reduce_in_fp32_fp8, kNull, ""},
    {"nemo-automodel", f::fp8_param_gather, kNull, "not read"},
    {"nemo-automodel", f::overlap_dp_comm, kNull, "not read (FSDP2)"},
    {"nemo-automodel", f::tp_comm_overlap, kNull, "not read"},
    {"nemo-automodel", f::recompute, kNull, "not read"},
    {"nemo-automodel", f::expert_tp_follows_tp, false, "not Megatron-Core: experts are not split by tensor parallelism unless configured"},
    {"nemo-automodel", f::cuda_graphs, kNull, "not read"},

    {"megatron-deepspeed", f::kernels, megatron, "https://github.com/bigscience-workshop/Megatron-DeepSpeed/blob/0f23a729ec5ed6ef46e1fecc8071ac11acdb91c6/megatron/arguments.py (Megatron's masked-softmax and bias fusions, on unless disabled)"},
    {"megatron-deepspeed", f::loss_kernel, unfused, "https://github.com/bigscience-workshop/Megatron-DeepSpeed/blob/0f23a729ec5ed6ef46e1fecc8071ac11acdb91c6/megatron/mpu/cross_entropy.py (vocab_parallel_cross_entropy as separate PyTorch ops)"},
    {"megatron-deepspeed", f::grad_reduce_in_fp32_bf16, true, "https://github.com/bigscience-workshop/Megatron-DeepSpeed/blob/0f23a729ec5ed6ef46e1fecc8071ac11acdb91c6/megatron/arguments.py#L182 (bf16 forces accumulate_allreduce_grads_in_fp32); no FP8"},
    {"megatron-deepspeed", f::grad_reduce_in_fp32_fp16, false, ""},
    {"megatron-deepspeed", f::grad_reduce_in_fp32_fp8, kNull, ""},
    {"megatron-deepspeed", f::fp8_param_gather, kNull, "no FP8 training in this version"},
    {"megatron-deepspeed", f::overlap_dp_comm, false, "https://github.com/deepspeedai/DeepSpeed/blob/edaa7221267243c7be7fb49c5d5f5c4fb97b4641/deepspeed/runtime/zero/config.py#L383-L386 (overlap_comm defaults to True only for ZeRO stage 3) and https://github.com/bigscience-workshop/Megatron-DeepSpeed/blob/0f23a729ec5ed6ef46e1fecc8071ac11acdb91c6/megatron/arguments.py#L728 (--DDP-impl local)"},
    {"megatron-deepspeed", f::overlap_dp_comm_zero3, true, "https://github.com/deepspeedai/DeepSpeed/blob/edaa7221267243c7be7fb49c5d5f5c4fb97b4641/deepspeed/runtime/zero/config.py#L383-L386"},
    {"megatron-deepspeed", f::tp_comm_overlap, false, "https://github.com/bigscience-workshop/Megatron-DeepSpeed/blob/0f23a729ec5ed6ef46e1fecc8071ac11acdb91c6/megatron/arguments.py (no tensor-parallel communication overlap option)"},
    {"megatron-deepspeed", f::tp_async_dgrad, false, "https://github.com/bigscience-workshop/Megatron-DeepSpeed/blob/0f23a729ec5ed6ef46e1fecc8071ac11acdb91c6/megatron/mpu/layers.py (ColumnParallelLinear.forward: copy_to_tensor_model_parallel_region, whose backward all-reduces the input gradient synchronously; no asynchronous variant in this fork)"},
    {"megatron-deepspeed", f::recompute, none, "https://github.com/bigscience-workshop/Megatron-DeepSpeed/blob/0f23a729ec5ed6ef46e1fecc8071ac11acdb91c6/megatron/arguments.py#L512 (--checkpoint-activations, store_true)"},
    {"megatron-deepspeed", f::host_us_per_op, 80.0, "fitted: capplan's op list against the launch-bound iterations of vTrain's measured Megatron-DeepSpeed runs (vTrain's data/ground_truth_single.csv; docs/accuracy.md)"},
    {"megatron-deepspeed", f::pp_p2p_batched, false, "https://github.com/microsoft/DeepSpeed/blob/f4079d72969b91cca54dae59f33f7b9b0d820bec/deepspeed/runtime/pipe/p2p.py (send and recv assert async_op == False and call dist.send / dist.recv)"},
    {"megatron-deepspeed", f::selective_recompute, false, "https://github.com/bigscience-workshop/Megatron-DeepSpeed/blob/0f23a729ec5ed6ef46e1fecc8071ac11acdb91c6/megatron/arguments.py#L512 (only --checkpoint-activations, whole layers)"},
    {"megatron-deepspeed", f::flash_attention, false, "FlashAttention (Dao et al., arXiv:2205.14135) was published in May 2022, after this version"},
    {"megatron-deepspeed", f::dropout, true, "https://github.com/bigscience-workshop/Megatron-DeepSpeed/blob/0f23a729ec5ed6ef46e1fecc8071ac11acdb91c6/megatron/arguments.py#L460-L462 (--attention-dropout 0.1, --hidden-dropout 0.1)"},
    {"megatron-deepspeed", f::cuda_graphs, false, "https://github.com/bigscience-workshop/Megatron-DeepSpeed/blob/0f23a729ec5ed6ef46e1fecc8071ac11acdb91c6/megatron/arguments.py (no CUDA graph option)"},

    {"deepspeed", f::kernels, megatron, "the wrapped model's code decides; null: capplan default (fused)"},
    {"deepspeed", f::loss_kernel, kNull, "the wrapped model's code decides"},
    {"deepspeed", f::grad_reduce_in_fp32_bf16, false, "https://github.com/deepspeedai/DeepSpeed/blob/edaa7221267243c7be7fb49c5d5f5c4fb97b4641/deepspeed/runtime/engine.py#L1405-L1416 (communication_data_type: the training dtype, fp16 or bf16, unless set; COMMUNICATION_DATA_TYPE_DEFAULT = None in deepspeed/runtime/constants.py#L286)"},
    {"deepspeed", f::grad_reduce_in_fp32_fp16, false, ""},
    {"deepspeed", f::grad_reduce_in_fp32_fp8, kNull, ""},
    {"deepspeed", f::fp8_param_gather, kNull, "not a DeepSpeed default"},
    {"deepspeed", f::overlap_dp_comm, false, "https://github.com/deepspeedai/DeepSpeed/blob/edaa7221267243c7be7fb49c5d5f5c4fb97b4641/deepspeed/runtime/zero/config.py#L138 and #L383-L386 (overlap_comm None -> True only for stage 3)"},
    {"deepspeed", f::overlap_dp_comm_zero3, true, "https://github.com/deepspeedai/DeepSpeed/blob/edaa7221267243c7be7fb49c5d5f5c4fb97b4641/deepspeed/runtime/zero/config.py#L383-L386"},
    {"deepspeed", f::tp_comm_overlap, kNull, "no tensor parallelism of its own"},
    {"deepspeed", f::recompute, none, "https://github.com/deepspeedai/DeepSpeed/blob/edaa7221267243c7be7fb49c5d5f5c4fb97b4641/deepspeed/runtime/activation_checkpointing/config.py (activation checkpointing only when the model calls deepspeed.checkpointing)"},
    {"deepspeed", f::flash_attention, kNull, "the wrapped model's code decides"},
    {"deepspeed", f::cuda_graphs, kNull, "not modelled"},
    {"deepspeed", f::zero3_regather_recompute, true, "https://github.com/deepspeedai/DeepSpeed/blob/edaa7221267243c7be7fb49c5d5f5c4fb97b4641/deepspeed/runtime/zero/parameter_offload.py (every submodule forward fetches and releases, the recomputed one included; backward fetches again)"},

    {"pytorch-fsdp", f::kernels, pytorch, "plain PyTorch modules: each element-wise op its own kernel (no compile by default)"},
    {"pytorch-fsdp", f::loss_kernel, eager, "torch.nn.functional.cross_entropy in the training script"},
    {"pytorch-fsdp", f::grad_reduce_in_fp32_bf16, kNull, "MixedPrecision(param_dtype=None, reduce_dtype=None): whatever the user's policy sets (https://github.com/pytorch/pytorch/blob/01d5c2cc8ac53ec6f45d10e2b90f7387df1f1ac4/torch/distributed/fsdp/api.py)"},
    {"pytorch-fsdp", f::grad_reduce_in_fp32_fp16, kNull, ""},
    {"pytorch-fsdp", f::grad_reduce_in_fp32_fp8, kNull, ""},
    {"pytorch-fsdp", f::fp8_param_gather, false, "FSDP1 has no FP8 all-gather"},
    {"pytorch-fsdp", f::overlap_dp_comm, kNull, "reduce-scatter issued from post-backward hooks on a separate stream; capplan's default (overlapped)"},
    {"pytorch-fsdp", f::tp_comm_overlap, kNull, "no tensor parallelism of its own"},
    {"pytorch-fsdp", f::recompute, none, "activation checkpointing only where the user wraps modules (torch.distributed.algorithms._checkpoint.checkpoint_wrapper)"},
    {"pytorch-fsdp", f::cuda_graphs, false, "not used by FSDP"},

    {"pytorch-fsdp2", f::kernels, pytorch, "plain PyTorch modules: each element-wise op its own kernel (no compile by default)"},
    {"pytorch-fsdp2", f::loss_kernel, eager, "torch.nn.functional.cross_entropy in the training script"},
    {"pytorch-fsdp2", f::grad_reduce_in_fp32_bf16, kNull, "https://github.com/pytorch/pytorch/blob/01d5c2cc8ac53ec6f45d10e2b90f7387df1f1ac4/torch/distributed/fsdp/_fully_shard/_fsdp_api.py#L27-L49 (MixedPrecisionPolicy reduce_dtype None: the original parameter dtype, fp32 for fp32 master weights; bf16 when the model itself is bf16)"},
    {"pytorch-fsdp2", f::grad_reduce_in_fp32_fp16, kNull, ""},
    {"pytorch-fsdp2", f::grad_reduce_in_fp32_fp8, kNull, ""},
    {"pytorch-fsdp2", f::fp8_param_gather, false, "FP8 all-gather only through torchao's Float8 training with enable_fsdp_float8_all_gather"},
    {"pytorch-fsdp2", f::overlap_dp_comm, kNull, "reduce-scatter on a separate stream overlapping backward; capplan's default (overlapped)"},
    {"pytorch-fsdp2", f::tp_comm_overlap, kNull, "no tensor parallelism of its own"},
    {"pytorch-fsdp2", f::recompute, none, "activation checkpointing only where the user applies it"},
    {"pytorch-fsdp2", f::cuda_graphs, false, "not used by FSDP2"},

    {"torchtitan", f::kernels, pytorch, "https://github.com/pytorch/torchtitan/blob/f6a9daa13e04f01adde911ab412c617e8dee6a9d/torchtitan/config_manager.py#L399-L403 (--training.compile, store_true: eager unless compiled)"},
    {"torchtitan", f::loss_kernel, eager, "https://github.com/pytorch/torchtitan/blob/f6a9daa13e04f01adde911ab412c617e8dee6a9d/train.py (loss_fn: torch.nn.functional.cross_entropy on pred.float())"},
    {"torchtitan", f::grad_reduce_in_fp32_bf16, true, "https://github.com/pytorch/torchtitan/blob/f6a9daa13e04f01adde911ab412c617e8dee6a9d/torchtitan/config_manager.py#L388-L396 (--training.mixed_precision_reduce default float32)"},
    {"torchtitan", f::grad_reduce_in_fp32_fp16, kNull, ""},
    {"torchtitan", f::grad_reduce_in_fp32_fp8, true, ""},
    {"torchtitan", f::fp8_param_gather, false, "https://github.com/pytorch/torchtitan/blob/f6a9daa13e04f01adde911ab412c617e8dee6a9d/torchtitan/config_manager.py#L541-L545 (--float8.enable_fsdp_float8_all_gather, store_true)"},
    {"torchtitan", f::overlap_dp_comm, kNull, "FSDP2's default; capplan's default (overlapped)"},
    {"torchtitan", f::tp_comm_overlap, false, "https://github.com/pytorch/torchtitan/blob/f6a9daa13e04f01adde911ab412c617e8dee6a9d/torchtitan/config_manager.py#L287-L291 (--experimental.enable_async_tensor_parallel, store_true)"},
    {"torchtitan", f::recompute, kNull, "https://github.com/pytorch/torchtitan/blob/f6a9daa13e04f01adde911ab412c617e8dee6a9d/torchtitan/config_manager.py#L515-L528: --activation_checkpoint.mode selective with selective_ac_option \"2\" (every second layer fully checkpointed), which capplan has no mode for"},
    {"torchtitan", f::flash_attention, true, "torch.nn.functional.scaled_dot_product_attention (flash backend) in torchtitan/models/llama/model.py"},
    {"torchtitan", f::cuda_graphs, false, "not used"},

    {"llm-foundry", f::kernels, pytorch, "llm-foundry MPT modules in plain PyTorch (no compile by default)"},
    {"llm-foundry", f::loss_kernel, eager, "torch.nn.CrossEntropyLoss in llm-foundry's model classes"},
    {"llm-foundry", f::grad_reduce_in_fp32_bf16, true, "https://github.com/mosaicml/composer/blob/6405188805a0054b4551ec49e4919c54c971d0e8/composer/utils/parallelism.py#L34 (mixed_precision: str = 'DEFAULT') and composer/distributed/mosaic_parallelism.py#L78-L80 (DEFAULT: reduce_dtype = torch.float32; PURE: the training dtype, #L82-L84)"},
    {"llm-foundry", f::grad_reduce_in_fp32_fp16, true, ""},
    {"llm-foundry", f::grad_reduce_in_fp32_fp8, true, ""},
    {"llm-foundry", f::fp8_param_gather, false, "FP8 only through Transformer Engine layers (amp_fp8); parameters stay 16-bit"},
    {"llm-foundry", f::overlap_dp_comm, kNull, "FSDP's default; capplan's default (overlapped)"},
    {"llm-foundry", f::tp_comm_overlap, kNull, "no tensor parallelism by default"},
    {"llm-foundry", f::recompute, none, "llm-foundry FSDP config activation_checkpointing: false unless set"},
    {"llm-foundry", f::cuda_graphs, false, "not used"},
    {"llm-foundry", f::attention_kernel, kNull, "not set: capplan's default (FlashAttention-2 class; attn_impl 'flash' in current llm-foundry)"},

    {"llm-foundry-2023", f::kernels, pytorch, "llm-foundry MPT modules in plain PyTorch (no torch.compile in v0.1-v0.3 scripts/train/train.py)"},
    {"llm-foundry-2023", f::attention_kernel, flash1, "https://github.com/mosaicml/llm-foundry/blob/b2a43a1477a45f40f4086a1c72f851b0ab42d0ac/scripts/train/benchmarking/submit_benchmarks.py#L144 (--attn_impl default 'triton', set into the model config at #L305; the same default at 1ef7b4d21 #L119, #L268)"},
    {"llm-foundry-2023", f::loss_kernel, te, "https://github.com/mosaicml/llm-foundry/blob/v0.3.0/llmfoundry/models/mpt/modeling_mpt.py#L721-L727 (loss_fn default 'fused_crossentropy': flash-attn's xentropy CUDA kernel, priced as Transformer Engine's fused cross-entropy)"},
    {"llm-foundry-2023", f::grad_reduce_in_fp32_bf16, true, "https://github.com/mosaicml/llm-foundry/blob/b2a43a1477a45f40f4086a1c72f851b0ab42d0ac/scripts/train/benchmarking/submit_benchmarks.py#L263-L268 (mod_parameters: fsdp_config_mixed_precision = 'DEFAULT', called at #L451 without it)"},
    {"llm-foundry-2023", f::grad_reduce_in_fp32_fp16, true, ""},
    {"llm-foundry-2023", f::grad_reduce_in_fp32_fp8, true, ""},
    {"llm-foundry-2023", f::fp8_param_gather, false, "FP8 only through Transformer Engine layers (amp_fp8, fc_type te); parameters stay 16-bit"},
    {"llm-foundry-2023", f::overlap_dp_comm, kNull, "FSDP's default; capplan's default (overlapped)"},
    {"llm-foundry-2023", f::recompute, none, "llm-foundry FSDP config activation_checkpointing: false unless set (the benchmark scripts set it per model)"},
    {"llm-foundry-2023", f::cuda_graphs, false, "not used"},

    {"fms-fsdp-2024-03", f::kernels, pytorch, "https://github.com/foundation-model-stack/fms-fsdp/blob/3cb16b4f8dc693050a69024ad9e70e842bf7a76b/fms_fsdp/config/training.py#L42 (use_torch_compile: bool = False: eager element-wise kernels)"},
    {"fms-fsdp-2024-03", f::loss_kernel, eager, "torch.nn.CrossEntropyLoss in fms_fsdp/utils/train_utils.py (outside the compiled model)"},
    {"fms-fsdp-2024-03", f::grad_reduce_in_fp32_bf16, false, "https://github.com/foundation-model-stack/fms-fsdp/blob/3cb16b4f8dc693050a69024ad9e70e842bf7a76b/fms_fsdp/policies/mixed_precision.py#L11-L15 (bfSixteen: param_dtype, reduce_dtype, buffer_dtype bfloat16) and fms_fsdp/utils/train_utils.py#L150 (mixed_precision True -> bfSixteen)"},
    {"fms-fsdp-2024-03", f::grad_reduce_in_fp32_fp16, false, ""},
    {"fms-fsdp-2024-03", f::grad_reduce_in_fp32_fp8, kNull, ""},
    {"fms-fsdp-2024-03", f::fp8_param_gather, kNull, "no FP8 in this version"},
    {"fms-fsdp-2024-03", f::overlap_dp_comm, kNull, "FSDP's default; capplan's default (overlapped)"},
    {"fms-fsdp-2024-03", f::tp_comm_overlap, kNull, "no tensor parallelism"},
    {"fms-fsdp-2024-03", f::recompute, none, "https://github.com/foundation-model-stack/fms-fsdp/blob/3cb16b4f8dc693050a69024ad9e70e842bf7a76b/fms_fsdp/config/training.py#L22 (fsdp_activation_checkpointing: bool = False)"},
    {"fms-fsdp-2024-03", f::cuda_graphs, false, "not used"},

    {"fms-fsdp", f::kernels, megatron, "https://github.com/foundation-model-stack/fms-fsdp/blob/9031328050b05d3d1f3a12ed1c9b637c8c8a43b5/fms_fsdp/config/training.py#L54 (use_torch_compile: bool = True: inductor fuses the element-wise ops)"},
    {"fms-fsdp", f::loss_kernel, eager, "torch.nn.CrossEntropyLoss in fms_fsdp/utils/train_utils.py (outside the compiled model)"},
    {"fms-fsdp", f::grad_reduce_in_fp32_bf16, false, "https://github.com/foundation-model-stack/fms-fsdp/blob/9031328050b05d3d1f3a12ed1c9b637c8c8a43b5/fms_fsdp/policies/mixed_precision.py (bfSixteen: param_dtype, reduce_dtype, buffer_dtype bfloat16) and fms_fsdp/utils/train_utils.py#L204 (mixed_precision True -> bfSixteen)"},
    {"fms-fsdp", f::grad_reduce_in_fp32_fp16, false, ""},
    {"fms-fsdp", f::grad_reduce_in_fp32_fp8, kNull, ""},
    {"fms-fsdp", f::fp8_param_gather, kNull, "no FP8 in this version"},
    {"fms-fsdp", f::overlap_dp_comm, kNull, "FSDP's default; capplan's default (overlapped)"},
    {"fms-fsdp", f::tp_comm_overlap, kNull, "no tensor parallelism"},
    {"fms-fsdp", f::recompute, none, "https://github.com/foundation-model-stack/fms-fsdp/blob/9031328050b05d3d1f3a12ed1c9b637c8c8a43b5/fms_fsdp/config/training.py#L28 (fsdp_activation_checkpointing: bool = False)"},
    {"fms-fsdp", f::cuda_graphs, false, "not used"},

    {"hf-trainer", f::kernels, pytorch, "Hugging Face modeling code in plain PyTorch (torch_compile and use_liger_kernel off by default in TrainingArguments)"},
    {"hf-trainer", f::loss_kernel, eager, "https://github.com/huggingface/transformers/blob/0114da07ec0e101b420a923dedeb6032b6ac3a44/src/transformers/loss/loss_utils.py (ForCausalLMLoss: logits.float(), nn.functional.cross_entropy)"},
    {"hf-trainer", f::grad_reduce_in_fp32_bf16, kNull, "bf16/fp16 through torch.autocast: gradients in the parameters' dtype, fp32 unless the model is loaded in 16 bits"},
    {"hf-trainer", f::grad_reduce_in_fp32_fp16, kNull, ""},
    {"hf-trainer", f::grad_reduce_in_fp32_fp8, kNull, ""},
    {"hf-trainer", f::fp8_param_gather, false, "no FP8 all-gather"},
    {"hf-trainer", f::overlap_dp_comm, kNull, "torch DDP buckets overlap backward; capplan's default (overlapped)"},
    {"hf-trainer", f::tp_comm_overlap, kNull, "no tensor parallelism by default"},
    {"hf-trainer", f::recompute, none, "TrainingArguments.gradient_checkpointing defaults to False"},
    {"hf-trainer", f::cuda_graphs, false, "not used"},

    {"torchtune", f::kernels, pytorch, "https://github.com/pytorch/torchtune/blob/0031bfb080bd35ec533c412df883cf2bf7bf7fe4/recipes/configs/llama3_1/70B_full.yaml (compile: False in the shipped configs: eager PyTorch kernels)"},
    {"torchtune", f::loss_kernel, kNull, "CEWithChunkedOutputLoss; capplan has no chunked loss kernel"},
    {"torchtune", f::grad_reduce_in_fp32_bf16, false, "https://github.com/pytorch/torchtune/blob/0031bfb080bd35ec533c412df883cf2bf7bf7fe4/docs/source/tutorials/memory_optimizations.rst (bf16 'uses 2 bytes per model and optimizer parameter')"},
    {"torchtune", f::master_weights, false, "the same page: \"Currently, we don't support mixed-precision training in torchtune\""},
    {"torchtune", f::fp8_param_gather, false, "no FP8 training in the recipes"},
    {"torchtune", f::recompute, full, "https://github.com/pytorch/torchtune/blob/0031bfb080bd35ec533c412df883cf2bf7bf7fe4/recipes/configs/llama3_1/70B_full.yaml#L101 (enable_activation_checkpointing: True; 27 of 32 full, 24 of 33 LoRA, 13 of 14 QLoRA configs)"},
    {"torchtune", f::cuda_graphs, false, "not used"},
  };
  // clang-format on
  return table;
}

// The recipes of the table, in its order: one test each.
std::vector<std::string> recipes_in_table() {
  std::vector<std::string> ids;
  for (const Default& d : defaults()) {
    if (std::find(ids.begin(), ids.end(), d.recipe) == ids.end()) ids.emplace_back(d.recipe);
  }
  return ids;
}

class FrameworkRecipeDefaults : public ::testing::TestWithParam<std::string> {};

TEST_P(FrameworkRecipeDefaults, MatchTheirSources) {
  const std::string& id = GetParam();
  const auto& r = recipe(id);
  int checked = 0;
  std::string source;
  for (const Default& d : defaults()) {
    if (d.recipe != id) continue;
    if (*d.source != '\0') source = d.source;
    ++checked;
    const Value got = d.field.read(r);
    EXPECT_TRUE(got == d.expected) << id << " " << d.field.name << ": " << show(got) << ", the source gives "
                                   << show(d.expected) << "\n  source: " << source;
  }
  EXPECT_GT(checked, 0) << "no default of '" << id << "' in the table";
}

INSTANTIATE_TEST_SUITE_P(FrameworkRecipe, FrameworkRecipeDefaults, ::testing::ValuesIn(recipes_in_table()),
                         [](const ::testing::TestParamInfo<std::string>& recipe_id) {
                           std::string name = recipe_id.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

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

// A scenario without a strategy object leaves every strategy key out: the recipe's strategy
// defaults apply as they do to the keys a strategy object leaves out, and the rest is searched.
TEST(FrameworkScenario, ARecipesStrategyDefaultsApplyWithoutAStrategyObject) {
  for (const auto& [id, rc] : {std::pair{"megatron-lm", Recompute::none}, std::pair{"torchtune", Recompute::full}}) {
    nlohmann::json j = scenario_with({{"framework", id}});
    j.erase("strategy");
    auto r = parse_scenario(j, real_catalogs());
    ASSERT_TRUE(r.has_value()) << id << ": " << to_string(r.error());
    EXPECT_TRUE(r->strategy_all_auto) << id;
    EXPECT_EQ(r->scenario.strategy.recompute, rc) << id;
    EXPECT_FALSE(r->scenario.strategy.tp.has_value()) << id;
  }
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

// torchtune trains in pure bf16 (its recipe's master_weights false); a scenario's
// training.master_weights overrides it; a non-boolean is an error naming the field.
TEST(FrameworkScenario, MasterWeightsComeFromTheRecipeOrTheScenario) {
  auto tt = parse_scenario(scenario_with({{"framework", "torchtune"}}), real_catalogs());
  ASSERT_TRUE(tt.has_value()) << to_string(tt.error());
  EXPECT_FALSE(tt->scenario.training.master_weights);
  EXPECT_DOUBLE_EQ(tt->scenario.training.optimizer_state_bytes(), 4.0);
  auto mixed = parse_scenario(scenario_with({{"framework", "torchtune"}, {"master_weights", true}}), real_catalogs());
  ASSERT_TRUE(mixed.has_value()) << to_string(mixed.error());
  EXPECT_TRUE(mixed->scenario.training.master_weights);
  EXPECT_DOUBLE_EQ(mixed->scenario.training.optimizer_state_bytes(), 12.0);
  auto bad = parse_scenario(scenario_with({{"master_weights", "no"}}), real_catalogs());
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(to_string(bad.error()).find("master_weights"), std::string::npos) << to_string(bad.error());
}

// The host time per op: the recipe's default (megatron-deepspeed: 80 us), a scenario's
// training.host_us_per_op over it, 0 for a recipe without one; out of range is an error naming it.
TEST(FrameworkScenario, HostTimePerOpComesFromTheRecipeOrTheScenario) {
  auto from_recipe = parse_scenario(scenario_with({{"framework", "megatron-deepspeed"}}), real_catalogs());
  ASSERT_TRUE(from_recipe.has_value()) << to_string(from_recipe.error());
  EXPECT_DOUBLE_EQ(from_recipe->scenario.training.host_s_per_op, 80e-6);
  auto given = parse_scenario(scenario_with({{"framework", "megatron-deepspeed"}, {"host_us_per_op", 12.5}}),
                              real_catalogs());
  ASSERT_TRUE(given.has_value()) << to_string(given.error());
  EXPECT_DOUBLE_EQ(given->scenario.training.host_s_per_op, 12.5e-6);
  auto none = parse_scenario(scenario_with({{"framework", "megatron-lm"}}), real_catalogs());
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->scenario.training.host_s_per_op, 0.0);
  auto bad = parse_scenario(scenario_with({{"host_us_per_op", -1}}), real_catalogs());
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(to_string(bad.error()).find("scenario#/training/host_us_per_op"), std::string::npos) << to_string(bad.error());
}

// The fused attention kernel's generation: flash2 unless the recipe says otherwise (llm-foundry's
// 2023 benchmark scripts ran its Triton FlashAttention: flash1); a scenario's own value wins; an
// unknown name is an error naming the field with a suggestion.
TEST(FrameworkScenario, AttentionKernelComesFromTheRecipeOrTheScenario) {
  auto dflt = parse_scenario(scenario_with({{"framework", "llm-foundry"}}), real_catalogs());
  ASSERT_TRUE(dflt.has_value()) << to_string(dflt.error());
  EXPECT_EQ(dflt->scenario.training.attention_kernel, AttentionKernel::flash2);
  auto old = parse_scenario(scenario_with({{"framework", "llm-foundry-2023"}}), real_catalogs());
  ASSERT_TRUE(old.has_value()) << to_string(old.error());
  EXPECT_EQ(old->scenario.training.attention_kernel, AttentionKernel::flash1);
  EXPECT_EQ(old->scenario.training.loss(), LossKernel::te);
  auto given = parse_scenario(scenario_with({{"framework", "llm-foundry-2023"}, {"attention_kernel", "flash2"}}),
                              real_catalogs());
  ASSERT_TRUE(given.has_value()) << to_string(given.error());
  EXPECT_EQ(given->scenario.training.attention_kernel, AttentionKernel::flash2);
  auto bad = parse_scenario(scenario_with({{"attention_kernel", "flash3"}}), real_catalogs());
  ASSERT_FALSE(bad.has_value());
  const std::string text = to_string(bad.error());
  EXPECT_NE(text.find("scenario#/training/attention_kernel"), std::string::npos) << text;
  EXPECT_NE(text.find("unknown attention kernel 'flash3'"), std::string::npos) << text;
}

// DeepSpeed ZeRO-3's hook time per layer and pass: the DeepSpeed recipes' figure (2.8 ms, fitted
// on Qwen's ZeRO-3 full fine-tuning, data/frameworks.json), a scenario's own value instead, none
// for a recipe without DeepSpeed; a negative value is an error naming the field.
TEST(FrameworkScenario, Zero3HookTimeComesFromTheRecipeOrTheScenario) {
  for (const char* id : {"deepspeed", "megatron-deepspeed", "qwen-finetune"}) {
    auto from_recipe = parse_scenario(scenario_with({{"framework", id}}), real_catalogs());
    ASSERT_TRUE(from_recipe.has_value()) << id << ": " << to_string(from_recipe.error());
    EXPECT_DOUBLE_EQ(from_recipe->scenario.training.zero3_host_s_per_layer, 2.8e-3) << id;
  }
  auto given = parse_scenario(scenario_with({{"framework", "deepspeed"}, {"zero3_host_us_per_layer", 500}}),
                              real_catalogs());
  ASSERT_TRUE(given.has_value()) << to_string(given.error());
  EXPECT_DOUBLE_EQ(given->scenario.training.zero3_host_s_per_layer, 500e-6);
  for (const char* id : {"megatron-lm", "pytorch-fsdp", "hf-trainer"}) {
    auto none = parse_scenario(scenario_with({{"framework", id}}), real_catalogs());
    ASSERT_TRUE(none.has_value()) << id;
    EXPECT_EQ(none->scenario.training.zero3_host_s_per_layer, 0.0) << id;
  }
  auto bad = parse_scenario(scenario_with({{"zero3_host_us_per_layer", -1}}), real_catalogs());
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(to_string(bad.error()).find("scenario#/training/zero3_host_us_per_layer"), std::string::npos)
      << to_string(bad.error());
}

// A boolean training field with a recipe default: the recipe `off_recipe` sets it false, a
// scenario's key overrides that, `on_recipe` (and capplan's default, true) leave it on, and a
// non-boolean is an error naming the field.
void expect_boolean_recipe_field(const char* key, bool sim::TrainingJob::*field, const char* off_recipe,
                                 const char* on_recipe) {
  SCOPED_TRACE(key);
  auto from_recipe = parse_scenario(scenario_with({{"framework", off_recipe}}), real_catalogs());
  ASSERT_TRUE(from_recipe.has_value()) << to_string(from_recipe.error());
  EXPECT_FALSE(from_recipe->scenario.training.*field);
  auto given = parse_scenario(scenario_with({{"framework", off_recipe}, {key, true}}), real_catalogs());
  ASSERT_TRUE(given.has_value()) << to_string(given.error());
  EXPECT_TRUE(given->scenario.training.*field);
  auto on = parse_scenario(scenario_with({{"framework", on_recipe}}), real_catalogs());
  ASSERT_TRUE(on.has_value()) << to_string(on.error());
  EXPECT_TRUE(on->scenario.training.*field);
  auto none = parse_scenario(scenario_with(nlohmann::json::object()), real_catalogs());
  ASSERT_TRUE(none.has_value()) << to_string(none.error());
  EXPECT_TRUE(none->scenario.training.*field);
  auto bad = parse_scenario(scenario_with({{key, 3}}), real_catalogs());
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(to_string(bad.error()).find(std::string("scenario#/training/") + key), std::string::npos)
      << to_string(bad.error());
}

// Pipeline p2p batching: megatron-deepspeed's recipe says blocking calls (DeepSpeed's
// PipelineEngine); Megatron-LM batches them (capplan's default).
TEST(FrameworkScenario, PipelineP2pBatchingComesFromTheRecipeOrTheScenario) {
  expect_boolean_recipe_field("pp_p2p_batched", &sim::TrainingJob::pp_p2p_batched, "megatron-deepspeed", "megatron-lm");
}

// The asynchronous input-gradient collective: the BigScience fork's recipe says synchronous
// (copy_to_tensor_model_parallel_region); Megatron-Core's recipes and capplan's default have it on.
TEST(FrameworkScenario, AsyncInputGradientCollectiveComesFromTheRecipeOrTheScenario) {
  expect_boolean_recipe_field("tp_async_dgrad", &sim::TrainingJob::tp_async_dgrad, "megatron-deepspeed",
                              "megatron-bridge");
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
