// SPDX-License-Identifier: Apache-2.0
// Physical invariants over generated scenarios ("physical invariants as tests"): a
// seeded generator (std::mt19937_64, seed 18, so every run draws the same scenarios and a failure
// names the scenario's JSON) draws models, GPUs, cluster sizes, layouts, token counts, batches,
// precisions and prices from the shipped catalogs, and every successful estimate must keep:
//   1. MFU and HFU in (0, 1]: no step runs faster than the dense peak of its precision.
//   2. memory per GPU at least the weights it holds, and the weights of all GPUs together at
//      least the model's (every weight lives somewhere).
//   3. "fits" means the memory total is within the GPU's HBM.
//   4. twice the tokens, twice the time to train, to within one step: the step count is
//      ceil(tokens / tokens per step), so 2 x ceil(x) and ceil(2x) differ by at most one step
//      (a relative 1e-12 covers the floating-point product on top).
//   5. a price of 0 gives a cost of 0 (the sticker cost and the GPU part of the total).
//   6. more GPUs (twice the data parallelism, the rest of the layout and the batch fixed) never
//      raise the per-GPU memory: weights, gradients and optimizer state are replicated or
//      sharded further, and fewer micro-batches per rank keep no more activations.
//   7. no null, NaN or Inf where a number is promised: no number of an estimate's or a search's
//      JSON document is non-finite, and, read back as a user's program reads it (NaN is written
//      as null), every promised number is one (promised_numbers: the step, breakdown, memory,
//      FLOPs, totals and layout always; costs when priced; p10/p90 with an error band), and
//      the document validates against schema/result.schema.json; the CSV and table outputs hold
//      no "nan" or "inf".
// How each was shown able to fail: a scratch copy of sim/src/estimate/estimate.cpp (never
// committed) broke one figure after another behind an environment variable, and this program,
// linked against it, failed each time in the property named: MFU and HFU x3 (1: "mfu <= 1.0,
// actual 1.86"), weights x0.5 (2), memory capacity x100 (3: capacity above HBM), time to train
// + 1 h (4), cost + $1 (5), optimizer state x dp (6: "8.1e11 vs 4.3e11"), GPU-hours NaN (7:
// "#/gpu_hours: not a number"). TheChecksCatchBrokenValues keeps the last kind of check honest
// on hand-made documents.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "capplan/data/cost_model.hpp"
#include "capplan/data/scenario_io.hpp"
#include "capplan/data/search_io.hpp"
#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/search/search.hpp"
#include "json_schema_check.hpp"
#include "test_support.hpp"

namespace capplan::data {
namespace {

using nlohmann::json;

const Catalogs& shipped() { return test::real_catalogs(); }

const json& result_schema() {
  static const json s = test::read_json(std::filesystem::path(CAPPLAN_SOURCE_DIR) / "schema" / "result.schema.json");
  return s;
}

// Dense and MoE models of several sizes, attention kinds (GQA, MLA, sliding window) and sequence
// lengths; GPUs of every generation in the catalog.
const std::vector<std::string> kModels = {"llama2-7b",   "llama3-8b",    "mistral-7b",   "llama2-70b",
                                          "llama3-70b",  "gpt3-175b",    "qwen2.5-14b",  "mixtral-8x7b",
                                          "deepseek-v2", "gpt-oss-120b", "nemotron-4-15b", "llama3.1-405b"};
const std::vector<std::string> kGpus = {"v100-sxm2-32gb", "a100-40gb-sxm",  "a100-80gb-sxm", "h100-sxm-80gb",
                                        "h100-pcie-80gb", "h200-sxm-141gb", "h20-96gb",      "l40s-48gb",
                                        "b200-hgx",       "mi300x-192gb"};

struct Generator {
  std::mt19937_64 rng{18};
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
  }
  int pick(std::initializer_list<int> v) { return pick(std::vector<int>(v)); }
  double pick(std::initializer_list<double> v) { return pick(std::vector<double>(v)); }

  // A scenario with the layout left to capplan ("auto") or drawn (may be invalid: then skipped).
  json scenario(bool auto_layout) {
    const std::string gpu = pick(kGpus);
    const int per_node = 8;
    const int nodes = pick({1, 2, 4, 8, 16, 64});
    json s;
    s["model"] = {{"preset", pick(kModels)}};
    const bool fp8 = gpu == "h100-sxm-80gb" || gpu == "h200-sxm-141gb" || gpu == "b200-hgx";
    s["training"] = {{"tokens", pick({1e9, 3e10, 2.5e11, 1e12, 2e12})},
                     {"global_batch", pick({256, 512, 1024, 2048})},
                     {"precision", fp8 && rng() % 3 == 0 ? "fp8" : "bf16"}};
    s["cluster"] = {{"gpu", gpu}, {"gpus", nodes * per_node}, {"gpus_per_node", per_node}};
    if (nodes > 1) s["cluster"]["inter_node_gbps_per_gpu"] = pick({100.0, 200.0, 400.0});
    s["pricing"] = {{"usd_per_gpu_hour", pick({0.0, 0.85, 2.49, 6.88})}};
    if (auto_layout) {
      s["strategy"] = "auto";
    } else {
      s["strategy"] = layout(nodes * per_node);
    }
    return s;
  }

