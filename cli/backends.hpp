// SPDX-License-Identifier: Apache-2.0
// Private helper of the calibrate and validate commands: opens a measurement backend by name and
// maps "cannot" to the exit codes of CONTRACT.md (2: asked for something this build lacks; 3: a
// valid request this machine cannot run, e.g. no CUDA device).
#pragma once
#include <memory>
#include <string>

#include "capplan/calibrate/backend.hpp"
#include "io.hpp"

namespace capplan::cli {

struct OpenedBackend {
  std::unique_ptr<calib::MeasurementBackend> backend;  // null on failure (already reported)
  Exit exit = Exit::ok;
};

// "host" or "cuda". The host backend initialises MPI when launched by mpirun (and finalises it
// when destroyed), so only these commands ever touch MPI.
OpenedBackend open_backend(const std::string& name);

// "m:ss" / "h:mm:ss" for progress lines.
std::string clock_text(double seconds);

}  // namespace capplan::cli
