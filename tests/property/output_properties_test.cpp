// SPDX-License-Identifier: Apache-2.0
// Properties of the written estimate (data/ renderers) over generated scenarios: the table, JSON
// and CSV say the same headline figures, and the same input writes the same bytes every time.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "property_support.hpp"

namespace capplan::property {
namespace {

// The fields of a CSV line (RFC 4180 quoting: "a ""b""" is a "b").
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

// A number as the table shows it, and half a unit of its last shown digit (what rounding to the
// shown digits can move it by), both in the unit of the text.
struct Shown {
  double value = 0;
  double half_unit = 0;
  std::string suffix;  // k, M, G, ... right after the digits; empty when none
  std::string rest;    // the text after the number
};
std::optional<Shown> first_number(const std::string& text) {
  static const std::regex kNumber(R"((-?[0-9][0-9,]*)(\.([0-9]+))?([kMGTPE]?))");
  std::smatch m;
  if (!std::regex_search(text, m, kNumber)) return std::nullopt;
  std::string digits = m[1].str();
  std::erase(digits, ',');
  const std::string decimals = m[3].str();
  Shown s;
  s.value = std::stod(digits + (decimals.empty() ? "" : "." + decimals));
  s.half_unit = 0.5 * std::pow(10.0, -static_cast<double>(decimals.size()));
  s.suffix = m[4].str();
  s.rest = m.suffix().str();
  return s;
}
double prefix_scale(const std::string& suffix) {
  if (suffix == "k") return 1e3;
  if (suffix == "M") return 1e6;
  if (suffix == "G") return 1e9;
  if (suffix == "T") return 1e12;
  if (suffix == "P") return 1e15;
  if (suffix == "E") return 1e18;
  return 1;
}

// The value of the table row `label` (its text after the padded label); the first such row after
// `after` when given (the memory section's "total").
std::optional<std::string> table_row(const std::string& table, const std::string& label, const std::string& after = {}) {
  std::istringstream in(table);
  std::string line;
  bool seen = after.empty();
  while (std::getline(in, line)) {
    if (!seen) {
      seen = line.rfind(after, 0) == 0;
      continue;
    }
    if (line.rfind("  " + label + " ", 0) == 0) return line.substr(std::min<std::size_t>(24, line.size()));
  }
  return std::nullopt;
}

// `shown` (in the table's unit, times `scale` to the JSON's) agrees with `exact` to its shown
// digits: within half a unit of the last digit (plus 1e-9 relative for the unit conversions).
void expect_shown(const Shown& shown, double scale, double exact, const std::string& what) {
  const double tolerance = shown.half_unit * scale + 1e-9 * std::abs(exact);
  EXPECT_NEAR(shown.value * scale, exact, tolerance) << what;
}

// 8. The table, JSON and CSV outputs agree on the headline figures: the CSV writes the JSON's
// numbers exactly (both print the double's shortest round trip), the table rounds them to its
// shown digits.
TEST(OutputProperties, TableJsonAndCsvAgreeOnTheHeadlineFigures) {
  int checked = 0;
  for_each_case("formats_agree", 80, [&](Draw& d, int) {
    auto base = draw_case(d, d.pick(all_workloads()));
    if (!base) return;
    json doc = base->doc;
    if (d.chance(0.3)) {
      doc["pricing"]["currency"] = "CNY";
      doc["pricing"]["usd_per_unit"] = 0.14;
      doc["pricing"]["usd_per_unit_date"] = "2026-12-01";
    }
    const auto r = run(doc);
    ASSERT_TRUE(r.has_value()) << doc.dump();
    SCOPED_TRACE(doc.dump());
    ++checked;
    const json j = data::estimate_to_json(r->estimate, r->parsed);
    const std::string csv = data::estimate_to_csv(r->estimate, r->parsed);
    const std::string table = data::estimate_to_table(r->estimate, r->parsed);

    // CSV against JSON: the same numbers, exactly.
    std::istringstream lines(csv);
    std::string header, values;
    std::getline(lines, header);
    std::getline(lines, values);
    const auto names = csv_fields(header), cells = csv_fields(values);
    ASSERT_EQ(names.size(), cells.size());
    int compared = 0;
    for (const char* key : {"step_time_s", "tokens_per_s", "time_to_train_days", "steps", "gpu_hours", "cost_usd",
                            "cost", "total_cost_usd", "total_cost", "memory_per_gpu_bytes", "mfu"}) {
      const auto at = std::find(names.begin(), names.end(), key);
      ASSERT_NE(at, names.end()) << key;
      const std::string& cell = cells[static_cast<std::size_t>(at - names.begin())];
      const json& v = j.at(key);
      if (v.is_null()) {
        EXPECT_EQ(cell, "") << key;
        continue;
      }
      ++compared;
      EXPECT_EQ(std::stod(cell), v.get<double>()) << key << ": csv " << cell;
    }
    EXPECT_GE(compared, 8);

    // The table against JSON, to the digits it shows.
    const auto ttt = table_row(table, "time to train");
    ASSERT_TRUE(ttt.has_value()) << table;
    const auto t = first_number(*ttt);
    ASSERT_TRUE(t.has_value()) << *ttt;
    const double per_day = t->rest.rfind(" hours", 0) == 0 ? 24.0 : t->rest.rfind(" minutes", 0) == 0 ? 1440.0 : 1.0;
    expect_shown(*t, 1.0 / per_day, j["time_to_train_days"].get<double>(), "time to train: " + *ttt);

    const auto step = table_row(table, "step time");
    ASSERT_TRUE(step.has_value());
    const auto s = first_number(*step);
    ASSERT_TRUE(s.has_value());
    const double unit = s->rest.rfind(" ms", 0) == 0 ? 1e-3 : s->rest.rfind(" us", 0) == 0 ? 1e-6 : 1.0;
    expect_shown(*s, unit, j["step_time_s"].get<double>(), "step time: " + *step);

    const auto tput = table_row(table, "throughput");
    ASSERT_TRUE(tput.has_value());
    const auto tp = first_number(*tput);
    ASSERT_TRUE(tp.has_value());
    expect_shown(*tp, prefix_scale(tp->suffix), j["tokens_per_s"].get<double>(), "throughput: " + *tput);

    const auto cost = table_row(table, "cost");
    ASSERT_TRUE(cost.has_value());
    if (!j["cost"].is_null()) {
      // Money: the currency's prefix ("$", "CNY "), then the amount in that currency.
      const std::string prefix = j["currency"] == "USD" ? "$" : j["currency"].get<std::string>() + " ";
      ASSERT_EQ(cost->rfind(prefix, 0), 0u) << *cost;
      const auto c = first_number(cost->substr(prefix.size()));
      ASSERT_TRUE(c.has_value());
      expect_shown(*c, prefix_scale(c->suffix), j["cost"].get<double>(), "cost: " + *cost);
    }

    const auto memory = table_row(table, "total", "Memory per GPU");
    ASSERT_TRUE(memory.has_value()) << table;
    const auto m = first_number(*memory);
    ASSERT_TRUE(m.has_value());
    expect_shown(*m, 1024.0 * 1024.0 * 1024.0, j["memory_per_gpu_bytes"].get<double>(), "memory: " + *memory);
  });
  if (!only_case()) {
    EXPECT_GE(checked, case_count(80) / 2);
  }
}

// 9. The same input gives byte-identical output across runs: the document parsed and estimated
// afresh twice writes the same JSON, CSV and table.
TEST(OutputProperties, TheSameInputWritesTheSameBytes) {
  int checked = 0;
  for_each_case("same_bytes", 60, [&](Draw& d, int) {
    const auto first = draw_case(d, d.pick(all_workloads()));
    if (!first) return;
    const auto second = run(json::parse(first->doc.dump()));
    ASSERT_TRUE(second.has_value());
    SCOPED_TRACE(first->doc.dump());
    ++checked;
    EXPECT_EQ(data::estimate_to_json(first->estimate, first->parsed).dump(),
              data::estimate_to_json(second->estimate, second->parsed).dump());
    EXPECT_EQ(data::estimate_to_csv(first->estimate, first->parsed), data::estimate_to_csv(second->estimate, second->parsed));
    EXPECT_EQ(data::estimate_to_table(first->estimate, first->parsed),
              data::estimate_to_table(second->estimate, second->parsed));
  });
  if (!only_case()) {
    EXPECT_GE(checked, case_count(60) / 2);
  }
}

}  // namespace
}  // namespace capplan::property
