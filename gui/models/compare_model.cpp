// SPDX-License-Identifier: Apache-2.0
#include "capplan/gui/compare_model.hpp"

#include "capplan/sim/search.hpp"

#include <utility>

#include "capplan/gui/format.hpp"
#include "capplan/gui/result_models.hpp"

namespace capplan::gui {

void CompareModel::set_columns(std::vector<Column> columns) {
  beginResetModel();
  columns_ = std::move(columns);
  if (columns_.size() > static_cast<size_t>(kMaxScenarios)) columns_.resize(kMaxScenarios);
  endResetModel();
}

int CompareModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kMetricCount; }
int CompareModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(columns_.size());
}

QString CompareModel::metric_label(Metric m) {
  switch (m) {
    case kTimeToTrain: return tr("Expected time to train (with failures)");
    case kCost: return tr("Total cost");
    case kCostPerBillionTokens: return tr("Cost per billion tokens");
    case kPricePerGpuHour: return tr("Price per GPU-hour");
    case kGpus: return tr("GPUs");
    case kStepTime: return tr("Step time");
    case kTokensPerS: return tr("Throughput");
    case kMfu: return tr("MFU");
    case kMemory: return tr("Memory per GPU (peak)");
    case kFits: return tr("Fits in memory");
    case kStrategy: return tr("Strategy");
    case kMetricCount: break;
  }
  return {};
}

std::optional<double> CompareModel::value(const EstimateSnapshot& s, Metric m) {
  const sim::Estimate& e = s.estimate;
  switch (m) {
    case kTimeToTrain: return units::to_days(sim::plan_time(e));  // expected, with failures
    case kCost: return sim::plan_cost(e) ? std::optional<double>(sim::plan_cost(e)->base()) : std::nullopt;
    case kCostPerBillionTokens: return s.usd_per_billion_tokens();
    case kPricePerGpuHour:
      return e.totals.price_per_gpu ? std::optional<double>(units::to_usd_per_hour(*e.totals.price_per_gpu)) : std::nullopt;
    case kGpus: return s.scenario.scenario.cluster.gpus;
    case kStepTime: return e.step.time.base();
    case kTokensPerS: return e.step.tokens_per_s;
    case kMfu: return e.step.mfu;
    case kMemory: return e.memory.total().base();
    case kFits: return e.memory.fits() ? 1.0 : 0.0;
    case kStrategy:
    case kMetricCount: break;
  }
  return std::nullopt;
}

namespace {

QString value_text(CompareModel::Metric m, const EstimateSnapshot& s, std::optional<double> v) {
  const sim::Estimate& e = s.estimate;
  switch (m) {
    case CompareModel::kTimeToTrain: return days_text(*v);
    case CompareModel::kCost:
    case CompareModel::kCostPerBillionTokens: return v ? usd_text(*v) : QStringLiteral("unknown (no price)");
    case CompareModel::kPricePerGpuHour: return v ? usd_text(*v) + QStringLiteral("/GPU-h") : QStringLiteral("unknown");
    case CompareModel::kGpus: {
      const auto& c = s.scenario.scenario.cluster;
      QString text = count_text(*v) + QStringLiteral(" x ") + QString::fromStdString(c.gpu.id);
      if (!c.instance_id.empty()) {
        text += QStringLiteral("\n") + QString::number(c.nodes()) + QStringLiteral(" x ") +
                QString::fromStdString(c.instance_id);
      }
      return text;
    }
    case CompareModel::kStepTime: return seconds_text(*v);
    case CompareModel::kTokensPerS: return si_text(*v) + QStringLiteral(" tokens/s");
    case CompareModel::kMfu: return percent_text(*v);
    case CompareModel::kMemory: return gib_text(*v) + QStringLiteral(" of ") + gib_text(e.memory.capacity.base());
    case CompareModel::kFits: return *v > 0 ? QStringLiteral("yes") : QStringLiteral("NO");
    case CompareModel::kStrategy: {
      const auto& p = e.layout.strategy;
      QString text = QStringLiteral("TP %1 · PP %2 · DP %3").arg(p.tp).arg(p.pp).arg(p.dp);
      if (p.cp != 1) text += QStringLiteral(" · CP %1").arg(p.cp);
      if (p.ep != 1) text += QStringLiteral(" · EP %1").arg(p.ep);
      text += QStringLiteral("\nmicro-batch %1 · ZeRO %2 · %3").arg(p.micro_batch).arg(p.zero).arg(
          QString::fromLatin1(sim::to_string(p.recompute)));
      return text;
    }
    case CompareModel::kMetricCount: break;
  }
  return {};
}

}  // namespace

QVariant CompareModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const auto metric = static_cast<Metric>(index.row());
  const Column& col = columns_[static_cast<size_t>(index.column())];
  if (!col.snapshot) {
    if (role == Qt::DisplayRole && index.row() == 0) return col.problem.isEmpty() ? tr("computing…") : col.problem;
    return {};
  }
  const auto v = value(*col.snapshot, metric);
  if (role == kSortRole) return v ? QVariant(*v) : QVariant();
  if (role == Qt::TextAlignmentRole) return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole) return {};
  if (!v && metric != kStrategy && metric != kCost && metric != kCostPerBillionTokens && metric != kPricePerGpuHour) {
    return {};
  }
  QString text = value_text(metric, *col.snapshot, v);
  // Deltas against the first scenario for the numeric figures.
  if (index.column() > 0 && v && metric != kFits && metric != kGpus && columns_.front().snapshot) {
    if (auto base = value(*columns_.front().snapshot, metric)) {
      const QString d = delta_text(*v, *base);
      if (!d.isEmpty()) text += QStringLiteral("  (") + d + QStringLiteral(")");
    }
  }
  return text;
}

QVariant CompareModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) {
    if (section < 0 || section >= kMetricCount) return {};
    return metric_label(static_cast<Metric>(section));
  }
  if (section < 0 || section >= static_cast<int>(columns_.size())) return {};
  return (section == 0 ? tr("A (base): ") : QString(QChar(u'A' + section)) + QStringLiteral(": ")) +
         columns_[static_cast<size_t>(section)].label;
}

}  // namespace capplan::gui
