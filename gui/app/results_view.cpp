// SPDX-License-Identifier: Apache-2.0
#include "results_view.hpp"

#include <QFrame>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QTabBar>
#include <QVBoxLayout>
#include <algorithm>

#include "capplan/data/format.hpp"
#include "capplan/gui/format.hpp"
#include "charts.hpp"
#include "table_view.hpp"

namespace capplan::gui {

namespace {

QTableView* make_table(QAbstractItemModel* model, QWidget* parent) {
  auto* view = make_table_view(sort_by_value(model, parent), -1, 22, parent);
  view->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  view->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  view->horizontalHeader()->setSectionResizeMode(2, QHeaderView::ResizeToContents);
  view->setAlternatingRowColors(true);
  return view;
}

}  // namespace

ResultsView::ResultsView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);

  banner_ = new QLabel(this);
  banner_->setWordWrap(true);
  banner_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  banner_->setStyleSheet(QStringLiteral(
      "QLabel { background: #fff4e5; border: 1px solid #e0a040; border-radius: 4px; padding: 6px; color: #6b3d00; }"));
  banner_->hide();
  layout->addWidget(banner_);

  auto* head = new QHBoxLayout();
  summary_ = new QLabel(this);
  summary_->setObjectName(QStringLiteral("results:summary"));
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  source_ = new QLabel(this);
  source_->setToolTip(tr("Which cost model priced the operations: the datasheet model (roofline with published or "
                         "default efficiencies), or a calibrated profile measured on the hardware."));
  head->addWidget(summary_, 1);
  head->addWidget(source_, 0, Qt::AlignRight | Qt::AlignTop);
  layout->addLayout(head);

  auto* cards = new QHBoxLayout();
  cards->setSpacing(8);
  time_ = make_card(tr("Time to train"),
                    tr("Expected wall-clock time for all training tokens with interruptions, restarts, lost work, "
                       "checkpoints and data loading (goodput model); the steady-state time beside it (p10-p90 "
                       "from the error band)"));
  cost_ = make_card(tr("Total cost"), tr("Total cost under the purchase terms (on-demand, spot, reserved or on-premises) "
                                         "for the expected wall time, storage included; the sticker cost (GPU-hours x "
                                         "price per GPU-hour) beside it"));
  per_token_ = make_card(tr("Cost per billion tokens"), tr("Total cost / training tokens x 1e9"));
  mfu_ = make_card(tr("MFU"), tr("Model FLOPs utilisation against the dense peak of the chosen precision"));
  memory_ = make_card(tr("Memory fit"), tr("Peak memory on the most loaded GPU against its HBM capacity"));
  for (const Card* c : {&time_, &cost_, &per_token_, &mfu_, &memory_}) {
    cards->addWidget(c->title->parentWidget(), 1);
  }
  layout->addLayout(cards);

  auto* charts = new QGridLayout();
  breakdown_view_ = make_chart_view(tr("Where one step's time goes"), this);
  memory_view_ = make_chart_view(tr("Memory per GPU vs HBM capacity"), this);
  breakdown_view_->setMinimumHeight(200);
  memory_view_->setMinimumHeight(200);
  charts->addWidget(breakdown_view_, 0, 0);
  charts->addWidget(memory_view_, 0, 1);
  charts->setRowStretch(0, 1);
  // Below the charts, one table at a time: the goodput model first, then the charts' numbers.
  tables_ = new QTabWidget(this);
  goodput_table_ = make_table(&goodput_model_, tables_);
  goodput_table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  goodput_table_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  goodput_table_->horizontalHeader()->setSectionResizeMode(2, QHeaderView::Stretch);
  goodput_table_->setToolTip(tr("Goodput model (docs/model.md): interruptions at the scenario's reliability rate, "
                                "checkpoints at the Daly optimum unless reliability gives an interval, restarts, "
                                "lost work and the data-loading check"));
  breakdown_table_ = make_table(&breakdown_model_, tables_);
  memory_table_ = make_table(&memory_model_, tables_);
  tables_->addTab(goodput_table_, tr("Goodput"));
  tables_->addTab(breakdown_table_, tr("Step time"));
  tables_->addTab(memory_table_, tr("Memory"));
  charts->addWidget(tables_, 1, 0, 1, 2);
  charts->setRowStretch(1, 0);
  layout->addLayout(charts, 1);

  auto* warn_title = new QLabel(tr("<b>Warnings</b>"), this);
  layout->addWidget(warn_title);
  warnings_ = new QListView(this);
  warnings_->setModel(&warnings_model_);
  warnings_->setWordWrap(true);
  warnings_->setMaximumHeight(80);
  warnings_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  layout->addWidget(warnings_);
}

