// SPDX-License-Identifier: Apache-2.0
#include "serve_view.hpp"

#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QVBoxLayout>
#include <QFileDialog>
#include <QMessageBox>
#include <cmath>

#include "capplan/data/fields.hpp"
#include "capplan/data/input_file.hpp"
#include "capplan/data/scenario_io.hpp"
#include "capplan/gui/finding_text.hpp"
#include "capplan/gui/format.hpp"
#include "charts.hpp"
#include "view_text.hpp"

namespace capplan::gui {

namespace {

using nlohmann::json;

// The object at JSON pointer `pointer` ("/workload/traffic"), made (or replaced when not an object).
json& object_at(json& doc, const std::string& pointer) {
  json* at = &doc;
  if (!at->is_object()) *at = json::object();
  std::size_t start = 1;
  while (start < pointer.size()) {
    const std::size_t slash = pointer.find('/', start);
    const std::string key = pointer.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    at = &(*at)[key];
    if (!at->is_object()) *at = json::object();
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return *at;
}

const json* find_at(const json& doc, std::initializer_list<const char*> path) {
  const json* at = &doc;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return nullptr;
    at = &(*at)[key];
  }
  return at;
}

double number_at(const json& doc, std::initializer_list<const char*> path, double fallback) {
  const json* v = find_at(doc, path);
  return v != nullptr && v->is_number() ? v->get<double>() : fallback;
}

std::string string_at(const json& doc, std::initializer_list<const char*> path) {
  const json* v = find_at(doc, path);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

// A length field: a number (every request the same) or {mean, p95}.
std::pair<double, double> length_at(const json& doc, const char* key) {
  const json* v = find_at(doc, {"workload", "traffic", key});
  if (v == nullptr) return {0, 0};
  if (v->is_number()) return {v->get<double>(), 0};
  return {number_at(*v, {"mean"}, 0), number_at(*v, {"p95"}, 0)};
}

void select_data(QComboBox* box, const QString& value, const QString& missing_label) {
  int i = box->findData(value);
  if (i < 0 && !value.isEmpty()) {
    box->addItem(missing_label.arg(value), value);
    i = box->count() - 1;
  }
  if (i >= 0) box->setCurrentIndex(i);
}

QDoubleSpinBox* number_box(QWidget* parent, double lo, double hi, int decimals, double step, const QString& suffix,
                           const QString& special = {}) {
  auto* b = new QDoubleSpinBox(parent);
  b->setRange(lo, hi);
  b->setDecimals(decimals);
  b->setSingleStep(step);
  if (!suffix.isEmpty()) b->setSuffix(suffix);
  if (!special.isEmpty()) b->setSpecialValueText(special);
  b->setKeyboardTracking(false);
  return b;
}

QSpinBox* count_box(QWidget* parent, int lo, int hi, const QString& special = {}) {
  auto* b = new QSpinBox(parent);
  b->setRange(lo, hi);
  b->setGroupSeparatorShown(true);
  if (!special.isEmpty()) b->setSpecialValueText(special);
  b->setKeyboardTracking(false);
  return b;
}

}  // namespace

ServeView::ServeView(std::shared_ptr<const data::Catalogs> catalogs, QWidget* parent)
    : QWidget(parent), catalogs_(std::move(catalogs)), doc_(data::example_serve_scenario()) {
  runner_ = new ServeRunner(catalogs_, this);
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);

  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  auto* form = new QWidget(scroll);
  build_form(form);
  scroll->setWidget(form);
  scroll->setMinimumWidth(380);
  scroll->setMaximumWidth(460);
  layout->addWidget(scroll);

  auto* right = new QVBoxLayout();
  summary_ = new QLabel(this);
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  summary_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  right->addWidget(summary_);
  auto* grid = new QGridLayout();
  curve_view_ = make_chart_view(tr("Latency under load"), this);
  layouts_view_ = make_chart_view(tr("Replicas and cost per month by layout"), this);
  pareto_view_ = make_chart_view(tr("Cost against latency"), this);
  lifecycle_view_ = make_chart_view(tr("Train, then serve"), this);
  grid->addWidget(curve_view_, 0, 0);
  grid->addWidget(pareto_view_, 0, 1);
  grid->addWidget(layouts_view_, 1, 0);
  grid->addWidget(lifecycle_view_, 1, 1);
  right->addLayout(grid, 1);
  layout->addLayout(right, 1);

