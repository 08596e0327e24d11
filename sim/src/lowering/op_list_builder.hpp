// SPDX-License-Identifier: Apache-2.0
// Private to sim/src/lowering/: the helper that appends the ops of one step (each with its role,
// FLOPs, kept bytes and recompute flag, as RecomputePolicy decides) and the attention work fraction
// of fused kernels. Its LoRA ops are defined in lora_adapters.cpp.
#pragma once
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "capplan/sim/lowering/ops.hpp"
#include "capplan/sim/lowering/recompute_policy.hpp"
#include "capplan/sim/lowering/scope.hpp"
#include "capplan/sim/lowering/step_model.hpp"
#include "capplan/sim/workload/workload.hpp"

namespace capplan::sim::lowering {

// What fine-tuning changes about the linear layers (FinetuneSpec, read through TrainingJob).
struct TuneContext {
  FinetuneSpec spec;
  double layer_share = 1.0;  // share of the layers whose base weights are trained
  bool eager = false;        // adapters added by eager PyTorch ops (scale, then add)
  Precision adapter_dtype = Precision::bf16;
  double act_bytes = 2.0;    // bytes per activation element
  GroupPlacement tp_group;   // TP communicator (a small all-reduce per adapted linear when tp > 1)
};

// How one linear layer is tuned: its adapter target bits (finetune.hpp LoraTarget; 0: never
// adapted, e.g. the MoE router), whether its input is split over TP (row-parallel: the attention
// output and FFN down projections), and whether it is the output layer (trained with the
// embeddings).
struct Tuned {
  unsigned targets = 0;
  bool row_parallel = false;
  bool output_layer = false;
};

class OpListBuilder {
 public:
  OpListBuilder(std::vector<StepOp>& ops, StepOpParts parts, double fp8_cast_bytes, const RecomputePolicy& policy,
                TuneContext tune = {})
      : ops_(ops), parts_(static_cast<unsigned>(parts)), fp8_cast_bytes_(fp8_cast_bytes), policy_(policy),
        tune_(tune) {}
  const RecomputePolicy& policy() const { return policy_; }
  // How the FP8 casts launch (fp8_cast_kernels_per_tensor, fp8_casts_fuse_across_tensors): the
  // default, one fused launch per linear, is the delayed recipe's (and serving's).
  void set_fp8_cast_kernels(double per_tensor, bool fused_across_tensors) {
    fp8_cast_kernels_ = per_tensor;
    fp8_casts_fused_ = fused_across_tensors;
  }
  // An inference pass (serving): only forward ops are kept, and the layers' weights are read in
  // their stored format (`weight_bytes` per element with its scales; 0: the GEMM's dtype).
  void set_inference(double weight_bytes) {
    forward_only_ = true;
    weight_bytes_ = weight_bytes;
  }
  // Appends one op (kept only when it belongs to the requested parts). `flops` and `saved` are
  // totals over the `count` repetitions (StepOp).
  void add(Op op, Phase phase, Scope scope, double count, OpRole role, double flops = 0, double saved = 0,
           bool recomputed = false) {
    if (parts_ != static_cast<unsigned>(StepOpParts::all) && (static_cast<unsigned>(part_of(op, scope)) & parts_) == 0) {
      return;
    }
    if (forward_only_ && phase != Phase::forward) return;
    // Built in place: a StepOp assembled on the stack and copied in stalls on store forwarding,
    // once per op of every op list a search builds.
    ops_.emplace_back(std::move(op), phase, scope, count, role, flops, saved, recomputed);
  }
  // The scopes repeated once per layer of their kind (a layer's ops: what recomputation,
  // freezing and adapters apply to).
  static bool in_layer(Scope scope) { return traits(scope).per_layer(); }
  // A forward op, its backward (`bwd_bytes`, `bwd_count` times) and, when the policy recomputes
  // ops of `role` in this scope, its recomputation.
  bool recomputes(OpRole role, Scope scope) const {
    return in_layer(scope) && policy_.recomputes(role, scope);
  }
  // A linear layer Y[T x n] = X[T x k] W[k x n] (`batch` independent ones, e.g. local experts):
  // forward, plus dgrad and wgrad in backward.
  // `kernels` > 1: that many separate GEMM kernels of this shape (experts run one after another).
  // `model_flops`: the forward FLOPs the model-FLOPs convention credits (< 0: the shape's own);
  // `saved`: bytes of its output kept for backward (the input is kept by its producer).
  void linear(const char* name, const char* dgrad, const char* wgrad, std::int64_t tokens, std::int64_t n,
              std::int64_t k, Precision dt, Scope scope, double saved = 0, double model_flops = -1,
              std::int64_t batch = 1, double kernels = 1.0) {
    linear(Tuned{}, name, dgrad, wgrad, tokens, n, k, dt, scope, saved, model_flops, batch, kernels);
  }
  // The same for a linear that fine-tuning may freeze, quantise or adapt (`tuned`): a frozen
  // weight has no weight-gradient GEMM (its dgrad still carries the gradient to the layers below);
  // a quantised one is dequantised to 16 bits before each GEMM that reads it; an adapted one adds
  // its LoRA GEMMs (lora()).
  void linear(const Tuned& tuned, const char* name, const char* dgrad, const char* wgrad, std::int64_t tokens,
              std::int64_t n, std::int64_t k, Precision dt, Scope scope, double saved = 0, double model_flops = -1,
              std::int64_t batch = 1, double kernels = 1.0) {
    if (tokens <= 0 || n <= 0 || k <= 0) return;
    GemmOp fwd{name, tokens, n, k, batch, dt};
    if (in_layer(scope)) fwd.weight_bytes = weight_bytes_;
    const double flops = model_flops >= 0 ? model_flops : fwd.flops().base() * kernels;
    const bool rc = recomputes(OpRole::linear, scope);
    const bool layer_op = in_layer(scope);
    const FinetuneSpec& ft = tune_.spec;
    const double trained = tuned.output_layer ? (ft.trains_embeddings() ? 1.0 : 0.0)
                                              : (layer_op ? tune_.layer_share : 1.0);
    add(fwd, Phase::forward, scope, kernels, OpRole::linear, flops, saved, rc);
    last_dgrad_ = last_wgrad_ = kNone;
    std::size_t before = ops_.size();
    add(GemmOp{dgrad, tokens, k, n, batch, dt}, Phase::backward, scope, kernels, OpRole::linear, flops);
    if (ops_.size() > before) last_dgrad_ = before;
    if (trained > 0) {
      before = ops_.size();
      add(GemmOp{wgrad, k, n, tokens, batch, dt}, Phase::backward, scope, kernels * trained, OpRole::linear,
          flops * trained);
      if (ops_.size() > before) last_wgrad_ = before;
    }
    if (rc) add(fwd, Phase::recompute, scope, kernels, OpRole::linear, flops);
    if (dt == Precision::fp8 || dt == Precision::fp4) {
      // Transformer Engine quantises each GEMM input to FP8 with a fused cast + transpose
      // (read 16-bit, write the row- and column-major FP8 copies: 2 + 1 + 1 bytes per element,
      // plus a 16-bit amax pass under current scaling; Fp8Recipe): the activation in forward,
      // the incoming gradient in backward. FP8 weights are cached across the micro-batches of
      // a step, so their casts are left out. Each of `kernels` GEMMs (the local experts) has its
      // own input; the recipe decides how many launches quantise them (set_fp8_cast_kernels).
      const double x = static_cast<double>(tokens) * static_cast<double>(k) * static_cast<double>(batch) * kernels;
      const double dy = static_cast<double>(tokens) * static_cast<double>(n) * static_cast<double>(batch) * kernels;
      const double launches = fp8_cast_kernels_ * (fp8_casts_fused_ ? 1.0 : kernels);
      const MemoryOp cast_x{"fp8_cast_transpose", units::bytes(fp8_cast_bytes_ * x / launches)};
      add(cast_x, Phase::forward, scope, launches, OpRole::fp8_cast, 0, 0, rc);
      add(MemoryOp{"fp8_cast_transpose", units::bytes(fp8_cast_bytes_ * dy / launches)}, Phase::backward, scope,
          launches, OpRole::fp8_cast);
      if (rc) add(cast_x, Phase::recompute, scope, launches, OpRole::fp8_cast);
    }
    if (layer_op && ft.quantized_base() && ft.base() == BaseFormat::int4) {
      // GPTQ int4 trains through AutoGPTQ's QuantLinear (transformers' GPTQConfig; the exllama
      // kernels have no backward). With 128 rows or more (kernel_switch_threshold) its forward
      // unpacks the whole matrix in eager PyTorch (qlinear_cuda.py): shift the packed int32 words
      // (read 0.5, write 4 bytes per weight), cast to int8 (4 + 1), mask (1 + 1), gather the zero
      // points (1) and subtract them (1 + 1 + 1), gather the scales (2) and multiply (2 + 1 + 2):
      // 22.5 bytes per weight in 7 kernels, then torch.matmul. Autograd keeps the 16-bit result for
      // the input-gradient GEMM, so backward dequantises nothing, and the copy is held as an
      // activation (one layer's worth under full recompute, which dequantises again).
      const double weights = static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(batch) * kernels;
      constexpr double kEagerBytes = 22.5, kEagerKernels = 7.0;
      const MemoryOp deq{"dequantize_base_eager", units::bytes(kEagerBytes / kEagerKernels * weights)};
      add(deq, Phase::forward, scope, kEagerKernels, OpRole::dequantize, 0, 2.0 * weights, rc);
      if (rc) add(deq, Phase::recompute, scope, kEagerKernels, OpRole::dequantize);
    } else if (layer_op && ft.quantized_base()) {
      // bitsandbytes' MatMul4Bit dequantises the whole 4-bit matrix into a 16-bit copy before the
      // cuBLAS GEMM, in forward, in the input-gradient GEMM (it keeps the 4-bit weight, not the
      // copy) and in recomputation: one fused kernel reading the 4-bit weight and its scales,
      // writing 2 bytes per weight.
      const double weights = static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(batch) * kernels;
      const MemoryOp deq{"dequantize_base", units::bytes((ft.quantized_bytes_per_param() + 2.0) * weights)};
      add(deq, Phase::forward, scope, 1.0, OpRole::dequantize, 0, 0, rc);
      add(deq, Phase::backward, scope, 1.0, OpRole::dequantize);
      if (rc) add(deq, Phase::recompute, scope, 1.0, OpRole::dequantize);
    }
    adapter(tuned, tokens, n, k, scope, batch, kernels);
  }
  // The LoRA adapter of a linear of `tuned.targets` when the job adapts them (a fused base GEMM,
  // such as Q, K and V in one, carries one adapter per part, as PEFT attaches them).
  void adapter(const Tuned& tuned, std::int64_t tokens, std::int64_t n, std::int64_t k, Scope scope,
               std::int64_t batch = 1, double kernels = 1.0) {
    const bool layer_op = in_layer(scope);
    if (!layer_op || !tune_.spec.adapted(tuned.targets) || tokens <= 0 || n <= 0 || k <= 0) return;
    lora(tuned, tokens, n, k, scope, recomputes(OpRole::linear, scope), batch, kernels);
  }
  // An element-wise kernel: forward moves `bytes`, backward about twice that (it reads the
  // saved input and the incoming gradient and writes the outgoing gradient).
  void elementwise(const char* name, double bytes, Scope scope, OpRole role, double count = 1.0, double saved = 0) {
    if (bytes <= 0) return;
    const bool rc = recomputes(role, scope);
    add(MemoryOp{name, units::bytes(bytes)}, Phase::forward, scope, count, role, 0, saved, rc);
    add(MemoryOp{name, units::bytes(2.0 * bytes)}, Phase::backward, scope, count, role);
    if (rc) add(MemoryOp{name, units::bytes(bytes)}, Phase::recompute, scope, count, role);
  }
  // One collective in forward and backward (and again when the forward is recomputed).
  // `backward_async`: the backward one is a column-parallel linear's asynchronous input-gradient
  // collective (StepOp::tp_async).
  void collective(const CollectiveOp& op, Scope scope, bool recompute, double count = 1.0,
                  bool backward_async = false) {
    add(op, Phase::forward, scope, count, OpRole::collective, 0, 0, recompute);
    const std::size_t before = ops_.size();
    add(op, Phase::backward, scope, count, OpRole::collective);
    if (backward_async && ops_.size() > before) ops_[before].tp_async = true;
    if (recompute) add(op, Phase::recompute, scope, count, OpRole::collective);
  }
  // A backward-only asynchronous TP collective (the sequence-parallel re-gather of a
  // column-parallel linear's input for its weight gradient).
  void async_backward_collective(const CollectiveOp& op, Scope scope, double count = 1.0) {
    const std::size_t before = ops_.size();
    add(op, Phase::backward, scope, count, OpRole::collective);
    if (ops_.size() > before) ops_[before].tp_async = true;
  }
  // The last linear() is a column-parallel one whose backward GEMMs hide its asynchronous
  // input-gradient collective (StepOp::tp_window): the weight gradient, and with `dgrad_too` the
  // input gradient (behind which the sequence-parallel re-gather runs).
  void last_linear_is_tp_window(bool dgrad_too) {
    if (last_wgrad_ != kNone) ops_[last_wgrad_].tp_window = true;
    if (dgrad_too && last_dgrad_ != kNone) ops_[last_dgrad_].tp_window = true;
  }

