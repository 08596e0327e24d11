// SPDX-License-Identifier: Apache-2.0
#pragma once
// How a command-line flag lands in a scenario document before data::parse_scenario validates it.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>

namespace capplan::cli {

// Sets `value` at a JSON pointer ("/strategy/tp"), turning any non-object on the way into an
// object: the flag wins over whatever the file had there.
inline void set_at(nlohmann::json& root, std::string_view pointer, nlohmann::json value) {
  nlohmann::json* node = &root;
  size_t pos = 1;
  while (true) {
    const size_t slash = pointer.find('/', pos);
    const std::string key(pointer.substr(pos, slash == std::string_view::npos ? std::string_view::npos : slash - pos));
    if (!node->is_object()) *node = nlohmann::json::object();
    if (slash == std::string_view::npos) {
      (*node)[key] = std::move(value);
      return;
    }
    node = &(*node)[key];
    pos = slash + 1;
  }
}

}  // namespace capplan::cli
