// SPDX-License-Identifier: Apache-2.0
// Small helpers the tabs share: writing a file atomically and escaping lines into rich text.
#pragma once
#include <QByteArray>
#include <QString>
#include <QStringList>

namespace capplan::gui {

// Writes `bytes` to `path` through a temporary file renamed over it (QSaveFile): readers never
// see half a file. An empty string on success, else "cannot write <path>: <reason>".
QString write_atomically(const QString& path, const QByteArray& bytes);

// The lines HTML-escaped and joined with <br>, for a QLabel showing rich text.
QString html_lines(const QStringList& lines);

}  // namespace capplan::gui
