// SPDX-License-Identifier: Apache-2.0
// A section read through its field table (capplan/data/fields.hpp): each row's value checked for
// its kind and range, the error naming the field and the value, then stored by the row.
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "capplan/data/fields.hpp"
#include "reading/json_reader.hpp"

namespace capplan::data::fields_detail {

// The object at the parent of `pointer` below `section` ("engine/max_num_seqs": section.engine),
// nullptr when a step is missing or not an object; `key` receives the last step.
const nlohmann::json* parent_of(const nlohmann::json& section, std::string_view pointer, std::string& key);

// The keys the rows name directly below `parent` ("" the section, "engine" its engine object), in
// table order, each once: what the reader accepts there.
template <class T>
void add_keys(std::span<const Field<T>> rows, std::string_view parent, std::vector<std::string>& keys) {
  for (const auto& row : rows) {
    std::string_view p = row.spec.pointer;
    if (!parent.empty()) {
      if (p.substr(0, parent.size()) != parent || p.size() <= parent.size() || p[parent.size()] != '/') continue;
      p.remove_prefix(parent.size() + 1);
    }
    const std::string key(p.substr(0, p.find('/')));
    bool seen = false;
    for (const auto& k : keys) seen = seen || k == key;
    if (!seen) keys.push_back(key);
  }
}

// The row of `rows` at `pointer` (a row read by hand beside its table finds its range here).
template <class T>
const FieldSpec& spec_of(std::span<const Field<T>> rows, std::string_view pointer) {
  for (const auto& row : rows) {
    if (pointer == row.spec.pointer) return row.spec;
  }
  throw std::logic_error("no field row " + std::string(pointer));
}

// Checks `v` (at `path`) against `f`; true when it may be stored.
bool check_value(const FieldSpec& f, const nlohmann::json& v, const std::string& path, detail::Reader& r);

// A count's value (a row of kind count whose value check_value accepted): "2T" as 2e12.
double count_of(const nlohmann::json& v);

// Reads every row of `rows` whose value is present below `section` (at `base`) into `out` (a null
// skipped where the row is nullable); a `required` length missing in an object that is there is
// reported. Unknown keys are the caller's (add_keys).
template <class T>
void read_table(const nlohmann::json& section, const std::string& base, std::span<const Field<T>> rows, T& out,
                detail::Reader& r) {
  for (const auto& row : rows) {
    if (row.set == nullptr) continue;
    std::string key;
    const nlohmann::json* parent = parent_of(section, row.spec.pointer, key);
    if (parent == nullptr) continue;
    const std::string path = base + "/" + row.spec.pointer;
    auto it = parent->find(key);
    if (it == parent->end()) {
      if (row.spec.kind == FieldKind::length) r.error(path, std::string("required (") + row.spec.help + ") is missing");
      continue;
    }
    if (it->is_null() && row.spec.nullable) continue;  // unknown: the default stays
    if (check_value(row.spec, *it, path, r)) row.set(out, *it);
  }
}

// Reads the object `obj` at `path` through `rows` into `out`: each row present checked and stored,
// each missing `required` row reported unless `waive_required` (a preset supplies it), keys no row
// names refused. In a catalog record (`catalog`) run_only rows are not keys. True when nothing was
// reported.
template <class T>
bool read_object(const nlohmann::json& obj, const std::string& path, std::span<const Field<T>> rows, T& out,
                 detail::Reader& r, bool waive_required, bool catalog = false) {
  if (!r.object(obj, path)) return false;
  const auto before = r.count();
  std::vector<std::string> keys;
  for (const auto& row : rows) {
    if (!catalog || !row.spec.run_only) keys.emplace_back(row.spec.pointer);
  }
  r.unknown_keys(obj, path, keys);
  for (const auto& row : rows) {
    if (catalog && row.spec.run_only) continue;
    const std::string p = detail::child(path, row.spec.pointer);
    auto it = obj.find(row.spec.pointer);
    if (it == obj.end()) {
      if (row.spec.required && !waive_required) r.error(p, std::string("required (") + row.spec.help + ") is missing");
      continue;
    }
    if (check_value(row.spec, *it, p, r) && row.set != nullptr) row.set(out, *it);
  }
  return r.count() == before;
}

// Reads the object `obj` at `path` through the rows of `rows` directly below `parent` ("" the
// section, "spot" its spot object) into `out`, in table order: a missing `required` row and a null
// where the row is not nullable are reported with the row's help (a null where it is: unknown,
// nothing stored), each value present is checked and stored; then keys no row names are refused.
template <class T>
void read_rows(const nlohmann::json& obj, const std::string& path, std::span<const Field<T>> rows,
               std::string_view parent, T& out, detail::Reader& r) {
  if (!r.object(obj, path)) return;
  std::vector<std::string> keys;
  add_keys(rows, parent, keys);
  const std::string prefix = parent.empty() ? std::string() : std::string(parent) + "/";
  for (const auto& row : rows) {
    const std::string_view pointer = row.spec.pointer;
    if (!pointer.starts_with(prefix) || pointer.find('/', prefix.size()) != std::string_view::npos) continue;
    const std::string key(pointer.substr(prefix.size()));
    const std::string p = detail::child(path, key);
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (row.spec.required) r.error(p, std::string("required (") + row.spec.help + ") is missing");
      continue;
    }
    if (it->is_null()) {
      if (!row.spec.nullable) r.error(p, std::string("must not be null (") + row.spec.help + ")");
      continue;
    }
    if (check_value(row.spec, *it, p, r) && row.set != nullptr) row.set(out, *it);
  }
  r.unknown_keys(obj, path, keys);
}

// The warnings for the rows of `rows` given below `section` (at `base`) that do not apply to `use`
// (FieldSpec::applies): each field's pointer and the message saying why. An object every row of
// which is unused for the same reason ("spot/...") is named once, as the object.
template <class T>
std::vector<std::pair<std::string, std::string>> unused_fields(const nlohmann::json& section, const std::string& base,
                                       std::span<const Field<T>> rows, const FieldUse& use) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!section.is_object()) return out;
  std::vector<std::string> named;  // objects already named
  for (const auto& row : rows) {
    if (row.spec.applies == nullptr) continue;
    std::string key;
    const nlohmann::json* parent = parent_of(section, row.spec.pointer, key);
    if (parent == nullptr || !parent->contains(key) || row.spec.applies(use)) continue;
    const std::string_view pointer = row.spec.pointer;
    std::string at(pointer);
    if (const auto slash = pointer.rfind('/'); slash != std::string_view::npos) {
      // The whole object when every row below it shares this row's condition.
      const std::string_view object = pointer.substr(0, slash + 1);
      bool whole = true;
      for (const auto& other : rows) {
        const std::string_view p = other.spec.pointer;
        if (p.starts_with(object) && (other.spec.applies != row.spec.applies ||
                                      std::string_view(other.spec.unused) != row.spec.unused)) {
          whole = false;
        }
      }
      if (whole) at = std::string(object.substr(0, slash));
    }
    bool seen = false;
    for (const auto& n : named) seen = seen || n == at;
    if (seen) continue;
    named.push_back(at);
    out.emplace_back(base + "/" + at, std::string("not used: ") + row.spec.unused + " (remove it)");
  }
  return out;
}

// The object of every row of `rows` that writes itself back (a null value left out).
template <class T>
nlohmann::json write_object(std::span<const Field<T>> rows, const T& in) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& row : rows) {
    if (row.get == nullptr) continue;
    nlohmann::json v = row.get(in);
    if (!v.is_null()) out[row.spec.pointer] = std::move(v);
  }
  return out;
}

}  // namespace capplan::data::fields_detail