  connect(runner_, &ServeRunner::finished, this, &ServeView::on_result);
  connect(runner_, &ServeRunner::failed, this, [this](const QStringList& messages, quint64) { on_failed(messages); });
  form_from_document();
  refresh();
}

void ServeView::build_form(QWidget* form) {
  auto* v = new QVBoxLayout(form);
  const auto group = [&](const QString& title) {
    auto* g = new QGroupBox(title, form);
    auto* f = new QFormLayout(g);
    f->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    v->addWidget(g);
    return f;
  };

  QFormLayout* what = group(tr("Model and offering"));
  model_ = new QComboBox(form);
  for (const auto& m : catalogs_->models) {
    model_->addItem(QStringLiteral("%1 (%2)").arg(QString::fromStdString(m.spec.name), QString::fromStdString(m.id)),
                    QString::fromStdString(m.id));
  }
  what->addRow(tr("Model"), model_);
  instance_ = new QComboBox(form);
  for (const auto& i : catalogs_->instances) {
    instance_->addItem(QStringLiteral("%1 (%2 x %3)")
                           .arg(QString::fromStdString(i.id))
                           .arg(i.gpus_per_node)
                           .arg(QString::fromStdString(i.gpu)),
                       QString::fromStdString(i.id));
  }
  what->addRow(tr("Instance"), instance_);

  QFormLayout* engine = group(tr("Engine and layout"));
  engine_ = new QComboBox(form);
  for (const auto& e : catalogs_->engines) {
    engine_->addItem(QStringLiteral("%1 %2").arg(QString::fromStdString(e.spec.name), QString::fromStdString(e.spec.version)).left(60),
                     QString::fromStdString(e.spec.id));
  }
  engine->addRow(tr("Engine"), engine_);
  // The weight formats and KV-cache precisions the layout's field table accepts.
  const auto choices_of = [](const char* pointer, QComboBox* box) {
    for (const auto& f : data::serve_layout_fields()) {
      if (std::string_view(f.spec.pointer) != pointer) continue;
      box->setToolTip(tr(f.spec.help));
      for (const char* c : f.spec.choices) box->addItem(QString::fromLatin1(c), QString::fromLatin1(c));
    }
  };
  weights_ = new QComboBox(form);
  choices_of("weights", weights_);
  engine->addRow(tr("Weights"), weights_);
  kv_ = new QComboBox(form);
  choices_of("kv_cache", kv_);
  engine->addRow(tr("KV cache"), kv_);
  tp_ = new QComboBox(form);
  for (int t : {1, 2, 4, 8}) tp_->addItem(QString::number(t), t);
  engine->addRow(tr("Tensor parallel"), tp_);
  compare_ = new QCheckBox(tr("also plan every TP size and weight format"), form);
  engine->addRow(QString(), compare_);
  offerings_ = new QLineEdit(form);
  offerings_->setPlaceholderText(tr("none (globs: tencent-*, aws-p5*, *)"));
  offerings_->setToolTip(tr("Also plan on every catalog instance matching these globs, comma-separated "
                            "(capplan serve --instances): every offering x TP x weight format, ranked by the "
                            "closed form, the cheapest and the Pareto front confirmed by simulation"));
  engine->addRow(tr("Other offerings"), offerings_);
  engines_ = new QLineEdit(form);
  engines_->setPlaceholderText(tr("none (ids: sglang, tensorrt-llm)"));
  engines_->setToolTip(tr("Also compare these engines at their recipes' defaults, comma-separated "
                          "(capplan serve --engines; capplan catalog engines lists them)"));
  engine->addRow(tr("Other engines"), engines_);

  QFormLayout* settings = group(tr("Engine settings"));
  build_engine_settings(form, settings);

  QFormLayout* traffic = group(tr("Traffic (Poisson arrivals)"));
  rate_ = number_box(form, 0.01, 1e6, 2, 1, tr(" req/s"));
  traffic->addRow(tr("Peak rate"), rate_);
  input_ = count_box(form, 1, 10'000'000);
  input_p95_ = count_box(form, 0, 10'000'000, tr("same as mean"));
  output_ = count_box(form, 1, 10'000'000);
  output_p95_ = count_box(form, 0, 10'000'000, tr("same as mean"));
  traffic->addRow(tr("Prompt tokens, mean"), input_);
  traffic->addRow(tr("Prompt tokens, p95"), input_p95_);
  traffic->addRow(tr("Output tokens, mean"), output_);
  traffic->addRow(tr("Output tokens, p95"), output_p95_);

  QFormLayout* slo = group(tr("Latency target"));
  e2e_ = number_box(form, 0, 3600, 2, 0.5, tr(" s"), tr("none"));
  ttft_ = number_box(form, 0, 3600, 3, 0.1, tr(" s"), tr("none"));
  tpot_ms_ = number_box(form, 0, 10000, 1, 5, tr(" ms"), tr("none"));
  percentile_ = number_box(form, 0.5, 0.999, 3, 0.01, QString());
  slo->addRow(tr("End-to-end"), e2e_);
  slo->addRow(tr("Time to first token"), ttft_);
  slo->addRow(tr("Time per output token"), tpot_ms_);
  slo->addRow(tr("Percentile"), percentile_);

  QFormLayout* price = group(tr("Price"));
  price_ = number_box(form, 0, 1e6, 3, 0.5, QString(), tr("catalog / price sheet"));
  currency_ = new QLineEdit(form);
  currency_->setMaxLength(3);
  currency_->setPlaceholderText(QStringLiteral("USD"));
  usd_per_unit_ = number_box(form, 0, 1e6, 4, 0.01, QString(), tr("not needed for USD"));
  price->addRow(tr("Per GPU-hour"), price_);
  price->addRow(tr("Currency (ISO 4217)"), currency_);
  price->addRow(tr("US$ per unit"), usd_per_unit_);

  QFormLayout* life = group(tr("Train, then serve"));
  train_ = new QCheckBox(tr("add the Estimate tab's training"), form);
  months_ = count_box(form, 1, 120);
  months_->setValue(12);
  months_->setSuffix(tr(" months of serving"));
  life->addRow(QString(), train_);
  life->addRow(tr("Then"), months_);

  auto* buttons = new QGridLayout();
  auto* open = new QPushButton(tr("Open serve scenario…"), form);
  auto* save = new QPushButton(tr("Save scenario…"), form);
  auto* json_out = new QPushButton(tr("Export plan (JSON)…"), form);
  auto* charts_out = new QPushButton(tr("Export charts…"), form);
  buttons->addWidget(open, 0, 0);
  buttons->addWidget(save, 0, 1);
  buttons->addWidget(json_out, 1, 0);
  buttons->addWidget(charts_out, 1, 1);
  v->addLayout(buttons);
  v->addStretch(1);

  connect(open, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open serve scenario"), QString(),
                                                      tr("Scenario files (*.json);;All files (*)"));
    if (path.isEmpty()) return;
    if (const QString err = open_file(path); !err.isEmpty()) QMessageBox::warning(this, tr("Open"), err);
  });
  connect(save, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save serve scenario"),
                                                      file_.isEmpty() ? QStringLiteral("serve.json") : file_,
                                                      tr("Scenario files (*.json)"));
    if (path.isEmpty()) return;
    if (const QString err = save_file(path); !err.isEmpty()) QMessageBox::warning(this, tr("Save"), err);
  });
  connect(json_out, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export serving plan"), QStringLiteral("serve.json"),
                                                      tr("JSON (*.json)"));
    if (path.isEmpty()) return;
    if (const QString err = export_json(path); !err.isEmpty()) QMessageBox::warning(this, tr("Export"), err);
  });
  connect(charts_out, &QPushButton::clicked, this, [this] {
    const QString filter = svg_export_available() ? tr("PNG image (*.png);;SVG drawing (*.svg)") : tr("PNG image (*.png)");
    const QString path = QFileDialog::getSaveFileName(this, tr("Export charts"), QStringLiteral("serve.png"), filter);
    if (path.isEmpty()) return;
    if (const QString err = export_charts(path); !err.isEmpty()) QMessageBox::warning(this, tr("Export"), err);
  });

  // Every field writes its own key of the document and re-plans.
  const auto edited = [this] {
    if (loading_) return;
    document_from_form();
    refresh();
  };
  for (QComboBox* box : {model_, instance_, engine_, weights_, kv_, tp_}) {
    box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    box->setMinimumContentsLength(12);
    connect(box, &QComboBox::currentIndexChanged, this, edited);
  }
  for (QDoubleSpinBox* box : {rate_, e2e_, ttft_, tpot_ms_, percentile_, price_, usd_per_unit_}) {
    connect(box, &QDoubleSpinBox::valueChanged, this, edited);
  }
  for (QSpinBox* box : {input_, input_p95_, output_, output_p95_}) connect(box, &QSpinBox::valueChanged, this, edited);
  for (const EngineSetting& e : engine_settings_) {
    if (e.number != nullptr) connect(e.number, &QDoubleSpinBox::valueChanged, this, edited);
    if (e.choice != nullptr) connect(e.choice, &QComboBox::currentIndexChanged, this, edited);
  }
  connect(compare_, &QCheckBox::toggled, this, edited);
  connect(currency_, &QLineEdit::editingFinished, this, edited);
  for (QLineEdit* list : {offerings_, engines_}) {
    connect(list, &QLineEdit::editingFinished, this, [this] {
      if (!loading_) refresh();
    });
  }
  // Train, then serve needs no re-plan: the lifecycle is added to the plan shown.
  connect(train_, &QCheckBox::toggled, this, [this] { show_snapshot(); });
  connect(months_, &QSpinBox::valueChanged, this, [this] { show_snapshot(); });
}

