// SPDX-License-Identifier: Apache-2.0
// Properties of the serving planner over generated serve scenarios (workload.kind "serve"): one
// replica's latency as the offered rate rises.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "capplan/data/cost_model.hpp"
#include "capplan/data/serve_io.hpp"
#include "capplan/sim/serve/serve.hpp"
#include "property_support.hpp"

namespace capplan::property {
namespace {

// A serve scenario: a catalog model on a catalog GPU, a TP size that divides its heads, vLLM or
// SGLang, Poisson traffic of fixed or spread lengths.
json serve_doc(Draw& d) {
  static const std::vector<std::string> kModels = {"llama3.1-8b", "qwen2.5-7b", "mistral-7b", "qwen3-8b",
                                                   "llama3.1-70b", "qwen2.5-14b", "mixtral-8x7b", "qwen3-30b-a3b"};
  static const std::vector<std::string> kGpus = {"h100-sxm-80gb", "a100-80gb-sxm", "h200-sxm-141gb", "h800-sxm-80gb",
                                                 "l40s-48gb",     "b200-hgx",      "mi300x-192gb"};
  json s;
  s["model"] = {{"preset", d.pick(kModels)}};
  s["cluster"] = {{"gpu", d.pick(kGpus)}, {"gpus", 8}, {"gpus_per_node", 8}};
  s["pricing"] = {{"usd_per_gpu_hour", 2.49}};
  const double in = d.pick({200.0, 1000.0, 3000.0}), out = d.pick({100.0, 300.0, 800.0});
  json traffic = {{"arrival", "poisson"}, {"rate_per_s", 1.0}, {"requests", 1500}};
  traffic["input_tokens"] = d.chance(0.5) ? json(in) : json{{"mean", in}, {"p95", in * 2.5}};
  traffic["output_tokens"] = d.chance(0.5) ? json(out) : json{{"mean", out}, {"p95", out * 2.5}};
  s["workload"] = {{"kind", "serve"},
                   {"engine", d.pick({"vllm", "sglang"})},
                   {"weights", "bf16"},
                   {"tp", d.pick({1, 2, 4, 8})},
                   {"traffic", traffic},
                   {"slo", {{"e2e_s", 30.0}, {"percentile", 0.95}}}};
  return s;
}

// 6. Serving p95 latency never falls as the offered request rate rises: one replica simulated at
// rising Poisson rates (sim::latency_curve: a tenth of its offline ceiling up to the ceiling). The
// simulation draws each request's gap as an exponential of the same uniform draws divided by the
// rate, and its lengths from the same stream, so a higher rate offers the same requests closer
// together. That coupling keeps the order of the requests but not where each lands against the
// engine's steps (their durations do not scale with the rate), and a prompt waits for the step in
// progress: so the simulated p95 may dip between two close rates (seen: TTFT p95 82.71 -> 82.54 ms
// from 6.110 to 6.146 requests/s, Qwen3-8B TP2 on L40S; end-to-end p95 26.47 -> 26.25 s from 9.343
// to 9.407 requests/s, Llama 3.1 8B on one L40S near its ceiling, where the shift compounds over a
// long queue). Both pairs were the plan's max_rate, which the curve inserts among its evenly spaced
// rates, and its neighbour under 1% away. So the simulated percentiles are compared between rates
// at least 5% apart (the even spacing is 18% of the ceiling), and held to one mean step of the
// higher rate; saturated points (the queue grows without bound, latencies of a finite run) are
// left out. The closed form
// (sim::steady_state) has no such granularity and must keep the order exactly.
TEST(ServeProperties, P95LatencyNeverFallsAsTheOfferedRateRises) {
  int curves = 0;
  for_each_case("serve_latency", 60, [&](Draw& d, int) {
    const json doc = serve_doc(d);
    auto parsed = parse(doc);
    if (!parsed) return;
    auto request = data::serve_request(doc, *parsed, catalogs());
    if (!request) return;
    const sim::ServeJob& job = request->job;
    const sim::Cluster& c = request->cluster;
    if (sim::check_serve_job(job, c)) return;
    const auto cost = data::make_cost_model(c, nullptr, sim::serving_assumptions(job.engine));
    const sim::ReplicaMemory memory = sim::replica_memory(job, c);
    if (!memory.fits()) return;
    const sim::ServePlan plan = sim::plan_serving(job, c, *cost, false);
    const std::vector<sim::CurvePoint> curve = sim::latency_curve(job, c, *cost, plan, 6, 1.0);
    if (curve.size() < 2) return;
    SCOPED_TRACE(doc.dump());
    ++curves;
    const sim::PassModel pass(job, c, *cost);
    for (std::size_t i = 1; i < curve.size(); ++i) {
      ASSERT_LT(curve[i - 1].rate, curve[i].rate);
    }
    for (std::size_t i = 1; i < curve.size(); ++i) {
      // The nearest lower rate at least 5% below this one.
      std::size_t j = i;
      while (j > 0 && curve[j - 1].rate * 1.05 > curve[i].rate) --j;
      if (j == 0) continue;
      const sim::CurvePoint& lo = curve[j - 1];
      const sim::CurvePoint& hi = curve[i];
      if (lo.load.saturated || hi.load.saturated) continue;
      const std::string at = "rate " + std::to_string(lo.rate) + " -> " + std::to_string(hi.rate) + " requests/s";
      const double step = hi.load.mean_step_s;
      EXPECT_GE(hi.load.e2e.p95 + step, lo.load.e2e.p95) << at << ": e2e p95 (mean step " << step << " s)";
      EXPECT_GE(hi.load.ttft.p95 + step, lo.load.ttft.p95) << at << ": ttft p95 (mean step " << step << " s)";
      sim::ServeJob a = job, b = job;
      a.traffic.rate = lo.rate;
      b.traffic.rate = hi.rate;
      const sim::ServeLoad sa = sim::steady_state(a, pass, memory), sb = sim::steady_state(b, pass, memory);
      if (sa.saturated || sb.saturated) continue;
      EXPECT_GE(sb.e2e.p95, sa.e2e.p95) << at << ": closed-form e2e p95";
      EXPECT_GE(sb.ttft.p95, sa.ttft.p95) << at << ": closed-form ttft p95";
    }
  });
  if (!only_case()) {
    EXPECT_GE(curves, case_count(60) / 3);
  }
}

}  // namespace
}  // namespace capplan::property
