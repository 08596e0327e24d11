// SPDX-License-Identifier: Apache-2.0
// The planner's sentences (data/plan_text.hpp), written from the structure sim::search returns.
#include "capplan/data/plan_text.hpp"

#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "capplan/data/catalog.hpp"
#include "capplan/data/scenario_io.hpp"
#include "capplan/data/search_io.hpp"
#include "test_support.hpp"

namespace capplan::data {
namespace {

// Micro-batch 1, no recompute, sequence parallel.
sim::Parallelism layout(int tp, int pp, int dp, int zero) {
  sim::Parallelism l;
  std::tie(l.tp, l.pp, l.dp, l.zero) = std::tuple{tp, pp, dp, zero};
  l.micro_batch = 1;
  l.recompute = sim::Recompute::none;
  l.sequence_parallel = true;
  return l;
}

// A plan on `nodes` nodes of an instance, tp 4 pp 1, ZeRO 2.
sim::Plan plan_on(const std::string& instance, int nodes, int gpus_per_node) {
  sim::Plan p;
  p.instance_id = instance;
  p.gpu_id = "h100-sxm-80gb";
  p.nodes = nodes;
  p.gpus = nodes * gpus_per_node;
  p.price_known = true;
  p.estimate.layout.strategy = layout(4, 1, p.gpus / 4, 2);
  return p;
}

sim::RunnerUp runner_up(std::string dimension, sim::Plan plan, double time_ratio, std::optional<double> cost_ratio) {
  sim::RunnerUp u;
  u.dimension = std::move(dimension);
  u.plan = std::move(plan);
  u.time_ratio = time_ratio;
  u.cost_ratio = cost_ratio;
  return u;
}

TEST(RunnerUpText, NamesTheChangeAndWhatItDoes) {
  const sim::Plan chosen = plan_on("aws-p5.48xlarge", 16, 8);
  EXPECT_EQ(runner_up_text(runner_up("more_nodes", plan_on("aws-p5.48xlarge", 32, 8), 0.51, 1.019), chosen),
            "2x the nodes (16 -> 32): 49% faster, 1.9% dearer");
  EXPECT_EQ(runner_up_text(runner_up("fewer_nodes", plan_on("aws-p5.48xlarge", 8, 8), 1.95, 0.975), chosen),
            "1/2 the nodes (16 -> 8): 95% slower, 2.5% cheaper");
  EXPECT_EQ(runner_up_text(runner_up("fewer_nodes", plan_on("aws-p5.48xlarge", 12, 8), 1.3, 0.972), chosen),
            "12 nodes instead of 16: 30% slower, 2.8% cheaper");
  EXPECT_EQ(runner_up_text(runner_up("offering", plan_on("aws-p5en.48xlarge", 16, 8), 0.89, 1.021), chosen),
            "aws-p5en.48xlarge x 16 nodes (128 GPUs) instead of aws-p5.48xlarge x 16 nodes (128 GPUs): 11% faster, "
            "2.1% dearer");
  EXPECT_EQ(runner_up_text(runner_up("fastest", plan_on("aws-p5en.48xlarge", 1, 8), 0.5, std::nullopt), chosen),
            "the fastest plan, aws-p5en.48xlarge x 1 node (8 GPUs): 50% faster, cost not comparable (price unknown)");
  EXPECT_EQ(runner_up_text(runner_up("cheapest", plan_on("aws-p5.48xlarge", 8, 8), 3.26, 0.927), chosen),
            "the cheapest plan, aws-p5.48xlarge x 8 nodes (64 GPUs): 226% slower, 7.3% cheaper");
}

TEST(RunnerUpText, NamesTheLayoutFieldsThatDifferAndTheConstraintsMissed) {
  const sim::Plan chosen = plan_on("aws-p5.48xlarge", 16, 8);
  sim::Plan other = chosen;
  other.estimate.layout.strategy = layout(2, 16, 4, 1);
  other.meets_deadline = false;
  other.meets_budget = false;
  EXPECT_EQ(runner_up_text(runner_up("layout", other, 1.005, 1.005), chosen),
            "tp 2 instead of 4, pp 16 instead of 1, dp 4 instead of 32, ZeRO 1 instead of 2: 0.5% slower, 0.5% dearer "
            "(misses the deadline) (over the budget)");
  sim::Plan same = chosen;
  same.estimate.layout.strategy.sequence_parallel = false;
  same.estimate.layout.strategy.recompute = sim::Recompute::full;
  same.price_known = false;
  same.meets_budget = false;
  EXPECT_EQ(runner_up_text(runner_up("layout", same, 1.016, std::nullopt), chosen),
            "full recompute instead of none, without sequence parallelism: 1.6% slower, cost not comparable (price "
            "unknown) (price unknown)");
  EXPECT_EQ(runner_up_text(runner_up("layout", chosen, 1.0, 1.0), chosen), "another layout: 0.0% faster, 0.0% cheaper");
}

TEST(FailureMessage, NamesTheConstraintItsValueAndTheClosestPlan) {
  sim::SearchRequest r;
  r.deadline = units::seconds(86400);
  r.budget = units::usd(1000);
  sim::ConstraintFailure f;
  f.closest = plan_on("aws-p5.48xlarge", 16, 8);
  f.closest_time = units::seconds(142.4 * 86400);
  f.closest_cost = units::usd(3.004e6);
  f.any_price = true;
  const std::string closest = " (aws-p5.48xlarge x 16 nodes (128 GPUs), tp 4 pp 1 dp 32, micro-batch 1, ZeRO 2, no "
                              "recompute, sequence parallel)";
  f.kind = sim::FailureKind::deadline;
  EXPECT_EQ(failure_message(f, r), "no plan meets the deadline of 1.00 days: the fastest takes 142 days" + closest);
  EXPECT_EQ(constraint_name(f.kind), "deadline");
  f.kind = sim::FailureKind::deadline_nor_budget;
  EXPECT_EQ(failure_message(f, r),
            "no plan meets the deadline of 1.00 days (nor the budget of $1.00k): the fastest takes 142 days" + closest);
  EXPECT_EQ(constraint_name(f.kind), "deadline and budget");
  f.kind = sim::FailureKind::budget;
  EXPECT_EQ(failure_message(f, r), "no plan meets the budget of $1.00k: the cheapest costs $3.00M" + closest);
  EXPECT_EQ(constraint_name(f.kind), "budget");
  f.any_price = false;
  f.closest_cost.reset();
  EXPECT_EQ(failure_message(f, r),
            "no plan meets the budget of $1.00k: no offering searched has a known price (give one)" + closest);
  f.kind = sim::FailureKind::deadline_and_budget;
  EXPECT_EQ(failure_message(f, r), "no plan meets both the deadline of 1.00 days and the budget of $1.00k: the closest "
                                   "takes 142 days at an unknown price" + closest);
  f.closest_cost = units::usd(2.5e9);
  EXPECT_EQ(failure_message(f, r), "no plan meets both the deadline of 1.00 days and the budget of $1.00k: the closest "
                                   "takes 142 days and costs $2.50B" + closest);
  EXPECT_EQ(constraint_name(f.kind), "deadline and budget");
  f.kind = sim::FailureKind::no_layout;
  EXPECT_EQ(failure_message(f, r), "no valid parallel layout exists for any cluster shape searched with this model, "
                                   "batch and the fixed strategy fields");
  EXPECT_EQ(constraint_name(f.kind), "layout");
  f.kind = sim::FailureKind::memory;
  f.closest->estimate.memory.capacity = units::gib(40);
  EXPECT_EQ(constraint_name(f.kind), "memory");
  EXPECT_TRUE(failure_message(f, r).starts_with(
      "no layout fits in GPU memory on any cluster shape searched; the closest, aws-p5.48xlarge x 16 nodes (128 GPUs) "
      "with tp 4 pp 1 dp 32, micro-batch 1, ZeRO 2, no recompute, sequence parallel, needs "))
      << failure_message(f, r);
  EXPECT_TRUE(failure_message(f, r).ends_with(" GiB per GPU of 40")) << failure_message(f, r);
  f.closest.reset();
  EXPECT_EQ(failure_message(f, r), "no layout fits in GPU memory on any cluster shape searched");
}

// A real search: the explanation leads with the objective and constraints, then the chosen plan.
class SearchText : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loaded = load_catalogs(test::source_data_dir());
    ASSERT_TRUE(loaded.has_value());
    catalogs_ = *loaded;
    auto parsed = parse_scenario_text(R"({
      "model": {"preset": "llama2-7b"},
      "training": {"tokens": "100B", "global_batch": 256, "precision": "bf16"},
      "cluster": {"instance": "aws-p5.48xlarge", "nodes": 1},
      "strategy": "auto"})", catalogs_);
    ASSERT_TRUE(parsed.has_value());
    parsed_ = *parsed;
    OfferingFilter f;
    f.instances = {"aws-p5.48xlarge", "aws-p4de.24xlarge"};
    auto offerings = offerings_from_catalog(catalogs_, f);
    ASSERT_TRUE(offerings.has_value());
    request_.base = parsed->scenario;
    request_.offerings = offerings->offerings;
    request_.node_counts = {1, 2};
    request_.threads = 1;
  }
  Catalogs catalogs_;
  ParsedScenario parsed_;
  sim::SearchRequest request_;
};

