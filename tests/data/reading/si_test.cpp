// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>

#include "capplan/data/scenario_io.hpp"

namespace capplan::data {
namespace {

struct SiCase {
  const char* text;
  std::optional<double> expected;
};

// Each suffix is a power of ten (k=1e3 ... P=1e15, B = G = 1e9); anything else is rejected.
const SiCase kCases[] = {
    {"2T", 2e12},
    {"4M", 4e6},
    {"1.5k", 1.5e3},
    {"1.5K", 1.5e3},
    {"7B", 7e9},
    {"7G", 7e9},
    {"3P", 3e15},
    {"3e9", 3e9},
    {"2.5e-3k", 2.5},
    {"1e3M", 1e9},
    {"  15T  ", 15e12},
    {"15 T", 15e12},
    {"4096", 4096.0},
    {"0", 0.0},
    {"-3k", -3e3},  // sign allowed here; the field decides the range
    {"+3k", 3e3},
    {".5M", 5e5},
    {"4.1M", 4.1e6},  // rounded once, as the literal 4.1e6
    {"", std::nullopt},
    {"   ", std::nullopt},
    {"T", std::nullopt},
    {"2t", std::nullopt},  // case matters: t is not tera
    {"2m", std::nullopt},  // nor m mega
    {"2TB", std::nullopt},
    {"2 T B", std::nullopt},
    {"abc", std::nullopt},
    {"1e", std::nullopt},
    {"1e+", std::nullopt},
    {"nan", std::nullopt},
    {"inf", std::nullopt},
    {"1e400", std::nullopt},
    {"0x10", std::nullopt},
    {"1,000", std::nullopt},
    {"2T2", std::nullopt},
    {"--2", std::nullopt},
};

TEST(ParseSi, AcceptsNumbersWithSiSuffixesAndRejectsEverythingElse) {
  for (const auto& c : kCases) {
    SCOPED_TRACE(std::string("text '") + c.text + "'");
    auto got = parse_si(c.text);
    ASSERT_EQ(got.has_value(), c.expected.has_value());
    if (c.expected) {
      EXPECT_EQ(*got, *c.expected);
    }
  }
}

TEST(ParseCount, BinarySuffixesArePowersOf1024AndDecimalOnesStayDecimal) {
  EXPECT_EQ(parse_count("4Mi"), 4.0 * 1024 * 1024);  // 4194304 = 2^22: 1024 sequences of 4096
  EXPECT_EQ(parse_count("4Mi"), 4194304.0);
  EXPECT_EQ(parse_count("1Ki"), 1024.0);
  EXPECT_EQ(parse_count("1.5Gi"), 1.5 * 1024 * 1024 * 1024);
  EXPECT_EQ(parse_count("2Ti"), 2.0 * 1024 * 1024 * 1024 * 1024);
  EXPECT_EQ(parse_count("1Pi"), std::ldexp(1.0, 50));
  EXPECT_EQ(parse_count(" 16 Mi "), 16.0 * 1024 * 1024);
  EXPECT_EQ(parse_count("4M"), 4e6);  // decimal, as parse_si reads it
  EXPECT_EQ(parse_count("2T"), 2e12);
  EXPECT_EQ(parse_count("4194304"), 4194304.0);
  for (const char* bad : {"4mi", "4Mib", "4MiB", "4i", "4ki", "4Bi", "4Xi", "Mi", "4M i"}) {
    EXPECT_FALSE(parse_count(bad)) << bad;
  }
  // Only counts take binary suffixes: parse_si (prices, budgets) stays decimal.
  EXPECT_FALSE(parse_si("4Mi"));
}

TEST(ParseSi, ResultsAreAlwaysFinite) {
  for (const char* t : {"1e308k", "9e307P", "1e-400"}) {
    auto v = parse_si(t);
    EXPECT_TRUE(!v || std::isfinite(*v)) << t;
  }
}

}  // namespace
}  // namespace capplan::data