ResultsView::Card ResultsView::make_card(const QString& title, const QString& tooltip) {
  auto* frame = new QFrame(this);
  frame->setObjectName(QStringLiteral("card"));
  frame->setStyleSheet(QStringLiteral(
      "QFrame#card { background: #f7f9fc; border: 1px solid #d5dbe5; border-radius: 6px; }"));
  frame->setToolTip(tooltip);
  auto* v = new QVBoxLayout(frame);
  v->setContentsMargins(10, 8, 10, 8);
  v->setSpacing(2);
  Card c;
  c.title = new QLabel(title, frame);
  c.title->setStyleSheet(QStringLiteral("color: #4a5568;"));
  c.value = new QLabel(QStringLiteral("–"), frame);
  QFont f = c.value->font();
  f.setPointSizeF(f.pointSizeF() * 1.7);
  f.setBold(true);
  c.value->setFont(f);
  c.detail = new QLabel(frame);
  c.detail->setWordWrap(true);
  c.detail->setStyleSheet(QStringLiteral("color: #4a5568;"));
  QFont small = c.detail->font();
  small.setPointSizeF(small.pointSizeF() * 0.9);
  c.detail->setFont(small);
  v->addWidget(c.title);
  v->addWidget(c.value);
  v->addWidget(c.detail);
  v->addStretch(1);
  return c;
}

