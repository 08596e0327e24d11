// SPDX-License-Identifier: Apache-2.0
#include "scenario_editor.hpp"

#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>
#include <algorithm>

#include "capplan/data/currency.hpp"
#include "capplan/data/fields.hpp"
#include "capplan/gui/finding_text.hpp"
#include "capplan/gui/format.hpp"
#include "capplan/gui/result_models.hpp"
#include "capplan/sim/workload/strategy.hpp"
#include "table_view.hpp"

namespace capplan::gui {

namespace {

const char* const kGroups[] = {"/workload", "/model", "/training", "/cluster", "/strategy", "/pricing", "/tco"};

// Unit texts of the field tables that name the pricing section's currency.
constexpr QLatin1StringView kCurrencyPlaceholder("pricing.currency");

// A label whose text wraps to the width it is given (messages, descriptions).
QLabel* wrapped_label(QWidget* parent) {
  auto* label = new QLabel(parent);
  label->setWordWrap(true);
  return label;
}

void set_combo_data(QComboBox* combo, const QString& value) {
  const int i = combo->findData(value);
  if (i >= 0 && combo->currentIndex() != i) combo->setCurrentIndex(i);
}

}  // namespace

template <class T>
int ScenarioEditor::add_table_rows(QGridLayout* grid, int row, std::span<const data::Field<T>> table,
                                   const std::string& section, const QString& default_text,
                                   std::initializer_list<std::string_view> by_hand) {
  for (const auto& f : table) {
    const data::FieldSpec& spec = f.spec;
    if (std::find(by_hand.begin(), by_hand.end(), std::string_view(spec.pointer)) != by_hand.end()) continue;
    const std::string pointer = section + "/" + spec.pointer;
    const QString label = tr(spec.pointer);  // the scenario key, as the Model box and the Serve tab show it
    // The flag's line says more than the schema's short description when there is one.
    const QString tip = tr(spec.flag.name != nullptr && *spec.flag.help != '\0' ? spec.flag.help : spec.help);
    switch (spec.kind) {
      case data::FieldKind::choice: {
        std::vector<std::pair<QString, QString>> items{{default_text, QString()}};
        for (const char* c : spec.choices) items.emplace_back(QString::fromLatin1(c), QString::fromLatin1(c));
        add_choice(grid, row++, label, pointer, tip, items);
        break;
      }
      case data::FieldKind::boolean:
        add_choice(grid, row++, label, pointer, tip,
                   {{default_text, QString()}, {tr("yes"), QStringLiteral("true")}, {tr("no"), QStringLiteral("false")}});
        break;
      case data::FieldKind::number:
      case data::FieldKind::integer:
      case data::FieldKind::count:
      case data::FieldKind::text:
        add_field(grid, row++, label, pointer, tr(spec.unit), tip)->setPlaceholderText(default_text);
        break;
      default:
        break;  // lists, records and per-choice values: in the scenario file
    }
  }
  return row;
}

ScenarioEditor::ScenarioEditor(ScenarioDocument* doc, QWidget* parent) : QWidget(parent), doc_(doc) {
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  auto* body = new QWidget(scroll);
  auto* layout = new QVBoxLayout(body);
  layout->setContentsMargins(6, 6, 6, 6);
  scroll->setWidget(body);
  outer->addWidget(scroll);

  general_errors_ = wrapped_label(body);
  general_errors_->setStyleSheet(QStringLiteral("color: #c62828;"));
  general_errors_->hide();
  layout->addWidget(general_errors_);

  // ---- Model ----
  auto* model_box = new QGroupBox(tr("Model"), body);
  auto* mg = new QGridLayout(model_box);
  preset_ = new QComboBox(model_box);
  for (const auto& m : doc_->catalogs().models) {
    preset_->addItem(QStringLiteral("%1  (%2B)")
                         .arg(QString::fromStdString(m.id), fixed_text(m.spec.total_params() / 1e9, 1)),
                     QString::fromStdString(m.id));
  }
  preset_->addItem(tr("custom dimensions"), QStringLiteral("custom"));
  preset_->setToolTip(tr("A model from data/models.json, or your own dimensions. With a preset, a dimension typed "
                         "below overrides the preset's."));
  mg->addWidget(new QLabel(tr("Preset"), model_box), 0, 0);
  mg->addWidget(preset_, 0, 1, 1, 2);
  connect(preset_, &QComboBox::activated, this, [this](int i) {
    const QString id = preset_->itemData(i).toString();
    if (id == QLatin1String("custom")) {
      doc_->use_custom_model();
    } else {
      doc_->use_preset(id.toStdString());
    }
  });
  // The dimensions and switches, one row each from the model's field table (capplan/data/fields.hpp):
  // its key, unit and help; a switch left at "preset default" keeps the preset's.
  int row = 1;
  for (const auto& f : data::model_fields()) {
    const std::string pointer = std::string("/model/") + f.spec.pointer;
    const QString key = QString::fromLatin1(f.spec.pointer);
    if (f.spec.kind == data::FieldKind::integer) {
      add_field(mg, row++, key, pointer, tr(f.spec.unit), tr(f.spec.help));
    } else if (f.spec.kind == data::FieldKind::boolean) {
      add_choice(mg, row++, key, pointer, tr(f.spec.help),
                 {{tr("preset default"), QString()}, {tr("yes"), QStringLiteral("true")},
                  {tr("no"), QStringLiteral("false")}});
    }
  }
  add_group(layout, model_box, "/model");

  // ---- Training ----
  auto* train_box = new QGroupBox(tr("Training"), body);
  auto* tg = new QGridLayout(train_box);
  add_field(tg, 0, tr("Tokens"), "/training/tokens", tr("tokens"),
            tr("Total training tokens; SI suffixes allowed: 2T = 2e12, 300B = 3e11"));
  tg->addWidget(new QLabel(tr("Global batch"), train_box), 1, 0);
  batch_ = new QLineEdit(train_box);
  batch_unit_ = new QComboBox(train_box);
  batch_unit_->addItem(tr("sequences"), QStringLiteral("global_batch"));
  batch_unit_->addItem(tr("tokens"), QStringLiteral("global_batch_tokens"));
  tg->addWidget(batch_, 1, 1);
  tg->addWidget(batch_unit_, 1, 2);
  auto batch_edit = [this] {
    if (refreshing_) return;
    const std::string key = batch_unit_->currentData().toString().toStdString();
    const std::string other = key == "global_batch" ? "global_batch_tokens" : "global_batch";
    if (doc_->has("/training/" + other)) {
      // Switching the unit: one of the two keys, never both (the parser refuses both).
      nlohmann::json training = doc_->document().value("training", nlohmann::json::object());
      training.erase(other);
      training.erase(key);
      doc_->set_value("/training", training);
    }
    doc_->set_text("/training/" + key, batch_->text());
  };
  connect(batch_, &QLineEdit::textEdited, this, batch_edit);
  connect(batch_unit_, &QComboBox::activated, this, batch_edit);
  tg->addWidget(new QLabel(tr("Precision"), train_box), 2, 0);
  precision_ = new QComboBox(train_box);
  precision_->setObjectName(QStringLiteral("/training/precision"));
  tg->addWidget(precision_, 2, 1);
  connect(precision_, &QComboBox::activated, this,
          [this](int) { doc_->set_value("/training/precision", precision_->currentData().toString().toStdString()); });
  tg->addWidget(new QLabel(tr("Framework"), train_box), 3, 0);
  framework_ = new QComboBox(train_box);
  // The framework recipes (data/frameworks.json, `capplan catalog frameworks`); the two kernel
  // styles when the catalog has none.
  for (const auto& id : doc_->catalogs().framework_ids()) {
    const auto* entry = doc_->catalogs().find_framework(id);
    const QString name = QString::fromStdString(entry != nullptr ? entry->recipe.name : id);
    framework_->addItem(QStringLiteral("%1 (%2)").arg(QString::fromStdString(id), name), QString::fromStdString(id));
    if (entry != nullptr) {
      framework_->setItemData(framework_->count() - 1, QString::fromStdString(entry->summary), Qt::ToolTipRole);
    }
  }
  tg->addWidget(framework_, 3, 1, 1, 2);
  connect(framework_, &QComboBox::activated, this,
          [this](int) { doc_->set_value("/training/framework", framework_->currentData().toString().toStdString()); });
  // The precisions the training table accepts; the framework details, one row each from the same
  // table (a documented default per framework, docs/model.md): the first item leaves the key out
  // of the scenario, so the default follows the framework and precision.
  for (const auto& f : data::training_fields()) {
    if (std::string_view(f.spec.pointer) != "precision") continue;
    precision_->setToolTip(tr(f.spec.help) + QStringLiteral(" (/training/precision)"));
    for (const char* c : f.spec.choices) precision_->addItem(QString::fromLatin1(c), QString::fromLatin1(c));
  }
  add_table_rows(tg, 4, data::training_fields(), "/training", tr("framework default"),
                 {"tokens", "global_batch", "global_batch_tokens", "precision", "framework"});
  add_group(layout, train_box, "/training");

  // ---- Workload: pre-training, or fine-tuning with its method, adapters and dataset ----
  auto* work_box = new QGroupBox(tr("Workload"), body);
  auto* wg = new QGridLayout(work_box);
  wg->addWidget(new QLabel(tr("Kind"), work_box), 0, 0);
  workload_kind_ = new QComboBox(work_box);
  workload_kind_->setObjectName(QStringLiteral("/workload/kind"));
  workload_kind_->addItem(tr("pre-train"), QStringLiteral("pretrain"));
  workload_kind_->addItem(tr("fine-tune"), QStringLiteral("finetune"));
  workload_kind_->setToolTip(tr("Fine-tuning trains adapters (LoRA, QLoRA) or the whole model (full SFT) over a "
                                "dataset of tokens x epochs; its tokens replace training.tokens"));
  wg->addWidget(workload_kind_, 0, 1, 1, 2);
  connect(workload_kind_, &QComboBox::activated, this, [this](int) {
    const bool finetune = workload_kind_->currentData().toString() == QLatin1String("finetune");
    if (finetune == doc_->has("/workload/dataset")) return;
    if (finetune) {
      // The pre-training tokens become the dataset's (one epoch).
      const nlohmann::json tokens = doc_->has("/training/tokens")
                                        ? doc_->document()["training"]["tokens"]
                                        : nlohmann::json("1B");
      doc_->erase("/training/tokens");
      doc_->set_value("/workload", nlohmann::json{{"kind", "finetune"},
                                                  {"method", "lora"},
                                                  {"dataset", {{"tokens", tokens}, {"epochs", 1}}}});
    } else {
      const nlohmann::json tokens = doc_->document()["workload"]["dataset"].value("tokens", nlohmann::json("1T"));
      doc_->erase("/workload");
      doc_->set_value("/training/tokens", tokens);
    }
  });
  wg->addWidget(new QLabel(tr("Method"), work_box), 1, 0);
  method_ = new QComboBox(work_box);
  method_->setObjectName(QStringLiteral("/workload/method"));
  method_->addItem(tr("LoRA (frozen base, adapters)"), QStringLiteral("lora"));
  method_->addItem(tr("QLoRA (4-bit base, adapters)"), QStringLiteral("qlora"));
  method_->addItem(tr("full SFT (every weight)"), QStringLiteral("full"));
  wg->addWidget(method_, 1, 1, 1, 2);
  connect(method_, &QComboBox::activated, this, [this](int) {
    const QString m = method_->currentData().toString();
    if (m == QLatin1String("full")) doc_->erase("/workload/lora");
    doc_->set_value("/workload/method", m.toStdString());
  });
  add_field(wg, 2, tr("LoRA rank"), "/workload/lora/rank", QString(), tr("Default: the framework recipe's"))
      ->setPlaceholderText(tr("recipe default"));
  wg->addWidget(new QLabel(tr("LoRA targets"), work_box), 3, 0);
  lora_targets_ = new QComboBox(work_box);
  lora_targets_->setObjectName(QStringLiteral("/workload/lora/targets"));
  lora_targets_->addItem(tr("recipe default"), QString());
  lora_targets_->addItem(tr("every linear (q,k,v,o,gate,up,down)"), QStringLiteral("q,k,v,o,gate,up,down"));
  lora_targets_->addItem(tr("attention (q,k,v,o)"), QStringLiteral("q,k,v,o"));
  lora_targets_->addItem(tr("q and v (PEFT's Llama default)"), QStringLiteral("q,v"));
  wg->addWidget(lora_targets_, 3, 1, 1, 2);
  connect(lora_targets_, &QComboBox::activated, this, [this](int) {
    const QString v = lora_targets_->currentData().toString();
    if (v.isEmpty()) {
      doc_->erase("/workload/lora/targets");
      return;
    }
    nlohmann::json list = nlohmann::json::array();
    for (const QString& t : v.split(QLatin1Char(','))) list.push_back(t.toStdString());
    doc_->set_value("/workload/lora/targets", list);
  });
  add_field(wg, 4, tr("Dataset tokens"), "/workload/dataset/tokens", tr("tokens"),
            tr("Tokens of one epoch; SI suffixes allowed: 2B = 2e9"));
  add_field(wg, 5, tr("Epochs"), "/workload/dataset/epochs", QString(), tr("Passes over the dataset"));
  add_group(layout, work_box, "/workload");

  // ---- Cluster ----
  auto* cluster_box = new QGroupBox(tr("Cluster"), body);
  auto* cl = new QVBoxLayout(cluster_box);
  auto* radios = new QHBoxLayout();
  by_instance_ = new QRadioButton(tr("Cloud instance"), cluster_box);
  by_gpu_ = new QRadioButton(tr("GPU + count (on-prem / custom)"), cluster_box);
  radios->addWidget(by_instance_);
  radios->addWidget(by_gpu_);
  radios->addStretch(1);
  cl->addLayout(radios);

  instance_box_ = new QWidget(cluster_box);
  auto* ib = new QGridLayout(instance_box_);
  ib->setContentsMargins(0, 0, 0, 0);
  instance_search_ = new QLineEdit(instance_box_);
  instance_search_->setPlaceholderText(tr("Search instances: provider, GPU, name (e.g. \"h100 aws\")"));
  instance_search_->setClearButtonEnabled(true);
  ib->addWidget(instance_search_, 0, 0, 1, 3);
  instance_model_ = new InstanceCatalogModel(doc_->catalogs_ptr(), this);
  instance_filter_ = new InstanceFilterModel(this);
  instance_filter_->setSourceModel(instance_model_);
  instances_ = make_table_view(instance_filter_, -1, 20, instance_box_);
  instances_->setSelectionMode(QAbstractItemView::SingleSelection);
  instances_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  instances_->horizontalHeader()->setStretchLastSection(true);
  instances_->hideColumn(InstanceCatalogModel::kPriceDate);  // in the tooltip
  instances_->setMinimumHeight(140);
  instances_->setMaximumHeight(170);
  ib->addWidget(instances_, 1, 0, 1, 3);
  instance_label_ = wrapped_label(instance_box_);
  ib->addWidget(instance_label_, 2, 0, 1, 3);
  add_field(ib, 3, tr("Nodes"), "/cluster/nodes", tr("instances"), tr("Number of instances (nodes)"));
  connect(instance_search_, &QLineEdit::textChanged, instance_filter_, &InstanceFilterModel::set_query);
  connect(instances_, &QTableView::clicked, this, [this](const QModelIndex& i) {
    const QString id = i.siblingAtColumn(InstanceCatalogModel::kId).data(kKeyRole).toString();
    if (!id.isEmpty() && doc_->text("/cluster/instance") != id) doc_->use_instance(id.toStdString());
  });
  cl->addWidget(instance_box_);

  gpu_box_ = new QWidget(cluster_box);
  auto* gb = new QGridLayout(gpu_box_);
  gb->setContentsMargins(0, 0, 0, 0);
  gb->addWidget(new QLabel(tr("GPU"), gpu_box_), 0, 0);
  gpu_ = new QComboBox(gpu_box_);
  for (const auto& g : doc_->catalogs().gpus) {
    gpu_->addItem(QStringLiteral("%1  (%2 GiB)").arg(QString::fromStdString(g.spec.id),
                                                      fixed_text(units::to_gib(g.spec.hbm_capacity), 0)),
                  QString::fromStdString(g.spec.id));
  }
  gb->addWidget(gpu_, 0, 1, 1, 2);
  connect(gpu_, &QComboBox::activated, this, [this](int) { doc_->use_gpu(gpu_->currentData().toString().toStdString()); });
  add_field(gb, 1, tr("GPUs"), "/cluster/gpus", tr("GPUs"), tr("Number of GPUs"));
  add_field(gb, 2, tr("GPUs per node"), "/cluster/gpus_per_node", tr("GPUs"), tr("Default 8"));
  add_field(gb, 3, tr("Inter-node"), "/cluster/inter_node_gbps_per_gpu", tr("Gbit/s per GPU"),
            tr("Inter-node bandwidth per GPU, one direction (default 400 Gbit/s, DGX reference)"))
      ->setPlaceholderText(tr("default: 400 (DGX reference)"));
  cl->addWidget(gpu_box_);
  auto* spread_box = new QWidget(cluster_box);
  auto* sb = new QGridLayout(spread_box);
  sb->setContentsMargins(0, 0, 0, 0);
  add_field(sb, 0, tr("GPU speed spread"), "/cluster/gpu_speed_spread", tr("sigma"),
            tr("Relative standard deviation of per-GPU compute speed; the step waits for the slowest GPU "
               "(default 0.015 from Sinha et al., SC'22; 0 = identical GPUs)"))
      ->setPlaceholderText(tr("default: 0.015"));
  cl->addWidget(spread_box);
  connect(by_instance_, &QRadioButton::clicked, this, [this] {
    if (doc_->has("/cluster/instance")) return;
    const auto& cat = doc_->catalogs();
    std::string id = cat.instances.empty() ? std::string() : cat.instances.front().id;
    // Prefer an instance with the GPU already chosen.
    if (doc_->last_good()) {
      for (const auto& e : cat.instances) {
        if (e.gpu == doc_->last_good()->scenario.cluster.gpu.id) {
          id = e.id;
          break;
        }
      }
    }
    doc_->use_instance(id);
  });
  connect(by_gpu_, &QRadioButton::clicked, this, [this] {
    if (doc_->has("/cluster/gpu")) return;
    const std::string gpu = doc_->last_good() ? doc_->last_good()->scenario.cluster.gpu.id : std::string("h100-sxm-80gb");
    doc_->use_gpu(gpu);
  });
  add_group(layout, cluster_box, "/cluster");

  // ---- Strategy ----
  auto* strategy_box = new QGroupBox(tr("Parallel strategy"), body);
  auto* sl = new QVBoxLayout(strategy_box);
  strategy_auto_ = new QCheckBox(tr("Let capplan choose the whole strategy (auto)"), strategy_box);
  strategy_auto_->setToolTip(tr("Best throughput that fits in memory; untick to fix fields one by one"));
  sl->addWidget(strategy_auto_);
  connect(strategy_auto_, &QCheckBox::clicked, this, [this](bool on) { doc_->set_strategy_auto(on); });
  strategy_fields_ = new QWidget(strategy_box);
  auto* sg = new QGridLayout(strategy_fields_);
  sg->setContentsMargins(0, 0, 0, 0);
  const std::pair<const char*, const char*> sfields[] = {
      {"tp", "tensor parallel"}, {"pp", "pipeline parallel"}, {"dp", "data parallel"},
      {"cp", "context parallel"}, {"ep", "expert parallel (MoE)"}, {"micro_batch", "sequences per micro-batch"},
      {"virtual_stages", "interleaved chunks per pipeline rank"}, {"zero", "ZeRO stage 0-3"}};
  row = 0;
  for (const auto& [key, help] : sfields) {
    const std::string pointer = std::string("/strategy/") + key;
    QLineEdit* edit = add_field(sg, row, QString::fromLatin1(key), pointer, QString(), QString::fromLatin1(help));
    auto* box = new QCheckBox(tr("auto"), strategy_fields_);
    box->setObjectName(QString::fromStdString(pointer) + QStringLiteral("#auto"));
    sg->addWidget(box, row, 3);
    auto_boxes_[pointer] = box;
    connect(box, &QCheckBox::clicked, this, [this, pointer, edit](bool on) {
      if (on) {
        doc_->set_value(pointer, "auto");
      } else {
        // Start from what capplan chose, so unticking keeps the current result.
        QString chosen = edit->placeholderText().section(QLatin1Char(' '), -1);
        bool ok = false;
        chosen.toInt(&ok);
        doc_->set_text(pointer, ok ? chosen : QStringLiteral("1"));
      }
    });
    ++row;
  }
  sg->addWidget(new QLabel(tr("recompute"), strategy_fields_), row, 0);
  recompute_ = new QComboBox(strategy_fields_);
  for (const char* r : {"auto", "none", "selective", "full"}) recompute_->addItem(QString::fromLatin1(r), QString::fromLatin1(r));
  sg->addWidget(recompute_, row++, 1, 1, 3);
  connect(recompute_, &QComboBox::activated, this,
          [this](int) { doc_->set_value("/strategy/recompute", recompute_->currentData().toString().toStdString()); });
  // The on/off options, one check box each from sim::kStrategyOptions; those the planner searches
  // get an "auto" box as the numbers have.
  for (const auto& o : sim::kStrategyOptions) {
    const std::string pointer = std::string("/strategy/") + o.key;
    auto* box = new QCheckBox(tr(o.label), strategy_fields_);
    box->setObjectName(QString::fromStdString(pointer));
    box->setToolTip(tr(o.help) + QStringLiteral(" (") + QString::fromStdString(pointer) + QStringLiteral(")"));
    sg->addWidget(box, row, 0, 1, 3);
    option_boxes_[pointer] = {&o, box, nullptr};
    connect(box, &QCheckBox::clicked, this, [this, pointer](bool on) { doc_->set_value(pointer, on); });
    if (o.searched) {
      auto* automatic = new QCheckBox(tr("auto"), strategy_fields_);
      automatic->setObjectName(QString::fromStdString(pointer) + QStringLiteral("#auto"));
      sg->addWidget(automatic, row, 3);
      option_boxes_[pointer].automatic = automatic;
      // Unticking "auto" keeps what is in effect (capplan's choice), now fixed.
      connect(automatic, &QCheckBox::clicked, this, [this, pointer, box](bool on) {
        doc_->set_value(pointer, on ? nlohmann::json("auto") : nlohmann::json(box->isChecked()));
      });
    }
    ++row;
  }
  sl->addWidget(strategy_fields_);
  add_group(layout, strategy_box, "/strategy");

  // ---- Pricing ----
  auto* price_box = new QGroupBox(tr("Price"), body);
  auto* pg = new QGridLayout(price_box);
  price_label_ = wrapped_label(price_box);
  pg->addWidget(price_label_, 0, 0, 1, 3);
  price_override_ = new QCheckBox(tr("Override"), price_box);
  pg->addWidget(price_override_, 1, 0);
  price_ = new QLineEdit(price_box);
  price_->setPlaceholderText(tr("e.g. 2.50"));
  pg->addWidget(price_, 1, 1);
  price_unit_ = new QLabel(price_box);  // "per GPU-hour in <the scenario's currency>"
  price_unit_->setObjectName(QStringLiteral("/pricing/usd_per_gpu_hour#unit"));
  pg->addWidget(price_unit_, 1, 2);
  price_->setObjectName(QStringLiteral("/pricing/usd_per_gpu_hour"));
  fields_["/pricing/usd_per_gpu_hour"] = price_;
  connect(price_override_, &QCheckBox::clicked, this, [this](bool on) {
    if (!on) {
      doc_->set_price_override(std::nullopt);
    } else if (doc_->last_good() && doc_->last_good()->scenario.cluster.price_per_gpu) {
      // The price in effect, in the currency the scenario shows. The section's amounts are read in
      // pricing.currency (US dollars when it names none), so a currency that came from a price
      // sheet or the catalog is written into the section with its rate, then the price in it.
      const auto& sc = doc_->last_good()->scenario;
      const sim::Currency& cur = sc.pricing.currency;
      nlohmann::json pricing = doc_->document().value("pricing", nlohmann::json::object());
      if (!pricing.is_object()) pricing = nlohmann::json::object();
      if (!cur.is_usd() && !pricing.contains("currency")) {
        pricing["currency"] = cur.code;
        pricing["usd_per_unit"] = cur.usd_per_unit;
        if (!cur.rate_date.empty()) pricing["usd_per_unit_date"] = cur.rate_date;
      }
      const sim::Currency section = pricing.contains("currency") ? cur : sim::Currency{};
      pricing.erase("usd_per_node_hour");
      pricing["usd_per_gpu_hour"] = data::from_usd(units::to_usd_per_hour(*sc.cluster.price_per_gpu), section);
      doc_->set_value("/pricing", std::move(pricing));
    } else {
      doc_->set_text("/pricing/usd_per_gpu_hour", price_->text().isEmpty() ? QStringLiteral("1") : price_->text());
    }
  });
  connect(price_, &QLineEdit::textEdited, this, [this](const QString& t) {
    if (!refreshing_) doc_->set_text("/pricing/usd_per_gpu_hour", t);
  });
  // The purchase model, currency, price sheet and the spot, reserved and on-premises terms: one
  // row each from the pricing table (the two prices are the override above).
  add_table_rows(pg, 2, data::pricing_fields(), "/pricing", tr("default"), {"usd_per_gpu_hour", "usd_per_node_hour"});
  add_group(layout, price_box, "/pricing");

  // ---- Own vs rent: the tco section (capplan tco), one row per field of its table ----
  auto* tco_box = new QGroupBox(tr("Own vs rent (tco)"), body);
  auto* og = new QGridLayout(tco_box);
  auto* tco_hint = wrapped_label(tco_box);
  tco_hint->setText(tr("Owning the cluster compared with renting it (the Own vs rent tab); amounts in the "
                       "scenario's currency. Leave every field empty for no tco section."));
  tco_hint->setStyleSheet(QStringLiteral("color: #4a5568;"));
  og->addWidget(tco_hint, 0, 0, 1, 3);
  add_table_rows(og, 1, data::tco_fields(), "/tco", tr("not set"));
  add_group(layout, tco_box, "/tco");

  // ---- Calibration ----
  auto* cal_box = new QGroupBox(tr("Cost model"), body);
  auto* cg = new QHBoxLayout(cal_box);
  profile_label_ = wrapped_label(cal_box);
  auto* choose = new QPushButton(tr("Calibration profile…"), cal_box);
  connect(choose, &QPushButton::clicked, this, &ScenarioEditor::choose_profile);
  profile_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  datasheet_button_ = new QPushButton(tr("Datasheet"), cal_box);
  datasheet_button_->setToolTip(tr("Price operations with the datasheet model again"));
  connect(datasheet_button_, &QPushButton::clicked, this, [this] { emit datasheet_chosen(); });
  auto* buttons = new QVBoxLayout();
  buttons->addWidget(choose);
  buttons->addWidget(datasheet_button_);
  buttons->addStretch(1);
  cg->addWidget(profile_label_, 1);
  cg->addLayout(buttons);
  layout->addWidget(cal_box);
  layout->addStretch(1);

  connect(doc_, &ScenarioDocument::changed, this, [this] {
    estimate_errors_.clear();  // refusals belong to the document they came from
    refresh();
  });
  refresh();
}

QLineEdit* ScenarioEditor::add_field(QGridLayout* grid, int row, const QString& label, const std::string& pointer,
                                     const QString& unit, const QString& tip) {
  auto* parent = grid->parentWidget();
  auto* l = new QLabel(label, parent);
  l->setToolTip(tip);
  auto* edit = new QLineEdit(parent);
  edit->setToolTip(tip + QStringLiteral(" (") + QString::fromStdString(pointer) + QStringLiteral(")"));
  edit->setObjectName(QString::fromStdString(pointer));
  grid->addWidget(l, row, 0);
  grid->addWidget(edit, row, 1);
  if (!unit.isEmpty()) {
    auto* unit_label = new QLabel(unit, parent);
    grid->addWidget(unit_label, row, 2);
    if (unit.contains(kCurrencyPlaceholder)) currency_units_.emplace_back(unit_label, unit);
  }
  fields_[pointer] = edit;
  connect(edit, &QLineEdit::textEdited, this, [this, pointer](const QString& text) {
    if (!refreshing_) doc_->set_text(pointer, text);
  });
  return edit;
}

QComboBox* ScenarioEditor::add_choice(QGridLayout* grid, int row, const QString& label, const std::string& pointer,
                                      const QString& tip,
                                      const std::vector<std::pair<QString, QString>>& items) {
  auto* parent = grid->parentWidget();
  grid->addWidget(new QLabel(label, parent), row, 0);
  auto* combo = new QComboBox(parent);
  combo->setObjectName(QString::fromStdString(pointer));
  combo->setToolTip(tip + QStringLiteral(" (") + QString::fromStdString(pointer) + QStringLiteral(")"));
  for (const auto& [text, value] : items) combo->addItem(text, value);
  grid->addWidget(combo, row, 1, 1, 2);
  // The first item (value "") leaves the key out, so the default in effect applies.
  connect(combo, &QComboBox::activated, this, [this, combo, pointer](int) {
    const QString value = combo->currentData().toString();
    if (value.isEmpty()) {
      doc_->erase(pointer);
    } else if (value == QStringLiteral("true") || value == QStringLiteral("false")) {
      doc_->set_value(pointer, value == QStringLiteral("true"));
    } else {
      doc_->set_value(pointer, value.toStdString());
    }
  });
  option_combos_[pointer] = combo;
  return combo;
}

void ScenarioEditor::add_group(QVBoxLayout* layout, QGroupBox* box, const char* pointer) {
  errors_[pointer] = add_error_label(box);
  layout->addWidget(box);
}

QLabel* ScenarioEditor::add_error_label(QGroupBox* box) {
  auto* label = wrapped_label(box);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  label->setStyleSheet(QStringLiteral("color: #c62828;"));
  label->hide();
  if (auto* grid = qobject_cast<QGridLayout*>(box->layout())) {
    grid->addWidget(label, grid->rowCount(), 0, 1, 4);
  } else if (auto* v = qobject_cast<QBoxLayout*>(box->layout())) {
    v->addWidget(label);
  }
  return label;
}

QLineEdit* ScenarioEditor::field(const std::string& pointer) const {
  auto it = fields_.find(pointer);
  return it == fields_.end() ? nullptr : it->second;
}

void ScenarioEditor::choose_profile() {
  const QString file = QFileDialog::getOpenFileName(this, tr("Calibration profile"), QString(),
                                                    tr("Calibration profiles (*.json);;All files (*)"));
  if (file.isEmpty()) return;
  emit calibration_profile_chosen(file);
}

void ScenarioEditor::show_profile(const LoadedProfile* loaded, const QStringList& errors) {
  profile_errors_ = errors;
  if (errors.isEmpty()) {
    profile_path_ = loaded != nullptr ? loaded->path : QString();
    profile_name_ = loaded != nullptr ? loaded->label() : QString();
    profile_measured_ = loaded != nullptr ? loaded->measured() : QStringList();
  }
  refresh();
}

void ScenarioEditor::show_result(const EstimateSnapshot& snapshot) {
  last_result_ = snapshot;
  estimate_errors_.clear();
  refresh();
}

void ScenarioEditor::show_estimate_errors(const QStringList& messages) {
  estimate_errors_ = messages;
  refresh();
}

void ScenarioEditor::refresh() {
  refreshing_ = true;
  const auto& good = doc_->last_good();
  const nlohmann::json& d = doc_->document();

  // Texts of the fields as the document holds them; a field being typed in is left alone.
  for (auto& [pointer, edit] : fields_) {
    if (edit->hasFocus()) continue;
    const QString t = doc_->text(pointer);
    if (edit->text() != t) edit->setText(t);
  }
  // Placeholders: the value in effect (a preset's dimension, capplan's choice for "auto").
  if (good) {
    for (const auto& f : data::model_fields()) {
      if (f.get == nullptr) continue;
      const std::string pointer = std::string("/model/") + f.spec.pointer;
      const nlohmann::json v = f.get(good->scenario.model);  // null: not set (head_dim = hidden / heads)
      if (f.spec.kind == data::FieldKind::integer) {
        fields_[pointer]->setPlaceholderText(v.is_null() ? tr("default")
                                                         : tr("preset: %1").arg(QString::fromStdString(v.dump())));
      } else if (f.spec.kind == data::FieldKind::boolean && v.is_boolean()) {
        // The first item leaves the switch to the preset: it says what that is.
        option_combos_.at(pointer)->setItemText(0, tr("preset: %1").arg(v.get<bool>() ? tr("yes") : tr("no")));
      }
    }
    fields_["/cluster/gpus_per_node"]->setPlaceholderText(QString::number(good->scenario.cluster.gpus_per_node));
  }
  if (last_result_) {
    const auto& p = last_result_->estimate.layout.strategy;
    const std::pair<const char*, int> chosen[] = {{"tp", p.tp}, {"pp", p.pp}, {"dp", p.dp}, {"cp", p.cp},
                                                  {"ep", p.ep}, {"micro_batch", p.micro_batch},
                                                  {"virtual_stages", p.virtual_stages}, {"zero", p.zero}};
    for (const auto& [key, v] : chosen) {
      fields_[std::string("/strategy/") + key]->setPlaceholderText(tr("auto: %1").arg(v));
    }
  }

  // Model preset.
  const QString preset = doc_->text("/model/preset");
  set_combo_data(preset_, preset.isEmpty() ? QStringLiteral("custom") : preset);

  // Training.
  const bool tokens_unit = doc_->has("/training/global_batch_tokens");
  set_combo_data(batch_unit_, tokens_unit ? QStringLiteral("global_batch_tokens") : QStringLiteral("global_batch"));
  if (!batch_->hasFocus()) {
    batch_->setText(doc_->text(tokens_unit ? "/training/global_batch_tokens" : "/training/global_batch"));
  }
  const QString prec = doc_->text("/training/precision");
  set_combo_data(precision_, prec.isEmpty() ? QStringLiteral("bf16") : prec);
  const QString fw = doc_->text("/training/framework");
  set_combo_data(framework_, fw.isEmpty() ? QStringLiteral("megatron") : fw);
  for (const auto& [pointer, combo] : option_combos_) set_combo_data(combo, doc_->text(pointer));
  for (const char* pointer : {"/training/fp8_recipe", "/training/fp8_params"}) {
    option_combos_.at(pointer)->setEnabled(prec == QStringLiteral("fp8"));
  }

  // Workload.
  const bool finetune = doc_->has("/workload/dataset");
  set_combo_data(workload_kind_, finetune ? QStringLiteral("finetune") : QStringLiteral("pretrain"));
  const QString method = doc_->text("/workload/method");
  set_combo_data(method_, method.isEmpty() ? QStringLiteral("lora") : method);
  QString targets;
  if (doc_->has("/workload/lora/targets")) {
    for (const auto& t : doc_->document()["workload"]["lora"]["targets"]) {
      if (t.is_string()) targets += (targets.isEmpty() ? "" : ",") + QString::fromStdString(t.get<std::string>());
    }
  }
  set_combo_data(lora_targets_, targets);
  const bool adapters = finetune && method != QLatin1String("full");
  method_->setEnabled(finetune);
  lora_targets_->setEnabled(adapters);
  fields_.at("/workload/lora/rank")->setEnabled(adapters);
  fields_.at("/workload/dataset/tokens")->setEnabled(finetune);
  fields_.at("/workload/dataset/epochs")->setEnabled(finetune);
  fields_.at("/training/tokens")->setEnabled(!finetune);

  // Cluster.
  const bool instance = !doc_->has("/cluster/gpu");
  by_instance_->setChecked(instance);
  by_gpu_->setChecked(!instance);
  instance_box_->setVisible(instance);
  gpu_box_->setVisible(!instance);
  if (instance) {
    const QString id = doc_->text("/cluster/instance");
    const int src = instance_model_->row_of(id);
    if (src >= 0) {
      const QModelIndex pi = instance_filter_->mapFromSource(instance_model_->index(src, 0));
      if (pi.isValid() && instances_->currentIndex().row() != pi.row()) {
        instances_->setCurrentIndex(pi);
        instances_->scrollTo(pi);
      }
    }
    if (const auto* e = doc_->catalogs().find_instance(id.toStdString())) {
      instance_label_->setText(tr("<b>%1</b>: %2 x %3 per node · network %4 · %5")
                                   .arg(id.toHtmlEscaped())
                                   .arg(e->gpus_per_node)
                                   .arg(QString::fromStdString(e->gpu))
                                   .arg(e->network_gbps ? gbit_text(*e->network_gbps) : tr("unknown"))
                                   .arg(QString::fromStdString(e->network).toHtmlEscaped()));
    } else {
      instance_label_->setText(id.isEmpty() ? tr("Pick an instance above") : tr("unknown instance '%1'").arg(id));
    }
  } else {
    set_combo_data(gpu_, doc_->text("/cluster/gpu"));
  }

  // Strategy.
  const bool all_auto = d.contains("strategy") && d["strategy"].is_string();
  const bool no_strategy = !d.contains("strategy");
  strategy_auto_->setChecked(all_auto || no_strategy);
  strategy_fields_->setEnabled(!(all_auto || no_strategy));
  for (auto& [pointer, box] : auto_boxes_) {
    const QString t = doc_->text(pointer);
    const bool is_auto = all_auto || no_strategy || t.isEmpty() || t == QLatin1String("auto");
    box->setChecked(is_auto);
    fields_[pointer]->setEnabled(!is_auto);
    if (is_auto && !fields_[pointer]->hasFocus()) fields_[pointer]->clear();
  }
  const QString rc = doc_->text("/strategy/recompute");
  set_combo_data(recompute_, rc.isEmpty() || all_auto ? QStringLiteral("auto") : rc);
  for (auto& [pointer, b] : option_boxes_) {
    const QString t = doc_->text(pointer);
    const bool fixed = !(all_auto || no_strategy) && (t == QLatin1String("true") || t == QLatin1String("false"));
    // In effect: the document's value, else capplan's choice, else the default.
    const bool on = fixed ? t == QLatin1String("true")
                          : last_result_ ? last_result_->estimate.layout.strategy.*b.option->value : b.option->fallback;
    b.box->setChecked(on);
    if (b.automatic != nullptr) {
      b.automatic->setChecked(!fixed);
      b.box->setEnabled(fixed);
    }
  }

  // Price.
  // Overridden: a price in the pricing section, or a section left empty (the price being retyped);
  // a section with terms only (spot, reserved, ...) prices from the catalog.
  const nlohmann::json* pricing = doc_->document().contains("pricing") ? &doc_->document()["pricing"] : nullptr;
  const bool overridden = doc_->has("/pricing/usd_per_gpu_hour") || doc_->has("/pricing/usd_per_node_hour") ||
                          (pricing != nullptr && pricing->empty());
  price_override_->setChecked(overridden);
  price_->setEnabled(overridden);
  if (good) {
    const auto& c = good->scenario.cluster;
    const sim::Currency& cur = good->scenario.pricing.currency;  // the currency costs are shown in
    // The section's amounts are read in pricing.currency, US dollars when it names none; ticking
    // Override writes the shown currency into the section, so that is the override's unit until then.
    const bool named = doc_->has("/pricing/currency");
    const QString code = QString::fromStdString(named ? cur.code : std::string("USD"));
    const QString override_code = named || !overridden ? QString::fromStdString(cur.code) : code;
    price_unit_->setText(tr("per GPU-hour in %1").arg(override_code));
    // In the field too: the unit column can be scrolled out of view.
    price_->setPlaceholderText(tr("%1 per GPU-hour, e.g. 2.50").arg(override_code));
    for (auto& [label, unit] : currency_units_) label->setText(QString(unit).replace(kCurrencyPlaceholder, code));
    if (c.price_per_gpu) {
      price_label_->setText(tr("%1 per GPU-hour — %2")
                                .arg(money_text(units::to_usd_per_hour(*c.price_per_gpu), cur))
                                .arg(QString::fromStdString(c.price_source)));
    } else {
      price_label_->setText(tr("No price in the catalog for this offering: tick Override and give one "
                               "(the cost stays unknown otherwise)."));
    }
  }

  // Calibration: which cost model prices the estimate, what the profile measured, and what fell
  // back to the datasheet for this layout (the estimate's "profile: ..." warnings).
  QString cal;
  if (profile_path_.isEmpty()) {
    cal = tr("<b>datasheet model</b> (roofline with published or default efficiencies). Load a calibration "
             "profile (<tt>capplan calibrate --out</tt>) to price operations with measured numbers.");
  } else {
    QStringList fallback;
    if (last_result_) {
      for (const auto& f : last_result_->estimate.findings) {
        if (!sim::is_profile_gap(f.code)) continue;
        sim::Finding gap = f;
        gap.field.clear();  // without its "profile: "
        fallback << finding_text(gap).toHtmlEscaped();
      }
    }
    QStringList measured;
    for (const auto& m : profile_measured_) measured << m.toHtmlEscaped();
    cal = tr("<b>%1</b> — %2<br><span style='color:#1a7f37'>measured:</span> %3<br>"
             "<span style='color:#8a5a00'>datasheet:</span> %4")
              .arg(profile_name_.toHtmlEscaped(), QFileInfo(profile_path_).fileName().toHtmlEscaped(),
                   measured.isEmpty() ? tr("nothing the estimate uses") : measured.join(QStringLiteral("; ")),
                   fallback.isEmpty() ? tr("nothing (every operation of this layout is covered)")
                                      : fallback.join(QStringLiteral("; ")));
  }
  if (!profile_errors_.isEmpty()) {
    QStringList errs;
    for (const auto& m : profile_errors_) errs << m.toHtmlEscaped();
    cal = tr("<span style='color:#c62828'><b>Profile refused</b> (the %1 is still in use):<br>%2</span><br>")
              .arg(profile_path_.isEmpty() ? tr("datasheet model") : tr("previous profile"),
                   errs.join(QStringLiteral("<br>"))) +
          cal;
  }
  profile_label_->setText(cal);
  datasheet_button_->setEnabled(!profile_path_.isEmpty());

  // Messages, beside the group they belong to.
  QStringList general;
  auto under = [](const QString& msg, const std::string& pointer) {
    const QString prefix = QString::fromLatin1(ScenarioDocument::kWhere.data(), ScenarioDocument::kWhere.size()) +
                           QLatin1Char('#') + QString::fromStdString(pointer);
    return msg.startsWith(prefix + QLatin1Char(':')) || msg.startsWith(prefix + QLatin1Char('/'));
  };
  for (const char* g : kGroups) {
    QStringList msgs = doc_->messages_for(g);
    for (const auto& m : estimate_errors_) {
      if (under(m, g)) msgs << m;
    }
    QLabel* label = errors_[g];
    label->setText(msgs.join(QLatin1Char('\n')));
    label->setVisible(!msgs.isEmpty());
  }
  for (const auto& diag : doc_->diagnostics()) {
    if (diag.severity != Diagnostic::Severity::error) continue;
    bool grouped = false;
    for (const char* g : kGroups) {
      const std::string prefix = std::string(ScenarioDocument::kWhere) + "#" + g;
      grouped = grouped || diag.where == prefix || diag.where.starts_with(prefix + "/");
    }
    if (!grouped) general << QString::fromStdString(diag.where + ": " + diag.message);
  }
  general_errors_->setText(general.join(QLatin1Char('\n')));
  general_errors_->setVisible(!general.isEmpty());
  // Fields with an error get a red frame.
  for (auto& [pointer, edit] : fields_) {
    bool bad = !doc_->messages_for(pointer).isEmpty();
    for (const auto& m : estimate_errors_) bad = bad || under(m, pointer);
    edit->setStyleSheet(bad ? QStringLiteral("QLineEdit { border: 2px solid #c62828; }") : QString());
  }
  refreshing_ = false;
}

}  // namespace capplan::gui
