// SPDX-License-Identifier: Apache-2.0
#include "capplan/data/format.hpp"

#include <cmath>
#include <cstdio>

namespace capplan::data::format {

nlohmann::json number(double v) {
  if (!std::isfinite(v)) return nullptr;
  return v;
}

nlohmann::json number(const std::optional<double>& v) { return v ? number(*v) : nlohmann::json(nullptr); }

std::string fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string csv_field(const std::string& text) {
  const bool needs_quotes = text.find_first_of(",\"\r\n") != std::string::npos ||
                            (!text.empty() && (text.front() == ' ' || text.back() == ' '));
  if (!needs_quotes) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace capplan::data::format
