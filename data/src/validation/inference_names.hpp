// SPDX-License-Identifier: Apache-2.0
// The measured serving table's names (model, GPU, framework, weight precision) as capplan's ids,
// and the text helpers its reader shares. Private to capplan_data.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "capplan/sim/serve/serve.hpp"

namespace capplan::data::detail::serving_names {

std::string lower(std::string s);
bool has(const std::string& text, std::string_view needle);  // case-insensitive; `needle` in lower case
void erase_all(std::string& s, std::string_view what);

struct ModelName {
  std::string preset;
  std::string note;  // an assumption to state, empty when the name is the preset's
};

struct GpuName {
  const char* id = nullptr;
  const char* note = nullptr;
};

struct EngineName {
  std::string id;  // empty: no recipe
  std::string note;
};

ModelName preset_for(const std::string& model);
GpuName gpu_for(const std::string& name);
EngineName engine_for(const std::string& framework, const std::string& version);
// The weight_precision column as a weight format (serve.hpp), nullopt when capplan has none.
std::optional<sim::WeightFormat> weights_for(const std::string& text);

}  // namespace capplan::data::detail::serving_names
