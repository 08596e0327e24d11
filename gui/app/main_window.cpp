// SPDX-License-Identifier: Apache-2.0
#include "main_window.hpp"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFont>
#include <QFontDatabase>
#include <QKeySequence>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QStatusBar>

#include "capplan/data/input_file.hpp"
#include "capplan/data/scenario_io.hpp"
#include "capplan/gui/format.hpp"
#include "charts.hpp"
#include "compare_view.hpp"
#include "plan_view.hpp"
#include "results_view.hpp"
#include "scenario_editor.hpp"
#include "serve_view.hpp"
#include "tco_view.hpp"
#include "view_text.hpp"
#include "wheel_guard.hpp"

namespace capplan::gui {

namespace {

constexpr int kMaxRecent = 8;

QString diagnostics_text(const Diagnostics& diags) {
  QStringList lines;
  for (const auto& d : diags) lines << QString::fromStdString(d.where + ": " + d.message);
  return lines.join(QLatin1Char('\n'));
}

}  // namespace

MainWindow::MainWindow(std::shared_ptr<const data::Catalogs> catalogs, std::shared_ptr<const sim::ResidualTable> bands,
                       QWidget* parent)
    : QMainWindow(parent), bands_(std::move(bands)) {
  install_wheel_guard();
  // Chinese instance and model names (Tencent, Alibaba) need a CJK font: fontconfig falls back to
  // an installed one (fonts-wqy-microhei, scripts/install_deps.sh); the substitution names it for
  // the application font as well, where Qt resolves fonts without fontconfig.
  static const bool cjk_fallback = [] {
    const QStringList cjk = QFontDatabase::families(QFontDatabase::SimplifiedChinese);
    if (!cjk.isEmpty()) QFont::insertSubstitution(QApplication::font().family(), cjk.front());
    return !cjk.isEmpty();
  }();
  (void)cjk_fallback;
  doc_ = new ScenarioDocument(std::move(catalogs), this);
  runner_ = new EstimateRunner(bands_, this);

  tabs_ = new QTabWidget(this);
  splitter_ = new QSplitter(Qt::Horizontal, tabs_);
  editor_ = new ScenarioEditor(doc_, splitter_);
  results_ = new ResultsView(splitter_);
  splitter_->addWidget(editor_);
  splitter_->addWidget(results_);
  splitter_->setStretchFactor(0, 0);
  splitter_->setStretchFactor(1, 1);
  splitter_->setSizes({540, 960});
  tabs_->addTab(splitter_, tr("&Estimate"));
  plan_ = new PlanView(doc_, bands_, tabs_);
  tabs_->addTab(plan_, tr("&Plan"));
  compare_ = new CompareView(doc_, bands_, tabs_);
  tabs_->addTab(compare_, tr("&Compare"));
  tco_ = new TcoView(doc_, tabs_);
  tabs_->addTab(tco_, tr("&Own vs rent"));
  serve_ = new ServeView(doc_->catalogs_ptr(), tabs_);
  tabs_->addTab(serve_, tr("Se&rve"));
  setCentralWidget(tabs_);

  status_source_ = new QLabel(this);
  status_timing_ = new QLabel(this);
  statusBar()->addPermanentWidget(status_timing_);
  statusBar()->addPermanentWidget(status_source_);

  connect(doc_, &ScenarioDocument::changed, this, &MainWindow::on_document_changed);
  connect(runner_, &EstimateRunner::finished, this, &MainWindow::on_result);
  connect(runner_, &EstimateRunner::failed, this, [this](const QStringList& messages, quint64) {
    results_->show_problem(messages);
    editor_->show_estimate_errors(messages);
  });
  connect(runner_, &EstimateRunner::busy_changed, results_, &ResultsView::show_computing);
  connect(plan_, &PlanView::plan_chosen, this, [this] { show_tab(kEstimateTab); });
  connect(editor_, &ScenarioEditor::calibration_profile_chosen, this, [this](const QString& path) { load_profile(path); });
  connect(editor_, &ScenarioEditor::datasheet_chosen, this, &MainWindow::use_datasheet);

  build_menus();
  resize(1500, 960);
  rebuild_recent_menu();
  on_document_changed();
}

void MainWindow::restore_settings() {
  QSettings settings;
  if (!settings.contains(QStringLiteral("window/geometry"))) return;
  restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
  restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
  splitter_->restoreState(settings.value(QStringLiteral("window/splitter")).toByteArray());
  tabs_->setCurrentIndex(settings.value(QStringLiteral("window/tab"), 0).toInt());
}

void MainWindow::build_menus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  auto* act_new = file->addAction(tr("&New (built-in example)"), this, [this] {
    if (confirm_discard()) doc_->load_example();
    update_title();
  });
  act_new->setShortcut(QKeySequence::New);
  file->addAction(tr("&Open scenario…"), this, &MainWindow::open_dialog)->setShortcut(QKeySequence::Open);
  recent_menu_ = file->addMenu(tr("Open &recent"));
  file->addAction(tr("&Save"), this, [this] { save_dialog(false); })->setShortcut(QKeySequence::Save);
  file->addAction(tr("Save &as…"), this, [this] { save_dialog(true); })->setShortcut(QKeySequence::SaveAs);
  file->addSeparator();
  file->addAction(tr("&Export results (JSON/CSV)…"), this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export results"), QStringLiteral("estimate.json"),
                                                      tr("JSON (*.json);;CSV (*.csv)"));
    if (path.isEmpty()) return;
    if (const QString err = export_results(path); !err.isEmpty()) QMessageBox::warning(this, tr("Export"), err);
  })->setShortcut(QKeySequence(QStringLiteral("Ctrl+E")));
  const QString chart_filter = svg_export_available() ? tr("PNG image (*.png);;SVG drawing (*.svg)")
                                                      : tr("PNG image (*.png)");
  file->addAction(tr("Export &charts (PNG/SVG)…"), this, [this, chart_filter] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export charts"), QStringLiteral("capplan.png"),
                                                      chart_filter);
    if (path.isEmpty()) return;
    if (const QString err = export_charts(path); !err.isEmpty()) QMessageBox::warning(this, tr("Export"), err);
  })->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+E")));
  file->addSeparator();
  file->addAction(tr("&Quit"), this, &QWidget::close)->setShortcut(QKeySequence::Quit);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(tr("&Estimate"), this, [this] { show_tab(kEstimateTab); })->setShortcut(QKeySequence(QStringLiteral("Ctrl+1")));
  view->addAction(tr("&Plan"), this, [this] { show_tab(kPlanTab); })->setShortcut(QKeySequence(QStringLiteral("Ctrl+2")));
  view->addAction(tr("&Compare"), this, [this] { show_tab(kCompareTab); })->setShortcut(QKeySequence(QStringLiteral("Ctrl+3")));
  view->addAction(tr("&Own vs rent"), this, [this] { show_tab(kTcoTab); })->setShortcut(QKeySequence(QStringLiteral("Ctrl+4")));
  view->addAction(tr("Se&rve"), this, [this] { show_tab(kServeTab); })->setShortcut(QKeySequence(QStringLiteral("Ctrl+5")));

  QMenu* plan = menuBar()->addMenu(tr("&Plan"));
  plan->addAction(tr("&Run planner"), this, [this] {
    show_tab(kPlanTab);
    plan_->start();
  })->setShortcut(QKeySequence(QStringLiteral("Ctrl+R")));
  plan->addAction(tr("&Cancel planner"), this, [this] { plan_->cancel(); })->setShortcut(QKeySequence(QStringLiteral("Ctrl+.")));
  plan->addAction(tr("Add current scenario to &Compare"), this, [this] {
    compare_->add_current();
    show_tab(kCompareTab);
  })->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+A")));

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About capplan"), this, [this] {
    QMessageBox::about(this, tr("About capplan"),
                       tr("<b>capplan-gui %1</b><br>Cost and capacity planner for LLM training on GPU clusters.<br>"
                          "Every number comes from the capplan libraries (sim/, data/); the desktop app only "
                          "edits scenarios and draws results.<br>Shortcuts: Ctrl+1/2/3/4/5 tabs, Ctrl+R run planner, "
                          "Ctrl+O open, Ctrl+S save, Ctrl+E export results.")
                           .arg(QStringLiteral(CAPPLAN_VERSION)));
  });
}

