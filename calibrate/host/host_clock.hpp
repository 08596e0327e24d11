// SPDX-License-Identifier: Apache-2.0
#pragma once
// The host backend's timer for single-threaded kernels: this thread's CPU time
// (CLOCK_THREAD_CPUTIME_ID, nanosecond resolution). It excludes the time the OS gives to other
// processes, so GEMM, memory and training-step times stay reproducible on a shared machine; on an
// idle machine it equals the wall time of these kernels (they neither sleep nor wait for I/O).
// Collectives wait on other ranks and are timed by the wall clock instead (host_collectives.cpp).
#include <time.h>

namespace capplan::calib::host {

inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace capplan::calib::host
