// SPDX-License-Identifier: Apache-2.0
// The serve workload: strict parsing into a sim::ServeJob, errors naming the field, the plan's
// output in the scenario's currency, and the compare mode's Pareto front.
#include "capplan/data/serve_io.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "capplan/data/cost_model.hpp"
#include "capplan/data/fields.hpp"
#include "capplan/data/json_pointer.hpp"
#include "capplan/data/scenario_io.hpp"
#include "test_support.hpp"

namespace capplan::data {
namespace {

using nlohmann::json;

json serve_doc() {
  json d = example_serve_scenario();
  d["workload"]["compare"] = false;
  d["pricing"] = {{"currency", "CNY"}, {"usd_per_unit", 0.14}, {"usd_per_gpu_hour", 20}};
  return d;
}

Result<ServeRequest> request_of(const json& doc) {
  auto parsed = parse_scenario(doc, test::real_catalogs());
  if (!parsed) return std::unexpected(parsed.error());
  return serve_request(doc, *parsed, test::real_catalogs());
}

std::string first_error(const json& doc) {
  auto r = request_of(doc);
  if (r) return "";
  return r.error().front().message;
}

TEST(ServeIo, TheExampleBecomesAJob) {
  auto r = request_of(serve_doc());
  ASSERT_TRUE(r) << r.error().front().message;
  EXPECT_EQ(r->model_id, "llama3.1-8b");
  EXPECT_EQ(r->cluster.gpu.id, "h800-sxm-80gb");
  EXPECT_EQ(r->cluster.gpus_per_node, 8);
  EXPECT_EQ(r->engine_id, "vllm");
  EXPECT_EQ(r->job.engine.id, "vllm");
  EXPECT_EQ(r->job.traffic.arrival, sim::Arrival::poisson);
  EXPECT_DOUBLE_EQ(r->job.traffic.rate, 50);
  EXPECT_DOUBLE_EQ(r->job.traffic.input.mean, 1000);
  EXPECT_TRUE(r->job.traffic.input.fixed());  // every request 1,000 in, 300 out
  EXPECT_DOUBLE_EQ(r->job.slo.e2e.base(), 2.0);
  EXPECT_EQ(r->currency.code, "CNY");
  // 20 CNY per GPU-hour at 0.14 USD per CNY.
  ASSERT_TRUE(r->cluster.price_per_gpu);
  EXPECT_NEAR(r->cluster.price_per_gpu->base() * 3600, 2.8, 1e-9);
}

TEST(ServeIo, EngineOverridesAndLayout) {
  json d = serve_doc();
  d["workload"]["engine"] = {{"id", "vllm"}, {"max_num_seqs", 64}, {"kv_memory_fraction", 0.8}};
  d["workload"]["weights"] = "fp8";
  d["workload"]["kv_cache"] = "fp8";
  d["workload"]["tp"] = 2;
  auto r = request_of(d);
  ASSERT_TRUE(r) << r.error().front().message;
  EXPECT_EQ(r->job.engine.max_num_seqs, 64);
  EXPECT_DOUBLE_EQ(r->job.engine.kv_memory_fraction, 0.8);
  EXPECT_EQ(r->job.weights, sim::WeightFormat::fp8);
  EXPECT_EQ(r->job.kv, sim::Precision::fp8);
  EXPECT_EQ(r->job.tp, 2);
}

TEST(ServeIo, BadFieldsAreNamed) {
  json d = serve_doc();
  d["workload"]["traffic"]["rate_per_s"] = 0;
  EXPECT_NE(first_error(d).find("> 0"), std::string::npos);
  d = serve_doc();
  d["workload"]["weights"] = "int3";
  EXPECT_NE(first_error(d).find("unknown weight format 'int3'"), std::string::npos);
  d = serve_doc();
  d["workload"]["engine"] = "vlm";
  EXPECT_NE(first_error(d).find("unknown engine 'vlm'"), std::string::npos);
  d = serve_doc();
  d["workload"]["traffic"]["input_tokens"] = {{"mean", 1000}, {"p95", 500}};
  EXPECT_NE(first_error(d).find("at least the mean"), std::string::npos);
  d = serve_doc();
  d["workload"]["trafic"] = json::object();
  EXPECT_NE(first_error(d).find("unknown field"), std::string::npos);
  d = serve_doc();
  d["workload"]["tp"] = 3;  // 32 heads
  EXPECT_NE(first_error(d).find("heads"), std::string::npos);
  d = serve_doc();
  d["training"] = {{"tokens", "1T"}};
  EXPECT_NE(first_error(d).find("not used by a serve workload"), std::string::npos);
  d = serve_doc();
  d["workload"]["traffic"]["hourly_load"] = json::array({0.5, 0.5});
  EXPECT_NE(first_error(d).find("24 numbers"), std::string::npos);
  // The pointer names the field.
  d = serve_doc();
  d["workload"]["slo"]["percentile"] = 2;
  auto r = request_of(d);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().front().where, "scenario#/workload/slo/percentile");
}

TEST(ServeIo, PlanJsonIsInTheScenarioCurrencyAndFinite) {
  auto r = request_of(serve_doc());
  ASSERT_TRUE(r);
  const ServeResult res = plan_request(*r);
  const json j = serve_to_json(res, *r);
  EXPECT_EQ(j["workload"], "serve");
  EXPECT_EQ(j["currency"], "CNY");
  ASSERT_TRUE(j["feasible"].get<bool>()) << j.dump(2);
  // Whole instances of 8 GPUs for a billing month at 20 CNY per GPU-hour.
  EXPECT_NEAR(j["cost_per_month"].get<double>(), j["instances"].get<int>() * 8 * 730.0 * 20.0, 1e-6);
  EXPECT_NEAR(j["cost_usd_per_month"].get<double>(), j["cost_per_month"].get<double>() * 0.14, 1e-6);
  EXPECT_LE(j["per_replica"]["e2e_s"]["p95"].get<double>(), 2.0);
  const std::string text = j.dump();
  EXPECT_EQ(text.find("nan"), std::string::npos);
  EXPECT_EQ(text.find("inf"), std::string::npos);
  EXPECT_NE(serve_to_table(res, *r).find("replica"), std::string::npos);
}

TEST(ServeIo, CompareListsLayoutsWithAParetoFront) {
  json d = serve_doc();
  d["workload"]["compare"] = true;
  auto r = request_of(d);
  ASSERT_TRUE(r);
  const ServeResult res = plan_request(*r);
  // H800: bf16, fp8 and int4 (no FP4 tensor cores) at TP 1, 2, 4, 8.
  EXPECT_EQ(res.options.size(), 12u);
  ASSERT_FALSE(res.pareto.empty());
  EXPECT_TRUE(res.options.front().plan.feasible);
  for (std::size_t i = 1; i < res.options.size(); ++i) {
    if (!res.options[i].plan.feasible) continue;
    EXPECT_LE(*res.options[i - 1].plan.usd_per_month, *res.options[i].plan.usd_per_month);
  }
  EXPECT_NE(res.explanation.find("instead of"), std::string::npos);
}

TEST(ServeIo, OfferingSearchPlansEveryOfferingAndConfirmsTheFront) {
  // The Pareto front across offerings x TP x weight format.
  const OfferingFilter filter{.instances = {"tencent-hccpnv5", "aws-p5*", "runpod-8x-h200"}};
  auto planned = plan_serve_document(serve_doc(), test::real_catalogs(), "", {}, nullptr, 0, "scenario", &filter);
  ASSERT_TRUE(planned) << planned.error().front().where << ": " << planned.error().front().message;
  const ServeRequest& r = planned->request;
  const ServeResult& res = planned->result;
  ASSERT_GE(r.offerings.size(), 3u);
  EXPECT_TRUE(r.compare);
  std::set<std::string> instances;
  for (const auto& o : res.options) instances.insert(o.instance_id);
  EXPECT_TRUE(instances.count("tencent-hccpnv5"));
  EXPECT_TRUE(instances.count("runpod-8x-h200"));
  EXPECT_GE(instances.size(), r.offerings.size());  // every offering has layouts
  // Known costs first, cheapest first; the cheapest feasible and every front member confirmed by
  // the simulation.
  ASSERT_FALSE(res.options.empty());
  EXPECT_TRUE(res.options.front().plan.feasible);
  EXPECT_TRUE(res.options.front().confirmed);
  for (std::size_t i = 1; i < res.options.size(); ++i) {
    const auto& a = res.options[i - 1].plan;
    const auto& b = res.options[i].plan;
    if (!a.feasible || !b.feasible || !a.usd_per_month || !b.usd_per_month) continue;
    EXPECT_LE(*a.usd_per_month, *b.usd_per_month);
  }
  ASSERT_FALSE(res.pareto.empty());
  for (std::size_t i : res.pareto) EXPECT_TRUE(res.options[i].confirmed) << res.options[i].instance_id;
  // An option priced on its own offering: the H200 instance's catalog price, not the scenario's.
  for (const auto& o : res.options) {
    if (o.instance_id != "runpod-8x-h200" || !o.plan.feasible) continue;
    ASSERT_TRUE(o.cluster.price_per_gpu.has_value());
    EXPECT_NE(o.cluster.price_per_gpu->base(), r.cluster.price_per_gpu->base());
    EXPECT_EQ(o.cluster.gpu.id, "h200-sxm-141gb");
    break;
  }
  const json j = serve_to_json(res, r);
  ASSERT_TRUE(j["options"].is_array());
  EXPECT_TRUE(j["options"][0].contains("instance"));
  EXPECT_TRUE(j["options"][0]["confirmed_by_simulation"].get<bool>());
  EXPECT_NE(serve_to_table(res, r).find("offerings"), std::string::npos);
  // A filter that leaves nothing is an error naming the flag.
  const OfferingFilter none{.instances = {"nothing-*"}};
  auto refused = plan_serve_document(serve_doc(), test::real_catalogs(), "", {}, nullptr, 0, "scenario", &none);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().front().where.find("--instances"), std::string::npos);
}

