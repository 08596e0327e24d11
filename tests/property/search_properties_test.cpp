// SPDX-License-Identifier: Apache-2.0
// Properties of the planner (sim::search) over generated scenarios: its plans are what an estimate
// of the same layout says, and its answer does not depend on the thread count.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "capplan/data/search_io.hpp"
#include "capplan/sim/search/search.hpp"
#include "property_support.hpp"

namespace capplan::property {
namespace {

// A scenario for the planner: the layout left to it ("auto", some fields fixed at random to vary
// the space), one or two nodes of 8 GPUs.
json search_doc(Draw& d) {
  static const std::vector<std::string> kModels = {"llama3-8b",   "qwen2.5-1.5b", "mistral-7b", "qwen3-30b-a3b",
                                                   "nemotron-h-8b", "qwen3-4b",  "llama3.2-3b"};
  json s;
  s["model"] = {{"preset", d.pick(kModels)}};
  s["cluster"] = {{"gpu", d.pick(training_gpus())}, {"gpus", 8}, {"gpus_per_node", 8},
                  {"inter_node_gbps_per_gpu", d.pick({100.0, 400.0})}};
  s["pricing"] = {{"usd_per_gpu_hour", d.pick({0.85, 2.49, 6.88})}};
  if (d.chance(0.3)) {
    s["workload"] = {{"kind", "finetune"},
                     {"method", d.pick({"full", "lora"})},
                     {"dataset", {{"tokens", 1e9}, {"epochs", 2}, {"mean_sample_tokens", 900.0},
                                  {"p95_sample_tokens", 3000.0}, {"packing", d.chance(0.5)}}}};
    s["model"]["seq_len"] = 4096;
    s["training"] = {{"global_batch", d.pick({32, 64})}, {"precision", "bf16"}};
  } else {
    s["training"] = {{"tokens", d.pick({1e10, 3e11})}, {"global_batch", d.pick({128, 256, 512})}, {"precision", "bf16"}};
  }
  json st = json::object();
  if (d.chance(0.5)) st["recompute"] = d.pick({"none", "selective", "full"});
  if (d.chance(0.3)) st["pp"] = 1;
  if (d.chance(0.3)) st["micro_batch"] = d.pick({1, 2});
  s["strategy"] = st.empty() ? json("auto") : st;
  return s;
}

struct Searched {
  json doc;
  data::ParsedScenario parsed;
  sim::SearchRequest request;
  sim::SearchResult result;
};

std::optional<Searched> search_case(Draw& d, int threads) {
  json doc = search_doc(d);
  auto parsed = parse(doc);
  if (!parsed) return std::nullopt;
  sim::SearchRequest r;
  r.base = parsed->scenario;
  r.node_counts = {1, d.pick({2, 4})};
  r.objective = d.pick(std::vector<sim::Objective>{sim::Objective::cheapest, sim::Objective::fastest,
                                                   sim::Objective::pareto});
  r.top_k = 3;
  r.one_plan_per_shape = d.chance(0.5);
  r.threads = threads;
  r.cost_model = data::cost_model_factory(nullptr);
  auto result = sim::search(r);
  if (!result) return std::nullopt;
  return Searched{std::move(doc), std::move(*parsed), std::move(r), std::move(*result)};
}

// 7. A plan from the planner, re-estimated with its layout fixed (the scenario a user writes from
// it: its GPUs, its strategy written out), gives the same figures, exactly: both price the same
// op list with the same cost model.
TEST(SearchProperties, APlanReEstimatedWithItsLayoutFixedGivesTheSameFigures) {
  int plans = 0;
  for_each_case("plan_reestimated", 40, [&](Draw& d, int) {
    const auto s = search_case(d, 1);
    if (!s) return;
    SCOPED_TRACE(s->doc.dump());
    for (const sim::Plan& plan : s->result.plans) {
      json fixed = s->doc;
      fixed["cluster"]["gpus"] = plan.gpus;
      fixed["strategy"] = data::strategy_to_json(plan.estimate.layout.strategy);
      const auto r = run(fixed);
      ASSERT_TRUE(r.has_value()) << "the plan's layout is refused: " << fixed.dump();
      SCOPED_TRACE("fixed " + fixed.dump());
      ++plans;
      const sim::Estimate& a = plan.estimate;
      const sim::Estimate& b = r->estimate;
      EXPECT_EQ(b.layout.strategy, a.layout.strategy);
      EXPECT_EQ(b.step.time.base(), a.step.time.base());
      EXPECT_EQ(b.step.tokens_per_s, a.step.tokens_per_s);
      EXPECT_EQ(b.step.mfu, a.step.mfu);
      EXPECT_EQ(b.memory.total().base(), a.memory.total().base());
      EXPECT_EQ(b.totals.steps, a.totals.steps);
      EXPECT_EQ(b.totals.time_to_train.base(), a.totals.time_to_train.base());
      EXPECT_EQ(b.totals.gpu_hours, a.totals.gpu_hours);
      ASSERT_EQ(b.totals.cost.has_value(), a.totals.cost.has_value());
      if (a.totals.cost) {
        EXPECT_EQ(b.totals.cost->base(), a.totals.cost->base());
      }
      EXPECT_EQ(sim::plan_time(b).base(), sim::plan_time(a).base());
      const auto ca = sim::plan_cost(a), cb = sim::plan_cost(b);
      ASSERT_EQ(ca.has_value(), cb.has_value());
      if (ca) {
        EXPECT_EQ(cb->base(), ca->base());
      }
    }
  });
  if (!only_case()) {
    EXPECT_GE(plans, case_count(40));
  }
}

// The search document without what may differ between runs: the wall time and the thread count.
json without_timing(json j) {
  j.erase("elapsed_s");
  if (j.contains("stats") && j["stats"].is_object()) j["stats"].erase("threads");
  return j;
}

// 9. The same search gives byte-identical output with one thread and with two (apart from the
// elapsed time and the thread count it reports).
TEST(SearchProperties, OneAndTwoThreadsWriteTheSameBytes) {
  int checked = 0;
  for_each_case("search_threads", 30, [&](Draw& d, int i) {
    Draw again = case_draw(suite_seed(), "search_threads", i);
    const auto one = search_case(d, 1);
    const auto two = search_case(again, 2);
    ASSERT_EQ(one.has_value(), two.has_value());
    if (!one) return;
    SCOPED_TRACE(one->doc.dump());
    ASSERT_EQ(one->doc, two->doc);
    ++checked;
    EXPECT_EQ(two->result.stats.threads, 2);
    EXPECT_EQ(without_timing(data::search_result_to_json(one->result, one->request, one->parsed)).dump(),
              without_timing(data::search_result_to_json(two->result, two->request, two->parsed)).dump());
    EXPECT_EQ(one->result.plans.size(), two->result.plans.size());
  });
  if (!only_case()) {
    EXPECT_GE(checked, case_count(30) / 2);
  }
}

}  // namespace
}  // namespace capplan::property
