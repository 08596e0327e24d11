// SPDX-License-Identifier: Apache-2.0
#include "nccl_collectives.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nccl.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "cuda_util.hpp"
#include "kernels.hpp"
#include "nccl_alltoall.hpp"

#ifdef CAPPLAN_CUDA_WITH_MPI
#include <mpi.h>
#endif

namespace capplan::calib::cuda {
namespace {

Status nccl_check(ncclResult_t r, const std::string& what) {
  if (r == ncclSuccess) return {};
  return fail("nccl/" + what, std::string(ncclGetErrorString(r)) + " (ncclResult_t " + std::to_string(r) + ")");
}

const char* kind_name(sim::CollectiveKind k) { return sim::to_string(k); }

// NCCL_VERSION_CODE of 2.28.0 (nccl.h's NCCL_VERSION(2, 28, 0); spelled out for headers without it).
constexpr int kNcclAlltoAllVersion = 22800;

#if defined(NCCL_VERSION_CODE) && NCCL_VERSION_CODE >= 22800
#define CAPPLAN_NCCL_HEADERS_DECLARE_ALLTOALL 1
// decltype does not odr-use ncclAlltoAll: the binary has no reference to it and starts with an
// older libnccl.so.2.
using AlltoAllFn = decltype(&ncclAlltoAll);

// The loaded library's ncclAlltoAll, or nullptr (older than 2.28, or not exported). Resolved once
// per process (the library cannot change under it), so a timed all-to-all pays no dlsym.
AlltoAllFn native_alltoall() {
  static const AlltoAllFn resolved = [] {
    int v = 0;
    AlltoAllFn fn = nullptr;
    if (ncclGetVersion(&v) != ncclSuccess || v < kNcclAlltoAllVersion) return fn;
    void* p = dlsym(RTLD_DEFAULT, "ncclAlltoAll");
    static_assert(sizeof(fn) == sizeof(p));
    std::memcpy(&fn, &p, sizeof fn);
    return fn;
  }();
  return resolved;
}
#endif

std::size_t element_bytes(ncclDataType_t t) {
  switch (t) {
    case ncclInt8:
    case ncclUint8: return 1;
    case ncclFloat16:
    case ncclBfloat16: return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32: return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64: return 8;
    default: return 0;
  }
}

struct DeviceState {
  int device = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  DeviceBuffer send, recv;
  EventTimer timer;
};

}  // namespace

Result<ProcessLayout> detect_process_layout() {
  ProcessLayout layout;
#ifdef CAPPLAN_CUDA_WITH_MPI
  int initialized = 0;
  MPI_Initialized(&initialized);
  const bool launched = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
                        std::getenv("PMIX_RANK") != nullptr;
  if (initialized == 0 && !launched) return layout;
  if (initialized == 0) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
      return fail("mpi", "MPI_Init_thread failed");
    }
    layout.mpi_initialized_here = true;
  }
  layout.mpi = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &layout.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &layout.size);
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, layout.rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &layout.local_rank);
  MPI_Comm_size(node, &layout.local_size);
  MPI_Comm_free(&node);
#endif
  return layout;
}

void finish_process_layout(const ProcessLayout& layout) {
#ifdef CAPPLAN_CUDA_WITH_MPI
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (layout.mpi_initialized_here && finalized == 0) MPI_Finalize();
#else
  (void)layout;
#endif
}

const char* to_string(AlltoallPath path) {
  return path == AlltoallPath::native ? "native" : "grouped send/recv";
}

AlltoallPath alltoall_path() {
#ifdef CAPPLAN_NCCL_HEADERS_DECLARE_ALLTOALL
  if (native_alltoall() != nullptr) return AlltoallPath::native;
#endif
  return AlltoallPath::grouped_send_recv;
}