TEST(ServeIo, EnginesAreComparedAtTheirRecipesDefaults) {
  auto planned = plan_serve_document(serve_doc(), test::real_catalogs(), "", {}, nullptr, 0, "scenario", nullptr,
                                     {"sglang", "tensorrt-llm"});
  ASSERT_TRUE(planned) << planned.error().front().message;
  std::set<std::string> engines;
  for (const auto& o : planned->result.options) {
    engines.insert(o.job.engine.id);
    EXPECT_EQ(o.label.rfind(o.job.engine.id + " ", 0), 0u) << o.label;  // named by engine
  }
  EXPECT_EQ(engines, (std::set<std::string>{"vllm", "sglang", "tensorrt-llm"}));
  // TensorRT-LLM reserves whole sequences (its recipe), vLLM does not: the recipes differ.
  for (const auto& o : planned->result.options) {
    if (o.job.engine.id == "tensorrt-llm") {
      EXPECT_TRUE(o.job.engine.reserve_full_sequence);
    }
    if (o.job.engine.id == "vllm") {
      EXPECT_FALSE(o.job.engine.reserve_full_sequence);
    }
  }
  EXPECT_EQ(serve_to_json(planned->result, planned->request)["options"][0].count("engine_id"), 1u);
  auto refused = plan_serve_document(serve_doc(), test::real_catalogs(), "", {}, nullptr, 0, "scenario", nullptr, {"vlm"});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().front().where, "--engines");
  EXPECT_NE(refused.error().front().message.find("vllm"), std::string::npos);
}

