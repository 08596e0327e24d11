// SPDX-License-Identifier: Apache-2.0
// The goodput panel of the Estimate tab (issue 7): interruptions, checkpoints, restarts, lost work,
// the data-loading check and the goodput fraction of one estimate (sim::Goodput), read-only.
//
// Contract: resets on a new snapshot; empty when the estimate has no goodput model. DisplayRole
// gives text with units; kSortRole the raw number (count, seconds, bytes, fraction or slowdown);
// kKeyRole a stable row id ("mtbi"). No number is computed here beyond unit conversion.
#pragma once
#include <QAbstractTableModel>
#include <string>
#include <vector>

#include "capplan/gui/estimate_runner.hpp"

namespace capplan::gui {

class GoodputModel final : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kItem, kValue, kNote, kColumnCount };
  using QAbstractTableModel::QAbstractTableModel;

  void set_snapshot(const EstimateSnapshot& snapshot);
  void clear();

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

  // Row of `key`, or -1.
  int row_of(const std::string& key) const;

 private:
  struct Row {
    std::string key;
    QString item;
    QString value;
    double raw = 0;
    QString note;
  };
  std::vector<Row> rows_;
};

}  // namespace capplan::gui
