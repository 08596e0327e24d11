// SPDX-License-Identifier: Apache-2.0
// The scenario JSON Schema's parts that field tables declare, written from the tables.
#include <string>
#include <string_view>

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
  return schema;
}

}  // namespace capplan::data
