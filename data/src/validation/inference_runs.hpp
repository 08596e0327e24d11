// SPDX-License-Identifier: Apache-2.0
// Measured serving runs (data/benchmarks/inference_runs_dev.csv) as serving jobs for the serving accuracy harness
// (capplan/data/serving_validation.hpp). Private to capplan_data.
#pragma once
#include <string>
#include <vector>

#include "capplan/data/catalog.hpp"
#include "capplan/data/serving_validation.hpp"
#include "reading/csv.hpp"

namespace capplan::data::detail {

// Every record of the table (rows[0] is the header) as a serving run: names mapped to catalog ids
// (model preset, GPU, engine recipe, weight format, KV precision), the row's own engine settings
// applied to its copy of the recipe, its layout and traffic, and its measured figures. A record
// capplan cannot take is kept, unusable, with the reason. A missing column, a malformed record or
// a cell that should hold a positive number and does not is an error naming the line, the row
// and the column (all of them collected).
Result<std::vector<ServingRun>> inference_runs(const std::vector<CsvRow>& rows, const Catalogs& catalogs,
                                               const std::string& file);

// Requests simulated for an offline (all-at-once) row: the row's count, at most this many (the
// perf-overview rows ran 1,000-30,000). The simulation costs O(1) per engine step, and steps grow
// with the requests; past a few waves of the batch the throughput no longer depends on the count.
// Capped at 2,000 (measured on the shipped table, 2026-12-03, engines.json as of 70f0a2f): 54 of
// its 508 compared figures move by 1-4.1% against simulating every request (the rows of 3,000 and
// 30,000 requests, either way), the MAPE by 0.01 points, and the Debug build's run of the whole
// table takes 7.1 s instead of 9.5 s. Said in the row's assumptions when it binds.
inline constexpr std::int64_t kMaxOfflineRequests = 2000;
// The most requests a row's num_requests may give, as for serve's traffic.requests
// (serve_fields.cpp): every request is simulated and kept, so 1e8 asked for gigabytes.
inline constexpr std::int64_t kMaxServingRequests = 1'000'000;

}  // namespace capplan::data::detail