void ServeView::build_engine_settings(QWidget* form, QFormLayout* rows) {
  for (const auto& f : data::engine_fields()) {
    const data::FieldSpec& spec = f.spec;
    EngineSetting e{&spec, nullptr, nullptr};
    const QString tip = tr(spec.help) + QStringLiteral(" (workload.engine.") + QString::fromLatin1(spec.pointer) +
                        QStringLiteral(")");
    if (spec.kind == data::FieldKind::number || spec.kind == data::FieldKind::integer) {
      const bool whole = spec.kind == data::FieldKind::integer;
      // One step below the smallest value accepted reads "engine default".
      const double step = whole ? 1.0 : 0.01;
      const double unset = spec.min_open ? spec.min : spec.min - step;
      const QString unit = *spec.unit != '\0' ? QStringLiteral(" ") + tr(spec.unit) : QString();
      e.number = number_box(form, unset, spec.max, whole ? 0 : 3, step, unit, tr("engine default"));
      e.number->setToolTip(tip);
    } else if (spec.kind == data::FieldKind::boolean || spec.kind == data::FieldKind::choice) {
      e.choice = new QComboBox(form);
      e.choice->setToolTip(tip);
      e.choice->addItem(tr("engine default"), QString());
      if (spec.kind == data::FieldKind::boolean) {
        e.choice->addItem(tr("yes"), QStringLiteral("true"));
        e.choice->addItem(tr("no"), QStringLiteral("false"));
      } else {
        for (const char* c : spec.choices) e.choice->addItem(QString::fromLatin1(c), QString::fromLatin1(c));
      }
    } else {
      continue;  // a value per weight format: set in the scenario file
    }
    rows->addRow(QString::fromLatin1(spec.pointer), e.number != nullptr ? static_cast<QWidget*>(e.number) : e.choice);
    engine_settings_.push_back(e);
  }
}

