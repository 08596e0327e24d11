// SPDX-License-Identifier: Apache-2.0
// Communication overlap options against hand derivations with a stub cost model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "capplan/sim/estimate/estimate.hpp"
#include "test_support.hpp"

namespace capplan::sim {
namespace {

// GEMMs at 1 PFLOP/s, element-wise kernels free, every tensor-parallel collective 1 us, every
// pipeline send 2 us (both far shorter than a layer's GEMMs); everything else free.
class Stub final : public OpCostModel {
 public:
  units::Seconds gemm(const GemmOp& op) const override { return units::seconds(op.flops().base() * 1e-15); }
  units::Seconds memory(const MemoryOp&) const override { return {}; }
  units::Seconds collective(const CollectiveOp& op) const override {
    if (op.axis == Axis::tp) return units::seconds(1e-6);
    if (op.axis == Axis::pp) return units::seconds(2e-6);
    return {};
  }
  std::string source() const override { return "stub"; }
};

Scenario llama_on(int gpus) {
  return test::scenario_of(test::llama2_70b(), test::job_of(8), test::cluster_of(test::h100_sxm(), gpus));
}

TEST(TpCommOverlap, FirstChunkStaysExposedAndTheRestSlowsTheGemms) {
  // tp = 8 with SP: per layer and micro-batch an all-gather + reduce-scatter pair around the
  // attention block and around the FFN, forward and backward (1 us each), all far shorter than
  // the GEMMs they overlap. Exposed per block = comm/8 + 0.189 * (comm - comm/8).
  Scenario s = llama_on(8);
  s.training.tp_async_dgrad = false;  // the plain schedule exposes every collective
  Parallelism p = test::layout(8, 1, 1, 1, Recompute::none, true);
  const Stub cost;
  const double plain = evaluate(s, p, cost).step.breakdown.tp_comm.base();
  p.tp_comm_overlap = true;
  const double overlapped = evaluate(s, p, cost).step.breakdown.tp_comm.base();
  const double factor = 1.0 / 8 + 0.189 * (1 - 1.0 / 8);
  // The output layer's collectives (not overlapped) are the same in both: subtract them.
  const double output = 2e-6;  // one all-gather forward + one reduce-scatter backward per micro-batch
  const double m = 8;          // micro-batches: global batch 8 / (micro-batch 1 * dp 1)
  EXPECT_NEAR(overlapped - m * output, factor * (plain - m * output), 1e-12);
}

// Collectives of one axis at a configurable duration; GEMMs at 1 PFLOP/s, the rest free.
class AxisStub final : public OpCostModel {
 public:
  AxisStub(Axis axis, double seconds) : axis_(axis), seconds_(seconds) {}
  units::Seconds gemm(const GemmOp& op) const override { return units::seconds(op.flops().base() * 1e-15); }
  units::Seconds memory(const MemoryOp&) const override { return {}; }
  units::Seconds collective(const CollectiveOp& op) const override {
    return op.axis == axis_ ? units::seconds(seconds_) : units::Seconds{};
  }
  std::string source() const override { return "one-axis stub"; }

