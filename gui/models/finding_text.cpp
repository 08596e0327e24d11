// SPDX-License-Identifier: Apache-2.0
#include "capplan/gui/finding_text.hpp"

#include <QCoreApplication>
#include <string>

#include "capplan/data/findings.hpp"
#include "capplan/data/plan_text.hpp"
#include "capplan/gui/format.hpp"

namespace capplan::gui {

QString finding_text(const sim::Finding& f) {
  const std::string tmpl = data::finding_template(f);
  const QString translated = QCoreApplication::translate("capplan::Finding", tmpl.c_str());
  const auto number = [](double v, int decimals) { return number_text(v, decimals).toStdString(); };
  return QString::fromStdString(data::fill(translated.toStdString(), f, number));
}

namespace {

QString words(const std::vector<sim::Finding>& parts) {
  QString out;
  for (const auto& part : parts) out += finding_text(part);
  return out;
}

}  // namespace

QString explanation_text(const sim::SearchResult& result, const sim::SearchRequest& request) {
  return words(data::explanation_parts(result, request));
}

QString failure_text(const sim::ConstraintFailure& failure, const sim::SearchRequest& request) {
  return words(data::failure_parts(failure, request));
}

QString runner_up_text(const sim::RunnerUp& runner_up, const sim::Plan& chosen) {
  return words(data::runner_up_parts(runner_up, chosen));
}

QString diagnostic_text(const Diagnostic& d) {
  const QString message = d.finding ? finding_text(*d.finding) : QString::fromStdString(d.message);
  return d.where.empty() ? message : QString::fromStdString(d.where) + QStringLiteral(": ") + message;
}

QStringList diagnostic_messages(const Diagnostics& diags) {
  QStringList messages;
  for (const auto& d : diags) messages << diagnostic_text(d);
  return messages;
}

}  // namespace capplan::gui
