// SPDX-License-Identifier: Apache-2.0
// Malformed and hostile inputs at the reader: every user file is read through one bounded reader and
// one JSON parser with limits (size, nesting, NUL bytes, duplicate keys in linear time), and
// numbers are range-checked where they are read.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>

#include "capplan/data/input_file.hpp"
#include "capplan/data/profile_io.hpp"
#include "capplan/data/published_runs.hpp"
#include "capplan/data/scenario_io.hpp"
#include "reading/csv.hpp"
#include "reading/json_reader.hpp"
#include "test_support.hpp"

namespace capplan::data {
namespace {

using detail::json;

// 100,000 nested lists must not crash (SIGSEGV) in a recursive dump() of the error path.
// The reader refuses them before nlohmann builds anything, naming the limit and the depth.
TEST(Robustness, DeepNestingIsRefusedBeforeParsingNamingTheDepth) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto parsed = parse_scenario_document(deep, "scenario");
  ASSERT_FALSE(parsed.has_value());
  ASSERT_EQ(parsed.error().size(), 1u);
  EXPECT_EQ(parsed.error()[0].where, "scenario");
  EXPECT_EQ(parsed.error()[0].message,
            "invalid JSON: nested deeper than 256 levels at byte offset 256 (line 1, column 257); got depth 257");

  // 256 levels are fine (the limit is inclusive); brackets inside strings do not count.
  const std::string ok = std::string(256, '[') + "\"[[[[{{{{\"" + std::string(256, ']');
  EXPECT_TRUE(detail::parse_json_text(ok, "f.json").has_value());
}

// The duplicate-key check must not compare each key with every earlier one (300k keys: 65 s).
// With a hash set per object it is linear: 200,000 keys parse well within 5 s even on a loaded
// 2-core machine (quadratic, it took about 35 s: 9 s at 100k growing as n^2).
TEST(Robustness, DuplicateKeyCheckIsLinearInTheKeys) {
  std::string text = "{";
  for (int i = 0; i < 200000; ++i) text += (i > 0 ? ",\"k" : "\"k") + std::to_string(i) + "\":0";
  text += "}";
  const auto start = std::chrono::steady_clock::now();
  auto parsed = detail::parse_json_text(text, "f.json");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->size(), 200000u);
  EXPECT_LT(seconds, 5.0);

  // A duplicate is still named by its pointer.
  auto dup = detail::parse_json_text(R"({"a": {"b": 1, "c": [1, {"d": 2, "d": 3}]}})", "f.json");
  ASSERT_FALSE(dup.has_value());
  EXPECT_EQ(dup.error()[0].where, "f.json#/a/c/1/d");
}

// What follows a NUL byte is not silently ignored: a NUL is an error naming its offset.
TEST(Robustness, ANulByteIsAnErrorNamingItsOffset) {
  const std::string text = std::string("{\"a\": 1}") + '\0' + "{\"b\": 2}";
  auto parsed = detail::parse_json_text(text, "f.json");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error()[0].message,
            "invalid JSON: NUL byte at byte offset 8 (line 1, column 9): a JSON file holds text only");
  EXPECT_FALSE(parse_scenario_document(std::string("{}") + '\0', "scenario").has_value());
}

// The one bounded reader. A file over the limit is refused (here a limit of 1 KiB on a
// 2 KiB file stands for 64 MiB), a device before any byte is read, a directory by name.
TEST(Robustness, TheInputReaderIsBounded) {
  const auto dir = test::scratch_dir();
  test::write_file(dir / "big.json", std::string(2048, ' '));
  auto big = read_input_file((dir / "big.json").string(), 1024);
  ASSERT_FALSE(big.has_value());
  EXPECT_EQ(big.error(), "larger than 1024 bytes, the limit for an input file; got 2048 bytes");
  EXPECT_EQ(read_input_file((dir / "big.json").string(), 4096).value().size(), 2048u);

  auto zero = read_input_file("/dev/zero");
  ASSERT_FALSE(zero.has_value());
  EXPECT_EQ(zero.error(), "a device, not a file (capplan reads files, pipes and standard input)");
  EXPECT_EQ(read_input_file(dir.string()).error(), "Is a directory");
  EXPECT_EQ(kMaxInputBytes, 64u * 1024 * 1024);
}

// A "> 0" number must be at least kMinPositive (1e-15): 5e-324 would pass and become Inf.
TEST(Robustness, ADenormalIsNotAPositiveQuantity) {
  Diagnostics d;
  detail::Reader r("f.json", d);
  EXPECT_EQ(r.number(json(5e-324), "/rate", 0, detail::kInf, true), std::nullopt);
  EXPECT_EQ(r.number(json(1e-12), "/rate", 0, detail::kInf, true), 1e-12);  // a real s/B of a TB/s link
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].message, "must be at least 1e-15 (a positive value this small is no physical quantity); got 5e-324");
}

