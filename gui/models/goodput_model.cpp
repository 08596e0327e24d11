// SPDX-License-Identifier: Apache-2.0
#include "capplan/gui/goodput_model.hpp"

#include <cmath>

#include "capplan/gui/format.hpp"
#include "capplan/gui/result_models.hpp"

namespace capplan::gui {

namespace {
QString hours_text(double seconds) {
  if (!std::isfinite(seconds)) return QStringLiteral("never");
  return seconds >= 3600 ? QStringLiteral("%1 h").arg(seconds / 3600.0, 0, 'f', 2) : seconds_text(seconds);
}
QString bytes_text(double bytes) {  // decimal SI, as the CLI's table: "1.99 GB"
  const QString s = si_text(bytes);   // "1.99G", or "512" below a thousand
  return !s.isEmpty() && s.back().isLetter() ? s.chopped(1) + QLatin1Char(' ') + s.back() + QLatin1Char('B')
                                             : s + QStringLiteral(" B");
}
}  // namespace

void GoodputModel::set_snapshot(const EstimateSnapshot& snapshot) {
  beginResetModel();
  rows_.clear();
  const sim::Goodput& g = snapshot.estimate.goodput;
  if (g.modelled) {
    const double mtbi = g.mtbi.base();
    rows_.push_back({"interruptions", tr("Expected interruptions"), QString::number(g.expected_interruptions, 'f', 1),
                     g.expected_interruptions,
                     tr("%1 per 1M GPU-hours%2")
                         .arg(si_text(g.interruptions_per_gpu_hour * 1e6))
                         .arg(g.preemptions_per_node_hour > 0
                                  ? tr(", spot %1 per node-hour").arg(g.preemptions_per_node_hour, 0, 'f', 4)
                                  : QString())});
    rows_.push_back({"mtbi", tr("Mean time between interruptions"), hours_text(mtbi),
                     std::isfinite(mtbi) ? mtbi : 0.0, tr("whole cluster")});
    const QString how = g.interval_given                  ? tr("given (reliability)")
                        : g.expected_interruptions == 0.0 ? tr("no interruptions: once, at the end")
                                                          : tr("Daly optimum");
    rows_.push_back({"checkpoint_interval", tr("Checkpoint interval"), hours_text(g.checkpoint_interval.base()),
                     g.checkpoint_interval.base(),
                     tr("%1; Young %2").arg(how, hours_text(g.young_interval.base()))});
    rows_.push_back({"checkpoint_write", tr("Checkpoint write"), seconds_text(g.checkpoint_write.base()),
                     g.checkpoint_write.base(),
                     tr("per checkpoint, until durable (%1)").arg(QString::fromLatin1(sim::to_string(g.mode)))});
    rows_.push_back({"checkpoint_stall", tr("Checkpoint stall"), seconds_text(g.checkpoint_stall.base()),
                     g.checkpoint_stall.base(), tr("per checkpoint, GPUs paused; %1 in all")
                                                    .arg(days_text(units::to_days(g.checkpoint_overhead)))});
    rows_.push_back({"checkpoint_size", tr("Checkpoint size per rank"), bytes_text(g.checkpoint.per_rank_max.base()),
                     g.checkpoint.per_rank_max.base(),
                     tr("%1 total, %2 writers").arg(bytes_text(g.checkpoint.total.base()),
                                                    count_text(static_cast<double>(g.checkpoint.writers)))});
    rows_.push_back({"restart", tr("Restart"), seconds_text(g.restart.base()), g.restart.base(),
                     tr("per interruption (checkpoint load %1); %2 in all")
                         .arg(seconds_text(g.checkpoint_read.base()), days_text(units::to_days(g.restart_total)))});
    rows_.push_back({"lost_work", tr("Lost work"), days_text(units::to_days(g.lost_work)), g.lost_work.base(),
                     tr("recomputed since the last checkpoint; %1 per interruption")
                         .arg(seconds_text(g.lost_per_interruption.base()))});
    const sim::DataLoadingCheck& d = g.data;
    rows_.push_back({"data_loading", tr("Data loading"),
                     d.bound == "none" ? tr("not a bottleneck") : tr("bound by %1").arg(QString::fromStdString(d.bound)),
                     d.slowdown,
                     tr("%1/s needed (%2 B/token)%3")
                         .arg(bytes_text(d.required_bytes_per_s))
                         .arg(d.bytes_per_token, 0, 'f', 0)
                         .arg(d.bound == "none" ? QString() : tr("; steps x%1").arg(d.slowdown, 0, 'f', 2))});
    rows_.push_back({"fraction", tr("Goodput"), percent_text(g.fraction), g.fraction,
                     g.finite ? tr("useful time / wall time") : tr("interruptions outpace progress: wall is a bound")});
  }
  endResetModel();
}

void GoodputModel::clear() {
  beginResetModel();
  rows_.clear();
  endResetModel();
}

int GoodputModel::row_of(const std::string& key) const {
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    if (rows_[i].key == key) return static_cast<int>(i);
  }
  return -1;
}

int GoodputModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}
int GoodputModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant GoodputModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Row& r = rows_[static_cast<std::size_t>(index.row())];
  if (role == kKeyRole) return QString::fromStdString(r.key);
  if (role == kSortRole) {
    switch (index.column()) {
      case kItem: return r.item;
      case kValue: return r.raw;
      case kNote: return r.note;
    }
    return {};
  }
  if (role == Qt::DisplayRole || role == Qt::ToolTipRole) {
    switch (index.column()) {
      case kItem: return r.item;
      case kValue: return r.value;
      case kNote: return r.note;
    }
    return {};
  }
  if (role == Qt::TextAlignmentRole && index.column() == kValue) {
    return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
  }
  return {};
}

QVariant GoodputModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kItem: return tr("Goodput");
    case kValue: return tr("Value");
    case kNote: return tr("Detail");
  }
  return {};
}

}  // namespace capplan::gui