 private:
  Axis axis_;
  double seconds_;
};

// Llama 2 70B, tp 8 without SP, one micro-batch of 4096 tokens, 8 micro-batches. Per layer the
// backward all-reduces of the QKV and FFN-up input gradients run during those linears' weight
// gradients (TrainingJob::tp_async_dgrad), which at 1 PFLOP/s take
//   QKV:    2 x 4096 x 8192 x (64 + 2 x 8) x 128 / 8 = 8.59e10 FLOPs = 85.9 us,
//   FFN up: 2 x 4096 x 8192 x 2 x 28672 / 8       = 4.81e11 FLOPs = 481.0 us.
// A 1 s all-reduce is exposed for all but its window, and the window runs 18.9% slower
// (overlap_compute_slowdown): each saves (1 - 0.189) x window. A 1 us one hides whole: it
// saves (1 - 0.189) x 1 us. Forward and output-layer collectives are the same either way.
TEST(TpAsyncDgrad, TheInputGradientAllReduceHidesBehindItsLinearsWeightGradient) {
  Scenario s = llama_on(8);
  const Parallelism p = test::layout(8, 1, 1, 1, Recompute::none);
  const double layers = 80, m = 8, keep = 1 - 0.189;
  const double qkv = 2.0 * 4096 * 8192 * (64 + 2 * 8) * 128 / 8 * 1e-15;
  const double up = 2.0 * 4096 * 8192 * 2 * 28672 / 8 * 1e-15;
  for (double comm : {1.0, 1e-6}) {
    const AxisStub cost(Axis::tp, comm);
    s.training.tp_async_dgrad = false;
    const double sync = evaluate(s, p, cost).step.breakdown.tp_comm.base();
    s.training.tp_async_dgrad = true;
    const double async = evaluate(s, p, cost).step.breakdown.tp_comm.base();
    const double saved_per_layer = keep * (std::min(comm, qkv) + std::min(comm, up));
    EXPECT_NEAR(sync - async, m * layers * saved_per_layer, 1e-9 * sync) << comm;
  }
  // Eager PyTorch (DTensor) issues the collective after both gradients: no overlap.
  s.training.framework = Framework::pytorch;
  const AxisStub cost(Axis::tp, 1e-6);
  s.training.tp_async_dgrad = false;
  const double eager_sync = evaluate(s, p, cost).step.breakdown.tp_comm.base();
  s.training.tp_async_dgrad = true;
  EXPECT_EQ(evaluate(s, p, cost).step.breakdown.tp_comm.base(), eager_sync);
}

// With sequence parallelism the backward of each block's column-parallel linear reduce-scatters
// its input gradient during the weight-gradient GEMM and gathers its input again (the forward
// kept only this rank's shard) during the input-gradient GEMM: 1 us collectives, all far shorter
// than those GEMMs. Per block and micro-batch: forward all-gather + reduce-scatter and the
// backward all-gather of the incoming gradient stay exposed (3 us); the reduce-scatter and the
// re-gather hide, each costing 0.189 us of slowed GEMM. Synchronous: 4 us, no re-gather.
TEST(TpAsyncDgrad, SequenceParallelReduceScatterAndInputRegatherHideBehindTheBackwardGemms) {
  Scenario s = llama_on(8);
  const Parallelism p = test::layout(8, 1, 1, 1, Recompute::none, true);
  const AxisStub cost(Axis::tp, 1e-6);
  const double blocks = 2 * 80, m = 8;
  s.training.tp_async_dgrad = false;
  const double sync = evaluate(s, p, cost).step.breakdown.tp_comm.base();
  s.training.tp_async_dgrad = true;
  const double async = evaluate(s, p, cost).step.breakdown.tp_comm.base();
  EXPECT_NEAR(sync - async, m * blocks * (4e-6 - (3e-6 + 2 * 0.189e-6)), 1e-12);
}

TEST(PpCommOverlap, SendsHideBehindStageComputeInTheInterleavedScheduleOnly) {
  // pp = 2, v = 2: each stage sends 2 us forward and 2 us backward per micro-batch and chunk;
  // with overlap they hide behind the stage's compute (much longer) and slow it by 18.9%.
  Scenario s = llama_on(2);
  Parallelism p = test::layout(1, 2, 1, 1, Recompute::none, false, 0, 2);
  const Stub cost;
  const double plain = evaluate(s, p, cost).step.breakdown.pp_comm.base();
  p.pp_comm_overlap = true;
  const double overlapped = evaluate(s, p, cost).step.breakdown.pp_comm.base();
  EXPECT_NEAR(plain, 8 * 4e-6 * 2, 1e-15);  // 8 micro-batches x (2 + 2) us x 2 chunks
  EXPECT_NEAR(overlapped, 0.189 * plain, 1e-15);
  // Plain 1F1B: Megatron-LM sets overlap_p2p_comm = False without interleaving
  // (megatron/training/arguments.py), so the option changes nothing there.
  Parallelism q = test::layout(1, 2, 1, 1, Recompute::none);
  const double q_plain = evaluate(s, q, cost).step.breakdown.pp_comm.base();
  q.pp_comm_overlap = true;
  EXPECT_EQ(evaluate(s, q, cost).step.breakdown.pp_comm.base(), q_plain);
}

// Blocking, unbatched p2p (DeepSpeed's PipelineEngine, TrainingJob::pp_p2p_batched = false): each
// stage waits for its receives too, four 2 us transfers per micro-batch instead of the two sends
// of Megatron-LM's batched calls: 8 micro-batches x 4 x 2 us = 64 us against 8 x 2 x 2 us = 32 us.
TEST(PpP2pBatching, BlockingCallsWaitForTheReceivesToo) {
  Scenario s = llama_on(2);
  const Parallelism p = test::layout(1, 2, 1, 1, Recompute::none);
  const Stub cost;
  EXPECT_NEAR(evaluate(s, p, cost).step.breakdown.pp_comm.base(), 8 * 2 * 2e-6, 1e-15);
  s.training.pp_p2p_batched = false;
  EXPECT_NEAR(evaluate(s, p, cost).step.breakdown.pp_comm.base(), 8 * 4 * 2e-6, 1e-15);
  // Without pipeline parallelism there is nothing to send either way.
  const Parallelism flat = test::layout(2, 1, 1, 1, Recompute::none);
  EXPECT_EQ(evaluate(s, flat, cost).step.breakdown.pp_comm.base(), 0.0);
}

// Mixtral 8x7B shape (8 experts of 14336, top-2) on one node, ep = 8, one micro-batch; a tiny
// vocabulary so that the output layer's GEMM is negligible next to the layers'.
Scenario mixtral_on_one_node() {
  ModelSpec m = test::mixtral_8x7b();
  m.vocab = 8;
  return test::scenario_of(m, test::job_of(8), test::cluster_of(test::h100_sxm(), 8));
}

Parallelism ep8() {
  Parallelism p = test::layout(1, 1, 8, 1, Recompute::none);
  p.ep = 8;
  return p;
}

TEST(EpCommOverlap, ShortAllToAllsHideBehindTheLayerAndSlowIt) {
  // Megatron-Core's all-to-all dispatcher, dropless, one local expert (8 experts, ep 8): dispatch
  // + combine forward and backward, the probabilities' all-to-all forward and backward and the
  // token-count all-gather forward: 7 EP collectives of 1 us per MoE layer, far shorter than the
  // layer's GEMMs; overlapped with another micro-batch's compute they cost only the 18.9%
  // interference slowdown.
  Scenario s = mixtral_on_one_node();
  Parallelism p = ep8();
  const AxisStub cost(Axis::ep, 1e-6);
  const double plain = evaluate(s, p, cost).step.breakdown.ep_comm.base();
  EXPECT_NEAR(plain, 32 * 7 * 1e-6, 1e-15);  // 32 layers x 7 x 1 us, one micro-batch
  p.ep_comm_overlap = true;
  EXPECT_NEAR(evaluate(s, p, cost).step.breakdown.ep_comm.base(), 0.189 * plain, 1e-15);
}

TEST(EpCommOverlap, LongAllToAllsHideOnlyTheLayersCompute) {
  // 4 x 1 s per layer, far longer than the layer's compute W: exposed = 4 s - W + 0.189 W per
  // layer. With the slowdown at 0, plain - overlapped = 32 W, the compute of all layers, which is
  // the step's compute (one micro-batch, the output layer's 4096 x 8 x 4096 GEMMs are ~1e-5 of it).
  Scenario s = mixtral_on_one_node();
  Parallelism p = ep8();
  const AxisStub cost(Axis::ep, 1.0);
  const Estimate plain_e = evaluate(s, p, cost);
  const double plain = plain_e.step.breakdown.ep_comm.base();
  p.ep_comm_overlap = true;
  const double overlapped = evaluate(s, p, cost).step.breakdown.ep_comm.base();
  s.training.overlap_compute_slowdown = 0.0;
  const double ideal = evaluate(s, p, cost).step.breakdown.ep_comm.base();
  const double hidden = plain - ideal;  // 32 W
  EXPECT_NEAR(hidden, plain_e.step.breakdown.compute.base(), 1e-4 * hidden);
  EXPECT_NEAR(overlapped - ideal, 0.189 * hidden, 1e-9);
}

TEST(EpCommOverlap, ChangesNothingWithoutExpertParallelism) {
  Scenario s = llama_on(8);
  Parallelism p = test::layout(8, 1, 1, 1, Recompute::none, true);
  const Stub cost;
  const double plain = evaluate(s, p, cost).step.time.base();
  p.ep_comm_overlap = true;
  EXPECT_DOUBLE_EQ(evaluate(s, p, cost).step.time.base(), plain);
}

TEST(OverlapSlowdown, IsAParameterAndZeroMeansIdealOverlap) {
  Scenario s = llama_on(8);
  s.training.overlap_compute_slowdown = 0.0;
  s.training.tp_async_dgrad = false;  // "without": every collective exposed
  Parallelism p = test::layout(8, 1, 1, 1, Recompute::none, true);
  p.tp_comm_overlap = true;
  const Stub cost;
  const double with_overlap = evaluate(s, p, cost).step.breakdown.tp_comm.base();
  p.tp_comm_overlap = false;
  const double without = evaluate(s, p, cost).step.breakdown.tp_comm.base();
  const double output = 8 * 2e-6;
  EXPECT_NEAR(with_overlap - output, (without - output) / 8, 1e-12);  // only the first chunk stays
}

}  // namespace
}  // namespace capplan::sim
