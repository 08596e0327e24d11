// SPDX-License-Identifier: Apache-2.0
// The Own vs rent tab (`capplan tco` in the desktop app): the scenario's fleet owned for its `tco`
// section's years against renting the same useful GPU-hours, as a chart of cost per useful GPU-hour
// against utilisation and a summary table; the inputs it lacks listed, never guessed.
#pragma once
#include <QLabel>
#include <QTableView>
#include <QWidget>
#include <QtCharts/QChartView>
#include <optional>

#include "capplan/gui/scenario_document.hpp"
#include "capplan/gui/tco_model.hpp"

namespace capplan::gui {

class TcoView final : public QWidget {
  Q_OBJECT
 public:
  explicit TcoView(ScenarioDocument* doc, QWidget* parent = nullptr);

  // Recomputes from the document now (the tab also does after each edit once it is shown: edits
  // are gathered and read when the event loop next runs, after a file's path is known).
  void refresh();

  const std::optional<TcoSnapshot>& snapshot() const { return snapshot_; }
  const TcoModel& model() const { return model_; }
  QChartView* chart_view() const { return chart_view_; }
  QLabel* message() const { return message_; }  // why there is nothing to show (no tco section, errors)
  QLabel* heading() const { return heading_; }
  QLabel* missing() const { return missing_; }
  QLabel* notes() const { return notes_; }

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void schedule();
  void show_message(const QString& html);

  ScenarioDocument* doc_;
  std::optional<TcoSnapshot> snapshot_;
  TcoModel model_;
  QLabel* message_ = nullptr;  // shown instead of content_ when there is nothing to draw
  QWidget* content_ = nullptr;
  bool pending_ = false;  // a refresh is queued
  // Inside content_: the heading above the chart; beside it the table (over model_), what the
  // scenario does not give, and where the rates came from.
  QLabel* heading_ = nullptr;
  QChartView* chart_view_ = nullptr;
  QTableView* table_ = nullptr;
  bool stale_ = true;  // the document changed while the tab was hidden
  QLabel* missing_ = nullptr;
  QLabel* notes_ = nullptr;
};

}  // namespace capplan::gui
