// SPDX-License-Identifier: Apache-2.0
// Two to four estimates side by side: one column per scenario, one row per figure, each cell with
// its delta against the first column.
#pragma once
#include <QAbstractTableModel>
#include <optional>
#include <vector>

#include "capplan/gui/estimate_runner.hpp"

namespace capplan::gui {

class CompareModel final : public QAbstractTableModel {
  Q_OBJECT
 public:
  static constexpr int kMaxScenarios = 4;
  struct Column {
    QString label;
    std::optional<EstimateSnapshot> snapshot;  // empty: not computed (yet), or invalid
    QString problem;                           // why there is no snapshot
  };
  enum Metric {
    kTimeToTrain, kCost, kCostPerBillionTokens, kPricePerGpuHour, kGpus, kStepTime, kTokensPerS, kMfu, kMemory,
    kFits, kStrategy, kMetricCount
  };
  using QAbstractTableModel::QAbstractTableModel;

  void set_columns(std::vector<Column> columns);
  const std::vector<Column>& columns() const { return columns_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

  // The raw value of a metric for a snapshot (SI units: days, USD, s, tokens/s, fraction, bytes).
  static std::optional<double> value(const EstimateSnapshot& s, Metric m);
  static QString metric_label(Metric m);

 private:
  std::vector<Column> columns_;
};

}  // namespace capplan::gui
