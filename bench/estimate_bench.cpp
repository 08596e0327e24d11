// SPDX-License-Identifier: Apache-2.0
// Latency of one in-process estimate (a fixed layout) and of an "auto" strategy search.
// The scenario is built by hand (no JSON, no catalogs) so only the model is measured.
#include <benchmark/benchmark.h>

#include "bench_fixtures.hpp"
#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/estimate/estimate.hpp"

namespace {

using namespace capplan;
using namespace capplan::units;

// Llama-2-70B on 64 x H100 SXM (figures as in data/gpus.json).
sim::Scenario llama70b_on_h100() {
  sim::Scenario s;
  s.model = bench::llama2_70b();
  s.training.tokens = 2e12;
  s.training.global_batch = 1024;
  s.training.precision = sim::Precision::bf16;
  s.cluster.gpu = bench::h100();
  const sim::GpuSpec& g = s.cluster.gpu;
  s.cluster.gpus = 64;
  s.cluster.gpus_per_node = 8;
  s.cluster.intra_node_bandwidth = g.nvlink_bandwidth;
  s.cluster.inter_node_bandwidth = gbit_per_s(400);
  s.cluster.price_per_gpu = usd_per_hour(6.88);
  return s;
}

void BM_EstimateFixedLayout(benchmark::State& state) {
  sim::Scenario s = llama70b_on_h100();
  s.strategy.tp = 8;
  s.strategy.pp = 2;
  s.strategy.dp = 4;
  s.strategy.micro_batch = 1;
  s.strategy.virtual_stages = 5;
  s.strategy.zero = 1;
  s.strategy.recompute = sim::Recompute::selective;
  s.strategy.sequence_parallel = true;
  const sim::DatasheetCost cost(s.cluster);
  for (auto _ : state) {
    auto e = sim::estimate(s, cost);
    benchmark::DoNotOptimize(e);
  }
}
BENCHMARK(BM_EstimateFixedLayout)->Unit(benchmark::kMicrosecond);

void BM_EstimateAutoStrategy(benchmark::State& state) {
  const sim::Scenario s = llama70b_on_h100();  // every strategy field "auto"
  const sim::DatasheetCost cost(s.cluster);
  long evaluated = 0;
  for (auto _ : state) {
    auto e = sim::estimate(s, cost);
    evaluated = e ? e->layout.configurations_evaluated : 0;
    benchmark::DoNotOptimize(e);
  }
  state.counters["layouts"] = static_cast<double>(evaluated);
  state.counters["layouts_per_s"] =
      benchmark::Counter(static_cast<double>(evaluated) * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EstimateAutoStrategy)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