void ServeView::settings_from_engine(const json* engine) {
  for (const EngineSetting& e : engine_settings_) {
    const json* v = engine != nullptr && engine->is_object() ? find_at(*engine, {e.spec->pointer}) : nullptr;
    if (e.number != nullptr) {
      e.number->setValue(v != nullptr && v->is_number() ? v->get<double>() : e.number->minimum());
    } else {
      const QString text = v == nullptr ? QString() : v->is_string() ? QString::fromStdString(v->get<std::string>())
                                                                      : QString::fromStdString(v->dump());
      e.choice->setCurrentIndex(std::max(0, e.choice->findData(text)));
    }
  }
}

nlohmann::json ServeView::engine_from_form(const std::string& id) const {
  json overrides = json::object();
  for (const EngineSetting& e : engine_settings_) {
    if (e.number != nullptr && e.number->value() > e.number->minimum()) {
      overrides[e.spec->pointer] = e.spec->kind == data::FieldKind::integer ? json(std::llround(e.number->value()))
                                                                            : json(e.number->value());
    } else if (e.choice != nullptr && e.choice->currentIndex() > 0) {
      const std::string v = e.choice->currentData().toString().toStdString();
      overrides[e.spec->pointer] = e.spec->kind == data::FieldKind::boolean ? json(v == "true") : json(v);
    }
  }
  if (overrides.empty()) return id;
  overrides["id"] = id;
  return overrides;
}

