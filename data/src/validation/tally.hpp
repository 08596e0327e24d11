// SPDX-License-Identifier: Apache-2.0
// What every validation report does first with its runs: count them, keep the unusable ones (with
// their reasons) as skipped, and score the rest.
#pragma once
#include <vector>

namespace capplan::data::validation_detail {

// Counts `runs` into `report` (its rows and usable runs; the unusable ones kept in
// report.skipped) and calls `score` on each usable run, in order.
template <class Report, class Run, class Score>
void tally_runs(Report& report, const std::vector<Run>& runs, Score&& score) {
  report.rows = static_cast<int>(runs.size());
  for (const auto& run : runs) {
    if (!run.usable) {
      report.skipped.push_back(&run);
      continue;
    }
    ++report.usable;
    score(run);
  }
}

}  // namespace capplan::data::validation_detail
