// SPDX-License-Identifier: Apache-2.0
// The capplan-gui main window: Estimate, Plan, Compare and Own vs rent tabs over one ScenarioDocument,
// and the Serve tab over its own serving scenario (with the Estimate tab's training for "train, then serve").
#pragma once
#include <QLabel>
#include <QMainWindow>
#include <QMenu>
#include <QSplitter>
#include <QTabWidget>
#include <memory>
#include <optional>

#include "capplan/gui/calibration.hpp"
#include "capplan/gui/estimate_runner.hpp"
#include "capplan/gui/scenario_document.hpp"

namespace capplan::gui {

class ScenarioEditor;
class ResultsView;
class CompareView;
class PlanView;
class TcoView;
class ServeView;

class MainWindow final : public QMainWindow {
  Q_OBJECT
 public:
  enum Tab { kEstimateTab = 0, kPlanTab = 1, kCompareTab = 2, kTcoTab = 3, kServeTab = 4 };

  MainWindow(std::shared_ptr<const data::Catalogs> catalogs, std::shared_ptr<const sim::ResidualTable> bands,
             QWidget* parent = nullptr);

  ScenarioDocument* document() const { return doc_; }
  EstimateRunner* runner() const { return runner_; }
  ResultsView* results() const { return results_; }
  CompareView* compare() const { return compare_; }
  PlanView* plan() const { return plan_; }
  TcoView* tco() const { return tco_; }
  ServeView* serve() const { return serve_; }
  void show_tab(Tab tab);

  // Loads a calibration profile (`capplan estimate --profile`): validated with the CLI's parser;
  // on success the Estimate and Plan tabs price with it and the estimate is re-run; on failure the
  // messages (naming the field) are shown in the editor and the cost model in use is kept.
  // Returns the error text, empty on success.
  QString load_profile(const QString& path);
  void use_datasheet();
  const std::optional<LoadedProfile>& profile() const { return profile_; }

  // Opens a scenario file; the error text (CLI wording) when it cannot be read or parsed.
  QString open_file(const QString& path);
  QString save_file(const QString& path);
  // Results of the latest estimate as the CLI writes them (JSON or CSV by extension).
  QString export_results(const QString& path);
  // The step-time and memory charts as <base>-breakdown.<ext> and <base>-memory.<ext>.
  QString export_charts(const QString& path);
  // Fills the Compare tab with the built-in example on four offerings (for --screenshot), or with
  // `from_editor`, the editor's scenario as column A and the same job on the example's other
  // offerings under the scenario's purchase terms, currency and price sheet (the prices the file
  // gives are its own instance's: the others are priced from the sheet or the catalog).
  // Returns the number of columns.
  int load_compare_example(bool from_editor = false);
  // For --screenshot --tab plan: shows the Plan tab and starts the planner, over the editor's own
  // GPU (the tab's defaults) with `from_editor`, else over the catalog's H100 and H200 offerings.
  void start_plan_example(bool from_editor = false);
  // Window geometry, splitter and tab from the last run (QSettings).
  void restore_settings();
  // Settings are not written (screenshots, tests).
  void set_ephemeral(bool on) { ephemeral_ = on; }

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void build_menus();
  void on_document_changed();
  void on_result(const EstimateSnapshot& snapshot);
  void update_title();
  // The document now is the file at `path`, unmodified: the title and the recent files follow.
  void adopt_file(const QString& path);
  void add_recent(const QString& path);
  void rebuild_recent_menu();
  bool confirm_discard();
  void open_dialog();
  bool save_dialog(bool save_as);

  ScenarioDocument* doc_ = nullptr;
  EstimateRunner* runner_ = nullptr;
  std::optional<LoadedProfile> profile_;
  std::shared_ptr<const sim::ResidualTable> bands_;
  QTabWidget* tabs_ = nullptr;
  QSplitter* splitter_ = nullptr;
  ScenarioEditor* editor_ = nullptr;
  ResultsView* results_ = nullptr;
  CompareView* compare_ = nullptr;
  PlanView* plan_ = nullptr;
  TcoView* tco_ = nullptr;
  ServeView* serve_ = nullptr;
  QMenu* recent_menu_ = nullptr;
  QLabel* status_source_ = nullptr;
  QLabel* status_timing_ = nullptr;
  bool ephemeral_ = false;
};

}  // namespace capplan::gui