TEST(ServeIo, CurveIsTheAskedLayoutsAndInTheJson) {
  auto r = request_of(serve_doc());
  ASSERT_TRUE(r);
  const ServeResult none = plan_request(*r);
  EXPECT_TRUE(none.curve.empty());
  EXPECT_FALSE(serve_to_json(none, *r).contains("latency_curve"));
  const ServeResult res = plan_request(*r, nullptr, 6);
  // Six evenly spaced rates plus the plan's max_rate.
  ASSERT_EQ(res.curve.size(), 7u);
  const json j = serve_to_json(res, *r);
  ASSERT_TRUE(j["latency_curve"].is_array());
  ASSERT_EQ(j["latency_curve"].size(), 7u);
  EXPECT_DOUBLE_EQ(j["latency_curve"][0]["rate_per_s"].get<double>(), res.curve[0].rate);
  EXPECT_TRUE(j["latency_curve"][0]["e2e_s"].contains("p95"));
  const std::string text = j.dump();
  EXPECT_EQ(text.find("nan"), std::string::npos);
  EXPECT_NE(serve_to_table(res, *r).find("latency under load"), std::string::npos);
}

TEST(ServeIo, TrainThenServeAddsMonthsOfTheRecommendedLayout) {
  json d = serve_doc();
  d["workload"]["compare"] = true;
  auto r = request_of(d);
  ASSERT_TRUE(r);
  ServeResult res = plan_request(*r);
  // Fine-tuning the served model on one priced H800 instance.
  const json train = {{"model", {{"preset", "llama3.1-8b"}}},
                      {"workload", {{"kind", "finetune"}, {"method", "lora"}, {"dataset", {{"tokens", "200M"}}}}},
                      {"training", {{"global_batch_tokens", "1Mi"}, {"precision", "bf16"}}},
                      {"cluster", {{"instance", "tencent-hccpnv5"}, {"nodes", 1}}},
                      {"pricing", {{"currency", "CNY"}, {"usd_per_unit", 0.14}, {"usd_per_gpu_hour", 20}}}};
  auto parsed = parse_scenario(train, test::real_catalogs());
  ASSERT_TRUE(parsed) << parsed.error().front().where << ": " << parsed.error().front().message;
  auto est = estimate_with_profile(parsed->scenario, nullptr);
  ASSERT_TRUE(est);
  train_then_serve(res, *r, *parsed, *est, 3);
  ASSERT_TRUE(res.lifecycle);
  const TrainThenServe& t = *res.lifecycle;
  EXPECT_EQ(t.training_workload, "finetune");
  EXPECT_EQ(t.training_gpus, 8);
  // The recommended layout is compare mode's cheapest feasible one, not the asked TP1 bf16.
  EXPECT_EQ(t.serving_gpus, res.options.front().plan.gpus);
  ASSERT_TRUE(t.training_usd && t.serving_usd_per_month && t.total_usd);
  // Training at 20 CNY (2.80 USD) per GPU-hour, then three months of the serving bill.
  EXPECT_NEAR(*t.total_usd, *t.training_usd + 3 * *t.serving_usd_per_month, 1e-6 * *t.total_usd);
  ASSERT_EQ(t.cumulative_usd.size(), 4u);
  EXPECT_DOUBLE_EQ(*t.cumulative_usd[0], *t.training_usd);
  EXPECT_GT(*t.cumulative_usd[1], *t.cumulative_usd[0]);
  EXPECT_TRUE(t.notes.empty()) << t.notes.front();  // same model, GPU and currency: nothing to say
  const json j = serve_to_json(res, *r)["train_then_serve"];
  EXPECT_EQ(j["currency"], "CNY");
  EXPECT_NEAR(j["total_cost"].get<double>(), *t.total_usd / 0.14, 1e-6 * *t.total_usd);
  EXPECT_NEAR(j["total_cost_usd"].get<double>(), *t.total_usd, 1e-6 * *t.total_usd);
  EXPECT_EQ(j["cumulative_cost"].size(), 4u);
  // Without a training price the total is unknown, never a partial sum.
  json unpriced = train;
  unpriced.erase("pricing");
  auto parsed2 = parse_scenario(unpriced, test::real_catalogs());
  ASSERT_TRUE(parsed2);
  auto est2 = estimate_with_profile(parsed2->scenario, nullptr);
  ASSERT_TRUE(est2);
  train_then_serve(res, *r, *parsed2, *est2, 3);
  EXPECT_FALSE(res.lifecycle->total_usd);
  EXPECT_TRUE(serve_to_json(res, *r)["train_then_serve"]["total_cost"].is_null());
  EXPECT_FALSE(res.lifecycle->notes.empty());
}