ncclResult_t all_to_all(const void* send, void* recv, std::size_t count_per_rank, ncclDataType_t type,
                        ncclComm_t comm, cudaStream_t stream, AlltoallPath path) {
  if (path == AlltoallPath::native) {
#ifdef CAPPLAN_NCCL_HEADERS_DECLARE_ALLTOALL
    if (const AlltoAllFn fn = native_alltoall(); fn != nullptr) return fn(send, recv, count_per_rank, type, comm, stream);
#endif
    return ncclInvalidUsage;
  }
  if (element_bytes(type) == 0) return ncclInvalidArgument;
  const std::size_t chunk = count_per_rank * element_bytes(type);
  int ranks = 0;
  if (const ncclResult_t r = ncclCommCount(comm, &ranks); r != ncclSuccess) return r;
  if (const ncclResult_t r = ncclGroupStart(); r != ncclSuccess) return r;
  for (int peer = 0; peer < ranks; ++peer) {
    const auto offset = static_cast<std::size_t>(peer) * chunk;
    ncclResult_t r = ncclSend(static_cast<const char*>(send) + offset, count_per_rank, type, peer, comm, stream);
    if (r == ncclSuccess) r = ncclRecv(static_cast<char*>(recv) + offset, count_per_rank, type, peer, comm, stream);
    if (r != ncclSuccess) {
      (void)ncclGroupEnd();
      return r;
    }
  }
  return ncclGroupEnd();
}

std::string alltoall_path_text() { return to_string(alltoall_path()); }

std::string nccl_header_version() {
  return std::to_string(NCCL_MAJOR) + "." + std::to_string(NCCL_MINOR) + "." + std::to_string(NCCL_PATCH);
}

std::string nccl_version() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "unknown";
  // NCCL_VERSION(X,Y,Z) = X*10000 + Y*100 + Z since 2.9.
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
}

struct NcclCollectives::Impl {
  ProcessLayout layout;
  std::vector<DeviceState> local;  // GPUs this process drives
  int nranks = 1;
  std::string tier = "nvlink";
  AlltoallPath alltoall = AlltoallPath::grouped_send_recv;

  ~Impl() {
    for (auto& d : local) {
      if (d.comm != nullptr) (void)ncclCommDestroy(d.comm);
      if (d.stream != nullptr) {
        (void)cudaSetDevice(d.device);
        (void)cudaStreamDestroy(d.stream);
      }
    }
  }

  // Grows the per-GPU buffers to at least the given sizes; new send data is random.
  Status ensure_buffers(std::size_t send_bytes, std::size_t recv_bytes) {
    for (auto& d : local) {
      if (auto s = check(cudaSetDevice(d.device), "cudaSetDevice"); !s) return s;
      if (d.send.bytes() < send_bytes) {
        d.send = DeviceBuffer{};
        auto b = DeviceBuffer::allocate(send_bytes, "nccl send buffer");
        if (!b) return std::unexpected(b.error());
        d.send = std::move(*b);
        if (auto s = check(capplan_fill_uniform(d.send.get(), capplan_f32, d.send.bytes() / 4, 1234u + d.device, -1.0f,
                                                1.0f, d.stream),
                           "fill");
            !s) {
          return s;
        }
      }
      if (d.recv.bytes() < recv_bytes) {
        d.recv = DeviceBuffer{};
        auto b = DeviceBuffer::allocate(recv_bytes, "nccl receive buffer");
        if (!b) return std::unexpected(b.error());
        d.recv = std::move(*b);
      }
    }
    return {};
  }

  Status enqueue(sim::CollectiveKind kind, std::size_t bytes) {
    const auto n = static_cast<std::size_t>(nranks);
    const std::size_t count = bytes / 4;
    if (auto s = nccl_check(ncclGroupStart(), "ncclGroupStart"); !s) return s;
    for (auto& d : local) {
      int r = 0;
      (void)ncclCommUserRank(d.comm, &r);
      ncclResult_t res = ncclSuccess;
      switch (kind) {
        case sim::CollectiveKind::all_reduce:
          res = ncclAllReduce(d.send.get(), d.recv.get(), count, ncclFloat, ncclSum, d.comm, d.stream);
          break;
        case sim::CollectiveKind::all_gather:
          res = ncclAllGather(d.send.get(), d.recv.get(), count / n, ncclFloat, d.comm, d.stream);
          break;
        case sim::CollectiveKind::reduce_scatter:
          res = ncclReduceScatter(d.send.get(), d.recv.get(), count / n, ncclFloat, ncclSum, d.comm, d.stream);
          break;
        case sim::CollectiveKind::all_to_all:
          res = all_to_all(d.send.get(), d.recv.get(), count / n, ncclFloat, d.comm, d.stream, alltoall);
          break;
        case sim::CollectiveKind::send_recv: {  // ring: send to the next rank, receive from the previous
          const int next = (r + 1) % nranks, prev = (r - 1 + nranks) % nranks;
          res = ncclSend(d.send.get(), count, ncclFloat, next, d.comm, d.stream);
          if (res == ncclSuccess) res = ncclRecv(d.recv.get(), count, ncclFloat, prev, d.comm, d.stream);
          break;
        }
      }
      if (res != ncclSuccess) {
        (void)ncclGroupEnd();
        return nccl_check(res, kind_name(kind));
      }
    }
    return nccl_check(ncclGroupEnd(), "ncclGroupEnd");
  }
};

