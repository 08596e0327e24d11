// SPDX-License-Identifier: Apache-2.0
// Serving: the step-time tables (built once per layout), the closed form the planner searches
// with, and the continuous-batching simulation (simulated requests per second of wall time:
// target >= 100k, enough for a search that can confirm every layout it ranks).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "capplan/data/catalog.hpp"
#include "capplan/data/serve_io.hpp"
#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/serve/serve.hpp"

namespace {

using namespace capplan::sim;

// Llama 3.1 8B on an H100 SXM (datasheet peaks), vLLM-like engine.
ServeJob job_8b(double rate) {
  ServeJob j;
  j.model = {.name = "llama3.1-8b", .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8, .ffn_hidden = 14336,
             .vocab = 128256, .seq_len = 8192, .gated_ffn = true, .tied_embeddings = false, .dropout = false,
             .flash_attention = true, .rmsnorm = true, .rope = true};
  j.engine.runtime_reserve = capplan::units::gib(2);
  j.engine.step_overhead = capplan::units::microseconds(500);
  j.engine.kernel_gap = capplan::units::microseconds(2);
  j.traffic.rate = rate;
  j.traffic.input = {1000, 2500};
  j.traffic.output = {300, 700};
  j.traffic.requests = 20000;
  return j;
}

Cluster h100() {
  Cluster c;
  c.gpu = {.id = "h100-sxm", .name = "H100 SXM",
           .peak = {.fp32 = capplan::units::tflop_per_s(66.9), .tf32 = capplan::units::tflop_per_s(494.7),
                    .fp16 = capplan::units::tflop_per_s(989.4), .bf16 = capplan::units::tflop_per_s(989.4),
                    .fp8 = capplan::units::tflop_per_s(1978.9)},
           .hbm_capacity = capplan::units::gib(80), .hbm_bandwidth = capplan::units::gb_per_s(3350),
           .nvlink_bandwidth = capplan::units::gb_per_s(450), .sm_count = 132};
  c.gpus = 8;
  c.intra_node_bandwidth = c.gpu.nvlink_bandwidth;
  c.inter_node_bandwidth = capplan::units::gb_per_s(50);
  return c;
}

void BM_PassModelTables(benchmark::State& state) {
  const Cluster c = h100();
  const ServeJob j = job_8b(10);
  const DatasheetCost cost(c, serving_assumptions(j.engine));
  for (auto _ : state) benchmark::DoNotOptimize(PassModel(j, c, cost));
}
BENCHMARK(BM_PassModelTables)->Unit(benchmark::kMillisecond);

void BM_SteadyState(benchmark::State& state) {
  const Cluster c = h100();
  const ServeJob j = job_8b(10);
  const DatasheetCost cost(c, serving_assumptions(j.engine));
  const PassModel pm(j, c, cost);
  const ReplicaMemory mem = replica_memory(j, c);
  for (auto _ : state) benchmark::DoNotOptimize(steady_state(j, pm, mem));
}
BENCHMARK(BM_SteadyState)->Unit(benchmark::kMicrosecond);

void BM_Simulate(benchmark::State& state) {
  const Cluster c = h100();
  const ServeJob j = job_8b(static_cast<double>(state.range(0)));
  const DatasheetCost cost(c, serving_assumptions(j.engine));
  const PassModel pm(j, c, cost);
  const ReplicaMemory mem = replica_memory(j, c);
  for (auto _ : state) benchmark::DoNotOptimize(simulate(j, pm, mem, 1));
  state.SetItemsProcessed(state.iterations() * j.traffic.requests);  // simulated requests
}
BENCHMARK(BM_Simulate)->Arg(5)->Arg(20)->Unit(benchmark::kMillisecond);

// The search target: the capacity plan over every catalog offering x TP x weight format
// (< 1 s on one core), as `capplan serve examples/serve-llama8b/serve.json --instances '*'` runs it:
// closed-form plans per GPU shape priced per offering, the front and the cheapest confirmed by
// simulation. The catalogs are the repository's data/.
void BM_CapacitySearchEveryOffering(benchmark::State& state) {
  auto catalogs = capplan::data::load_catalogs(std::filesystem::path(CAPPLAN_SOURCE_DIR) / "data");
  if (!catalogs) {
    state.SkipWithError("cannot load data/ catalogs");
    return;
  }
  const nlohmann::json doc = capplan::data::example_serve_scenario();
  const capplan::data::OfferingFilter all{.instances = {"*"}};
  std::size_t options = 0;
  for (auto _ : state) {
    auto planned = capplan::data::plan_serve_document(doc, *catalogs, "", {}, nullptr, 0, "scenario", &all);
    if (!planned) {
      state.SkipWithError("plan_serve_document failed");
      return;
    }
    options = planned->result.options.size();
    benchmark::DoNotOptimize(planned);
  }
  state.counters["layouts"] = static_cast<double>(options);
}
BENCHMARK(BM_CapacitySearchEveryOffering)->Unit(benchmark::kMillisecond);

// What `capplan serve --requests N --curve-points 0` plans with no scenario: the built-in example
// (Llama 3.1 8B at 50 requests/s, a 2 s end-to-end p95) on its cluster, comparing every layout the
// GPU runs, each confirmed by simulations of N requests. The asked layout's replicas take little
// of the rate each, so its confirmation dominates.
void BM_PlanServingBuiltInExample(benchmark::State& state) {
  auto catalogs = capplan::data::load_catalogs(std::filesystem::path(CAPPLAN_SOURCE_DIR) / "data");
  if (!catalogs) {
    state.SkipWithError("cannot load data/ catalogs");
    return;
  }
  nlohmann::json doc = capplan::data::example_serve_scenario();
  doc["workload"]["traffic"]["requests"] = state.range(0);
  for (auto _ : state) {
    auto planned = capplan::data::plan_serve_document(doc, *catalogs, "", {}, nullptr, 0, "scenario");
    if (!planned) {
      state.SkipWithError("plan_serve_document failed");
      return;
    }
    benchmark::DoNotOptimize(planned);
  }
}
BENCHMARK(BM_PlanServingBuiltInExample)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
