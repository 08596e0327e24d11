// SPDX-License-Identifier: Apache-2.0
// Private to sim/src/lowering/: the blocks of a step's op list, one file each, in the order
// build_ops (step_model.cpp) lowers them. Each appends its ops through the one builder, reading
// the one context of the step (lowering_context.hpp).
#pragma once
#include <cstdint>

#include "capplan/sim/lowering/ops.hpp"
#include "lowering/lowering_context.hpp"
#include "lowering/op_list_builder.hpp"

namespace capplan::sim::lowering {

// attention.cpp: the layer's residual stream, RoPE, Q/K/V projections, the attention core, the
// output projection and the TP collectives around them.
void lower_attention(OpListBuilder& b, const Context& cx);
// serving_attention.cpp: a serving pass's attention core (KV cache write, prefill, decode).
void lower_serving_attention(OpListBuilder& b, const Context& cx);
// mlp.cpp: the dense FFN block of a layer (a hybrid pattern's MLP layer).
void lower_dense_ffn(OpListBuilder& b, const Context& cx);
// mlp.cpp: one FFN of `scope`, `kernels` GEMMs of `rows` rows each (the MoE block's experts run it
// too). `rows_mean`: the rows all `kernels` process together, mean-loaded (model FLOPs and kept
// bytes); `conv_scale` scales the model FLOPs; `tp_block`: its up projection is a TP block's
// column-parallel linear.
void lower_ffn(OpListBuilder& b, const Context& cx, const char* up_name, const char* down_name, std::int64_t rows,
               double rows_mean, std::int64_t inner, double kernels, Scope scope, OpRole act_role, double conv_scale,
               bool tp_block = true);
// moe.cpp: the MoE block of an MoE layer (routed and shared experts).
void lower_moe(OpListBuilder& b, const Context& cx);
// mamba.cpp: the Mamba-2 mixer of a hybrid model's M layers.
void lower_mamba(OpListBuilder& b, const Context& cx);
// embedding_output.cpp: the embedding (first stage), the output layer and the loss or sampling
// (last stage).
void lower_embedding_and_output(OpListBuilder& b, const Context& cx);
// pipeline_p2p.cpp: the send / recv of activations and gradients at a stage boundary.
void lower_pipeline_p2p(OpListBuilder& b, const Context& cx);
// data_parallel.cpp: the data-parallel and ZeRO collectives and the optimizer step for the
// stage's `params` (the most loaded stage's).
void lower_data_parallel_and_optimizer(OpListBuilder& b, const Context& cx, const StageParams& params);

}  // namespace capplan::sim::lowering