NcclCollectives::NcclCollectives(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
NcclCollectives::~NcclCollectives() = default;
int NcclCollectives::ranks() const { return impl_->nranks; }
std::string NcclCollectives::tier() const { return impl_->tier; }

Result<std::unique_ptr<NcclCollectives>> NcclCollectives::create(const ProcessLayout& layout,
                                                                 const std::vector<int>& devices) {
  auto impl = std::make_unique<Impl>();
  impl->layout = layout;
  impl->alltoall = alltoall_path();
  if (devices.empty()) return fail("nccl", "no devices given");
  const std::vector<int> mine = layout.size > 1 ? std::vector<int>{devices.front()} : devices;
  for (int dev : mine) {
    DeviceState d;
    d.device = dev;
    if (auto s = check(cudaSetDevice(dev), "cudaSetDevice"); !s) return std::unexpected(s.error());
    if (auto s = check(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking), "cudaStreamCreate"); !s) {
      return std::unexpected(s.error());
    }
    auto t = EventTimer::create();
    if (!t) return std::unexpected(t.error());
    d.timer = std::move(*t);
    impl->local.push_back(std::move(d));
  }
  if (layout.size > 1) {
#ifdef CAPPLAN_CUDA_WITH_MPI
    ncclUniqueId id{};
    if (layout.rank == 0) {
      if (auto s = nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId"); !s) return std::unexpected(s.error());
    }
    MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
    (void)cudaSetDevice(mine.front());
    if (auto s = nccl_check(ncclCommInitRank(&impl->local.front().comm, layout.size, id, layout.rank),
                            "ncclCommInitRank");
        !s) {
      return std::unexpected(s.error());
    }
    impl->nranks = layout.size;
    const int nodes = std::max(1, layout.size / std::max(1, layout.local_size));
    impl->tier = nodes > 1 ? "network" : "nvlink";
#else
    return fail("nccl", "started by an MPI launcher with " + std::to_string(layout.size) +
                            " processes, but this build has no MPI support (configure with MPI found)");
#endif
  } else {
    std::vector<ncclComm_t> comms(mine.size(), nullptr);
    if (auto s = nccl_check(ncclCommInitAll(comms.data(), static_cast<int>(mine.size()), mine.data()),
                            "ncclCommInitAll");
        !s) {
      return std::unexpected(s.error());
    }
    for (std::size_t i = 0; i < mine.size(); ++i) impl->local[i].comm = comms[i];
    impl->nranks = static_cast<int>(mine.size());
    // NVLink peers support native atomics over the link; PCIe peer access does not.
    bool nvlink = true;
    for (std::size_t i = 0; i + 1 < mine.size() && nvlink; ++i) {
      int access = 0, atomics = 0;
      (void)cudaDeviceCanAccessPeer(&access, mine[i], mine[i + 1]);
      (void)cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, mine[i], mine[i + 1]);
      nvlink = access != 0 && atomics != 0;
    }
    impl->tier = nvlink ? "nvlink" : "pcie";
  }
  return std::unique_ptr<NcclCollectives>(new NcclCollectives(std::move(impl)));
}