void ServeView::form_from_document() {
  loading_ = true;
  const json& d = doc_;
  select_data(model_, QString::fromStdString(string_at(d, {"model", "preset"})), tr("%1 (not in the catalog)"));
  if (string_at(d, {"model", "preset"}).empty() && find_at(d, {"model"}) != nullptr) {
    select_data(model_, QStringLiteral("custom"), tr("the file's own model (%1)"));
  }
  const std::string instance = string_at(d, {"cluster", "instance"});
  if (!instance.empty()) {
    select_data(instance_, QString::fromStdString(instance), tr("%1 (not in the catalog)"));
  } else {
    select_data(instance_, QStringLiteral("gpu:") + QString::fromStdString(string_at(d, {"cluster", "gpu"})),
                tr("the file's cluster (%1)"));
  }
  std::string engine = string_at(d, {"workload", "engine"});
  if (engine.empty()) engine = string_at(d, {"workload", "engine", "id"});
  select_data(engine_, QString::fromStdString(engine.empty() ? "vllm" : engine), tr("%1 (unknown)"));
  engine_loaded_ = engine.empty() ? "vllm" : engine;
  settings_from_engine(find_at(d, {"workload", "engine"}));
  const std::string w = string_at(d, {"workload", "weights"});
  select_data(weights_, QString::fromStdString(w.empty() ? "bf16" : w), tr("%1 (unknown)"));
  const std::string kv = string_at(d, {"workload", "kv_cache"});
  select_data(kv_, QString::fromStdString(kv.empty() ? "bf16" : kv), tr("%1 (unknown)"));
  const int tp = static_cast<int>(number_at(d, {"workload", "tp"}, 1));
  int ti = tp_->findData(tp);
  if (ti < 0) {
    tp_->addItem(QString::number(tp), tp);
    ti = tp_->count() - 1;
  }
  tp_->setCurrentIndex(ti);
  const json* cmp = find_at(d, {"workload", "compare"});
  compare_->setChecked(cmp != nullptr && cmp->is_boolean() && cmp->get<bool>());
  rate_->setValue(number_at(d, {"workload", "traffic", "rate_per_s"}, 1));
  const auto [in_mean, in_p95] = length_at(d, "input_tokens");
  const auto [out_mean, out_p95] = length_at(d, "output_tokens");
  input_->setValue(static_cast<int>(std::lround(in_mean > 0 ? in_mean : 1000)));
  input_p95_->setValue(static_cast<int>(std::lround(in_p95)));
  output_->setValue(static_cast<int>(std::lround(out_mean > 0 ? out_mean : 300)));
  output_p95_->setValue(static_cast<int>(std::lround(out_p95)));
  e2e_->setValue(number_at(d, {"workload", "slo", "e2e_s"}, 0));
  ttft_->setValue(number_at(d, {"workload", "slo", "ttft_s"}, 0));
  tpot_ms_->setValue(number_at(d, {"workload", "slo", "tpot_s"}, 0) * 1e3);
  percentile_->setValue(number_at(d, {"workload", "slo", "percentile"}, 0.95));
  price_->setValue(number_at(d, {"pricing", "usd_per_gpu_hour"}, 0));
  currency_->setText(QString::fromStdString(string_at(d, {"pricing", "currency"})));
  usd_per_unit_->setValue(number_at(d, {"pricing", "usd_per_unit"}, 0));
  loading_ = false;
}

