// SPDX-License-Identifier: Apache-2.0
#pragma once
// The host measurement backend: real measurements on the CPU. GEMMs with Eigen (fp32; bf16 and
// fp16 through Eigen::bfloat16 / Eigen::half, which Eigen computes by converting to fp32 in its
// kernels), memory bandwidth with plain loops over buffers larger than the caches, collectives with
// MPI when the process was started by mpirun, and a transformer layer forward + backward in Eigen.
// Contract: MPI is initialised (MPI_Init_thread, FUNNELED) only when the process was launched by
// an MPI launcher (OMPI_COMM_WORLD_SIZE / PMI_SIZE / PMIX_RANK in the environment) and finalised
// when the backend is destroyed; at most one host backend with MPI per process.
#include <memory>

#include "capplan/calibrate/backend.hpp"
#include "capplan/sim/workload/result.hpp"

namespace capplan::calib {

struct HostBackendOptions {
  bool use_mpi = true;  // false: never touch MPI (unit tests)
};

Result<std::unique_ptr<MeasurementBackend>> make_host_backend(const HostBackendOptions& options = {});

// True when this build has MPI support compiled in.
bool host_backend_has_mpi();

}  // namespace capplan::calib
