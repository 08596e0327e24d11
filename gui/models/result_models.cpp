// SPDX-License-Identifier: Apache-2.0
#include "capplan/gui/result_models.hpp"

#include <utility>

#include "capplan/gui/finding_text.hpp"
#include "capplan/gui/format.hpp"

namespace capplan::gui {

// ---- PartsModel -------------------------------------------------------------------------

PartsModel::PartsModel(QString part, QString amount, QString share, QString (*amount_text)(double), QObject* parent)
    : TableModel({.fields = {
                      {part, [](const Part& p) -> QVariant { return p.label; }},
                      {amount, [amount_text](const Part& p) -> QVariant { return amount_text(p.amount); },
                       [](const Part& p) -> QVariant { return p.amount; }, kAlignNumber},
                      {share, [this](const Part& p) -> QVariant { return percent_text(share_of(p)); },
                       [this](const Part& p) -> QVariant { return share_of(p); }, kAlignNumber},
                  },
                  .key = [](const Part& p) { return QString::fromStdString(p.key); }},
                 parent) {}

double PartsModel::share_of(const Part& p) const { return whole_ > 0 ? p.amount / whole_ : 0.0; }

void PartsModel::set_parts(std::vector<Part> parts, double whole) {
  whole_ = whole;
  set_rows(std::move(parts));
}

void PartsModel::clear() { set_parts({}, 0); }

// ---- BreakdownModel ---------------------------------------------------------------------

BreakdownModel::BreakdownModel(QObject* parent)
    : PartsModel(tr("Part of the step"), tr("Time per step"), tr("Share"), &seconds_text, parent) {}

void BreakdownModel::set_snapshot(const EstimateSnapshot& snapshot) {
  const sim::StepBreakdown& b = snapshot.estimate.step.breakdown;
  std::vector<Part> parts = {{"compute", tr("compute"), (b.compute - b.recompute).base()}};  // always shown
  auto add_if_any = [&parts](const char* key, const QString& label, units::Seconds time) {
    if (time.base() > 0) parts.push_back({key, label, time.base()});
  };
  add_if_any("recompute", tr("recompute"), b.recompute);
  add_if_any("tp_comm", tr("TP comm (exposed)"), b.tp_comm);
  add_if_any("pp_comm", tr("PP comm (exposed)"), b.pp_comm);
  add_if_any("dp_comm", tr("DP comm (exposed)"), b.dp_comm);
  add_if_any("ep_comm", tr("EP comm (exposed)"), b.ep_comm);
  add_if_any("cp_comm", tr("CP comm (exposed)"), b.cp_comm);
  add_if_any("bubble", tr("pipeline bubble"), b.bubble);
  add_if_any("optimizer", tr("optimizer"), b.optimizer);
  add_if_any("variability", tr("slowest GPU wait"), b.variability);
  add_if_any("host", tr("host-bound (kernel launch)"), b.host);
  add_if_any("other", tr("other"), b.other);
  set_parts(std::move(parts), snapshot.estimate.step.time.base());
}

// ---- MemoryModel ------------------------------------------------------------------------

MemoryModel::MemoryModel(QObject* parent)
    : PartsModel(tr("Memory per GPU"), tr("Size"), tr("Of HBM capacity"), &gib_text, parent) {}

void MemoryModel::set_snapshot(const EstimateSnapshot& snapshot) {
  const sim::MemoryBreakdown& m = snapshot.estimate.memory;
  set_parts({
                {"weights", tr("weights"), m.weights.base()},
                {"gradients", tr("gradients"), m.gradients.base()},
                {"optimizer", tr("optimizer state"), m.optimizer.base()},
                {"activations", tr("activations"), m.activations.base()},
                {"logits", tr("logits"), m.logits.base()},
                {"reserve", tr("reserve"), m.reserve.base()},
            },
            m.capacity.base());
}

double MemoryModel::total_bytes() const {
  double t = 0;
  for (const auto& p : rows()) t += p.amount;
  return t;
}

// ---- WarningsModel ----------------------------------------------------------------------

void WarningsModel::set_messages(QStringList messages) {
  beginResetModel();
  messages_ = std::move(messages);
  endResetModel();
}

int WarningsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(messages_.size());
}

QVariant WarningsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  if (role == Qt::DisplayRole || role == Qt::ToolTipRole || role == kSortRole) return messages_[index.row()];
  return {};
}

MemoryFit memory_fit(const sim::MemoryBreakdown& m) {
  if (!m.fits()) return MemoryFit::over;
  return m.capacity - m.total() < m.reserve ? MemoryFit::tight : MemoryFit::fits;
}

QStringList snapshot_warnings(const EstimateSnapshot& snapshot) {
  QStringList out;
  for (const auto& w : snapshot.scenario.warnings) out << QString::fromStdString(w);
  for (const auto& f : snapshot.estimate.findings) {
    const QString text = finding_text(f);
    if (!out.contains(text)) out << text;
  }
  return out;
}

}  // namespace capplan::gui
