// SPDX-License-Identifier: Apache-2.0
#include "backends.hpp"

#include <cmath>
#include <cstdio>

#include "capplan/calibrate/host_backend.hpp"
#ifdef CAPPLAN_HAVE_CUDA
#include "cuda_backend.hpp"
#endif

namespace capplan::cli {

OpenedBackend open_backend(const std::string& name) {
  OpenedBackend out;
  if (name == "host") {
    auto b = calib::make_host_backend();
    if (!b) {
      print_diagnostics(b.error());
      out.exit = Exit::infeasible;
      return out;
    }
    out.backend = std::move(*b);
    return out;
  }
  if (name == "cuda") {
#ifdef CAPPLAN_HAVE_CUDA
    auto b = calib::make_cuda_backend();
    if (!b) {
      // make_cuda_backend's Diagnostic starts with "no CUDA device found" when there is none.
      for (const auto& d : b.error()) print_error(d.message);
      out.exit = Exit::infeasible;
      return out;
    }
    out.backend = std::move(*b);
    return out;
#else
    print_error("--backend cuda: capplan was built without CUDA (configure with -DCAPPLAN_CUDA=ON on a machine "
                "with the CUDA toolkit); use --backend host");
    out.exit = Exit::invalid_input;
    return out;
#endif
  }
  print_error("--backend: must be host or cuda; got '" + name + "'");
  out.exit = Exit::invalid_input;
  return out;
}

std::string clock_text(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) seconds = 0;
  const long s = std::lround(seconds);
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  }
  return buf;
}

}  // namespace capplan::cli
