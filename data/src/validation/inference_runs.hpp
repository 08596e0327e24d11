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

// The most requests a row's num_requests may give, as for serve's traffic.requests
// (serve_fields.cpp): every request is simulated and kept, so 1e8 asked for gigabytes.
inline constexpr std::int64_t kMaxServingRequests = 1'000'000;

}  // namespace capplan::data::detail
