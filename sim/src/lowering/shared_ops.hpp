// SPDX-License-Identifier: Apache-2.0
// Private to sim/src/lowering/: what several blocks (blocks.hpp) share: the tensor-parallel
// collectives around a TP-split block, the residual stream of a layer's sub-blocks
// (shared_ops.cpp), and the placement of a pair of pipeline ranks (placement.cpp).
#pragma once
#include "capplan/sim/lowering/ops.hpp"
#include "lowering/lowering_context.hpp"
#include "lowering/op_list_builder.hpp"

namespace capplan::sim {

// Two ranks of one pipeline, neighbours or the first and last stage: the pairs of the pipeline p2p
// and of the tied embedding's gradient all-reduce.
GroupPlacement pipeline_pair(const Parallelism& p, const Cluster& c);

}  // namespace capplan::sim

namespace capplan::sim::lowering {

// The TP collectives around a TP-split block of `scope` (nothing when tp = 1).
void tp_block_comm(OpListBuilder& b, const Context& cx, Scope scope);
// Called after the column-parallel linear of a TP block: its backward GEMMs are the window.
void tp_window(OpListBuilder& b, const Context& cx);
// The residual stream's ops around `n` sub-blocks of `scope` (norms, residual add, dropout).
void residual_stream(OpListBuilder& b, const Context& cx, Scope scope, double n);

}  // namespace capplan::sim::lowering