Result<CollectiveRecord> NcclCollectives::run(sim::CollectiveKind kind, double bytes, const RunOptions& options) {
  Impl& s = *impl_;
  const std::string where = std::string("cuda/collective/") + kind_name(kind);
  if (s.nranks < 2) return fail(where, "needs at least 2 GPUs in the communicator; got " + std::to_string(s.nranks));
  if (!(bytes > 0)) return fail(where, "bytes must be > 0");
  const auto n = static_cast<std::size_t>(s.nranks);
  const std::size_t unit = 4 * n;
  std::size_t used = static_cast<std::size_t>(bytes) / unit * unit;
  if (used == 0) used = unit;
  std::size_t send = used, recv = used;
  if (kind == sim::CollectiveKind::all_gather) send = used / n;
  if (kind == sim::CollectiveKind::reduce_scatter) recv = used / n;
  if (auto st = s.ensure_buffers(send, recv); !st) return std::unexpected(st.error());

  // Warm-up (at least once), timed as a whole to size the timed run; every rank takes the max so
  // all ranks run the same number of iterations.
  const int warmup = std::max(1, options.warmup);
  for (auto& d : s.local) {
    if (auto st = d.timer.start(d.stream); !st) return std::unexpected(st.error());
  }
  for (int i = 0; i < warmup; ++i) {
    if (auto st = s.enqueue(kind, used); !st) return std::unexpected(st.error());
  }
  double est = 0.0;
  for (auto& d : s.local) {
    if (auto st = d.timer.stop(d.stream); !st) return std::unexpected(st.error());
    auto t = d.timer.seconds();
    if (!t) return std::unexpected(t.error());
    est = std::max(est, *t / warmup);
  }
#ifdef CAPPLAN_CUDA_WITH_MPI
  if (s.layout.size > 1) MPI_Allreduce(MPI_IN_PLACE, &est, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
#endif
  int iterations = std::max(1, options.iterations);
  if (est > 0) iterations = std::clamp(static_cast<int>(options.max_seconds_per_case / est), 1, iterations);

  // Timed iterations back to back, one event pair per iteration per GPU; a sample is the slowest GPU's.
  std::vector<std::vector<EventTimer>> timers(s.local.size());
  for (std::size_t g = 0; g < s.local.size(); ++g) {
    (void)cudaSetDevice(s.local[g].device);
    for (int it = 0; it < iterations; ++it) {
      auto t = EventTimer::create();
      if (!t) return std::unexpected(t.error());
      timers[g].push_back(std::move(*t));
    }
  }
  for (int it = 0; it < iterations; ++it) {
    for (std::size_t g = 0; g < s.local.size(); ++g) {
      if (auto st = timers[g][static_cast<std::size_t>(it)].start(s.local[g].stream); !st) {
        return std::unexpected(st.error());
      }
    }
    if (auto st = s.enqueue(kind, used); !st) return std::unexpected(st.error());
    for (std::size_t g = 0; g < s.local.size(); ++g) {
      if (auto st = timers[g][static_cast<std::size_t>(it)].stop(s.local[g].stream); !st) {
        return std::unexpected(st.error());
      }
    }
  }
  std::vector<double> samples(static_cast<std::size_t>(iterations), 0.0);
  for (std::size_t g = 0; g < s.local.size(); ++g) {
    for (int it = 0; it < iterations; ++it) {
      auto t = timers[g][static_cast<std::size_t>(it)].seconds();
      if (!t) return std::unexpected(t.error());
      samples[static_cast<std::size_t>(it)] = std::max(samples[static_cast<std::size_t>(it)], *t);
    }
  }
#ifdef CAPPLAN_CUDA_WITH_MPI
  if (s.layout.size > 1) {
    MPI_Allreduce(MPI_IN_PLACE, samples.data(), iterations, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  }
#endif
  CollectiveRecord rec;
  rec.kind = kind;
  rec.bytes = static_cast<double>(used);
  rec.ranks = s.nranks;
  rec.ranks_per_node = s.layout.size > 1 ? s.layout.local_size : s.nranks;
  rec.nodes = std::max(1, s.nranks / std::max(1, rec.ranks_per_node));
  rec.tier = s.tier;
  rec.time = summarize(std::move(samples));
  rec.algbw_Bps = rec.bytes / rec.time.median_s;
  rec.busbw_Bps = rec.algbw_Bps * bus_factor(kind, s.nranks);
  return rec;
}

}  // namespace capplan::calib::cuda
