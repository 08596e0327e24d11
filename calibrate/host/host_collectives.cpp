// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>

#include "host_mpi.hpp"
#ifdef CAPPLAN_HAVE_MPI
#include <mpi.h>
#endif

namespace capplan::calib::host {

bool launched_by_mpi() {
  // Open MPI's mpirun, MPICH/Hydra and Slurm (PMI/PMIx) each export one of these to their ranks.
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"}) {
    if (std::getenv(var) != nullptr) return true;
  }
  return false;
}

#ifndef CAPPLAN_HAVE_MPI

Result<std::unique_ptr<MpiWorld>> MpiWorld::launch() { return std::unique_ptr<MpiWorld>{}; }
MpiWorld::~MpiWorld() = default;
std::vector<double> MpiWorld::max_over_ranks(std::vector<double> values) const { return values; }
void MpiWorld::barrier() const {}
Result<CollectiveRecord> MpiWorld::collective(sim::CollectiveKind, double, const RunOptions&) {
  return fail("collective", "capplan was built without MPI");
}

#else

namespace {

using Clock = std::chrono::steady_clock;

// One operation of `kind` over `count` floats (nccl-tests' buffer convention, see ops.hpp).
void run_once(sim::CollectiveKind kind, float* send, float* recv, int count, int rank, int size) {
  switch (kind) {
    case sim::CollectiveKind::all_reduce:
      MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      break;
    case sim::CollectiveKind::all_gather:  // count = gathered result; each rank gives count/size
      MPI_Allgather(send, count / size, MPI_FLOAT, recv, count / size, MPI_FLOAT, MPI_COMM_WORLD);
      break;
    case sim::CollectiveKind::reduce_scatter:  // count = input; each rank keeps count/size
      MPI_Reduce_scatter_block(send, recv, count / size, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      break;
    case sim::CollectiveKind::all_to_all:  // count = what each rank sends in total
      MPI_Alltoall(send, count / size, MPI_FLOAT, recv, count / size, MPI_FLOAT, MPI_COMM_WORLD);
      break;
    case sim::CollectiveKind::send_recv: {  // a ring of pairs: send to rank+1, receive from rank-1
      const int to = (rank + 1) % size, from = (rank + size - 1) % size;
      MPI_Sendrecv(send, count, MPI_FLOAT, to, 0, recv, count, MPI_FLOAT, from, 0, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
      break;
    }
  }
}

}  // namespace

Result<std::unique_ptr<MpiWorld>> MpiWorld::launch() {
  if (!launched_by_mpi()) return std::unique_ptr<MpiWorld>{};
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized != 0) return fail("mpi", "MPI is already initialised in this process");
  int provided = 0;
  // FUNNELED: only the main thread calls MPI (the host backend is single-threaded).
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    return fail("mpi", "MPI_Init_thread failed");
  }
  std::unique_ptr<MpiWorld> w(new MpiWorld());
  MPI_Comm_rank(MPI_COMM_WORLD, &w->rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &w->size_);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w->rank_, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &w->ranks_per_node_);
  MPI_Comm_free(&node);
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(version, &len);
  w->version_ = std::string(version, static_cast<std::size_t>(std::max(len, 0)));
  if (const auto cut = w->version_.find_first_of(",\n"); cut != std::string::npos) w->version_.resize(cut);
  return w;
}

MpiWorld::~MpiWorld() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized == 0) MPI_Finalize();
}

std::vector<double> MpiWorld::max_over_ranks(std::vector<double> values) const {
  std::vector<double> out(values.size());
  MPI_Allreduce(values.data(), out.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

void MpiWorld::barrier() const { MPI_Barrier(MPI_COMM_WORLD); }

Result<CollectiveRecord> MpiWorld::collective(sim::CollectiveKind kind, double bytes, const RunOptions& options) {
  if (size_ < 2) return fail("collective", "needs at least 2 MPI ranks; got 1");
  // Whole floats, divisible by the group size so every rank's share is equal.
  const double unit = 4.0 * (kind == sim::CollectiveKind::send_recv ? 1 : size_);
  const double max_count = 2147483647.0;  // MPI counts are int
  int count = static_cast<int>(std::min(max_count, std::max(1.0, std::round(bytes / unit))) *
                               (unit / 4.0));
  if (static_cast<double>(count) * 4.0 > 4.0 * max_count) return fail("collective", "message too large for MPI");
  send_.assign(static_cast<std::size_t>(count), 1.0f);
  recv_.assign(static_cast<std::size_t>(count), 0.0f);

  // Repetitions per sample so one sample lasts about 1 ms (small messages are a few us each);
  // decided from the slowest rank's warm-up so every rank runs the same number.
  auto timed = [&](int reps) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = Clock::now();
    for (int r = 0; r < reps; ++r) run_once(kind, send_.data(), recv_.data(), count, rank_, size_);
    const double t = std::chrono::duration<double>(Clock::now() - t0).count() / reps;
    return max_over_ranks({t})[0];
  };
  double warm = 0;
  for (int i = 0; i < std::max(options.warmup, 1); ++i) warm = timed(1);
  const int reps = static_cast<int>(std::clamp(1e-3 / std::max(warm, 1e-9), 1.0, 1000.0));
  std::vector<double> samples;
  const auto start = Clock::now();
  for (int i = 0; i < std::max(options.iterations, 1); ++i) {
    samples.push_back(timed(reps));
    // The same decision on every rank: rank 0's clock, broadcast.
    int stop = std::chrono::duration<double>(Clock::now() - start).count() > options.max_seconds_per_case ? 1 : 0;
    MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (stop != 0) break;
  }

  CollectiveRecord r;
  r.kind = kind;
  r.bytes = static_cast<double>(count) * 4.0;
  r.ranks = size_;
  r.ranks_per_node = ranks_per_node_;
  r.nodes = std::max(1, size_ / std::max(ranks_per_node_, 1));
  r.tier = r.nodes > 1 ? "network" : "host-shm";
  r.time = summarize(samples);
  r.algbw_Bps = r.bytes / r.time.median_s;
  r.busbw_Bps = r.algbw_Bps * bus_factor(kind, size_);
  return r;
}

#endif

}  // namespace capplan::calib::host
