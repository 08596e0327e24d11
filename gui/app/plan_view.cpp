// SPDX-License-Identifier: Apache-2.0
#include "plan_view.hpp"

#include "capplan/data/cost_model.hpp"

#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QRegularExpression>
#include <QSplitter>
#include <QVBoxLayout>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "capplan/data/currency.hpp"
#include "capplan/data/fields.hpp"
#include "capplan/data/plan_text.hpp"
#include "capplan/data/search_io.hpp"
#include "capplan/gui/finding_text.hpp"
#include "capplan/gui/format.hpp"
#include "capplan/gui/result_models.hpp"
#include "charts.hpp"
#include "table_view.hpp"

namespace capplan::gui {

namespace {

std::vector<std::string> split_list(const QString& text) {
  std::vector<std::string> out;
  for (const auto& part : text.split(QRegularExpression(QStringLiteral("[,\\s]+")), Qt::SkipEmptyParts)) {
    out.push_back(part.toStdString());
  }
  return out;
}

// A setting's label and its field side by side in the search settings' grid.
QLabel* add_setting(QGridLayout* form, int row, int column, const QString& label, QWidget* field) {
  auto* l = new QLabel(label, field->parentWidget());
  form->addWidget(l, row, column);
  form->addWidget(field, row, column + 1);
  return l;
}

// Distinct colours for up to 10 offerings (Okabe-Ito, then Tableau), repeated beyond.
QColor offering_color(int i) {
  static constexpr QRgb kColors[] = {0x0072B2, 0xE69F00, 0x009E73, 0xCC79A7, 0x56B4E9,
                                     0xD55E00, 0x999933, 0x882255, 0x44AA99, 0x661100};
  return QColor::fromRgb(kColors[static_cast<size_t>(i) % std::size(kColors)]);
}

}  // namespace

PlanView::PlanView(ScenarioDocument* doc, std::shared_ptr<const sim::ResidualTable> bands, QWidget* parent)
    : QWidget(parent), doc_(doc), bands_(std::move(bands)) {
  auto* layout = new QVBoxLayout(this);

  // Search settings.
  auto* form = new QGridLayout();
  instances_ = new QLineEdit(this);
  instances_->setPlaceholderText(tr("any (globs: aws-*, gcp-a3-*)"));
  instances_->setToolTip(tr("Catalog instances to consider, as globs on their ids"));
  gpus_ = new QLineEdit(this);
  gpus_->setToolTip(tr("GPU ids to consider (comma-separated); empty with no instance filter: the scenario's own "
                       "cluster only"));
  nodes_ = new QLineEdit(QStringLiteral("8,16,32,64,128"), this);
  nodes_->setToolTip(tr("Node counts to try: a list and/or ranges, e.g. 8,16-32"));
  deadline_ = new QLineEdit(this);
  deadline_->setObjectName(QStringLiteral("plan:deadline"));
  deadline_->setPlaceholderText(tr("none"));
  budget_ = new QLineEdit(this);
  budget_->setPlaceholderText(tr("none"));
  objective_ = new QComboBox(this);
  objective_->addItem(tr("cheapest that meets the deadline"), QStringLiteral("cheapest"));
  objective_->addItem(tr("fastest within the budget"), QStringLiteral("fastest"));
  objective_->addItem(tr("Pareto front only"), QStringLiteral("pareto"));
  add_setting(form, 0, 0, tr("Instances"), instances_);
  add_setting(form, 0, 2, tr("GPUs"), gpus_);
  add_setting(form, 0, 4, tr("Nodes"), nodes_);
  add_setting(form, 1, 0, tr("Deadline (days)"), deadline_);
  budget_->setObjectName(QStringLiteral("plan:budget"));
  budget_label_ = add_setting(form, 1, 2, tr("Budget"), budget_);  // its currency: refresh_pricing
  add_setting(form, 1, 4, tr("Objective"), objective_);
  // The scenario's pricing: its purchase model and prices, for its own instance.
  purchase_ = new QComboBox(this);
  // The purchase models the pricing table accepts (pricing.purchase), worded as everywhere else.
  for (const auto& f : data::pricing_fields()) {
    if (std::string_view(f.spec.pointer) != "purchase") continue;
    for (const char* key : f.spec.choices) {
      const auto model = sim::purchase_model_from_string(key);
      purchase_->addItem(model ? purchase_text(*model) : QString::fromLatin1(key), QString::fromLatin1(key));
    }
  }
  purchase_->setObjectName(QStringLiteral("plan:/pricing/purchase"));
  purchase_->setToolTip(tr("The scenario's purchase model (pricing.purchase), for its own instance; the other "
                           "offerings are on demand at their catalog prices"));
  auto pricing_edit = [this](const char* pointer, const QString& placeholder, const QString& tip) {
    auto* edit = new QLineEdit(this);
    edit->setObjectName(QStringLiteral("plan:") + QString::fromLatin1(pointer));
    edit->setPlaceholderText(placeholder);
    edit->setToolTip(tip);
    connect(edit, &QLineEdit::textEdited, this, [this, pointer](const QString& t) { doc_->set_text(pointer, t); });
    return edit;
  };
  price_ = pricing_edit("/pricing/usd_per_gpu_hour", tr("catalog"),
                        tr("The scenario's on-demand price per GPU-hour (pricing.usd_per_gpu_hour), in its currency"));
  spot_price_ = pricing_edit("/pricing/spot/usd_per_gpu_hour", tr("none"),
                             tr("Spot price per GPU-hour (pricing.spot.usd_per_gpu_hour), in the scenario's currency"));
  preemptions_ = pricing_edit("/pricing/spot/preemptions_per_node_hour", tr("default"),
                              tr("Spot preemptions per node-hour (pricing.spot.preemptions_per_node_hour), 0..1"));
  pricing_note_ = new QLabel(this);
  pricing_note_->setWordWrap(true);
  pricing_note_->setStyleSheet(QStringLiteral("color: #4a5568;"));
  add_setting(form, 2, 0, tr("Purchase"), purchase_);
  add_setting(form, 2, 2, tr("Price / GPU-hour"), price_);
  add_setting(form, 2, 4, tr("Spot price / GPU-hour"), spot_price_);
  add_setting(form, 3, 0, tr("Spot preemptions / node-hour"), preemptions_);
  form->addWidget(pricing_note_, 3, 2, 1, 4);
  connect(purchase_, &QComboBox::activated, this, [this](int i) {
    const QString key = purchase_->itemData(i).toString();
    if (key == QLatin1String("on_demand") && !doc_->has("/pricing/purchase")) return;  // the default already
    doc_->set_text("/pricing/purchase", key);
  });
  form->setColumnStretch(1, 1);
  form->setColumnStretch(3, 1);
  form->setColumnStretch(5, 1);
  layout->addLayout(form);
  connect(gpus_, &QLineEdit::textEdited, this, [this] { gpus_set_by_user_ = true; });

  auto* bar = new QHBoxLayout();
  run_ = new QPushButton(tr("Run planner (Ctrl+R)"), this);
  cancel_ = new QPushButton(tr("Cancel"), this);
  cancel_->setEnabled(false);
  progress_ = new QProgressBar(this);
  progress_->setRange(0, 1000);
  progress_->setValue(0);
  progress_->setFormat(tr("%p %"));
  status_ = new QLabel(this);
  space_ = new QComboBox(this);
  space_->addItem(tr("standard layouts"), QStringLiteral("standard"));
  space_->addItem(tr("exhaustive layouts"), QStringLiteral("exhaustive"));
  space_->setToolTip(tr("standard: what estimate's \"auto\" searches; exhaustive: also TP across nodes, every "
                        "micro-batch, ZeRO 2/3 with pipelining, overlap switches (docs/planner.md)"));
  bar->addWidget(run_);
  bar->addWidget(cancel_);
  bar->addWidget(space_);
  bar->addWidget(progress_, 1);
  bar->addWidget(status_, 2);
  layout->addLayout(bar);
  connect(run_, &QPushButton::clicked, this, &PlanView::start);
  connect(cancel_, &QPushButton::clicked, this, &PlanView::cancel);

  auto* split = new QSplitter(Qt::Horizontal, this);
  chart_view_ = make_chart_view(tr("Cost vs time to train"), split);
  chart_view_->chart()->legend()->setAlignment(Qt::AlignRight);
  chart_view_->setToolTip(tr("Each point is the best layout of one offering and node count. Click one to load it "
                             "into the editor."));
  auto* right = new QWidget(split);
  auto* rl = new QVBoxLayout(right);
  rl->setContentsMargins(0, 0, 0, 0);
  auto* proxy = sort_by_value(&model_, this);
  table_ = make_table_view(proxy, PlansModel::kRank, 21, right);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setAlternatingRowColors(true);
  table_->setToolTip(tr("Double-click a plan to load it into the editor"));
  connect(table_, &QTableView::doubleClicked, this,
          [this, proxy](const QModelIndex& i) { load_plan(proxy->mapToSource(i).row()); });
  explanation_ = new QLabel(right);
  explanation_->setWordWrap(true);
  explanation_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  explanation_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  rl->addWidget(table_, 3);
  rl->addWidget(explanation_, 1);
  split->addWidget(chart_view_);
  split->addWidget(right);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  split->setSizes({720, 780});
  chart_view_->setMinimumWidth(520);
  table_->setMinimumWidth(400);
  layout->addWidget(split, 1);

  connect(&runner_, &PlanRunner::progress, this, [this](qint64 done, qint64 total) {
    progress_->setValue(total > 0 ? static_cast<int>(1000.0 * static_cast<double>(done) / static_cast<double>(total)) : 0);
  });
  connect(&runner_, &PlanRunner::finished, this, &PlanView::on_finished);
  // The GPU filter follows the editor's GPU until the user types one.
  connect(doc_, &ScenarioDocument::changed, this, [this] {
    if (!gpus_set_by_user_ && doc_->last_good()) gpus_->setText(QString::fromStdString(doc_->last_good()->scenario.cluster.gpu.id));
  });
  if (doc_->last_good()) gpus_->setText(QString::fromStdString(doc_->last_good()->scenario.cluster.gpu.id));
  connect(doc_, &ScenarioDocument::changed, this, &PlanView::refresh_pricing);
  refresh_pricing();
  status_->setText(tr("Searches layouts x node counts x offerings for the editor's model and training job."));
}

void PlanView::refresh_pricing() {
  for (QLineEdit* edit : {price_, spot_price_, preemptions_}) {
    if (edit->hasFocus()) continue;  // the user is typing there
    const QString t = doc_->text(edit->objectName().mid(5).toStdString());
    if (edit->text() != t) edit->setText(t);
  }
  const QString purchase = doc_->has("/pricing/purchase") ? doc_->text("/pricing/purchase") : QStringLiteral("on_demand");
  if (const int i = purchase_->findData(purchase); i >= 0) purchase_->setCurrentIndex(i);
  const bool spot = purchase == QLatin1String("spot");
  spot_price_->setEnabled(spot);
  preemptions_->setEnabled(spot);
  const auto& good = doc_->last_good();
  if (!good) return;
  const QString code = QString::fromStdString(good->scenario.pricing.currency.code);
  budget_label_->setText(tr("Budget (%1)").arg(code));
  budget_->setToolTip(tr("Total cost limit in %1 (the scenario's currency), e.g. 2.5M").arg(code));
  const sim::Cluster& c = good->scenario.cluster;
  const QString own = QString::fromStdString(c.instance_id.empty() ? c.gpu.id : c.instance_id);
  pricing_note_->setText(tr("Prices in %1, for %2 (the scenario's own %3); other offerings: on demand at their "
                            "catalog prices.")
                             .arg(QString::fromStdString(good->scenario.pricing.currency.code), own,
                                  c.instance_id.empty() ? tr("GPU") : tr("instance")));
}

void PlanView::set_filters(const QString& instances, const QString& gpus, const QString& nodes) {
  instances_->setText(instances);
  gpus_->setText(gpus);
  gpus_set_by_user_ = true;
  nodes_->setText(nodes);
}

void PlanView::set_running(bool running) {
  run_->setEnabled(!running);
  cancel_->setEnabled(running);
  if (running) progress_->setValue(0);
}

void PlanView::start() {
  if (!doc_->last_good()) {
    status_->setText(tr("<span style='color:#c62828'>Fix the scenario first.</span>"));
    emit finished();
    return;
  }
  auto fail = [this](const Diagnostics& diags) {
    QStringList lines;
    for (const auto& d : diags) lines << QString::fromStdString(d.where + ": " + d.message).toHtmlEscaped();
    status_->setText(QStringLiteral("<span style='color:#c62828'>%1</span>").arg(lines.join(QStringLiteral("<br>"))));
    emit finished();
  };
  const data::ParsedScenario base = *doc_->last_good();
  sim::SearchRequest request;
  request.base = base.scenario;
  request.objective = *sim::objective_from_string(objective_->currentData().toString().toStdString());
  request.space = *sim::layout_space_from_string(space_->currentData().toString().toStdString());
  request.top_k = 200;  // every shape's best layout: the points of the scatter
  request.one_plan_per_shape = true;
  if (auto n = data::parse_node_counts(nodes_->text().trimmed().toStdString(), "Nodes"); !n) {
    return fail(n.error());
  } else {
    request.node_counts = std::move(*n);
  }
  bool ok = true;
  if (!deadline_->text().trimmed().isEmpty()) {
    const double d = deadline_->text().toDouble(&ok);
    if (!ok || !(d > 0)) return fail({{Diagnostic::Severity::error, "Deadline", "must be a number of days > 0; got \"" + deadline_->text().toStdString() + "\""}});
    request.deadline = units::seconds(d * 86400.0);
  }
  if (!budget_->text().trimmed().isEmpty()) {
    auto b = data::parse_si(budget_->text().trimmed().toStdString());
    // In the scenario's currency, as its prices are; the planner ranks in US dollars.
    const sim::Currency& currency = base.scenario.pricing.currency;
    if (!b || !(*b > 0)) return fail({{Diagnostic::Severity::error, "Budget", "must be a number of " + currency.code + " > 0 (e.g. 2.5M); got \"" + budget_->text().toStdString() + "\""}});
    request.budget = units::usd(*b * currency.usd_per_unit);
  }
  data::OfferingFilter filter;
  filter.instances = split_list(instances_->text());
  filter.gpus = split_list(gpus_->text());
  from_catalog_ = !filter.instances.empty() || !filter.gpus.empty();
  offering_notes_.clear();
  if (from_catalog_) {
    auto list = data::offerings_from_catalog(doc_->catalogs(), filter);
    if (!list) return fail(list.error());
    request.offerings = std::move(list->offerings);
    for (const auto& n : list->notes) offering_notes_ << QString::fromStdString(n);
    for (const auto& f : list->findings) offering_notes_ << finding_text(f);
    // The scenario's pricing and purchase terms for its own instance; catalog prices for the others.
    for (const auto& f : data::apply_scenario_pricing(request.offerings, request.base, doc_->has("/pricing"))) {
      offering_notes_ << finding_text(f);
    }
  }
  if (profile_) request.cost_model = data::cost_model_factory(profile_);  // as estimate --profile
  if (bands_) request.error_band = *bands_;  // as search: the note on an optimistic regime
  set_running(true);
  status_->setText(tr("Searching… (cost model: %1)").arg(cost_label_.toHtmlEscaped()));
  runner_.start(base, std::move(request));
}

void PlanView::cancel() { runner_.cancel(); }

void PlanView::set_profile(std::shared_ptr<const sim::Profile> profile, const QString& label) {
  profile_ = std::move(profile);
  cost_label_ = label;
}

void PlanView::on_finished(const std::shared_ptr<const PlanSnapshot>& snapshot) {
  set_running(false);
  if (!snapshot->errors.isEmpty()) {
    QStringList lines;
    for (const auto& e : snapshot->errors) lines << e.toHtmlEscaped();
    status_->setText(QStringLiteral("<span style='color:#c62828'>%1</span>").arg(lines.join(QStringLiteral("<br>"))));
    emit finished();
    return;
  }
  if (snapshot->cancelled) {
    status_->setText(tr("Cancelled."));
    progress_->setValue(0);
    emit finished();
    return;
  }
  progress_->setValue(1000);
  const sim::SearchResult& r = *snapshot->result;
  const QString priced_by = r.plans.empty() ? cost_label_ : QString::fromStdString(r.plans.front().estimate.step.cost_model);
  status_->setText(tr("%1 configurations on %2 shapes in %3 s (%4 threads; cost model: %5). Click a point or "
                       "double-click a plan to load it into the editor.")
                       .arg(count_text(static_cast<double>(r.configurations_evaluated)))
                       .arg(r.stats.shapes)
                       .arg(fixed_text(r.elapsed_s, 2))
                       .arg(r.stats.threads)
                       .arg(priced_by.toHtmlEscaped()));
  model_.set_snapshot(snapshot);
  table_->resizeColumnsToContents();
  QString text = QStringLiteral("<b>%1</b><br>").arg(purchase_summary(r).toHtmlEscaped());
  const sim::SearchRequest& request = snapshot->request;
  if (r.failure) {
    text += QStringLiteral("<b style='color:#c62828'>%1</b><br>")
                .arg(failure_text(*r.failure, request).toHtmlEscaped());
  }
  if (const QString why = explanation_text(r, request); !why.isEmpty()) {
    text += QStringLiteral("<b>%1</b> ").arg(tr("Why #1:")) + why.toHtmlEscaped();
  }
  if (const sim::Plan* chosen = sim::chosen_plan(r)) {
    for (const auto& u : r.runner_ups) {
      text += QStringLiteral("<br>• ") + runner_up_text(u, *chosen).toHtmlEscaped();
    }
  }
  for (const auto& n : offering_notes_) text += QStringLiteral("<br><i>note: ") + n.toHtmlEscaped() + "</i>";
  for (const auto& n : r.notes) text += QStringLiteral("<br><i>note: ") + finding_text(n).toHtmlEscaped() + "</i>";
  explanation_->setText(text);
  fill_chart();
  emit finished();
}

void PlanView::fill_chart() {
  QChart* chart = chart_view_->chart();
  chart->removeAllSeries();
  for (auto* axis : chart->axes()) {
    chart->removeAxis(axis);
    delete axis;
  }
  const PlanSnapshot* snap = model_.snapshot();
  if (snap == nullptr || !snap->result) return;
  const auto& r = *snap->result;
  const std::vector<const sim::Plan*> shown = model_.shown_plans();  // the table's rows
  double max_cost = 0;
  double max_days = 0;
  int unpriced = 0;
  for (const sim::Plan* shown_plan : shown) {
    const sim::Plan& p = *shown_plan;
    if (p.price_known && sim::plan_cost(p.estimate)) max_cost = std::max(max_cost, sim::plan_cost(p.estimate)->base());
    max_days = std::max(max_days, units::to_days(sim::plan_time(p.estimate)));
    if (!p.price_known) ++unpriced;
  }
  // Costs in the plans' currency when they share one (a CNY-priced scenario reads in CNY), else
  // in US dollars, the currency plans are ranked in.
  sim::Currency currency;
  bool first_priced = true;
  for (const sim::Plan* shown_plan : shown) {
    const sim::Plan& p = *shown_plan;
    if (!p.price_known || !sim::plan_cost(p.estimate)) continue;
    if (first_priced) currency = p.currency;
    if (!(p.currency == currency)) currency = sim::Currency{};
    first_priced = false;
  }
  max_cost = data::from_usd(max_cost, currency);
  const double scale = max_cost >= 1e6 ? 1e6 : max_cost >= 1e3 ? 1e3 : 1.0;
  const QString suffix = scale == 1e6 ? QStringLiteral("M") : scale == 1e3 ? QStringLiteral("k") : QString();
  const double per_usd = data::from_usd(1.0, currency) / scale;  // axis units per US dollar

  auto* x = new QValueAxis();
  x->setTitleText(tr("expected days to train (with failures)"));
  nice_axis(x, max_days > 0 ? max_days * 1.05 : 1.0);
  auto* y = new QValueAxis();
  y->setTitleText(tr("total cost (%1)").arg(QString::fromStdString(currency.code)));
  nice_axis(y, max_cost > 0 ? max_cost / scale * 1.05 : 1.0, suffix);
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);

