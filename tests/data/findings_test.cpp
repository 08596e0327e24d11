// SPDX-License-Identifier: Apache-2.0
// The words of the model's findings: every code has a template whose placeholders all name a
// value the model gives, and the sentences are the ones `capplan estimate` has always printed.
#include "capplan/data/findings.hpp"

#include "capplan/data/format.hpp"
#include "capplan/sim/uncertainty.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace capplan::data {
namespace {

using sim::Finding;
using sim::FindingCode;
using sim::finding;

TEST(Findings, NumbersAreWholeOrOneDecimalByDefaultAndRoundedToTheDecimalsAsked) {
  EXPECT_EQ(format::in_sentence(16, -1), "16");
  EXPECT_EQ(format::in_sentence(194.37, -1), "194.4");
  EXPECT_EQ(format::in_sentence(0.05, -1), "0.1");  // llround(0.5) rounds half away from zero
  EXPECT_EQ(format::in_sentence(2.3456, 2), "2.35");
  EXPECT_EQ(format::in_sentence(2.5, 2), "2.5");   // trailing zeros dropped
  EXPECT_EQ(format::in_sentence(600, 0), "600");
  EXPECT_EQ(format::in_sentence(std::numeric_limits<double>::infinity(), 1), "inf");
  EXPECT_EQ(format::in_sentence(std::numeric_limits<double>::quiet_NaN(), -1), "inf");
}

TEST(Findings, LayoutSentencesNameTheirValues) {
  EXPECT_EQ(render(finding(FindingCode::tp_wider_than_node, "strategy.tp", {{"tp", 16}, {"gpus_per_node", 8}})),
            "tp (16) is wider than a node (8 GPUs): tensor-parallel traffic crosses the network");
  EXPECT_EQ(render(finding(FindingCode::does_not_fit, "", {{"need_gib", 194.37}, {"have_gib", 141}})),
            "does not fit in memory: needs 194.4 GiB per GPU, the GPU has 141 GiB");
  EXPECT_EQ(render(finding(FindingCode::no_layout_fits, "", {{"evaluated", 1234}})),
            "no layout fits in memory: showing the one that needs the least (1234 layouts evaluated)");
}

TEST(Findings, CostSentencesNameTheInputByItsField) {
  EXPECT_EQ(render(finding(FindingCode::cost_input_unknown, "pricing.spot.usd_per_gpu_hour")),
            "total cost: the spot price is unknown; give pricing.spot.usd_per_gpu_hour");
  EXPECT_EQ(render(finding(FindingCode::cost_part_unknown, "storage.usd_per_gb_month")),
            "total cost: the storage price for checkpoints and data is unknown, so it is left out of the total; "
            "give storage.usd_per_gb_month");
  EXPECT_EQ(render(finding(FindingCode::checkpoint_interval_below_step, "reliability.checkpoint_interval_s",
                           {{"given_s", 0.5}, {"floor_s", 2.25}})),
            "reliability.checkpoint_interval_s (0.5 s) is shorter than one step (2.3 s): using 2.3 s");
}

TEST(Findings, TextValuesAreInsertedAsTheyAreEvenWhenEmpty) {
  Finding f = sim::text_finding(FindingCode::local_tier_without_upload, "tier", "");
  f.field = "storage.upload_tier";
  EXPECT_EQ(render(f).rfind("storage tier '' is node-local", 0), 0u) << render(f);
  EXPECT_EQ(render(sim::note("profile: gemm fp8 not measured; datasheet used")),
            "profile: gemm fp8 not measured; datasheet used");
}

TEST(Findings, FillKeepsUnknownPlaceholdersAndUsesTheSurfacesNumbers) {
  const Finding f = finding(FindingCode::pipeline_never_fills, "strategy.pp", {{"micro_batches", 4}, {"pp", 8}});
  const auto stars = [](double v, int) {
    std::string s(1, '*');  // built piecewise: g++ 12 warns (-Wrestrict) falsely on "*" + string
    s += std::to_string(static_cast<int>(v));
    s += '*';
    return s;
  };
  EXPECT_EQ(fill("{micro_batches} < {pp} in {field}; {other}", f, stars), "*4* < *8* in strategy.pp; {other}");
  EXPECT_EQ(fill("unclosed {pp", f, stars), "unclosed {pp");
}

// Every code has a template, and each placeholder in it is a value the finding carries (so a
// sentence never shows a raw "{name}"): checked with the values each code's producer gives.
TEST(Findings, EveryTemplatesPlaceholdersAreFilled) {
  const auto n = [](FindingCode c, std::initializer_list<std::pair<std::string_view, double>> v) {
    return finding(c, "some.field", v);
  };
  std::vector<Finding> all = {
      n(FindingCode::no_layout_fits, {{"evaluated", 1}}),
      n(FindingCode::uneven_stages, {{"layers", 30}, {"stages", 4}}),
      n(FindingCode::tp_wider_than_node, {{"tp", 16}, {"gpus_per_node", 8}}),
      n(FindingCode::sequence_parallel_without_tp, {}),
      n(FindingCode::interleave_micro_batches, {{"micro_batches", 6}, {"pp", 4}}),
      n(FindingCode::zero_with_pipeline, {{"zero", 2}, {"pp", 2}}),
      n(FindingCode::pipeline_never_fills, {{"micro_batches", 2}, {"pp", 4}}),
      n(FindingCode::does_not_fit, {{"need_gib", 90}, {"have_gib", 80}}),
      n(FindingCode::no_storage_tier, {{"node_gb_per_s", 400}}),
      n(FindingCode::spot_preemptions_unknown, {}),
      n(FindingCode::checkpoint_interval_below_step, {{"given_s", 1}, {"floor_s", 2}}),
      n(FindingCode::checkpoint_interval_below_persist, {{"given_s", 1}, {"floor_s", 2}}),
      n(FindingCode::checkpoint_every_few_steps, {{"interval_s", 11}, {"steps", 1.8}, {"min_steps", 10}}),
      n(FindingCode::checkpoint_stalls_dominate, {{"stall_pct", 12}, {"max_pct", 10}}),
      n(FindingCode::restart_overhead_assumed, {{"restart_s", 600}}),
      n(FindingCode::interruptions_unbounded, {{"mtbi_h", 0.5}}),
      n(FindingCode::recovery_dominates, {{"mtbi_h", 2}}),
      n(FindingCode::cost_input_unknown, {}),
      n(FindingCode::cost_part_unknown, {}),
      n(FindingCode::reserved_commitment_short, {{"committed", 8}, {"used", 16}}),
      n(FindingCode::reserved_term_short, {{"run_months", 14}, {"term_months", 12}}),
      n(FindingCode::no_price, {}),
  };
  Finding bound = n(FindingCode::data_loading_bound, {{"gb_per_s", 3}, {"bytes_per_token", 4}, {"slowdown", 1.5}});
  bound.values.push_back({"bound", 0, "storage", true});
  all.push_back(bound);
  Finding assumed = n(FindingCode::storage_tier_assumed, {{"write_gb_per_s", 57.5}, {"read_gb_per_s", 57.5}});
  assumed.values.push_back({"tier", 0, "idris-jean-zay-gpfs", true});
  all.push_back(assumed);
  Finding tier = sim::text_finding(FindingCode::local_tier_without_upload, "tier", "nvme");
  all.push_back(tier);
  all.push_back(sim::text_finding(FindingCode::offering_network_unknown, "offering", "a"));
  all.push_back(sim::text_finding(FindingCode::offering_price_unknown, "offering", "a"));
  all.push_back(sim::finding(FindingCode::pareto_without_prices));
  all.push_back(sim::note("words"));
  for (const Finding& f : all) {
    const std::string s = render(f);
    EXPECT_EQ(s.find('{'), std::string::npos) << s;
    EXPECT_FALSE(s.empty());
  }
  EXPECT_EQ(all.size(), static_cast<std::size_t>(FindingCode::note) + 1) << "a code without a case here";
}

// The error band's basis, worded from its structure (the words estimate's JSON and table print).
TEST(Findings, AnErrorBandsBasisNamesItsRunsItsFallbackAndItsWidening) {
  sim::ErrorBand b;
  b.category = "dense";
  b.asked = "dense/pytorch";
  b.runs = 12;
  EXPECT_EQ(error_band_basis(b),
            "p10-p90 of measured/predicted tokens/s over 12 validated dense runs (too few validated dense/pytorch "
            "runs for their own band)");
  b.asked = "dense";
  b.widened = sim::BandWidening{0.8123, 1.2, true, true, 0.6, 0.87, 0.3, 0.5};
  EXPECT_EQ(error_band_basis(b),
            "p10-p90 of measured/predicted tokens/s over 12 validated dense runs; widened x0.81 / x1.20: no "
            "published GEMM or attention efficiency for this GPU (other GPUs' published range: GEMM 0.60-0.87, "
            "attention 0.30-0.50 of peak)");
  b.category = sim::kAllCategory;
  b.widened->gemm = false;
  EXPECT_EQ(error_band_basis(b),
            "p10-p90 of measured/predicted tokens/s over 12 validated runs (too few validated dense runs for their "
            "own band); widened x0.81 / x1.20: no published attention efficiency for this GPU (other GPUs' "
            "published range: attention 0.30-0.50 of peak)");
}

}  // namespace
}  // namespace capplan::data
