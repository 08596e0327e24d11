// SPDX-License-Identifier: Apache-2.0
// Properties of training and fine-tuning estimates over generated scenarios (property_support.hpp):
// pairs of scenarios that differ in one input, and the direction the figures must move in.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "capplan/data/findings.hpp"
#include "property_support.hpp"

namespace capplan::property {
namespace {

// The figures a run is paid and waited for: steady-state time to train and GPU-hours, the sticker
// cost, and the expected wall time and total cost with failures and checkpoints.
struct Figures {
  double time = 0, gpu_hours = 0, cost = 0, wall = 0, total = 0;
  bool total_known = false;
};
Figures figures_of(const sim::Estimate& e) {
  Figures f;
  f.time = e.totals.time_to_train.base();
  f.gpu_hours = e.totals.gpu_hours;
  f.cost = e.totals.cost ? e.totals.cost->base() : 0;
  f.wall = sim::plan_time(e).base();
  f.total_known = e.goodput.cost.total.has_value();
  f.total = f.total_known ? e.goodput.cost.total->base() : 0;
  return f;
}

// `more` >= `less`, exactly: every figure below is a product or sum of non-negative terms that
// each grow (or stay) with the input changed, so no rounding can reverse the order... except the
// expected wall time's interruption terms, exponentials of the run's length: 1e-12 relative
// covers their rounding (a few ulps of exp and log, far below any modelled change).
void expect_not_less(const Figures& more, const Figures& less, const char* what) {
  EXPECT_GE(more.time, less.time) << what << ": time to train";
  EXPECT_GE(more.gpu_hours, less.gpu_hours) << what << ": GPU-hours";
  EXPECT_GE(more.cost, less.cost) << what << ": cost";
  EXPECT_GE(more.wall, less.wall * (1 - 1e-12)) << what << ": expected wall time";
  if (more.total_known && less.total_known) {
    EXPECT_GE(more.total, less.total * (1 - 1e-12)) << what << ": total cost";
  }
}

Workload any_workload(Draw& d) { return d.pick(all_workloads()); }

std::string describe(const Run& r) { return r.doc.dump() + "\n  figures " + figures(r.estimate); }

// The generator reaches every workload: most draws of each give a valid case (a layout the model
// accepts), so no property is checked on one kind of scenario alone.
TEST(TrainingProperties, TheGeneratorReachesEveryWorkload) {
  for (const Workload w : all_workloads()) {
    int valid = 0;
    for (int i = 0; i < 20; ++i) {
      Draw d = case_draw(suite_seed(), std::string("coverage_") + name(w), i);
      if (const auto r = draw_case(d, w)) {
        ++valid;
        EXPECT_EQ(r->parsed.scenario.workload.kind == sim::WorkloadKind::finetune, finetune(w)) << r->doc.dump();
        if (w == Workload::moe) {
          EXPECT_TRUE(r->parsed.scenario.model.is_moe()) << r->doc.dump();
        }
        if (w == Workload::hybrid) {
          EXPECT_TRUE(r->parsed.scenario.model.is_hybrid()) << r->doc.dump();  // Mamba-2 layers in its pattern
        }
      }
    }
    EXPECT_GE(valid, 15) << name(w);
  }
}

// 1. More tokens never cost less (pretraining: training.tokens; fine-tuning: the dataset's tokens
// or its epochs). Factors from one part in a million (one more step at most) to ten times.
TEST(TrainingProperties, MoreTokensNeverCostLess) {
  int checked = 0;
  for_each_case("more_tokens", 120, [&](Draw& d, int) {
    const Workload w = any_workload(d);
    const auto base = draw_case(d, w);
    if (!base) return;
    const double factor = d.pick({1.000001, 1.01, 1.5, 2.0, 10.0});
    json more = base->doc;
    if (finetune(w)) {
      if (d.chance(0.5)) {
        more["workload"]["dataset"]["tokens"] = more["workload"]["dataset"]["tokens"].get<double>() * factor;
      } else {
        more["workload"]["dataset"]["epochs"] = more["workload"]["dataset"]["epochs"].get<double>() + 1;
      }
    } else {
      more["training"]["tokens"] = more["training"]["tokens"].get<double>() * factor;
    }
    const auto r = run(more);
    SCOPED_TRACE("base " + describe(*base));
    ASSERT_TRUE(r.has_value()) << "more tokens refused: " << more.dump();
    SCOPED_TRACE("more " + describe(*r));
    ++checked;
    expect_not_less(figures_of(r->estimate), figures_of(base->estimate), "more tokens");
  });
  if (!only_case()) {
    EXPECT_GE(checked, case_count(120) / 2);
  }
}

// 2. A higher price never costs less: the same scenario at a higher price per GPU-hour.
TEST(TrainingProperties, AHigherPriceNeverCostsLess) {
  int checked = 0;
  for_each_case("higher_price", 100, [&](Draw& d, int) {
    const auto base = draw_case(d, any_workload(d));
    if (!base) return;
    json dearer = base->doc;
    dearer["pricing"]["usd_per_gpu_hour"] = dearer["pricing"]["usd_per_gpu_hour"].get<double>() * d.pick({1.0001, 1.5, 3.0});
    const auto r = run(dearer);
    SCOPED_TRACE("base " + describe(*base));
    ASSERT_TRUE(r.has_value());
    SCOPED_TRACE("dearer " + describe(*r));
    ++checked;
    const Figures a = figures_of(base->estimate), b = figures_of(r->estimate);
    EXPECT_GT(b.cost, a.cost);
    // Time does not depend on the price.
    EXPECT_EQ(b.time, a.time);
    EXPECT_EQ(b.wall, a.wall);
    if (a.total_known && b.total_known) {
      EXPECT_GE(b.total, a.total);
    }
  });
  if (!only_case()) {
    EXPECT_GE(checked, case_count(100) / 2);
  }
}

// 3. The same layout on more data-parallel replicas never slows the step: twice the GPUs, twice
// dp, the rest of the layout and the global batch unchanged (each replica runs half the
// micro-batches). Checked on the step without its exposed data-parallel communication: the
// gradient reduction the extra replicas add is a real cost that can outweigh the halved work (a
// dp 1 layout has none at all; doubling dp can take the reduction across nodes, and fewer
// micro-batches leave less backward to hide it behind), so the whole step may rightly slow down.
// Cases whose doubled layout the model refuses are skipped.
TEST(TrainingProperties, MoreDataParallelReplicasNeverSlowTheStep) {
  int checked = 0;
  for_each_case("more_replicas", 120, [&](Draw& d, int) {
    const auto base = draw_case(d, any_workload(d));
    if (!base) return;
    const sim::Parallelism& p = base->estimate.layout.strategy;
    const std::int64_t gb = base->parsed.scenario.training.global_batch;
    if (gb % (2LL * p.dp * p.micro_batch) != 0) return;
    json wider = base->doc;
    wider["strategy"]["dp"] = 2 * p.dp;
    const int gpus = 2 * base->parsed.scenario.cluster.gpus;
    wider["cluster"]["gpus"] = gpus;
    if (gpus > 8 && !wider["cluster"].contains("inter_node_gbps_per_gpu")) {
      wider["cluster"]["inter_node_gbps_per_gpu"] = 200.0;
    }
    const auto r = run(wider);
    if (!r) return;
    SCOPED_TRACE("base " + describe(*base));
    SCOPED_TRACE("wider " + describe(*r));
    ++checked;
    auto without_dp_comm = [](const sim::Estimate& e) { return e.step.time.base() - e.step.breakdown.dp_comm.base(); };
    // 1e-12 relative: the step is a sum of parts; subtracting one leaves a few ulps of rounding.
    EXPECT_LE(without_dp_comm(r->estimate), without_dp_comm(base->estimate) * (1 + 1e-12));
  });
  if (!only_case()) {
    EXPECT_GE(checked, case_count(120) / 3);
  }
}

// The finding that explains a LoRA step slower than full fine-tuning's (the adapters' passes over
// whole activations cost more than the weight gradients they skip).
bool names_lora_adapter_cost(const std::vector<sim::Finding>& findings) {
  return std::any_of(findings.begin(), findings.end(), [](const sim::Finding& f) {
    return f.code == sim::FindingCode::lora_adapters_cost_more_than_skipped_gradients;
  });
}

// 4. LoRA is never slower per step than full fine-tuning of the same model, layout and data, unless
// the estimate carries the finding that says why. (QLoRA is left out: dequantising its 4-bit base
// for every GEMM is a real cost that full fine-tuning does not pay.)
TEST(TrainingProperties, LoraNeverSlowerPerStepThanFullFineTuning) {
  int checked = 0;
  for_each_case("lora_vs_full", 80, [&](Draw& d, int i) {
    const auto lora = draw_case(d, Workload::lora);
    if (!lora) return;
    json full_doc = lora->doc;
    full_doc["workload"]["method"] = "full";
    full_doc["workload"].erase("lora");
    const auto full = run(full_doc);
    if (!full) return;
    ++checked;
    const double tl = lora->estimate.step.time.base(), tf = full->estimate.step.time.base();
    if (tl <= tf) return;
    if (names_lora_adapter_cost(lora->estimate.findings)) return;
    ADD_FAILURE() << reproduce(suite_seed(), "lora_vs_full", i) << ": lora step " << tl << " s > full " << tf
                  << " s with no finding that says why\n  " << lora->doc.dump();
  });
  if (!only_case()) {
    EXPECT_GE(checked, case_count(80) / 3);
  }
}

// 5. Packed sequences are never slower per useful token than unpacked ones: the same dataset,
// model and layout, each sample padded to its micro-batch's longest when unpacked. Useful tokens
// are the real tokens a run trains on: all of the dataset's (x epochs) when packed; when unpacked,
// the processed tokens times their real share (samples longer than seq_len are truncated there).
// The packed side masks documents apart (document_mask): packing without a mask attends across
// documents, work the unpacked run does not do, so it may rightly be slower.
double useful_tokens(const Run& r) {
  const sim::Scenario at = sim::at_micro_batch(r.parsed.scenario, r.estimate.layout.strategy.micro_batch);
  return at.workload.shape.processed_tokens * at.workload.shape.useful_share;
}
TEST(TrainingProperties, PackedNeverSlowerPerUsefulTokenThanUnpacked) {
  int checked = 0;
  for_each_case("packed_vs_unpacked", 80, [&](Draw& d, int) {
    const Workload w = d.pick(std::vector<Workload>{Workload::full, Workload::lora, Workload::qlora});
    auto base = draw_case(d, w);
    if (!base) return;
    json packed = base->doc, unpacked = base->doc;
    packed["workload"]["dataset"]["packing"] = true;
    packed["workload"]["dataset"]["document_mask"] = true;
    unpacked["workload"]["dataset"]["packing"] = false;
    const auto a = run(packed), b = run(unpacked);
    if (!a || !b) return;
    SCOPED_TRACE("packed " + describe(*a));
    SCOPED_TRACE("unpacked " + describe(*b));
    ++checked;
    const double per_packed = a->estimate.totals.time_to_train.base() / useful_tokens(*a);
    const double per_unpacked = b->estimate.totals.time_to_train.base() / useful_tokens(*b);
    EXPECT_LE(per_packed, per_unpacked) << "micro_batch " << base->estimate.layout.strategy.micro_batch;
  });
  if (!only_case()) {
    EXPECT_GE(checked, case_count(80) / 3);
  }
}

// 10. Memory per GPU never grows with more sharding, the global batch and micro-batch fixed:
// twice the TP (on twice the GPUs, dp fixed), twice the PP (likewise), or a higher ZeRO stage.
TEST(TrainingProperties, MoreShardingNeverGrowsMemoryPerGpu) {
  int checked = 0;
  for_each_case("more_sharding", 150, [&](Draw& d, int) {
    const auto base = draw_case(d, any_workload(d));
    if (!base) return;
    const sim::Parallelism& p = base->estimate.layout.strategy;
    json more = base->doc;
    const int kind = d.pick({0, 1, 2});
    std::string what;
    if (kind == 0) {
      if (p.tp >= 8) return;
      more["strategy"]["tp"] = 2 * p.tp;
      more["strategy"]["sequence_parallel"] = true;
      more["cluster"]["gpus"] = 2 * base->parsed.scenario.cluster.gpus;
      what = "tp x2";
    } else if (kind == 1) {
      // Narrowed to plain 1F1B: with interleaving (virtual_stages > 1) the first stage holds
      // activations of 1 + (pp - 1) / (pp x virtual_stages) times its layers' share (Narayanan et
      // al. 2021, the interleaved schedule's warm-up), a factor that grows with pp.
      if (p.virtual_stages > 1) return;
      // And to even stages: the first stage holds pp micro-batches' activations of its
      // ceil(layers / pp) layers, more than the layers' worth when pp does not divide them
      // (Qwen2.5-7B's 28 layers: pp 4 holds 7 x 4 = 28 layer-micro-batches, pp 8 holds 4 x 8 = 32).
      if (base->parsed.scenario.model.layers % (2 * p.pp) != 0) return;
      more["strategy"]["pp"] = 2 * p.pp;
      more["cluster"]["gpus"] = 2 * base->parsed.scenario.cluster.gpus;
      if (p.pp * 2 > 1 && p.zero > 1) return;
      what = "pp x2";
    } else {
      const int top = p.pp > 1 ? 1 : 3;
      if (p.zero >= top) return;
      more["strategy"]["zero"] = d.pick({p.zero + 1, top});
      what = "zero " + std::to_string(p.zero) + " -> " + more["strategy"]["zero"].dump();
    }
    if (more["cluster"]["gpus"].get<int>() > 8 && !more["cluster"].contains("inter_node_gbps_per_gpu")) {
      more["cluster"]["inter_node_gbps_per_gpu"] = 200.0;
    }
    const auto r = run(more);
    if (!r) return;
    SCOPED_TRACE("base " + describe(*base));
    SCOPED_TRACE(what + " " + describe(*r));
    ++checked;
    EXPECT_LE(r->estimate.memory.total().base(), base->estimate.memory.total().base());
  });
  if (!only_case()) {
    EXPECT_GE(checked, case_count(150) / 3);
  }
}

// 11. CNY and USD fields agree through the exchange rate: every amount written in the scenario's
// currency is its *_usd twin divided by usd_per_unit. The local amount is written rounded to 12
// significant digits (data::from_usd), at most 5e-12 relative, plus a division and a multiplication
// of a few ulps: 1e-11 relative.
TEST(TrainingProperties, CurrencyAndUsdFieldsAgreeThroughTheRate) {
  int checked = 0;
  for_each_case("currency", 60, [&](Draw& d, int) {
    const auto base = draw_case(d, any_workload(d));
    if (!base) return;
    json doc = base->doc;
    const double rate = d.pick({0.14, 0.1389, 1.08, 0.0067});
    doc["pricing"]["currency"] = d.pick({"CNY", "EUR", "JPY"});
    doc["pricing"]["usd_per_unit"] = rate;
    doc["pricing"]["usd_per_unit_date"] = "2026-12-01";
    const auto r = run(doc);
    ASSERT_TRUE(r.has_value()) << doc.dump();
    SCOPED_TRACE(doc.dump());
    ++checked;
    const json out = data::estimate_to_json(r->estimate, r->parsed);
    EXPECT_EQ(out["usd_per_unit"].get<double>(), rate);
    auto agree = [&](const json& local, const json& usd, const std::string& key) {
      if (usd.is_null() || local.is_null()) {
        EXPECT_EQ(usd.is_null(), local.is_null()) << key;
        return;
      }
      const double l = local.get<double>() * rate, u = usd.get<double>();
      EXPECT_NEAR(l, u, 1e-11 * std::abs(u)) << key;
    };
    const std::pair<const char*, const char*> pairs[] = {
        {"cost", "cost_usd"},         {"total_cost", "total_cost_usd"},         {"cost_p10", "cost_usd_p10"},
        {"cost_p90", "cost_usd_p90"}, {"total_cost_p10", "total_cost_usd_p10"}, {"total_cost_p90", "total_cost_usd_p90"}};
    for (const auto& [local, usd] : pairs) agree(out.value(local, json()), out.value(usd, json()), local);
    agree(out["price_per_gpu_hour"], out["usd_per_gpu_hour"], "price_per_gpu_hour");
    if (out.contains("cost_breakdown") && out["cost_breakdown"].is_object()) {
      for (const auto& [k, v] : out["cost_breakdown"].items()) {
        if (!v.is_number() || !out["cost_breakdown_usd"].contains(k)) continue;
        if (k == "utilisation" || k == "term_hours" || k == "committed_gpus") continue;
        agree(v, out["cost_breakdown_usd"][k], "cost_breakdown/" + k);
      }
    }
    // And the sticker cost is the model's US dollars, priced once.
    ASSERT_TRUE(r->estimate.totals.cost.has_value());
    EXPECT_EQ(out["cost_usd"].get<double>(), r->estimate.totals.cost->base());
  });
  if (!only_case()) {
    EXPECT_GE(checked, case_count(60) / 2);
  }
}

}  // namespace
}  // namespace capplan::property
