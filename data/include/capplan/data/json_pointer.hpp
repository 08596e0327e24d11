// SPDX-License-Identifier: Apache-2.0
// Setting a value at a JSON pointer in a document: how a command-line flag or a form's field
// lands in a scenario before data::parse_scenario validates it.
#pragma once
#include <nlohmann/json.hpp>
#include <string_view>

namespace capplan::data {

// Sets `value` at `pointer` ("/strategy/tp"), turning any non-object on the way into an object:
// the value wins over whatever the document had there.
void set_at(nlohmann::json& root, std::string_view pointer, nlohmann::json value);

}  // namespace capplan::data
