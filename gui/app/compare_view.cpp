// SPDX-License-Identifier: Apache-2.0
#include "compare_view.hpp"

#include "capplan/sim/search/search.hpp"

#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QVBoxLayout>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSeries>
#include <QtCharts/QBarSet>
#include <QtCharts/QValueAxis>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include "capplan/data/currency.hpp"
#include "capplan/data/input_file.hpp"
#include "capplan/data/scenario_io.hpp"
#include "capplan/gui/format.hpp"
#include "charts.hpp"

namespace capplan::gui {

CompareView::CompareView(ScenarioDocument* doc, std::shared_ptr<const sim::ResidualTable> bands, QWidget* parent)
    : QWidget(parent), doc_(doc), bands_(std::move(bands)) {
  auto* layout = new QVBoxLayout(this);
  auto* bar = new QHBoxLayout();
  auto* add_current = new QPushButton(tr("Add current scenario"), this);
  add_current->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+A")));
  add_current->setToolTip(tr("Adds the editor's scenario as a column (Ctrl+Shift+A)"));
  auto* add_file = new QPushButton(tr("Add scenario file…"), this);
  auto* remove = new QPushButton(tr("Remove column"), this);
  auto* clear_all = new QPushButton(tr("Clear"), this);
  bar->addWidget(add_current);
  bar->addWidget(add_file);
  bar->addWidget(remove);
  bar->addWidget(clear_all);
  bar->addStretch(1);
  auto* hint = new QLabel(tr("2 to 4 scenarios; deltas are against column A."), this);
  hint->setStyleSheet(QStringLiteral("color: #4a5568;"));
  bar->addWidget(hint);
  layout->addLayout(bar);
  connect(add_current, &QPushButton::clicked, this, &CompareView::add_current);
  connect(add_file, &QPushButton::clicked, this, &CompareView::add_file);
  connect(remove, &QPushButton::clicked, this, &CompareView::remove_selected);
  connect(clear_all, &QPushButton::clicked, this, &CompareView::clear);

  table_ = new QTableView(this);
  table_->setModel(&model_);
  table_->setWordWrap(true);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectColumns);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  table_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setDefaultAlignment(Qt::AlignRight | Qt::AlignVCenter);
  table_->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents);
  table_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Maximum);
  layout->addWidget(table_);

  auto* charts = new QHBoxLayout();
  time_view_ = make_chart_view(tr("Expected days to train (with failures)"), this);
  cost_view_ = make_chart_view(tr("Total cost"), this);
  charts->addWidget(time_view_);
  charts->addWidget(cost_view_);
  layout->addLayout(charts, 1);

  connect(&watcher_, &QFutureWatcher<std::vector<CompareModel::Column>>::finished, this, &CompareView::show_results);
}

bool CompareView::add(const QString& label, const nlohmann::json& document, const QString& file) {
  if (slots_.size() >= static_cast<size_t>(CompareModel::kMaxScenarios)) return false;
  slots_.push_back({label, document, file});
  recompute();
  return true;
}

void CompareView::add_current() {
  QString label = doc_->file_path().isEmpty() ? tr("editor") : QFileInfo(doc_->file_path()).completeBaseName();
  if (const auto& g = doc_->last_good()) {
    const auto& c = g->scenario.cluster;
    label = c.instance_id.empty() ? QStringLiteral("%1 x %2").arg(c.gpus).arg(QString::fromStdString(c.gpu.id))
                                  : QStringLiteral("%1 x %2").arg(c.nodes()).arg(QString::fromStdString(c.instance_id));
  }
  if (!add(label, doc_->document(), doc_->file_path())) {
    QMessageBox::information(this, tr("Compare"), tr("At most %1 scenarios; remove one first.").arg(CompareModel::kMaxScenarios));
  }
}

void CompareView::add_file() {
  const QString file = QFileDialog::getOpenFileName(this, tr("Add scenario to compare"), QString(),
                                                    tr("Scenario files (*.json);;All files (*)"));
  if (file.isEmpty()) return;
  // The CLI's bounded reader and parser (size, nesting depth, NUL bytes, duplicate keys).
  auto text = data::read_input_file(file.toStdString());
  if (!text) {
    QMessageBox::warning(this, tr("Compare"), tr("Cannot read %1: %2").arg(file, QString::fromStdString(text.error())));
    return;
  }
  auto doc = data::parse_scenario_document(*text, "scenario");
  if (!doc) {
    QMessageBox::warning(this, tr("Compare"), tr("%1 is not valid JSON: %2")
                                                   .arg(file, QString::fromStdString(doc.error().front().message)));
    return;
  }
  add(QFileInfo(file).completeBaseName(), *doc, file);
}

void CompareView::set_profile(std::shared_ptr<const sim::Profile> profile) {
  profile_ = std::move(profile);
  if (!slots_.empty()) recompute();
}