void MainWindow::show_tab(Tab tab) { tabs_->setCurrentIndex(static_cast<int>(tab)); }

QString MainWindow::load_profile(const QString& path) {
  auto loaded = load_profile_file(path);
  if (!loaded) {
    QStringList messages;
    for (const auto& d : loaded.error()) messages << QString::fromStdString(d.where + ": " + d.message);
    editor_->show_profile(profile_ ? &*profile_ : nullptr, messages);
    return messages.join(QLatin1Char('\n'));
  }
  profile_ = std::move(*loaded);
  runner_->set_profile(profile_->profile);
  compare_->set_profile(profile_->profile);
  plan_->set_profile(profile_->profile, profile_->label());
  serve_->set_profile(profile_->profile);
  editor_->show_profile(&*profile_);
  on_document_changed();  // re-estimate with the profile
  return {};
}

void MainWindow::use_datasheet() {
  profile_.reset();
  runner_->set_profile(nullptr);
  compare_->set_profile(nullptr);
  plan_->set_profile(nullptr, tr("datasheet model"));
  serve_->set_profile(nullptr);
  editor_->show_profile(nullptr);
  on_document_changed();
}

void MainWindow::on_document_changed() {
  update_title();
  if (doc_->valid()) {
    runner_->request(*doc_->last_good());
  } else {
    results_->show_problem(doc_->all_messages());
  }
}