TEST_F(SearchText, ExplainsTheChosenPlanAndItsRunnerUps) {
  auto result = sim::search(request_);
  ASSERT_TRUE(result.has_value());
  ASSERT_FALSE(result->plans.empty());
  const std::string why = explanation(*result, request_);
  EXPECT_TRUE(why.starts_with("Cheapest plan: " + result->plans.front().instance_id + " x ")) << why;
  EXPECT_NE(why.find("compute"), std::string::npos) << why;
  EXPECT_NE(why.find("MFU"), std::string::npos) << why;
  EXPECT_TRUE(why.ends_with(" GiB per GPU.")) << why;
  ASSERT_FALSE(result->runner_ups.empty());
  for (const sim::RunnerUp& u : result->runner_ups) {
    const std::string text = runner_up_text(u, result->plans.front());
    EXPECT_NE(text.find("%"), std::string::npos) << text;
    if (u.dimension == "more_nodes") {
      EXPECT_TRUE(text.starts_with("2x the nodes (1 -> 2): ")) << text;
    }
  }
  request_.objective = sim::Objective::fastest;
  request_.deadline = units::seconds(1e9);
  request_.budget = units::usd(1e9);
  result = sim::search(request_);
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(explanation(*result, request_)
                  .starts_with("Fastest plan that meets the deadline of 11574 days and within the budget of $1.00B: "))
      << explanation(*result, request_);
}

