// SPDX-License-Identifier: Apache-2.0
// The pricing and tco field tables (input/fields/pricing_fields.cpp, tco_fields.cpp) against the
// scenario reader: every row's range is what the reader enforces, an error names the field and
// the value, each object accepts exactly the table's keys, and every row is documented.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "capplan/data/fields.hpp"
#include "capplan/data/json_pointer.hpp"
#include "capplan/data/scenario_io.hpp"
#include "capplan/data/tco_io.hpp"
#include "reading/json_reader.hpp"
#include "test_support.hpp"

namespace capplan::data {
namespace {

using nlohmann::json;
using test::good_catalogs;

// Valid against the good fixtures: Llama 2 7B on two p5.48xlarge, priced, with a tco section.
json scenario() {
  return json::parse(R"({"model": {"preset": "llama2-7b"},
                         "training": {"tokens": "1T", "global_batch": 512},
                         "cluster": {"instance": "aws-p5.48xlarge", "nodes": 2},
                         "pricing": {"usd_per_gpu_hour": 2},
                         "tco": {"years": 3, "utilisation": 0.5}})");
}

// The first error at `pointer` (or below it) when `doc` is read; "" when there is none.
std::string error_at(const json& doc, const std::string& pointer) {
  auto r = parse_scenario(doc, good_catalogs());
  if (r) return {};
  const std::string where = "scenario#" + pointer;
  for (const auto& d : r.error()) {
    if (d.where == where || d.where.starts_with(where + "/")) return d.message;
  }
  return {};
}

// `scenario()` with `value` at `section`/`pointer`: the GPU-hour and node-hour prices one at a
// time, a rate to US dollars with a currency that has one.
json with(const std::string& section, const std::string& pointer, const json& value) {
  json d = scenario();
  if (pointer == "usd_per_node_hour") d["pricing"].erase("usd_per_gpu_hour");
  if (pointer == "usd_per_unit") d["pricing"]["currency"] = "EUR";
  set_at(d, "/" + section + "/" + pointer, value);
  return d;
}

template <class T>
void expect_ranges_enforced(const std::string& section, std::span<const Field<T>> table) {
  int checked = 0;
  for (const auto& row : table) {
    const FieldSpec& f = row.spec;
    if (f.kind != FieldKind::number && f.kind != FieldKind::integer) continue;
    const std::string pointer = "/" + section + "/" + f.pointer;
    ASSERT_TRUE(std::isfinite(f.max)) << pointer << ": a range without a maximum";
    EXPECT_NE(std::string(f.bound), "") << pointer << ": a maximum without a reason";
    EXPECT_EQ(error_at(with(section, f.pointer, f.max), pointer), "") << pointer << " at its maximum";
    const std::string above = error_at(with(section, f.pointer, f.max * 2 + 1), pointer);
    EXPECT_NE(above.find("must be at most " + detail::fmt(f.max)), std::string::npos) << pointer << ": " << above;
    EXPECT_NE(above.find("got "), std::string::npos) << pointer << ": " << above;
    if (!f.min_open) {
      EXPECT_EQ(error_at(with(section, f.pointer, f.min), pointer), "") << pointer << " at its minimum";
    }
    const std::string below = error_at(with(section, f.pointer, f.min_open ? f.min : f.min - 1), pointer);
    EXPECT_NE(below.find("got "), std::string::npos) << pointer << " below its minimum: " << below;
    ++checked;
  }
  EXPECT_GT(checked, 10);
}

TEST(PricingFields, EveryRowsRangeIsWhatTheReaderEnforces) {
  expect_ranges_enforced("pricing", pricing_fields());
}

TEST(TcoFields, EveryRowsRangeIsWhatTheReaderEnforces) {
  expect_ranges_enforced("tco", tco_fields());
}

// The ranges the readers enforced before the tables: [min, max], min excluded where open.
struct Range {
  const char* pointer;
  double min, max;
  bool min_open;
};

template <class T>
void expect_ranges(std::span<const Field<T>> table, const std::vector<Range>& expected) {
  std::size_t numbers = 0;
  for (const auto& row : table) numbers += row.spec.kind == FieldKind::number || row.spec.kind == FieldKind::integer;
  EXPECT_EQ(numbers, expected.size());
  for (const Range& e : expected) {
    const FieldSpec* f = nullptr;
    for (const auto& row : table) f = std::string(row.spec.pointer) == e.pointer ? &row.spec : f;
    ASSERT_NE(f, nullptr) << e.pointer;
    EXPECT_EQ(f->min, e.min) << e.pointer;
    EXPECT_EQ(f->max, e.max) << e.pointer;
    EXPECT_EQ(f->min_open, e.min_open) << e.pointer;
  }
}

TEST(PricingFields, TodaysRangesAreKept) {
  expect_ranges(pricing_fields(), {{"usd_per_gpu_hour", 0, 1e5, false},
                                   {"usd_per_node_hour", 0, 1e5 * 1024, false},
                                   {"usd_per_unit", 0, 1e6, true},
                                   {"spot/usd_per_gpu_hour", 0, 1e5, false},
                                   {"spot/preemptions_per_node_hour", 0, 1, false},
                                   {"reserved/usd_per_gpu_hour", 0, 1e5, false},
                                   {"reserved/term_months", 0, 240, true},
                                   {"reserved/idle_usd_per_gpu_hour", 0, 1e5, false},
                                   {"reserved/committed_gpus", 1, 1e6, false},
                                   {"reserved/utilisation", 0, 1, true},
                                   {"on_prem/usd_per_node", 0, 1e9, true},
                                   {"on_prem/amortisation_years", 0, 50, true},
                                   {"on_prem/node_power_w", 0, 1e6, true},
                                   {"on_prem/pue", 1, 5, false},
                                   {"on_prem/usd_per_kwh", 0, 100, false},
                                   {"on_prem/ops_usd_per_year", 0, 1e12, false},
                                   {"on_prem/utilisation", 0, 1, true}});
}

TEST(TcoFields, TodaysRangesAreKept) {
  expect_ranges(tco_fields(), {{"years", 1, 30, false},
                               {"utilisation", 0, 1, true},
                               {"capex_per_node", 0, 1e13, true},
                               {"network_capex_per_node", 0, 1e13, false},
                               {"storage_capex", 0, 1e13, false},
                               {"residual_fraction", 0, 1, false},
                               {"interest_rate", 0, 1, false},
                               {"loan_years", 1, 30, false},
                               {"node_power_w", 0, 1e6, true},
                               {"power_factor", 0, 1, true},
                               {"pue", 1, 5, false},
                               {"price_per_kwh", 0, 1e4, false},
                               {"space_per_kw_month", 0, 1e13, false},
                               {"space_per_rack_unit_month", 0, 1e13, false},
                               {"rack_units_per_node", 0, 100, true},
                               {"staff_per_year", 0, 1e13, false}});
}

TEST(PricingFields, AnErrorNamesTheFieldAndTheValue) {
  EXPECT_EQ(error_at(with("pricing", "reserved/term_months", 0), "/pricing/reserved/term_months"),
            "must be > 0; got 0");
  EXPECT_EQ(error_at(with("pricing", "on_prem/pue", 0.9), "/pricing/on_prem/pue"), "must be >= 1; got 0.9");
  EXPECT_EQ(error_at(with("pricing", "purchase", "spt"), "/pricing/purchase"),
            "unknown purchase model 'spt' (did you mean 'spot'? known: on_demand, spot, reserved, on_prem)");
  EXPECT_EQ(error_at(with("pricing", "reserved/committed_gpus", 2.5), "/pricing/reserved/committed_gpus"),
            "must be a positive integer; got 2.5");
}

// A nullable row's null is "unknown" (nothing stored); any other row's null is refused with its help.
TEST(PricingFields, NullIsUnknownWhereTheRowSaysSoAndRefusedElsewhere) {
  for (const auto& row : pricing_fields()) {
    const std::string pointer = row.spec.pointer;
    if (pointer.find('/') == std::string::npos) continue;  // the section's own keys are read by hand
    const std::string message = error_at(with("pricing", pointer, nullptr), "/pricing/" + pointer);
    if (row.spec.nullable) {
      EXPECT_EQ(message, "") << pointer;
    } else {
      EXPECT_EQ(message, std::string("must not be null (") + row.spec.help + ")") << pointer;
    }
  }
}

TEST(TcoFields, NullIsUnknownWhereTheRowSaysSoAndRefusedElsewhere) {
  for (const auto& row : tco_fields()) {
    const std::string message = error_at(with("tco", row.spec.pointer, nullptr), std::string("/tco/") + row.spec.pointer);
    if (row.spec.nullable) {
      EXPECT_EQ(message, "") << row.spec.pointer;
    } else {
      EXPECT_EQ(message, std::string("must not be null (") + row.spec.help + ")") << row.spec.pointer;
    }
  }
}

TEST(TcoFields, ARequiredRowMissingIsReportedWithItsHelp) {
  int required = 0;
  for (const auto& row : tco_fields()) {
    if (!row.spec.required) continue;
    json d = scenario();
    d["tco"].erase(row.spec.pointer);
    EXPECT_EQ(error_at(d, std::string("/tco/") + row.spec.pointer),
              std::string("required (") + row.spec.help + ") is missing");
    ++required;
  }
  EXPECT_EQ(required, 2);  // years and utilisation
}

// The values land where the rows say: a term in months as hours, prices in US dollars.
TEST(PricingFields, ValuesLandInTheTermsConvertedToUsDollars) {
  json d = scenario();
  d["pricing"] = json::parse(R"({"currency": "EUR", "usd_per_unit": 2, "purchase": "reserved",
                                 "reserved": {"usd_per_gpu_hour": 3, "term_months": 12, "committed_gpus": 32},
                                 "on_prem": {"pue": 1.2, "usd_per_kwh": 0.5}, "spot": {"usd_per_gpu_hour": 1}})");
  auto r = parse_scenario(d, good_catalogs());
  ASSERT_TRUE(r) << to_string(r.error());
  const sim::PricingTerms& t = r->scenario.pricing;
  EXPECT_EQ(t.model, sim::PurchaseModel::reserved);
  EXPECT_DOUBLE_EQ(*t.reserved.usd_per_gpu_hour, 6);
  EXPECT_DOUBLE_EQ(*t.reserved.term_hours, 8760);
  EXPECT_EQ(*t.reserved.committed_gpus, 32);
  EXPECT_DOUBLE_EQ(t.on_prem.pue, 1.2);
  EXPECT_DOUBLE_EQ(*t.on_prem.usd_per_kwh, 1);
  EXPECT_DOUBLE_EQ(*t.spot.usd_per_gpu_hour, 2);
}

