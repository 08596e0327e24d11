// SPDX-License-Identifier: Apache-2.0
// The Serve tab: a serving scenario (`workload.kind: serve`, as `capplan serve`
// reads it) edited in a form (model, offering, engine, layout, traffic, latency target, price), its
// plan in words, the latency-throughput curve, every layout's replicas and cost with the Pareto
// front, and "train, then serve": the Estimate tab's training plus months of serving. Exports the
// plan as `capplan serve --format json` writes it, and the charts as PNG/SVG.
#pragma once
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QWidget>
#include <QtCharts/QChartView>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "capplan/data/fields.hpp"
#include "capplan/data/catalog.hpp"
#include "capplan/gui/estimate_runner.hpp"
#include "capplan/gui/serve_model.hpp"

namespace capplan::gui {

class ServeView final : public QWidget {
  Q_OBJECT
 public:
  explicit ServeView(std::shared_ptr<const data::Catalogs> catalogs, QWidget* parent = nullptr);

  // The serve scenario the form edits (the built-in example until a file is opened).
  const nlohmann::json& document() const { return doc_; }
  // Replaces the document (a serve scenario file's) and the form's fields; re-plans. The error
  // text when the file cannot be read or is not a JSON object.
  QString open_file(const QString& path);
  QString save_file(const QString& path) const;
  // Writes the latest plan as `capplan serve --format json` does; an error text on failure.
  QString export_json(const QString& path) const;
  // The four charts as <base>-curve.<ext>, -layouts, -pareto and -lifecycle (png or svg).
  QString export_charts(const QString& path) const;
  // Plans the form's document now (also done after each edit).
  void refresh();

  // The training estimate the train-then-serve view adds (the Estimate tab's latest).
  void set_training(const EstimateSnapshot& snapshot);
  void set_train_then_serve(bool on, int months);
  void set_profile(std::shared_ptr<const sim::Profile> profile);

  const std::optional<ServeSnapshot>& snapshot() const { return snapshot_; }
  ServeRunner* runner() const { return runner_; }
  bool busy() const { return runner_->busy(); }
  QLabel* summary() const { return summary_; }
  QDoubleSpinBox* rate_box() const { return rate_; }
  QDoubleSpinBox* price_box() const { return price_; }
  QDoubleSpinBox* e2e_box() const { return e2e_; }
  QDoubleSpinBox* ttft_box() const { return ttft_; }
  QComboBox* weights_box() const { return weights_; }
  QCheckBox* compare_box() const { return compare_; }
  QLineEdit* offerings_box() const { return offerings_; }
  QLineEdit* engines_box() const { return engines_; }
  QChartView* curve_view() const { return curve_view_; }
  QChartView* layouts_view() const { return layouts_view_; }
  QChartView* pareto_view() const { return pareto_view_; }
  QChartView* lifecycle_view() const { return lifecycle_view_; }

 signals:
  void updated();  // a new plan (or an error) is shown

 private:
  void build_form(QWidget* form);
  void build_engine_settings(QWidget* form, QFormLayout* rows);
  // The settings' widgets from a workload.engine value (an id or {id, overrides}; null: none).
  void settings_from_engine(const nlohmann::json* engine);
  // workload.engine: the id, or {id, overrides} for the settings not left at the default.
  nlohmann::json engine_from_form(const std::string& id) const;
  void form_from_document();
  void document_from_form();
  void on_result(const ServeSnapshot& snapshot);
  void on_failed(const QStringList& messages);
  void show_snapshot();

  std::shared_ptr<const data::Catalogs> catalogs_;
  nlohmann::json doc_;
  QString file_;
  ServeRunner* runner_ = nullptr;
  std::optional<ServeSnapshot> snapshot_;
  std::optional<EstimateSnapshot> training_;
  bool loading_ = false;  // the form is being set from the document: no re-plan per field

  QComboBox* model_ = nullptr;
  QComboBox* instance_ = nullptr;
  QComboBox* engine_ = nullptr;
  QComboBox* weights_ = nullptr;
  QComboBox* kv_ = nullptr;
  QComboBox* tp_ = nullptr;
  QCheckBox* compare_ = nullptr;
  QLineEdit* offerings_ = nullptr;  // globs of catalog instances to plan on too
  QLineEdit* engines_ = nullptr;    // engine ids to compare too
  QDoubleSpinBox* rate_ = nullptr;
  QSpinBox* input_ = nullptr;
  QSpinBox* input_p95_ = nullptr;
  QSpinBox* output_ = nullptr;
  QSpinBox* output_p95_ = nullptr;
  QDoubleSpinBox* ttft_ = nullptr;
  QDoubleSpinBox* tpot_ms_ = nullptr;
  QDoubleSpinBox* e2e_ = nullptr;
  // The engine's settings, one row per field of data::engine_fields(): a number box whose minimum
  // reads "engine default", or a combo box whose first item does; the recipe's value applies then.
  struct EngineSetting {
    const data::FieldSpec* spec = nullptr;
    QDoubleSpinBox* number = nullptr;
    QComboBox* choice = nullptr;
  };
  std::vector<EngineSetting> engine_settings_;
  std::string engine_loaded_;  // the engine the settings were set for: another one starts at its defaults
  QDoubleSpinBox* percentile_ = nullptr;
  QDoubleSpinBox* price_ = nullptr;
  QLineEdit* currency_ = nullptr;
  QDoubleSpinBox* usd_per_unit_ = nullptr;
  QCheckBox* train_ = nullptr;
  QSpinBox* months_ = nullptr;
  QLabel* summary_ = nullptr;
  QChartView* curve_view_ = nullptr;
  QChartView* layouts_view_ = nullptr;
  QChartView* pareto_view_ = nullptr;
  QChartView* lifecycle_view_ = nullptr;
};

}  // namespace capplan::gui
