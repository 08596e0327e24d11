// SPDX-License-Identifier: Apache-2.0
// Runs the planner (sim::search) off the GUI thread with progress and cancel, and the read-only
// table of its plans.
//
// Contract:
//  * start() copies the request into a worker (QtConcurrent). progress() arrives queued on the GUI
//    thread; cancel() makes the search stop at its next progress call (about every 50 ms) and
//    finished() then reports cancelled == true. One search at a time: start() while busy cancels
//    the running one first.
//  * The destructor cancels and waits, so no worker outlives the runner.
#pragma once
#include <QFutureWatcher>
#include <QObject>
#include <QStringList>
#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include "capplan/data/scenario_io.hpp"
#include "capplan/gui/table_model.hpp"
#include "capplan/sim/search/search.hpp"

namespace capplan::gui {

struct PlanSnapshot {
  data::ParsedScenario base;  // the editor's scenario the search started from
  sim::SearchRequest request;
  std::optional<sim::SearchResult> result;  // empty when the request was refused
  QStringList errors;                       // why it was refused (messages name the field)
  bool cancelled = false;

  // Whether plan `p` lies on the Pareto front of the result.
  bool on_pareto_front(const sim::Plan& p) const;
};

class PlanRunner final : public QObject {
  Q_OBJECT
 public:
  explicit PlanRunner(QObject* parent = nullptr);
  ~PlanRunner() override;

  void start(data::ParsedScenario base, sim::SearchRequest request);
  void cancel();
  bool busy() const { return watcher_.isRunning(); }

 signals:
  void progress(qint64 done, qint64 total);
  void finished(const std::shared_ptr<const capplan::gui::PlanSnapshot>& snapshot);

 private:
  QFutureWatcher<std::shared_ptr<const PlanSnapshot>> watcher_;
  std::shared_ptr<std::atomic<bool>> cancel_;
};

// One plan of a search as the table shows it: its rank (1 = best) and the figures priced once.
struct PlanRow {
  int rank = 0;
  QString tag = {};  // when nothing met the constraints: "closest", "front 2", ... (the "#" column)
  const sim::Plan* plan = nullptr;  // into the snapshot the model holds
  std::optional<double> cost = {};  // total USD, when the price is known
  std::optional<double> usd_per_billion_tokens = {};
  bool pareto = false;  // on the Pareto front
};

// The plans of one search, best first; kSortRole gives raw numbers (days, USD, fraction). When no
// plan meets the constraints, as the CLI: the closest plan, then the Pareto front.
class PlansModel final : public TableModel<PlanRow> {
  Q_OBJECT
 public:
  enum Column { kRank, kOffering, kGpus, kTime, kCost, kPurchase, kPerBillionTokens, kMfu, kLayout, kPareto, kColumnCount };
  explicit PlansModel(QObject* parent = nullptr);

  void set_snapshot(std::shared_ptr<const PlanSnapshot> snapshot);
  const sim::Plan* plan(int row) const;
  // The plans of the rows, in row order (what the chart draws).
  std::vector<const sim::Plan*> shown_plans() const;
  const PlanSnapshot* snapshot() const { return snapshot_.get(); }

 private:
  std::shared_ptr<const PlanSnapshot> snapshot_;
};

// "TP 8 · PP 4 · DP 16 · mb 1 · ZeRO 1 · selective" for tables and tooltips.
QString layout_text(const sim::Parallelism& p);
// "aws-p5.48xlarge" or "h100-sxm-80gb" (GPU-only offerings).
QString offering_text(const sim::Plan& p);
// The purchase terms of the plans shown, each with its offerings, as the CLI's header words them:
// "Purchase: spot in CNY (tencent-hccpnv5); on demand (aws-p5.48xlarge, ...)".
QString purchase_summary(const sim::SearchResult& r);

}  // namespace capplan::gui

Q_DECLARE_METATYPE(std::shared_ptr<const capplan::gui::PlanSnapshot>)