  json layout(int gpus) {
    const int tp = pick({1, 2, 4, 8});
    const int pp = pick({1, 2, 4});
    const int dp = std::max(1, gpus / (tp * pp));
    // Every field fixed, so that a pair of layouts differs in dp alone (an "auto" virtual_stages
    // chose 2 for one and 1 for the other, and the interleaved one holds more activations).
    return {{"tp", tp},
            {"pp", pp},
            {"dp", dp},
            {"cp", 1},
            {"ep", 1},
            {"virtual_stages", pp > 1 ? pick({1, 2}) : 1},
            {"micro_batch", pick({1, 2})},
            {"zero", pick({0, 1, 2, 3})},
            {"recompute", pick(std::vector<std::string>{"none", "selective", "full"})},
            {"sequence_parallel", tp > 1}};
  }
};

struct Run {
  ParsedScenario parsed;
  sim::Estimate estimate;
};

// The scenario's estimate, or nothing when capplan refuses it (a layout that does not divide, a
// model too large for any layout): refusals are the other tests' business.
std::optional<Run> run(const json& doc) {
  auto parsed = parse_scenario(doc, shipped());
  if (!parsed) return std::nullopt;
  auto e = estimate_with_profile(parsed->scenario, nullptr);
  if (!e) return std::nullopt;
  return Run{std::move(*parsed), std::move(*e)};
}

// The numbers of a document that are not finite, by JSON pointer.
void non_finite(const json& v, const std::string& at, std::vector<std::string>& out) {
  if (v.is_number_float() && !std::isfinite(v.get<double>())) out.push_back(at);
  if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) non_finite(v[i], at + "/" + std::to_string(i), out);
  }
  if (v.is_object()) {
    for (const auto& [k, x] : v.items()) non_finite(x, at + "/" + k, out);
  }
}

// The numbers an estimate document promises (result.schema.json allows null nearly everywhere, for
// what is unknown; these are never unknown once an estimate succeeded): always the step, its
// breakdown, memory, FLOPs, totals and layout; the costs and price when the scenario has a price;
// the p10/p90 of time and throughput when it has an error band.
std::vector<std::string> promised_numbers(const json& doc, bool priced) {
  std::vector<std::string> p = {"/step_time_s", "/steps", "/tokens_per_s", "/tokens_per_s_per_gpu",
                                "/mfu", "/hfu", "/mfu_bf16_peak", "/model_tflops_per_gpu", "/memory_per_gpu_bytes",
                                "/memory_capacity_bytes", "/memory_peak_stage", "/gpu_hours", "/time_to_train_days",
                                "/time_to_train_with_failures_days", "/goodput/steady_s", "/goodput/wall_s",
                                "/goodput/fraction", "/flops_per_step/model", "/flops_per_step/hardware",
                                "/scenario/gpus", "/scenario/tokens", "/scenario/global_batch",
                                "/scenario/global_batch_tokens", "/scenario/seq_len", "/scenario/model_params_b"};
  for (const char* k : {"tp", "pp", "dp", "cp", "ep", "micro_batch", "virtual_stages", "zero", "grad_accumulation"}) {
    p.push_back(std::string("/strategy/") + k);
  }
  for (const auto* group : {"breakdown_s", "memory_breakdown_bytes"}) {
    const json parts = doc.value(group, json::object());
    for (const auto& [k, v] : parts.items()) p.push_back(std::string("/") + group + "/" + k);
  }
  if (priced) {
    for (const char* k : {"/cost", "/cost_usd", "/total_cost", "/total_cost_usd", "/price_per_gpu_hour",
                          "/usd_per_gpu_hour", "/cost_breakdown/compute", "/cost_breakdown/total"}) {
      p.push_back(k);
    }
  }
  if (doc.contains("error_band") && !doc["error_band"].is_null()) {
    for (const char* k : {"/step_time_s", "/tokens_per_s", "/time_to_train_days", "/time_to_train_with_failures_days"}) {
      p.push_back(std::string(k) + "_p10");
      p.push_back(std::string(k) + "_p90");
    }
  }
  return p;
}

