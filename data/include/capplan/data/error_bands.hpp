// SPDX-License-Identifier: Apache-2.0
// data/error_bands.json: the residual table of the model on the published-runs development set
// (sim/uncertainty.hpp), written by `capplan validate-published --write-error-bands` and read by
// `capplan estimate` to put a p10-p90 interval on every estimate.
//
// Format (schema 3; unknown keys are errors; schema-1 files, without the scale cut, and schema-2
// files, without the band, read too):
//   {"schema": 3, "generated": "YYYY-MM-DD", "source": "<command and data set>", "method": "<text>",
//    "leave_one_out_coverage": 0.8 | null,
//    "categories": [{"category": "dense/megatron/9-512", "n": 30, "log_ratio_p10": -0.2, "log_ratio_p90": 0.05,
//                    "log_ratio_low": -0.2, "log_ratio_high": 0.05}, ...]}
// log_ratio_low/high is the category's band (sim::band_quantiles): p10-p90, or the 80% of runs
// nearest the model where p10-p90 lies on one side of it; absent, it is p10-p90.
// category is "all", "<arch>", "<arch>/<scale>", "<arch>/<framework>" or "<arch>/<framework>/<scale>"
// (arch: dense | moe; framework: megatron | pytorch; scale: <=8 | 9-512 | >512 GPUs, sim::kScaleBuckets);
// the lookup order is sim::category_fallbacks. Log ratios are ln(measured / predicted) of
// throughput, p10 <= p90.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "capplan/sim/workload/result.hpp"
#include "capplan/sim/estimate/uncertainty.hpp"

namespace capplan::data {

struct ErrorBands {
  sim::ResidualTable table;
  std::string generated;  // YYYY-MM-DD
  std::string source;     // how it was produced (command, data set)
  std::string method;     // how the quantiles were computed
  std::optional<double> leave_one_out_coverage;  // share of rows inside their leave-one-out p10-p90
};

inline constexpr const char* kErrorBandsFile = "error_bands.json";

// <data dir>/error_bands.json
std::filesystem::path error_bands_path(const std::filesystem::path& data_dir);

// Reads and validates a file. A missing file is not an error: the result is then empty (no band).
// Every problem is reported with its JSON pointer ("error_bands.json#/categories/2/n: ...").
Result<std::optional<ErrorBands>> load_error_bands(const std::filesystem::path& file);

// Validates a parsed document / JSON text; `where` prefixes the diagnostics.
Result<ErrorBands> error_bands_from_json(const nlohmann::json& doc, const std::string& where);
Result<ErrorBands> parse_error_bands_text(std::string_view text, const std::string& where);

// The document load_error_bands reads back to the same values (dump(2) + "\n" for the file),
// keys in the order of the format above.
nlohmann::ordered_json error_bands_to_json(const ErrorBands& bands);

}  // namespace capplan::data
