// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "capplan/sim/workload/finding.hpp"
#include "capplan/sim/folds/step_flops.hpp"
#include "capplan/sim/schedule/step_breakdown.hpp"
#include "capplan/sim/goodput/goodput.hpp"
#include "capplan/sim/workload/hardware.hpp"
#include "capplan/sim/folds/memory.hpp"
#include "capplan/sim/cost/op_cost.hpp"
#include "capplan/sim/workload/result.hpp"
#include "capplan/sim/workload/scenario.hpp"
#include "capplan/sim/workload/strategy.hpp"
#include "capplan/sim/workload/workload.hpp"

namespace capplan::sim {

// An interval around a prediction: the value lies in [low, high] with the stated probability
// (p10..p90 = 80%), from the model's validation residuals for the category and input uncertainty.
struct Interval {
  double low = 0;
  double high = 0;
};

// How the band was widened for a GPU without a published GEMM or attention efficiency: the
// estimate's layout re-evaluated over the other GPUs' published range of each unknown efficiency.
struct BandWidening {
  double down = 1.0;  // ratio_p10 multiplied by this (<= 1)
  double up = 1.0;    // ratio_p90 multiplied by this (>= 1)
  bool gemm = false, attention = false;  // which efficiency was unknown
  double gemm_low = 0, gemm_high = 0, attention_low = 0, attention_high = 0;  // the ranges used
  // The framework had no host time per op and the step is host-bound at `host_us_per_op` (the
  // spread's high end): the low end priced there.
  bool host = false;
  double host_us_per_op = 0;
};
// Multiplicative error band of the throughput prediction: measured/predicted in
// [ratio_p10, ratio_p90] for 80% of validated runs of this category: their p10-p90, or where
// that lies on one side of 1 (the point estimate) the 80% nearest it, extended to 1 if it still
// falls short (sim/uncertainty.hpp band_quantiles). Its basis (how it was derived) is data, worded by data/ (error_band_basis in
// data/findings.hpp).
struct ErrorBand {
  double ratio_p10 = 1.0;  // <= 1
  double ratio_p90 = 1.0;  // >= 1
  std::string category;   // whose validated runs give the band, e.g. "dense/megatron/9-512"
  std::string asked;      // the scenario's own category (another one when it had too few runs)
  long runs = 0;          // validated runs behind the band
  std::optional<BandWidening> widened;
  // The runs' p10-p90 (after any widening) when it lay on one side of the estimate, so that the
  // band is the 80% of runs nearest the estimate instead: [unextended_p10, unextended_p90]
  // excludes 1.
  std::optional<Interval> unextended;
};

// How the layout was chosen.
struct LayoutChoice {
  Parallelism strategy;
  bool chosen_by_capplan = false;
  long configurations_evaluated = 1;
  int micro_batches = 1;  // per data-parallel rank per step (gradient accumulation steps)
};

// One optimizer step: its time, where the time goes, and the FLOP rates it achieves.
struct StepResult {
  units::Seconds time;
  double tokens_per_s = 0;
  units::FlopsPerSecond model_flops_per_gpu;
  double mfu = 0;            // against the dense peak of the chosen precision
  double mfu_bf16_peak = 0;  // against the dense BF16 (or FP16) peak, whatever the precision
  double hfu = 0;            // hardware FLOPs (with recomputation) against the same peak
  StepFlops flops;
  StepBreakdown breakdown;
  std::string cost_model;  // OpCostModel::source()
};

// The whole run at steady state and sticker price (Goodput has the expected figures).
struct RunTotals {
  double steps = 0;
  units::Seconds time_to_train;
  double gpu_hours = 0;
  std::optional<units::Usd> cost;
  std::optional<units::UsdPerSecond> price_per_gpu;
};

// Filled by apply_error_band(): empty when no band is known.
struct Uncertainty {
  std::optional<ErrorBand> band;
  std::optional<Interval> step_time_s;
  std::optional<Interval> tokens_per_s;
  std::optional<Interval> time_to_train_days;
  std::optional<Interval> cost_usd;
  // The expected figures with interruptions and checkpoints (Goodput::wall, Goodput's total
  // cost), from the goodput model run again at the band's slow and fast throughput.
  std::optional<Interval> wall_days;
  std::optional<Interval> total_cost_usd;
};

// One estimate, grouped: the layout, one step, memory per GPU, the run's totals, their
// uncertainty, goodput, and what the user should know (findings, rendered by the front ends).
struct Estimate {
  LayoutChoice layout;
  StepResult step;
  MemoryBreakdown memory;
  RunTotals totals;
  Uncertainty uncertainty;
  // Expected time with interruptions, checkpoints and data loading, and the total cost
  // (totals stay the steady-state, sticker-price figures). A planner ranks on goodput.wall and
  // goodput.cost.total.
  Goodput goodput;
  std::vector<Finding> findings;  // in order: layout, memory, goodput and cost, price
};

// Why a layout cannot run, as codes: the cheap check the planner and estimate's auto search run on
// every candidate (no finding is built). check_layout runs the same rules and codes each failure.
enum class LayoutReason : unsigned {
  not_positive,
  zero_out_of_range,
  experts_need_moe,
  etp_divides_expert_ffn,
  ep_divides_experts,
  ep_divides_ranks,
  moe_tp_needs_sequence_parallel,
  module_recompute_needs_selective,
  offload_params_needs_zero3,
  cp_divides_sequence,
  tp_divides_heads,
  tp_divides_ffn,
  product_is_not_the_gpus,
  pipeline_exceeds_layers,
  stage_layers_invalid,
  interleaving_needs_pipeline,
  batch_not_divisible,
};
struct LayoutCheck {
  unsigned reasons = 0;  // bit r set: LayoutReason r failed
  bool ok() const { return reasons == 0; }
  bool has(LayoutReason r) const { return (reasons >> static_cast<unsigned>(r)) & 1u; }
};
LayoutCheck precheck_layout(const Scenario& s, const Parallelism& p);

// Checks a complete layout against the scenario. Errors name the strategy field (where:
// "scenario#/strategy/tp") and carry a coded finding (FindingCode::layout_*, no message):
// data::word gives them their words ("must divide the number of attention heads (64); got 6").
Diagnostics check_layout(const Scenario& s, const Parallelism& p);

// The full estimate for one complete layout. Contract: `p` passed check_layout.
Estimate evaluate(const Scenario& s, const Parallelism& p, const OpCostModel& cost);

// evaluate(), plus the findings about the one plan a user reads that take a second evaluation:
// a LoRA step slower than full fine-tuning of the same layout would be
// (FindingCode::lora_adapters_cost_more_than_skipped_gradients). estimate() and the planner's
// chosen plans use it; a search's candidates use evaluate().
Estimate evaluate_and_explain(const Scenario& s, const Parallelism& p, const OpCostModel& cost);

// Fills every "auto" field of the request (best throughput that fits in memory; if nothing
// fits, the layout with the least memory, flagged), then evaluates it.
Result<Estimate> estimate(const Scenario& s, const OpCostModel& cost);

}  // namespace capplan::sim
