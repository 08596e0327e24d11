// SPDX-License-Identifier: Apache-2.0
#include "capplan/data/format.hpp"

#include "capplan/sim/workload/finetune.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <string>

namespace capplan::data::format {

nlohmann::json number(double v) {
  if (!std::isfinite(v)) return nullptr;
  return v;
}

nlohmann::json number(const std::optional<double>& v) { return v ? number(*v) : nlohmann::json(nullptr); }

nlohmann::json count(double v) {
  constexpr double kExactInDouble = 9007199254740992.0;  // 2^53
  if (std::isfinite(v) && v == std::floor(v) && std::abs(v) <= kExactInDouble) return static_cast<std::int64_t>(v);
  return number(v);
}

std::string fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string tool_version() { return CAPPLAN_VERSION; }

namespace {

// About three significant digits, trailing zeros dropped, with the suffix of the largest scale
// `v` reaches; "n/a" for NaN and Inf.
template <std::size_t N>
std::string scaled(double v, const std::pair<double, const char*> (&scales)[N]) {
  if (!std::isfinite(v)) return "n/a";
  auto digits = [](double x) {
    std::string text = fixed(x, std::fabs(x) >= 100 ? 0 : (std::fabs(x) >= 10 ? 1 : 2));
    if (text.find('.') != std::string::npos) {
      while (text.back() == '0') text.pop_back();
      if (text.back() == '.') text.pop_back();
    }
    return text;
  };
  for (const auto& [scale, suffix] : scales) {
    if (std::fabs(v) >= scale) return digits(v / scale) + suffix;
  }
  return digits(v);
}

}  // namespace

std::string si(double v) {
  static constexpr std::pair<double, const char*> kPrefixes[] = {{1e18, "E"}, {1e15, "P"}, {1e12, "T"},
                                                                 {1e9, "G"},  {1e6, "M"},  {1e3, "k"}};
  return scaled(v, kPrefixes);
}

std::string tokens(double count) {
  static constexpr std::pair<double, const char*> kScales[] = {{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "k"}};
  return scaled(count, kScales);
}

std::string lora_targets(unsigned bits) {
  std::string out;
  for (sim::LoraTarget t : {sim::lora_q, sim::lora_k, sim::lora_v, sim::lora_o, sim::lora_gate, sim::lora_up,
                            sim::lora_down}) {
    if ((bits & t) != 0) out += (out.empty() ? "" : ",") + std::string(sim::lora_target_name(t));
  }
  return out;
}

DurationUnit duration_unit(double days) {
  if (!std::isfinite(days) || days >= 2.0) return {"days", 1.0};
  if (days * 24.0 >= 1.0) return {"hours", 24.0};
  return {"minutes", 24.0 * 60.0};
}

std::string duration(double days, const DurationUnit& unit) {
  const double v = days * unit.per_day;
  if (unit.per_day == 1.0 && v >= 1000.0 && std::isfinite(v)) {
    // Thousands grouped: "1,234".
    std::string digits = fixed(v, 0), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
      if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
      out += digits[i];
    }
    return out;
  }
  return fixed(v, 1);
}

void stamp(nlohmann::json& document) {
  document["schema_version"] = kOutputSchemaVersion;
  document["capplan_version"] = tool_version();
}

std::string parameters(double total, double active) {
  std::string text = fixed(total / 1e9, 1) + "B parameters";
  if (active < total) text += " (" + fixed(active / 1e9, 1) + "B active per token)";
  return text;
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

std::string in_sentence(double v, int decimals) {
  if (!std::isfinite(v)) return "inf";
  if (decimals < 0) {
    // Whole numbers as they are, else one decimal.
    if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
    const long long tenths = std::llround(v * 10.0);
    return std::string(tenths < 0 ? "-" : "") + std::to_string(std::llabs(tenths) / 10) + "." +
           std::to_string(std::llabs(tenths) % 10);
  }
  const double scale = std::pow(10.0, decimals);
  std::string s = std::to_string(std::round(v * scale) / scale);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

std::string grouped(double v) {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", std::fabs(v));
  std::string digits = buf;
  std::string out;
  const int n = static_cast<int>(digits.size());
  for (int i = 0; i < n; ++i) {
    out += digits[static_cast<size_t>(i)];
    if ((n - i - 1) % 3 == 0 && i != n - 1) out += ',';
  }
  return (v < 0 ? "-" : "") + out;
}

}  // namespace capplan::data::format