void MainWindow::on_result(const EstimateSnapshot& snapshot) {
  if (doc_->valid()) results_->show_snapshot(snapshot);
  serve_->set_training(snapshot);
  editor_->show_result(snapshot);
  status_source_->setText(tr("cost model: %1").arg(snapshot.cost_model_label()));
  status_timing_->setText(tr("estimated in %1 ms").arg(fixed_text(snapshot.elapsed_ms, 1)));
}

void MainWindow::update_title() {
  const QString name = doc_->file_path().isEmpty() ? tr("untitled (built-in example)")
                                                   : QFileInfo(doc_->file_path()).fileName();
  setWindowTitle(QStringLiteral("%1%2 — capplan").arg(name, doc_->modified() ? QStringLiteral("*") : QString()));
}

QString MainWindow::open_file(const QString& path) {
  auto text = data::read_input_file(path.toStdString());  // the CLI's bounded reader
  if (!text) return tr("scenario file '%1': %2").arg(path, QString::fromStdString(text.error()));
  auto loaded = doc_->load_text(*text);
  if (!loaded) return diagnostics_text(loaded.error());
  adopt_file(path);
  return {};
}

QString MainWindow::save_file(const QString& path) {
  const std::string text = doc_->to_text();
  if (QString err = write_atomically(path, QByteArray::fromStdString(text)); !err.isEmpty()) return err;
  adopt_file(path);
  return {};
}

void MainWindow::adopt_file(const QString& path) {
  doc_->set_file_path(path);
  doc_->set_modified(false);
  add_recent(path);
  update_title();
}

QString MainWindow::export_results(const QString& path) {
  const auto& snap = results_->snapshot();
  if (!snap) return tr("no result to export yet");
  const bool csv = QFileInfo(path).suffix().compare(QLatin1String("csv"), Qt::CaseInsensitive) == 0;
  const std::string text = csv ? data::estimate_to_csv(snap->estimate, snap->scenario)
                               : data::estimate_to_json(snap->estimate, snap->scenario).dump(2) + "\n";
  return write_atomically(path, QByteArray::fromStdString(text));
}

QString MainWindow::export_charts(const QString& path) {
  const QFileInfo info(path);
  const QString ext = info.suffix().isEmpty() ? QStringLiteral("png") : info.suffix();
  const QString base = info.dir().filePath(info.completeBaseName());
  if (QString err = export_chart(results_->breakdown_view(), base + QStringLiteral("-breakdown.") + ext); !err.isEmpty()) {
    return err;
  }
  return export_chart(results_->memory_view(), base + QStringLiteral("-memory.") + ext);
}