// What is wrong with a written estimate document (or a plan of a search): non-finite numbers, and,
// read back from its text as a user's program reads it (NaN is written as null), a promised number
// that is not one, or a type or key the result schema does not allow.
std::vector<std::string> estimate_problems(const json& out, bool priced) {
  std::vector<std::string> problems;
  non_finite(out, "#", problems);
  for (auto& p : problems) p += ": not finite";
  const json read = json::parse(out.dump());
  for (const auto& ptr : promised_numbers(read, priced)) {
    const json::json_pointer at(ptr);
    if (!read.contains(at) || !read[at].is_number()) problems.push_back("#" + ptr + ": not a number");
  }
  return problems;
}

std::vector<std::string> schema_problems(const json& out) {
  const json& root = result_schema();
  return test::errors_of(root, json::parse(out.dump()), root);
}

bool has_nan_or_inf_text(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text.find("nan") != std::string::npos || text.find("inf") != std::string::npos;
}

TEST(Invariants, TheChecksCatchBrokenValues) {
  // A null where a number is promised, and a non-finite number, are found.
  auto r = run(json::parse(R"({"model": {"preset": "llama2-7b"}, "training": {"tokens": "1T", "global_batch": 512},
                               "cluster": {"gpu": "h100-sxm-80gb", "gpus": 8, "gpus_per_node": 8},
                               "strategy": "auto"})"));
  ASSERT_TRUE(r.has_value());
  json out = estimate_to_json(r->estimate, r->parsed);
  EXPECT_EQ(estimate_problems(out, false), std::vector<std::string>{});
  EXPECT_EQ(schema_problems(out), std::vector<std::string>{});
  json broken = out;
  broken["step_time_s"] = std::nan("");
  EXPECT_EQ(estimate_problems(broken, false),
            (std::vector<std::string>{"#/step_time_s: not finite", "#/step_time_s: not a number"}));
  broken = out;
  broken["memory_breakdown_bytes"]["weights"] = nullptr;
  EXPECT_EQ(estimate_problems(broken, false), std::vector<std::string>{"#/memory_breakdown_bytes/weights: not a number"});
  // Without a price the cost may be unknown; with one it is promised.
  EXPECT_TRUE(out["cost_usd"].is_null());
  EXPECT_EQ(estimate_problems(out, true).size(), 8u);
  broken = out;
  broken["step_time_s"] = "fast";
  EXPECT_EQ(schema_problems(broken).size(), 1u);
  EXPECT_TRUE(has_nan_or_inf_text("a,b\n1,nan\n"));
  EXPECT_FALSE(has_nan_or_inf_text(estimate_to_csv(r->estimate, r->parsed)));
}

TEST(Invariants, HoldOnGeneratedEstimates) {
  Generator g;
  int checked = 0, fitting = 0, priced_zero = 0;
  for (int i = 0; i < 160; ++i) {
    const json doc = g.scenario(i % 2 == 0);
    const auto r = run(doc);
    if (!r) continue;
    ++checked;
    SCOPED_TRACE(doc.dump());
    const sim::Estimate& e = r->estimate;
    const sim::Scenario& s = r->parsed.scenario;
    // 1. MFU and HFU in (0, 1].
    EXPECT_GT(e.step.mfu, 0);
    EXPECT_LE(e.step.mfu, 1.0);
    EXPECT_GT(e.step.hfu, 0);
    EXPECT_LE(e.step.hfu, 1.0);
    // 2. Memory at least the weights: per GPU, and the weights of all GPUs at least the whole
    // model's (every weight is held somewhere; the most loaded stage holds at least the average).
    EXPECT_GE(e.memory.total().base(), e.memory.weights.base());
    EXPECT_GT(e.memory.weights.base(), 0);
    const double model_weights = s.model.total_params() * s.training.weight_bytes();
    // 1e-6: the stage reported is the most loaded in total, which may hold a few weights fewer than
    // the average stage (tp 8 pp 2 on Llama 3.1 405B: stage 0 lacks the last stage's final norm,
    // 4e-8 of the model).
    EXPECT_GE(e.memory.weights.base() * s.cluster.gpus, model_weights * (1 - 1e-6));
    // 3. Fits means within HBM (capacity is the GPU's HBM).
    EXPECT_LE(e.memory.capacity.base(), s.cluster.gpu.hbm_capacity.base());
    if (e.memory.fits()) {
      ++fitting;
      EXPECT_LE(e.memory.total().base(), s.cluster.gpu.hbm_capacity.base());
    }
    // 4. Twice the tokens, twice the time to train (to one step), at the same layout.
    json twice = doc;
    twice["training"]["tokens"] = doc["training"]["tokens"].get<double>() * 2;
    const auto r2 = run(twice);
    ASSERT_TRUE(r2.has_value());
    EXPECT_EQ(r2->estimate.layout.strategy, e.layout.strategy);
    const double t1 = e.totals.time_to_train.base(), t2 = r2->estimate.totals.time_to_train.base();
    EXPECT_NEAR(t2, 2 * t1, e.step.time.base() + 1e-12 * t2);
    // 5. Price 0, cost 0.
    if (doc["pricing"]["usd_per_gpu_hour"].get<double>() == 0) {
      ++priced_zero;
      ASSERT_TRUE(e.totals.cost.has_value());
      EXPECT_EQ(e.totals.cost->base(), 0);
      ASSERT_TRUE(e.goodput.cost.compute.has_value());
      EXPECT_EQ(e.goodput.cost.compute->base(), 0);
    }
    // 7. The written document, CSV and table.
    const json out = estimate_to_json(e, r->parsed);
    EXPECT_EQ(estimate_problems(out, true), std::vector<std::string>{});  // every scenario here has a price
    EXPECT_EQ(schema_problems(out), std::vector<std::string>{});
    EXPECT_FALSE(has_nan_or_inf_text(estimate_to_csv(e, r->parsed)));
    EXPECT_FALSE(has_nan_or_inf_text(estimate_to_table(e, r->parsed)));
  }
  // The generator must reach enough cases to mean something (counted on this seed).
  EXPECT_GE(checked, 100);
  EXPECT_GE(fitting, 30);
  EXPECT_GE(priced_zero, 15);
}