// A collective latency_s of 1e308 must not reach the model (exit 0, step_time_s null). Each
// profile value has a physical ceiling, named with the pointer and the value.
TEST(Robustness, AnAbsurdProfileValueIsRejectedWhereItIsRead) {
  json profile = test::read_json(std::string(CAPPLAN_SOURCE_DIR) + "/tests/fixtures/calibrate/synthetic-h100-profile.json");
  ASSERT_TRUE(parse_profile(profile.dump(), "p.json").has_value());
  profile["collectives"][0]["latency_s"]["value"] = 1e308;
  profile["memory"][0]["bandwidth_Bps"]["value"] = 1e300;
  auto parsed = parse_profile(profile.dump(), "p.json");
  ASSERT_FALSE(parsed.has_value());
  const std::string all = to_string(parsed.error());
  EXPECT_NE(all.find("p.json#/collectives/0/latency_s/value: must be at most 10; got 1e+308"), std::string::npos) << all;
  EXPECT_NE(all.find("p.json#/memory/0/bandwidth_Bps/value: must be at most 1e+15; got 1e+300"), std::string::npos) << all;
}

// A 10 MB preset name would cost 6 s of edit distance. Names over 64 characters get none:
// a 1 MB name against 100 ids of 20 characters took 8.4 s before (this test built against main
// on the 2-core development machine); now well under the 1 s asked here.
TEST(Robustness, ASuggestionForAHugeNameCostsNoEditDistance) {
  const std::string huge(1'000'000, 'x');
  std::vector<std::string> ids;
  for (int i = 0; i < 100; ++i) ids.push_back("model-" + std::to_string(1000 + i) + "-abcdefghij");
  const auto start = std::chrono::steady_clock::now();
  const std::string s = suggest(huge, ids);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
  EXPECT_TRUE(s.starts_with("known: model-1000-abcdefghij, ")) << s.substr(0, 80);
  EXPECT_EQ(suggest("llama3-7b", {"llama3-8b", "llama3-70b"}), "did you mean 'llama3-70b'? known: llama3-8b, llama3-70b");
}

// Points 9 and 14: the published-runs reader. The dev CSV's header and first row, with one cell
// replaced, written as RFC 4180 (every cell quoted), then loaded.
Result<std::vector<PublishedRun>> load_with_cell(const std::string& column, const std::string& value) {
  const auto csv = test::source_data_dir() / "benchmarks" / "published_runs_dev.csv";
  auto rows = detail::parse_csv(test::read_file(csv), "published_runs_dev.csv");
  EXPECT_TRUE(rows.has_value());
  const auto& header = rows->at(0).cells;
  auto row = rows->at(1).cells;
  const auto at = std::find(header.begin(), header.end(), column);
  EXPECT_NE(at, header.end()) << column;
  row[static_cast<std::size_t>(at - header.begin())] = value;
  std::string text;
  const auto& edited = row;
  for (const auto* r : {&header, &edited}) {
    for (std::size_t i = 0; i < r->size(); ++i) {
      std::string cell;
      for (char c : (*r)[i]) cell += c == '"' ? std::string("\"\"") : std::string(1, c);
      text += (i > 0 ? ",\"" : "\"") + cell + "\"";
    }
    text += "\n";
  }
  const auto file = test::scratch_dir() / "runs.csv";
  test::write_file(file, text);
  return load_published_runs(file, test::real_catalogs());
}

TEST(Robustness, PublishedRunsNumbersOutOfRangeNameTheRowAndColumn) {
  // stod("1e999") threw out_of_range: "internal error", exit 1.
  auto layers = load_with_cell("num_layers", "1e999");
  ASSERT_FALSE(layers.has_value());
  EXPECT_EQ(layers.error()[0].where, "runs.csv:2");
  EXPECT_EQ(layers.error()[0].message, "column 'num_layers': number out of range (beyond a double); got '1e999'");
  // A sliding window that overflowed stoi: "internal error: stoi", exit 1.
  auto window = load_with_cell("attention_notes", "alternating 99999999999-token sliding window");
  ASSERT_FALSE(window.has_value());
  EXPECT_EQ(window.error()[0].message,
            "column 'attention_notes': number out of range (at most 100000000); got '99999999999'");
  // A NIC count beyond any fabric.
  auto nics = load_with_cell("inter_node_network", "99999999999999999999 x 400 Gbps");
  ASSERT_FALSE(nics.has_value());
  EXPECT_EQ(nics.error()[0].message,
            "column 'inter_node_network': number out of range (at most 10000); got '99999999999999999999'");
  // Unchanged, the row loads.
  EXPECT_TRUE(load_with_cell("num_layers", "32").has_value());
}

TEST(Robustness, APublishedRunsCellIsBoundedBeforeAnyPatternSeesIt) {
  // "8 x " + 50,000 letters + " NDR" made libstdc++'s std::regex recurse per character: SIGSEGV.
  auto long_cell = load_with_cell("inter_node_network", "8 x " + std::string(50000, 'a') + " NDR");
  ASSERT_FALSE(long_cell.has_value());
  EXPECT_EQ(long_cell.error()[0].where, "runs.csv:2");
  EXPECT_NE(long_cell.error()[0].message.find("is longer than 1024 characters (the limit for a cell)"),
            std::string::npos)
      << long_cell.error()[0].message;
}

}  // namespace
}  // namespace capplan::data
