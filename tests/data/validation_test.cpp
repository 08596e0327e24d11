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
  EXPECT_EQ(scale_bucket(8), "<=8");
  EXPECT_EQ(scale_bucket(512), "9-512");
  EXPECT_EQ(scale_bucket(513), ">512");
}

}  // namespace
}  // namespace capplan::data
