// SPDX-License-Identifier: Apache-2.0
// Private to the planner (search.cpp, plan_ranking.cpp): the cluster shapes it searches, what it keeps per shape,
// the work list (each shape's outer layouts), the per-thread worker that enumerates, prechecks,
// bounds, prices and times the layouts of one (shape, outer layout) work item, and the threads
// that run the work list split deterministically (split_indices).
#pragma once
#include <cstddef>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/folds/memory.hpp"
#include "capplan/sim/cost/op_cost.hpp"
#include "capplan/sim/search/search.hpp"
#include "capplan/sim/lowering/step_model.hpp"
#include "schedule/step_timing.hpp"
#include "estimate/layout_space.hpp"

namespace capplan::sim::planner {

struct Shape {
  int offering = 0;
  int nodes = 0;
  Scenario scenario;  // base with this offering's cluster of nodes x gpus_per_node GPUs
  std::optional<Finding> batch;  // how a batch asked in tokens became this shape's sequences
  const OpCostModel* cost = nullptr;
};

// A timed layout of one shape.
// A timed layout, ranked by the selection rule estimate() uses (layout_space.hpp, better()).
using Timed = LayoutScore;

// A layout that does not fit, by its exact memory.
struct Oversized {
  double bytes = 0;
  Parallelism p;
};

struct ShapeResult {
  std::vector<Timed> best;  // fastest first, at most `keep`
  std::optional<Oversized> least_memory;
};



struct WorkItem {
  int shape = 0;
  OuterLayout outer;
};

// Every shape's outer layouts (ShapeLayoutSpace::outer_layouts), shape by shape. An item is the
// unit a thread takes: the memory bounds of docs/planner.md carry across the inner points of one
// outer layout, so those stay together.
std::vector<WorkItem> work_items(const std::vector<Shape>& shapes, LayoutSpaceKind kind, bool even_stages = false);

struct Counters {
  long configurations = 0, timed = 0, memory_rejected = 0, pruned = 0;
  void add(const Counters& o) {
    configurations += o.configurations;
    timed += o.timed;
    memory_rejected += o.memory_rejected;
    pruned += o.pruned;
  }
};

// What the per-micro-batch op costs depend on (StepOpParts::micro_batch).
// The planner prices the micro-batch part of the op list once per distinct projection of the
// layout onto the fields that part reads (micro_batch_key, next to the op list).
struct MicroKeyHash {
  std::size_t operator()(const std::pair<int, Parallelism>& k) const { return hash_value(k.second) ^ (std::size_t(k.first) * 0x9E3779B97F4A7C15ULL); }
};
struct MicroCosts {
  OpBuckets buckets;
  ActivationFootprint footprint;
};

// Less memory first, then the layout order.
bool smaller(const Oversized& a, const Oversized& b);
// Keeps the `keep` best of `v` by the selection rule (better()).
void keep_best(std::vector<Timed>& v, const Timed& t, std::size_t keep);
// Keeps the layout that needs the least memory (then the layout order).
void keep_least(std::optional<Oversized>& least, const Oversized& o);

// One thread's state: caches and results, merged after all work is done.
class Worker {
 public:
  Worker(const std::vector<Shape>& shapes, std::size_t keep, bool prune, LayoutSpaceKind kind)
      : shapes_(shapes), keep_(keep), prune_(prune), kind_(kind), results_(shapes.size()) {}

  void run(const WorkItem& item);
  const std::vector<ShapeResult>& results() const { return results_; }
  const Counters& counters() const { return counters_; }

 private:
  // `s`: the shape's scenario at the layout's micro-batch (ScenarioByMicroBatch).
  const MicroCosts& micro_costs(const Shape& sh, const Scenario& s, const Parallelism& p);

  const std::vector<Shape>& shapes_;
  std::size_t keep_;
  bool prune_;
  LayoutSpaceKind kind_;
  std::vector<ShapeResult> results_;
  Counters counters_;
  StepOps scratch_;
  std::unordered_map<std::pair<int, Parallelism>, MicroCosts, MicroKeyHash> micro_;
};

// Runs the work list on one thread per worker: worker t takes the items of range t of
// split_indices(items.size(), workers.size()), in order, so which worker does what depends on the
// thread count only. Reports the items done to `progress` (about every 50 ms, and at the start and
// the end) from the calling thread; false when `progress` cancelled the search.
bool run_split(std::vector<Worker>& workers, const std::vector<WorkItem>& items, const ProgressCallback& progress);

}  // namespace capplan::sim::planner
