// SPDX-License-Identifier: Apache-2.0
// The scenario's `training` section: tokens, batch, precision and the framework's kernels.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "capplan/sim/workload/finetune.hpp"
#include "capplan/sim/workload/hardware.hpp"

namespace capplan::sim {

// How the framework runs the element-wise parts of a layer.
// megatron: fused kernels (Megatron-LM / Megatron-Core / NeMo with Apex and Transformer Engine:
//           one kernel per norm, RoPE, activation, bias-dropout-add);
// pytorch:  eager PyTorch modules as in torchtitan, llm-foundry, fms-fsdp (each tensor operation
//           its own kernel and HBM round trip: RMSNorm as six kernels in fp32, RoPE through complex
//           views, SwiGLU as silu + mul, a copy for the attention output layout).
enum class Framework { megatron, pytorch };
const char* to_string(Framework f);
std::optional<Framework> framework_from_string(const std::string& s);

// The kernels that compute the loss (softmax cross-entropy over the vocabulary, fp32 math on
// 16-bit logits). HBM bytes per logit element, forward + backward (docs/model.md, section 1):
// unfused: Megatron's VocabParallelCrossEntropy as separate PyTorch ops (Megatron-LM's default):
//          cast 6, max 4, subtract 8, exp 8, sum 4, normalise 8 | scale by dloss 8, cast back 6;
// fused:   Megatron-Core's cross_entropy_loss_fusion (jit-fused; NeMo 2 and Megatron-Bridge turn
//          it on): cast+max 6, subtract+exp+sum 8, normalise 8 | scale 8, cast back 6;
// te:      Transformer Engine's parallel cross-entropy (cross_entropy_fusion_impl "te"): an online
//          softmax pass over the 16-bit logits, then one pass writing the gradient in place:
//          2 + 2 + 2 | scale the stored gradient 4;
// eager:   torch.nn.functional.cross_entropy on .float() logits (torchtitan, llm-foundry):
//          cast 6, log_softmax max/sum/write 16 | nll grad fill 4, log_softmax backward 16,
//          cast back 6.
enum class LossKernel { unfused, fused, te, eager };
const char* to_string(LossKernel k);
std::optional<LossKernel> loss_kernel_from_string(const std::string& s);
struct LossBytes {
  double forward = 0;   // bytes per logit element
  double backward = 0;
};
LossBytes loss_bytes_per_logit(LossKernel k);

// The fused attention kernel a framework runs (ModelSpec::flash_attention on).
// flash2: FlashAttention-2 or newer (flash-attn >= 2, cuDNN / Transformer Engine fused attention,
//         PyTorch SDPA's flash backend): the GPU's flash_attention_efficiency.
// flash1: a kernel of the FlashAttention-1 generation: flash-attn 1.x, or the Triton FlashAttention
//         of 2023 (llm-foundry's attn_impl "triton", compiled by the pre-MLIR Triton). No
//         Hopper-specific instructions and half of FlashAttention-2's work partitioning: 68-69
//         TFLOP/s on A100 against FlashAttention-2's 155, 108 on H100 against 265 (causal, head dim
//         128, 2k tokens, forward + backward; FlashAttention-2 README charts, Dao-AILab/
//         flash-attention @4f285b35 assets/flash2_{a100,h100}_fwd_bwd_benchmark.png): the GPU's
//         flash_attention_v1_efficiency.
enum class AttentionKernel { flash2, flash1 };
const char* to_string(AttentionKernel k);
std::optional<AttentionKernel> attention_kernel_from_string(const std::string& s);

// How FP8 training scales each tensor before the cast (Transformer Engine recipes). delayed:
// DelayedScaling, the scale comes from an amax history and the fused cast + transpose records
// this tensor's amax on the fly (read 16-bit 2, write row- and column-major FP8 1 + 1 = 4 bytes
// per element). current: Float8CurrentScaling ("tensorwise"), the scale comes from this tensor's
// own amax, computed by a separate pass before the cast (one more 16-bit read: 6 bytes).
// mxfp8: MXFP8BlockScaling (Blackwell tensor cores): one E8M0 scale per 32 consecutive elements,
// computed by the cast kernel itself (OCP Microscaling Formats spec v1.0: blocks of 32), row- and
// column-wise: 2 + 1 + 1 + 2/32 bytes.
enum class Fp8Recipe { delayed, current, mxfp8 };
const char* to_string(Fp8Recipe r);
std::optional<Fp8Recipe> fp8_recipe_from_string(const std::string& s);
double fp8_cast_bytes_per_element(Fp8Recipe r);
// Kernels Transformer Engine launches to quantise one tensor, and whether the quantisations of a
// grouped GEMM's per-expert inputs fuse into one launch (TransformerEngine v2.7
// transformer_engine/pytorch/csrc/extensions/cast.cpp, multi_tensor_quantize_impl: "only have
// fused kernel for FP8 delayed scaling", nvte_multi_cast_transpose; any other quantizer quantises
// each tensor on its own; csrc/quantizer.cpp, Float8CurrentScalingQuantizer::quantize_impl:
// nvte_compute_amax, nvte_compute_scale_from_amax, nvte_quantize_v2 per tensor).
// delayed: 1, fused; current: 3 per tensor; mxfp8: 1 per tensor.
double fp8_cast_kernels_per_tensor(Fp8Recipe r);
bool fp8_casts_fuse_across_tensors(Fp8Recipe r);

struct TrainingJob {
  double tokens = 0;             // total training tokens
  std::int64_t global_batch = 0;  // sequences per optimizer step
  // The global batch as asked in tokens (0: asked in sequences, as global_batch). global_batch is
  // then derived from it for each cluster and fixed strategy (global_batch.hpp).
  double global_batch_tokens = 0;
  Precision precision = Precision::bf16;
  Framework framework = Framework::megatron;
  // The recipe (data/frameworks.json) the defaults below were resolved from; echoed in output.
  std::string framework_id = "megatron";
  // Compute that overlaps communication runs this much slower (NCCL kernels take SMs and HBM
  // bandwidth): Lee et al. 2025 (arXiv:2507.03114) measure 18.9% on average on A100 and H100
  // (up to 40%). 0 would be ideal overlap.
  double overlap_compute_slowdown = 0.189;
  // Empty: the framework's default (megatron: fused, pytorch: eager).
  std::optional<LossKernel> loss_kernel;
  AttentionKernel attention_kernel = AttentionKernel::flash2;