// Each row's range in the serve field tables and the engine's is what the reader enforces: its
// bounds are accepted, a value past either is rejected at the row's field with the value named.
TEST(ServeFields, EveryRowsRangeIsWhatTheReaderEnforces) {
  std::vector<std::pair<const FieldSpec*, std::string>> rows;
  for (const auto& table : serve_field_tables()) {
    for (const auto& row : table) {
      if (row.set != nullptr) rows.emplace_back(&row.spec, std::string("/workload/") + row.spec.pointer);
    }
  }
  for (const auto& row : engine_fields()) rows.emplace_back(&row.spec, std::string("/workload/engine/") + row.spec.pointer);
  int checked = 0;
  for (const auto& row : rows) {
    {
      const FieldSpec& f = *row.first;
      const std::string pointer = row.second;
      if (f.kind != FieldKind::number && f.kind != FieldKind::integer && f.kind != FieldKind::length) continue;
      const std::string where = "scenario#" + pointer;
      const auto with = [&](double v) {
        json d = serve_doc();
        d["workload"]["engine"] = {{"id", "vllm"}};
        json value = v;
        if (f.items > 0) {
          std::vector<double> list(static_cast<std::size_t>(f.items), v);
          list[0] = 1.0;  // the peak hour
          value = list;
        }
        set_at(d, pointer, value);
        return request_of(d);
      };
      const auto error_at = [&](const Result<ServeRequest>& r) {
        if (r) return std::string();
        for (const auto& d : r.error()) {
          if (d.where.rfind(where, 0) == 0) return d.message;
        }
        return std::string();
      };
      if (std::isfinite(f.max)) {
        EXPECT_EQ(error_at(with(f.max)), "") << f.pointer << " at its maximum";
        EXPECT_NE(error_at(with(f.max * 2 + 1)).find("must be at most"), std::string::npos) << f.pointer;
      }
      if (std::isfinite(f.min)) {
        const double below = f.min - 1;
        EXPECT_NE(error_at(with(below)), "") << f.pointer << " below its minimum";
        if (!f.min_open) {
          EXPECT_EQ(error_at(with(f.min)), "") << f.pointer << " at its minimum";
        }
      }
      ++checked;
    }
  }
  EXPECT_GE(checked, 18);
}

}  // namespace
}  // namespace capplan::data
