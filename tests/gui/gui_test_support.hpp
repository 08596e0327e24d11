// SPDX-License-Identifier: Apache-2.0
// What the GUI test suites share: the shipped catalogs and error bands, loaded once per process
// from the source tree, as the application loads them.
#pragma once
#include <QtGlobal>
#include <filesystem>
#include <memory>

#include "capplan/data/catalog.hpp"
#include "capplan/data/error_bands.hpp"
#include "capplan/sim/estimate/uncertainty.hpp"

namespace capplan::gui::test {

inline std::shared_ptr<const data::Catalogs> catalogs() {
  static auto c = [] {
    auto loaded = data::load_catalogs(std::filesystem::path(CAPPLAN_SOURCE_DIR) / "data");
    if (!loaded) qFatal("catalogs did not load");
    return std::make_shared<const data::Catalogs>(std::move(*loaded));
  }();
  return c;
}

// data/error_bands.json.
inline std::shared_ptr<const sim::ResidualTable> bands() {
  static auto b = [] {
    auto loaded = data::load_error_bands(data::error_bands_path(std::filesystem::path(CAPPLAN_SOURCE_DIR) / "data"));
    if (!loaded || !*loaded) qFatal("error bands did not load");
    return std::make_shared<const sim::ResidualTable>((*loaded)->table);
  }();
  return b;
}

}  // namespace capplan::gui::test
