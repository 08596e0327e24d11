// SPDX-License-Identifier: Apache-2.0
// Strong unit types: the named helpers fix decimal vs binary prefixes and the base units, and
// arithmetic across dimensions yields the right dimension.
#include <gtest/gtest.h>

#include <type_traits>

#include "capplan/sim/units.hpp"

namespace capplan::units {
namespace {

// Every conversion below is a product of exact binary/decimal constants (2^30, 1e9, 1e12, 8,
// 3600) that double represents exactly or within one rounding; relative 1e-15 allows that
// single rounding and nothing more.
constexpr double kRoundOff = 1e-15;

TEST(Units, GibIsTwoToTheThirtyBytes) {
  EXPECT_EQ(gib(1).base(), 1024.0 * 1024.0 * 1024.0);
  EXPECT_EQ(gib(80).base(), 80.0 * 1073741824.0);
}

TEST(Units, GbIsTenToTheNineBytes) {
  EXPECT_EQ(gb(1).base(), 1e9);
  EXPECT_EQ(bytes(1e9), gb(1));
}

TEST(Units, GibAndGbDifferByTwoToTheThirtyOverTenToTheNine) {
  // 80 GiB = 85.899 GB: the binary unit is 7.37% larger than the decimal one.
  EXPECT_NEAR(gib(80) / gb(80), 1073741824.0 / 1e9, kRoundOff);
  EXPECT_GT(gib(1), gb(1));
  EXPECT_DOUBLE_EQ(to_gib(gib(80)), 80.0);
}

TEST(Units, GbitPerSecondIsOneEighthOfGbPerSecond) {
  // 200 Gbit/s (an HDR InfiniBand port) carries 25 GB/s.
  EXPECT_EQ(gbit_per_s(200).base(), 200e9 / 8.0);
  EXPECT_EQ(gbit_per_s(200), gb_per_s(25));
  EXPECT_EQ(gb_per_s(1).base(), 1e9);
}

TEST(Units, FlopsOverFlopsPerSecondIsSeconds) {
  // 2*8192^3 FLOPs at 989.4 TFLOP/s: 1.111 ms.
  const auto t = flops(2.0 * 8192.0 * 8192.0 * 8192.0) / tflop_per_s(989.4);
  static_assert(std::is_same_v<decltype(t), const Seconds>);
  EXPECT_NEAR(t.base(), 2.0 * 8192.0 * 8192.0 * 8192.0 / 989.4e12, kRoundOff * t.base());
}

TEST(Units, BytesOverBytesPerSecondIsSeconds) {
  const auto t = gb(80) / gb_per_s(2039);
  static_assert(std::is_same_v<decltype(t), const Seconds>);
  EXPECT_NEAR(t.base(), 80.0 / 2039.0, kRoundOff);
}

TEST(Units, SameDimensionDivisionIsAPlainDouble) {
  const auto r = seconds(3) / seconds(4);
  static_assert(std::is_same_v<decltype(r), const double>);
  EXPECT_EQ(r, 0.75);
  const auto bw_ratio = gb_per_s(233) / gb_per_s(300);
  static_assert(std::is_same_v<decltype(bw_ratio), const double>);
  EXPECT_NEAR(bw_ratio, 233.0 / 300.0, kRoundOff);
}

TEST(Units, UsdPerHourTimesSecondsIsUsd) {
  // $2.50 per GPU-hour for 90 minutes = $3.75.
  const auto cost = usd_per_hour(2.5) * seconds(5400);
  static_assert(std::is_same_v<decltype(cost), const Usd>);
  EXPECT_NEAR(cost.base(), 2.5 / 3600.0 * 5400.0, kRoundOff * 3.75);
  EXPECT_NEAR(cost.base(), 3.75, kRoundOff * 3.75);
  EXPECT_NEAR(to_usd_per_hour(usd_per_hour(2.5)), 2.5, kRoundOff * 2.5);
}

TEST(Units, TimeHelpersUseSiSeconds) {
  EXPECT_EQ(hours(2).base(), 7200.0);
  EXPECT_NEAR(microseconds(3).base(), 3e-6, kRoundOff * 3e-6);
  EXPECT_EQ(to_hours(hours(5)), 5.0);
  EXPECT_EQ(to_days(hours(48)), 2.0);
}

TEST(Units, TflopPerSecondIsTenToTheTwelveFlopsPerSecond) {
  EXPECT_EQ(tflop_per_s(312).base(), 312e12);
  EXPECT_EQ(to_tflop_per_s(tflop_per_s(312)), 312.0);
}

TEST(Units, ArithmeticKeepsTheDimension) {
  Bytes b = gb(1) + gb(2);
  b -= gb(1);
  b += gb(0.5);
  EXPECT_EQ(b, gb(2.5));
  EXPECT_EQ((gb(3) - gb(1)).base(), 2e9);
  EXPECT_EQ((gb(2) * 3.0).base(), 6e9);
  EXPECT_EQ((3.0 * gb(2)).base(), 6e9);
  EXPECT_EQ((gb(6) / 3.0).base(), 2e9);
  EXPECT_LT(gb(1), gb(2));
  static_assert(std::is_same_v<decltype(gb_per_s(1) * seconds(1)), Bytes>);
  static_assert(std::is_same_v<decltype(tflop_per_s(1) * seconds(1)), Flops>);
  static_assert(std::is_same_v<decltype(usd(1) / seconds(1)), UsdPerSecond>);
}

TEST(Units, DefaultQuantityIsZero) {
  EXPECT_EQ(Seconds{}.base(), 0.0);
  EXPECT_EQ(Bytes{}.base(), 0.0);
}

}  // namespace
}  // namespace capplan::units
