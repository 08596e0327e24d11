// SPDX-License-Identifier: Apache-2.0
#include "price_sheet_option.hpp"

#include "io.hpp"

namespace capplan::cli {

bool merge_price_sheet_or_report(const std::string& flag_file, const nlohmann::json& scenario,
                                 std::string_view scenario_file, data::Catalogs& catalogs,
                                 std::optional<data::PriceSheet>& sheet) {
  std::optional<std::filesystem::path> file;
  if (!flag_file.empty()) {
    file = flag_file;
  } else {
    file = data::scenario_price_sheet(scenario, scenario_file);
  }
  if (!file) return true;
  auto loaded = data::load_price_sheet(*file, catalogs);
  if (!loaded) {
    print_diagnostics(loaded.error());
    return false;
  }
  data::merge_price_sheet(catalogs, *loaded);
  sheet = std::move(*loaded);
  return true;
}

}  // namespace capplan::cli