void ServeView::document_from_form() {
  json& d = doc_;
  const QString model = model_->currentData().toString();
  if (model != QLatin1String("custom") && model.toStdString() != string_at(d, {"model", "preset"})) {
    d["model"] = {{"preset", model.toStdString()}};
  }
  const QString inst = instance_->currentData().toString();
  if (!inst.startsWith(QLatin1String("gpu:")) && inst.toStdString() != string_at(d, {"cluster", "instance"})) {
    d["cluster"] = {{"instance", inst.toStdString()}};
  }
  json& w = object_at(d, "/workload");
  w["kind"] = "serve";
  const std::string engine = engine_->currentData().toString().toStdString();
  if (engine != engine_loaded_) {
    // Another engine: its own defaults, not the last one's settings.
    engine_loaded_ = engine;
    loading_ = true;
    settings_from_engine(nullptr);
    loading_ = false;
  }
  w["engine"] = engine_from_form(engine);
  w["weights"] = weights_->currentData().toString().toStdString();
  w["kv_cache"] = kv_->currentData().toString().toStdString();
  w["tp"] = tp_->currentData().toInt();
  w["compare"] = compare_->isChecked();
  json& t = object_at(d, "/workload/traffic");
  t["arrival"] = "poisson";
  t.erase("concurrency");
  t["rate_per_s"] = rate_->value();
  const auto length = [](int mean, int p95) {
    return p95 > 0 ? json{{"mean", mean}, {"p95", p95}} : json(mean);
  };
  t["input_tokens"] = length(input_->value(), input_p95_->value());
  t["output_tokens"] = length(output_->value(), output_p95_->value());
  json& slo = object_at(d, "/workload/slo");
  const auto target = [&slo](const char* key, double v) {
    if (v > 0) {
      slo[key] = v;
    } else {
      slo.erase(key);
    }
  };
  target("e2e_s", e2e_->value());
  target("ttft_s", ttft_->value());
  target("tpot_s", tpot_ms_->value() / 1e3);
  slo["percentile"] = percentile_->value();
  const QString cur = currency_->text().trimmed().toUpper();
  const bool any_price = price_->value() > 0 || !cur.isEmpty() || usd_per_unit_->value() > 0;
  if (any_price || d.contains("pricing")) {
    json& p = object_at(d, "/pricing");
    if (price_->value() > 0) {
      p["usd_per_gpu_hour"] = price_->value();
    } else {
      p.erase("usd_per_gpu_hour");
    }
    if (!cur.isEmpty()) {
      p["currency"] = cur.toStdString();
    } else {
      p.erase("currency");
    }
    if (usd_per_unit_->value() > 0) {
      p["usd_per_unit"] = usd_per_unit_->value();
    } else {
      p.erase("usd_per_unit");
    }
    if (p.empty()) d.erase("pricing");
  }
}

void ServeView::refresh() {
  const auto items = [](const QLineEdit* edit) {
    std::vector<std::string> out;
    for (const QString& g : edit->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
      if (!g.trimmed().isEmpty()) out.push_back(g.trimmed().toStdString());
    }
    return out;
  };
  runner_->request(doc_, file_.toStdString(), items(offerings_), items(engines_));
}

