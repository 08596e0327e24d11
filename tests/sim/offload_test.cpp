// SPDX-License-Identifier: Apache-2.0
// Host (CPU) offload (Parallelism::offload_optimizer, offload_params): what leaves the GPU's memory,
// the host copies and the CPU optimizer step in the op list, how they are priced, and the rule
// that offloaded parameters are ZeRO-3's shards.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/folds/memory.hpp"
#include "capplan/sim/lowering/step_model.hpp"
#include "test_support.hpp"

namespace capplan::sim {
namespace {

using test::job_of;
using test::layout;

// Sums of a few products; 1e-12 relative is far above round-off and far below a byte per GiB.
constexpr double kSumOrder = 1e-12;

// Llama-2-70B on one GPU with tp = 8 (all 80 layers, both embedding matrices, the final norm).
double llama_params_tp8() {
  const double h = 8192, kv_dim = 1024, f = 28672, V = 32000;
  const double layer = h * (h + 2.0 * kv_dim) + h * h + 3.0 * h * f + 2.0 * h;
  return (80.0 * layer + 2.0 * V * h + h) / 8.0;
}
double llama_layer_tp8() {
  const double h = 8192, kv_dim = 1024, f = 28672;
  return (h * (h + 2.0 * kv_dim) + h * h + 3.0 * h * f + 2.0 * h) / 8.0;
}

Parallelism offloaded(int zero, bool optimizer, bool params, int dp = 4) {
  Parallelism p = layout(8, 1, dp, 1, Recompute::selective, true, zero);
  p.offload_optimizer = optimizer;
  p.offload_params = params;
  return p;
}

// 16-bit gradient buffers, as the ZeRO paper's 2 + 2 + 12 bytes per parameter.
MemoryBreakdown llama_memory(const Parallelism& p) {
  return memory_per_gpu(test::llama2_70b(), test::with_16bit_gradients(job_of(64)), p, test::h100_sxm(), 64 / p.dp);
}

TEST(OffloadMemory, TheOptimizerStateLeavesTheGpuAndNothingElseDoes) {
  // ZeRO-2 + offload_optimizer: the 12 bytes per parameter of Adam live on the host; the bf16
  // weights (2 P) and the sharded gradients (2 P / dp) stay.
  const MemoryBreakdown with = llama_memory(offloaded(2, true, false));
  const MemoryBreakdown without = llama_memory(offloaded(2, false, false));
  const double P = llama_params_tp8(), dp = 4;
  EXPECT_EQ(with.optimizer.base(), 0.0);
  EXPECT_NEAR(without.optimizer.base(), 12.0 * P / dp, kSumOrder * P);
  EXPECT_DOUBLE_EQ(with.weights.base(), without.weights.base());
  EXPECT_DOUBLE_EQ(with.gradients.base(), without.gradients.base());
  EXPECT_DOUBLE_EQ(with.activations.base(), without.activations.base());
}

TEST(OffloadMemory, OffloadedParametersLeaveTheGatheredLayersAndOneLayersGradient) {
  // ZeRO-3 + offload_params: of the weights only the unsharded bf16 copy of the current and the
  // prefetched layer (2 x 2 bytes x layer / tp); of the gradients one layer's worth before its
  // reduce-scatter (2 bytes x the stage's P / 80 layers); no optimizer state.
  const MemoryBreakdown mb = llama_memory(offloaded(3, false, true));
  const double P = llama_params_tp8();
  EXPECT_NEAR(mb.weights.base(), 2.0 * 2.0 * llama_layer_tp8(), kSumOrder * P);
  EXPECT_NEAR(mb.gradients.base(), 2.0 * P / 80.0, kSumOrder * P);
  EXPECT_EQ(mb.optimizer.base(), 0.0);
  // One GPU of its own: the same working set (FSDP's CPU offload runs on a single rank too).
  const MemoryBreakdown one = llama_memory(offloaded(3, false, true, 1));
  EXPECT_NEAR(one.weights.base(), mb.weights.base(), kSumOrder * P);
}

const StepOp* find_op(const StepOps& ops, const std::string& name, Phase phase) {
  for (const StepOp& so : ops.ops) {
    const auto* mo = std::get_if<MemoryOp>(&so.op);
    if (mo != nullptr && name == mo->name && so.phase == phase) return &so;
  }
  return nullptr;
}

TEST(OffloadOps, TheOptimizerStepRunsOnTheHostBetweenAGradientCopyOutAndAParameterCopyIn) {
  // ZeRO-1 over dp = 4 with 16-bit gradients: the rank's shard is P / 4; Adam touches 28 bytes per
  // parameter (TrainingJob::adam_step_bytes: 12 read + 12 written + 2 gradient + 2 weight).
  const TrainingJob job = test::with_16bit_gradients(job_of(64));
  const Cluster c = test::cluster_of(test::h100_sxm(), 32);
  const StepOps ops = build_step_ops(test::llama2_70b(), job, offloaded(1, true, false), c);
  const double shard = llama_params_tp8() / 4.0;
  const StepOp* cpu = find_op(ops, "adam_step_cpu", Phase::step);
  const StepOp* out = find_op(ops, "offload_grad_copy_out", Phase::step);
  const StepOp* in = find_op(ops, "offload_param_copy_in", Phase::step);
  ASSERT_NE(cpu, nullptr);
  ASSERT_NE(out, nullptr);
  ASSERT_NE(in, nullptr);
  EXPECT_EQ(find_op(ops, "adam_step", Phase::step), nullptr) << "no GPU optimizer step as well";
  EXPECT_EQ(std::get<MemoryOp>(cpu->op).link, MemoryLink::host);
  EXPECT_NEAR(std::get<MemoryOp>(cpu->op).bytes.base(), 28.0 * shard, kSumOrder * shard);
  EXPECT_EQ(std::get<MemoryOp>(out->op).link, MemoryLink::device_to_host);
  EXPECT_NEAR(std::get<MemoryOp>(out->op).bytes.base(), 2.0 * shard, kSumOrder * shard);
  EXPECT_EQ(std::get<MemoryOp>(in->op).link, MemoryLink::host_to_device);
  EXPECT_NEAR(std::get<MemoryOp>(in->op).bytes.base(), 2.0 * shard, kSumOrder * shard);
}

TEST(OffloadOps, OffloadedShardsAreCopiedInBeforeEachGatherAndOutAfterEachReduceScatter) {
  // ZeRO-3 + offload_params over dp = 4: per layer and micro-batch, the rank's quarter of the
  // attention block's gathered bf16 weights comes in before the forward and the backward gather,
  // and its quarter of the reduce-scattered gradient goes out; at the step nothing more moves.
  const TrainingJob job = test::with_16bit_gradients(job_of(64));
  const Cluster c = test::cluster_of(test::h100_sxm(), 32);
  const ModelSpec m = test::llama2_70b();
  const StepOps ops = build_step_ops(m, job, offloaded(3, false, true), c);
  const double attention = m.attention_params() / 8.0;  // on one tensor-parallel rank
  const StepOp* fwd = find_op(ops, "offload_param_copy_in", Phase::forward);
  const StepOp* bwd = find_op(ops, "offload_param_copy_in", Phase::backward);
  const StepOp* out = find_op(ops, "offload_grad_copy_out", Phase::backward);
  ASSERT_NE(fwd, nullptr);
  ASSERT_NE(bwd, nullptr);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(fwd->scope, Scope::layer);
  EXPECT_NEAR(std::get<MemoryOp>(fwd->op).bytes.base(), 2.0 * attention / 4.0, kSumOrder * attention);
  EXPECT_NEAR(std::get<MemoryOp>(bwd->op).bytes.base(), 2.0 * attention / 4.0, kSumOrder * attention);
  EXPECT_NEAR(std::get<MemoryOp>(out->op).bytes.base(), 2.0 * attention / 4.0, kSumOrder * attention);
  EXPECT_NE(find_op(ops, "adam_step_cpu", Phase::step), nullptr) << "offloaded parameters step on the host";
  EXPECT_EQ(find_op(ops, "offload_grad_copy_out", Phase::step), nullptr);
  EXPECT_EQ(find_op(ops, "offload_param_copy_in", Phase::step), nullptr);
}

TEST(OffloadCost, HostCopiesRunAtThePcieRateAndTheCpuStepAtTheNodesShare) {
  // A100 with PCIe Gen4 x16 (32 GB/s in the test GPU): 88% of it for pinned copies, plus the
  // 3 us launch. The CPU step: 83 GB/s per node shared by 8 GPUs.
  const Cluster c = test::cluster_of(test::a100_80gb(), 16);
  const DatasheetCost cost(c);
  const DatasheetAssumptions a;
  const units::Bytes gb = units::bytes(1e9);
  EXPECT_NEAR(cost.memory(MemoryOp{"x", gb, MemoryLink::host_to_device}).base(), 1e9 / (0.88 * 32e9) + 3e-6, 1e-12);
  EXPECT_NEAR(cost.memory(MemoryOp{"x", gb, MemoryLink::device_to_host}).base(), 1e9 / (0.88 * 32e9) + 3e-6, 1e-12);
  EXPECT_NEAR(cost.memory(MemoryOp{"x", gb, MemoryLink::host}).base(), 1e9 / (a.host_optimizer_GBps_per_node * 1e9 / 8),
              1e-12);
  // A single GPU has its host to itself.
  const DatasheetCost alone(test::cluster_of(test::a100_80gb(), 1));
  EXPECT_NEAR(alone.memory(MemoryOp{"x", gb, MemoryLink::host}).base(), 1e9 / (a.host_optimizer_GBps_per_node * 1e9),
              1e-12);
}

Estimate run(const Parallelism& p) {
  const TrainingJob job = test::with_16bit_gradients(job_of(64));
  const Cluster c = test::cluster_of(test::h100_sxm(), 32);
  const Scenario s = test::scenario_of(test::llama2_70b(), job, c, test::fixed_request(p));
  auto e = estimate(s, DatasheetCost(c));
  EXPECT_TRUE(e.has_value()) << (e ? "" : to_string(e.error()));
  return e ? *e : Estimate{};
}

TEST(OffloadStep, TheStepPaysTheHostStepAndCopiesInPlaceOfTheGpuStep) {
  Parallelism on = offloaded(1, true, false);
  const Estimate with = run(on);
  const Estimate without = run(offloaded(1, false, false));
  // The three step ops, priced one by one.
  const Cluster c = test::cluster_of(test::h100_sxm(), 32);
  const DatasheetCost cost(c);
  const StepOps ops = build_step_ops(test::llama2_70b(), test::with_16bit_gradients(job_of(64)), on, c);
  double expected = 0;
  for (const char* name : {"adam_step_cpu", "offload_grad_copy_out", "offload_param_copy_in"}) {
    expected += cost.memory(std::get<MemoryOp>(find_op(ops, name, Phase::step)->op)).base();
  }
  EXPECT_NEAR(with.step.breakdown.optimizer.base(), expected, 1e-9 * expected);
  // Compute and communication do not change; the CPU step is far slower than the GPU's.
  EXPECT_DOUBLE_EQ(with.step.breakdown.compute.base(), without.step.breakdown.compute.base());
  EXPECT_GT(with.step.breakdown.optimizer.base(), 10.0 * without.step.breakdown.optimizer.base());
  EXPECT_LT(with.memory.total().base(), without.memory.total().base());
  // The estimate says what it assumed for the host.
  bool said = false;
  for (const Finding& f : with.findings) said = said || f.code == FindingCode::offload_host_step;
  EXPECT_TRUE(said);
}

TEST(OffloadLayout, OffloadedParametersNeedZeroThree) {
  const Scenario s = test::scenario_of(test::llama2_70b(), job_of(64), test::cluster_of(test::h100_sxm(), 32));
  const Diagnostics d = check_layout(s, offloaded(1, false, true));
  ASSERT_EQ(d.size(), 1u) << to_string(d);
  ASSERT_TRUE(d[0].finding.has_value());
  EXPECT_EQ(d[0].finding->code, FindingCode::layout_offload_params_needs_zero3);
  EXPECT_EQ(d[0].finding->field, "strategy.offload_params");
  EXPECT_EQ(d[0].finding->number("zero"), 1);
  EXPECT_TRUE(check_layout(s, offloaded(3, false, true)).empty());
}

// Left to the planner, offloaded parameters choose ZeRO-3 (the only stage they run with).
TEST(OffloadLayout, ThePlannerGivesOffloadedParametersZeroThree) {
  StrategyRequest r;
  r.offload_params = true;
  const Scenario s = test::scenario_of(test::llama2_70b(), job_of(64), test::cluster_of(test::h100_sxm(), 32), r);
  auto e = estimate(s, DatasheetCost(s.cluster));
  ASSERT_TRUE(e.has_value()) << to_string(e.error());
  EXPECT_EQ(e->layout.strategy.zero, 3);
  EXPECT_TRUE(e->layout.strategy.offload_params);
}

// When nothing fits, the planner says whether host offload would make its least-memory layout
// fit (the optimizer alone first, then ZeRO-3 with the parameters), but never picks it; a user
// who set the offload options gets no such advice.
bool has(const Estimate& e, FindingCode code) {
  return std::any_of(e.findings.begin(), e.findings.end(), [&](const Finding& f) { return f.code == code; });
}
double number_of(const Estimate& e, FindingCode code, const char* key) {
  for (const Finding& f : e.findings) {
    if (f.code == code) return f.number(key);
  }
  return -1;
}

TEST(OffloadAdvice, ALayoutThatDoesNotFitSaysWhatOffloadWouldDo) {
  // Llama-2-70B on 8 H100: the optimizer state alone is 12 x 70B / 8 = 105 GB per GPU unsharded.
  const Cluster c8 = test::cluster_of(test::h100_sxm(), 8);
  const Scenario s8 = test::scenario_of(test::llama2_70b(), job_of(64), c8);
  auto e8 = estimate(s8, DatasheetCost(c8));
  ASSERT_TRUE(e8.has_value()) << to_string(e8.error());
  EXPECT_FALSE(e8->memory.fits());
  EXPECT_TRUE(has(*e8, FindingCode::no_layout_fits));
  ASSERT_TRUE(has(*e8, FindingCode::offload_optimizer_would_fit));
  EXPECT_LE(number_of(*e8, FindingCode::offload_optimizer_would_fit, "need_gib"),
            number_of(*e8, FindingCode::offload_optimizer_would_fit, "have_gib"));
  EXPECT_FALSE(e8->layout.strategy.host_optimizer()) << "advice, not a choice";

  // One H100: the bf16 weights alone (140 GB) do not fit, so only offloaded parameters help.
  const Cluster c1 = test::cluster_of(test::h100_sxm(), 1);
  const Scenario s1 = test::scenario_of(test::llama2_70b(), job_of(8), c1);
  auto e1 = estimate(s1, DatasheetCost(c1));
  ASSERT_TRUE(e1.has_value()) << to_string(e1.error());
  EXPECT_FALSE(has(*e1, FindingCode::offload_optimizer_would_fit));
  EXPECT_TRUE(has(*e1, FindingCode::offload_params_would_fit));

  // The user decided about offload: no advice.
  StrategyRequest r;
  r.offload_optimizer = false;
  const Scenario said = test::scenario_of(test::llama2_70b(), job_of(64), c8, r);
  auto e = estimate(said, DatasheetCost(c8));
  ASSERT_TRUE(e.has_value());
  EXPECT_FALSE(has(*e, FindingCode::offload_optimizer_would_fit));
  EXPECT_FALSE(has(*e, FindingCode::offload_params_would_fit));
}

}  // namespace
}  // namespace capplan::sim