void ResultsView::show_snapshot(const EstimateSnapshot& snapshot) {
  snapshot_ = snapshot;
  banner_->hide();
  const sim::Estimate& e = snapshot.estimate;
  const auto& sc = snapshot.scenario.scenario;
  const auto& cl = sc.cluster;

  // What was estimated, and with which layout.
  const auto& p = e.layout.strategy;
  QString model = QString::fromStdString(sc.model.name.empty() ? snapshot.scenario.model_id : sc.model.name);
  QString where = QStringLiteral("%1 x %2").arg(cl.gpus).arg(QString::fromStdString(cl.gpu.name.empty() ? cl.gpu.id
                                                                                                        : cl.gpu.name));
  if (!cl.instance_id.empty()) {
    where += QStringLiteral(" (%1 x %2)").arg(cl.nodes()).arg(QString::fromStdString(cl.instance_id));
  }
  QString layout = degrees_text(p);
  layout += QStringLiteral(" · micro-batch %1 x %2 accumulation · ZeRO %3 · recompute %4")
                .arg(p.micro_batch)
                .arg(e.layout.micro_batches)
                .arg(p.zero)
                .arg(QString::fromLatin1(sim::to_string(p.recompute)));
  for (const auto& o : sim::kStrategyOptions) {
    if (o.tag != nullptr && p.*o.value) layout += QStringLiteral(" · ") + tr(o.label);
  }
  if (p.virtual_stages != 1) layout += QStringLiteral(" · %1 virtual stages").arg(p.virtual_stages);
  summary_->setText(QStringLiteral("<b>%1</b> (%2B parameters), %3, %4 on %5<br>%6%7")
                        .arg(model.toHtmlEscaped())
                        .arg(fixed_text(sc.model.total_params() / 1e9, 1))
                        .arg(tokens_text(sc.training.tokens))
                        .arg(QString::fromLatin1(sim::to_string(sc.training.precision)))
                        .arg(where.toHtmlEscaped())
                        .arg(layout)
                        .arg(e.layout.chosen_by_capplan
                                 ? tr(" <i>(chosen by capplan from %1 layouts)</i>")
                                       .arg(count_text(static_cast<double>(e.layout.configurations_evaluated)))
                                 : QString()));
  const QString source = snapshot.cost_model_label();
  const bool calibrated = source.startsWith(QLatin1String("calibrated"));
  source_->setText(calibrated ? tr("<span style='color:#1a7f37'>● %1</span>").arg(source.toHtmlEscaped())
                              : tr("<span style='color:#555'>○ %1 (not calibrated)</span>").arg(source));

  // Cards.
  auto range = [](const std::optional<sim::Interval>& i, auto text) {
    return i ? QStringLiteral("%1–%2").arg(text(i->low), text(i->high)) : tr("no error band");
  };
  const sim::Goodput& g = e.goodput;
  // Each card's band is the band of the figure it shows: with goodput modelled, the expected time
  // and total cost with failures (not the steady-state ones).
  const std::optional<sim::Interval>& days_band = g.modelled ? e.uncertainty.wall_days : e.uncertainty.time_to_train_days;
  // The band in the headline's unit, as the CLI prints it (data::format::duration).
  const double headline_days = units::to_days(g.modelled && g.finite ? g.wall : e.totals.time_to_train);
  const QString band =
      range(days_band, [headline_days](double d) { return duration_number(d, headline_days); }) +
      (days_band ? QStringLiteral(" ") + QString::fromLatin1(data::format::duration_unit(headline_days).name) +
                       tr(" (p10–p90)")
                 : QString());
  const QString steps = tr("%1 steps of %2").arg(count_text(e.totals.steps), seconds_text(e.step.time.base()));
  if (g.modelled) {
    // Headline: the expected time with failures, restarts and checkpoints; steady state beside it.
    time_.value->setText(g.finite ? duration_text(units::to_days(g.wall)) : tr("unbounded"));
    time_.detail->setText(tr("expected, with failures (goodput %1)\nband %3 · steady state %2\n%4")
                              .arg(percent_text(g.fraction), duration_text(units::to_days(e.totals.time_to_train)), band, steps));
  } else {
    time_.value->setText(duration_text(units::to_days(e.totals.time_to_train)));
    time_.detail->setText(band + QStringLiteral("\n") + steps);
  }
  const sim::Currency& cur = sc.pricing.currency;  // costs shown in the currency the user priced in
  QString price = e.totals.price_per_gpu ? money_text(units::to_usd_per_hour(*e.totals.price_per_gpu), cur) + tr(" per GPU-hour") : QString();
  const QString price_source = QString::fromStdString(cl.price_source);
  if (e.totals.price_per_gpu) {
    // Where the price comes from: the catalog, the price sheet the scenario names, or the file's own.
    if (price_source.startsWith(QLatin1String("catalog"))) {
      price += tr(" (catalog)");
    } else if (price_source.startsWith(QLatin1String("price sheet"))) {
      price += tr(" (price sheet)");
    } else {
      price += tr(" (your override)");
    }
  }
  cost_.detail->setToolTip(tr("Price source: %1").arg(price_source));
  if (g.modelled) {
    const sim::CostBreakdown& c = g.cost;
    const QString terms = QString::fromLatin1(sim::to_string(c.model)).replace(QLatin1Char('_'), QLatin1Char('-'));
    const QString sticker = e.totals.cost ? tr("sticker %1").arg(money_text(e.totals.cost->base(), cur)) : tr("sticker unknown");
    if (c.total) {
      cost_.value->setText(money_text(c.total->base(), cur));
      cost_.detail->setText(tr("total, %1 · band %3\n%2\n%4")
                                .arg(terms, sticker,
                                     range(e.uncertainty.total_cost_usd, [&cur](double d) { return money_text(d, cur); }),
                                     price));
    } else {
      cost_.value->setText(tr("unknown"));
      QStringList missing;
      for (const auto& m : c.missing) missing << QString::fromStdString(m);
      cost_.detail->setText(tr("%1 terms need: %2\n%3 (%4 GPU-hours)")
                                .arg(terms, missing.isEmpty() ? tr("a price") : missing.join(QStringLiteral(", ")),
                                     sticker, count_text(e.totals.gpu_hours)));
    }
  } else if (e.totals.cost) {
    cost_.value->setText(money_text(e.totals.cost->base(), cur));
    cost_.detail->setText(range(e.uncertainty.cost_usd, [&cur](double d) { return money_text(d, cur); }) +
                          (e.uncertainty.cost_usd ? tr(" (p10–p90)") : QString()) + QStringLiteral("\n") + price);
  } else {
    cost_.value->setText(tr("unknown"));
    cost_.detail->setText(tr("no price for this offering in the catalog: set a price override (%1 GPU-hours)")
                              .arg(count_text(e.totals.gpu_hours)));
  }
  if (auto per = snapshot.usd_per_billion_tokens()) {
    per_token_.value->setText(money_text(*per, cur));
  } else {
    per_token_.value->setText(tr("unknown"));
  }
  per_token_.detail->setText(tr("%1 GPU-hours\n%2/s (%3 per GPU)")
                                 .arg(count_text(e.totals.gpu_hours), tokens_text(e.step.tokens_per_s),
                                      count_text(cl.gpus > 0 ? e.step.tokens_per_s / cl.gpus : 0)));
  mfu_.value->setText(percent_text(e.step.mfu));
  QString mfu_detail = tr("%1 TFLOP/s per GPU (model)\nHFU %2")
                           .arg(fixed_text(units::to_tflop_per_s(e.step.model_flops_per_gpu), 0))
                           .arg(percent_text(e.step.hfu));
  if (sc.training.precision == sim::Precision::fp8) {
    mfu_detail += tr(" · of the FP8 peak; %1 of BF16").arg(percent_text(e.step.mfu_bf16_peak));
  }
  mfu_.detail->setText(mfu_detail);
  const auto& m = e.memory;
  memory_.value->setText(QStringLiteral("%1 / %2").arg(gib_text(m.total().base()), gib_text(m.capacity.base())));
  switch (memory_fit(m)) {
    case MemoryFit::fits:
      memory_.value->setStyleSheet(QStringLiteral("color: #1a7f37;"));
      memory_.detail->setText(tr("fits (peak on pipeline stage %1)").arg(m.stage));
      break;
    case MemoryFit::tight:
      memory_.value->setStyleSheet(QStringLiteral("color: #b26a00;"));
      memory_.detail->setText(tr("fits, tight: %1 free, less than the %2 reserve (peak on pipeline stage %3)")
                                  .arg(gib_text((m.capacity - m.total()).base()), gib_text(m.reserve.base()))
                                  .arg(m.stage));
      break;
    case MemoryFit::over:
      memory_.value->setStyleSheet(QStringLiteral("color: #c62828;"));
      memory_.detail->setText(tr("DOES NOT FIT: over by %1").arg(gib_text((m.total() - m.capacity).base())));
      break;
  }

  breakdown_model_.set_snapshot(snapshot);
  memory_model_.set_snapshot(snapshot);
  goodput_model_.set_snapshot(snapshot);
  QStringList warnings = snapshot_warnings(snapshot);
  if (warnings.isEmpty()) warnings << tr("No warnings.");
  warnings_model_.set_messages(warnings);
  // Tables as tall as the longest one's rows; the charts take the rest.
  const int rows = std::max({breakdown_model_.rowCount(), memory_model_.rowCount(), goodput_model_.rowCount()});
  const int table_h = goodput_table_->horizontalHeader()->height() + rows * goodput_table_->verticalHeader()->defaultSectionSize() +
                      2 * goodput_table_->frameWidth();
  tables_->setFixedHeight(table_h + tables_->tabBar()->sizeHint().height() + 4);
  tables_->setTabEnabled(0, goodput_model_.rowCount() > 0);
  fill_breakdown_chart(breakdown_view_->chart(), breakdown_model_);
  fill_memory_chart(memory_view_->chart(), memory_model_);
  breakdown_view_->chart()->setTitle(tr("Where one step's time goes (step %1)").arg(seconds_text(e.step.time.base())));
}

void ResultsView::show_problem(const QStringList& messages) {
  QString text = tr("<b>Input needs fixing</b>%1:<br>")
                     .arg(snapshot_ ? tr(" (the results below are the last valid ones)") : QString());
  QStringList escaped;
  for (const auto& m : messages) escaped << m.toHtmlEscaped();
  banner_->setText(text + escaped.join(QStringLiteral("<br>")));
  banner_->show();
}

void ResultsView::show_computing(bool busy) { setCursor(busy ? Qt::BusyCursor : Qt::ArrowCursor); }

}  // namespace capplan::gui
