// SPDX-License-Identifier: Apache-2.0
#include "capplan/gui/scenario_document.hpp"

#include "capplan/data/price_sheet.hpp"

#include <utility>

namespace capplan::gui {

using nlohmann::json;

namespace {

std::vector<std::string> split_pointer(std::string_view pointer) {
  std::vector<std::string> keys;
  size_t pos = 1;
  while (pos <= pointer.size()) {
    const size_t slash = pointer.find('/', pos);
    keys.emplace_back(pointer.substr(pos, slash == std::string_view::npos ? std::string_view::npos : slash - pos));
    if (slash == std::string_view::npos) break;
    pos = slash + 1;
  }
  return keys;
}

const json* find_at(const json& root, std::string_view pointer) {
  const json* node = &root;
  for (const auto& key : split_pointer(pointer)) {
    if (!node->is_object()) return nullptr;
    auto it = node->find(key);
    if (it == node->end()) return nullptr;
    node = &*it;
  }
  return node;
}

// A typed text as the CLI's flags read it (cli/estimate_command.cpp flag_value).
json value_of(const QString& text) {
  const std::string s = text.trimmed().toStdString();
  json parsed = json::parse(s, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_number() || parsed.is_boolean()) return parsed;
  return s;
}

}  // namespace

ScenarioDocument::ScenarioDocument(std::shared_ptr<const data::Catalogs> catalogs, QObject* parent)
    : QObject(parent), catalogs_(std::move(catalogs)) {
  doc_ = data::example_scenario();
  revalidate();
}

void ScenarioDocument::load_json(json doc) {
  doc_ = std::move(doc);
  modified_ = false;
  revalidate();
}

Result<void> ScenarioDocument::load_text(std::string_view text) {
  // The CLI's parser and its limits (nesting depth, NUL bytes, duplicate keys:
  // a deeply nested scenario crashed the app), worded as the CLI words them.
  auto doc = data::parse_scenario_document(text, kWhere);
  if (!doc) return std::unexpected(std::move(doc.error()));
  load_json(std::move(*doc));
  return {};
}

std::string ScenarioDocument::to_text() const { return doc_.dump(2) + "\n"; }

void ScenarioDocument::load_example() {
  file_path_.clear();
  load_json(data::example_scenario());
}

void ScenarioDocument::set_text(std::string_view pointer, const QString& text) {
  if (text.trimmed().isEmpty()) {
    erase(pointer);
    return;
  }
  set_value(pointer, value_of(text));
}

void ScenarioDocument::set_value(std::string_view pointer, json value) {
  if (const json* old = find_at(doc_, pointer); old != nullptr && *old == value) return;
  set_at(doc_, pointer, std::move(value));
  modified_ = true;
  revalidate();
}

void ScenarioDocument::erase(std::string_view pointer) {
  const auto keys = split_pointer(pointer);
  json* node = &doc_;
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    if (!node->is_object() || !node->contains(keys[i])) return;
    node = &(*node)[keys[i]];
  }
  if (!node->is_object() || !node->contains(keys.back())) return;
  node->erase(keys.back());
  modified_ = true;
  revalidate();
}

bool ScenarioDocument::has(std::string_view pointer) const { return find_at(doc_, pointer) != nullptr; }

QString ScenarioDocument::text(std::string_view pointer) const {
  const json* v = find_at(doc_, pointer);
  if (v == nullptr || v->is_null()) return {};
  if (v->is_string()) return QString::fromStdString(v->get<std::string>());
  return QString::fromStdString(v->dump());
}

void ScenarioDocument::use_preset(const std::string& model_id) {
  json model = json::object();
  model["preset"] = model_id;
  doc_["model"] = std::move(model);
  modified_ = true;
  revalidate();
}

void ScenarioDocument::use_custom_model() {
  if (!last_good_) return;
  const sim::ModelSpec& m = last_good_->scenario.model;
  json model = data::model_to_json(m);  // every key the parser reads (MoE routing and clamps included)
  model["name"] = m.name.empty() ? std::string("custom") : m.name + " (custom)";
  doc_["model"] = std::move(model);
  modified_ = true;
  revalidate();
}

void ScenarioDocument::use_instance(const std::string& instance_id) {
  json cluster = json::object();
  const json* nodes = find_at(doc_, "/cluster/nodes");
  cluster["instance"] = instance_id;
  cluster["nodes"] = nodes != nullptr ? *nodes : json(1);
  for (const char* key : {"intra_node_gbps", "inter_node_gbps_per_gpu", "gpu_speed_spread"}) {
    if (const json* v = find_at(doc_, std::string("/cluster/") + key)) cluster[key] = *v;
  }
  doc_["cluster"] = std::move(cluster);
  modified_ = true;
  revalidate();
}

