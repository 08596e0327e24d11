// SPDX-License-Identifier: Apache-2.0
#include "capplan/gui/plan_runner.hpp"

#include <QMetaObject>
#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>
#include <utility>

#include "capplan/gui/format.hpp"
#include "capplan/gui/result_models.hpp"

namespace capplan::gui {

bool PlanSnapshot::on_pareto_front(const sim::Plan& p) const {
  if (!result) return false;
  for (const auto& q : result->pareto) {
    if (q.offering == p.offering && q.nodes == p.nodes && q.estimate.layout.strategy == p.estimate.layout.strategy) return true;
  }
  return false;
}

PlanRunner::PlanRunner(QObject* parent) : QObject(parent) {
  qRegisterMetaType<std::shared_ptr<const capplan::gui::PlanSnapshot>>();
  connect(&watcher_, &QFutureWatcher<std::shared_ptr<const PlanSnapshot>>::finished, this,
          [this] { emit finished(watcher_.result()); });
}

PlanRunner::~PlanRunner() {
  cancel();
  watcher_.waitForFinished();
}

void PlanRunner::cancel() {
  if (cancel_) cancel_->store(true);
}

void PlanRunner::start(data::ParsedScenario base, sim::SearchRequest request) {
  if (busy()) {
    cancel();
    watcher_.waitForFinished();
  }
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  auto cancel_flag = cancel_;
  QPointer<PlanRunner> self(this);
  watcher_.setFuture(QtConcurrent::run([base = std::move(base), request = std::move(request), cancel_flag,
                                        self]() -> std::shared_ptr<const PlanSnapshot> {
    auto snap = std::make_shared<PlanSnapshot>();
    snap->base = base;
    snap->request = request;
    auto on_progress = [&](const sim::SearchProgress& p) {
      const qint64 done = p.done;
      const qint64 total = p.total;
      if (self) {
        QMetaObject::invokeMethod(
            self.data(), [self, done, total] { if (self) emit self->progress(done, total); }, Qt::QueuedConnection);
      }
      return !cancel_flag->load();
    };
    auto result = sim::search(request, on_progress);
    if (!result) {
      for (const auto& d : result.error()) snap->errors << QString::fromStdString(d.where + ": " + d.message);
    } else {
      snap->cancelled = result->cancelled;
      snap->result = std::move(*result);
    }
    return snap;
  }));
}

QString layout_text(const sim::Parallelism& p) {
  QString text = QStringLiteral("TP %1 · PP %2 · DP %3").arg(p.tp).arg(p.pp).arg(p.dp);
  if (p.cp != 1) text += QStringLiteral(" · CP %1").arg(p.cp);
  if (p.ep != 1) text += QStringLiteral(" · EP %1").arg(p.ep);
  text += QStringLiteral(" · mb %1").arg(p.micro_batch);
  if (p.virtual_stages != 1) text += QStringLiteral(" · v%1").arg(p.virtual_stages);
  text += QStringLiteral(" · ZeRO %1 · %2").arg(p.zero).arg(QString::fromLatin1(sim::to_string(p.recompute)));
  for (const auto& o : sim::kStrategyOptions) {
    if (o.tag != nullptr && p.*o.value) text += QStringLiteral(" · ") + QString::fromLatin1(o.tag);
  }
  return text;
}

QString offering_text(const sim::Plan& p) {
  return QString::fromStdString(p.instance_id.empty() ? p.gpu_id : p.instance_id);
}

void PlansModel::set_snapshot(std::shared_ptr<const PlanSnapshot> snapshot) {
  beginResetModel();
  snapshot_ = std::move(snapshot);
  endResetModel();
}

const sim::Plan* PlansModel::plan(int row) const {
  if (!snapshot_ || !snapshot_->result || row < 0 || row >= static_cast<int>(snapshot_->result->plans.size())) {
    return nullptr;
  }
  return &snapshot_->result->plans[static_cast<size_t>(row)];
}

int PlansModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !snapshot_ || !snapshot_->result) return 0;
  return static_cast<int>(snapshot_->result->plans.size());
}
int PlansModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant PlansModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const sim::Plan& p = *plan(index.row());
  const sim::Estimate& e = p.estimate;
  const double tokens = snapshot_->base.scenario.training.tokens;
  const std::optional<double> cost = (p.price_known && sim::plan_cost(e)) ? std::optional<double>(sim::plan_cost(e)->base()) : std::nullopt;
  const std::optional<double> per_b = (cost && tokens > 0) ? std::optional<double>(*cost / (tokens / 1e9)) : std::nullopt;
  const bool pareto = snapshot_->on_pareto_front(p);
  if (role == kSortRole) {
    switch (index.column()) {
      case kRank: return index.row() + 1;
      case kOffering: return offering_text(p);
      case kGpus: return p.gpus;
      case kTime: return units::to_days(sim::plan_time(e));
      case kCost: return cost ? QVariant(*cost) : QVariant(std::numeric_limits<double>::max());
      case kPerBillionTokens: return per_b ? QVariant(*per_b) : QVariant(std::numeric_limits<double>::max());
      case kMfu: return e.step.mfu;
      case kLayout: return layout_text(e.layout.strategy);
      case kPareto: return pareto ? 1 : 0;
    }
    return {};
  }
  if (role == Qt::ToolTipRole) return QString::fromStdString(p.price_source);
  if (role == Qt::TextAlignmentRole && index.column() != kOffering && index.column() != kLayout) {
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  }
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case kRank: return index.row() + 1;
    case kOffering: return offering_text(p);
    case kGpus: return QStringLiteral("%1 (%2 nodes)").arg(p.gpus).arg(p.nodes);
    case kTime: return days_text(units::to_days(sim::plan_time(e)));
    case kCost: return cost ? usd_text(*cost) : tr("unknown price");
    case kPerBillionTokens: return per_b ? usd_text(*per_b) : QString();
    case kMfu: return percent_text(e.step.mfu);
    case kLayout: return layout_text(e.layout.strategy);
    case kPareto: return pareto ? QStringLiteral("●") : QString();
  }
  return {};
}

QVariant PlansModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kRank: return tr("#");
    case kOffering: return tr("Offering");
    case kGpus: return tr("GPUs");
    case kTime: return tr("Expected days (with failures)");
    case kCost: return tr("Total cost");
    case kPerBillionTokens: return tr("$/B tokens");
    case kMfu: return tr("MFU");
    case kLayout: return tr("Layout");
    case kPareto: return tr("Pareto");
  }
  return {};
}

}  // namespace capplan::gui
