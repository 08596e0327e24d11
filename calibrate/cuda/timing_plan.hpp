// SPDX-License-Identifier: Apache-2.0
#pragma once
// How the CUDA backend queues timed work behind a spin kernel (kernels.hpp, capplan_spin), so that
// cudaEvents time the device and not the host. A stream that starts idle runs each launch as soon
// as the host enqueues it: a kernel shorter than its own enqueue then times the host's launch rate.
// nvbench blocks the stream with a kernel while it enqueues the measured launches
// (nvbench/blocking_kernel.cuh); this backend spins for a fixed time instead, long enough for the
// host to enqueue a batch of timed iterations: twice the host's measured enqueue time of the batch,
// at least kMinSpinS, at most kMaxSpinS. A batch also holds at most kMaxQueuedLaunches launches and
// event records, below the depth of the driver's launch queue (a host that blocks on a full queue
// would stop enqueueing ahead of the GPU). Longer runs are several batches, each behind its own spin.
// Pure C++ (no CUDA headers), so it is unit-tested without a GPU.

namespace capplan::calib::cuda {

inline constexpr double kMinSpinS = 1e-3;
inline constexpr double kMaxSpinS = 0.2;
inline constexpr int kMaxQueuedLaunches = 512;

struct QueuePlan {
  int per_batch = 1;   // timed iterations queued behind one spin (1..iterations)
  double spin_s = 0;   // how long each spin holds the stream
};

// Contract: iterations >= 1 (less is taken as 1); host_s_per_iteration is the host's time to
// enqueue one iteration (launches and event records), measured during the warm-up; a non-finite or
// negative estimate is taken as 0; launches_per_iteration >= 1 (less is taken as 1).
QueuePlan plan_queue(int iterations, double host_s_per_iteration, int launches_per_iteration);

}  // namespace capplan::calib::cuda
