// SPDX-License-Identifier: Apache-2.0
#pragma once
// A small JSON Schema validator for the subset of JSON Schema 2020-12 that schema/*.schema.json
// use (type, const, enum, bounds, pattern, items, required, properties, additionalProperties, propertyNames,
// allOf/anyOf/oneOf, not, if/then/else, local $ref). errors_of() lists every mismatch as "<pointer>: <what>".
// Shared by schema_test.cpp and invariants_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace capplan::data::test {

using nlohmann::json;

inline const json& resolve(const json& schema, const json& root) {
  if (schema.contains("$ref")) {
    const std::string ref = schema["$ref"].get<std::string>();
    EXPECT_EQ(ref.rfind("#/", 0), 0u) << "only local references: " << ref;
    return resolve(root.at(json::json_pointer(ref.substr(1))), root);
  }
  return schema;
}

inline bool type_matches(const std::string& type, const json& v) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "null") return v.is_null();
  if (type == "number") return v.is_number();
  if (type == "integer") return v.is_number_integer() || (v.is_number_float() && v.get<double>() == std::floor(v.get<double>()));
  ADD_FAILURE() << "unknown type in schema: " << type;
  return false;
}

inline void validate(const json& schema_in, const json& v, const json& root, const std::string& at,
              std::vector<std::string>& errors) {
  const json& s = resolve(schema_in, root);
  auto fail = [&](const std::string& what) { errors.push_back(at + ": " + what); };
  if (s.contains("type")) {
    std::vector<std::string> types;
    if (s["type"].is_array()) {
      for (const auto& t : s["type"]) types.push_back(t.get<std::string>());
    } else {
      types.push_back(s["type"].get<std::string>());
    }
    if (std::none_of(types.begin(), types.end(), [&](const std::string& t) { return type_matches(t, v); })) {
      return fail("type " + std::string(v.type_name()) + " not in " + s["type"].dump());
    }
  }
  if (s.contains("const") && v != s["const"]) fail("not " + s["const"].dump());
  if (s.contains("enum") && std::find(s["enum"].begin(), s["enum"].end(), v) == s["enum"].end()) {
    fail(v.dump() + " not in " + s["enum"].dump());
  }
  if (v.is_number()) {
    const double x = v.get<double>();
    if (s.contains("minimum") && x < s["minimum"].get<double>()) fail("below minimum");
    if (s.contains("maximum") && x > s["maximum"].get<double>()) fail("above maximum");
    if (s.contains("exclusiveMinimum") && x <= s["exclusiveMinimum"].get<double>()) fail("not above exclusiveMinimum");
  }
  if (v.is_string() && s.contains("pattern") &&
      !std::regex_search(v.get<std::string>(), std::regex(s["pattern"].get<std::string>()))) {
    // Appended piecewise: g++ 12 warns falsely (-Wrestrict) on "'" + std::string&&.
    fail(std::string("'").append(v.get<std::string>()).append("' does not match ").append(s["pattern"].get<std::string>()));
  }
  if (v.is_array()) {
    if (s.contains("minItems") && v.size() < s["minItems"].get<std::size_t>()) fail("too few items");
    if (s.contains("items")) {
      for (std::size_t i = 0; i < v.size(); ++i) validate(s["items"], v[i], root, at + "/" + std::to_string(i), errors);
    }
  }
  if (v.is_object()) {
    for (const auto& r : s.value("required", json::array())) {
      if (!v.contains(r.get<std::string>())) fail("required '" + r.get<std::string>() + "' missing");
    }
    const json props = s.value("properties", json::object());
    for (const auto& [k, x] : v.items()) {
      if (props.contains(k)) {
        validate(props[k], x, root, at + "/" + k, errors);
      } else if (s.contains("additionalProperties") && s["additionalProperties"] == false) {
        fail("unknown key '" + k + "'");
      }
      if (s.contains("propertyNames")) {
        std::vector<std::string> e;
        validate(s["propertyNames"], json(k), root, at + "/" + k, e);
        if (!e.empty()) fail("key '" + k + "' not allowed here");
      }
    }
  }
  for (const auto& sub : s.value("allOf", json::array())) validate(sub, v, root, at, errors);
  if (s.contains("not")) {
    std::vector<std::string> e;
    validate(s["not"], v, root, at, e);
    if (e.empty()) fail("matches what it must not: " + s["not"].dump());
  }
  if (s.contains("if")) {
    std::vector<std::string> e;
    validate(s["if"], v, root, at, e);
    const char* branch = e.empty() ? "then" : "else";
    if (s.contains(branch)) validate(s[branch], v, root, at, errors);
  }
  for (const char* combinator : {"anyOf", "oneOf"}) {
    if (!s.contains(combinator)) continue;
    int matched = 0;
    std::vector<std::string> closest;  // the errors of the alternative that came nearest
    for (const auto& sub : s[combinator]) {
      std::vector<std::string> e;
      validate(sub, v, root, at, e);
      matched += e.empty();
      if (!e.empty() && (closest.empty() || e.size() < closest.size())) closest = e;
    }
    if (matched == 0) {
      std::string why;
      for (const auto& e : closest) why += (why.empty() ? "" : "; ") + e;
      fail(std::string("no alternative of ") + combinator + " matches (nearest: " + why + ")");
    }
    if (std::string(combinator) == "oneOf" && matched > 1) fail("more than one alternative of oneOf matches");
  }
}

inline std::vector<std::string> errors_of(const json& schema, const json& v, const json& root) {
  std::vector<std::string> e;
  validate(schema, v, root, "#", e);
  return e;
}

}  // namespace capplan::data::test
