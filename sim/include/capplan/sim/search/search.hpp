// SPDX-License-Identifier: Apache-2.0
// The planner: searches parallel layouts x cluster shapes (node counts) x offerings (instance
// types with their prices) for the cheapest plan that meets a deadline, the fastest within a
// budget, or the whole (time-to-train, cost) Pareto front.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/workload/hardware.hpp"
#include "capplan/sim/cost/op_cost.hpp"
#include "capplan/sim/workload/pricing.hpp"
#include "capplan/sim/workload/result.hpp"
#include "capplan/sim/estimate/uncertainty.hpp"
#include "capplan/sim/units.hpp"

namespace capplan::sim {

// One thing that can be rented: an instance type (or a bare GPU model) with its price.
// Contract: `node` is a per-node template: gpu, gpus_per_node, intra/inter-node bandwidth and
// price_per_gpu are used, node.gpus is ignored (the search sets it to nodes x gpus_per_node).
// An empty node.price_per_gpu means "price unknown": such plans are ranked on time only and
// flagged (Plan::price_known == false); they never meet a budget.
struct Offering {
  std::string instance_id;  // catalog id ("aws-p5.48xlarge"); empty when given by GPU only
  std::string provider;     // "aws"; may be empty
  std::string region;       // region of the price; may be empty
  std::string price_type;   // "on-demand", "spot", "reserved", "capacity-block", "user", ...
  Cluster node;
  // The purchase terms and currency of this offering's price; empty: the base scenario's. A
  // scenario's own terms (spot price, preemptions, commitment) belong to its own instance: give
  // other offerings their own (default terms: on demand at node.price_per_gpu).
  std::optional<PricingTerms> pricing;
};

enum class Objective {
  cheapest,  // least cost among plans that meet the deadline (and budget); ties: faster first
  fastest,   // least time-to-train among plans within the budget (and deadline); ties: cheaper first
  pareto,    // the (time-to-train, cost) Pareto front, fastest first
};
const char* to_string(Objective o);
std::optional<Objective> objective_from_string(const std::string& s);

// Which layouts are searched per cluster shape (docs/planner.md "Search space").
// standard: what estimate() searches for "auto": TP inside a node, micro-batches 1-32 in powers of
//   two, ZeRO 0/1 with pipelining (0-3 without), recompute none/selective/full, sequence parallelism
//   on/off, virtual stages that divide the layers, CP for long sequences, EP for MoE models.
// exhaustive: also TP across nodes, every micro-batch dividing the batch per DP rank (to 1024),
//   ZeRO 2/3 with pipelining, and the TP and PP communication-overlap switches both ways.
enum class LayoutSpace { standard, exhaustive };
const char* to_string(LayoutSpace s);
std::optional<LayoutSpace> layout_space_from_string(const std::string& s);

// Which time to train a deadline is checked against (docs/planner.md "Deadline quantile").
// point: the plan's own figure (plan_time), as estimate prints it; p50: the same (the point is
//   taken as the median); p90: the slow end of the plan's error band (apply_error_band's
//   wall_days, or time_to_train_days where goodput is not modelled): the deadline is met with 90%
//   confidence, as far as the validated runs of the plan's category tell.
enum class DeadlineQuantile { point, p50, p90 };
const char* to_string(DeadlineQuantile q);
std::optional<DeadlineQuantile> deadline_quantile_from_string(const std::string& s);

// Builds the cost model that prices one offering's operations. Default (empty): DatasheetCost.
// Contract: called once per offering, from the calling thread; the model it returns is shared by
// all worker threads (OpCostModel is immutable and thread-safe by contract).
using CostModelFactory = std::function<std::shared_ptr<const OpCostModel>(const Cluster&)>;

struct SearchRequest {
  // Model, training job, and the strategy fields the user fixed (each unset field is searched).
  // base.cluster is used as the only offering when `offerings` is empty.
  Scenario base;
  std::vector<Offering> offerings;
  // Node counts to try per offering (each >= 1). Empty: base.cluster.nodes() only.
  std::vector<int> node_counts;
  int max_gpus = 0;  // 0 = no limit; shapes with more GPUs are skipped
  std::optional<units::Seconds> deadline;  // time-to-train limit
  // What the deadline is checked against. With p90 the band comes from `error_band` (the residual
  // table estimate's bands come from); a plan whose category the table lacks (nor a fallback) has
  // no p90 and does not meet the deadline. Contract: p90 is computed only for plans that could
  // meet the deadline (those meeting it at the point, unless the band lies wholly above 1), and
  // ranking stays on the point figures. Whatever the quantile, a chosen plan whose category the
  // table shows the model to be optimistic in (optimistic_regime) gets the note
  // plan_regime_optimistic and a runner-up "regime" (the best plan of a category it is not).
  DeadlineQuantile deadline_quantile = DeadlineQuantile::point;
  ResidualTable error_band;
  std::optional<units::Usd> budget;        // total cost limit
  Objective objective = Objective::cheapest;
  int top_k = 5;        // plans returned (>= 1)
  int threads = 0;      // worker threads; 0 = std::thread::hardware_concurrency()
  // true: at most one plan per cluster shape (offering x nodes), its best layout (the default:
  // the top-K then shows K different things to rent); false: top-K over every layout.
  bool one_plan_per_shape = true;
  LayoutSpace space = LayoutSpace::standard;
  // Only pipeline depths that divide the layers (with virtual stages: PP x v divides them, as
  // always), so every stage holds the same layers. Contract: first/last-stage layers the base
  // strategy fixes are kept as given (a front end refuses that combination).
  bool even_stages = false;
  // Skip layouts that a memory lower bound proves cannot fit (docs/planner.md). Off only to
  // check that pruning never changes the answer.
  bool prune = true;
  CostModelFactory cost_model;
};

// One candidate answer: a fully specified layout on `nodes` instances of an offering, with its
// full estimate (as `capplan estimate` would print it for that scenario).
// The two axes every plan is ranked on: the expected wall time with interruptions, checkpoints
// and data loading (Estimate::goodput.wall; the steady-state time_to_train when goodput is not
// modelled) and the total cost (goodput.cost.total: sticker, spot/reserved/on-prem terms,
// storage; empty when a needed price is unknown).
units::Seconds plan_time(const Estimate& e);
std::optional<units::Usd> plan_cost(const Estimate& e);

struct Plan {
  Estimate estimate;
  int offering = -1;  // index into SearchRequest::offerings (or 0 for base.cluster)
  std::string instance_id;
  std::string gpu_id;
  int nodes = 0;
  int gpus = 0;
  bool price_known = false;
  bool meets_deadline = true;  // true when no deadline was given
  bool meets_budget = true;    // true when no budget was given; false when the price is unknown
  std::string price_source;
  // With deadline_quantile p90: the p90 of plan_time that the deadline was checked against
  // (empty when not computed: no deadline, another quantile, a plan that misses the deadline at
  // the point, or no band for its category).
  std::optional<units::Seconds> time_p90;
  PurchaseModel purchase = PurchaseModel::on_demand;  // the terms the plan's cost is under
  Currency currency;  // its price's currency (the cost itself is in US dollars, as ranked)
};

// Why no plan met the constraints. The planner returns structure only; data/plan_text.hpp
// writes the sentences (failure_message, runner_up_text, explanation).
enum class FailureKind {
  no_layout,            // no valid parallel layout exists for any cluster shape searched
  memory,               // no layout fits in GPU memory on any shape searched
  deadline,             // no plan meets the deadline (the budget, if given, is met by some)
  budget,               // no plan meets the budget (the deadline, if given, is met by some)
  deadline_nor_budget,  // no plan meets the deadline, and none meets the budget
  deadline_and_budget,  // each is met by some plan, never both at once
};

struct ConstraintFailure {
  FailureKind kind = FailureKind::no_layout;
  bool any_price = false;  // whether any plan searched had a known price (a budget needs one)
  // The plan that came closest: for memory the layout needing the least memory per GPU; for
  // deadline (and deadline_nor_budget) the fastest; for budget the cheapest; for
  // deadline_and_budget the one whose larger of time/deadline and cost/budget is smallest.
  // Empty for no_layout (and for memory when no layout was sized).
  std::optional<Plan> closest;
  // The closest plan's position on the two axes as the search ranked it (time to train with
  // failures and checkpoints; total cost, empty when its price is unknown). Unset for memory.
  units::Seconds closest_time;
  std::optional<units::Usd> closest_cost;
  // memory: what would make the closest plan fit (full recompute, host offload) where the scenario
  // and its recipe leave it open and the stack runs it; empty when nothing would.
  std::optional<Finding> remedy;
};

// The best plan that differs from the chosen one along one dimension, and what that change does.
// The chosen plan is chosen_plan(result); the sentence is data::runner_up_text's.
struct RunnerUp {
  // "more_nodes" / "fewer_nodes" (the best plan on the same offering with more / fewer nodes),
  // "regime" (the best plan of a category the model is not known to be optimistic in, when the
  // chosen plan's is: SearchRequest::deadline_quantile),
  // "offering" (the best plan on another offering), "layout" (the next layout on the same shape
  // that is not just as fast), "fastest", "cheapest" (overall, when not the chosen plan).
  // "Best": meeting the constraints first, then by the objective.
  std::string dimension;
  Plan plan;  // its nodes, shape and layout against the chosen plan's say what changed
  double time_ratio = 1;  // runner-up time-to-train / chosen
  std::optional<double> cost_ratio;  // runner-up cost / chosen (empty when a price is unknown)
};

// Counts that make the throughput figure honest. A "configuration" is one fully specified
// layout on one shape (offering x node count) that passed the divisibility checks of
// check_layout and was then decided: timed, rejected by its exact memory, or pruned by a bound
// that covers it without timing it.
struct SearchStats {
  long configurations = 0;   // all decided configurations (= timed + memory_rejected + pruned_by_bound)
  long timed = 0;            // step time computed
  long memory_rejected = 0;  // exact memory computed: does not fit
  long pruned_by_bound = 0;  // skipped by a lower bound (static memory) without being computed
  long shapes = 0;           // offering x node-count pairs searched
  int threads = 1;
};

struct SearchResult {
  long configurations_evaluated = 0;  // == stats.configurations
  double elapsed_s = 0;               // wall time of search() (steady clock)
  SearchStats stats;
  bool cancelled = false;           // the progress callback returned false; nothing else is filled
  std::vector<Plan> plans;          // best first by the objective, at most top_k, all meet the constraints
  std::vector<Plan> pareto;         // non-dominated (time, cost) plans with a known price, fastest first
  std::optional<ConstraintFailure> failure;  // set when no plan meets deadline/budget/memory
  std::vector<RunnerUp> runner_ups; // for chosen_plan(), one per dimension found
  std::vector<Finding> notes;       // unknown prices, offerings skipped and why
};

// The plan the search explains and compares its runner-ups with: plans[0], or, when no plan met
// the deadline or budget, failure->closest; null when there is none (cancelled, no layout, memory).
const Plan* chosen_plan(const SearchResult& r);

struct SearchProgress {
  long done = 0;   // work items finished
  long total = 0;  // work items in all
};

// Returns true to continue, false to cancel. Contract: called only on the thread that called
// search(), at least once at the start and once at the end, and about every 50 ms in between.
using ProgressCallback = std::function<bool(const SearchProgress&)>;

// The layouts searched for one scenario's cluster (the fixed strategy fields applied), in search
// order, each passing check_layout: the same space estimate() searches for "auto".
// even_stages: only pipeline depths that divide the layers (SearchRequest::even_stages).
std::vector<Parallelism> candidate_layouts(const Scenario& s, LayoutSpace space = LayoutSpace::standard,
                                           bool even_stages = false);

// The scenario a plan was estimated for: the base with the plan's offering (its cluster and, when
// it has them, its pricing terms) and node count.
Scenario plan_scenario(const SearchRequest& request, const Plan& plan);

// Validates the request (errors name the field: "search#/node_counts/2: must be >= 1; got 0"),
// enumerates, prunes, times and ranks. Deterministic: the result (elapsed_s and stats.threads
// aside) is identical whatever the thread count.
Result<SearchResult> search(const SearchRequest& request, const ProgressCallback& progress = {});

}  // namespace capplan::sim
