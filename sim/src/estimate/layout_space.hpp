// SPDX-License-Identifier: Apache-2.0
// The space of parallel layouts searched for one cluster size, as a value: named dimensions with
// their domains, an index that is a mixed-radix (Cartesian) counter over them, construct(index)
// returning the layout or why that point is not one, and split(n) for threads. Shared by
// estimate()'s "auto" strategy (strategy_search.cpp) and by the planner (search.cpp,
// planner_worker.cpp), so both search exactly the same layouts in the same order.
//
// Two levels, because the domains of the inner dimensions depend on the outer ones:
//  - ShapeLayoutSpace, the space of one cluster shape, indexes the outer level: cp, ep, etp, tp,
//    pp (slowest to fastest); dp is derived (GPUs / (tp x pp x cp)) and the batch per DP rank
//    with it. (Not called LayoutSpace: that is the public standard/exhaustive switch, search.hpp.)
//  - InnerLayoutSpace, one per valid outer layout: micro_batch, virtual_stages, zero, recompute,
//    sequence_parallel, tp_comm_overlap, pp_comm_overlap, ep_comm_overlap.
// Each level is a full Cartesian product; the few points of it that are not layouts (TP x PP x CP
// not dividing the GPUs, interleaving with a micro-batch count that is not a multiple of PP, ...)
// construct to a status instead, and the visits skip them. Layouts are not yet checked with
// check_layout / precheck_layout.
#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <string_view>
#include <vector>

#include "capplan/sim/workload/strategy.hpp"
#include "capplan/sim/workload/workload.hpp"

namespace capplan::sim {

// Sequences from this length on are searched with context parallelism too.
inline constexpr int kLongContext = 32768;
// Whether the planner searches context parallelism: for long sequences, and whenever the global
// batch holds fewer sequences than there are GPUs, so that the layout must split something other
// than the batch (small fine-tuning batches: NVIDIA's MLPerf Llama 2 70B LoRA configs split
// 8192-token sequences over cp 2 at a global batch of 8 on 64 GPUs). A global batch of 0 (being
// searched) counts as small.
inline bool searches_cp(const ModelSpec& m, long long global_batch, int gpus) {
  return m.seq_len >= kLongContext || global_batch < gpus;
}

// The fields that fix how many GPUs each dimension takes (plus the batch left per DP rank).
struct OuterLayout {
  int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, etp = 1;
  long long per_dp = 0;  // sequences per data-parallel rank per step
};

// standard: the space estimate() searches for "auto" (TP inside a node, micro-batches 1..32 in
// powers of two, ZeRO 0/1 with pipelining, the default overlap switches). exhaustive (the planner
// only): TP across nodes too, every micro-batch that divides the batch per DP rank, ZeRO 0-3 with
// any pipeline, and the TP / PP communication overlap switches both ways.
enum class LayoutSpaceKind { standard, exhaustive };

// One dimension: its name (the Parallelism field and scenario key) and its domain in the order
// searched: the kind's candidates, or the one value the StrategyRequest fixes. Switches are 0/1,
// recompute is Recompute's enumerator value.
struct LayoutDimension {
  std::string_view name;
  std::vector<int> values;
};

// Why a point of a level's index range is not a layout.
enum class PointStatus {
  ok,
  tp_not_dividing_gpus,          // TP < 1 or not a divisor of the GPUs
  model_not_dividing_gpus,       // TP x PP x CP < 1, above the GPUs or not dividing them
  experts_not_dividing_ranks,    // MoE: EP x ETP does not divide TP x DP x CP
  dp_not_the_requested,          // DP differs from the one the request fixes
  dp_not_dividing_batch,         // DP does not divide the global batch
  interleaving_without_rounds,   // searched virtual stages > 1 with micro-batches not a multiple of PP
};
const char* to_string(PointStatus s);

// The indices begin, begin + stride, ... below end.
struct IndexRange {
  std::size_t begin = 0, end = 0, stride = 1;
  std::size_t count() const { return begin >= end ? 0 : (end - begin + stride - 1) / stride; }
};
// n ranges (n >= 1) that together hold every index below `size` exactly once, the same for the
// same (size, n): range t is t, t + n, t + 2n, ... (strided, so neighbouring points, which cost
// about the same, are spread over the threads).
std::vector<IndexRange> split_indices(std::size_t size, int n);

namespace detail {
// The dimension called `name` among `dims`, or nullptr.
const LayoutDimension* find_dimension(const std::vector<LayoutDimension>& dims, std::string_view name);
// Product of the domain sizes (0 when one is empty).
std::size_t product_of_domains(const std::vector<LayoutDimension>& dims);
}  // namespace detail

// The completions of one outer layout.
class InnerLayoutSpace {
 public:
  InnerLayoutSpace(const ModelSpec& m, const StrategyRequest& r, const OuterLayout& o,
                   LayoutSpaceKind kind = LayoutSpaceKind::standard);

  const std::vector<LayoutDimension>& dimensions() const { return dims_; }
  const LayoutDimension* dimension(std::string_view name) const { return detail::find_dimension(dims_, name); }
  std::size_t size() const { return size_; }
  // The layout at `index` (< size()) and its micro-batch count per step, or why it is not one
  // (then `p` and `micro_batches` are left as they were).
  PointStatus construct(std::size_t index, Parallelism& p, long long& micro_batches) const;
  std::vector<IndexRange> split(int n) const { return split_indices(size_, n); }

