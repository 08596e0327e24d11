// SPDX-License-Identifier: Apache-2.0
// data/error_bands.json: round trip, a missing file, the shipped table, and diagnostics that name
// the field for every kind of bad file.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "capplan/data/error_bands.hpp"
#include "test_support.hpp"

namespace capplan::data {
namespace {

using nlohmann::json;
using test::has_diag;

constexpr const char* kWhere = "error_bands.json";

ErrorBands sample_bands() {
  ErrorBands b;
  b.generated = "2026-11-30";
  b.source = "capplan validate-published --write-error-bands on published_runs_dev.csv";
  b.method = "p10/p90 of ln(measured/predicted), definition 6";
  b.leave_one_out_coverage = 0.8181818181818182;
  // {category, n, p10, p90, band low, band high}: dense/pytorch's p10-p90 lies below 0, so its
  // band is slid up to 0 (sim::band_quantiles).
  b.table.categories = {
      {"all", 44, -0.31519720054331335, 0.027212845829433403, -0.31519720054331335, 0.027212845829433403},
      {"dense", 44, -0.31519720054331335, 0.027212845829433403, -0.31519720054331335, 0.027212845829433403},
      {"dense/megatron", 31, -0.15171862194462318, 0.05232690610733298, -0.15171862194462318, 0.05232690610733298},
      {"dense/pytorch", 13, -0.3612564278414506, -0.06153345274965802, -0.2987654321, 1.0e-17},
      {"dense/9-512", 30, -0.2, 0.05, -0.2, 0.05},
      {"dense/megatron/>512", 14, -0.2, 0.0, -0.2, 0.0}};
  return b;
}

// A valid document with one edit applied.
json edited(const std::function<void(json&)>& edit) {
  json j = json::parse(error_bands_to_json(sample_bands()).dump());
  edit(j);
  return j;
}

Diagnostics errors_of(const json& doc) {
  auto r = error_bands_from_json(doc, kWhere);
  EXPECT_FALSE(r.has_value()) << doc.dump();
  return r ? Diagnostics{} : r.error();
}

TEST(ErrorBands, SaveAndLoadRoundTripEveryValueExactly) {
  const ErrorBands b = sample_bands();
  const auto dir = test::scratch_dir();
  test::write_file(error_bands_path(dir), error_bands_to_json(b).dump(2) + "\n");
  auto loaded = load_error_bands(error_bands_path(dir));
  ASSERT_TRUE(loaded) << to_string(loaded.error());
  ASSERT_TRUE(*loaded);
  const ErrorBands& got = **loaded;
  EXPECT_EQ(got.generated, b.generated);
  EXPECT_EQ(got.source, b.source);
  EXPECT_EQ(got.method, b.method);
  ASSERT_TRUE(got.leave_one_out_coverage);
  EXPECT_EQ(*got.leave_one_out_coverage, *b.leave_one_out_coverage);
  ASSERT_EQ(got.table.categories.size(), b.table.categories.size());
  for (size_t i = 0; i < b.table.categories.size(); ++i) {
    EXPECT_EQ(got.table.categories[i].category, b.table.categories[i].category);
    EXPECT_EQ(got.table.categories[i].n, b.table.categories[i].n);
    EXPECT_EQ(got.table.categories[i].log_ratio_p10, b.table.categories[i].log_ratio_p10);  // bit-exact
    EXPECT_EQ(got.table.categories[i].log_ratio_p90, b.table.categories[i].log_ratio_p90);
    EXPECT_EQ(got.table.categories[i].log_ratio_low, b.table.categories[i].log_ratio_low);
    EXPECT_EQ(got.table.categories[i].log_ratio_high, b.table.categories[i].log_ratio_high);
  }
}

TEST(ErrorBands, WrittenKeysFollowTheDocumentedOrder) {
  const std::string text = error_bands_to_json(sample_bands()).dump(2);
  EXPECT_LT(text.find("\"schema\""), text.find("\"generated\""));
  EXPECT_LT(text.find("\"method\""), text.find("\"categories\""));
}

TEST(ErrorBands, MissingFileMeansNoBandNotAnError) {
  auto loaded = load_error_bands(test::scratch_dir() / "error_bands.json");
  ASSERT_TRUE(loaded) << to_string(loaded.error());
  EXPECT_FALSE(*loaded);
}

TEST(ErrorBands, NullCoverageIsAllowed) {
  auto r = error_bands_from_json(edited([](json& j) { j["leave_one_out_coverage"] = nullptr; }), kWhere);
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_FALSE(r->leave_one_out_coverage);
  auto absent = error_bands_from_json(edited([](json& j) { j.erase("leave_one_out_coverage"); }), kWhere);
  ASSERT_TRUE(absent) << to_string(absent.error());
}

TEST(ErrorBands, ShippedTableLoadsAndHasTheDenseFallback) {
  auto loaded = load_error_bands(error_bands_path(test::source_data_dir()));
  ASSERT_TRUE(loaded) << to_string(loaded.error());
  ASSERT_TRUE(*loaded) << "data/error_bands.json is missing";
  const auto& t = (*loaded)->table;
  ASSERT_NE(t.find("all"), nullptr);
  ASSERT_NE(t.find("dense"), nullptr);
  for (const auto& q : t.categories) {
    EXPECT_GE(q.n, sim::kMinResidualSamples) << q.category;
    EXPECT_LE(q.log_ratio_p10, q.log_ratio_p90) << q.category;
  }
}

TEST(ErrorBands, InvalidJsonNamesLineAndColumn) {
  auto r = parse_error_bands_text("{\"schema\": 1,\n  \"generated\": }", kWhere);
  ASSERT_FALSE(r);
  EXPECT_TRUE(has_diag(r.error(), kWhere, "invalid JSON at line 2"));
}

TEST(ErrorBands, UnknownKeysAreErrorsWithSuggestions) {
  const auto top = errors_of(edited([](json& j) { j["generatd"] = "2026-01-01"; }));
  EXPECT_TRUE(has_diag(top, "error_bands.json#/generatd", "unknown field"));
  EXPECT_TRUE(has_diag(top, "error_bands.json#/generatd", "generated"));
  const auto nested = errors_of(edited([](json& j) { j["categories"][1]["p10"] = 0.1; }));
  EXPECT_TRUE(has_diag(nested, "error_bands.json#/categories/1/p10", "unknown field"));
}

TEST(ErrorBands, EveryBadValueIsReportedWithItsPointer) {
  const auto d = errors_of(edited([](json& j) {
    j["schema"] = 4;
    j["generated"] = "30/11/2026";
    j["leave_one_out_coverage"] = 1.5;
    j["categories"][0]["n"] = 0;
    j["categories"][1]["log_ratio_p10"] = "low";
    j["categories"][2]["log_ratio_p90"] = 9.0;
    j["categories"][3]["category"] = "dense/pytorh";
  }));
  EXPECT_TRUE(has_diag(d, "error_bands.json#/schema", "unsupported schema version"));
  EXPECT_TRUE(has_diag(d, "error_bands.json#/generated", "YYYY-MM-DD"));
  EXPECT_TRUE(has_diag(d, "error_bands.json#/leave_one_out_coverage", "at most 1"));
  EXPECT_TRUE(has_diag(d, "error_bands.json#/categories/0/n", "positive integer"));
  EXPECT_TRUE(has_diag(d, "error_bands.json#/categories/1/log_ratio_p10", "expected a number"));
  EXPECT_TRUE(has_diag(d, "error_bands.json#/categories/2/log_ratio_p90", "at most 5"));
  EXPECT_TRUE(has_diag(d, "error_bands.json#/categories/3/category", "did you mean 'dense/pytorch'"));
}

// Schema 2 cuts categories by scale; a schema-1 file (no scale cut) still reads, its categories
// being schema 2's coarser ones.
TEST(ErrorBands, SchemaOneFilesStillRead) {
  auto old = error_bands_from_json(edited([](json& j) {
    j["schema"] = 1;
    j["categories"].erase(5);
    j["categories"].erase(4);
    for (auto& c : j["categories"]) {
      c.erase("log_ratio_low");
      c.erase("log_ratio_high");
    }
  }), kWhere);
  ASSERT_TRUE(old) << to_string(old.error());
  EXPECT_EQ(old->table.categories.size(), 4u);
  EXPECT_EQ(error_bands_to_json(sample_bands())["schema"], 3);  // what capplan writes
}

// Schema 3 adds each category's band; a schema-2 file has none, and its p10-p90 is the band (what
// schema-2 capplan applied, extended to the estimate where it lay on one side of it).
TEST(ErrorBands, WithoutABandTheP10P90IsTheBand) {
  auto two = error_bands_from_json(edited([](json& j) {
    j["schema"] = 2;
    for (auto& c : j["categories"]) {
      c.erase("log_ratio_low");
      c.erase("log_ratio_high");
    }
  }), kWhere);
  ASSERT_TRUE(two) << to_string(two.error());
  const auto* q = two->table.find("dense/pytorch");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->log_ratio_low, q->log_ratio_p10);
  EXPECT_EQ(q->log_ratio_high, q->log_ratio_p90);
  auto three = error_bands_from_json(edited([](json&) {}), kWhere);
  ASSERT_TRUE(three) << to_string(three.error());
  EXPECT_EQ(three->table.find("dense/pytorch")->log_ratio_high, 1.0e-17);
}

TEST(ErrorBands, ScaleCategoriesAreTheBucketsOfTheFallbackChain) {
  for (const char* c : {"dense/<=8", "moe/>512", "dense/pytorch/9-512", "moe/megatron/<=8"}) {
    auto r = error_bands_from_json(edited([&](json& j) { j["categories"][5]["category"] = c; }), kWhere);
    EXPECT_TRUE(r) << c << ": " << (r ? "" : to_string(r.error()));
  }
  // Not a bucket, the scale before the framework, or a part too many.
  for (const char* c : {"dense/megatron/<=16", "dense/<=8/megatron", "dense/megatron/<=8/x", "all/<=8"}) {
    const auto d = errors_of(edited([&](json& j) { j["categories"][5]["category"] = c; }));
    EXPECT_TRUE(has_diag(d, "error_bands.json#/categories/5/category", "unknown category")) << c;
  }
}

TEST(ErrorBands, P10AboveP90ALowAboveItsHighAndDuplicateCategoriesAreErrors) {
  const auto swapped = errors_of(edited([](json& j) {
    j["categories"][2]["log_ratio_p10"] = 0.2;
    j["categories"][2]["log_ratio_p90"] = -0.1;
  }));
  EXPECT_TRUE(has_diag(swapped, "error_bands.json#/categories/2/log_ratio_p90", "must be >= log_ratio_p10"));
  const auto band = errors_of(edited([](json& j) {
    j["categories"][3]["log_ratio_low"] = 0.1;
    j["categories"][3]["log_ratio_high"] = -0.1;
  }));
  EXPECT_TRUE(has_diag(band, "error_bands.json#/categories/3/log_ratio_high", "must be >= log_ratio_low (0.1)"));
  const auto wild = errors_of(edited([](json& j) { j["categories"][1]["log_ratio_low"] = -7.0; }));
  EXPECT_TRUE(has_diag(wild, "error_bands.json#/categories/1/log_ratio_low", "must be >= -5"));
  const auto duplicate = errors_of(edited([](json& j) { j["categories"][3]["category"] = "dense"; }));
  EXPECT_TRUE(has_diag(duplicate, "error_bands.json#/categories/3/category", "duplicate category 'dense'"));
}

TEST(ErrorBands, RequiredFieldsAndTypes) {
  const auto missing = errors_of(edited([](json& j) {
    j.erase("categories");
    j.erase("source");
  }));
  EXPECT_TRUE(has_diag(missing, "error_bands.json#/categories", "required"));
  EXPECT_TRUE(has_diag(missing, "error_bands.json#/source", "required"));
  const auto not_array = errors_of(edited([](json& j) { j["categories"] = json::object(); }));
  EXPECT_TRUE(has_diag(not_array, "error_bands.json#/categories", "expected a list"));
  const auto not_object = errors_of(json::array());
  EXPECT_TRUE(has_diag(not_object, "error_bands.json#", "expected an object"));
}

TEST(ErrorBands, AFileThatCannotBeParsedIsAnErrorNotAMissingBand) {
  const auto dir = test::scratch_dir();
  test::write_file(error_bands_path(dir), "{\"schema\": 1, \"categories\": [}");
  auto loaded = load_error_bands(error_bands_path(dir));
  ASSERT_FALSE(loaded);
  EXPECT_TRUE(has_diag(loaded.error(), "error_bands.json", "invalid JSON"));
}

}  // namespace
}  // namespace capplan::data
