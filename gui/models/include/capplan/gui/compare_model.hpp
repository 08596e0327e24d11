// SPDX-License-Identifier: Apache-2.0
// Two to four estimates side by side: one column per scenario, one row per figure, each cell with
// its delta against the first column (a transposed TableModel: the scenarios are its records).
#pragma once
#include <optional>
#include <vector>

#include "capplan/gui/estimate_runner.hpp"
#include "capplan/gui/table_model.hpp"

namespace capplan::gui {

// One scenario of the comparison.
struct CompareColumn {
  QString label;
  std::optional<EstimateSnapshot> snapshot;  // empty: not computed (yet), or invalid
  QString problem;                           // why there is no snapshot
};

class CompareModel final : public TableModel<CompareColumn> {
  Q_OBJECT
 public:
  static constexpr int kMaxScenarios = 4;
  using Column = CompareColumn;
  enum Metric {
    kTimeToTrain, kSteadyTime, kGoodput, kCost, kPurchase, kCostPerBillionTokens, kPricePerGpuHour, kGpus, kStepTime,
    kTokensPerS, kMfu, kMemory, kFits, kStrategy, kMetricCount
  };
  explicit CompareModel(QObject* parent = nullptr);

  void set_columns(std::vector<Column> columns);
  const std::vector<Column>& columns() const { return columns_; }

  // The raw value of a metric for a snapshot (SI units: days, USD, s, tokens/s, fraction, bytes).
  static std::optional<double> value(const EstimateSnapshot& s, Metric m);
  static QString metric_label(Metric m);

 private:
  std::vector<Column> columns_;
};

}  // namespace capplan::gui