// Pareto with no priced plan: ranked by time, so the lead does not claim a Pareto front.
TEST_F(SearchText, ParetoWithoutPricesLeadsWithTheFastestPlan) {
  request_.objective = sim::Objective::pareto;
  auto priced = sim::search(request_);
  ASSERT_TRUE(priced.has_value());
  EXPECT_TRUE(explanation(*priced, request_).starts_with("Fastest plan on the Pareto front: "))
      << explanation(*priced, request_);
  for (auto& o : request_.offerings) o.node.price_per_gpu.reset();
  auto unpriced = sim::search(request_);
  ASSERT_TRUE(unpriced.has_value());
  EXPECT_TRUE(explanation(*unpriced, request_).starts_with("Fastest plan: ")) << explanation(*unpriced, request_);
}

TEST_F(SearchText, AFailureExplainsTheClosestPlanAndMemoryNothing) {
  request_.deadline = units::seconds(3600);
  auto result = sim::search(request_);
  ASSERT_TRUE(result.has_value());
  ASSERT_TRUE(result->failure.has_value());
  EXPECT_TRUE(failure_message(*result->failure, request_).starts_with("no plan meets the deadline of 0.04 days: "))
      << failure_message(*result->failure, request_);
  EXPECT_TRUE(explanation(*result, request_).starts_with("Closest plan: ")) << explanation(*result, request_);
  request_.deadline.reset();
  for (auto& o : request_.offerings) o.node.gpu.hbm_capacity = units::bytes(1e9);
  result = sim::search(request_);
  ASSERT_TRUE(result.has_value());
  ASSERT_TRUE(result->failure.has_value());
  EXPECT_EQ(result->failure->kind, sim::FailureKind::memory);
  EXPECT_EQ(explanation(*result, request_), "");
  const nlohmann::json j = search_result_to_json(*result, request_, parsed_);
  EXPECT_EQ(j["failure"]["constraint"], "memory");
  EXPECT_EQ(j["failure"]["message"], failure_message(*result->failure, request_));
  EXPECT_EQ(j["explanation"], "");
}

}  // namespace
}  // namespace capplan::data
