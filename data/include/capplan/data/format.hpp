// SPDX-License-Identifier: Apache-2.0
#pragma once
// The number formats shared by every renderer of results (data's JSON, CSV and tables, and the
// CLI's own tables), so that one figure is never written two ways.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace capplan::data::format {

// A double for a JSON document: NaN and Inf become null.
nlohmann::json number(double v);
nlohmann::json number(const std::optional<double>& v);  // null when absent
// A count held in a double (steps): a JSON integer when whole and within 2^53, else number(v).
nlohmann::json count(double v);

// Fixed decimals ("12.35"); "n/a" for NaN and Inf.
std::string fixed(double v, int decimals);

// A number inside a sentence (findings.hpp): whole numbers without decimals when `decimals` < 0,
// else one decimal; with `decimals` >= 0 rounded to that many, trailing zeros dropped; "inf" for
// NaN and Inf.
std::string in_sentence(double v, int decimals);

// A model's size for a header: "69.0B parameters", or "671.0B parameters (37.6B active per token)"
// when fewer parameters than all (a mixture of experts) see each token.
std::string parameters(double total, double active);

// The version of capplan's JSON output schema (CONTRACT.md `schema_version`): raised when a field
// changes meaning or goes away; new fields do not change it. And the tool's own version.
inline constexpr int kOutputSchemaVersion = 1;
std::string tool_version();

// Stamps a JSON document capplan writes: `schema_version` and `capplan_version`.
void stamp(nlohmann::json& document);

// About three significant digits with an SI prefix: "1.23M", "456k", "2T", "400G".
std::string si(double v);

// A count of tokens as practitioners write it: "2T", "100B", "4.19M", "512k" (about three
// significant digits, B for 1e9).
std::string tokens(double count);

// The linears a LoRA adapts (a mask of sim::LoraTarget bits), comma-separated in the order
// q,k,v,o,gate,up,down: "q,v".
std::string lora_targets(unsigned bits);

// A length of time in the unit a person reads it in: days from two days up ("33.4 days",
// "1,234 days"), hours below ("17.3 hours"), minutes below one hour ("45.0 minutes").
struct DurationUnit {
  const char* name;   // "days", "hours", "minutes"
  double per_day;     // units in one day
};
DurationUnit duration_unit(double days);
std::string duration(double days, const DurationUnit& unit);  // the number only, in `unit`

// Thousands separators for large counts: "12,345,678"; "n/a" for NaN and Inf.
std::string grouped(double v);

// A CSV cell, quoted (with doubled quotes) when it holds a comma, quote, line break or edge space.
std::string csv_field(const std::string& text);

}  // namespace capplan::data::format