  // One scatter series per offering, in the order offerings first appear among the plans.
  std::map<std::string, QScatterSeries*> by_offering;
  int color = 0;
  for (size_t row = 0; row < shown.size(); ++row) {
    const sim::Plan& p = *shown[row];
    if (!p.price_known || !sim::plan_cost(p.estimate)) continue;
    const std::string key = offering_text(p).toStdString();
    auto& s = by_offering[key];
    if (s == nullptr) {
      s = new QScatterSeries();
      s->setName(QString::fromStdString(key));
      s->setMarkerSize(9);
      s->setColor(offering_color(color++));
      s->setBorderColor(Qt::white);
      chart->addSeries(s);
      s->attachAxis(x);
      s->attachAxis(y);
      const double x_span = std::max(max_days, 1e-9);
      const double y_span = std::max(max_cost / scale, 1e-9);
      connect(s, &QScatterSeries::clicked, this, [this, key, per_usd, x_span, y_span](const QPointF& pt) {
        // The plan of this offering nearest to the clicked point (distances relative to the axes).
        int best = -1;
        double best_d = std::numeric_limits<double>::max();
        const std::vector<const sim::Plan*> plans = model_.shown_plans();
        for (size_t i = 0; i < plans.size(); ++i) {
          const auto& q = *plans[i];
          if (offering_text(q).toStdString() != key || !q.price_known || !sim::plan_cost(q.estimate)) continue;
          const double dx = (units::to_days(sim::plan_time(q.estimate)) - pt.x()) / x_span;
          const double dy = (sim::plan_cost(q.estimate)->base() * per_usd - pt.y()) / y_span;
          const double d = dx * dx + dy * dy;
          if (d < best_d) {
            best_d = d;
            best = static_cast<int>(i);
          }
        }
        if (best >= 0) load_plan(best);
      });
    }
    s->append(units::to_days(sim::plan_time(p.estimate)), sim::plan_cost(p.estimate)->base() * per_usd);
  }
  // The Pareto front: a line through its points, fastest first, and ringed markers.
  if (!r.pareto.empty()) {
    auto* line = new QLineSeries();
    line->setName(tr("Pareto front"));
    QPen pen(QColor(0x222222));
    pen.setWidthF(2.0);
    pen.setStyle(Qt::DashLine);
    line->setPen(pen);
    auto* ring = new QScatterSeries();
    ring->setMarkerSize(16);
    ring->setColor(Qt::transparent);
    ring->setBorderColor(QColor(0x222222));
    QPen ring_pen(QColor(0x222222));
    ring_pen.setWidthF(2.0);
    ring->setPen(ring_pen);
    for (const auto& p : r.pareto) {
      if (!sim::plan_cost(p.estimate)) continue;
      line->append(units::to_days(sim::plan_time(p.estimate)), sim::plan_cost(p.estimate)->base() * per_usd);
      ring->append(units::to_days(sim::plan_time(p.estimate)), sim::plan_cost(p.estimate)->base() * per_usd);
    }
    chart->addSeries(line);
    line->attachAxis(x);
    line->attachAxis(y);
    chart->addSeries(ring);
    ring->attachAxis(x);
    ring->attachAxis(y);
    for (auto* marker : chart->legend()->markers(ring)) marker->setVisible(false);
  }
  chart->setTitle(tr("Cost vs time to train (%1 plans%2)")
                      .arg(shown.size())
                      .arg(unpriced > 0 ? tr("; %1 without a price not drawn").arg(unpriced) : QString()));
}

