// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to capplan_data: the validation toolkit shared by the catalog, scenario and
// published-run parsers. Every finding is collected (never only the first) as
// "<file>#<JSON pointer>: <message>; got <value>".
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "capplan/data/catalog.hpp"
#include "capplan/data/input_file.hpp"
#include "capplan/sim/workload/finetune.hpp"
#include "capplan/sim/workload/hardware.hpp"
#include "capplan/sim/workload/result.hpp"

namespace capplan::data::detail {

using nlohmann::json;

inline constexpr double kInf = std::numeric_limits<double>::infinity();
// The smallest value a "> 0" field accepts: denormals such as 5e-324 passed
// the check and turned times and costs into Inf, printed as null. 1e-15 is below every
// physical quantity capplan reads in SI or its named units (seconds per byte of a TB/s link:
// 1e-12) and keeps every product finite.
inline constexpr double kMinPositive = 1e-15;

// Number for a message: integers without a decimal point, others with up to 6 significant digits.
inline std::string fmt(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::ostringstream os;
  if (v == std::floor(v) && std::abs(v) < 1e15) {
    os << static_cast<long long>(v);
  } else {
    os.precision(6);
    os << v;
  }
  return os.str();
}

inline std::string join(const std::vector<std::string>& items, std::string_view sep = ", ") {
  std::string out;
  for (const auto& s : items) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

// Catalog ids are kebab-case: a lower-case letter or digit, then letters, digits, '-', '.', '_'
// ("aws-p5.48xlarge"). Plain character tests, not std::regex: compiling one libstdc++ regex cost
// more instructions than parsing all the catalogs' JSON, in every `capplan estimate`.
inline bool is_catalog_id(std::string_view s) {
  auto lower_or_digit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (s.empty() || !lower_or_digit(s.front())) return false;
  for (char c : s.substr(1)) {
    if (!lower_or_digit(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

// YYYY-MM-DD; with `partial`, also YYYY-MM and YYYY (digits and dashes only, as the regex
// [0-9]{4}(-[0-9]{2}(-[0-9]{2})?)? matches: no calendar check).
inline bool is_date(std::string_view s, bool partial) {
  if (!(s.size() == 10 || (partial && (s.size() == 4 || s.size() == 7)))) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool dash = i == 4 || i == 7;
    if (dash ? s[i] != '-' : (s[i] < '0' || s[i] > '9')) return false;
  }
  return true;
}

// The value a user gave, for the "; got X" part of a message. Non-finite numbers are spelled
// out (nlohmann would print them as null); long values are shortened.
inline std::string describe(const json& v) {
  std::string s;
  if (v.is_number_float() && (!std::isfinite(v.get<double>()) || v.get<double>() == std::floor(v.get<double>()))) {
    s = fmt(v.get<double>());  // "inf", and 1e6 as 1000000 rather than 1000000.0
  } else {
    s = v.dump();
  }
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

// For files capplan writes and reads back (profile, records): a non-finite value is written as 0
// (nlohmann would write null), which the reader then rejects where a positive value is required.
inline double finite_or_zero(double v) { return std::isfinite(v) ? v : 0.0; }

// JSON pointer of a child (RFC 6901 escaping).
inline std::string child(const std::string& path, std::string_view key) {
  std::string out = path + "/";
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}
inline std::string child(const std::string& path, std::size_t index) { return path + "/" + std::to_string(index); }

// Collects diagnostics under one prefix ("gpus.json", "scenario"): where = prefix + "#" + pointer.
class Reader {
 public:
  Reader(std::string prefix, Diagnostics& diags) : prefix_(std::move(prefix)), diags_(diags) {}

  std::string where(const std::string& pointer) const { return prefix_ + "#" + pointer; }
  void error(const std::string& pointer, std::string message) {
    diags_.push_back({Diagnostic::Severity::error, where(pointer), std::move(message)});
  }
  std::size_t count() const { return diags_.size(); }

  // A finite number in [lo, hi] (lo excluded when lo_open). Reports and returns nullopt otherwise.
  std::optional<double> number(const json& v, const std::string& p, double lo, double hi, bool lo_open) {
    if (!v.is_number()) {
      error(p, std::string("expected a number; got ") + v.type_name() + " " + describe(v));
      return std::nullopt;
    }
    const double x = v.get<double>();
    if (!std::isfinite(x)) {
      error(p, "must be a finite number; got " + describe(v));
      return std::nullopt;
    }
    if (lo_open ? !(x > lo) : !(x >= lo)) {
      error(p, std::string("must be ") + (lo_open ? "> " : ">= ") + fmt(lo) + "; got " + describe(v));
      return std::nullopt;
    }
    if (lo_open && lo == 0 && x < kMinPositive) {
      error(p, "must be at least " + fmt(kMinPositive) + " (a positive value this small is no physical quantity); got " +
                   describe(v));
      return std::nullopt;
    }
    if (x > hi) {
      error(p, "must be at most " + fmt(hi) + "; got " + describe(v));
      return std::nullopt;
    }
    return x;
  }

  // An integer (8.0 is accepted, 8.5 is not) in [lo, hi].
  std::optional<std::int64_t> integer(const json& v, const std::string& p, double lo, double hi) {
    const bool is_int =
        v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() == std::floor(v.get<double>());
    if (!is_int || v.get<double>() < lo) {
      error(p, integer_text(lo) + "; got " + describe(v));
      return std::nullopt;
    }
    if (v.get<double>() > hi) {
      error(p, "must be at most " + fmt(hi) + "; got " + describe(v));
      return std::nullopt;
    }
    return v.is_number_integer() ? v.get<std::int64_t>() : static_cast<std::int64_t>(v.get<double>());
  }

  std::optional<std::string> string(const json& v, const std::string& p) {
    if (!v.is_string()) {
      error(p, std::string("expected a string; got ") + v.type_name() + " " + describe(v));
      return std::nullopt;
    }
    return v.get<std::string>();
  }

  std::optional<bool> boolean(const json& v, const std::string& p) {
    if (!v.is_boolean()) {
      error(p, std::string("expected true or false; got ") + v.type_name() + " " + describe(v));
      return std::nullopt;
    }
    return v.get<bool>();
  }

  bool object(const json& v, const std::string& p) {
    if (!v.is_object()) {
      error(p, std::string("expected an object; got ") + v.type_name() + " " + describe(v));
      return false;
    }
    return true;
  }

  // A JSON array; `what` says what it lists ("of strings"), empty for a plain list.
  bool array(const json& v, const std::string& p, std::string_view what = {}) {
    if (!v.is_array()) {
      error(p, "expected a list" + (what.empty() ? std::string() : " " + std::string(what)) + "; got " +
                   v.type_name() + " " + describe(v));
      return false;
    }
    return true;
  }

  // The member `key` of the object `obj` at `path`, or nullptr when it is absent. `required`
  // reports the absence: "required (<help>) is missing", or "required field is missing".
  static const json* find(const json& obj, std::string_view key) {
    if (!obj.is_object()) return nullptr;
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }
  const json* required(const json& obj, const std::string& path, std::string_view key, std::string_view help = {}) {
    const json* v = find(obj, key);
    if (v == nullptr) {
      error(child(path, key), help.empty() ? std::string("required field is missing")
                                           : "required (" + std::string(help) + ") is missing");
    }
    return v;
  }

  // A string naming one of `known` (an enum's spellings): "unknown <what> '<got>' (did you mean
  // ...? known: ...)". `parse` maps the spelling to the value.
  template <class Parse>
  auto one_of(const json& v, const std::string& p, Parse&& parse, const std::vector<std::string>& known,
              std::string_view what) -> decltype(parse(std::string())) {
    auto s = string(v, p);
    if (!s) return std::nullopt;
    auto e = parse(*s);
    if (!e) error(p, "unknown " + std::string(what) + " '" + *s + "' (" + suggest(*s, known) + ")");
    return e;
  }
  // The same for a plain name kept as a string.
  std::optional<std::string> one_of(const json& v, const std::string& p, const std::vector<std::string>& known,
                                    std::string_view what) {
    return one_of(
        v, p,
        [&](const std::string& s) -> std::optional<std::string> {
          for (const auto& k : known) {
            if (k == s) return s;
          }
          return std::nullopt;
        },
        known, what);
  }

  // A file's schema version: an integer that must equal `expected`.
  std::optional<std::int64_t> schema_version(const json& v, const std::string& p, int expected) {
    auto n = integer(v, p, 1, 1e9);
    if (n && *n != expected) {
      error(p, "unsupported schema version (this capplan reads " + std::to_string(expected) + "); got " + describe(v));
      return std::nullopt;
    }
    return n;
  }

  // Typos are errors, not silently ignored.
  void unknown_keys(const json& obj, const std::string& p, const std::vector<std::string>& known) {
    if (!obj.is_object()) return;
    for (const auto& [key, value] : obj.items()) {
      bool ok = false;
      for (const auto& k : known) ok = ok || k == key;
      if (!ok) error(child(p, key), "unknown field (" + suggest(key, known) + ")");
    }
  }

  static std::string integer_text(double lo) {
    if (lo == 1) return "must be a positive integer";
    if (lo == 0) return "must be a non-negative integer";
    return "must be an integer >= " + fmt(lo);
  }

 private:
  std::string prefix_;
  Diagnostics& diags_;
};

// Each element of the list `v` at `p` that is an object, as each(element, pointer); the others
// are reported.
template <class Each>
void for_each_object(const json& v, const std::string& p, Reader& r, Each&& each) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string ip = child(p, i);
    if (r.object(v[i], ip)) each(v[i], ip);
  }
}

// Typed accessors over one JSON object whose keys are all required unless `has` is asked first
// (the calibrated profile, the records file). Each reports a missing or invalid value by its
// pointer and returns a neutral value (0, "", false, the fallback) so that reading goes on and
// every finding is collected.
struct Object {
  const json& j;
  std::string path;
  Reader& r;

  std::string at(std::string_view key) const { return child(path, key); }
  bool has(std::string_view key) const { return Reader::find(j, key) != nullptr; }
  void error(std::string_view key, std::string message) { r.error(at(key), std::move(message)); }
  const json* get(std::string_view key, std::string_view help = {}) { return r.required(j, path, key, help); }

  double number(std::string_view key, double lo, bool lo_open, double hi = kInf) {
    const json* v = get(key);
    return v == nullptr ? 0 : r.number(*v, at(key), lo, hi, lo_open).value_or(0);
  }
  std::int64_t integer(std::string_view key, double lo, std::int64_t fallback = 0) {
    const json* v = get(key);
    return v == nullptr ? fallback : r.integer(*v, at(key), lo, 9.0e15).value_or(fallback);
  }
  // With `non_empty`, "" is reported ("must not be empty", with `help` when given).
  std::string string(std::string_view key, bool non_empty = false, std::string_view help = {}) {
    const json* v = get(key);
    if (v == nullptr) return {};
    auto s = r.string(*v, at(key));
    if (s && s->empty() && non_empty) {
      r.error(at(key), "must not be empty" + (help.empty() ? std::string() : " (" + std::string(help) + ")"));
    }
    return s.value_or("");
  }
  bool boolean(std::string_view key) {
    const json* v = get(key);
    return v != nullptr && r.boolean(*v, at(key)).value_or(false);
  }
  // An enum spelled as a string (Reader::one_of); `fallback` when it is missing or unknown.
  template <class Parse, class E>
  E one_of(std::string_view key, Parse&& parse, const std::vector<std::string>& known, std::string_view what,
           E fallback) {
    const json* v = get(key);
    if (v == nullptr) return fallback;
    return r.one_of(*v, at(key), parse, known, what).value_or(fallback);
  }
  // A name from `known`, kept as a string; "" is reported unless `empty_ok`.
  std::string one_of(std::string_view key, const std::vector<std::string>& known, std::string_view what,
                     bool empty_ok = false) {
    const json* v = get(key);
    if (v == nullptr) return {};
    auto s = r.string(*v, at(key));
    if (!s) return {};
    if (s->empty()) {
      if (!empty_ok) r.error(at(key), "must not be empty");
      return {};
    }
    r.one_of(*v, at(key), known, what);
    return *s;
  }
  // An object of strings, or of numbers >= lo, keyed by name.
  std::map<std::string, std::string> string_map(std::string_view key) {
    std::map<std::string, std::string> out;
    const json* v = get(key);
    if (v == nullptr || !r.object(*v, at(key))) return out;
    for (const auto& [k, x] : v->items()) {
      if (auto s = r.string(x, child(at(key), k))) out[k] = *s;
    }
    return out;
  }
  std::map<std::string, double> number_map(std::string_view key, double lo) {
    std::map<std::string, double> out;
    const json* v = get(key);
    if (v == nullptr || !r.object(*v, at(key))) return out;
    for (const auto& [k, x] : v->items()) {
      if (auto n = r.number(x, child(at(key), k), lo, kInf, false)) out[k] = *n;
    }
    return out;
  }
  // A nested object read by `read(Object&)`.
  template <class Read>
  void object(std::string_view key, Read&& read) {
    const json* v = get(key);
    if (v == nullptr || !r.object(*v, at(key))) return;
    Object o{*v, at(key), r};
    read(o);
  }
  // A required list (may be empty) of objects, each read by each(Object&).
  template <class Each>
  void list(std::string_view key, Each&& each) {
    const json* v = get(key, "a list, may be empty");
    if (v == nullptr || !r.array(*v, at(key))) return;
    for_each_object(*v, at(key), r, [&](const json& e, const std::string& p) {
      Object o{e, p, r};
      each(o);
    });
  }
  // The file's "schema" name and "schema_version".
  void schema(std::string_view name, int version) {
    if (const json* s = get("schema"); s != nullptr && (!s->is_string() || s->get<std::string>() != name)) {
      r.error(at("schema"), "must be \"" + std::string(name) + "\"; got " + describe(*s));
    }
    if (const json* v = get("schema_version")) r.schema_version(*v, at("schema_version"), version);
  }
  void known(const std::vector<std::string>& keys) { r.unknown_keys(j, path, keys); }
};

// Spellings in the files `capplan calibrate` writes (profile and records).
inline const std::vector<std::string> kPrecisionNames = {"fp32", "tf32", "fp16", "bf16", "fp8"};
inline const std::vector<std::string> kCollectiveNames = {"all_reduce", "all_gather", "reduce_scatter",
                                                          "all_to_all", "send_recv"};
inline const std::vector<std::string> kTierNames = {"nvlink", "pcie", "host-shm", "network"};

// The record's "dtype" (bf16 where it is missing or unknown, which is reported).
inline sim::Precision precision(Object& o) {
  return o.one_of("dtype", sim::precision_from_string, kPrecisionNames, "dtype", sim::Precision::bf16);
}

// ---------------------------------------------------------------------------------------------
// Field tables (STYLE.md snippet 4): one row per key, used for parsing, range and unknown-key
// checks alike. `set` receives a value that already passed the kind and range checks.

enum class Kind { number, integer, string, boolean, string_list, string_list_or_empty, object, array };
enum class Need { required, optional };  // optional: may be absent (same as null where nullable)

struct Range {
  double lo = -kInf;
  double hi = kInf;
  bool lo_open = false;
};
inline constexpr Range kPositive{0, kInf, true};

template <class T>
struct Field {
  const char* key;
  Kind kind;
  Need need;
  bool nullable;  // explicit null means "unknown"
  Range range;
  const char* help;
  void (*set)(T& out, const json& value, Reader& r, const std::string& path);
};

// A `set` that stores the checked value in a member as it is: a number (double), an integer
// (int), a string, a bool or a list of strings, each plain or std::optional.
// {"notes", Kind::string, ..., store<&Entry::notes>}
template <class M, class V>
inline constexpr bool plain_or_optional = std::is_same_v<M, V> || std::is_same_v<M, std::optional<V>>;

template <auto Member, class T>
void store(T& out, const json& v, Reader&, const std::string&) {
  auto& m = out.*Member;
  using M = std::remove_cvref_t<decltype(m)>;
  if constexpr (plain_or_optional<M, int>) {
    m = static_cast<int>(v.get<double>());
  } else if constexpr (plain_or_optional<M, double>) {
    m = v.get<double>();
  } else if constexpr (plain_or_optional<M, bool>) {
    m = v.get<bool>();
  } else if constexpr (plain_or_optional<M, std::string>) {
    m = v.get<std::string>();
  } else {
    static_assert(std::is_same_v<M, std::vector<std::string>>, "store<> needs a number, string, bool or string list");
    m = v.get<std::vector<std::string>>();
  }
}

template <class T>
std::vector<std::string> field_keys(std::span<const Field<T>> fields) {
  std::vector<std::string> keys;
  for (const auto& f : fields) keys.emplace_back(f.key);
  return keys;
}

// Checks one value against its field row; true when it may be passed to `set`.
template <class T>
bool check_kind(const Field<T>& f, const json& v, Reader& r, const std::string& p) {
  switch (f.kind) {
    case Kind::number: return r.number(v, p, f.range.lo, f.range.hi, f.range.lo_open).has_value();
    case Kind::integer: return r.integer(v, p, f.range.lo, f.range.hi).has_value();
    case Kind::string: {
      auto s = r.string(v, p);
      if (s && s->empty()) {
        r.error(p, std::string("must not be empty (") + f.help + ")");
        return false;
      }
      return s.has_value();
    }
    case Kind::boolean: return r.boolean(v, p).has_value();
    case Kind::object: return r.object(v, p);
    case Kind::array:
      if (!v.is_array()) {
        r.error(p, std::string("expected a list (") + f.help + "); got " + v.type_name() + " " + describe(v));
        return false;
      }
      return true;
    case Kind::string_list:
    case Kind::string_list_or_empty: {
      if (!v.is_array() || (v.empty() && f.kind == Kind::string_list)) {
        r.error(p, std::string("expected a non-empty list of strings (") + f.help + "); got " + describe(v));
        return false;
      }
      bool ok = true;
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (!v[i].is_string() || v[i].get<std::string>().empty()) {
          r.error(child(p, i), "expected a non-empty string; got " + describe(v[i]));
          ok = false;
        }
      }
      return ok;
    }
  }
  return false;
}

// Reads every field of `obj` into `out`; reports missing, mistyped, out-of-range and unknown keys.
template <class T>
void read_fields(const json& obj, const std::string& path, std::span<const Field<T>> fields, T& out, Reader& r) {
  if (!r.object(obj, path)) return;
  for (const auto& f : fields) {
    const std::string p = child(path, f.key);
    auto it = obj.find(f.key);
    if (it == obj.end()) {
      if (f.need == Need::required) r.error(p, std::string("required (") + f.help + ") is missing");
      continue;
    }
    if (it->is_null()) {
      if (!f.nullable) r.error(p, std::string("must not be null (") + f.help + ")");
      continue;
    }
    if (check_kind(f, *it, r, p) && f.set) f.set(out, *it, r, p);
  }
  r.unknown_keys(obj, path, field_keys(fields));
}

// ---------------------------------------------------------------------------------------------
// Text and files.

inline std::string line_column(std::string_view text, std::size_t offset) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// Limits on what a user's JSON file may be: the size cap is input.hpp's
// kMaxInputBytes; the nesting cap holds far above any capplan file (a scenario nests 5 levels)
// and far below what the recursive parts of nlohmann (dump(), the error path) survive.
inline constexpr std::size_t kMaxJsonDepth = 256;

// A linear pre-scan, before nlohmann builds anything: a NUL byte anywhere (nlohmann stops
// reading there in some paths and JSON never allows a raw one) and nesting deeper than
// kMaxJsonDepth are errors naming the byte offset, line and column. Strings are skipped, so
// brackets inside them do not count.
inline std::optional<std::string> json_text_problem(std::string_view text) {
  std::size_t depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\0') {
      return "NUL byte at byte offset " + std::to_string(i) + " (" + line_column(text, i) +
             "): a JSON file holds text only";
    }
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) {
        return "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels at byte offset " +
               std::to_string(i) + " (" + line_column(text, i) + "); got depth " + std::to_string(depth);
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

// Builds the document through nlohmann's plain DOM builder and reports every duplicate key in one
// object (nlohmann would keep the last one silently). Each open object keeps a hash set of its
// keys, so the check is linear in the keys. nlohmann's callback parser is not used: on every
// closed child object it walks all members of the parent to drop discarded values, which made
// one object or array with n object children take time quadratic in n.
class CheckedDomBuilder {
 public:
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  CheckedDomBuilder(json& result, const std::string& where, Diagnostics& diags)
      : dom_(result, /*allow_exceptions=*/true), where_(where), diags_(diags) {}

  bool null() { return scalar(dom_.null()); }
  bool boolean(bool v) { return scalar(dom_.boolean(v)); }
  bool number_integer(number_integer_t v) { return scalar(dom_.number_integer(v)); }
  bool number_unsigned(number_unsigned_t v) { return scalar(dom_.number_unsigned(v)); }
  bool number_float(number_float_t v, const string_t& s) { return scalar(dom_.number_float(v, s)); }
  bool string(string_t& v) { return scalar(dom_.string(v)); }
  bool binary(binary_t& v) { return scalar(dom_.binary(v)); }
  bool start_object(std::size_t n) {
    stack_.push_back({true, {}, {}, 0});
    return dom_.start_object(n);
  }
  bool start_array(std::size_t n) {
    stack_.push_back({false, {}, {}, 0});
    return dom_.start_array(n);
  }
  bool end_object() { return closed(dom_.end_object()); }
  bool end_array() { return closed(dom_.end_array()); }
  bool key(string_t& k) {
    auto& top = stack_.back();
    top.key = k;
    if (!top.keys.insert(top.key).second) {
      std::string pointer;
      for (std::size_t i = 0; i + 1 < stack_.size(); ++i) {
        pointer = stack_[i].is_object ? child(pointer, stack_[i].key) : child(pointer, stack_[i].index);
      }
      diags_.push_back({Diagnostic::Severity::error, where_ + "#" + child(pointer, top.key),
                        "duplicate key (each key may appear once in an object)"});
    }
    return dom_.key(k);
  }
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& ex) {
    return dom_.parse_error(position, token, ex);  // throws ex (allow_exceptions)
  }

 private:
  struct Frame {
    bool is_object = false;
    std::unordered_set<std::string> keys;
    std::string key;  // the current key of this object
    std::size_t index = 0;
  };
  bool scalar(bool ok) {
    if (!stack_.empty() && !stack_.back().is_object) ++stack_.back().index;
    return ok;
  }
  bool closed(bool ok) {
    if (!stack_.empty()) stack_.pop_back();
    return scalar(ok);
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  const std::string& where_;
  Diagnostics& diags_;
  std::vector<Frame> stack_;
};

// Parses JSON text. Errors: "<where>: invalid JSON at line L, column C: <reason>"; every duplicate
// key (CheckedDomBuilder). Linear in the size of the text.
inline Result<json> parse_json_text(std::string_view text, const std::string& where) {
  if (auto problem = json_text_problem(text)) return fail(where, "invalid JSON: " + *problem);
  Diagnostics diags;
  json j;
  try {
    CheckedDomBuilder builder(j, where, diags);
    json::sax_parse(text.begin(), text.end(), &builder);
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    std::string reason = what;
    if (auto c = what.find("column "); c != std::string::npos) {
      if (auto colon = what.find(": ", c); colon != std::string::npos) reason = what.substr(colon + 2);
    }
    const std::size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    return fail(where, "invalid JSON at " + line_column(text, offset) + ": " + reason);
  } catch (const json::exception& e) {
    std::string what = e.what();
    if (auto b = what.find("] "); b != std::string::npos) what = what.substr(b + 2);
    std::string at;
    if (auto q = what.find('\''); q != std::string::npos) {
      auto q2 = what.find('\'', q + 1);
      if (q2 != std::string::npos) {
        if (auto pos = text.find(what.substr(q + 1, q2 - q - 1)); pos != std::string_view::npos) {
          at = " at " + line_column(text, pos);
        }
      }
    }
    if (what.find("overflow") != std::string::npos) what += " (numbers must be finite)";
    return fail(where, "invalid JSON" + at + ": " + what);
  }
  if (!diags.empty()) return std::unexpected(std::move(diags));
  return j;
}

// A catalog, price sheet or CSV file through the one bounded reader (input_file.hpp).
inline Result<std::string> read_text_file(const std::filesystem::path& file, const std::string& where) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return fail(where, "cannot read '" + file.string() + "': no such file");
  auto text = read_input_file(file.string());
  if (!text) return fail(where, "cannot read '" + file.string() + "': " + text.error());
  return std::move(*text);
}

// A list of LoRA target names (sim/finetune.hpp) as bits.
inline std::optional<unsigned> lora_targets_from_json(const json& v, Reader& rd, const std::string& p) {
  if (!v.is_array() || v.empty()) {
    rd.error(p, "expected a non-empty list of linear names (q, k, v, o, gate, up, down); got " + describe(v));
    return std::nullopt;
  }
  unsigned bits = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string name = v[i].is_string() ? v[i].get<std::string>() : v[i].dump();
    const auto t = sim::lora_target_from_string(name);
    if (!t) {
      rd.error(child(p, i), "unknown LoRA target '" + name + "' (known: q, k, v, o, gate, up, down)");
      return std::nullopt;
    }
    bits |= *t;
  }
  return bits;
}

}  // namespace capplan::data::detail
