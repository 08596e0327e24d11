// SPDX-License-Identifier: Apache-2.0
// Planner throughput: configurations decided per second per core on two documented spaces
// (docs/planner.md "Figures"):
//  - 22B: the Megatron 22B GPT of Korthikanti et al. 2022 (48 layers, hidden 6144, 64 heads,
//    seq 2048), 1M-token batches, on 64 H100 SXM GPUs (8 nodes of 8): the whole layout space;
//  - 70B: Llama-2-70B, 4M-token batches, on 256-2048 GPUs (32..256 nodes, every node count) of
//    every H100 / H200 / A100 instance type of data/instances.json that gives its network
//    bandwidth (their figures are copied here so the bench reads no files).
// A configuration is one layout x node count x offering that passed check_layout and was then
// timed, rejected by its exact memory, or pruned by a memory bound; the counters report each.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "bench_fixtures.hpp"
#include "capplan/sim/search/search.hpp"

namespace {

using namespace capplan;
using namespace capplan::units;
using bench::a100;
using bench::h100;
using bench::h200;

sim::Offering offering(std::string id, sim::GpuSpec gpu, double network_gbps_per_node, double usd_per_gpu_hour) {
  sim::Offering o;
  o.instance_id = std::move(id);
  o.node.gpu = std::move(gpu);
  o.node.gpus_per_node = 8;
  o.node.intra_node_bandwidth = o.node.gpu.nvlink_bandwidth;
  o.node.inter_node_bandwidth = gbit_per_s(network_gbps_per_node / 8.0);
  o.node.price_per_gpu = usd_per_hour(usd_per_gpu_hour);
  o.node.instance_id = o.instance_id;
  return o;
}

sim::SearchRequest gpt22b_on_64_h100(int threads) {
  sim::SearchRequest r;
  r.base.model = bench::megatron_gpt_22b();
  r.base.training.tokens = 300e9;
  r.base.training.global_batch = 512;  // 1M tokens
  r.offerings = {offering("aws-p5.48xlarge", h100(), 3200, 6.88)};
  r.node_counts = {8};
  r.threads = threads;
  return r;
}

// GPU figures as in data/gpus.json (datasheet and measured efficiencies).
// H100/H200/A100 instance types of data/instances.json with a known network bandwidth (prices
// as there; per-node network in Gbit/s).
std::vector<sim::Offering> catalog_h100_h200_a100() {
  return {
      offering("aws-p4d.24xlarge", a100(false), 400, 2.745),
      offering("aws-p4de.24xlarge", a100(true), 400, 3.4312),
      offering("aws-p5.48xlarge", h100(), 3200, 6.88),
      offering("aws-p5en.48xlarge", h200(), 3200, 7.912),
      offering("gcp-a2-highgpu-8g", a100(false), 100, 3.6738),
      offering("gcp-a2-ultragpu-8g", a100(true), 100, 5.07),
      offering("gcp-a3-highgpu-8g", h100(), 1000, 10.98),
      offering("gcp-a3-megagpu-8g", h100(), 1800, 11.675),
      offering("gcp-a3-ultragpu-8g", h200(), 3600, 10.4365),
      offering("azure-nd96asr_v4", a100(false), 1600, 3.3996),
      offering("azure-nd96amsr_a100_v4", a100(true), 1600, 4.0963),
      offering("azure-nd96isr_h100_v5", h100(), 3200, 12.29),
      offering("azure-nd96isr_h200_v5", h200(), 3200, 10.6),
  };
}

sim::SearchRequest llama70b_on_256_to_2048(int threads) {
  sim::SearchRequest r;
  r.base.model = bench::llama2_70b();
  r.base.training.tokens = 2e12;
  r.base.training.global_batch = 1024;  // 4M tokens
  r.offerings = catalog_h100_h200_a100();
  for (int n = 32; n <= 256; ++n) r.node_counts.push_back(n);
  r.threads = threads;
  return r;
}

void run(benchmark::State& state, const sim::SearchRequest& r) {
  sim::SearchStats stats;
  double elapsed = 0;
  for (auto _ : state) {
    auto result = sim::search(r);
    if (!result) {
      state.SkipWithError("search failed");
      return;
    }
    stats = result->stats;
    elapsed = result->elapsed_s;
    benchmark::DoNotOptimize(result);
  }
  const double threads = stats.threads;
  state.counters["configurations"] = static_cast<double>(stats.configurations);
  state.counters["timed"] = static_cast<double>(stats.timed);
  state.counters["memory_rejected"] = static_cast<double>(stats.memory_rejected);
  state.counters["pruned_by_bound"] = static_cast<double>(stats.pruned_by_bound);
  state.counters["shapes"] = static_cast<double>(stats.shapes);
  state.counters["threads"] = threads;
  state.counters["search_s"] = elapsed;
  // Per core: configurations per second of wall time, divided by the worker threads.
  state.counters["configs_per_s_per_core"] =
      benchmark::Counter(static_cast<double>(stats.configurations) * state.iterations() / threads,
                         benchmark::Counter::kIsRate);
}

// Arguments: threads, layout space (0 standard, 1 exhaustive).
void BM_Search22bOn64H100(benchmark::State& state) {
  sim::SearchRequest r = gpt22b_on_64_h100(static_cast<int>(state.range(0)));
  r.space = state.range(1) == 0 ? sim::LayoutSpace::standard : sim::LayoutSpace::exhaustive;
  run(state, r);
}
BENCHMARK(BM_Search22bOn64H100)
    ->ArgsProduct({{1, 2}, {0, 1}})
    ->ArgNames({"threads", "exhaustive"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_Search70bOn256To2048(benchmark::State& state) {
  sim::SearchRequest r = llama70b_on_256_to_2048(static_cast<int>(state.range(0)));
  r.space = state.range(1) == 0 ? sim::LayoutSpace::standard : sim::LayoutSpace::exhaustive;
  run(state, r);
}
BENCHMARK(BM_Search70bOn256To2048)
    ->ArgsProduct({{1, 2}, {0}})
    ->ArgNames({"threads", "exhaustive"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
