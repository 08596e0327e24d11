// SPDX-License-Identifier: Apache-2.0
#include "search/planner_worker.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace capplan::sim::planner {

namespace {
bool faster(const Timed& a, const Timed& b) { return better(a, b); }
}  // namespace

bool smaller(const Oversized& a, const Oversized& b) {
  if (a.bytes != b.bytes) return a.bytes < b.bytes;
  return a.p < b.p;
}

void keep_best(std::vector<Timed>& v, const Timed& t, std::size_t keep) {
  if (v.size() >= keep && !faster(t, v.back())) return;
  v.insert(std::upper_bound(v.begin(), v.end(), t, faster), t);
  if (v.size() > keep) v.pop_back();
}

void keep_least(std::optional<Oversized>& least, const Oversized& o) {
  if (!least || smaller(o, *least)) least = o;
}


const MicroCosts& Worker::micro_costs(const Shape& sh, const Scenario& s, const Parallelism& p) {
  std::pair<int, Parallelism> key{sh.offering, micro_batch_key(p)};
  auto it = micro_.find(key);
  if (it != micro_.end()) return it->second;
  build_step_ops_into(scratch_, s.model, s.training, p, s.cluster, StepOpParts::micro_batch);
  MicroCosts c;
  add_op_costs(c.buckets, scratch_.ops, *sh.cost);
  c.footprint = activation_footprint(scratch_.ops);
  return micro_.emplace(std::move(key), c).first->second;
}

// Index of the (virtual stages, ZeRO, recompute, sequence parallel) combination of a layout.
namespace {
int variant_of(const Parallelism& p) {
  return ((std::min(p.virtual_stages, 1023) * 4 + p.zero) * 3 + static_cast<int>(p.recompute)) * 2 +
         (p.sequence_parallel ? 1 : 0);
}
}  // namespace

void Worker::run(const WorkItem& item) {
  const Shape& sh = shapes_[static_cast<std::size_t>(item.shape)];
  const Scenario& s = sh.scenario;
  ShapeResult& res = results_[static_cast<std::size_t>(item.shape)];
  const MemoryAssumptions assumptions;

  // Step parts of this (shape, tp, pp, dp, cp, ep): the pipeline send/recv per micro-batch size,
  // the data-parallel collectives and optimizer per ZeRO stage.
  std::vector<std::pair<int, OpBuckets>> pipeline_by_mb;
  // Stage runs per virtual-stage count (pp and the first/last stage layers are fixed here).
  std::vector<std::pair<int, std::vector<StageRun>>> runs_by_v;
  std::array<std::optional<OpBuckets>, 4> step_by_zero;
  double stage_params = -1;
  // Bounds (docs/planner.md): static memory (weights, gradients, optimizer states and the reserve
  // on them) per ZeRO stage; and memory never falls as the micro-batch grows, so a combination
  // that did not fit at a smaller micro-batch is skipped at the larger ones.
  std::array<bool, 4> static_too_big{};
  std::vector<int> failed_variants;

  // Unpacked fine-tuning pads each micro-batch to its longest sample: a layout's micro-batch parts,
  // memory and schedule use the scenario resolved at its micro-batch.
  ScenarioByMicroBatch by_micro_batch(s);
  InnerLayoutSpace(s.model, s.strategy, item.outer, kind_).for_each([&](const Parallelism& p, long long micro_batches) {
    const Scenario& sc = by_micro_batch.at(p.micro_batch);
    if (!precheck_layout(sc, p).ok()) return;
    ++counters_.configurations;
    const int variant = variant_of(p);
    const std::size_t zi = static_cast<std::size_t>(std::clamp(p.zero, 0, 3));
    if (prune_ && (static_too_big[zi] ||
                   std::find(failed_variants.begin(), failed_variants.end(), variant) != failed_variants.end())) {
      ++counters_.pruned;
      return;
    }
    const MicroCosts& micro = micro_costs(sh, sc, p);
    auto runs = std::find_if(runs_by_v.begin(), runs_by_v.end(), [&](const auto& x) { return x.first == p.virtual_stages; });
    if (runs == runs_by_v.end()) {
      runs_by_v.emplace_back(p.virtual_stages, stage_runs(s.model, p));
      runs = std::prev(runs_by_v.end());
    }
    const MemoryBreakdown mem = memory_per_gpu(micro.footprint, runs->second, sc.model, sc.training, p,
                                               sc.cluster.gpu, static_cast<int>(micro_batches), assumptions);
    if (!mem.fits()) {
      ++counters_.memory_rejected;
      keep_least(res.least_memory, {mem.total().base(), p});
      if (prune_) {
        failed_variants.push_back(variant);
        const units::Bytes fixed_part = mem.weights + mem.gradients + mem.optimizer;
        const units::Bytes bound =
            fixed_part + fixed_part * assumptions.reserve_fraction + units::gib(assumptions.reserve_fixed_gib);
        if (bound > mem.capacity) static_too_big[zi] = true;
      }
      return;
    }

    OpBuckets b = micro.buckets;
    auto pipe = std::find_if(pipeline_by_mb.begin(), pipeline_by_mb.end(),
                             [&](const auto& x) { return x.first == p.micro_batch; });
    if (pipe == pipeline_by_mb.end()) {
      build_step_ops_into(scratch_, sc.model, sc.training, p, sc.cluster, StepOpParts::pipeline);
      OpBuckets pb;
      add_op_costs(pb, scratch_.ops, *sh.cost);
      pipeline_by_mb.emplace_back(p.micro_batch, pb);
      pipe = std::prev(pipeline_by_mb.end());
      stage_params = scratch_.stage_params;
    }
    if (!step_by_zero[zi]) {
      build_step_ops_into(scratch_, s.model, s.training, p, s.cluster, StepOpParts::step);
      OpBuckets sb;
      add_op_costs(sb, scratch_.ops, *sh.cost);
      step_by_zero[zi] = sb;
      stage_params = scratch_.stage_params;
    }
    // The parts are disjoint by field (OpBuckets' contract): assigning them reproduces the sums
    // evaluate() forms over the whole list, bit for bit.
    const OpBuckets& st = *step_by_zero[zi];
    for_each_scope(Repeat::stage_boundary, [&](const ScopeTraits& t) { b[t.scope] = pipe->second[t.scope]; });
    for_each_scope(Repeat::per_layer, [&](const ScopeTraits& t) {
      b[t.scope].fsdp = st[t.scope].fsdp;
      b[t.scope].fsdp_gather = st[t.scope].fsdp_gather;
    });
    b.dp_step = st.dp_step;
    b.dp_grad = st.dp_grad;
    b.optimizer = st.optimizer;
    const StepTiming timing = schedule_step(sc, p, b, stage_params, runs->second);
    ++counters_.timed;
    keep_best(res.best, {timing.breakdown.total().base(), mem.total().base(), p}, keep_);
  });
}

