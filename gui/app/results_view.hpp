// SPDX-License-Identifier: Apache-2.0
// The Estimate tab's right side: headline cards, step-time and memory charts, tables, warnings.
#pragma once
#include <QLabel>
#include <QListView>
#include <QTabWidget>
#include <QTableView>
#include <QWidget>
#include <QtCharts/QChartView>
#include <optional>

#include "capplan/gui/estimate_runner.hpp"
#include "capplan/gui/goodput_model.hpp"
#include "capplan/gui/result_models.hpp"

namespace capplan::gui {

class ResultsView final : public QWidget {
  Q_OBJECT
 public:
  explicit ResultsView(QWidget* parent = nullptr);

  void show_snapshot(const EstimateSnapshot& snapshot);
  // The input is invalid (or the estimate refused it): the messages, over the last good result.
  void show_problem(const QStringList& messages);
  void show_computing(bool busy);

  const std::optional<EstimateSnapshot>& snapshot() const { return snapshot_; }
  QChartView* breakdown_view() const { return breakdown_view_; }
  QChartView* memory_view() const { return memory_view_; }
  QTableView* goodput_table() const { return goodput_table_; }
  const GoodputModel& goodput_model() const { return goodput_model_; }
  QLabel* time_value() const { return time_.value; }
  QLabel* time_detail() const { return time_.detail; }
  QLabel* memory_value() const { return memory_.value; }
  QLabel* memory_detail() const { return memory_.detail; }
  QLabel* cost_value() const { return cost_.value; }
  QLabel* cost_detail() const { return cost_.detail; }
  QLabel* cost_model_source() const { return source_; }

 private:
  struct Card {
    QLabel* title = nullptr;
    QLabel* value = nullptr;
    QLabel* detail = nullptr;
  };
  Card make_card(const QString& title, const QString& tooltip);

  std::optional<EstimateSnapshot> snapshot_;
  BreakdownModel breakdown_model_;
  MemoryModel memory_model_;
  GoodputModel goodput_model_;
  WarningsModel warnings_model_;
  QLabel* banner_ = nullptr;
  QLabel* summary_ = nullptr;
  QLabel* source_ = nullptr;
  Card time_, cost_, per_token_, mfu_, memory_;
  QChartView* breakdown_view_ = nullptr;
  QChartView* memory_view_ = nullptr;
  QListView* warnings_ = nullptr;
  QTableView* breakdown_table_ = nullptr;
  QTableView* memory_table_ = nullptr;
  QTableView* goodput_table_ = nullptr;
  QTabWidget* tables_ = nullptr;
};

}  // namespace capplan::gui