int MainWindow::load_compare_example(bool from_editor) {
  compare_->clear();
  const std::pair<const char*, const char*> offerings[] = {
      {"aws-p5.48xlarge", "AWS p5 (H100)"},
      {"tencent-hccpnv5", "Tencent HCC PNV5 (H800)"},
      {"aws-p5en.48xlarge", "AWS p5en (H200)"},
      {"gcp-a3-megagpu-8g", "GCP a3-mega (H100)"},
  };
  nlohmann::json base = from_editor ? doc_->document() : data::example_scenario();
  const QString file = from_editor ? doc_->file_path() : QString();  // its pricing.sheet is relative to it
  int nodes = 64;
  int columns = 0;
  std::string own;
  if (from_editor) {
    const QString name = doc_->file_path().isEmpty() ? tr("this scenario") : QFileInfo(doc_->file_path()).fileName();
    columns += compare_->add(name, base, file) ? 1 : 0;
    if (doc_->last_good()) {
      const sim::Cluster& c = doc_->last_good()->scenario.cluster;
      own = c.instance_id;
      nodes = std::max(1, c.nodes());
    }
    // The other offerings keep the scenario's purchase terms, currency and price sheet; the prices
    // the file gives are its own instance's and go (the catalog's, or the sheet's row, apply).
    if (base.contains("pricing") && base["pricing"].is_object()) {
      nlohmann::json& pricing = base["pricing"];
      pricing.erase("usd_per_gpu_hour");
      pricing.erase("usd_per_node_hour");
      for (const char* terms : {"spot", "reserved"}) {
        if (!pricing.contains(terms) || !pricing[terms].is_object()) continue;
        pricing[terms].erase("usd_per_gpu_hour");
        pricing[terms].erase("idle_usd_per_gpu_hour");
        if (pricing[terms].empty()) pricing.erase(terms);
      }
      if (pricing.empty()) base.erase("pricing");
    }
  }
  base.erase("name");
  for (const auto& [id, label] : offerings) {
    if (id == own) continue;
    nlohmann::json doc = base;
    doc["cluster"] = {{"instance", id}, {"nodes", nodes}};
    if (!compare_->add(QString::fromLatin1(label), doc, file)) break;  // at most CompareModel::kMaxScenarios
    ++columns;
  }
  return columns;
}

void MainWindow::start_plan_example(bool from_editor) {
  show_tab(kPlanTab);
  // A richer picture than the example's own GPU: H100 and H200 offerings of the catalog.
  if (!from_editor) {
    plan_->set_filters(QString(), QStringLiteral("h100-sxm-80gb,h200-sxm-141gb"), QStringLiteral("16,32,48,64,96,128"));
  }
  plan_->start();
}

void MainWindow::add_recent(const QString& path) {
  if (ephemeral_) return;
  QSettings settings;
  QStringList recent = settings.value(QStringLiteral("recent_files")).toStringList();
  const QString abs = QFileInfo(path).absoluteFilePath();
  recent.removeAll(abs);
  recent.prepend(abs);
  while (recent.size() > kMaxRecent) recent.removeLast();
  settings.setValue(QStringLiteral("recent_files"), recent);
  rebuild_recent_menu();
}

void MainWindow::rebuild_recent_menu() {
  recent_menu_->clear();
  const QStringList recent = QSettings().value(QStringLiteral("recent_files")).toStringList();
  int i = 1;
  for (const auto& path : recent) {
    auto* a = recent_menu_->addAction(QStringLiteral("&%1 %2").arg(i).arg(path), this, [this, path] {
      if (!confirm_discard()) return;
      if (QString err = open_file(path); !err.isEmpty()) QMessageBox::warning(this, tr("Open"), err);
    });
    if (i <= 9) a->setShortcut(QKeySequence(QStringLiteral("Alt+Shift+%1").arg(i)));
    ++i;
  }
  recent_menu_->setEnabled(!recent.isEmpty());
}

bool MainWindow::confirm_discard() {
  if (!doc_->modified() || ephemeral_) return true;
  const auto answer = QMessageBox::question(this, tr("Unsaved changes"), tr("Save the changes to this scenario?"),
                                            QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
  if (answer == QMessageBox::Cancel) return false;
  if (answer == QMessageBox::Save) return save_dialog(false);
  return true;
}

void MainWindow::open_dialog() {
  if (!confirm_discard()) return;
  const QString path = QFileDialog::getOpenFileName(this, tr("Open scenario"), QString(),
                                                    tr("Scenario files (*.json);;All files (*)"));
  if (path.isEmpty()) return;
  if (QString err = open_file(path); !err.isEmpty()) QMessageBox::warning(this, tr("Open"), err);
}

bool MainWindow::save_dialog(bool save_as) {
  QString path = doc_->file_path();
  if (save_as || path.isEmpty()) {
    path = QFileDialog::getSaveFileName(this, tr("Save scenario"), path.isEmpty() ? QStringLiteral("scenario.json") : path,
                                        tr("Scenario files (*.json)"));
    if (path.isEmpty()) return false;
  }
  if (QString err = save_file(path); !err.isEmpty()) {
    QMessageBox::warning(this, tr("Save"), err);
    return false;
  }
  return true;
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (!confirm_discard()) {
    event->ignore();
    return;
  }
  plan_->cancel();
  if (!ephemeral_) {
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    settings.setValue(QStringLiteral("window/splitter"), splitter_->saveState());
    settings.setValue(QStringLiteral("window/tab"), tabs_->currentIndex());
  }
  event->accept();
}

}  // namespace capplan::gui