std::vector<WorkItem> work_items(const std::vector<Shape>& shapes, LayoutSpaceKind kind, bool even_stages) {
  std::vector<WorkItem> items;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const Scenario& s = shapes[i].scenario;
    const ShapeLayoutSpace space(s.model, s.training, s.strategy, s.cluster.gpus, s.cluster.gpus_per_node, kind, even_stages);
    for (const OuterLayout& o : space.outer_layouts()) items.push_back({static_cast<int>(i), o});
  }
  return items;
}

bool run_split(std::vector<Worker>& workers, const std::vector<WorkItem>& items, const ProgressCallback& progress) {
  const std::vector<IndexRange> ranges = split_indices(items.size(), static_cast<int>(workers.size()));
  std::atomic<long> done{0};
  std::atomic<bool> cancel{false};
  std::atomic<int> running{static_cast<int>(workers.size())};
  std::mutex mutex;
  std::condition_variable finished;
  const long total = static_cast<long>(items.size());
  if (progress && !progress({0, total})) cancel = true;
  {
    std::vector<std::jthread> pool;
    for (std::size_t t = 0; t < workers.size(); ++t) {
      pool.emplace_back([&, t] {
        const IndexRange range = ranges[t];
        for (std::size_t i = range.begin; i < range.end && !cancel.load(std::memory_order_relaxed); i += range.stride) {
          workers[t].run(items[i]);
          done.fetch_add(1, std::memory_order_relaxed);
        }
        if (--running == 0) {
          std::lock_guard lock(mutex);
          finished.notify_all();
        }
      });
    }
    std::unique_lock lock(mutex);
    while (running.load() > 0) {
      finished.wait_for(lock, std::chrono::milliseconds(50));
      if (progress && !cancel && running.load() > 0 && !progress({done.load(), total})) cancel = true;
    }
  }
  if (progress && !cancel && !progress({total, total})) cancel = true;
  return !cancel;
}

}  // namespace capplan::sim::planner
