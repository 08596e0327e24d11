// SPDX-License-Identifier: Apache-2.0
#include "view_text.hpp"

#include <QObject>
#include <QSaveFile>

namespace capplan::gui {

QString write_atomically(const QString& path, const QByteArray& bytes) {
  QSaveFile f(path);
  if (!f.open(QIODevice::WriteOnly)) return QObject::tr("cannot write %1: %2").arg(path, f.errorString());
  f.write(bytes);
  if (!f.commit()) return QObject::tr("cannot write %1: %2").arg(path, f.errorString());
  return {};
}

QString html_lines(const QStringList& lines) {
  QStringList escaped;
  for (const auto& l : lines) escaped << l.toHtmlEscaped();
  return escaped.join(QStringLiteral("<br>"));
}

}  // namespace capplan::gui