void ScenarioDocument::use_gpu(const std::string& gpu_id) {
  json cluster = json::object();
  cluster["gpu"] = gpu_id;
  if (const json* gpus = find_at(doc_, "/cluster/gpus")) {
    cluster["gpus"] = *gpus;
  } else if (last_good_) {
    cluster["gpus"] = last_good_->scenario.cluster.gpus;
  } else {
    cluster["gpus"] = 8;
  }
  for (const char* key : {"gpus_per_node", "intra_node_gbps", "inter_node_gbps_per_gpu", "gpu_speed_spread"}) {
    if (const json* v = find_at(doc_, std::string("/cluster/") + key)) cluster[key] = *v;
  }
  doc_["cluster"] = std::move(cluster);
  modified_ = true;
  revalidate();
}

void ScenarioDocument::set_strategy_auto(bool all_auto) {
  if (all_auto) {
    doc_["strategy"] = "auto";
  } else {
    // Every field starts "auto"; the user fixes the ones they care about.
    json s = json::object();
    for (const char* key : kStrategyIntKeys) s[key] = "auto";
    s["recompute"] = "auto";
    s["sequence_parallel"] = "auto";
    doc_["strategy"] = std::move(s);
  }
  modified_ = true;
  revalidate();
}

void ScenarioDocument::set_price_override(std::optional<double> usd_per_gpu_hour) {
  // Only the price: the section's purchase terms, spot prices and currency are the user's and stay.
  if (!doc_.contains("pricing") || !doc_["pricing"].is_object()) doc_["pricing"] = json::object();
  json& pricing = doc_["pricing"];
  if (usd_per_gpu_hour) {
    pricing.erase("usd_per_node_hour");
    pricing["usd_per_gpu_hour"] = *usd_per_gpu_hour;
  } else {
    pricing.erase("usd_per_gpu_hour");
    pricing.erase("usd_per_node_hour");
    if (pricing.empty()) doc_.erase("pricing");
  }
  modified_ = true;
  revalidate();
}

void ScenarioDocument::apply_plan(const std::string& instance_id, const std::string& gpu_id, int nodes_or_gpus,
                                  const sim::Parallelism& p) {
  json cluster = json::object();
  if (!instance_id.empty()) {
    cluster["instance"] = instance_id;
    cluster["nodes"] = nodes_or_gpus;
  } else {
    cluster["gpu"] = gpu_id;
    cluster["gpus"] = nodes_or_gpus;
    if (const json* v = find_at(doc_, "/cluster/gpus_per_node")) cluster["gpus_per_node"] = *v;
  }
  for (const char* key : {"intra_node_gbps", "inter_node_gbps_per_gpu", "gpu_speed_spread"}) {
    if (const json* v = find_at(doc_, std::string("/cluster/") + key)) cluster[key] = *v;
  }
  doc_["cluster"] = std::move(cluster);
  doc_["strategy"] = data::strategy_to_json(p);  // the plan's layout, every field fixed
  // A plan priced with an offering's price: a per-GPU override would no longer be the user's intent.
  modified_ = true;
  revalidate();
}

QStringList ScenarioDocument::messages_for(std::string_view pointer) const {
  const std::string prefix = std::string(kWhere) + "#" + std::string(pointer);
  QStringList out;
  for (const auto& d : diags_) {
    if (d.severity != Diagnostic::Severity::error) continue;
    if (d.where == prefix || d.where.starts_with(prefix + "/")) {
      out << QString::fromStdString(d.where + ": " + d.message);
    }
  }
  return out;
}

QStringList ScenarioDocument::all_messages() const {
  QStringList out;
  for (const auto& d : diags_) out << QString::fromStdString(d.where.empty() ? d.message : d.where + ": " + d.message);
  return out;
}

void ScenarioDocument::set_file_path(const QString& path) {
  const bool names_sheet = doc_.is_object() && doc_.contains("pricing") && doc_["pricing"].is_object() &&
                           doc_["pricing"].contains("sheet");
  const bool moved = path != file_path_;
  file_path_ = path;
  if (names_sheet && moved) revalidate();
}

Result<data::ParsedScenario> ScenarioDocument::parse(const nlohmann::json& doc, const data::Catalogs& catalogs,
                                                     const QString& file_path) {
  // As `capplan estimate FILE` reads it: the price sheet it names (pricing.sheet, relative to its
  // file) over a copy of the catalogs, its rates applied (data::parse_priced_scenario).
  auto priced = data::parse_priced_scenario(doc, catalogs, file_path.toStdString(), {}, kWhere);
  if (!priced) return std::unexpected(std::move(priced.error()));
  for (auto& n : priced->sheet_notes) priced->parsed.warnings.push_back(std::move(n));
  return std::move(priced->parsed);
}

void ScenarioDocument::revalidate() {
  auto parsed = parse(doc_, *catalogs_, file_path_);
  diags_.clear();
  if (parsed) {
    parsed_ = std::move(*parsed);
    last_good_ = parsed_;
    for (const auto& w : parsed_->warnings) diags_.push_back({Diagnostic::Severity::warning, "", w});
  } else {
    parsed_.reset();
    diags_ = std::move(parsed.error());
  }
  emit changed();
}

}  // namespace capplan::gui
