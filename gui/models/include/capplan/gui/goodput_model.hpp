// SPDX-License-Identifier: Apache-2.0
// The goodput panel of the Estimate tab: interruptions, checkpoints, restarts, lost work,
// the data-loading check and the goodput fraction of one estimate (sim::Goodput), read-only.
//
// Contract: resets on a new snapshot; empty when the estimate has no goodput model. DisplayRole
// gives text with units; kSortRole the raw number (count, seconds, bytes, fraction or slowdown);
// kKeyRole a stable row id ("mtbi"). No number is computed here beyond unit conversion.
#pragma once
#include <string>
#include <vector>

#include "capplan/gui/estimate_runner.hpp"
#include "capplan/gui/table_model.hpp"

namespace capplan::gui {

// One row of the panel: a stable id, the item, its value as text and as a raw number, a note.
struct GoodputRow {
  std::string key;
  QString item;
  QString value;
  double raw = 0;
  QString note;
};

class GoodputModel final : public TableModel<GoodputRow> {
  Q_OBJECT
 public:
  enum Column { kItem, kValue, kNote, kColumnCount };
  explicit GoodputModel(QObject* parent = nullptr);

  void set_snapshot(const EstimateSnapshot& snapshot);
  void clear();

  // Row of `key`, or -1.
  int row_of(const std::string& key) const;
};

}  // namespace capplan::gui
