// SPDX-License-Identifier: Apache-2.0
// Private to sim/src/lowering/: the blocks of a step's op list, one file each, in the order
// build_ops (step_model.cpp) lowers them. Each appends its ops through the one builder, reading
// the one context of the step (lowering_context.hpp).
#pragma once
#include "lowering/lowering_context.hpp"
#include "lowering/op_list_builder.hpp"

namespace capplan::sim::lowering {

// attention.cpp: the layer's residual stream, RoPE, Q/K/V projections, the attention core, the
// output projection and the TP collectives around them.
void lower_attention(OpListBuilder& b, const Context& cx);
// serving_attention.cpp: a serving pass's attention core (KV cache write, prefill, decode).
void lower_serving_attention(OpListBuilder& b, const Context& cx);

}  // namespace capplan::sim::lowering
