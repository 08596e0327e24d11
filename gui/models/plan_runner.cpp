// SPDX-License-Identifier: Apache-2.0
#include "capplan/gui/plan_runner.hpp"

#include <QMetaObject>
#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>
#include <limits>
#include <utility>

#include "capplan/gui/finding_text.hpp"
#include "capplan/gui/format.hpp"

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
      for (const auto& d : result.error()) snap->errors << diagnostic_text(d);
    } else {
      snap->cancelled = result->cancelled;
      snap->result = std::move(*result);
    }
    return snap;
  }));
}

QString layout_text(const sim::Parallelism& p) {
  QString text = degrees_text(p);
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

QString purchase_summary(const sim::SearchResult& r) {
  QStringList keys;              // in order of first appearance
  std::vector<QStringList> what;  // the offerings of each
  auto note = [&](const sim::Plan& p) {
    const QString key = purchase_text(p.purchase) +
                        (p.currency.is_usd() ? QString() : PlansModel::tr(" in %1").arg(QString::fromStdString(p.currency.code)));
    qsizetype at = keys.indexOf(key);
    if (at < 0) {
      keys << key;
      what.emplace_back();
      at = keys.size() - 1;
    }
    QStringList& offerings = what[static_cast<size_t>(at)];
    if (const QString o = offering_text(p); !offerings.contains(o)) offerings << o;
  };
  for (const auto& p : r.plans) note(p);
  for (const auto& p : r.pareto) note(p);
  if (r.failure && r.failure->closest) note(*r.failure->closest);
  if (keys.isEmpty()) return PlansModel::tr("Purchase: no plan");
  QStringList parts;
  for (qsizetype i = 0; i < keys.size(); ++i) {
    const QStringList& o = what[static_cast<size_t>(i)];
    parts << QStringLiteral("%1 (%2%3)").arg(keys[i], o.mid(0, 3).join(QStringLiteral(", ")),
                                              o.size() > 3 ? QStringLiteral(", …") : QString());
  }
  return PlansModel::tr("Purchase: %1").arg(parts.join(QStringLiteral("; ")));
}

namespace {

// Unknown costs sort last.
QVariant usd_or_last(const std::optional<double>& usd) {
  return usd ? QVariant(*usd) : QVariant(std::numeric_limits<double>::max());
}

TableSpec<PlanRow> plans_spec() {
  using M = PlansModel;
  return {
      .fields = {
          {M::tr("#"), [](const PlanRow& r) -> QVariant { return r.tag.isEmpty() ? QVariant(r.rank) : QVariant(r.tag); },
           [](const PlanRow& r) -> QVariant { return r.rank; }, kAlignNumber},
          {M::tr("Offering"), [](const PlanRow& r) -> QVariant { return offering_text(*r.plan); }},
          {M::tr("GPUs"),
           [](const PlanRow& r) -> QVariant {
             return QStringLiteral("%1 (%2 nodes)").arg(r.plan->gpus).arg(r.plan->nodes);
           },
           [](const PlanRow& r) -> QVariant { return r.plan->gpus; }, kAlignNumber},
          {M::tr("Expected days (with failures)"),
           [](const PlanRow& r) -> QVariant { return days_text(units::to_days(sim::plan_time(r.plan->estimate))); },
           [](const PlanRow& r) -> QVariant { return units::to_days(sim::plan_time(r.plan->estimate)); }, kAlignNumber},
          {M::tr("Total cost"),
           [](const PlanRow& r) -> QVariant {
             return r.cost ? money_text(*r.cost, r.plan->currency) : M::tr("unknown price");
           },
           [](const PlanRow& r) { return usd_or_last(r.cost); }, kAlignNumber},
          {M::tr("Purchase"),
           [](const PlanRow& r) -> QVariant {
             const sim::Currency& c = r.plan->currency;
             return purchase_text(r.plan->purchase) + (c.is_usd() ? QString() : QStringLiteral(" (%1)").arg(QString::fromStdString(c.code)));
           }},
          {M::tr("Per B tokens"),
           [](const PlanRow& r) -> QVariant {
             return r.usd_per_billion_tokens ? money_text(*r.usd_per_billion_tokens, r.plan->currency) : QString();
           },
           [](const PlanRow& r) { return usd_or_last(r.usd_per_billion_tokens); }, kAlignNumber},
          {M::tr("MFU"), [](const PlanRow& r) -> QVariant { return percent_text(r.plan->estimate.step.mfu); },
           [](const PlanRow& r) -> QVariant { return r.plan->estimate.step.mfu; }, kAlignNumber},
          {M::tr("Layout"), [](const PlanRow& r) -> QVariant { return layout_text(r.plan->estimate.layout.strategy); }},
          {M::tr("Pareto"), [](const PlanRow& r) -> QVariant { return r.pareto ? QStringLiteral("●") : QString(); },
           [](const PlanRow& r) -> QVariant { return r.pareto ? 1 : 0; }, kAlignNumber},
      },
      .tooltip = [](const PlanRow& r) -> QVariant { return QString::fromStdString(r.plan->price_source); },
  };
}

}  // namespace

PlansModel::PlansModel(QObject* parent) : TableModel(plans_spec(), parent) {}

void PlansModel::set_snapshot(std::shared_ptr<const PlanSnapshot> snapshot) {
  std::vector<PlanRow> rows;
  if (snapshot && snapshot->result) {
    const double tokens = snapshot->base.scenario.training.tokens;
    auto add = [&](const sim::Plan& p, const QString& tag) {
      PlanRow r{.rank = static_cast<int>(rows.size()) + 1, .tag = tag, .plan = &p};
      if (p.price_known && sim::plan_cost(p.estimate)) r.cost = sim::plan_cost(p.estimate)->base();
      if (r.cost && tokens > 0) r.usd_per_billion_tokens = *r.cost / (tokens / 1e9);
      r.pareto = snapshot->on_pareto_front(p);
      rows.push_back(r);
    };
    const sim::SearchResult& result = *snapshot->result;
    if (result.failure) {
      // Nothing met the constraints: the plan that came closest and the front, as `capplan search`.
      if (result.failure->closest) add(*result.failure->closest, tr("closest"));
      for (size_t i = 0; i < result.pareto.size(); ++i) add(result.pareto[i], tr("front %1").arg(i + 1));
    } else {
      for (const sim::Plan& p : result.plans) add(p, {});
    }
  }
  const auto previous = std::exchange(snapshot_, std::move(snapshot));  // alive until the rows are replaced
  set_rows(std::move(rows));
}

std::vector<const sim::Plan*> PlansModel::shown_plans() const {
  std::vector<const sim::Plan*> out;
  for (const auto& r : rows()) out.push_back(r.plan);
  return out;
}

const sim::Plan* PlansModel::plan(int row) const {
  if (row < 0 || row >= static_cast<int>(rows().size())) return nullptr;
  return rows()[static_cast<std::size_t>(row)].plan;
}

}  // namespace capplan::gui