QString ServeView::open_file(const QString& path) {
  auto text = data::read_input_file(path.toStdString());  // the CLI's bounded reader
  if (!text) return tr("serve scenario '%1': %2").arg(path, QString::fromStdString(text.error()));
  auto doc = data::parse_scenario_document(*text, "scenario");
  if (!doc) {
    QStringList lines;
    for (const auto& d : doc.error()) lines << QString::fromStdString(d.where + ": " + d.message);
    return lines.join(QLatin1Char('\n'));
  }
  doc_ = std::move(*doc);
  file_ = path;
  form_from_document();
  refresh();
  return {};
}

QString ServeView::save_file(const QString& path) const {
  return write_atomically(path, QByteArray::fromStdString(doc_.dump(2) + "\n"));
}

QString ServeView::export_json(const QString& path) const {
  if (!snapshot_) return tr("no serving plan to export yet");
  return write_atomically(path, QByteArray::fromStdString(serve_json(*snapshot_).dump(2) + "\n"));
}

QString ServeView::export_charts(const QString& path) const {
  const QFileInfo info(path);
  const QString ext = info.suffix().isEmpty() ? QStringLiteral("png") : info.suffix();
  const QString base = info.dir().filePath(info.completeBaseName());
  const std::pair<QChartView*, const char*> charts[] = {
      {curve_view_, "curve"}, {layouts_view_, "layouts"}, {pareto_view_, "pareto"}, {lifecycle_view_, "lifecycle"}};
  for (const auto& [view, name] : charts) {
    if (QString err = export_chart(view, base + QLatin1Char('-') + QLatin1String(name) + QLatin1Char('.') + ext);
        !err.isEmpty()) {
      return err;
    }
  }
  return {};
}

void ServeView::set_training(const EstimateSnapshot& snapshot) {
  training_ = snapshot;
  if (train_->isChecked()) show_snapshot();
}

void ServeView::set_train_then_serve(bool on, int months) {
  months_->setValue(months);
  train_->setChecked(on);
  show_snapshot();
}

void ServeView::set_profile(std::shared_ptr<const sim::Profile> profile) {
  runner_->set_profile(std::move(profile));
  refresh();
}

void ServeView::on_result(const ServeSnapshot& snapshot) {
  snapshot_ = snapshot;
  show_snapshot();
}

void ServeView::on_failed(const QStringList& messages) {
  snapshot_.reset();
  summary_->setStyleSheet(QStringLiteral(
      "QLabel { background: #fff4e5; border: 1px solid #e0a040; border-radius: 4px; padding: 8px; color: #6b3d00; }"));
  summary_->setText(tr("<b>The serving scenario needs fixing</b> (the messages of <code>capplan serve</code>):<br>") +
                    html_lines(messages));
  for (QChartView* v : {curve_view_, layouts_view_, pareto_view_, lifecycle_view_}) v->chart()->removeAllSeries();
  emit updated();
}

