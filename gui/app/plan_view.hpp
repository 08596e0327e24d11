// SPDX-License-Identifier: Apache-2.0
// The Plan tab: runs the planner (sim::search) for the editor's scenario over catalog offerings and
// node counts, off the GUI thread with progress and cancel; shows every returned plan as cost vs
// time-to-train coloured by offering with the Pareto front highlighted, and a sortable table.
// Clicking a point (or double-clicking a row) loads that plan into the editor.
#pragma once
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QTableView>
#include <QWidget>
#include <QtCharts/QChartView>
#include <QMessageBox>
#include <functional>
#include <memory>

#include "capplan/gui/plan_runner.hpp"
#include "capplan/gui/scenario_document.hpp"
#include "capplan/sim/cost/profile.hpp"
#include "capplan/sim/estimate/uncertainty.hpp"

namespace capplan::gui {

class PlanView final : public QWidget {
  Q_OBJECT
 public:
  // `bands`: the error-band table estimate uses (may be null): the planner says when its chosen
  // plan is where the model is known to be optimistic (sim::optimistic_regime), as search does.
  PlanView(ScenarioDocument* doc, std::shared_ptr<const sim::ResidualTable> bands, QWidget* parent = nullptr);

  void start();
  void cancel();
  bool busy() const { return runner_.busy(); }
  // Offering filters and node counts as typed in the tab (globs, GPU ids, "8,16-32").
  void set_filters(const QString& instances, const QString& gpus, const QString& nodes);
  // The calibration profile the planner prices with (empty: the datasheet model), as the estimate.
  void set_profile(std::shared_ptr<const sim::Profile> profile, const QString& label);
  const QString& cost_model_label() const { return cost_label_; }
  const PlansModel& plans() const { return model_; }
  QChartView* chart_view() const { return chart_view_; }
  // Loads plan `row` of the table's model into the editor: its offering, node count and layout;
  // everything else the user typed stays. The scenario's pricing stays with its own instance: a
  // plan on another offering asks first whether to keep that pricing or use the catalog's
  // on-demand price (Cancel loads nothing).
  void load_plan(int row);
  // The question load_plan asks (a QMessageBox by default; tests answer it): returns Yes (keep the
  // scenario's pricing), No (drop it: the catalog price) or Cancel.
  using Ask = std::function<QMessageBox::StandardButton(const QString& title, const QString& text)>;
  void set_ask(Ask ask) { ask_ = std::move(ask); }
  QTableView* table() const { return table_; }
  // The purchase and price fields (the scenario's pricing section, shared with the editor): they
  // apply to the scenario's own instance among the offerings (data::apply_scenario_pricing).
  QComboBox* purchase_field() const { return purchase_; }
  QLineEdit* price_field() const { return price_; }
  QLineEdit* spot_price_field() const { return spot_price_; }
  QLineEdit* preemptions_field() const { return preemptions_; }
  QLabel* pricing_note() const { return pricing_note_; }
  QLabel* budget_label() const { return budget_label_; }
  QLineEdit* budget_box() const { return budget_; }
  QLabel* explanation() const { return explanation_; }

 signals:
  void plan_chosen();
  void finished();

 private:
  void on_finished(const std::shared_ptr<const PlanSnapshot>& snapshot);
  void fill_chart();
  void set_running(bool running);
  void refresh_pricing();

  ScenarioDocument* doc_;
  std::shared_ptr<const sim::Profile> profile_;
  std::shared_ptr<const sim::ResidualTable> bands_;
  QString cost_label_ = QStringLiteral("datasheet model");
  PlanRunner runner_;
  PlansModel model_;
  QLineEdit* instances_ = nullptr;
  QLineEdit* gpus_ = nullptr;
  QLineEdit* nodes_ = nullptr;
  QLineEdit* deadline_ = nullptr;
  QLineEdit* budget_ = nullptr;
  QLabel* budget_label_ = nullptr;
  QComboBox* objective_ = nullptr;
  QComboBox* purchase_ = nullptr;
  QLineEdit* price_ = nullptr;
  QLineEdit* spot_price_ = nullptr;
  QLineEdit* preemptions_ = nullptr;
  QLabel* pricing_note_ = nullptr;
  QComboBox* space_ = nullptr;
  QPushButton* run_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* status_ = nullptr;
  QLabel* explanation_ = nullptr;
  QChartView* chart_view_ = nullptr;
  QTableView* table_ = nullptr;
  Ask ask_;
  QStringList offering_notes_;
  bool from_catalog_ = false;
  bool gpus_set_by_user_ = false;
};

}  // namespace capplan::gui