  // visit(const Parallelism&, long long micro_batches) for every layout of `range`, in index
  // order (micro-batch slowest, then virtual stages, ZeRO, recompute, sequence parallelism and the
  // TP / PP / EP overlap switches).
  template <class Visit>
  void for_each(IndexRange range, Visit&& visit) const;
  template <class Visit>
  void for_each(Visit&& visit) const {
    for_each(IndexRange{0, size_, 1}, visit);
  }

 private:
  enum Dim : std::size_t { kMicroBatch, kVirtualStages, kZero, kRecompute, kSp, kTpOverlap, kPpOverlap, kEpOverlap, kDims };
  using Digits = std::array<std::size_t, kDims>;
  Digits digits_of(std::size_t index) const;
  bool valid(const Digits& d) const { return d[kVirtualStages] == 0 || !rounds_checked_ || rounds_ok_[d[kMicroBatch]]; }
  void apply(const Digits& d, Parallelism& p) const;

  std::vector<LayoutDimension> dims_;
  std::size_t size_ = 0;
  Parallelism base_;                         // the outer fields and the options never searched
  std::vector<long long> micro_batches_;     // per micro_batch value
  std::vector<char> rounds_ok_;              // per micro_batch value: micro-batches % PP == 0
  bool rounds_checked_ = false;              // virtual stages are searched (not fixed) with PP > 1
};

// The outer level for `gpus` GPUs on nodes of `gpus_per_node`, with the fixed fields of the
// request applied. Automatic TP stays inside a node (NVLink) in the standard kind; pipeline depth
// is bounded by the layers, and with `even_stages` divides them (a fixed PP that does not leaves
// the space empty). The model's and request's values it needs are copied in.
class ShapeLayoutSpace {
 public:
  ShapeLayoutSpace(const ModelSpec& m, const TrainingJob& job, const StrategyRequest& r, int gpus, int gpus_per_node,
              LayoutSpaceKind kind = LayoutSpaceKind::standard, bool even_stages = false);

  const std::vector<LayoutDimension>& dimensions() const { return dims_; }
  const LayoutDimension* dimension(std::string_view name) const { return detail::find_dimension(dims_, name); }
  std::size_t size() const { return size_; }
  PointStatus construct(std::size_t index, OuterLayout& out) const;
  std::vector<IndexRange> split(int n) const { return split_indices(size_, n); }

  // The valid outer layouts in index order.
  std::vector<OuterLayout> outer_layouts() const;
  // The inner level of one outer layout.
  InnerLayoutSpace inner(const OuterLayout& o) const { return InnerLayoutSpace(model_, request_, o, kind_); }
  // visit(const Parallelism&, long long micro_batches) for every layout: outer, then inner order.
  template <class Visit>
  void for_each(Visit&& visit) const {
    for (const OuterLayout& o : outer_layouts()) inner(o).for_each(visit);
  }

 private:
  enum Dim : std::size_t { kCp, kEp, kEtp, kTp, kPp, kDims };
  ModelSpec model_;
  StrategyRequest request_;
  long long global_batch_ = 0;
  int gpus_ = 0;
  LayoutSpaceKind kind_;
  std::vector<LayoutDimension> dims_;
  std::size_t size_ = 0;
};

template <class Visit>
void InnerLayoutSpace::for_each(IndexRange range, Visit&& visit) const {
  range.end = std::min(range.end, size_);
  if (range.begin >= range.end) return;
  Parallelism p = base_;
  if (range.stride != 1) {
    for (std::size_t i = range.begin; i < range.end; i += range.stride) {
      const Digits d = digits_of(i);
      if (!valid(d)) continue;
      apply(d, p);
      visit(static_cast<const Parallelism&>(p), micro_batches_[d[kMicroBatch]]);
    }
    return;
  }
  // A mixed-radix odometer, the last dimension fastest: the same points as construct(i) for each
  // i of the range, without a division per point.
  Digits d = digits_of(range.begin);
  for (std::size_t i = range.begin;;) {
    if (valid(d)) {
      apply(d, p);
      visit(static_cast<const Parallelism&>(p), micro_batches_[d[kMicroBatch]]);
    }
    if (++i == range.end) break;
    for (std::size_t k = kDims; k-- > 0;) {
      if (++d[k] < dims_[k].values.size()) break;
      d[k] = 0;
    }
  }
}

// The one rule by which estimate's `auto` choice and the planner rank layouts that fit: the
// faster step first, then the smaller peak memory, then the layout order, so a choice never
// depends on the order layouts are visited in or on how they are split across threads.
struct LayoutScore {
  double step_s = 0;
  double memory_bytes = 0;
  Parallelism p;
};
inline bool better(const LayoutScore& a, const LayoutScore& b) {
  if (a.step_s != b.step_s) return a.step_s < b.step_s;
  if (a.memory_bytes != b.memory_bytes) return a.memory_bytes < b.memory_bytes;
  return a.p < b.p;
}

}  // namespace capplan::sim