// The keys an object's unknown-key error names: those of the rows directly below `parent`.
template <class T>
std::string known_keys(std::span<const Field<T>> table, const std::string& parent) {
  std::string known;
  std::set<std::string> seen;
  for (const auto& row : table) {
    std::string p = row.spec.pointer;
    if (!parent.empty()) {
      if (!p.starts_with(parent + "/")) continue;
      p = p.substr(parent.size() + 1);
    }
    p = p.substr(0, p.find('/'));
    if (seen.insert(p).second) known += (known.empty() ? "" : ", ") + p;
  }
  return "unknown field (known: " + known + ")";
}

TEST(PricingFields, EachObjectAcceptsExactlyTheTablesKeys) {
  for (const std::string parent : {"", "spot", "reserved", "on_prem"}) {
    const std::string at = parent.empty() ? "zz_unknown" : parent + "/zz_unknown";
    json d = scenario();
    if (!parent.empty()) d["pricing"][parent] = json::object();
    set_at(d, "/pricing/" + at, 1);
    EXPECT_EQ(error_at(d, "/pricing/" + at), known_keys(pricing_fields(), parent)) << parent;
  }
}

TEST(TcoFields, TheSectionAcceptsExactlyTheTablesKeys) {
  json d = scenario();
  d["tco"]["zz_unknown"] = 1;
  EXPECT_EQ(error_at(d, "/tco/zz_unknown"), known_keys(tco_fields(), ""));
}

