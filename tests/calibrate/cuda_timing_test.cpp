// SPDX-License-Identifier: Apache-2.0
// Host-side logic of the CUDA backend's timing and device state, checked without a GPU: how timed
// iterations are queued behind the spin kernel (timing_plan.hpp), how NVML's throttle reasons read,
// and that a machine without libnvidia-ml.so.1 (or without a device NVML knows) gets empty state
// and a reason, not a failure.
#include <gtest/gtest.h>

#include <cmath>

#include "nvml_device_state.hpp"
#include "timing_plan.hpp"

namespace capplan::calib::cuda {
namespace {

// A host that enqueues an iteration in 1 us: 100 iterations of 4 launches fit one batch (400 <= 512
// queued launches; 2 x 100 x 1 us = 0.2 ms of enqueueing), and the spin is its 1 ms floor.
TEST(CudaTimingPlan, AFastHostQueuesEverythingBehindTheShortestSpin) {
  const QueuePlan q = plan_queue(100, 1e-6, 4);
  EXPECT_EQ(q.per_batch, 100);
  EXPECT_DOUBLE_EQ(q.spin_s, kMinSpinS);
}

// 100 us per iteration, 1000 iterations of 4 launches: a batch holds 512 / 4 = 128 iterations (the
// launch queue's bound, before the spin's 0.2 s / (2 x 100 us) = 1000), and its spin is twice their
// enqueueing, 2 x 128 x 100 us = 25.6 ms.
TEST(CudaTimingPlan, ABatchHoldsNoMoreLaunchesThanTheQueueAndSpinsTwiceItsEnqueueTime) {
  const QueuePlan q = plan_queue(1000, 100e-6, 4);
  EXPECT_EQ(q.per_batch, kMaxQueuedLaunches / 4);
  EXPECT_NEAR(q.spin_s, 2.0 * 128 * 100e-6, 1e-12);
}

// 1 ms per iteration of 10 launches: the spin bound (0.2 s / (2 x 1 ms) = 100 iterations) comes
// before the queue's (51); a 0.5 s iteration is one per batch behind the longest spin.
TEST(CudaTimingPlan, ASlowHostGetsSmallerBatchesAndTheSpinIsCapped) {
  EXPECT_EQ(plan_queue(1000, 1e-3, 10).per_batch, kMaxQueuedLaunches / 10);
  const QueuePlan q = plan_queue(1000, 1e-3, 1);
  EXPECT_EQ(q.per_batch, 100);
  EXPECT_NEAR(q.spin_s, kMaxSpinS, 1e-12);
  const QueuePlan slow = plan_queue(10, 0.5, 4);
  EXPECT_EQ(slow.per_batch, 1);
  EXPECT_DOUBLE_EQ(slow.spin_s, kMaxSpinS);
}

// Estimates that are not times (none measured: infinity; a clock glitch: negative) and counts below
// one still give a usable plan: at least one iteration per batch, a spin within its bounds.
TEST(CudaTimingPlan, DegenerateInputsStillGiveABoundedPlan) {
  for (const double host : {double{INFINITY}, -1.0, double{NAN}, 0.0}) {
    const QueuePlan q = plan_queue(0, host, 0);
    EXPECT_EQ(q.per_batch, 1) << host;
    EXPECT_GE(q.spin_s, kMinSpinS) << host;
    EXPECT_LE(q.spin_s, kMaxSpinS) << host;
  }
  EXPECT_EQ(plan_queue(7, 0.0, 1).per_batch, 7);
}

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
