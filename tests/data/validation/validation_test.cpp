// SPDX-License-Identifier: Apache-2.0
// The accuracy harness (capplan/data/validation.hpp) as a library: the summary figures follow
// from the rows it returns, and a row's leave-one-out interval never uses the row itself.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "capplan/data/published_runs.hpp"
#include "capplan/data/validation.hpp"
#include "test_support.hpp"

namespace capplan::data {
namespace {

std::filesystem::path dev_csv() { return test::source_data_dir() / "benchmarks" / "published_runs_dev.csv"; }

TEST(Validation, SummaryFollowsFromTheRows) {
  auto runs = load_published_runs(dev_csv(), test::real_catalogs());
  ASSERT_TRUE(runs.has_value());
  const ValidationReport rep = validate_published(*runs, test::real_catalogs());
  EXPECT_EQ(rep.rows, static_cast<int>(runs->size()));
  EXPECT_EQ(rep.usable + static_cast<int>(rep.skipped.size()), rep.rows);
  // MAPE recomputed from the rows by hand: the mean of |estimate - measured| / measured.
  double sum = 0;
  int n = 0;
  for (const ValidationRow& r : rep.results) {
    if (!r.predicted) continue;
    EXPECT_NEAR(r.error_frac, (r.estimate - r.measured) / r.measured, 1e-12);
    sum += std::fabs(r.error_frac);
    ++n;
  }
  ASSERT_GT(n, 0);
  EXPECT_EQ(rep.overall.predicted, n);
  EXPECT_NEAR(rep.overall.mape, 100.0 * sum / n, 1e-9);
  EXPECT_NEAR(coverage(rep), static_cast<double>(n) / rep.usable, 1e-12);
  // The groups partition the predicted rows.
  int by_arch = 0;
  for (const auto& [arch, a] : rep.by_arch) by_arch += a.predicted;
  EXPECT_EQ(by_arch, n);
}

TEST(Validation, AccuracyOfHandMadeRows) {
  // Errors +10%, -20%, +30%: MAPE 20%, median 20%, one of three within 10%.
  std::vector<ValidationRow> rows(3);
  rows[0].error_frac = 0.10;
  rows[1].error_frac = -0.20;
  rows[2].error_frac = 0.30;
  const std::vector<const ValidationRow*> ptrs{&rows[0], &rows[1], &rows[2]};
  const Accuracy a = accuracy(ptrs);
  EXPECT_EQ(a.predicted, 3);
  EXPECT_NEAR(a.mape, 20.0, 1e-12);
  EXPECT_NEAR(a.median_ape, 20.0, 1e-12);
  EXPECT_NEAR(a.within_10pct, 1.0 / 3.0, 1e-12);
}

// ---------------------------------------------------------------------------------------------
// Per-regime figures on a hand-made set
// ---------------------------------------------------------------------------------------------

// One GPT-style run on `gpus` H100 with a fixed layout (tp 1, dp = gpus) and a given host time per
// op (0: the launch floor; no band widening for an unknown one); measured is set later.
PublishedRun hand_run(const std::string& id, int gpus, const std::string& framework) {
  PublishedRun run;
  run.row_id = id;
  run.model_name = "GPT h1024 L12";
  run.arch_type = "dense";
  run.gpu_model = "H100";
  run.num_gpus = gpus;
  run.usable = true;
  run.measured_tokens_per_s_per_gpu = 1;
  run.scenario = nlohmann::json::parse(R"({"cluster": {"gpu": "h100-sxm-80gb", "gpus": )" + std::to_string(gpus) +
                                       R"(, "gpus_per_node": 8},
      "model": {"ffn_hidden": 4096, "heads": 16, "hidden": 1024, "kv_heads": 16, "layers": 12, "seq_len": 1024,
                "vocab": 50257},
      "strategy": {"tp": 1, "pp": 1, "dp": )" + std::to_string(gpus) +
                                       R"(, "micro_batch": 1},
      "training": {"framework": ")" + framework + R"(", "host_us_per_op": 0, "global_batch": )" + std::to_string(gpus) +
                                       R"(, "tokens": 1e9}})");
  return run;
}

// Three cells of runs, each with measured = predicted x exp(r) for residuals r chosen by hand:
//   A  10 x megatron on 64 GPUs (dense/megatron/9-512), r = -0.05, -0.04, ..., 0.04;
//   B  10 x pytorch on 8 GPUs   (dense/pytorch/<=8),    r = -0.30, -0.29, ..., -0.21 (all slower);
//   C   4 x megatron on 8 GPUs  (dense/megatron/<=8),   r = -0.02, -0.01, 0.00, 0.01.
// Leave-one-out (kMinResidualSamples = 9):
//   A: 9 other rows of its cell; definition 6 at n = 9 puts p10 at h = 1 and p90 at h = 9, the
//      others' minimum and maximum, so the lowest (-0.05) and highest (0.04) rows fall outside:
//      8 of 10 inside.
//   B: every residual is below 0, so the band is the 80% of the other 9 nearest the estimate
//      (sim::band_quantiles): the slide stops at quantiles (0.2, 1.0), h = 2 and 9, the others'
//      second lowest and maximum, and the maximum is extended up to 0 (the point estimate). The
//      two lowest rows (-0.30, -0.29) fall below their others' second lowest: 8 of 10. (p10-p90
//      stretched to 0 would have held 9 of 10: the 90% it gives where it says 80%.)
//   C: 3 others in its cell, below the minimum; next in the chain is dense/megatron (before
//      dense/<=8): 10 A + 3 C = 13 rows, p10 at h = 1.4: -0.05 + 0.4 x 0.01 = -0.046; p90 at
//      h = 12.6: 0.03 + 0.6 x 0.01 = 0.036. Every C residual lies inside: 4 of 4.
// By framework: megatron 12/14, pytorch 8/10; by scale: <=8 12/14, 9-512 8/10; all 20/24.
TEST(Validation, PerRegimeCoverageOfAHandMadeSet) {
  struct Cell {
    const char* prefix;
    int gpus;
    const char* framework;
    std::vector<double> r;
  };
  const std::vector<Cell> cells = {
      {"A", 64, "megatron", {-0.05, -0.04, -0.03, -0.02, -0.01, 0.00, 0.01, 0.02, 0.03, 0.04}},
      {"B", 8, "pytorch", {-0.30, -0.29, -0.28, -0.27, -0.26, -0.25, -0.24, -0.23, -0.22, -0.21}},
      {"C", 8, "megatron", {-0.02, -0.01, 0.00, 0.01}}};
  std::vector<PublishedRun> runs;
  std::vector<double> residuals;
  for (const Cell& c : cells) {
    for (std::size_t i = 0; i < c.r.size(); ++i) {
      runs.push_back(hand_run(std::string(c.prefix) + std::to_string(i), c.gpus, c.framework));
      residuals.push_back(c.r[i]);
    }
  }
  // The prediction does not depend on the measured value: estimate once, then set measured.
  const ValidationReport first = validate_published(runs, test::real_catalogs());
  ASSERT_EQ(first.results.size(), runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    ASSERT_TRUE(first.results[i].predicted) << runs[i].row_id << ": " << first.results[i].error;
    runs[i].measured_tokens_per_s_per_gpu = first.results[i].estimate * std::exp(residuals[i]);
  }
  const ValidationReport rep = validate_published(runs, test::real_catalogs());
  ASSERT_EQ(rep.overall.predicted, 24);

  // Row by row: the band each row was judged with and whether it was inside.
  auto row = [&](const std::string& id) -> const ValidationRow& {
    for (const auto& r : rep.results) {
      if (r.run->row_id == id) return r;
    }
    ADD_FAILURE() << id;
    return rep.results.front();
  };
  EXPECT_EQ(row("A3").category, "dense/megatron/9-512");
  EXPECT_EQ(row("A3").band_category, "dense/megatron/9-512");
  EXPECT_EQ(row("B3").band_category, "dense/pytorch/<=8");
  EXPECT_EQ(row("C1").band_category, "dense/megatron");
  EXPECT_FALSE(row("A0").inside);
  EXPECT_FALSE(row("A9").inside);
  EXPECT_FALSE(row("B0").inside);
  EXPECT_FALSE(row("B1").inside);  // below the slid band's low end, inside p10-p90
  EXPECT_TRUE(row("B2").inside);
  EXPECT_TRUE(row("B9").inside);  // inside only because the band was extended to the estimate
  // B9's p90 is the estimate itself (extension to ratio 1); 1e-12 relative: one multiplication.
  EXPECT_NEAR(row("B9").p90, row("B9").estimate, 1e-12 * row("B9").estimate);
  // C: p10-p90 = estimate x exp(-0.046 .. 0.036) (the 13-row dense/megatron band); 1e-9 relative
  // covers the exp/log round trip of measured.
  const ValidationRow& c0 = row("C0");
  EXPECT_NEAR(c0.p10, c0.estimate * std::exp(-0.046), 1e-9 * c0.estimate);
  EXPECT_NEAR(c0.p90, c0.estimate * std::exp(0.036), 1e-9 * c0.estimate);

  // The regimes (counts are exact fractions; 1e-12 is rounding only).
  EXPECT_NEAR(rep.overall.interval_coverage, 20.0 / 24.0, 1e-12);
  ASSERT_EQ(rep.by_framework.size(), 2u);
  EXPECT_EQ(rep.by_framework.at("megatron").predicted, 14);
  EXPECT_NEAR(rep.by_framework.at("megatron").interval_coverage, 12.0 / 14.0, 1e-12);
  EXPECT_NEAR(rep.by_framework.at("pytorch").interval_coverage, 8.0 / 10.0, 1e-12);
  ASSERT_EQ(rep.by_scale.size(), 2u);
  EXPECT_NEAR(rep.by_scale.at("<=8").interval_coverage, 12.0 / 14.0, 1e-12);
  EXPECT_NEAR(rep.by_scale.at("9-512").interval_coverage, 8.0 / 10.0, 1e-12);
  EXPECT_NEAR(rep.by_gpu.at("h100-sxm-80gb").interval_coverage, 20.0 / 24.0, 1e-12);
  EXPECT_NEAR(rep.by_arch.at("dense").interval_coverage, 20.0 / 24.0, 1e-12);
  // MAPE, median and within 10% of a regime: error = predicted / measured - 1 = exp(-r) - 1.
  // pytorch: exp(0.21..0.30) - 1 = 23.4%..35.0%, none within 10%; megatron: |exp(-r) - 1| <= 5.1%.
  double sum = 0;
  for (double r : cells[1].r) sum += std::exp(-r) - 1;
  const Accuracy& pt = rep.by_framework.at("pytorch");
  EXPECT_NEAR(pt.mape, 100.0 * sum / 10, 1e-9);
  EXPECT_NEAR(pt.median_ape, 100.0 * 0.5 * ((std::exp(0.25) - 1) + (std::exp(0.26) - 1)), 1e-9);
  EXPECT_EQ(pt.within_10pct, 0.0);
  EXPECT_EQ(rep.by_framework.at("megatron").within_10pct, 1.0);
  EXPECT_EQ(rep.by_scale.at("<=8").predicted, 14);
}

// Two sources of the same category, one measured 25-34% faster than predicted (r = 0.25 ..
// 0.34), the other 21-30% slower (r = -0.30 .. -0.21). Leave-one-out, each row's band is fitted
// on 19 rows of both sources: p10-p90 spans about -0.29 .. 0.33 and holds most rows. Left out
// with its whole source, a row is judged by the other source's band alone, which lies on that
// source's side of 0 (extended at most to the estimate itself, r = 0): no row is inside it. A row
// that names no source group leaves out only itself, so its interval is the leave-one-out one.
TEST(Validation, LeavingOutTheSourceGroupJudgesARowByTheOtherSources) {
  std::vector<PublishedRun> runs;
  std::vector<double> residuals;
  for (int g = 0; g < 2; ++g) {
    for (int i = 0; i < 10; ++i) {
      runs.push_back(hand_run(std::string(g == 0 ? "F" : "S") + std::to_string(i), 64, "megatron"));
      runs.back().source_group = g == 0 ? "fast-source" : "slow-source";
      residuals.push_back(g == 0 ? 0.25 + 0.01 * i : -0.30 + 0.01 * i);
    }
  }
  const ValidationReport first = validate_published(runs, test::real_catalogs());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    ASSERT_TRUE(first.results[i].predicted) << runs[i].row_id << ": " << first.results[i].error;
    runs[i].measured_tokens_per_s_per_gpu = first.results[i].estimate * std::exp(residuals[i]);
  }
  const ValidationReport rep = validate_published(runs, test::real_catalogs());
  ASSERT_EQ(rep.overall.with_group_interval, 20);
  EXPECT_EQ(rep.overall.group_interval_coverage, 0.0);
  EXPECT_GE(rep.overall.interval_coverage, 0.5);
  for (const auto& r : rep.results) EXPECT_FALSE(r.inside_group) << r.run->row_id;