void CompareView::remove_selected() {
  const auto cols = table_->selectionModel() ? table_->selectionModel()->selectedColumns() : QModelIndexList();
  int col = cols.isEmpty() ? static_cast<int>(slots_.size()) - 1 : cols.front().column();
  if (col < 0 || col >= static_cast<int>(slots_.size())) return;
  slots_.erase(slots_.begin() + col);
  recompute();
}

void CompareView::clear() {
  slots_.clear();
  recompute();
}

void CompareView::recompute() {
  if (watcher_.isRunning()) {
    again_ = true;
    return;
  }
  // Parse and estimate every column on a worker, through the Estimate tab's code path: the document
  // read with its price sheet and purchase terms (ScenarioDocument::parse), then the estimate with
  // the same error bands and calibration profile (EstimateRunner::compute).
  auto catalogs = doc_->catalogs_ptr();
  auto bands = bands_;
  auto profile = profile_;
  std::vector<Slot> items = slots_;
  watcher_.setFuture(QtConcurrent::run([catalogs, bands, profile, items]() {
    std::vector<CompareModel::Column> cols;
    for (const auto& s : items) {
      CompareModel::Column c;
      c.label = s.label;
      auto parsed = ScenarioDocument::parse(s.document, *catalogs, s.file);
      if (!parsed) {
        c.problem = QString::fromStdString(parsed.error().front().where + ": " + parsed.error().front().message);
      } else if (auto out = EstimateRunner::compute(*parsed, bands.get(), profile.get())) {
        c.snapshot = std::move(*out);
      } else {
        c.problem = QString::fromStdString(out.error().front().where + ": " + out.error().front().message);
      }
      cols.push_back(std::move(c));
    }
    return cols;
  }));
}

void CompareView::show_results() {
  if (again_) {
    again_ = false;
    recompute();
    return;
  }
  model_.set_columns(watcher_.result());
  table_->resizeRowsToContents();

  // Bar charts: one bar per scenario, labelled A, B, C, D.
  // `convert` turns a metric's raw value into the bar's (the cost into the chart's currency and scale).
  auto fill = [this](QChart* chart, CompareModel::Metric metric, const std::function<double(double)>& convert,
                     const QString& unit) {
    chart->removeAllSeries();
    for (auto* axis : chart->axes()) {
      chart->removeAxis(axis);
      delete axis;
    }
    auto* series = new QBarSeries();
    auto* set = new QBarSet(CompareModel::metric_label(metric));
    set->setColor(metric == CompareModel::kCost ? QColor(0x009E73) : QColor(0x0072B2));
    QStringList cats;
    double max = 0;
    for (size_t i = 0; i < model_.columns().size(); ++i) {
      const auto& c = model_.columns()[i];
      cats << QString(QChar(u'A' + static_cast<int>(i)));
      const auto v = c.snapshot ? CompareModel::value(*c.snapshot, metric) : std::nullopt;
      set->append(v ? convert(*v) : 0.0);
      if (v) max = std::max(max, convert(*v));
    }
    set->setLabelColor(Qt::black);
    series->append(set);
    series->setLabelsVisible(true);
    series->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
    series->setLabelsFormat(QStringLiteral("@value"));
    series->setLabelsPrecision(3);
    chart->addSeries(series);
    auto* x = new QBarCategoryAxis();
    x->append(cats);
    chart->addAxis(x, Qt::AlignBottom);
    series->attachAxis(x);
    auto* y = new QValueAxis();
    nice_axis(y, max > 0 ? max * 1.12 : 1.0);  // room for the value labels
    y->setTitleText(unit);
    chart->addAxis(y, Qt::AlignLeft);
    series->attachAxis(y);
    chart->legend()->hide();
  };
  fill(time_view_->chart(), CompareModel::kTimeToTrain, [](double days) { return days; }, tr("days"));
  // The cost in the currency the priced scenarios are priced in (US dollars when they differ).
  std::optional<sim::Currency> currency;
  bool mixed = false;
  double max_cost = 0;
  for (const auto& c : model_.columns()) {
    if (!c.snapshot) continue;
    const auto cost = sim::plan_cost(c.snapshot->estimate);
    if (!cost) continue;  // no bar: its currency says nothing
    const sim::Currency& own = c.snapshot->scenario.scenario.pricing.currency;
    if (currency && !(*currency == own)) mixed = true;
    if (!currency) currency = own;
    max_cost = std::max(max_cost, cost->base());
  }
  const sim::Currency shown = currency && !mixed ? *currency : sim::Currency{};
  const QString code = QString::fromStdString(shown.code);
  const bool millions = data::from_usd(max_cost, shown) >= 1e6;
  const double scale = millions ? 1e6 : 1e3;
  fill(cost_view_->chart(), CompareModel::kCost, [shown, scale](double usd) { return data::from_usd(usd, shown) / scale; },
       millions ? tr("million %1 (missing bar: no price)").arg(code) : tr("thousand %1 (missing bar: no price)").arg(code));
  cost_view_->chart()->setTitle(millions ? tr("Total cost (million %1)").arg(code) : tr("Total cost (thousand %1)").arg(code));
  emit updated();
}

}  // namespace capplan::gui
