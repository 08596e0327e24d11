// SPDX-License-Identifier: Apache-2.0
// Checks shared by the host and CUDA backend tests of a measured training step.
#pragma once
#include <gtest/gtest.h>

#include "capplan/calibrate/records.hpp"

namespace capplan::calib::test {

// Every component a training step reports ("gemm", "attention", "memory") is there and positive
// (a failure names the one that is not); returns their sum.
inline double expect_positive_components(const StepRecord& r) {
  double sum = 0.0;
  for (const char* c : {"gemm", "attention", "memory"}) {
    const auto it = r.components_s.find(c);
    if (it == r.components_s.end()) {
      ADD_FAILURE() << "no component " << c;
      continue;
    }
    EXPECT_GT(it->second, 0.0) << c;
    sum += it->second;
  }
  return sum;
}

}  // namespace capplan::calib::test