// Each row has help for the schema; a flag, or a reason here for none.
template <class T>
void expect_documented(std::span<const Field<T>> table, const std::map<std::string, std::string>& no_flag) {
  std::set<std::string> pointers;
  for (const auto& row : table) {
    const FieldSpec& f = row.spec;
    EXPECT_TRUE(pointers.insert(f.pointer).second) << f.pointer << ": two rows";
    EXPECT_NE(std::string(f.help), "") << f.pointer << ": no help";
    if (f.flag.name == nullptr) {
      EXPECT_TRUE(no_flag.contains(f.pointer)) << f.pointer << ": no flag and no reason for none";
      continue;
    }
    EXPECT_FALSE(no_flag.contains(f.pointer)) << f.pointer << ": has a flag now";
    EXPECT_TRUE(std::string(f.flag.name).starts_with("--")) << f.pointer;
    EXPECT_NE(std::string(f.flag.type), "") << f.pointer;
    EXPECT_NE(std::string(f.flag.help), "") << f.pointer;
  }
}

TEST(PricingFields, EveryRowHasHelpAndAFlagOrAReasonForNone) {
  expect_documented(pricing_fields(), {{"sheet", "a file: --prices gives one"}});
}

TEST(TcoFields, EveryRowHasHelpAndAFlagOrAReasonForNone) {
  expect_documented(tco_fields(), {{"space_per_rack_unit_month", "the other spelling of --space-per-kw-month"},
                                   {"rack_units_per_node", "needed only with space_per_rack_unit_month"}});
}

// The schema of rows read by hand: the currency and the date keep their patterns.
TEST(PricingFields, TheSchemaOfRowsReadByHand) {
  int seen = 0;
  for (const auto& row : pricing_fields()) {
    const auto s = field_schema(row.spec);
    const std::string pointer = row.spec.pointer;
    if (pointer == "currency") {
      EXPECT_EQ(s["pattern"], "^[A-Z]{3}$");
      ++seen;
    }
    if (pointer == "usd_per_gpu_hour") {
      EXPECT_EQ(s["maximum"], 100000);
      EXPECT_EQ(s["x-unit"], "per GPU-hour in pricing.currency");
      ++seen;
    }
  }
  EXPECT_EQ(seen, 2);
}

}  // namespace
}  // namespace capplan::data