 private:
  // The LoRA ops of an adapted linear (lora_adapters.cpp); `rc`: recomputed with it.
  void lora(const Tuned& tuned, std::int64_t tokens, std::int64_t n, std::int64_t k, Scope scope, bool rc,
            std::int64_t batch, double kernels);

  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::vector<StepOp>& ops_;
  std::size_t last_dgrad_ = kNone, last_wgrad_ = kNone;  // the last linear()'s backward GEMMs
  unsigned parts_;
  double fp8_cast_bytes_;
  double fp8_cast_kernels_ = 1.0;
  bool fp8_casts_fused_ = true;
  const RecomputePolicy& policy_;
  TuneContext tune_;
  bool forward_only_ = false;
  double weight_bytes_ = 0;
};

// Share of the full s_q x s_kv score square a kernel computes. Unfused attention computes the
// whole square and masks it; fused kernels skip masked blocks: half for a causal mask, about
// w/s - w^2/(2 s^2) of it for a causal sliding window of w tokens.
// With windowed layers only every n-th (gpt-oss alternates), the per-layer figure is the average
// over the pattern: exact for the step's total, since the shapes are the same.
inline double attention_work_fraction(const ModelSpec& m) {
  if (!m.flash_attention) return 1.0;
  const double s = m.seq_len;
  if (m.sliding_window > 0 && m.sliding_window < m.seq_len) {
    const double w = m.sliding_window;
    const double windowed = std::min(0.5, w / s - w * w / (2.0 * s * s));
    const double share = 1.0 / std::max(1, m.sliding_window_every);
    return share * windowed + (1.0 - share) * 0.5;
  }
  return 0.5;
}

}  // namespace capplan::sim::lowering
