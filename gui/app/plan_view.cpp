// SPDX-License-Identifier: Apache-2.0
#include "plan_view.hpp"

#include <QLabel>
#include <QVBoxLayout>

namespace capplan::gui {

PlanView::PlanView(ScenarioDocument* doc, QWidget* parent) : QWidget(parent), doc_(doc) {
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(new QLabel(tr("The planner (issue 5) is not in this build yet."), this));
}

void PlanView::start() { emit finished(); }
void PlanView::cancel() {}

}  // namespace capplan::gui
