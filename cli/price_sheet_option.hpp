// SPDX-License-Identifier: Apache-2.0
// `--prices FILE` (estimate and search) and the scenario's `pricing.sheet`: the price sheet merged
// over the catalog before the scenario is read (data/price_sheet.hpp).
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "capplan/data/price_sheet.hpp"

namespace capplan::cli {

// The sheet of --prices (`flag_file`), else the one `scenario` names in pricing.sheet (relative to
// `scenario_file`'s folder; stdin or the example: the working directory), loaded and merged into
// `catalogs`. Empty when neither names one; false (reported) for a sheet that does not load.
bool merge_price_sheet_or_report(const std::string& flag_file, const nlohmann::json& scenario,
                                 std::string_view scenario_file, data::Catalogs& catalogs,
                                 std::optional<data::PriceSheet>& sheet);

}  // namespace capplan::cli
