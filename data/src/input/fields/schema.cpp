// SPDX-License-Identifier: Apache-2.0
// The scenario JSON Schema's parts that field tables declare, written from the tables.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "capplan/data/fields.hpp"

namespace capplan::data {
namespace {

using nlohmann::ordered_json;

// The object schema at `node`'s "properties"/`key`, made when missing (an object that allows no
// other keys).
ordered_json& property(ordered_json& node, const std::string& key) {
  ordered_json& props = node["properties"];
  if (!props.contains(key)) props[key] = {{"type", "object"}, {"additionalProperties", false}};
  return props[key];
}

// Writes every row of `table` below `section` (the section's object schema); a row's value
// schema replaces the one there, the objects on its way keep their description.
template <class T>
void write_table(ordered_json& section, std::span<const Field<T>> table, std::string_view top_prefix) {
  for (const auto& row : table) {
    const std::string_view pointer = row.spec.pointer;
    ordered_json* node = &section;
    std::size_t pos = 0;
    while (true) {
      const std::size_t slash = pointer.find('/', pos);
      const std::string key(pointer.substr(pos, slash == std::string_view::npos ? std::string_view::npos : slash - pos));
      if (slash == std::string_view::npos) {
        ordered_json& props = (*node)["properties"];
        props[key] = field_schema(row.spec, pos == 0 ? top_prefix : std::string_view());
        break;
      }
      node = &property(*node, key);
      pos = slash + 1;
    }
  }
}

// The keys directly below a workload that `tables` declare (the first part of each pointer), in
// order of first appearance, after `kind`.
template <class T>
void add_top_keys(std::span<const Field<T>> table, std::vector<std::string>& keys) {
  for (const auto& row : table) {
    const std::string_view pointer = row.spec.pointer;
    const std::string key(pointer.substr(0, pointer.find('/')));
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
}

// A condition on the workload's kind: the scenario has workload.kind equal to `kind`.
ordered_json kind_is(std::string_view kind) {
  return {{"required", {"workload"}},
          {"properties", {{"workload", {{"required", {"kind"}}, {"properties", {{"kind", {{"const", kind}}}}}}}}}};
}

// What each workload kind requires and refuses beyond the keys' own schemas, as the reader does
// (input/scenario_io.cpp, scenario/training.cpp, scenario/workload.cpp): a pre-training run (no
// workload, or kind pretrain) needs training.tokens and a global batch and has no workload keys but
// kind; a fine-tuning run takes its tokens from workload.dataset (training.tokens refused) and needs
// a method and a dataset; a serving scenario has no training or strategy section and needs traffic.
// Without a model the file is a fleet to own (the reader's parse_fleet_scenario): a cluster and tco
// terms, and nothing that would run on it.
ordered_json workload_conditions() {
  const ordered_json batch = ordered_json::array({{{"required", {"global_batch_tokens"}}},
                                                  {{"required", {"global_batch"}}}});
  std::vector<std::string> finetune_keys = {"kind"};
  add_top_keys(finetune_fields(), finetune_keys);
  std::vector<std::string> serve_keys = {"kind"};
  for (const auto& table : serve_field_tables()) add_top_keys(table, serve_keys);
  const ordered_json finetune = {
      {"description", "fine-tuning: the tokens are workload.dataset.tokens x epochs, so training.tokens is refused"},
      {"required", {"training"}},
      {"properties",
       {{"training", {{"not", {{"required", {"tokens"}}}}, {"anyOf", batch}}},
        {"workload",
         {{"required", {"method", "dataset"}},
          {"propertyNames", {{"enum", finetune_keys}}},
          {"properties", {{"dataset", {{"required", {"tokens"}}}}}}}}}}};
  const ordered_json serve = {
      {"description", "serving: the workload gives the engine, layout, traffic and target; no training or strategy"},
      {"not", {{"anyOf", ordered_json::array({{{"required", {"training"}}}, {{"required", {"strategy"}}}})}}},
      {"properties", {{"workload", {{"required", {"traffic"}}, {"propertyNames", {{"enum", serve_keys}}}}}}}};
  const ordered_json pretrain = {
      {"description", "pre-training (no workload, or kind pretrain): training.tokens and a global batch"},
      {"required", {"training"}},
      {"properties",
       {{"training", {{"required", {"tokens"}}, {"anyOf", batch}}},
        {"workload", {{"propertyNames", {{"enum", {"kind"}}}}}}}}};
  const ordered_json fleet = {
      {"description", "no model: a fleet to own (capplan tco), its cluster, pricing and tco terms; nothing runs on it"},
      {"required", {"cluster"}},
      {"not",
       {{"anyOf",
         ordered_json::array({{{"required", {"workload"}}}, {{"required", {"training"}}}, {{"required", {"strategy"}}}})}}}};
  const ordered_json by_kind = {
      {"if", kind_is("finetune")},
      {"then", finetune},
      {"else", {{"if", kind_is("serve")}, {"then", serve}, {"else", pretrain}}}};
  return ordered_json::array(
      {{{"if", {{"required", {"model"}}}}, {"then", by_kind}, {"else", fleet}},
       {{"description", "the global batch in one spelling: global_batch_tokens or global_batch, not both"},
        {"properties", {{"training", {{"not", {{"required", {"global_batch_tokens", "global_batch"}}}}}}}}},
       {{"description", "prices in another currency than US dollars need pricing.usd_per_unit, its rate"},
        {"properties",
         {{"pricing",
           {{"if", {{"required", {"currency"}}, {"properties", {{"currency", {{"not", {{"const", "USD"}}}}}}}}},
            {"then", {{"required", {"usd_per_unit"}}}}}}}}}});
}

}  // namespace

nlohmann::ordered_json generate_scenario_schema(nlohmann::ordered_json schema) {
  ordered_json& model = property(schema, "model");
  write_table(model, model_fields(), "");
  write_table(property(model, "moe"), moe_fields(), "");
  write_table(property(model, "mla"), mla_fields(), "");
  write_table(property(model, "mamba"), mamba_fields(), "");
  write_table(property(schema, "training"), training_fields(), "");
  write_table(property(schema, "cluster"), cluster_fields(), "");
  ordered_json& workload = property(schema, "workload");
  write_table(workload, finetune_fields(), "");
  for (const auto& table : serve_field_tables()) write_table(workload, table, "serve: ");
  write_table(property(workload, "engine"), engine_fields(), "");
  write_table(property(schema, "reliability"), reliability_fields(), "");
  write_table(property(schema, "storage"), storage_fields(), "");
  write_table(property(schema, "data"), data_fields(), "");
  write_table(property(schema, "pricing"), pricing_fields(), "");
  write_table(property(schema, "tco"), tco_fields(), "");
  schema.erase("required");  // the model: required by the conditions unless the file is a fleet
  schema["allOf"] = workload_conditions();
  return schema;
}

}  // namespace capplan::data
