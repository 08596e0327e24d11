// SPDX-License-Identifier: Apache-2.0
#include "wheel_guard.hpp"

#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QEvent>

namespace capplan::gui {

bool WheelGuard::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() != QEvent::Wheel) return false;
  auto* w = qobject_cast<QWidget*>(watched);
  if (w == nullptr || w->hasFocus()) return false;
  if (qobject_cast<QComboBox*>(w) == nullptr && qobject_cast<QAbstractSpinBox*>(w) == nullptr) return false;
  // Left unaccepted and filtered out: the application hands the wheel to the parents (the scroll
  // area scrolls) and the field keeps its value.
  event->ignore();
  return true;
}

void install_wheel_guard() {
  static WheelGuard* guard = nullptr;
  if (guard != nullptr || qApp == nullptr) return;
  guard = new WheelGuard(qApp);
  qApp->installEventFilter(guard);
}

}  // namespace capplan::gui
