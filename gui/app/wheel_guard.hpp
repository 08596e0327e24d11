// SPDX-License-Identifier: Apache-2.0
// Scrolling a form never changes the field under the mouse: a combo box or spin box takes the
// mouse wheel only once it has focus (clicked or tabbed into); otherwise the wheel scrolls what
// holds it. Installed once on the application by the main window.
#pragma once
#include <QObject>

namespace capplan::gui {

class WheelGuard : public QObject {
 public:
  using QObject::QObject;

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;
};

// Installs one guard on the running application (again: nothing more happens).
void install_wheel_guard();

}  // namespace capplan::gui
