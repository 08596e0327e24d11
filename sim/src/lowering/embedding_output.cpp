// SPDX-License-Identifier: Apache-2.0
// The embedding (first stage) and the output layer with the loss (last stage): a training step's
// logits and vocabulary-parallel cross-entropy, a serving pass's logits and sampling for the rows
// that sample a token.
#include <cstdint>

#include "lowering/blocks.hpp"

namespace capplan::sim::lowering {
namespace {

// A serving pass's output layer.
void serving_logits(OpListBuilder& b, const Context& cx) {
  const ModelSpec& m = cx.m;
  const std::int64_t t = cx.t, h = cx.h;
  const double act = cx.act, hd = cx.hd;
  // Serving: logits only for the rows that sample a token (vLLM's LogitsProcessor selects them
  // before lm_head, which quantisation recipes leave in 16 bits), gathered over the TP ranks'
  // vocabulary shards, then softmax and sampling over fp32 logits (read 16-bit, write fp32, read).
  const std::int64_t rows = cx.pass.logits_rows;
  const double rd = static_cast<double>(rows), vd = static_cast<double>(m.vocab);
  if (rows > 0) {
    b.linear(Tuned{0, false, true}, "logits", "logits_dgrad", "logits_wgrad", rows, m.vocab / t, h, cx.attn_dt,
             Scope::output, 0, 2.0 * rd * hd * vd / static_cast<double>(t));
    if (t > 1) {
      b.add(CollectiveOp{"logits_all_gather", CollectiveKind::all_gather, units::bytes(act * rd * vd), cx.tp_group},
            Phase::forward, Scope::output, 1.0, OpRole::collective);
    }
    b.add(MemoryOp{"sampling", units::bytes((act + 8.0) * rd * vd)}, Phase::forward, Scope::output, 1.0,
          OpRole::loss);
  }
}

// A training step's output layer, its loss and the TP collectives around them.
void training_output(OpListBuilder& b, const Context& cx) {
  const ModelSpec& m = cx.m;
  const std::int64_t t = cx.t, tokens = cx.tokens, h = cx.h;
  const double act = cx.act, td = cx.td, hd = cx.hd;
  // The output layer stays in 16 bits under FP8 (and FP4) training: Megatron-Core builds it as
  // its own tensor_parallel.ColumnParallelLinear, not a Transformer Engine module, so
  // fp8_autocast, which quantises TE modules only, leaves it in the parameters' dtype
  // (megatron/core/models/gpt/gpt_model.py and models/mamba/mamba_model.py, Megatron-LM
  // @007562f); the FP8 recipes of other stacks keep the LM head out likewise. Its GEMMs therefore
  // run at the 16-bit rate and need no FP8 casts, as the attention core's do (attn_dt).
  b.linear(Tuned{0, false, true}, "logits", "logits_dgrad", "logits_wgrad", tokens, m.vocab / t, h, cx.attn_dt,
           Scope::output, 0, 2.0 * td * hd * static_cast<double>(m.vocab) / static_cast<double>(t));
  // Vocabulary-parallel cross-entropy: the loss kernels' own passes over this rank's logits
  // (sim/workload.hpp, LossKernel). It keeps the 16-bit logits and their fp32 softmax for one
  // micro-batch (the last stage runs each micro-batch's backward right after its forward).
  {
    const double logits = td * static_cast<double>(m.vocab / t);
    const LossBytes loss = loss_bytes_per_logit(cx.job.loss());
    b.add(MemoryOp{"cross_entropy", units::bytes(loss.forward * logits)}, Phase::forward, Scope::output, 1.0,
          OpRole::loss, 0, (act + 4.0) * td * static_cast<double>(m.vocab) / static_cast<double>(t));
    b.add(MemoryOp{"cross_entropy", units::bytes(loss.backward * logits)}, Phase::backward, Scope::output, 1.0,
          OpRole::loss);
  }
  if (t > 1) {
    const units::Bytes msg = units::bytes(act * td * hd);
    if (cx.p.sequence_parallel) {
      b.add(CollectiveOp{"tp_all_gather", CollectiveKind::all_gather, msg, cx.tp_group}, Phase::forward, Scope::output,
            1.0, OpRole::collective);
      b.add(CollectiveOp{"tp_reduce_scatter", CollectiveKind::reduce_scatter, msg, cx.tp_group}, Phase::backward,
            Scope::output, 1.0, OpRole::collective);
    } else {
      b.add(CollectiveOp{"tp_all_reduce", CollectiveKind::all_reduce, msg, cx.tp_group}, Phase::backward, Scope::output,
            1.0, OpRole::collective);
    }
  }
}

}  // namespace

void lower_embedding_and_output(OpListBuilder& b, const Context& cx) {
  const double act = cx.act, tsp = cx.tsp, hd = cx.hd;
  // The embedding output is kept as the first layer's input.
  b.elementwise("embedding", 2.0 * act * tsp * hd, Scope::embedding, OpRole::embedding, 1.0, act * tsp * hd);
  b.elementwise("final_layernorm", 2.0 * act * tsp * hd, Scope::output, OpRole::norm);
  if (cx.serving()) {
    serving_logits(b, cx);
  } else {
    training_output(b, cx);
  }
}

}  // namespace capplan::sim::lowering
