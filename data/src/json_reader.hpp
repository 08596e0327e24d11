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
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "capplan/data/catalog.hpp"
#include "capplan/sim/result.hpp"

namespace capplan::data::detail {

using nlohmann::json;

inline constexpr double kInf = std::numeric_limits<double>::infinity();

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
// more instructions than parsing all the catalogs' JSON, in every `capplan estimate` (issue 13).
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

// Parses JSON text. Errors: "<where>: invalid JSON at line L, column C: <reason>". Duplicate keys
// in one object are errors too (nlohmann would keep the last one silently).
inline Result<json> parse_json_text(std::string_view text, const std::string& where) {
  struct Frame {
    bool is_object = false;
    std::vector<std::string> keys;
    std::size_t index = 0;
  };
  std::vector<Frame> stack;
  Diagnostics diags;
  auto element_done = [&] {
    if (!stack.empty() && !stack.back().is_object) ++stack.back().index;
  };
  auto on_event = [&](int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start: stack.push_back({true, {}, 0}); break;
      case json::parse_event_t::array_start: stack.push_back({false, {}, 0}); break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!stack.empty()) stack.pop_back();
        element_done();
        break;
      case json::parse_event_t::value: element_done(); break;
      case json::parse_event_t::key: {
        auto& top = stack.back();
        const std::string key = parsed.get<std::string>();
        bool seen = false;
        for (const auto& k : top.keys) seen = seen || k == key;
        if (seen) {
          std::string pointer;
          for (std::size_t i = 0; i + 1 < stack.size(); ++i) {
            pointer = stack[i].is_object ? child(pointer, stack[i].keys.back()) : child(pointer, stack[i].index);
          }
          diags.push_back({Diagnostic::Severity::error, where + "#" + child(pointer, key),
                           "duplicate key (each key may appear once in an object)"});
        }
        top.keys.push_back(key);  // keys.back() is the current key of this object
        break;
      }
    }
    return true;
  };
  json j;
  try {
    j = json::parse(text.begin(), text.end(), on_event);
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

inline Result<std::string> read_text_file(const std::filesystem::path& file, const std::string& where) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) {
    return fail(where, "cannot read '" + file.string() + "': no such file");
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) return fail(where, "cannot read '" + file.string() + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return fail(where, "error while reading '" + file.string() + "'");
  return ss.str();
}

}  // namespace capplan::data::detail