  // Gradients accumulated and reduced over data parallelism in fp32 instead of the 16-bit
  // training precision. Empty: the framework's default. Megatron-LM forces it for bf16 (and FP8,
  // which runs on --bf16): `accumulate_allreduce_grads_in_fp32 = True` in
  // megatron/training/arguments.py; NeMo 2's bf16_mixed plugin sets grad_reduce_in_fp32=True.
  // With fp16 Megatron keeps 16-bit gradient buffers. PyTorch FSDP as torchtitan runs it reduces
  // in fp32 (mixed_precision_reduce = "float32"). What it costs: 4-byte gradient buffers, twice
  // the gradient bytes on the data-parallel reduce(-scatter), a 4-byte gradient read in Adam.
  std::optional<bool> grad_reduce_in_fp32;
  // FP8 scaling recipe (only read when precision is fp8); Megatron-LM's and TE's default.
  Fp8Recipe fp8_recipe = Fp8Recipe::delayed;
  // FP8 parameters (only read when precision is fp8): the model keeps its weights in FP8 and the
  // distributed optimizer or FSDP all-gathers them in FP8 (Megatron --fp8-param-gather, TE
  // fp8_model_init; on in NeMo 2's and Megatron-Bridge's FP8 recipes, off by default in
  // Megatron-LM). Weights take 1 byte plus the cached transpose instead of 16 bits plus an FP8
  // copy and its transpose; gathers move 1 byte per parameter; Adam writes the FP8 weight.
  bool fp8_params = false;
  // Host time to issue one op of the op list: the CUDA launch plus the framework's dispatch
  // (Python, autograd, module hooks) of the several kernels that op stands for. The host runs
  // ahead of the GPU, so a micro-batch of a stage takes the longer of its GPU time and its host
  // time (schedule/step_timing.cpp). 0: no figure of the framework's own (the step then takes
  // the cost model's launch floor).
  double host_s_per_op = 0;
  // Whether host_s_per_op is a figure (the recipe's or the scenario's) rather than none. With
  // none the step is priced at the launch floor, the fastest host there is, and the error band
  // widens down to what an eager framework's host would give (uncertainty.hpp, InputSpread).
  bool host_time_known = false;
  // Pipeline send and receive of a micro-batch batched into one call per neighbour, as
  // Megatron-LM does (megatron/core/pipeline_parallel/p2p_communication.py,
  // send_forward_recv_backward / send_backward_recv_forward through batch_isend_irecv): a stage
  // waits for one transfer after its forward and one after its backward. false: separate blocking
  // calls, as DeepSpeed's PipelineEngine makes them (deepspeed/runtime/pipe/p2p.py @f4079d7: send and
  // recv assert async_op == False, dist.send / dist.recv; schedule.py @af8f259 TrainSchedule.steps:
  // RecvActivation, SendGrad, ForwardPass and SendActivation, RecvGrad, BackwardPass): the
  // stage waits for four transfers per micro-batch, its receives as well as its sends
  // (lowering adds the two receives to the op list).
  bool pp_p2p_batched = true;
  // A column-parallel linear's backward issues its input-gradient all-reduce (reduce-scatter
  // under sequence parallelism) asynchronously and computes its weight gradient meanwhile; under
  // sequence parallelism the re-gather of its input for that weight gradient runs during the
  // input-gradient GEMM. Megatron-LM since 2021-09 (`--no-async-tensor-model-parallel-allreduce`
  // turns it off; megatron/core/tensor_parallel/layers.py,
  // LinearWithGradAccumulationAndAsyncCommunication.backward, NVIDIA/Megatron-LM @d98e8a6),
  // Microsoft's Megatron-DeepSpeed (the same class) and Transformer Engine's Linear and
  // LayerNormLinear (module/linear.py backward, `allreduce(dgrad, ..., async_op=True)` and
  // `reduce_scatter_along_first_dim(..., async_op=True)` before the wgrad GEMM, v2.8). false: the
  // collective runs before the GEMM that follows it (PyTorch DTensor's tensor parallelism).
  bool tp_async_dgrad = true;
  // Megatron's FusedScaleMaskSoftmax (unfused attention) falls back to PyTorch ops when its CUDA
  // kernel does not take the shape (lowering/attention.cpp, megatron_fused_softmax_runs). false: the
  // softmax is always one kernel each way (capplan's own layer-step runners, sim/layer_step.hpp).
  bool softmax_kernel_limits = true;
  // ZeRO-3 parameter prefetch: parameter elements gathered ahead of the submodule that runs, at
  // least the next parameter tensor (DeepSpeed's stage3_prefetch_bucket_size, 5e7). A gather
  // then hides only behind the compute of the submodules it was issued during, not behind the
  // whole layer before it (schedule/step_timing.cpp). 0: whole layers (or FSDP units) are
  // prefetched one ahead, as PyTorch FSDP and Megatron's distributed optimizer do.
  double zero3_prefetch_params = 0;
  // ZeRO-3 under full recomputation: the recomputed forward gathers each layer's parameters again
  // and releases them after it, so backward gathers them a third time (DeepSpeed: every submodule
  // forward fetches and then releases its parameters, the recomputed one included, and every
  // submodule backward fetches them again; deepspeed/runtime/zero/parameter_offload.py
  // pre/post_sub_module_forward_function and pre_sub_module_backward_function, and
  // deepspeedai/DeepSpeed#4784 on the recompute running through the forward hooks). false: the
  // recomputed forward's gather serves the backward (two gathers per micro-batch).
  bool zero3_regather_recompute = false;
  // Host time DeepSpeed's ZeRO-3 hooks add per transformer layer and pass (forward, recomputed
  // forward, backward), on top of host_s_per_op: every submodule's forward and backward runs
  // Python hooks that fetch its parameters, record and wait on events, trace the prefetch order
  // and release them again, and every parameter's gradient runs a hook that copies it into the
  // partitioned buffer (deepspeed/runtime/zero/parameter_offload.py, partitioned_param_coordinator.py
  // fetch_sub_module / release_sub_module, stage3.py reduce_partition_and_remove_grads). They run
  // even with one rank, where nothing is gathered. fetch_sub_module synchronises on the event
  // recorded three fetches back, so the host cannot run far ahead of the GPU: the hooks add to
  // the host time a micro-batch needs (schedule/step_timing.cpp). Only when the stage is ZeRO-3;
  // 0: no such hooks (PyTorch FSDP's per-unit hooks are part of host_s_per_op).
  double zero3_host_s_per_layer = 0;
  // What the step trains (finetune.hpp): everything by default (pre-training, full SFT); LoRA and
  // QLoRA freeze the base and train adapters. The op list drops the weight gradients of frozen
  // weights, adds the adapters' GEMMs and the 4-bit base's dequantisation; data-parallel
  // reduction, optimizer, gradients and optimizer state cover the trained parameters only.
  FinetuneSpec finetune;
  // Keys each query attends over on average (FinetuneShape::attention_tokens; 0: the whole
  // sequence): fewer when packed documents are masked apart, more for unpacked samples of varying
  // length.
  double attention_tokens = 0;

