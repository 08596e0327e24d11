// SPDX-License-Identifier: Apache-2.0
// The shared number formats (capplan/data/format.hpp) that people read: token counts as
// practitioners write them, and times in the unit their size asks for.
#include <gtest/gtest.h>

#include <limits>

#include "capplan/data/format.hpp"

namespace capplan::data::format {
namespace {

TEST(FormatTokens, BillionsAreBAndThreeDigitsAtMost) {
  EXPECT_EQ(tokens(2e12), "2T");
  EXPECT_EQ(tokens(15.6e12), "15.6T");
  EXPECT_EQ(tokens(100e9), "100B");
  EXPECT_EQ(tokens(2e9), "2B");
  EXPECT_EQ(tokens(4194304), "4.19M");
  EXPECT_EQ(tokens(512e3), "512k");
  EXPECT_EQ(tokens(999), "999");
  EXPECT_EQ(tokens(std::numeric_limits<double>::quiet_NaN()), "n/a");
}

TEST(FormatCount, WholeCountsAreJsonIntegers) {
  EXPECT_TRUE(count(476838.0).is_number_integer());
  EXPECT_EQ(count(476838.0).dump(), "476838");
  EXPECT_TRUE(count(0.5).is_number_float());  // not a count: kept as the number it is
  EXPECT_TRUE(count(1e300).is_number_float());  // beyond 2^53 an integer would not be exact
  EXPECT_TRUE(count(std::numeric_limits<double>::infinity()).is_null());
}

TEST(FormatDuration, DaysFromTwoDaysHoursBelowMinutesBelowAnHour) {
  EXPECT_STREQ(duration_unit(33.4).name, "days");
  EXPECT_EQ(duration(33.44, duration_unit(33.44)), "33.4");
  EXPECT_EQ(duration(1234.4, duration_unit(1234.4)), "1,234");
  EXPECT_STREQ(duration_unit(2.0).name, "days");
  const DurationUnit h = duration_unit(1.5);
  EXPECT_STREQ(h.name, "hours");
  EXPECT_EQ(duration(1.5, h), "36.0");
  const DurationUnit m = duration_unit(0.5 / 24.0);
  EXPECT_STREQ(m.name, "minutes");
  EXPECT_EQ(duration(0.5 / 24.0, m), "30.0");
  // A band around a point is written in the point's unit, whatever its ends are.
  EXPECT_EQ(duration(2.5, h), "60.0");
  EXPECT_STREQ(duration_unit(std::numeric_limits<double>::infinity()).name, "days");
}

}  // namespace
}  // namespace capplan::data::format
