// SPDX-License-Identifier: Apache-2.0
// The Compare tab: two to four scenarios side by side (e.g. one job on three clouds), with deltas
// against the first, and the time and cost as bar charts.
#pragma once
#include <QFutureWatcher>
#include <QTableView>
#include <QWidget>
#include <QtCharts/QChartView>
#include <vector>

#include "capplan/gui/compare_model.hpp"
#include "capplan/gui/scenario_document.hpp"

namespace capplan::gui {

class CompareView final : public QWidget {
  Q_OBJECT
 public:
  CompareView(ScenarioDocument* doc, std::shared_ptr<const sim::ResidualTable> bands, QWidget* parent = nullptr);

  // Adds a scenario document (the editor's current one, a file, or a variant); false when full.
  // `file` is where the document was read from: its pricing.sheet is relative to it, as in the
  // Estimate tab (empty: the working directory).
  bool add(const QString& label, const nlohmann::json& document, const QString& file = {});
  void add_current();
  void add_file();
  void remove_selected();
  void clear();
  // The calibration profile the Estimate tab prices with (null: the datasheet model).
  void set_profile(std::shared_ptr<const sim::Profile> profile);
  bool busy() const { return watcher_.isRunning(); }
  const CompareModel& model() const { return model_; }
  QChartView* time_view() const { return time_view_; }
  QChartView* cost_view() const { return cost_view_; }

 signals:
  void updated();

 private:
  struct Slot {
    QString label;
    nlohmann::json document;
    QString file;
  };
  void recompute();
  void show_results();

  ScenarioDocument* doc_;
  std::shared_ptr<const sim::ResidualTable> bands_;
  std::shared_ptr<const sim::Profile> profile_;
  std::vector<Slot> slots_;
  CompareModel model_;
  QTableView* table_ = nullptr;
  QChartView* time_view_ = nullptr;
  QChartView* cost_view_ = nullptr;
  QFutureWatcher<std::vector<CompareModel::Column>> watcher_;
  bool again_ = false;
};

}  // namespace capplan::gui
