// SPDX-License-Identifier: Apache-2.0
#include "capplan/gui/serve_model.hpp"

#include <QElapsedTimer>
#include <QtConcurrent/QtConcurrentRun>
#include <utility>

#include "capplan/gui/finding_text.hpp"

namespace capplan::gui {

nlohmann::json serve_json(const ServeSnapshot& s) { return data::serve_to_json(s.result, s.request); }

void with_training(ServeSnapshot& s, const data::ParsedScenario& training, const sim::Estimate& estimate, int months) {
  data::train_then_serve(s.result, s.request, training, estimate, months);
}

double SloMetric::at(const sim::ServeLoad& load, double percentile) const {
  switch (kind) {
    case kTtft:
      return load.ttft.at(percentile);
    case kTpot:
      return load.tpot.at(percentile);
    case kE2e:
      break;
  }
  return load.e2e.at(percentile);
}

SloMetric slo_metric(const sim::ServeJob& job) {
  // The same order as the plan's latency (sim::slo_latency): e2e, else TTFT, else TPOT.
  const sim::Slo& slo = job.slo;
  if (slo.e2e.base() > 0) return {QStringLiteral("end-to-end"), slo.e2e.base(), SloMetric::kE2e};
  if (slo.ttft.base() > 0) return {QStringLiteral("TTFT"), slo.ttft.base(), SloMetric::kTtft};
  if (slo.tpot.base() > 0) return {QStringLiteral("TPOT"), slo.tpot.base(), SloMetric::kTpot};
  return {QStringLiteral("end-to-end"), 0.0, SloMetric::kE2e};
}

ServeRunner::ServeRunner(std::shared_ptr<const data::Catalogs> catalogs, QObject* parent)
    : QObject(parent), catalogs_(std::move(catalogs)) {
  qRegisterMetaType<capplan::gui::ServeSnapshot>();
  connect(&watcher_, &QFutureWatcher<ServeOutcome>::finished, this, &ServeRunner::on_done);
}

ServeRunner::~ServeRunner() { watcher_.waitForFinished(); }

ServeOutcome ServeRunner::compute(const nlohmann::json& doc, const data::Catalogs& catalogs,
                                  const std::string& scenario_file, const sim::Profile* profile,
                                  const std::vector<std::string>& instances,
                                  const std::vector<std::string>& engines) {
  QElapsedTimer timer;
  timer.start();
  data::OfferingFilter filter;
  filter.instances = instances;
  auto planned = data::plan_serve_document(doc, catalogs, scenario_file, {}, profile, kServeCurvePoints, "scenario",
                                           instances.empty() ? nullptr : &filter, engines);
  if (!planned) return std::unexpected(std::move(planned.error()));
  ServeSnapshot snap;
  snap.request = std::move(planned->request);
  snap.result = std::move(planned->result);
  snap.sheet = QString::fromStdString(planned->sheet);
  snap.elapsed_ms = static_cast<double>(timer.nsecsElapsed()) / 1e6;
  return snap;
}

quint64 ServeRunner::request(nlohmann::json doc, std::string scenario_file, std::vector<std::string> instances,
                             std::vector<std::string> engines) {
  const quint64 generation = requests_.number();
  Job job{std::move(doc), std::move(scenario_file), std::move(instances), std::move(engines), generation};
  if (auto now = requests_.admit(std::move(job))) start(std::move(*now));
  return generation;
}

void ServeRunner::start(Job job) {
  requests_.started(job.generation);
  auto catalogs = catalogs_;  // kept alive for the worker
  auto profile = profile_;
  watcher_.setFuture(QtConcurrent::run([job = std::move(job), catalogs, profile]() -> ServeOutcome {
    auto out = compute(job.doc, *catalogs, job.file, profile.get(), job.instances, job.engines);
    if (out) out->generation = job.generation;
    return out;
  }));
  emit busy_changed(true);
}

void ServeRunner::on_done() {
  ServeOutcome outcome = watcher_.result();
  const quint64 generation = requests_.running_generation();
  if (auto next = requests_.finished()) {
    start(std::move(*next));  // the finished result is stale: dropped
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
