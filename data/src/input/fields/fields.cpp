// SPDX-License-Identifier: Apache-2.0
// What every field table shares: a value checked against its row, and a row's JSON Schema.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "capplan/data/fields.hpp"
#include "capplan/data/json_pointer.hpp"
#include "capplan/data/scenario_io.hpp"
#include "input/fields/read_table.hpp"

namespace capplan::data {

namespace fields_detail {

using detail::child;
using detail::describe;
using detail::fmt;
using nlohmann::json;

const json* parent_of(const json& section, std::string_view pointer, std::string& key) {
  const json* node = &section;
  std::size_t pos = 0;
  while (true) {
    if (!node->is_object()) return nullptr;
    const std::size_t slash = pointer.find('/', pos);
    if (slash == std::string_view::npos) {
      key = std::string(pointer.substr(pos));
      return node;
    }
    auto it = node->find(std::string(pointer.substr(pos, slash - pos)));
    if (it == node->end()) return nullptr;
    node = &*it;
    pos = slash + 1;
  }
}

namespace {

bool check_length(const FieldSpec& f, const json& v, const std::string& p, detail::Reader& r) {
  if (!v.is_object()) return r.number(v, p, f.min, f.max, f.min_open).has_value();
  r.unknown_keys(v, p, {"mean", "p95"});
  bool ok = true;
  const json* mean = detail::Reader::find(v, "mean");
  if (mean == nullptr) {
    r.error(child(p, "mean"), "required (mean tokens per request) is missing");
    ok = false;
  } else {
    ok = r.number(*mean, child(p, "mean"), f.min, f.max, f.min_open).has_value() && ok;
  }
  if (const json* p95 = detail::Reader::find(v, "p95")) {
    if (auto x = r.number(*p95, child(p, "p95"), f.min, f.max, f.min_open)) {
      if (ok && *x < mean->get<double>()) {
        r.error(child(p, "p95"), "must be at least the mean (" + describe(*mean) + "); got " + describe(*p95));
        ok = false;
      }
    } else {
      ok = false;
    }
  }
  return ok;
}

bool check_per_choice(const FieldSpec& f, const json& v, const std::string& p, detail::Reader& r) {
  if (!r.object(v, p)) return false;
  const std::vector<std::string> keys(f.choices.begin(), f.choices.end());
  r.unknown_keys(v, p, keys);
  bool ok = true;
  for (const auto& key : keys) {
    const json* x = detail::Reader::find(v, key);
    if (x == nullptr) {
      r.error(child(p, key), "required (a number or null) is missing");
      ok = false;
    } else if (!x->is_null()) {
      ok = r.number(*x, child(p, key), f.min, f.max, f.min_open).has_value() && ok;
    }
  }
  return ok && v.size() == keys.size();
}


bool check_number(const FieldSpec& f, const json& v, const std::string& p, detail::Reader& r) {
  auto x = r.number(v, p, f.min, f.max, f.min_open);
  if (x && *x < f.least) {
    r.error(p, "must be at least " + fmt(f.least) + " (" + f.bound + "); got " + describe(v));
    return false;
  }
  return x.has_value();
}

// A count: a number, or a string with an SI or binary suffix ("2B", "4Mi"), at least min and at
// most max.
bool check_count(const FieldSpec& f, const json& v, const std::string& p, detail::Reader& r) {
  std::optional<double> x;
  if (v.is_number()) {
    x = v.get<double>();
  } else if (v.is_string()) {
    x = parse_count(v.get<std::string>());
  }
  std::string why;
  if (!x) {
    why = "expected a number or a string with an SI suffix such as \"2T\" (k, M, G/B, T, P) or a binary one such "
          "as \"4Mi\" (Ki, Mi, Gi, Ti, Pi: powers of 1024)";
  } else if (!std::isfinite(*x)) {
    why = "must be a finite number";
  } else if (!(*x > 0)) {
    why = "must be > 0";
  } else if (*x < f.min) {
    why = "must be at least " + detail::fmt(f.min) + " (a number of " + f.unit + ")";
  } else if (*x > f.max) {
    why = "must be at most " + detail::fmt(f.max);
  }
  if (!why.empty()) r.error(p, why + "; got " + describe(v));
  return why.empty();
}

// A non-empty list of strings, each one of the row's choices.
bool check_list(const FieldSpec& f, const json& v, const std::string& p, detail::Reader& r) {
  std::vector<std::string> known(f.choices.begin(), f.choices.end());
  if (!v.is_array() || v.empty()) {
    r.error(p, std::string("expected a non-empty list of ") + f.noun + "s (" + detail::join(known) + "); got " +
                   describe(v));
    return false;
  }
  bool ok = true;
  for (std::size_t i = 0; i < v.size(); ++i) ok = r.one_of(v[i], child(p, i), known, f.noun).has_value() && ok;
  return ok;
}

bool check_one(const FieldSpec& f, const json& v, const std::string& p, detail::Reader& r) {
  switch (f.kind) {
    case FieldKind::number: return check_number(f, v, p, r);
    case FieldKind::integer: return r.integer(v, p, f.min, f.max).has_value();
    case FieldKind::boolean: return r.boolean(v, p).has_value();
    case FieldKind::text: return r.string(v, p).has_value();
    case FieldKind::choice:
      return r.one_of(v, p, std::vector<std::string>(f.choices.begin(), f.choices.end()), f.noun).has_value();
    case FieldKind::length: return check_length(f, v, p, r);
    case FieldKind::per_choice: return check_per_choice(f, v, p, r);
    case FieldKind::count: return check_count(f, v, p, r);
    case FieldKind::list: return check_list(f, v, p, r);
    case FieldKind::records: return r.array(v, p);  // the items are the reader's
  }
  return false;
}

}  // namespace

bool check_value(const FieldSpec& f, const json& v, const std::string& p, detail::Reader& r) {
  if (f.items == 0) return check_one(f, v, p, r);
  if (!v.is_array() || v.size() != static_cast<std::size_t>(f.items)) {
    r.error(p, "expected " + std::to_string(f.items) + " numbers (" + f.help + "); got " + describe(v));
    return false;
  }
  bool ok = true;
  for (std::size_t i = 0; i < v.size(); ++i) ok = check_one(f, v[i], child(p, i), r) && ok;
  return ok;
}

double count_of(const json& v) { return v.is_number() ? v.get<double>() : *parse_count(v.get<std::string>()); }

}  // namespace fields_detail

namespace {

using nlohmann::ordered_json;

// A bound as the schema writes it: a whole number as an integer (10000, not 10000.0).
ordered_json bound(double x) {
  if (x == std::floor(x) && std::fabs(x) < 9e15) return static_cast<std::int64_t>(x);
  return x;
}

// A count's string form: a number with an SI suffix (k, M, G or B, T, P) or a binary one (Ki .. Pi).
constexpr const char* kCountPattern = "^\\s*\\+?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?\\s*([kKMGBTP]|[KMGTP]i)?$";

void add_range(const FieldSpec& f, ordered_json& s) {
  if (f.least > f.min) {
    s["minimum"] = bound(f.least);
  } else if (std::isfinite(f.min)) {
    s[f.min_open ? "exclusiveMinimum" : "minimum"] = bound(f.min);
  }
  if (std::isfinite(f.max)) s["maximum"] = bound(f.max);
}

ordered_json one_schema(const FieldSpec& f) {
  ordered_json s;
  switch (f.kind) {
    case FieldKind::number:
      s["type"] = "number";
      add_range(f, s);
      break;
    case FieldKind::integer:
      s["type"] = "integer";
      add_range(f, s);
      break;
    case FieldKind::boolean: s["type"] = "boolean"; break;
    case FieldKind::text:
      s["type"] = "string";
      if (*f.pattern != '\0') s["pattern"] = f.pattern;
      break;
    case FieldKind::choice: {
      s["type"] = "string";
      ordered_json e = ordered_json::array();
      for (const char* c : f.choices) e.push_back(c);
      s["enum"] = std::move(e);
      break;
    }
    case FieldKind::count: {
      ordered_json number = {{"type", "number"}};
      add_range(f, number);
      s["oneOf"] = {number, {{"type", "string"}, {"pattern", kCountPattern}}};
      break;
    }
    case FieldKind::list: {
      ordered_json e = ordered_json::array();
      for (const char* c : f.choices) e.push_back(c);
      s["type"] = "array";
      s["items"] = {{"type", "string"}, {"enum", std::move(e)}};
      s["minItems"] = 1;
      break;
    }
    case FieldKind::length: {
      s["type"] = {"number", "object"};
      add_range(f, s);
      ordered_json part = {{"type", "number"}};
      add_range(f, part);
      ordered_json mean = part, p95 = part;
      mean["description"] = "mean tokens";
      p95["description"] = "95th percentile";
      s["additionalProperties"] = false;
      s["required"] = {"mean"};
      s["properties"] = {{"mean", mean}, {"p95", p95}};
      break;
    }
    case FieldKind::per_choice: {
      ordered_json value = {{"type", {"number", "null"}}};
      add_range(f, value);
      s["type"] = "object";
      s["additionalProperties"] = false;
      ordered_json required = ordered_json::array();
      for (const char* c : f.choices) {
        s["properties"][c] = value;
        required.push_back(c);
      }
      s["required"] = std::move(required);
      break;
    }
    case FieldKind::records:
      s["type"] = "array";
      s["minItems"] = 1;
      s["items"] = {{"$ref", std::string("#/$defs/") + f.record}};
      break;
  }
  return s;
}

}  // namespace

nlohmann::ordered_json field_schema(const FieldSpec& f, std::string_view prefix) {
  ordered_json s;
  if (f.items > 0) {
    s["type"] = "array";
    s["items"] = one_schema(f);
    s["minItems"] = f.items;
    s["maxItems"] = f.items;
  } else {
    s = one_schema(f);
    if (f.nullable) s["type"] = {s["type"], "null"};
  }
  if (*f.help != '\0') s["description"] = std::string(prefix) + f.help;
  if (*f.unit != '\0') s["x-unit"] = f.unit;
  if (*f.bound != '\0') s["x-bound"] = f.bound;
  return s;
}

void set_at(nlohmann::json& root, std::string_view pointer, nlohmann::json value) {
  nlohmann::json* node = &root;
  std::size_t pos = 1;
  while (true) {
    const std::size_t slash = pointer.find('/', pos);
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

}  // namespace capplan::data
