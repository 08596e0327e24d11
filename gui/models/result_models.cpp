// SPDX-License-Identifier: Apache-2.0
#include "capplan/gui/result_models.hpp"

#include <utility>

#include "capplan/gui/finding_text.hpp"
#include "capplan/gui/format.hpp"

namespace capplan::gui {

// ---- BreakdownModel ---------------------------------------------------------------------

void BreakdownModel::set_snapshot(const EstimateSnapshot& snapshot) {
  beginResetModel();
  const sim::StepBreakdown& b = snapshot.estimate.step.breakdown;
  step_s_ = snapshot.estimate.step.time.base();
  rows_.clear();
  const Row all[] = {
      {"compute", tr("compute"), (b.compute - b.recompute).base()},
      {"recompute", tr("recompute"), b.recompute.base()},
      {"tp_comm", tr("TP comm (exposed)"), b.tp_comm.base()},
      {"pp_comm", tr("PP comm (exposed)"), b.pp_comm.base()},
      {"dp_comm", tr("DP comm (exposed)"), b.dp_comm.base()},
      {"ep_comm", tr("EP comm (exposed)"), b.ep_comm.base()},
      {"cp_comm", tr("CP comm (exposed)"), b.cp_comm.base()},
      {"bubble", tr("pipeline bubble"), b.bubble.base()},
      {"optimizer", tr("optimizer"), b.optimizer.base()},
      {"variability", tr("slowest GPU wait"), b.variability.base()},
      {"other", tr("other"), b.other.base()},
  };
  for (const auto& r : all) {
    if (r.seconds > 0 || r.key == "compute") rows_.push_back(r);
  }
  endResetModel();
}

void BreakdownModel::clear() {
  beginResetModel();
  rows_.clear();
  step_s_ = 0;
  endResetModel();
}

int BreakdownModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}
int BreakdownModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant BreakdownModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Row& r = rows_[static_cast<size_t>(index.row())];
  const double share = step_s_ > 0 ? r.seconds / step_s_ : 0.0;
  if (role == kKeyRole) return QString::fromStdString(r.key);
  if (role == kSortRole) {
    switch (index.column()) {
      case kPart: return r.label;
      case kTime: return r.seconds;
      case kShare: return share;
    }
    return {};
  }
  if (role == Qt::TextAlignmentRole && index.column() != kPart) {
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  }
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case kPart: return r.label;
    case kTime: return seconds_text(r.seconds);
    case kShare: return percent_text(share);
  }
  return {};
}

QVariant BreakdownModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kPart: return tr("Part of the step");
    case kTime: return tr("Time per step");
    case kShare: return tr("Share");
  }
  return {};
}

// ---- MemoryModel ------------------------------------------------------------------------

void MemoryModel::set_snapshot(const EstimateSnapshot& snapshot) {
  beginResetModel();
  const sim::MemoryBreakdown& m = snapshot.estimate.memory;
  capacity_ = m.capacity.base();
  rows_ = {
      {"weights", tr("weights"), m.weights.base()},
      {"gradients", tr("gradients"), m.gradients.base()},
      {"optimizer", tr("optimizer state"), m.optimizer.base()},
      {"activations", tr("activations"), m.activations.base()},
      {"logits", tr("logits"), m.logits.base()},
      {"reserve", tr("reserve"), m.reserve.base()},
  };
  endResetModel();
}

void MemoryModel::clear() {
  beginResetModel();
  rows_.clear();
  capacity_ = 0;
  endResetModel();
}

double MemoryModel::total_bytes() const {
  double t = 0;
  for (const auto& r : rows_) t += r.bytes;
  return t;
}

int MemoryModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : static_cast<int>(rows_.size()); }
int MemoryModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant MemoryModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Row& r = rows_[static_cast<size_t>(index.row())];
  const double share = capacity_ > 0 ? r.bytes / capacity_ : 0.0;
  if (role == kKeyRole) return QString::fromStdString(r.key);
  if (role == kSortRole) {
    switch (index.column()) {
      case kPart: return r.label;
      case kSize: return r.bytes;
      case kShare: return share;
    }
    return {};
  }
  if (role == Qt::TextAlignmentRole && index.column() != kPart) {
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  }
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case kPart: return r.label;
    case kSize: return gib_text(r.bytes);
    case kShare: return percent_text(share);
  }
  return {};
}

QVariant MemoryModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kPart: return tr("Memory per GPU");
    case kSize: return tr("Size");
    case kShare: return tr("Of HBM capacity");
  }
  return {};
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
