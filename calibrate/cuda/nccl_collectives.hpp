// SPDX-License-Identifier: Apache-2.0
#pragma once
// NCCL collectives for the CUDA backend (compiled only with NCCL, CAPPLAN_HAVE_NCCL).
// Two layouts, as nccl-tests runs them:
//  - one process driving every local GPU: ncclCommInitAll, one stream per GPU, each operation
//    enqueued on all GPUs inside ncclGroupStart/End;
//  - one process per GPU under an MPI launcher (`mpirun -np N capplan calibrate --backend cuda`):
//    rank 0's ncclGetUniqueId is broadcast with MPI, then ncclCommInitRank (needs a build with MPI,
//    CAPPLAN_CUDA_WITH_MPI).
// Contract: every rank calls run() with the same arguments in the same order. Times are per
// iteration, the max over GPUs/ranks (nccl-tests reports the slowest rank); algbw = bytes / time,
// busbw = algbw * bus_factor(kind, ranks); iterations run back to back as in nccl-tests. Reductions are fp32 sums; `bytes` is rounded down to a
// multiple of 4 * ranks and the record holds the bytes actually moved.
#include <memory>
#include <string>
#include <vector>

#include "capplan/calibrate/backend.hpp"
#include "capplan/sim/workload/result.hpp"

namespace capplan::calib::cuda {

// Where this process sits: MPI rank/size (1 process when not launched by an MPI launcher or
// built without MPI) and its rank among the processes of its node.
struct ProcessLayout {
  int rank = 0, size = 1, local_rank = 0, local_size = 1;
  bool mpi = false;                   // MPI is in use (size may still be 1)
  bool mpi_initialized_here = false;  // we called MPI_Init, so we finalise
};
Result<ProcessLayout> detect_process_layout();
void finish_process_layout(const ProcessLayout& layout);

class NcclCollectives {
 public:
  // Single process over `devices`, or (layout.size > 1) one rank per process on `device`.
  static Result<std::unique_ptr<NcclCollectives>> create(const ProcessLayout& layout, const std::vector<int>& devices);
  ~NcclCollectives();
  NcclCollectives(const NcclCollectives&) = delete;
  NcclCollectives& operator=(const NcclCollectives&) = delete;

  Result<CollectiveRecord> run(sim::CollectiveKind kind, double bytes, const RunOptions& options);
  int ranks() const;  // communicator size (GPUs)
  std::string tier() const;

  struct Impl;

 private:
  explicit NcclCollectives(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

std::string nccl_version();         // of the library loaded at run time (ncclGetVersion): "2.28.9"
std::string nccl_header_version();  // of the nccl.h this build was compiled with

// versions["nccl_alltoall"] of the context: which all-to-all this process runs
// (nccl_alltoall.hpp's alltoall_path(): "native" or "grouped send/recv").
std::string alltoall_path_text();

}  // namespace capplan::calib::cuda
