// SPDX-License-Identifier: Apache-2.0
// `capplan calibrate` and `capplan validate` run in capplan-calibrate, a program of their own that
// lies next to capplan: it links the measurement backends (host: Eigen + MPI; cuda: CUDA runtime,
// cuBLASLt, NCCL), so that capplan itself loads none of them and `capplan estimate` starts in a
// few milliseconds. capplan declares the two commands' flags too, so its --help and its
// flag errors are unchanged.
#pragma once

namespace capplan::cli {

// The file name of the measurement program, looked for in the folder of the running capplan.
inline constexpr const char* kCalibrateProgram = "capplan-calibrate";

// Replaces this process with capplan-calibrate, given the same arguments (execv): its standard
// streams, exit code and signals (Ctrl-C, mpirun's) are then the command's own, and under mpirun
// each rank stays the process the launcher started. Returns only when that is impossible, after
// printing why: 2 when the program is missing (a build or an install without it), 1 otherwise.
int run_in_calibrate_program(int argc, char** argv);

}  // namespace capplan::cli