void PlanView::load_plan(int row) {
  const sim::Plan* p = model_.plan(row);
  const PlanSnapshot* snap = model_.snapshot();
  if (p == nullptr || snap == nullptr) return;
  // The scenario's pricing is its own instance's (apply_scenario_pricing): on another offering, ask
  // before it either moves there or is dropped.
  const sim::Cluster& own = snap->base.scenario.cluster;
  const bool own_offering = p->instance_id.empty() ? own.instance_id.empty() && p->gpu_id == own.gpu.id
                                                   : p->instance_id == own.instance_id;
  bool drop_pricing = false;
  if (!own_offering && doc_->has("/pricing")) {
    const QString from = QString::fromStdString(own.instance_id.empty() ? own.gpu.id : own.instance_id);
    const QString text =
        tr("The scenario's pricing (%1 terms, prices in %2) is for %3; this plan runs on %4, priced %5.\n\n"
           "Yes: keep your pricing section for %4. No: remove it and use the catalog's on-demand price.")
            .arg(purchase_text(snap->base.scenario.pricing.model),
                 QString::fromStdString(snap->base.scenario.pricing.currency.code), from, offering_text(*p),
                 QString::fromStdString(p->price_source.empty() ? std::string("without a price") : p->price_source));
    const auto answer =
        ask_ ? ask_(tr("Keep the scenario's pricing?"), text)
             : QMessageBox::question(this, tr("Keep the scenario's pricing?"), text,
                                     QMessageBox::Yes | QMessageBox::No | QMessageBox::Cancel, QMessageBox::Yes);
    if (answer != QMessageBox::Yes && answer != QMessageBox::No) return;  // cancelled: nothing changes
    drop_pricing = answer == QMessageBox::No;
  }
  const int count = p->instance_id.empty() ? p->gpus : p->nodes;
  doc_->apply_plan(p->instance_id, p->gpu_id, count, p->estimate.layout.strategy);
  if (drop_pricing) doc_->erase("/pricing");
  emit plan_chosen();
}

}  // namespace capplan::gui