void ServeView::show_snapshot() {
  if (!snapshot_) return;
  ServeSnapshot& s = *snapshot_;
  s.result.lifecycle.reset();
  if (train_->isChecked() && training_) with_training(s, training_->scenario, training_->estimate, months_->value());
  const data::ServeRequest& r = s.request;
  const sim::ServePlan& p = s.result.asked.plan;
  const sim::ServeLoad& l = p.at_rate;
  const sim::Currency& cur = r.currency;
  const SloMetric metric = slo_metric(r.job);
  const QString pq = QStringLiteral("p%1").arg(fixed_text(r.job.slo.percentile * 100, 0));
  summary_->setStyleSheet(QString());
  QStringList lines;
  lines << tr("<b>%1</b> on %2 with %3 (%4 cost model) · %5 requests/s, %6 tokens in, %7 out")
               .arg(QString::fromStdString(r.model_id).toHtmlEscaped(), QString::fromStdString(r.cluster.gpu.name).toHtmlEscaped(),
                    QString::fromStdString(r.job.engine.name).toHtmlEscaped(),
                    QString::fromStdString(s.result.cost_model).toHtmlEscaped(), fixed_text(r.job.traffic.rate, 2),
                    count_text(r.job.traffic.input.mean), count_text(r.job.traffic.output.mean));
  const QString layout = QStringLiteral("TP%1 %2").arg(s.result.asked.job.tp).arg(QString::fromLatin1(sim::to_string(s.result.asked.job.weights)));
  if (!p.feasible) {
    lines << tr("<b>%1: not feasible</b> — %2").arg(layout, (p.reason ? finding_text(*p.reason) : QString()).toHtmlEscaped());
  } else {
    lines << tr("<b>%1</b>: %2 replica(s), %3 GPUs on %4 instance(s); each replica at most %5 requests/s within the "
                "target (limited by %6)")
                 .arg(layout)
                 .arg(p.replicas)
                 .arg(p.gpus)
                 .arg(p.instances)
                 .arg(fixed_text(p.max_rate, 2), QString::fromStdString(p.binding));
    // The target's latency first, then TTFT and TPOT unless the target is one of them (each once).
    const double q = r.job.slo.percentile;
    QStringList latencies{tr("%1 %2 %3").arg(metric.name, pq, seconds_text(metric.at(l, q)))};
    if (metric.kind != SloMetric::kTtft) latencies << tr("TTFT %1 %2").arg(pq, seconds_text(l.ttft.at(q)));
    if (metric.kind != SloMetric::kTpot) latencies << tr("TPOT %1 %2").arg(pq, seconds_text(l.tpot.at(q)));
    lines << tr("at %1 requests/s per replica: %2 · %3 output tokens/s · KV cache %4")
                 .arg(fixed_text(l.requests_per_s, 2), latencies.join(QStringLiteral(" · ")),
                      count_text(l.output_tokens_per_s), tokens_text(static_cast<double>(p.memory.kv_tokens)));
    lines << tr("cost: %1 per month (%2 GPU-hours) · per 1M tokens: %3 input, %4 output")
                 .arg(p.usd_per_month ? money_text(*p.usd_per_month, cur) : tr("unknown (no price)"),
                      count_text(p.gpu_hours_per_month),
                      p.usd_per_million_input ? money_text(*p.usd_per_million_input, cur) : tr("unknown"),
                      p.usd_per_million_output ? money_text(*p.usd_per_million_output, cur) : tr("unknown"));
  }
  if (!s.result.explanation.empty()) lines << tr("<i>%1</i>").arg(QString::fromStdString(s.result.explanation).toHtmlEscaped());
  if (const auto& life = s.result.lifecycle) {
    lines << tr("<b>Train, then serve</b>: %1 %2 on %3 GPUs, %4 days, %5; then %6 on %7 GPUs at %8 per month; "
                "after %9 months: <b>%10</b>")
                 .arg(QString::fromStdString(life->training_workload), QString::fromStdString(life->training_model).toHtmlEscaped())
                 .arg(life->training_gpus)
                 .arg(fixed_text(life->training_days, 1),
                      life->training_usd ? money_text(*life->training_usd, cur) : tr("cost unknown"),
                      QString::fromStdString(life->serving_layout))
                 .arg(life->serving_gpus)
                 .arg(life->serving_usd_per_month ? money_text(*life->serving_usd_per_month, cur) : tr("unknown"))
                 .arg(life->months)
                 .arg(life->total_usd ? money_text(*life->total_usd, cur) : tr("unknown"));
    for (const auto& n : life->notes) lines << tr("note: %1").arg(QString::fromStdString(n).toHtmlEscaped());
  } else if (train_->isChecked()) {
    lines << tr("Train, then serve: no training estimate yet (the Estimate tab's scenario is not valid)");
  }
  for (const auto& w : r.warnings) lines << tr("warning: %1").arg(QString::fromStdString(w).toHtmlEscaped());
  if (!s.sheet.isEmpty()) lines << tr("price sheet: %1").arg(s.sheet.toHtmlEscaped());
  summary_->setText(lines.join(QStringLiteral("<br>")));
  fill_serve_curve_chart(curve_view_->chart(), s);
  fill_serve_layouts_chart(layouts_view_->chart(), s);
  fill_serve_pareto_chart(pareto_view_->chart(), s);
  fill_lifecycle_chart(lifecycle_view_->chart(), s);
  emit updated();
}

}  // namespace capplan::gui
