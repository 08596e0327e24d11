// SPDX-License-Identifier: Apache-2.0
// Host-side logic of the CUDA backend's device state, checked without a GPU: how NVML's throttle
// reasons read, and that a machine without libnvidia-ml.so.1 (or without a device NVML knows) gets
// empty state and a reason, not a failure.
#include <gtest/gtest.h>

#include "nvml_device_state.hpp"

namespace capplan::calib::cuda {
namespace {

// nvml.h's nvmlClocksEventReason bits: 0x1 gpu_idle, 0x4 sw_power_cap, 0x40 hw_thermal_slowdown, ...
TEST(CudaDeviceState, ThrottleReasonsReadAsNamesInBitOrder) {
  EXPECT_EQ(throttle_reasons_text(0), "none");
  EXPECT_EQ(throttle_reasons_text(0x1), "gpu_idle");
  EXPECT_EQ(throttle_reasons_text(0x4 | 0x40), "sw_power_cap, hw_thermal_slowdown");
  EXPECT_EQ(throttle_reasons_text(0x8 | 0x80 | 0x100), "hw_slowdown, hw_power_brake_slowdown, display_clock_setting");
  EXPECT_EQ(throttle_reasons_text(0x20 | 0x1000), "sw_thermal_slowdown, 0x1000");  // a bit named later
}

// Without libnvidia-ml.so.1 (a build machine) or for a bus id no GPU has, the state is unavailable,
// says why, and every read is empty: the context simply has no clocks.
TEST(CudaDeviceState, WithoutNvmlOrAKnownDeviceTheStateIsEmptyAndSaysWhy) {
  const NvmlDeviceState state("ffff:ff:1f.7");
  EXPECT_FALSE(state.available());
  EXPECT_FALSE(state.why().empty());
  EXPECT_TRUE(state.read().empty());
  EXPECT_TRUE(state.driver_version().empty());
}

}  // namespace
}  // namespace capplan::calib::cuda