TEST(Invariants, MoreGpusNeverRaiseThePerGpuMemoryOfALayoutFamily) {
  Generator g;
  int pairs = 0;
  for (int i = 0; i < 200; ++i) {
    json doc = g.scenario(false);
    const int gpus = doc["cluster"]["gpus"].get<int>();
    if (gpus < 16) continue;
    auto& st = doc["strategy"];
    const int dp = st["dp"].get<int>();
    const int half = dp / 2;
    if (half < 1 || st["tp"].get<int>() * st["pp"].get<int>() * dp != gpus) continue;
    // Half the data parallelism on half the GPUs, the batch unchanged.
    json fewer = doc;
    fewer["strategy"]["dp"] = half;
    fewer["cluster"]["gpus"] = gpus / 2;
    const auto small = run(fewer);
    const auto large = run(doc);
    if (!small || !large) continue;
    ++pairs;
    SCOPED_TRACE(doc.dump());
    sim::Parallelism same = small->estimate.layout.strategy;
    same.dp = large->estimate.layout.strategy.dp;
    EXPECT_EQ(same, large->estimate.layout.strategy);
    EXPECT_LE(large->estimate.memory.total().base(), small->estimate.memory.total().base() * (1 + 1e-12));
  }
  EXPECT_GE(pairs, 40);
}

TEST(Invariants, GeneratedSearchesWriteNoNullWhereANumberIsPromised) {
  Generator g;
  OfferingFilter f;
  f.instances = {"aws-p5.48xlarge", "aws-p4d.24xlarge", "gcp-a3-highgpu-8g"};
  auto offerings = offerings_from_catalog(shipped(), f);
  ASSERT_TRUE(offerings.has_value()) << to_string(offerings.error());
  int searched = 0;
  for (int i = 0; i < 8; ++i) {
    json doc = g.scenario(true);
    doc["cluster"] = {{"instance", "aws-p5.48xlarge"}, {"nodes", 2}};
    if (i % 2 == 1) doc.erase("pricing");  // catalog prices
    auto parsed = parse_scenario(doc, shipped());
    if (!parsed) continue;
    sim::SearchRequest r;
    r.base = parsed->scenario;
    r.offerings = offerings->offerings;
    r.node_counts = {g.pick({1, 2}), g.pick({4, 8})};
    r.threads = 1;
    r.cost_model = cost_model_factory(nullptr);
    if (i % 3 == 0) r.deadline = units::seconds(g.pick({1.0, 30.0, 1e4}) * 86400.0);
    auto result = sim::search(r);
    if (!result) continue;
    ++searched;
    SCOPED_TRACE(doc.dump());
    const json out = search_result_to_json(*result, r, *parsed);
    EXPECT_EQ(schema_problems(out), std::vector<std::string>{});
    std::vector<std::string> problems;
    non_finite(out, "#", problems);
    EXPECT_EQ(problems, std::vector<std::string>{});
    for (const char* list : {"plans", "pareto"}) {
      const json plans = out.value(list, json::array());
      for (const auto& plan : plans) {
        EXPECT_EQ(estimate_problems(plan, plan.value("price_known", false)), std::vector<std::string>{}) << list;
      }
    }
    EXPECT_FALSE(has_nan_or_inf_text(search_result_to_csv(*result, r, *parsed)));
    for (const auto& plan : result->plans) {
      EXPECT_GT(plan.estimate.step.mfu, 0);
      EXPECT_LE(plan.estimate.step.mfu, 1.0);
    }
  }
  EXPECT_GE(searched, 6);
}

}  // namespace
}  // namespace capplan::data