  for (auto& run : runs) run.source_group.clear();
  const ValidationReport own = validate_published(runs, test::real_catalogs());
  ASSERT_EQ(own.overall.with_group_interval, own.overall.with_interval);
  for (const auto& r : own.results) EXPECT_EQ(r.inside_group, r.inside) << r.run->row_id;
  EXPECT_EQ(own.overall.group_interval_coverage, own.overall.interval_coverage);
}

// Pooled residuals (validate-published --pool): the hybrid MoE pre-training rows join the MoE
// category, which then has enough rows (9) for a band of its own instead of the all-rows fallback.
// The pool changes only the intervals, never a row's own estimate or error, and no pooled row is
// reported.
TEST(Validation, PooledRowsJoinTheLeaveOneOutBandsOnly) {
  const auto& cats = test::real_catalogs();
  auto runs = load_published_runs(dev_csv(), cats);
  auto hybrid = load_published_runs(test::source_data_dir() / "benchmarks" / "hybrid_runs_dev.csv", cats);
  ASSERT_TRUE(runs.has_value());
  ASSERT_TRUE(hybrid.has_value());
  const ValidationReport alone = validate_published(*runs, cats);
  const ValidationReport pool_rep = validate_published(*hybrid, cats);
  std::vector<ValidationRow> pool;
  for (const ValidationRow& r : pool_rep.results) {
    if (r.predicted) pool.push_back(r);
  }
  ASSERT_GE(pool.size(), 8u);
  const ValidationReport pooled = validate_published(*runs, cats, nullptr, &pool);
  ASSERT_EQ(pooled.results.size(), alone.results.size());
  int moe_bands_own = 0;
  for (std::size_t i = 0; i < alone.results.size(); ++i) {
    const ValidationRow& a = alone.results[i];
    const ValidationRow& b = pooled.results[i];
    EXPECT_EQ(a.run->row_id, b.run->row_id);
    EXPECT_EQ(a.estimate, b.estimate);
    if (b.predicted && b.category.starts_with("moe")) {
      EXPECT_NE(a.band_category.rfind("moe", 0), 0u) << a.run->row_id << " had an MoE band alone: " << a.band_category;
      moe_bands_own += b.band_category.starts_with("moe") ? 1 : 0;
    }
  }
  EXPECT_EQ(moe_bands_own, pooled.by_arch.at("moe").predicted);
  // The pooled table counts every pooled row in "all".
  const auto* all_alone = alone.table.lookup("all");
  const auto* all_pooled = pooled.table.lookup("all");
  ASSERT_NE(all_alone, nullptr);
  ASSERT_NE(all_pooled, nullptr);
  EXPECT_EQ(all_pooled->n, all_alone->n + static_cast<int>(pool.size()));
}

}  // namespace
}  // namespace capplan::data
