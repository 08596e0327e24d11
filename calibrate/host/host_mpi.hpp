// SPDX-License-Identifier: Apache-2.0
#pragma once
// MPI for the host backend: the world communicator when the process was started by an MPI
// launcher, with collectives timed the way nccl-tests times them (barrier, then back-to-back
// operations, each sample the max over ranks).
// Contract: only the host backend uses this; MPI_Init_thread happens in launch() and
// MPI_Finalize in the destructor; without MPI support compiled in, launch() returns nullptr.
#include <memory>
#include <string>
#include <vector>

#include "capplan/calibrate/backend.hpp"

namespace capplan::calib::host {

// True when an MPI launcher (mpirun/mpiexec/srun with PMI) started this process.
bool launched_by_mpi();

class MpiWorld {
 public:
  // nullptr when not launched by MPI or when MPI is not compiled in; an error when MPI fails to start.
  static Result<std::unique_ptr<MpiWorld>> launch();
  ~MpiWorld();
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int ranks_per_node() const { return ranks_per_node_; }
  std::string library_version() const { return version_; }

  // Element-wise max over ranks (every rank gets the result).
  std::vector<double> max_over_ranks(std::vector<double> values) const;
  void barrier() const;
  Result<CollectiveRecord> collective(sim::CollectiveKind kind, double bytes, const RunOptions& options);

 private:
  MpiWorld() = default;
  int rank_ = 0, size_ = 1, ranks_per_node_ = 1;
  std::string version_;
  std::vector<float> send_, recv_;
};

}  // namespace capplan::calib::host
