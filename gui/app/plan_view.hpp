// SPDX-License-Identifier: Apache-2.0
// The Plan tab (placeholder until the planner of issue 5 lands in this branch).
#pragma once
#include <QWidget>

#include "capplan/gui/scenario_document.hpp"

namespace capplan::gui {

class PlanView final : public QWidget {
  Q_OBJECT
 public:
  explicit PlanView(ScenarioDocument* doc, QWidget* parent = nullptr);
  void start();
  void cancel();
  bool busy() const { return false; }

 signals:
  void plan_chosen();
  void finished();

 private:
  ScenarioDocument* doc_;
};

}  // namespace capplan::gui
