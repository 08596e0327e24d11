// SPDX-License-Identifier: Apache-2.0
// The training section's fields: tokens, global batch, precision, framework and the switches its
// recipe gives defaults for, below /training. The rows are in the order of the command-line flags.
#include <string>

#include "capplan/data/fields.hpp"
#include "input/scenario/parser.hpp"

namespace capplan::data {
namespace {

using nlohmann::json;
using scenario_detail::kAbsurd;
using scenario_detail::kMaxBatchSequences;
using scenario_detail::kMaxBatchTokens;
using scenario_detail::kMaxTokens;

// fp4 is a serving (weight) format, not a training precision.
constexpr const char* kPrecisions[] = {"bf16", "fp16", "fp8", "tf32", "fp32"};
constexpr const char* kKernels[] = {"fused", "eager"};
constexpr const char* kLossKernels[] = {"unfused", "fused", "te", "eager"};
constexpr const char* kAttentionKernels[] = {"flash2", "flash1"};
constexpr const char* kFp8Recipes[] = {"delayed", "current", "mxfp8"};

template <bool sim::TrainingJob::*Member>
constexpr auto kSetFlag = [](sim::TrainingJob& t, const json& v) { t.*Member = v.get<bool>(); };

constexpr const char* kGroup = "Training";

const Field<sim::TrainingJob> kTraining[] = {
    {{.pointer = "tokens",
      .kind = FieldKind::count,
      .unit = "tokens",
      .min = 1,
      .max = kMaxTokens,
      .help = "total training tokens: a number or \"2T\" (binary \"2Ti\")",
      .bound = kAbsurd,
      .flag = {"--tokens", "SI", "Total training tokens, e.g. 2T (or 2Ti: binary)", kGroup}},
     nullptr},  // read by hand: required, except for fine-tuning, whose tokens are its dataset's
    {{.pointer = "global_batch",
      .kind = FieldKind::integer,
      .unit = "sequences",
      .min = 1,
      .max = kMaxBatchSequences,
      .help = "global batch in sequences, kept exactly as given",
      .bound = kAbsurd,
      .flag = {"--global-batch", "INT", "Global batch in sequences", kGroup}},
     nullptr},  // read by hand: this or global_batch_tokens
    {{.pointer = "global_batch_tokens",
      .kind = FieldKind::count,
      .unit = "tokens",
      .min = 1,
      .max = kMaxBatchTokens,
      .help = "global batch in tokens; \"4Mi\" = 2^22 exactly, \"4M\" = 4e6 rounded to sequences the layout can use",
      .bound = kAbsurd,
      .flag = {"--global-batch-tokens", "SI",
               "Global batch in tokens: 4Mi = 2^22 exactly, 4M = 4e6 rounded to sequences the layout can use",
               kGroup}},
     nullptr},  // read by hand: this or global_batch, converted to sequences of the model's length
    {{.pointer = "precision",
      .kind = FieldKind::choice,
      .help = "training precision",
      .flag = {"--precision", "NAME", "bf16, fp16, fp8, tf32 or fp32", kGroup},
      .choices = kPrecisions,
      .noun = "precision"},
     [](sim::TrainingJob& t, const json& v) { t.precision = *sim::precision_from_string(v.get<std::string>()); }},
    {{.pointer = "framework",
      .kind = FieldKind::text,
      .help = "framework recipe id (data/frameworks.json; capplan catalog frameworks)",
      .flag = {"--framework", "NAME",
               "Framework recipe id (capplan catalog frameworks; default megatron: fused kernels, capplan's defaults)",
               kGroup, "Framework recipe id (capplan catalog frameworks)"}},
     nullptr},  // read by hand: a catalog recipe, whose defaults fill the keys left out
    {{.pointer = "kernels",
      .kind = FieldKind::choice,
      .help = "kernel style",
      .choices = kKernels,
      .noun = "kernels"},
     // Overrides the recipe's kernel style: fused (Megatron/TE) or eager PyTorch element-wise kernels.
     [](sim::TrainingJob& t, const json& v) {
       t.framework = v.get<std::string>() == "fused" ? sim::Framework::megatron : sim::Framework::pytorch;
     }},
    {{.pointer = "loss_kernel",
      .kind = FieldKind::choice,
      .help = "loss kernels",
      .flag = {"--loss-kernel", "NAME",
               "Loss kernels: unfused, fused, te or eager (default: fused for megatron, eager for pytorch)", kGroup,
               "Loss kernels: unfused, fused, te or eager"},
      .choices = kLossKernels,
      .noun = "loss kernel"},
     [](sim::TrainingJob& t, const json& v) { t.loss_kernel = sim::loss_kernel_from_string(v.get<std::string>()); }},
    {{.pointer = "attention_kernel",
      .kind = FieldKind::choice,
      .help = "fused attention kernel generation (flash2: FlashAttention-2 or newer; flash1: flash-attn 1.x, the "
              "2023 Triton FlashAttention)",
      .flag = {"--attention-kernel", "NAME",
               "Fused attention kernel generation: flash2 (FlashAttention-2 or newer, default) or flash1 (flash-attn "
               "1.x, 2023 Triton FlashAttention)",
               kGroup, "Fused attention kernel generation: flash2 or flash1"},
      .choices = kAttentionKernels,
      .noun = "attention kernel"},
     [](sim::TrainingJob& t, const json& v) {
       t.attention_kernel = *sim::attention_kernel_from_string(v.get<std::string>());
     }},
    {{.pointer = "fp8_recipe",
      .kind = FieldKind::choice,
      .help = "FP8 scaling",
      .flag = {"--fp8-recipe", "NAME",
               "FP8 scaling: delayed (default), current (tensorwise: an extra amax pass per cast) or mxfp8 "
               "(Blackwell: scales per block of 32)",
               kGroup, "FP8 scaling: delayed (default), current or mxfp8"},
      .choices = kFp8Recipes,
      .noun = "FP8 recipe",
      .applies = [](const FieldUse& u) {
        return u.scenario.training.precision == sim::Precision::fp8 ||
               u.scenario.training.precision == sim::Precision::fp4;
      },
      .unused = "FP8 scaling applies only with precision fp8 or fp4"},
     [](sim::TrainingJob& t, const json& v) { t.fp8_recipe = *sim::fp8_recipe_from_string(v.get<std::string>()); }},
    {{.pointer = "fp8_params",
      .kind = FieldKind::boolean,
      .help = "FP8 weights, all-gathered in FP8",
      .flag = {"--fp8-params", "BOOL", "FP8 weights, all-gathered in FP8 (Megatron --fp8-param-gather; default false)",
               kGroup, "FP8 weights, all-gathered in FP8 (default false)"},
      .applies = [](const FieldUse& u) { return u.scenario.training.precision == sim::Precision::fp8; },
      .unused = "FP8 weights apply only with precision fp8"},
     kSetFlag<&sim::TrainingJob::fp8_params>},
    {{.pointer = "grad_reduce_in_fp32",
      .kind = FieldKind::boolean,
      .help = "accumulate and reduce gradients in fp32",
      .flag = {"--grad-reduce-fp32", "BOOL",
               "Accumulate and reduce gradients in fp32 (default: true for bf16/fp8, false for fp16)", kGroup}},
     [](sim::TrainingJob& t, const json& v) { t.grad_reduce_in_fp32 = v.get<bool>(); }},
    {{.pointer = "master_weights",
      .kind = FieldKind::boolean,
      .help = "fp32 master weights and optimizer state beside 16-bit weights (false: pure 16-bit training)",
      .flag = {"--master-weights", "BOOL",
               "fp32 master weights and optimizer state beside 16-bit weights (default true; false: pure 16-bit "
               "training, as torchtune)",
               kGroup}},
     // false: pure 16-bit training (no fp32 master copy; the optimizer state in the training dtype).
     kSetFlag<&sim::TrainingJob::master_weights>},
    {{.pointer = "overlap_compute_slowdown",
      .kind = FieldKind::number,
      .min = 0,
      .max = 1,
      .help = "compute slowdown while it overlaps communication (default 0.189)",
      .bound = "a fraction of the compute time; 0 = ideal overlap",
      .flag = {"--overlap-compute-slowdown", "FRACTION",
               "Compute slowdown while it overlaps communication (default 0.189)", kGroup, nullptr}},
     [](sim::TrainingJob& t, const json& v) { t.overlap_compute_slowdown = v.get<double>(); }},
    {{.pointer = "host_us_per_op",
      .kind = FieldKind::number,
      .unit = "us",
      .min = 0,
      .max = 1e4,
      .help = "host (CPU) time per launched operation, microseconds (default: the framework recipe's)",
      .bound = "10 ms per launch is no framework's dispatch"},
     // Host time per op of the op list (launch plus framework dispatch).
     [](sim::TrainingJob& t, const json& v) {
       t.host_s_per_op = v.get<double>() * 1e-6;
       t.host_time_known = true;
     }},
    {{.pointer = "zero3_host_us_per_layer",
      .kind = FieldKind::number,
      .unit = "us",
      .min = 0,
      .max = 1e6,
      .help = "DeepSpeed ZeRO-3 only: host (CPU) time of the parameter fetch/release and gradient hooks per layer "
              "and pass (forward, recomputed forward, backward), microseconds (default: the framework recipe's)",
      .bound = "a second per layer and pass is no hook's time"},
     [](sim::TrainingJob& t, const json& v) { t.zero3_host_s_per_layer = v.get<double>() * 1e-6; }},
    {{.pointer = "pp_p2p_batched",
      .kind = FieldKind::boolean,
      .help = "a micro-batch's pipeline send and receive batched into one call per neighbour, as Megatron-LM does "
              "(default true, or the framework recipe's); false: separate blocking calls, as DeepSpeed's "
              "PipelineEngine makes them"},
     kSetFlag<&sim::TrainingJob::pp_p2p_batched>},
    {{.pointer = "tp_async_dgrad",
      .kind = FieldKind::boolean,
      .help = "tensor parallelism: a column-parallel linear's input-gradient all-reduce (reduce-scatter with "
              "sequence parallelism) runs while its weight-gradient GEMM does, as Megatron-LM since 2021-09 and "
              "Transformer Engine do it (default true, or the framework recipe's; eager PyTorch frameworks never "
              "overlap it); false: it runs before the next kernel"},
     kSetFlag<&sim::TrainingJob::tp_async_dgrad>},
};

}  // namespace

std::span<const Field<sim::TrainingJob>> training_fields() { return kTraining; }

}  // namespace capplan::data
