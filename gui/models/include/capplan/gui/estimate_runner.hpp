// SPDX-License-Identifier: Apache-2.0
// Runs the estimate off the GUI thread (STYLE.md 4.8, snippet 6).
//
// Contract:
//  * compute() is the whole pipeline `capplan estimate [--profile FILE]` runs for a parsed scenario:
//    data::estimate_with_profile (the datasheet cost model, or CalibratedCost over the loaded
//    profile with its coverage warnings), then the error band from data/error_bands.json. It is a pure
//    function of its arguments and may run on any thread.
//  * request() copies the scenario into a worker (QtConcurrent) and returns at once. The latest
//    request wins: while one runs, newer requests replace the pending one, and a result whose
//    request has been superseded is dropped, never emitted.
//  * Results are values (EstimateSnapshot): nothing points into live state.
#pragma once
#include <QFutureWatcher>
#include <QObject>
#include <QStringList>
#include <memory>
#include <optional>
#include <utility>

#include "capplan/data/scenario_io.hpp"
#include "capplan/gui/latest_request.hpp"
#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/cost/profile.hpp"
#include "capplan/sim/estimate/uncertainty.hpp"

namespace capplan::gui {

struct EstimateSnapshot {
  data::ParsedScenario scenario;
  sim::Estimate estimate;
  quint64 generation = 0;  // the request it answers
  double elapsed_ms = 0;   // wall time of the computation

  // Display label of the cost model: "datasheet model" or "calibrated: <profile>".
  QString cost_model_label() const;
  // Cost per 1e9 training tokens, when the cost is known.
  std::optional<double> usd_per_billion_tokens() const;
};

using EstimateOutcome = Result<EstimateSnapshot>;

class EstimateRunner final : public QObject {
  Q_OBJECT

 public:
  // `bands`: the residual table of data/error_bands.json (empty: no p10-p90 intervals).
  explicit EstimateRunner(std::shared_ptr<const sim::ResidualTable> bands = {}, QObject* parent = nullptr);
  ~EstimateRunner() override;

  static EstimateOutcome compute(const data::ParsedScenario& scenario, const sim::ResidualTable* bands,
                                 const sim::Profile* profile = nullptr);

  // The calibration profile later requests price with (empty: the datasheet model).
  void set_profile(std::shared_ptr<const sim::Profile> profile) { profile_ = std::move(profile); }
  const std::shared_ptr<const sim::Profile>& profile() const { return profile_; }

  // Returns the request's generation number.
  quint64 request(data::ParsedScenario scenario);
  bool busy() const { return requests_.running(); }
  quint64 latest_request() const { return requests_.latest(); }
  const sim::ResidualTable* bands() const { return bands_.get(); }

 signals:
  void finished(const capplan::gui::EstimateSnapshot& snapshot);
  // sim::estimate refused the scenario (e.g. a layout that does not divide the heads): CLI messages.
  void failed(const QStringList& messages, quint64 generation);
  void busy_changed(bool busy);

 private:
  void start(data::ParsedScenario scenario, quint64 generation);
  void on_done();

  std::shared_ptr<const sim::ResidualTable> bands_;
  std::shared_ptr<const sim::Profile> profile_;
  QFutureWatcher<EstimateOutcome> watcher_;
  LatestRequest<std::pair<data::ParsedScenario, quint64>> requests_;
};

}  // namespace capplan::gui

Q_DECLARE_METATYPE(capplan::gui::EstimateSnapshot)
