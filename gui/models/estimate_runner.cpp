// SPDX-License-Identifier: Apache-2.0
#include "capplan/gui/estimate_runner.hpp"

#include <QElapsedTimer>
#include <QtConcurrent/QtConcurrentRun>
#include <utility>

#include "capplan/data/cost_model.hpp"
#include "capplan/gui/finding_text.hpp"
#include "capplan/sim/search/search.hpp"

namespace capplan::gui {

QString EstimateSnapshot::cost_model_label() const {
  const std::string& source = estimate.step.cost_model;
  if (source.empty() || source == "datasheet") return QStringLiteral("datasheet model");
  return QString::fromStdString(source);  // "calibrated: <profile>"
}

std::optional<double> EstimateSnapshot::usd_per_billion_tokens() const {
  const double tokens = scenario.scenario.training.tokens;
  const auto cost = sim::plan_cost(estimate);  // total cost (goodput), else the sticker
  if (!cost || !(tokens > 0)) return std::nullopt;
  return cost->base() / (tokens / 1e9);
}

EstimateRunner::EstimateRunner(std::shared_ptr<const sim::ResidualTable> bands, QObject* parent)
    : QObject(parent), bands_(std::move(bands)) {
  qRegisterMetaType<capplan::gui::EstimateSnapshot>();
  connect(&watcher_, &QFutureWatcher<EstimateOutcome>::finished, this, &EstimateRunner::on_done);
}

EstimateRunner::~EstimateRunner() { watcher_.waitForFinished(); }

EstimateOutcome EstimateRunner::compute(const data::ParsedScenario& scenario, const sim::ResidualTable* bands,
                                        const sim::Profile* profile) {
  QElapsedTimer timer;
  timer.start();
  auto estimate = data::estimate_with_profile(scenario.scenario, profile);
  if (!estimate) return std::unexpected(std::move(estimate.error()));
  if (bands != nullptr && !bands->empty()) {
    sim::apply_error_band(*estimate, scenario.scenario, *bands);
    if (profile != nullptr && estimate->uncertainty.band) estimate->findings.push_back(sim::note(data::kProfileBandNote));
    if (!estimate->uncertainty.band) {
      estimate->findings.push_back(sim::note("no error band: error_bands.json has no entry for '" +
                                             sim::error_category(scenario.scenario) +
                                             "' (nor a fallback), so the estimate carries no p10-p90 interval"));
    }
  } else {
    estimate->findings.push_back(
        sim::note("no error band: error_bands.json not loaded, so the estimate carries no p10-p90 interval"));
  }
  EstimateSnapshot snap;
  snap.scenario = scenario;
  snap.estimate = std::move(*estimate);
  snap.elapsed_ms = static_cast<double>(timer.nsecsElapsed()) / 1e6;
  return snap;
}

quint64 EstimateRunner::request(data::ParsedScenario scenario) {
  const quint64 generation = requests_.number();
  if (auto job = requests_.admit({std::move(scenario), generation})) start(std::move(job->first), generation);
  return generation;
}

void EstimateRunner::start(data::ParsedScenario scenario, quint64 generation) {
  requests_.started(generation);
  auto bands = bands_;  // keeps the table (and the profile) alive for the worker
  auto profile = profile_;
  watcher_.setFuture(QtConcurrent::run([s = std::move(scenario), bands, profile, generation]() -> EstimateOutcome {
    auto out = compute(s, bands.get(), profile.get());
    if (out) out->generation = generation;
    return out;
  }));
  emit busy_changed(true);
}

void EstimateRunner::on_done() {
  EstimateOutcome outcome = watcher_.result();
  const quint64 generation = requests_.running_generation();
  if (auto next = requests_.finished()) {
    start(std::move(next->first), next->second);  // the finished result is stale: dropped
    return;
  }
  emit busy_changed(false);
  if (generation != requests_.latest()) return;
  if (outcome) {
    emit finished(*outcome);
  } else {
    emit failed(diagnostic_messages(outcome.error()), generation);
  }
}

}  // namespace capplan::gui
