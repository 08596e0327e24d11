// SPDX-License-Identifier: Apache-2.0
// The Serve tab (`capplan serve` in the desktop app): a serving scenario's plan,
// its latency-throughput curve, every layout with the Pareto front, and the train-then-serve view.
//
// Contract:
//  * ServeRunner::compute() is data::plan_serve_document, the pipeline `capplan serve [--profile
//    FILE]` runs for the same document, with the curve at kServeCurvePoints rates (the CLI's
//    default --curve-points). serve_json() of its snapshot is, byte for byte, what
//    `capplan serve --format json` prints for that document (the tab's JSON export).
//  * with_training(): data::train_then_serve over a training estimate (the Estimate tab's
//    snapshot), as `capplan serve --train FILE --months N`.
//  * Every number is sim's or data's; nothing here computes a latency or a cost.
//  * The runner works off the GUI thread; the latest request wins (as EstimateRunner).
#pragma once
#include <QFutureWatcher>
#include <QObject>
#include <QStringList>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "capplan/data/catalog.hpp"
#include "capplan/data/serve_io.hpp"
#include "capplan/gui/latest_request.hpp"
#include "capplan/sim/cost/profile.hpp"
#include "capplan/sim/workload/result.hpp"

namespace capplan::gui {

inline constexpr int kServeCurvePoints = 12;  // capplan serve's default --curve-points

struct ServeSnapshot {
  data::ServeRequest request;
  data::ServeResult result;
  QString sheet;           // the price sheet read (pricing.sheet), empty when none
  quint64 generation = 0;  // the request it answers
  double elapsed_ms = 0;
};

// The JSON of `capplan serve --format json` for the snapshot (with train_then_serve when set).
nlohmann::json serve_json(const ServeSnapshot& s);
// The snapshot with the train-then-serve view: `training` and its estimate, then `months` of
// serving the recommended layout (data::train_then_serve); the snapshot's lifecycle is replaced.
void with_training(ServeSnapshot& s, const data::ParsedScenario& training, const sim::Estimate& estimate, int months);

// The latency the SLO names (e2e, else TTFT, else TPOT; e2e when none), at the SLO's percentile,
// and its name: what the curve and the Pareto chart plot.
struct SloMetric {
  QString name;  // "end-to-end", "TTFT", "TPOT"
  double target_s = 0;  // 0: no target
  double at(const sim::ServeLoad& load, double percentile) const;
  enum Kind { kE2e, kTtft, kTpot } kind = kE2e;
};
SloMetric slo_metric(const sim::ServeJob& job);

using ServeOutcome = Result<ServeSnapshot>;

class ServeRunner final : public QObject {
  Q_OBJECT

 public:
  explicit ServeRunner(std::shared_ptr<const data::Catalogs> catalogs, QObject* parent = nullptr);
  ~ServeRunner() override;

  // `instances`: globs of catalog instances to plan on too (capplan serve --instances); `engines`:
  // engine ids to compare too (--engines); empty: none.
  static ServeOutcome compute(const nlohmann::json& doc, const data::Catalogs& catalogs,
                              const std::string& scenario_file, const sim::Profile* profile,
                              const std::vector<std::string>& instances = {},
                              const std::vector<std::string>& engines = {});

  void set_profile(std::shared_ptr<const sim::Profile> profile) { profile_ = std::move(profile); }
  // Returns the request's generation number.
  quint64 request(nlohmann::json doc, std::string scenario_file, std::vector<std::string> instances = {},
                  std::vector<std::string> engines = {});
  bool busy() const { return requests_.running(); }

 signals:
  void finished(const capplan::gui::ServeSnapshot& snapshot);
  void failed(const QStringList& messages, quint64 generation);
  void busy_changed(bool busy);

 private:
  struct Job {
    nlohmann::json doc;
    std::string file;
    std::vector<std::string> instances;
    std::vector<std::string> engines;
    quint64 generation = 0;
  };
  void start(Job job);
  void on_done();

  std::shared_ptr<const data::Catalogs> catalogs_;
  std::shared_ptr<const sim::Profile> profile_;
  QFutureWatcher<ServeOutcome> watcher_;
  LatestRequest<Job> requests_;
};

}  // namespace capplan::gui

Q_DECLARE_METATYPE(capplan::gui::ServeSnapshot)