  // false: pure low-precision training. The weights, their gradients and the optimizer's moments
  // are all in the training dtype (bf16 or fp16) and the optimizer updates the 16-bit weights in
  // place, with no fp32 master copy (torchtune: "we don't support mixed-precision training",
  // docs/source/tutorials/memory_optimizations.rst). Ignored for fp32 / tf32 and FP8 training.
  bool master_weights = true;

  bool fp8_weights() const { return precision == Precision::fp8 && fp8_params; }
  // Pure 16-bit training (master_weights false with bf16 or fp16).
  bool pure_low_precision() const {
    return !master_weights && (precision == Precision::bf16 || precision == Precision::fp16);
  }
  // Mixed precision: 16-bit (or FP8) compute weights beside fp32 master weights in the optimizer.
  // fp32 / tf32 training holds one fp32 copy of each weight, which the optimizer updates in place.
  bool mixed_precision() const {
    return precision != Precision::fp32 && precision != Precision::tf32 && !pure_low_precision();
  }
  // Bytes per parameter of the weights a GPU holds for compute (FP8 training adds the FP8 copy
  // and its transpose to the 16-bit weight; FP8 parameters are 1 byte plus the transpose), and of
  // one parameter as the model stores and gathers it.
  double weight_bytes() const {
    if (precision != Precision::fp8) return element_bytes(precision);
    return fp8_params ? 1.0 + 1.0 : 2.0 + 2.0;
  }
  double gathered_param_bytes() const {
    if (precision == Precision::fp8) return fp8_params ? 1.0 : 2.0;
    return element_bytes(precision);
  }
  // Adam's state per parameter: fp32 master, momentum and variance under mixed precision
  // (Rajbhandari et al. 2020, Sec. 3.1: K = 12); momentum and variance alone in fp32 training.
  // Pure 16-bit training: the two moments in the training dtype (2 + 2).
  double optimizer_state_bytes() const {
    if (pure_low_precision()) return 2.0 * element_bytes(precision);
    return mixed_precision() ? 12.0 : 8.0;
  }
  // HBM bytes of one Adam step per parameter: read and write the fp32 state (master, m, v; in
  // fp32 training the weight itself, m, v), read the gradient, and under mixed precision write
  // the compute weight: 12 + 12 + 2 + 2 = 28 with 16-bit gradients, 30 with fp32 ones.
  // Pure 16-bit training: read and write the weight and both moments (3 x 2 x 2) and read the
  // 16-bit gradient: 14.
  double adam_step_bytes() const {
    if (pure_low_precision()) return 2.0 * (element_bytes(precision) + optimizer_state_bytes()) + gradient_bytes();
    const double state = mixed_precision() ? 12.0 : 4.0 + 8.0;
    return 2.0 * state + gradient_bytes() + (mixed_precision() ? gathered_param_bytes() : 0.0);
  }
  // Bytes per parameter a checkpoint writes: the model's weights as stored (16-bit, FP8 with FP8
  // parameters, fp32) and the optimizer state (Megatron's distributed optimizer saves the fp32
  // master, momentum and variance).
  double checkpoint_bytes_per_param() const { return gathered_param_bytes() + optimizer_state_bytes(); }

  LossKernel loss() const {
    return loss_kernel.value_or(framework == Framework::pytorch ? LossKernel::eager : LossKernel::fused);
  }
  bool fp32_gradients() const {
    if (precision == Precision::fp32 || precision == Precision::tf32) return true;
    if (pure_low_precision()) return false;  // the gradients have the weights' dtype
    return grad_reduce_in_fp32.value_or(precision != Precision::fp16);
  }
  // Bytes of one gradient element in the gradient buffers and on the data-parallel reduction.
  double gradient_bytes() const { return fp32_gradients() ? 4.0 : 2.0; }
};

}  // namespace capplan::sim
