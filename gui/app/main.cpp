// SPDX-License-Identifier: Apache-2.0
// capplan-gui: the desktop planning app.
//   capplan-gui [SCENARIO]                                     interactive
//   capplan-gui --screenshot FILE [--tab estimate|plan|compare|tco|serve] [SERVE OPTIONS] [SCENARIO]
//                                                              renders the window offscreen to PNG, exits
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTimer>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "capplan/data/catalog.hpp"
#include "capplan/data/error_bands.hpp"
#include "compare_view.hpp"
#include "main_window.hpp"
#include "plan_view.hpp"
#include "results_view.hpp"
#include "serve_view.hpp"
#include "tco_view.hpp"

namespace {

void print_error(const QString& text) { std::fprintf(stderr, "capplan-gui: error: %s\n", qPrintable(text)); }

// Runs the event loop until `done` holds or `timeout_ms` passes; false on timeout.
template <class Done>
bool wait_until(Done done, int timeout_ms) {
  QElapsedTimer t;
  t.start();
  while (!done()) {
    if (t.elapsed() > timeout_ms) return false;
    QApplication::processEvents(QEventLoop::AllEvents, 50);
  }
  return true;
}

bool wants_screenshot(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (QByteArray(argv[i]).startsWith("--screenshot")) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace capplan;
  // Screenshots render offscreen: no display needed.
  if (wants_screenshot(argc, argv) && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
  }
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("capplan"));
  QApplication::setApplicationName(QStringLiteral("capplan-gui"));
  QApplication::setApplicationVersion(QStringLiteral(CAPPLAN_VERSION));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("capplan desktop app: edit a training scenario and see time, cost, "
                                                  "memory and the cost-vs-time Pareto front"));
  parser.addHelpOption();
  parser.addVersionOption();
  QCommandLineOption screenshot(QStringLiteral("screenshot"), QStringLiteral("Render the window to FILE (PNG) and exit"),
                                QStringLiteral("FILE"));
  QCommandLineOption tab(QStringLiteral("tab"),
                         QStringLiteral("Tab to show: estimate, plan, compare, tco (own vs rent) or serve"),
                         QStringLiteral("TAB"), QStringLiteral("estimate"));
  QCommandLineOption size(QStringLiteral("size"), QStringLiteral("Window size for --screenshot (default 1500x960)"),
                          QStringLiteral("WxH"), QStringLiteral("1500x960"));
  QCommandLineOption data_dir(QStringLiteral("data-dir"), QStringLiteral("Folder with the catalogs"),
                              QStringLiteral("DIR"));
  QCommandLineOption export_results(QStringLiteral("export-results"),
                                    QStringLiteral("With --screenshot: also write the estimate as JSON or CSV (by extension)"),
                                    QStringLiteral("FILE"));
  QCommandLineOption export_charts(QStringLiteral("export-charts"),
                                   QStringLiteral("With --screenshot: also write the two charts as FILE-breakdown.EXT and "
                                                  "FILE-memory.EXT (png or svg)"),
                                   QStringLiteral("FILE"));
  QCommandLineOption profile(QStringLiteral("profile"),
                             QStringLiteral("Calibration profile (capplan calibrate --out) to price operations with, "
                                            "as capplan estimate --profile"),
                             QStringLiteral("FILE"));
  QCommandLineOption serve_scenario(QStringLiteral("serve-scenario"),
                                    QStringLiteral("Serve scenario file for the Serve tab (default: the built-in serving example)"),
                                    QStringLiteral("FILE"));
  QCommandLineOption export_serve(QStringLiteral("export-serve"),
                                  QStringLiteral("With --screenshot --tab serve: also write the serving plan as capplan serve "
                                                 "--format json writes it"),
                                  QStringLiteral("FILE"));
  QCommandLineOption export_serve_charts(QStringLiteral("export-serve-charts"),
                                         QStringLiteral("With --screenshot --tab serve: also write the Serve tab's four charts "
                                                        "as FILE-curve.EXT, -layouts, -pareto and -lifecycle"),
                                         QStringLiteral("FILE"));
  QCommandLineOption serve_instances(QStringLiteral("serve-instances"),
                                     QStringLiteral("With --tab serve: also plan on the catalog instances matching these "
                                                    "globs (capplan serve --instances)"),
                                     QStringLiteral("GLOBS"));
  parser.addOption(serve_instances);
  QCommandLineOption train_months(QStringLiteral("train-then-serve"),
                                  QStringLiteral("With --tab serve: add the Estimate tab's training and MONTHS of serving"),
                                  QStringLiteral("MONTHS"));
  parser.addOption(serve_scenario);
  parser.addOption(export_serve);
  parser.addOption(export_serve_charts);
  parser.addOption(train_months);
  parser.addOption(profile);
  parser.addOption(export_results);
  parser.addOption(export_charts);
  parser.addOption(screenshot);
  parser.addOption(tab);
  parser.addOption(size);
  parser.addOption(data_dir);
  parser.addPositionalArgument(QStringLiteral("scenario"), QStringLiteral("Scenario file (default: built-in example)"),
                               QStringLiteral("[SCENARIO]"));
  parser.process(app);

  const std::filesystem::path dir = parser.isSet(data_dir) ? std::filesystem::path(parser.value(data_dir).toStdString())
                                                           : data::default_data_dir();
  auto catalogs = data::load_catalogs(dir);
  if (!catalogs) {
    for (const auto& d : catalogs.error()) print_error(QString::fromStdString(d.where + ": " + d.message));
    return 2;
  }
  auto bands_file = data::load_error_bands(data::error_bands_path(dir));
  std::shared_ptr<const sim::ResidualTable> bands;
  if (bands_file && *bands_file) bands = std::make_shared<const sim::ResidualTable>((*bands_file)->table);

  gui::MainWindow window(std::make_shared<const data::Catalogs>(std::move(*catalogs)), bands);
  const bool shot = parser.isSet(screenshot);
  window.set_ephemeral(shot);
  const QStringList args = parser.positionalArguments();
  if (!args.isEmpty()) {
    if (const QString err = window.open_file(args.front()); !err.isEmpty()) {
      print_error(err);
      if (shot) return 2;
    }
  }
  if (parser.isSet(profile)) {
    if (const QString err = window.load_profile(parser.value(profile)); !err.isEmpty()) {
      print_error(err);
      if (shot) return 2;  // as capplan estimate --profile: invalid input
    }
  }
  if (!shot) {
    window.restore_settings();
    window.show();
    return app.exec();
  }

  // --screenshot: lay the window out at a fixed size, wait for its results, grab it.
  const QStringList wh = parser.value(size).split(QLatin1Char('x'));
  const int w = wh.size() == 2 ? wh[0].toInt() : 1500;
  const int h = wh.size() == 2 ? wh[1].toInt() : 960;
  window.resize(w > 0 ? w : 1500, h > 0 ? h : 960);
  bool refused = false;  // sim::estimate refused the scenario: the window shows its message
  QObject::connect(window.runner(), &gui::EstimateRunner::failed, &window, [&] { refused = true; });
  const QString which = parser.value(tab).toLower();
  window.show();
  constexpr int kTimeoutMs = 120000;
  if (!wait_until([&] { return window.results()->snapshot().has_value() || !window.document()->valid() || refused; },
                  kTimeoutMs)) {
    print_error(QStringLiteral("timed out waiting for the estimate"));
    return 1;
  }
  // A scenario given on the command line is what the Plan and Compare tabs show.
  const bool own_scenario = !args.isEmpty();
  if (which == QLatin1String("plan")) {
    bool done = false;
    QObject::connect(window.plan(), &gui::PlanView::finished, &window, [&] { done = true; });
    window.start_plan_example(own_scenario);
    if (!wait_until([&] { return done; }, kTimeoutMs)) {
      print_error(QStringLiteral("timed out waiting for the planner"));
      return 1;
    }
  } else if (which == QLatin1String("compare")) {
    const size_t columns = static_cast<size_t>(window.load_compare_example(own_scenario));
    window.show_tab(gui::MainWindow::kCompareTab);
    if (!wait_until([&] { return !window.compare()->busy() && window.compare()->model().columns().size() == columns; },
                    kTimeoutMs)) {
      print_error(QStringLiteral("timed out waiting for the comparison"));
      return 1;
    }
  } else if (which == QLatin1String("tco")) {
    window.show_tab(gui::MainWindow::kTcoTab);
    window.tco()->refresh();  // the scenario's own vs rent, computed at once (no worker)
  } else if (which == QLatin1String("serve")) {
    gui::ServeView* serve = window.serve();
    if (parser.isSet(serve_scenario)) {
      if (const QString err = serve->open_file(parser.value(serve_scenario)); !err.isEmpty()) {
        print_error(err);
        return 2;
      }
    }
    if (parser.isSet(train_months)) {
      bool ok = false;
      const int months = parser.value(train_months).toInt(&ok);
      if (!ok || months < 1 || months > 120) {
        print_error(QStringLiteral("--train-then-serve: expected 1 to 120 months; got ") + parser.value(train_months));
        return 2;
      }
      serve->set_train_then_serve(true, months);
    }
    if (parser.isSet(serve_instances)) serve->offerings_box()->setText(parser.value(serve_instances));
    window.show_tab(gui::MainWindow::kServeTab);
    bool failed = false;
    QObject::connect(serve->runner(), &gui::ServeRunner::failed, &window, [&] { failed = true; });
    serve->refresh();
    if (!wait_until([&] { return (serve->snapshot().has_value() || failed) && !serve->busy(); }, kTimeoutMs)) {
      print_error(QStringLiteral("timed out waiting for the serving plan"));
      return 1;
    }
    if (failed) {
      print_error(serve->summary()->text());
      return 2;
    }
  } else if (which != QLatin1String("estimate")) {
    print_error(QStringLiteral("--tab: expected estimate, plan, compare, tco or serve; got ") + which);
    return 2;
  }
  // Let the layout and the charts settle.
  QTimer::singleShot(300, &app, &QApplication::quit);
  app.exec();
  if (parser.isSet(export_results)) {
    if (const QString err = window.export_results(parser.value(export_results)); !err.isEmpty()) {
      print_error(err);
      return 1;
    }
  }
  if (parser.isSet(export_serve)) {
    if (const QString err = window.serve()->export_json(parser.value(export_serve)); !err.isEmpty()) {
      print_error(err);
      return 1;
    }
  }
  if (parser.isSet(export_serve_charts)) {
    if (const QString err = window.serve()->export_charts(parser.value(export_serve_charts)); !err.isEmpty()) {
      print_error(err);
      return 1;
    }
  }
  if (parser.isSet(export_charts)) {
    if (const QString err = window.export_charts(parser.value(export_charts)); !err.isEmpty()) {
      print_error(err);
      return 1;
    }
  }
  const QString file = parser.value(screenshot);
  if (!window.grab().save(file, "PNG")) {
    print_error(QStringLiteral("cannot write ") + file);
    return 1;
  }
  std::fprintf(stdout, "capplan-gui: wrote %s\n", qPrintable(QDir::toNativeSeparators(file)));
  return 0;
}
