// SPDX-License-Identifier: Apache-2.0
// The end-to-end estimate: derived metrics, layout checks, the pipeline schedule, the automatic
// strategy search, and two published Megatron-LM runs (Korthikanti et al. 2022, Table 5).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/lowering/step_model.hpp"
#include "test_support.hpp"

namespace capplan::sim {
namespace {

using test::cluster_of;
using test::fixed_request;
using test::job_of;
using test::layout;
using test::scenario_of;

bool any_where(const Diagnostics& d, const std::string& where) {
  return std::any_of(d.begin(), d.end(), [&](const Diagnostic& x) {
    return x.where == where && x.severity == Diagnostic::Severity::error;
  });
}

bool has_finding(const Estimate& e, FindingCode code) { return has(e.findings, code); }

// GPT 1.3B on one 8 x H100 node, tp 2, dp 4, micro-batch 2, global batch 64, $3/GPU-hour.
Scenario small_scenario() {
  Cluster c = cluster_of(test::h100_sxm(), 8);
  c.price_per_gpu = units::usd_per_hour(3.0);
  return scenario_of(test::gpt_1_3b(), job_of(64, 26e9), c);
}

// ---------------------------------------------------------------------------------------------
// Derived metrics
// ---------------------------------------------------------------------------------------------

TEST(Estimate, BreakdownSumsToStepTime) {
  const Scenario s = small_scenario();
  const DatasheetCost cost(s.cluster);
  for (const Parallelism& p :
       {layout(2, 1, 4, 2, Recompute::selective, true), layout(1, 2, 4, 1, Recompute::full),
        layout(8, 1, 1, 4, Recompute::none, false), layout(1, 1, 8, 2, Recompute::none, false, 3)}) {
    const Estimate e = evaluate(s, p, cost);
    const StepBreakdown& b = e.step.breakdown;
    const double sum = b.compute.base() + b.tp_comm.base() + b.pp_comm.base() + b.dp_comm.base() + b.ep_comm.base() +
                       b.cp_comm.base() + b.bubble.base() + b.optimizer.base() + b.variability.base() + b.other.base();
    // Same ten terms in a possibly different order: 1e-12 relative covers the round-off.
    EXPECT_NEAR(sum, e.step.time.base(), 1e-12 * e.step.time.base());
    for (double part : {b.compute.base(), b.recompute.base(), b.tp_comm.base(), b.pp_comm.base(), b.dp_comm.base(),
                        b.bubble.base(), b.optimizer.base(), b.variability.base(), b.other.base()}) {
      EXPECT_GE(part, 0.0);
    }
    EXPECT_LE(b.recompute.base(), b.compute.base());  // recompute is a part of compute
    EXPECT_GT(e.step.time.base(), 0.0);
  }
}

TEST(Estimate, ThroughputMfuTimeAndCostFollowFromStepTime) {
  const Scenario s = small_scenario();
  const Estimate e = evaluate(s, layout(2, 1, 4, 2, Recompute::selective, true), DatasheetCost(s.cluster));
  const double step = e.step.time.base();
  const double gb = 64, seq = 2048, gpus = 8, peak = 989.4e12;
  // Model FLOPs of a step, by hand: per token 3 * (L*(24h^2 + 4sh) + 2hV) for this GPT shape.
  const double h = 2048, L = 24, V = 51200;
  const double model_flops = gb * seq * 3.0 * (L * (24.0 * h * h + 4.0 * seq * h) + 2.0 * h * V);
  // Each metric is one or two divisions/products of the same doubles: 1e-12 relative.
  constexpr double kRel = 1e-12;
  EXPECT_NEAR(e.step.flops.model.base(), model_flops, kRel * model_flops);
  EXPECT_NEAR(e.step.tokens_per_s, gb * seq / step, kRel * e.step.tokens_per_s);
  EXPECT_NEAR(e.step.mfu, model_flops / (step * gpus * peak), kRel * e.step.mfu);
  EXPECT_NEAR(e.step.model_flops_per_gpu.base(), model_flops / step / gpus, kRel * e.step.model_flops_per_gpu.base());
  EXPECT_GE(e.step.hfu, e.step.mfu);
  // Whole steps: 26e9 / 131072 = 198364.75 -> 198365 (the last step a full batch).
  const double steps = 198365;
  EXPECT_EQ(e.totals.steps, steps);
  EXPECT_NEAR(e.totals.time_to_train.base(), steps * step, kRel * steps * step);
  EXPECT_NEAR(e.totals.gpu_hours, gpus * steps * step / 3600.0, kRel * e.totals.gpu_hours);
  ASSERT_TRUE(e.totals.cost.has_value());
  const double usd = 3.0 / 3600.0 * gpus * steps * step;
  EXPECT_NEAR(e.totals.cost->base(), usd, kRel * usd);
  EXPECT_EQ(e.layout.micro_batches, 64 / (2 * 4));
  EXPECT_EQ(e.step.cost_model, "datasheet");
}

TEST(Estimate, CostIsNullWithAWarningWhenNoPriceIsKnown) {
  Scenario s = small_scenario();
  s.cluster.price_per_gpu.reset();
  const Estimate e = evaluate(s, layout(2, 1, 4, 2, Recompute::selective, true), DatasheetCost(s.cluster));
  EXPECT_FALSE(e.totals.cost.has_value());
  EXPECT_FALSE(e.totals.price_per_gpu.has_value());
  EXPECT_TRUE(has_finding(e, FindingCode::no_price));
}

// ---------------------------------------------------------------------------------------------
// check_layout
// ---------------------------------------------------------------------------------------------

TEST(CheckLayout, AValidLayoutHasNoDiagnostics) {
  EXPECT_TRUE(check_layout(small_scenario(), layout(2, 1, 4, 2)).empty());
}

TEST(CheckLayout, TpThatDoesNotDivideHeadsNamesTheTpField) {
  Scenario s = small_scenario();
  s.cluster.gpus = 6;
  const Diagnostics d = check_layout(s, layout(6, 1, 1));  // 16 heads % 6 != 0
  EXPECT_TRUE(any_where(d, "scenario#/strategy/tp")) << to_string(d);
  ASSERT_FALSE(d.empty());
  ASSERT_TRUE(d[0].finding.has_value());
  EXPECT_TRUE(d[0].message.empty()) << "sim/ codes the rule; data/ words it";
  EXPECT_EQ(d[0].finding->code, FindingCode::layout_tp_divides_heads);
  EXPECT_EQ(d[0].finding->field, "strategy.tp");
  EXPECT_EQ(d[0].finding->number("heads"), 16);
  EXPECT_EQ(d[0].finding->number("got"), 6);
}

// Each rule gives its own code, with the values its sentence names (data/findings words them).
TEST(CheckLayout, EachFailedRuleCarriesItsCodeAndValues) {
  const auto codes = [](const Diagnostics& d) {
    std::vector<FindingCode> out;
    for (const auto& x : d) out.push_back(x.finding ? x.finding->code : FindingCode::note);
    return out;
  };
  using C = FindingCode;
  Scenario s = small_scenario();  // 8 GPUs, 24 layers, 16 heads
  Parallelism p = layout(2, 1, 4, 2);
  p.zero = 4;
  p.tp = 0;
  EXPECT_EQ(codes(check_layout(s, p)), (std::vector<C>{C::layout_not_positive, C::layout_zero_out_of_range}));
  p = layout(2, 1, 2, 1);  // 4 GPUs of 8
  Diagnostics d = check_layout(s, p);
  ASSERT_EQ(codes(d), (std::vector<C>{C::layout_product_is_not_the_gpus}));
  EXPECT_EQ(d[0].where, "scenario#/strategy");
  EXPECT_EQ(d[0].finding->field, "strategy");
  for (const auto& [name, v] : {std::pair<const char*, double>{"gpus", 8}, {"tp", 2}, {"pp", 1}, {"dp", 2},
                                {"cp", 1}, {"product", 4}}) {
    EXPECT_EQ(d[0].finding->number(name), v) << name;
  }
  p = layout(1, 2, 4, 1);
  p.virtual_stages = 13;  // 2*13 > 24 layers
  d = check_layout(s, p);
  ASSERT_EQ(codes(d), (std::vector<C>{C::layout_stages_exceed_layers}));
  EXPECT_EQ(d[0].finding->number("virtual_stages"), 13);
  p = layout(8, 1, 1, 1);
  p.virtual_stages = 2;  // interleaving without a pipeline
  p.ep = 2;              // experts on a dense model
  d = check_layout(s, p);
  EXPECT_EQ(codes(d), (std::vector<C>{C::layout_ep_needs_moe, C::layout_interleaving_needs_pipeline}));
  p = layout(1, 2, 4, 1);
  p.first_stage_layers = 20;  // with pp 2 no stage is left between them: they must add up to 24
  p.last_stage_layers = 10;
  d = check_layout(s, p);
  ASSERT_EQ(codes(d), (std::vector<C>{C::layout_stage_layers_leave_none})) << to_string(d);
  EXPECT_EQ(d[0].finding->number("first"), 20);
  EXPECT_EQ(d[0].finding->number("last"), 10);
  EXPECT_EQ(d[0].finding->number("middle"), 0);
  p.first_stage_layers = 10;
  p.last_stage_layers = 0;
  p.pp = 4;
  p.dp = 2;  // 3 stages share the other 14 layers: too few for 6 virtual stages each (18)
  p.virtual_stages = 6;
  d = check_layout(s, p);
  ASSERT_EQ(codes(d), (std::vector<C>{C::layout_stage_layers_leave_too_few})) << to_string(d);
  EXPECT_EQ(d[0].finding->number("middle"), 3);
}

TEST(CheckLayout, ProductOfDegreesNotEqualToGpusNamesTheStrategy) {
  const Diagnostics d = check_layout(small_scenario(), layout(2, 1, 2));  // 4 != 8
  EXPECT_TRUE(any_where(d, "scenario#/strategy")) << to_string(d);
}

TEST(CheckLayout, MorePipelineStagesThanLayersNamesPp) {
  Scenario s = small_scenario();
  s.cluster.gpus = 32;
  const Diagnostics d = check_layout(s, layout(1, 32, 1));  // 24 layers
  EXPECT_TRUE(any_where(d, "scenario#/strategy/pp")) << to_string(d);
}

TEST(CheckLayout, GlobalBatchNotAMultipleOfMicroBatchTimesDpNamesMicroBatch) {
  Scenario s = small_scenario();
  s.training.global_batch = 30;
  const Diagnostics d = check_layout(s, layout(1, 1, 8, 1));  // 30 % 8 != 0
  EXPECT_TRUE(any_where(d, "scenario#/strategy/micro_batch")) << to_string(d);
}

TEST(CheckLayout, ContextParallelNeedsSeqLenAMultipleOfTwoCp) {
  // Megatron-Core splits each sequence into 2*cp chunks (causal load balance).
  Parallelism p = layout(1, 1, 4);
  p.cp = 2;
  Scenario s = small_scenario();
  s.cluster.gpus = 8;  // tp*pp*dp*cp = 1*1*4*2
  s.model.seq_len = 2048;
  EXPECT_FALSE(any_where(check_layout(s, p), "scenario#/strategy/cp")) << to_string(check_layout(s, p));
  s.model.seq_len = 2050;  // not a multiple of 4
  EXPECT_TRUE(any_where(check_layout(s, p), "scenario#/strategy/cp")) << to_string(check_layout(s, p));
}

TEST(CheckLayout, VirtualStagesWithoutPipelineNamesVirtualStages) {
  const Diagnostics d = check_layout(small_scenario(), layout(2, 1, 4, 1, Recompute::selective, false, 0, 2));
  EXPECT_TRUE(any_where(d, "scenario#/strategy/virtual_stages")) << to_string(d);
}

TEST(CheckLayout, NonPositiveDegreesAreErrorsNotCrashes) {
  const Diagnostics d = check_layout(small_scenario(), layout(0, 1, 8));
  EXPECT_TRUE(any_where(d, "scenario#/strategy/tp")) << to_string(d);
}

TEST(CheckLayout, FullySpecifiedInvalidRequestIsAnError) {
  Scenario s = small_scenario();
  s.strategy = fixed_request(layout(2, 1, 2));
  const Result<Estimate> r = estimate(s, DatasheetCost(s.cluster));
  ASSERT_FALSE(r.has_value());
  EXPECT_TRUE(any_where(r.error(), "scenario#/strategy"));
}

TEST(EstimateWarnings, UnevenLayerSplitIsReported) {
  Scenario s = small_scenario();
  s.model.layers = 30;
  const Estimate e = evaluate(s, layout(2, 4, 1, 1), DatasheetCost(s.cluster));  // 30 % 4 != 0
  EXPECT_TRUE(has_finding(e, FindingCode::uneven_stages));
}

TEST(EstimateWarnings, TpWiderThanANodeIsReported) {
  Scenario s = small_scenario();
  s.cluster.gpus = 16;
  const Estimate e = evaluate(s, layout(16, 1, 1, 1), DatasheetCost(s.cluster));
  EXPECT_TRUE(has_finding(e, FindingCode::tp_wider_than_node));
  EXPECT_FALSE(has_finding(evaluate(s, layout(8, 1, 2, 1), DatasheetCost(s.cluster)), FindingCode::tp_wider_than_node));
}

// ---------------------------------------------------------------------------------------------
// Pipeline schedule
// ---------------------------------------------------------------------------------------------

// Prices every GEMM of the transformer layers at exactly 1 s per PFLOP and everything else (the
// logits, element-wise kernels, communication) at zero, so that every pipeline stage takes the
// same time and the schedule can be checked against Narayanan et al.'s closed form.
class LayerGemmsOnly final : public OpCostModel {
 public:
  units::Seconds gemm(const GemmOp& op) const override {
    if (std::strncmp(op.name, "logits", 6) == 0) return {};
    return units::seconds(op.flops().base() * 1e-15);
  }
  units::Seconds memory(const MemoryOp&) const override { return {}; }
  units::Seconds collective(const CollectiveOp&) const override { return {}; }
  std::string source() const override { return "layer-gemms-only"; }
};

struct UniformPipeline {
  // GPT 1.3B without fused attention: per layer and micro-batch, forward (24h^2 + 4sh)*b*s/t
  // FLOPs, backward twice that (no recompute): 3*(24h^2 + 4sh)*b*s/t.
  Scenario s;
  double h = 2048, seq = 2048, b = 1, t = 1, L = 24;
  UniformPipeline(int global_batch) {
    ModelSpec m = test::gpt_1_3b();
    m.flash_attention = false;
    s = scenario_of(m, job_of(global_batch), cluster_of(test::h100_sxm(), 8));
    s.cluster.gpu_speed_spread = 0.0;  // identical GPUs: the schedule alone (variability_test.cpp)
  }
  double stage_seconds(int pp) const {
    return (L / pp) * 3.0 * (24.0 * h * h + 4.0 * seq * h) * b * seq / t * 1e-15;
  }
  Estimate run(int pp, int v) const {
    return evaluate(s, layout(1, pp, 8 / pp, 1, Recompute::none, false, 0, v), LayerGemmsOnly());
  }
};

// The per-stage times are sums of a few dozen GEMM costs: 1e-12 relative covers their round-off.
constexpr double kSched = 1e-12;

TEST(PipelineSchedule, NoBubbleWithoutPipelineParallelism) {
  const Scenario s = small_scenario();
  EXPECT_EQ(evaluate(s, layout(2, 1, 4, 2), DatasheetCost(s.cluster)).step.breakdown.bubble.base(), 0.0);
  const UniformPipeline u(64);
  EXPECT_EQ(u.run(1, 1).step.breakdown.bubble.base(), 0.0);
}

TEST(PipelineSchedule, OneFOneBBubbleIsPMinusOneStageTimesForIdenticalStages) {
  // Narayanan et al. 2021, Sec. 2.2.1: step = (m + p - 1) * t_stage, bubble fraction (p-1)/m.
  // pp = 4, dp = 2, global batch 64: m = 32 micro-batches per rank, 6 layers per stage.
  const UniformPipeline u(64);
  const Estimate e = u.run(4, 1);
  const double T = u.stage_seconds(4), m = 32, p = 4;
  ASSERT_EQ(e.layout.micro_batches, 32);
  EXPECT_NEAR(e.step.breakdown.compute.base(), m * T, kSched * m * T);
  EXPECT_NEAR(e.step.breakdown.bubble.base(), (p - 1) * T, kSched * m * T);
  EXPECT_NEAR(e.step.breakdown.bubble / e.step.breakdown.compute, (p - 1) / m, kSched);
  EXPECT_NEAR(e.step.time.base(), (m + p - 1) * T, kSched * m * T);
}

TEST(PipelineSchedule, InterleavingWithTwoVirtualStagesHalvesTheBubble) {
  // Narayanan et al. 2021, Sec. 2.2.2: bubble (p-1)/v of a micro-batch's stage time.
  const UniformPipeline u(64);
  const Estimate plain = u.run(4, 1), interleaved = u.run(4, 2);
  EXPECT_NEAR(interleaved.step.breakdown.bubble.base(), plain.step.breakdown.bubble.base() / 2.0,
              kSched * plain.step.breakdown.bubble.base());
  EXPECT_NEAR(interleaved.step.breakdown.compute.base(), plain.step.breakdown.compute.base(),
              kSched * plain.step.breakdown.compute.base());
}

TEST(PipelineSchedule, PipelineWithSameStageTimeAsAFullModelRunAddsOnlyTheBubble) {
  // pp = 4 runs 6 layers per stage; a pp = 1 run of a 6-layer model has the same per-micro-batch
  // time. With the same m, the pipelined step is that run's step plus (p-1) stage times.
  UniformPipeline deep(64), shallow(64);
  shallow.s.model.layers = 6;
  shallow.L = 6;
  const Estimate piped = deep.run(4, 1);
  // pp = 1 on 8 GPUs gives dp = 8 and m = 8; use global batch 256 so that m = 32 like the pipeline.
  shallow.s.training.global_batch = 256;
  const Estimate flat = shallow.run(1, 1);
  ASSERT_EQ(flat.layout.micro_batches, piped.layout.micro_batches);
  const double T = flat.step.time.base() / flat.layout.micro_batches;
  EXPECT_NEAR(piped.step.time.base(), flat.step.time.base() + 3.0 * T, kSched * piped.step.time.base());
}

// ---------------------------------------------------------------------------------------------
// Strategy search
// ---------------------------------------------------------------------------------------------

// GPT 1.3B on 8 GPUs with only 24 GiB each, so that memory rules out part of the space.
Scenario search_scenario() {
  GpuSpec g = test::h100_sxm();
  g.hbm_capacity = units::gib(24);
  return scenario_of(test::gpt_1_3b(), job_of(32), cluster_of(g, 8));
}

TEST(StrategySearch, AutoPickIsNoSlowerThanAnyFittingLayoutOfTheDocumentedSpace) {
  // Brute force over the space of docs/model.md Sec. 7: tp | 8 dividing heads and ffn, pp | 8/tp,
  // micro-batch in {1..32} dividing the per-rank batch, virtual stages where layers divide and
  // m % pp == 0, ZeRO 0-3 (0-1 with pp > 1, 0 with dp = 1), every recompute mode, SP when tp > 1.
  const Scenario s = search_scenario();
  const DatasheetCost cost(s.cluster);
  const Result<Estimate> r = estimate(s, cost);
  ASSERT_TRUE(r.has_value()) << to_string(r.error());
  const Estimate& pick = *r;
  EXPECT_TRUE(pick.memory.fits());
  EXPECT_TRUE(pick.layout.chosen_by_capplan);
  EXPECT_GT(pick.layout.configurations_evaluated, 1);

  const ModelSpec& m = s.model;
  double best = std::numeric_limits<double>::infinity();
  int fitting = 0, valid = 0;
  for (int tp : {1, 2, 4, 8}) {
    for (int pp : {1, 2, 4, 8}) {
      if (tp * pp > 8) continue;
      const int dp = 8 / (tp * pp);
      for (int mb : {1, 2, 4, 8, 16, 32}) {
        if ((32 / dp) % mb != 0) continue;
        const int micro_batches = 32 / dp / mb;
        std::vector<int> vs{1};
        for (int v = 2; v <= 8; ++v) {
          if (pp > 1 && micro_batches % pp == 0 && m.layers % (pp * v) == 0) vs.push_back(v);
        }
        const std::vector<int> zeros = dp == 1 ? std::vector<int>{0} : pp > 1 ? std::vector<int>{0, 1}
                                                                               : std::vector<int>{0, 1, 2, 3};
        for (int v : vs) {
          for (int zero : zeros) {
            for (Recompute rc : {Recompute::none, Recompute::selective, Recompute::full}) {
              for (bool sp : {false, true}) {
                if (sp && tp == 1) continue;
                const Parallelism p = layout(tp, pp, dp, mb, rc, sp, zero, v);
                if (has_errors(check_layout(s, p))) continue;
                ++valid;
                const Estimate e = evaluate(s, p, cost);
                if (!e.memory.fits()) continue;
                ++fitting;
                best = std::min(best, e.step.time.base());
              }
            }
          }
        }
      }
    }
  }
  ASSERT_GT(fitting, 1);
  EXPECT_LT(fitting, valid);  // the 24 GiB limit does rule some layouts out
  // The search keeps the first of layouts tied within 1e-9 relative (then the one with less
  // memory), so the pick may exceed the brute-force minimum by at most that.
  EXPECT_LE(pick.step.time.base(), best * (1.0 + 1e-9));
}

TEST(StrategySearch, FixedFieldsAreKept) {
  Scenario s = search_scenario();
  s.strategy.tp = 2;
  s.strategy.recompute = Recompute::full;
  const Result<Estimate> r = estimate(s, DatasheetCost(s.cluster));
  ASSERT_TRUE(r.has_value()) << to_string(r.error());
  EXPECT_EQ(r->layout.strategy.tp, 2);
  EXPECT_EQ(r->layout.strategy.recompute, Recompute::full);
  EXPECT_TRUE(r->layout.chosen_by_capplan);
}

TEST(StrategySearch, ImpossibleFixedTpIsAnErrorNamingTp) {
  // Llama-2-7B shape: 32 heads, so tp = 3 can never work.
  ModelSpec m = test::llama2_70b();
  m.layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 32;
  m.ffn_hidden = 11008;
  Scenario s = scenario_of(m, job_of(64), cluster_of(test::h100_sxm(), 8));
  s.strategy.tp = 3;
  const Result<Estimate> r = estimate(s, DatasheetCost(s.cluster));
  ASSERT_FALSE(r.has_value());
  EXPECT_TRUE(any_where(r.error(), "scenario#/strategy/tp")) << to_string(r.error());
}

TEST(StrategySearch, WhenNothingFitsTheLeastMemoryLayoutIsShownFlagged) {
  // Llama-3.1-405B (810 GB of bf16 weights alone) on 8 x 80 GiB cannot fit in any layout.
  const Scenario s = scenario_of(test::llama3_405b(), job_of(64), cluster_of(test::h100_sxm(), 8));
  const Result<Estimate> r = estimate(s, DatasheetCost(s.cluster));
  ASSERT_TRUE(r.has_value()) << to_string(r.error());
  EXPECT_FALSE(r->memory.fits());
  ASSERT_FALSE(r->findings.empty());
  EXPECT_EQ(r->findings.front().code, FindingCode::no_layout_fits);  // said first
  EXPECT_TRUE(has_finding(*r, FindingCode::does_not_fit));
}

// ---------------------------------------------------------------------------------------------
// Robustness
// ---------------------------------------------------------------------------------------------

void expect_all_finite(const Estimate& e, const std::string& what) {
  const StepBreakdown& b = e.step.breakdown;
  const MemoryBreakdown& mem = e.memory;
  for (double x : {e.step.time.base(), e.step.tokens_per_s, e.step.model_flops_per_gpu.base(), e.step.mfu, e.step.hfu, e.step.flops.model.base(),
                   e.step.flops.hardware.base(), e.totals.steps, e.totals.time_to_train.base(), e.totals.gpu_hours, b.compute.base(),
                   b.recompute.base(), b.tp_comm.base(), b.pp_comm.base(), b.dp_comm.base(), b.ep_comm.base(),
                   b.cp_comm.base(), b.bubble.base(), b.optimizer.base(), b.variability.base(), b.other.base(),
                   mem.weights.base(),
                   mem.gradients.base(), mem.optimizer.base(), mem.activations.base(), mem.logits.base(),
                   mem.reserve.base(), mem.capacity.base()}) {
    EXPECT_TRUE(std::isfinite(x)) << what;
    EXPECT_GE(x, 0.0) << what;
  }
  if (e.totals.cost) {
    EXPECT_TRUE(std::isfinite(e.totals.cost->base())) << what;
  }
  EXPECT_GT(e.step.time.base(), 0.0) << what;
}

TEST(EstimateRobustness, NoNanOrInfFromTinyToHuge) {
  {
    const Scenario s = scenario_of(test::tiny_model(), job_of(4, 1e6), cluster_of(test::h100_sxm(), 1));
    const Result<Estimate> r = estimate(s, DatasheetCost(s.cluster));
    ASSERT_TRUE(r.has_value()) << to_string(r.error());
    expect_all_finite(*r, "tiny model, 1 GPU, auto");
  }
  {
    Cluster c = cluster_of(test::a100_80gb(), 1024);
    c.price_per_gpu = units::usd_per_hour(1.5);
    const Scenario s = scenario_of(test::gpt3_175b(), job_of(1536), c);
    const Result<Estimate> r = estimate(s, DatasheetCost(s.cluster));
    ASSERT_TRUE(r.has_value()) << to_string(r.error());
    expect_all_finite(*r, "GPT-3 175B, 1024 A100, auto");
  }
  {
    const Scenario s = scenario_of(test::llama3_405b(), job_of(2048, 15e12), cluster_of(test::h100_sxm(), 2048));
    const DatasheetCost cost(s.cluster);
    for (const Parallelism& p : {layout(8, 16, 16, 1, Recompute::full, true, 1, 1),
                                 layout(8, 16, 16, 1, Recompute::selective, true, 0, 2),
                                 layout(8, 1, 256, 1, Recompute::full, true, 3)}) {
      expect_all_finite(evaluate(s, p, cost), "Llama 405B, 2048 H100");
    }
  }
  {
    // Partial node, a precision the GPU lacks (fp8 on A100), a single layer per stage.
    ModelSpec m = test::tiny_model();
    const Scenario s = scenario_of(m, job_of(8, 1e6, Precision::fp8), cluster_of(test::a100_80gb(), 2));
    expect_all_finite(evaluate(s, layout(1, 2, 1, 1, Recompute::full), DatasheetCost(s.cluster)), "tiny fp8 on A100");
  }
}

// ---------------------------------------------------------------------------------------------
// Published runs: Korthikanti et al. 2022, Table 5 (full recompute, no SP, A100 80GB, DGX A100
// nodes with 8 x 200 Gbit/s HDR per node)
// ---------------------------------------------------------------------------------------------

// The datasheet model targets 5% on average over Table 5; a per-row band of 10% leaves room for
// later model changes while still catching a regression of the schedule or a cost term.
constexpr double kPublishedRunBand = 0.10;

Scenario korthikanti_run(const ModelSpec& m, int gpus, int global_batch) {
  return scenario_of(m, job_of(global_batch), cluster_of(test::a100_80gb(), gpus, 8, units::gbit_per_s(200)));
}

TEST(PublishedRuns, Gpt3OneSeventyFiveBOnSixtyFourA100sIsWithinTenPercentOfEighteenPointOneThreeSeconds) {
  const Scenario s = korthikanti_run(test::gpt3_175b(), 64, 64);
  const Parallelism p = layout(8, 8, 1, 1, Recompute::full, false, 0, 3);
  ASSERT_TRUE(check_layout(s, p).empty()) << to_string(check_layout(s, p));
  const Estimate e = evaluate(s, p, DatasheetCost(s.cluster));
  const double measured = 18.13;
  EXPECT_NEAR(e.step.time.base(), measured, kPublishedRunBand * measured)
      << "predicted " << e.step.time.base() << " s, MFU " << e.step.mfu;
}

TEST(PublishedRuns, MtNlgFiveThirtyBOn280A100sIsWithinTenPercentOfFortyNinePointOhFiveSeconds) {
  const Scenario s = korthikanti_run(test::mt_nlg_530b(), 280, 280);
  const Parallelism p = layout(8, 35, 1, 1, Recompute::full, false, 0, 3);
  ASSERT_TRUE(check_layout(s, p).empty()) << to_string(check_layout(s, p));
  const Estimate e = evaluate(s, p, DatasheetCost(s.cluster));
  const double measured = 49.05;
  EXPECT_NEAR(e.step.time.base(), measured, kPublishedRunBand * measured)
      << "predicted " << e.step.time.base() << " s, MFU " << e.step.mfu;
}

// Only the data-parallel all-reduce and the GEMMs cost time: 1 s per all-reduce, GEMMs as above.
class GemmsAndOneSecondAllReduce final : public OpCostModel {
 public:
  units::Seconds gemm(const GemmOp& op) const override { return units::seconds(op.flops().base() * 1e-15); }
  units::Seconds memory(const MemoryOp&) const override { return {}; }
  units::Seconds collective(const CollectiveOp& op) const override {
    return units::seconds(op.kind == CollectiveKind::all_reduce && op.axis == Axis::dp ? 1.0 : 0.0);
  }
  std::string source() const override { return "gemms-and-1s-allreduce"; }
};

TEST(StepTiming, OverlappedDataParallelReductionSlowsTheComputeItHidesBehind) {
  // GPT 1.3B on 8 GPUs, dp = 8, ZeRO 0, one micro-batch. The all-reduce (1 s) overlaps the
  // backward pass; Megatron's last 40M-parameter bucket stays exposed: fraction 40e6 / P.
  // The overlapped part slows compute by 18.9% (Lee et al. 2025): exposed = 1 * lb + 0.189 * (1 - lb)
  // as long as the backward is longer than the all-reduce. Without overlap: exactly 1 s.
  ModelSpec m = test::gpt_1_3b();
  m.flash_attention = false;  // every backward GEMM set is exactly twice its forward
  Scenario s = scenario_of(m, job_of(8), cluster_of(test::h100_sxm(), 8));
  Parallelism p;
  p.dp = 8;
  p.zero = 0;
  p.recompute = Recompute::none;
  const GemmsAndOneSecondAllReduce cost;
  const double P = stage_params_per_gpu(m, p, 0);
  const double lb = std::min(1.0, 40e6 / P);
  const Estimate overlapped = evaluate(s, p, cost);
  // The stub's backward (2/3 of the GEMM time) is far shorter than 1 s, so only `backward` of the
  // all-reduce hides.
  const double backward = overlapped.step.breakdown.compute.base() * 2.0 / 3.0;  // fwd : bwd = 1 : 2
  const double hidden = std::min(1.0 - 1.0 * lb, backward);
  EXPECT_NEAR(overlapped.step.breakdown.dp_comm.base(), 1.0 - hidden + 0.189 * hidden, 1e-9);
  p.overlap_dp_comm = false;
  EXPECT_DOUBLE_EQ(evaluate(s, p, cost).step.breakdown.dp_comm.base(), 1.0);
}


// The planner's coded precheck and check_layout run the same rules: a layout fails one exactly
// when it fails the other, and the code names the rule.
TEST(LayoutCheck, PrecheckCodesAgreeWithTheWordedCheck) {
  const ModelSpec m = test::mixtral_8x7b();  // 32 heads, 8 experts
  const Cluster c = test::cluster_of(test::h100_sxm(), 64);
  const Scenario s = test::scenario_of(m, test::job_of(64), c);
  int failing = 0;
  for (int tp : {1, 2, 3, 8}) {
    for (int pp : {1, 2, 4}) {
      for (int ep : {1, 2, 3, 8}) {
        for (bool sp : {false, true}) {
          Parallelism p = test::layout(tp, pp, 64 / (tp * pp) > 0 ? 64 / (tp * pp) : 1, 1, Recompute::selective, sp);
          p.ep = ep;
          const bool worded = !check_layout(s, p).empty();
          EXPECT_EQ(!precheck_layout(s, p).ok(), worded) << tp << " " << pp << " " << ep << " " << sp;
          failing += worded ? 1 : 0;
        }
      }
    }
  }
  EXPECT_GT(failing, 0);
  Parallelism p = test::layout(3, 1, 21, 1, Recompute::selective, true);
  EXPECT_TRUE(precheck_layout(s, p).has(LayoutReason::tp_divides_heads));
  EXPECT_TRUE(precheck_layout(s, p).has(LayoutReason::product_is_not_the_gpus));  // 63 of 64 GPUs
  EXPECT_FALSE(precheck_layout(s, p).has(LayoutReason::ep_divides_experts));
}

}  // namespace
}  // namespace capplan::sim
