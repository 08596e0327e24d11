// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "capplan/calibrate/records.hpp"

namespace capplan::calib {
namespace {

TEST(Records, BusFactorFollowsNcclTests) { EXPECT_DOUBLE_EQ(bus_factor(sim::CollectiveKind::all_reduce, 4), 1.5); }

}  // namespace
}  // namespace capplan::calib
