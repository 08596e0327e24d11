// SPDX-License-Identifier: Apache-2.0
// capplan-schema FILE: rewrites the scenario JSON Schema FILE (schema/scenario.schema.json) with
// every part a field table declares written from its table (data::generate_scenario_schema).
// schema_test.cpp fails while the committed file differs from what this writes.
#include <fstream>
#include <iostream>
#include <sstream>

#include "capplan/data/fields.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: capplan-schema schema/scenario.schema.json\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::cerr << "capplan-schema: cannot read " << argv[1] << "\n";
    return 2;
  }
  std::stringstream text;
  text << in.rdbuf();
  const auto schema = nlohmann::ordered_json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (schema.is_discarded()) {
    std::cerr << "capplan-schema: " << argv[1] << " is not JSON\n";
    return 2;
  }
  in.close();
  std::ofstream out(argv[1], std::ios::trunc);
  out << capplan::data::generate_scenario_schema(schema).dump(2) << "\n";
  return out ? 0 : 1;
}
