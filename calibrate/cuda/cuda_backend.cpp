// SPDX-License-Identifier: Apache-2.0
#include "cuda_backend.hpp"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "cuda_context.hpp"
#include "cuda_layer_step.hpp"
#include "cuda_util.hpp"
#include "kernels.hpp"
#include "lt_matmul.hpp"
#include "nvml_device_state.hpp"
#include "timing_plan.hpp"
#ifdef CAPPLAN_HAVE_NCCL
#include "nccl_collectives.hpp"
#endif

namespace capplan::calib {

using cuda::check;
using cuda::DeviceBuffer;
using cuda::EventTimer;
using cuda::Status;

namespace {

// cuBLASLt workspace: 32 MiB, NVIDIA's recommendation for Hopper (cuBLAS docs, cublasSetWorkspace).
constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;
// The bandwidth "norm" pattern normalises rows of this many elements (a hidden size of 8192).
constexpr std::int64_t kNormCols = 8192;

// Launches and event records one timed iteration of time_iterations enqueues: an event on each
// side and the work itself (one cuBLASLt matmul may be two kernels: a split-K product and its
// reduction; a copy or one of the backend's kernels is one).
constexpr int kLaunchesPerTimedIteration = 4;

// Holds `stream` on the GPU for `seconds` (capplan_spin) so that what the host enqueues next
// queues up behind it (timing_plan.hpp).
Status spin(cudaStream_t stream, double seconds) {
  return check(capplan_spin(static_cast<unsigned long long>(seconds * 1e9), stream), "spin kernel");
}

// Runs `enqueue` `warmup` times untimed (at least once), each between its own pair of events as in
// the timed loop; the warm-up estimates one iteration on the device (events) and on the host (the
// fastest enqueue, host clock). Then as many of `iterations` as fit in max_seconds_per_case by the
// device estimate (at least one), each between its own pair of events, queued in batches behind a
// spin kernel long enough for the host to enqueue the batch (plan_queue): the GPU runs them back to
// back without waiting for the host, so each sample is one iteration's device time even when the
// iteration is shorter than its enqueueing.
template <class F>
Result<std::vector<double>> time_iterations(cudaStream_t stream, const RunOptions& options, F&& enqueue) {
  using Clock = std::chrono::steady_clock;
  const int warmup = std::max(1, options.warmup);
  std::vector<EventTimer> marks;
  auto make_marks = [&](int n) -> Status {
    marks.clear();
    for (int i = 0; i < n; ++i) {
      auto t = EventTimer::create();
      if (!t) return std::unexpected(t.error());
      marks.push_back(std::move(*t));
    }
    return {};
  };
  auto timed = [&](EventTimer& m) -> Status {  // one iteration between its events
    if (auto r = m.start(stream); !r) return r;
    if (auto r = enqueue(); !r) return r;
    return m.stop(stream);
  };
  if (auto r = make_marks(warmup); !r) return std::unexpected(r.error());
  double host_s = INFINITY;
  for (auto& m : marks) {
    const auto t0 = Clock::now();
    if (auto r = timed(m); !r) return std::unexpected(r.error());
    host_s = std::min(host_s, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  double device_s = 0.0;
  for (const auto& m : marks) {
    auto t = m.seconds();
    if (!t) return std::unexpected(t.error());
    device_s += *t;
  }
  const double est = device_s / warmup;
  int iterations = std::max(1, options.iterations);
  if (est > 0) iterations = std::clamp(static_cast<int>(options.max_seconds_per_case / est), 1, iterations);
  if (auto r = make_marks(iterations); !r) return std::unexpected(r.error());
  const cuda::QueuePlan q = cuda::plan_queue(iterations, host_s, kLaunchesPerTimedIteration);
  for (int first = 0; first < iterations; first += q.per_batch) {
    if (auto r = spin(stream, q.spin_s); !r) return std::unexpected(r.error());
    for (int i = first; i < std::min(iterations, first + q.per_batch); ++i) {
      if (auto r = timed(marks[static_cast<std::size_t>(i)]); !r) return std::unexpected(r.error());
    }
  }
  std::vector<double> samples;
  for (const auto& m : marks) {
    auto t = m.seconds();
    if (!t) return std::unexpected(t.error());
    samples.push_back(*t);
  }
  return samples;
}

double relative_error(const std::vector<double>& out, const std::vector<double>& ref) {
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    num += (out[i] - ref[i]) * (out[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  if (!std::isfinite(num)) return INFINITY;
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

}  // namespace

struct CudaBackend::Impl {
  int device = 0;
  int device_count = 0;
  int cc_major = 0, cc_minor = 0;
  int l2_bytes = 0;
  cudaStream_t stream = nullptr;
  cublasLtHandle_t lt = nullptr;
  DeviceBuffer workspace;
  Context context;
  std::unique_ptr<cuda::NvmlDeviceState> nvml;  // clocks, power, temperature (read only)
#ifdef CAPPLAN_HAVE_NCCL
  cuda::ProcessLayout layout;
  std::unique_ptr<cuda::NcclCollectives> nccl;
  Diagnostics nccl_error;  // why the communicator could not be created (asked once)
#endif

  ~Impl() {
#ifdef CAPPLAN_HAVE_NCCL
    nccl.reset();
#endif
    (void)cudaSetDevice(device);
    workspace = DeviceBuffer{};
    if (lt != nullptr) (void)cublasLtDestroy(lt);
    if (stream != nullptr) (void)cudaStreamDestroy(stream);
#ifdef CAPPLAN_HAVE_NCCL
    cuda::finish_process_layout(layout);
#endif
  }

  Status select() { return check(cudaSetDevice(device), "cudaSetDevice"); }

  // Random test data in [-1, 1) (never zeros: they hide unwritten outputs and run faster).
  Status fill(void* p, int dtype, std::size_t n, std::uint64_t seed) {
    return check(capplan_fill_uniform(p, dtype, n, seed, -1.0f, 1.0f, stream), "fill");
  }

  // Brings the SM clock out of idle before the first case: cuBLASLt GEMMs (4096^3 in bf16, fp16
  // before Ampere) back to back for `seconds` by the host clock, as a benchmark's warm-up run does.
  // It only loads the GPU: clocks and power limits are never set. Returns the seconds it ran.
  std::expected<double, Diagnostics> warm_up_clocks(double seconds) {
    using Clock = std::chrono::steady_clock;
    const sim::Precision dtype = cc_major >= 8 ? sim::Precision::bf16 : sim::Precision::fp16;
    constexpr std::int64_t n = 4096;
    const cuda::MatmulSpec spec = cuda::tn_spec({n, n, n, 1, dtype});
    auto plan = cuda::LtMatmul::create(lt, spec, workspace.bytes());
    if (!plan) return std::unexpected(plan.error());
    const auto elems = static_cast<std::size_t>(n * n);
    std::vector<DeviceBuffer> bufs;
    for (int i = 0; i < 3; ++i) {
      auto b = DeviceBuffer::allocate(elems * 2, "clock warm-up");
      if (!b) return std::unexpected(b.error());
      if (auto r = fill(b->get(), cuda::operand_kernel_dtype(dtype), elems, 41 + static_cast<std::uint64_t>(i)); !r) {
        return std::unexpected(r.error());
      }
      bufs.push_back(std::move(*b));
    }
    const auto t0 = Clock::now();
    double elapsed = 0.0;
    for (int round = 0; round < 10000 && elapsed < seconds; ++round) {
      for (int i = 0; i < 4; ++i) {
        if (auto r = plan->run(bufs[0].get(), bufs[1].get(), bufs[2].get(), workspace.get(), stream); !r) {
          return std::unexpected(r.error());
        }
      }
      if (auto r = check(cudaStreamSynchronize(stream), "clock warm-up"); !r) return std::unexpected(r.error());
      elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
    }
    return elapsed;
  }

  std::vector<double> download_f32(const void* src, int dtype, std::size_t n, Diagnostics& errors) {
    std::vector<double> out;
    auto tmp = DeviceBuffer::allocate(n * sizeof(float), "check buffer");
    if (!tmp) {
      errors = tmp.error();
      return out;
    }
    std::vector<float> host(n);
    Status s = check(capplan_to_f32(src, dtype, tmp->as<float>(), n, stream), "to_f32");
    if (s) s = check(cudaMemcpyAsync(host.data(), tmp->get(), n * sizeof(float), cudaMemcpyDeviceToHost, stream), "copy");
    if (s) s = check(cudaStreamSynchronize(stream), "copy");
    if (!s) {
      errors = s.error();
      return out;
    }
    out.assign(host.begin(), host.end());
    return out;
  }
};

CudaBackend::CudaBackend(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaBackend::~CudaBackend() = default;

Result<std::unique_ptr<CudaBackend>> CudaBackend::create(int device) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return fail("cuda", std::string("no CUDA device found (") + cudaGetErrorString(e) + ")");
  }
  if (count <= 0) return fail("cuda", "no CUDA device found (cudaGetDeviceCount reported 0 devices)");
  auto impl = std::make_unique<Impl>();
  impl->device_count = count;
  impl->device = device;
  std::string nccl_ver;
#ifdef CAPPLAN_HAVE_NCCL
  auto layout = cuda::detect_process_layout();
  if (!layout) return std::unexpected(layout.error());
  impl->layout = *layout;
  if (layout->size > 1) impl->device = layout->local_rank % count;  // one GPU per MPI rank
  nccl_ver = cuda::nccl_version();
#endif
  if (impl->device < 0 || impl->device >= count) {
    return fail("cuda/device", "must be in 0.." + std::to_string(count - 1) + "; got " + std::to_string(device));
  }
  if (auto s = impl->select(); !s) return std::unexpected(s.error());
  if (auto s = check(cudaDeviceGetAttribute(&impl->cc_major, cudaDevAttrComputeCapabilityMajor, impl->device),
                     "compute capability");
      !s) {
    return std::unexpected(s.error());
  }
  (void)cudaDeviceGetAttribute(&impl->cc_minor, cudaDevAttrComputeCapabilityMinor, impl->device);
  if (auto s = check(cudaStreamCreateWithFlags(&impl->stream, cudaStreamNonBlocking), "cudaStreamCreate"); !s) {
    return std::unexpected(s.error());
  }
  if (cublasStatus_t st = cublasLtCreate(&impl->lt); st != CUBLAS_STATUS_SUCCESS) {
    return fail("cuda/cublasLtCreate", cuda::cublas_status_text(st));
  }
  auto ws = DeviceBuffer::allocate(kWorkspaceBytes, "cuBLASLt workspace");
  if (!ws) return std::unexpected(ws.error());
  impl->workspace = std::move(*ws);

  (void)cudaDeviceGetAttribute(&impl->l2_bytes, cudaDevAttrL2CacheSize, impl->device);

  impl->context = cuda::make_cuda_context(impl->device, nccl_ver);
  impl->nvml = std::make_unique<cuda::NvmlDeviceState>(cuda::pci_bus_id(impl->device));
  if (impl->nvml->available()) {
    if (const std::string v = impl->nvml->driver_version(); !v.empty()) impl->context.versions["nvidia_driver"] = v;
  } else {
    impl->context.versions["nvml"] = "unavailable: " + impl->nvml->why() + "; no clocks, power or throttle reasons";
  }
  // The GEMM sweep's fp8 products run without cuBLASLt's fast accumulation (lt_matmul.hpp): the
  // stricter mode, the one Transformer Engine's dgrad and wgrad GEMMs (two thirds of a training
  // step's GEMM FLOPs) run with. The training step runs each fp8 GEMM as Transformer Engine does:
  // forward with fast accumulation, backward without (layer_step_plan).
  impl->context.versions["fp8_fast_accum"] = "off";
  impl->context.versions["fp8_fast_accum_training_step"] = "forward on, backward off";
#ifdef CAPPLAN_HAVE_NCCL
  impl->context.versions["nccl_alltoall"] = cuda::alltoall_path_text();
  impl->context.versions["nccl_headers"] = cuda::nccl_header_version();
#endif
  // The first case must not meet a GPU at idle clocks.
  if (auto warm = impl->warm_up_clocks(0.3)) {
    impl->context.clocks["warm_up_ms"] = std::to_string(static_cast<long long>(std::lround(*warm * 1e3)));
  } else {
    (void)cudaGetLastError();
    impl->context.clocks["warm_up_ms"] = "0";
  }
#ifdef CAPPLAN_HAVE_NCCL
  if (impl->layout.size > 1) {
    impl->context.ranks = impl->layout.size;
    impl->context.ranks_per_node = impl->layout.local_size;
  } else {
    impl->context.ranks = count;
    impl->context.ranks_per_node = count;
  }
#endif
  impl->context.devices_per_rank = 1;
  return std::unique_ptr<CudaBackend>(new CudaBackend(std::move(impl)));
}

Result<std::unique_ptr<MeasurementBackend>> make_cuda_backend(int device) {
  auto b = CudaBackend::create(device);
  if (!b) return std::unexpected(b.error());
  return std::unique_ptr<MeasurementBackend>(std::move(*b));
}

Context CudaBackend::context() const { return impl_->context; }
std::map<std::string, std::string> CudaBackend::device_state() const { return impl_->nvml->read(); }
bool CudaBackend::healthy() const {
  // A non-sticky error (a refused launch configuration, out of memory) is cleared by reading it;
  // a sticky one comes back from every call until the process ends.
  if (cudaSetDevice(impl_->device) != cudaSuccess) return false;
  if (cudaDeviceSynchronize() == cudaSuccess) return true;
  (void)cudaGetLastError();
  return cudaDeviceSynchronize() == cudaSuccess;
}

int CudaBackend::device() const { return impl_->device; }
int CudaBackend::local_device_count() const { return impl_->device_count; }

int CudaBackend::rank() const {
#ifdef CAPPLAN_HAVE_NCCL
  return impl_->layout.rank;
#else
  return 0;
#endif
}

int CudaBackend::ranks() const { return impl_->context.ranks; }

bool CudaBackend::supports(sim::Precision dtype) const {
  const int cc = impl_->cc_major * 10 + impl_->cc_minor;
  switch (dtype) {
    case sim::Precision::fp32:
    case sim::Precision::fp16: return true;
    case sim::Precision::tf32:
    case sim::Precision::bf16: return cc >= 80;
    case sim::Precision::fp8: return cc >= 89;  // e4m3 tensor cores: Ada (8.9) and Hopper (9.0)
    // NVFP4 needs block-scaled operands (an FP8 scale per 16 elements, cuBLASLt's VEC16_UE4M3
    // scale mode), which this backend does not lay out: its GEMMs are not measured, on any GPU.
    case sim::Precision::fp4: return false;
  }
  return false;
}

Result<GemmRecord> CudaBackend::gemm(const GemmShape& shape, const RunOptions& options) {
  Impl& s = *impl_;
  const std::string where = std::string("cuda/gemm/") + sim::to_string(shape.dtype);
  if (!supports(shape.dtype)) {
    return fail(where, "not supported on compute capability " + std::to_string(s.cc_major) + "." +
                           std::to_string(s.cc_minor));
  }
  if (auto r = s.select(); !r) return std::unexpected(r.error());
  const cuda::MatmulSpec spec = cuda::tn_spec(shape);  // B stored n x k (gemm_layout.hpp)
  auto plan = cuda::LtMatmul::create(s.lt, spec, s.workspace.bytes());
  if (!plan) return std::unexpected(plan.error());
  const std::size_t ob = cuda::operand_bytes(shape.dtype), rb = cuda::result_bytes(shape.dtype);
  const auto na = static_cast<std::size_t>(spec.stride_a * shape.batch);
  const auto nb = static_cast<std::size_t>(spec.stride_b * shape.batch);
  const auto nc = static_cast<std::size_t>(spec.stride_c * shape.batch);
  // Rotating copies of the operands (rotation_sets): each timed run reads A and B from HBM, as the
  // GEMM does inside a layer, not from the L2 its previous run warmed (decode-shaped GEMMs fit in
  // an H100's 50 MB L2 and would otherwise time at L2 bandwidth).
  const double set_bytes = static_cast<double>((na + nb) * ob + nc * rb);
  const auto sets = static_cast<std::size_t>(rotation_sets(set_bytes, s.l2_bytes, 2.0 * 1024 * 1024 * 1024));
  auto a = DeviceBuffer::allocate(sets * na * ob, "gemm A");
  if (!a) return std::unexpected(a.error());
  auto b = DeviceBuffer::allocate(sets * nb * ob, "gemm B");
  if (!b) return std::unexpected(b.error());
  auto c = DeviceBuffer::allocate(sets * nc * rb, "gemm C");
  if (!c) return std::unexpected(c.error());
  const int in_dtype = cuda::operand_kernel_dtype(shape.dtype);
  if (auto r = s.fill(a->get(), in_dtype, sets * na, 11); !r) return std::unexpected(r.error());
  if (auto r = s.fill(b->get(), in_dtype, sets * nb, 12); !r) return std::unexpected(r.error());
  std::size_t next = 0;
  auto samples = time_iterations(s.stream, options, [&] {
    auto* pa = static_cast<char*>(a->get()) + next * na * ob;
    auto* pb = static_cast<char*>(b->get()) + next * nb * ob;
    auto* pc = static_cast<char*>(c->get()) + next * nc * rb;
    next = (next + 1) % sets;
    return plan->run(pa, pb, pc, s.workspace.get(), s.stream);
  });
  if (!samples) return std::unexpected(samples.error());
  GemmRecord rec;
  rec.shape = shape;
  const double m = static_cast<double>(shape.m), n = static_cast<double>(shape.n), k = static_cast<double>(shape.k),
               bt = static_cast<double>(shape.batch);
  rec.flops = 2.0 * m * n * k * bt;
  rec.bytes = ((m * k + k * n) * static_cast<double>(ob) + m * n * static_cast<double>(rb)) * bt;
  rec.time = summarize(std::move(*samples));
  return rec;
}

std::vector<std::string> CudaBackend::launch_patterns() const {
  return {"launch", "back_to_back", "graph", "dispatch"};
}

// Kernel launch and dispatch (records.hpp, LaunchRecord), `kernels` per sample:
//   launch        host steady clock around `kernels` empty-kernel launches (not synchronised in
//                 between; the stream is drained, untimed, after each sample);
//   back_to_back  events around the same launches, queued behind a spin kernel (timing_plan.hpp)
//                 long enough for the host to issue all of them: the GPU's own time per queued
//                 kernel, not the host's launch rate;
//   graph         events around one replay of a CUDA graph of `kernels` empty kernels, also behind
//                 a spin: the device's time per graph node, without the host's cudaGraphLaunch;
//   dispatch      host clock around `kernels` ops of a framework-like sequence (RMSNorm, a
//                 16 x 1024 x 1024 cuBLASLt matmul, GELU, residual add, repeated), as an eager
//                 framework issues a layer's small ops.
Result<LaunchRecord> CudaBackend::launch(const std::string& pattern, int kernels, const RunOptions& options) {
  using Clock = std::chrono::steady_clock;
  Impl& s = *impl_;
  const std::string where = "cuda/launch/" + pattern;
  if (kernels <= 0 || kernels > 1'000'000) return fail(where, "kernels must be in [1, 1000000]");
  if (auto r = s.select(); !r) return std::unexpected(r.error());
  const auto empties = [&]() -> Status {
    for (int i = 0; i < kernels; ++i) {
      if (auto r = check(capplan_empty(s.stream), "empty kernel"); !r) return r;
    }
    return {};
  };
  // The host's fastest time to issue one batch over the warm-up samples: sizes the spin that
  // holds the stream while a timed batch is issued.
  double issue_host_s = INFINITY;
  // One sample: `issue` timed by the host clock (host = true) or by events on the stream.
  const auto sample = [&](const std::function<Status()>& issue, bool host,
                          bool warm) -> std::expected<double, Diagnostics> {
    if (host) {
      const auto t0 = Clock::now();
      if (auto r = issue(); !r) return std::unexpected(r.error());
      const double t = std::chrono::duration<double>(Clock::now() - t0).count();
      if (auto r = check(cudaStreamSynchronize(s.stream), "cudaStreamSynchronize"); !r) return std::unexpected(r.error());
      return t;
    }
    auto ev = EventTimer::create();
    if (!ev) return std::unexpected(ev.error());
    if (!warm) {
      const double spin_s = cuda::plan_queue(1, issue_host_s, kernels + 2).spin_s;
      if (auto r = spin(s.stream, spin_s); !r) return std::unexpected(r.error());
    }
    if (auto r = ev->start(s.stream); !r) return std::unexpected(r.error());
    const auto t0 = Clock::now();
    if (auto r = issue(); !r) return std::unexpected(r.error());
    const double issued = std::chrono::duration<double>(Clock::now() - t0).count();
    if (auto r = ev->stop(s.stream); !r) return std::unexpected(r.error());
    if (warm) issue_host_s = std::min(issue_host_s, issued);
    return ev->seconds();
  };
  const auto run = [&](const std::function<Status()>& issue, bool host) -> Result<LaunchRecord> {
    for (int i = 0; i < std::max(1, options.warmup); ++i) {
      if (auto t = sample(issue, host, true); !t) return std::unexpected(t.error());
    }
    std::vector<double> samples;
    const auto start = Clock::now();
    for (int i = 0; i < std::max(1, options.iterations); ++i) {
      auto t = sample(issue, host, false);
      if (!t) return std::unexpected(t.error());
      samples.push_back(*t);
      if (std::chrono::duration<double>(Clock::now() - start).count() > options.max_seconds_per_case) break;
    }
    LaunchRecord rec;
    rec.pattern = pattern;
    rec.kernels = kernels;
    rec.time = summarize(std::move(samples));
    return rec;
  };
  if (pattern == "launch") return run(empties, true);
  if (pattern == "back_to_back") return run(empties, false);
  if (pattern == "graph") {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    struct Release {
      cudaGraph_t& g;
      cudaGraphExec_t& e;
      ~Release() {
        if (e != nullptr) (void)cudaGraphExecDestroy(e);
        if (g != nullptr) (void)cudaGraphDestroy(g);
      }
    } release{graph, exec};
    if (auto r = check(cudaStreamBeginCapture(s.stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture"); !r) {
      return std::unexpected(r.error());
    }
    const Status captured = empties();
    const Status ended = check(cudaStreamEndCapture(s.stream, &graph), "cudaStreamEndCapture");
    if (!captured) return std::unexpected(captured.error());
    if (!ended) return std::unexpected(ended.error());
    if (auto r = check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate"); !r) return std::unexpected(r.error());
    return run([&]() -> Status { return check(cudaGraphLaunch(exec, s.stream), "cudaGraphLaunch"); }, false);
  }
  if (pattern == "dispatch") {
    const sim::Precision dtype = supports(sim::Precision::bf16) ? sim::Precision::bf16 : sim::Precision::fp16;
    const int kd = cuda::operand_kernel_dtype(dtype);
    constexpr std::int64_t rows = 16, hidden = 1024;
    const GemmShape shape{rows, hidden, hidden, 1, dtype};
    const cuda::MatmulSpec spec = cuda::tn_spec(shape);
    auto plan = cuda::LtMatmul::create(s.lt, spec, s.workspace.bytes());
    if (!plan) return std::unexpected(plan.error());
    const std::size_t ob = cuda::operand_bytes(dtype);
    const auto act = static_cast<std::size_t>(rows * hidden);
    std::vector<DeviceBuffer> bufs;
    for (const std::size_t n : {act, act, act, act, static_cast<std::size_t>(spec.stride_b)}) {
      auto b = DeviceBuffer::allocate(n * ob, "dispatch buffers");
      if (!b) return std::unexpected(b.error());
      if (auto r = s.fill(b->get(), kd, n, 31 + bufs.size()); !r) return std::unexpected(r.error());
      bufs.push_back(std::move(*b));
    }
    void* x = bufs[0].get();
    void* y = bufs[1].get();
    void* z = bufs[2].get();
    void* u = bufs[3].get();
    const void* w = bufs[4].get();
    const auto sequence = [&]() -> Status {
      for (int i = 0; i < kernels; ++i) {
        Status r;
        switch (i % 4) {
          case 0: r = check(capplan_rms_norm(x, y, kd, rows, static_cast<int>(hidden), s.stream), "rms norm"); break;
          case 1: r = plan->run(y, w, z, s.workspace.get(), s.stream); break;
          case 2: r = check(capplan_gelu_fwd(z, u, kd, act, s.stream), "gelu"); break;
          default: r = check(capplan_add(u, x, y, kd, act, s.stream), "add"); break;
        }
        if (!r) return r;
      }
      return {};
    };
    return run(sequence, true);
  }
  return fail(where, "unknown pattern; the cuda backend measures launch, back_to_back, graph and dispatch");
}

Result<MemoryRecord> CudaBackend::memory(const std::string& pattern, double bytes, const RunOptions& options) {
  Impl& s = *impl_;
  const std::string where = "cuda/memory/" + pattern;
  if (!(bytes >= 64)) return fail(where, "bytes must be >= 64; got " + std::to_string(bytes));
  if (auto r = s.select(); !r) return std::unexpected(r.error());
  std::size_t free_b = 0, total_b = 0;
  if (auto r = check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo"); !r) return std::unexpected(r.error());
  if (bytes > 0.8 * static_cast<double>(free_b)) {
    return fail(where, "needs " + std::to_string(bytes) + " bytes; the device has " + std::to_string(free_b) + " free");
  }
  MemoryRecord rec;
  rec.pattern = pattern;
  // Every timed run reads its input from HBM, at every size: the pattern's tensors (each
  // `tensor_bytes`, `count` of them) are laid out in `sets` copies spanning at least twice the L2
  // (rotation_sets; one copy once a set is that large), and run i uses copy i % sets, so no run
  // finds its input in the L2 a previous run left warm. A record therefore needs no field saying
  // where its bytes came from: it is always HBM (sizes below the L2 measure HBM latency and launch,
  // not L2 bandwidth).
  std::vector<DeviceBuffer> pools;  // pools[t]: tensor t of every set, `stride` bytes apart
  std::size_t stride = 0, sets = 1;
  auto allocate = [&](std::size_t tensor_bytes, int count) -> Status {
    stride = (std::max<std::size_t>(tensor_bytes, 1) + 255) / 256 * 256;
    sets = static_cast<std::size_t>(rotation_sets(static_cast<double>(stride) * count, s.l2_bytes,
                                                  2.0 * 1024 * 1024 * 1024, 1 << 16));
    for (int i = 0; i < count; ++i) {
      auto buf = DeviceBuffer::allocate(sets * stride, "memory " + pattern);
      if (!buf) return std::unexpected(buf.error());
      if (auto r = s.fill(buf->get(), capplan_bf16, sets * stride / 2, 21 + static_cast<std::uint64_t>(i)); !r) {
        return r;
      }
      pools.push_back(std::move(*buf));
    }
    return {};
  };
  std::size_t next = 0;
  auto tensor = [&](int t) { return static_cast<char*>(pools[static_cast<std::size_t>(t)].get()) + next * stride; };
  auto advance = [&] { next = (next + 1) % sets; };
  Result<std::vector<double>> samples;
  if (pattern == "copy") {  // device-to-device copy: reads n, writes n
    const std::size_t n = static_cast<std::size_t>(bytes / 2) / 16 * 16;
    if (auto r = allocate(n, 2); !r) return std::unexpected(r.error());
    rec.bytes = 2.0 * static_cast<double>(n);
    samples = time_iterations(s.stream, options, [&] {
      const Status r = check(cudaMemcpyAsync(tensor(1), tensor(0), n, cudaMemcpyDeviceToDevice, s.stream), "copy");
      advance();
      return r;
    });
  } else if (pattern == "norm") {  // RMSNorm rows of bf16: reads x, writes y
    const auto elems = static_cast<std::int64_t>(bytes / 4);
    const std::int64_t cols = std::max<std::int64_t>(8, std::min(kNormCols, elems / 8 * 8));
    const std::int64_t rows = std::max<std::int64_t>(1, elems / cols);
    const auto n = static_cast<std::size_t>(rows * cols);
    if (auto r = allocate(n * 2, 2); !r) return std::unexpected(r.error());
    rec.bytes = 4.0 * static_cast<double>(n);
    samples = time_iterations(s.stream, options, [&] {
      const Status r = check(capplan_rms_norm(tensor(0), tensor(1), capplan_bf16, static_cast<std::size_t>(rows),
                                              static_cast<int>(cols), s.stream),
                             "rms_norm");
      advance();
      return r;
    });
  } else if (pattern == "elementwise") {  // out = a * gelu(b) in bf16: reads two, writes one
    const auto n = static_cast<std::size_t>(bytes / 6) / 8 * 8;
    if (auto r = allocate(n * 2, 3); !r) return std::unexpected(r.error());
    rec.bytes = 6.0 * static_cast<double>(n);
    samples = time_iterations(s.stream, options, [&] {
      const Status r = check(capplan_gated_gelu(tensor(0), tensor(1), tensor(2), capplan_bf16, n, s.stream),
                             "gated_gelu");
      advance();
      return r;
    });
  } else {
    return fail("cuda/memory/pattern", "unknown pattern '" + pattern + "'; known: copy, norm, elementwise");
  }
  if (!samples) return std::unexpected(samples.error());
  rec.time = summarize(std::move(*samples));
  return rec;
}

Result<CollectiveRecord> CudaBackend::collective(sim::CollectiveKind kind, double bytes, const RunOptions& options) {
#ifdef CAPPLAN_HAVE_NCCL
  Impl& s = *impl_;
  if (!s.nccl && s.nccl_error.empty()) {
    std::vector<int> devices;
    if (s.layout.size > 1) {
      devices.push_back(s.device);
    } else {
      for (int d = 0; d < s.device_count; ++d) devices.push_back(d);
    }
    if (s.layout.size <= 1 && devices.size() < 2) {
      s.nccl_error = fail("cuda/collective", "NCCL collectives need at least 2 GPUs; this process sees " +
                                                 std::to_string(devices.size()) +
                                                 " (run one process per GPU with mpirun across nodes)")
                         .error();
    } else {
      auto made = cuda::NcclCollectives::create(s.layout, devices);
      if (made) {
        s.nccl = std::move(*made);
      } else {
        s.nccl_error = made.error();
      }
    }
  }
  if (!s.nccl) return std::unexpected(s.nccl_error);
  auto rec = s.nccl->run(kind, bytes, options);
  (void)s.select();
  return rec;
#else
  (void)bytes;
  (void)options;
  return fail(std::string("cuda/collective/") + sim::to_string(kind),
              "this build has no NCCL (configure with NCCL_HOME=<prefix> to measure collectives)");
#endif
}

Result<StepRecord> CudaBackend::training_step(const StepShape& shape, const RunOptions& options) {
  Impl& s = *impl_;
  if (auto r = s.select(); !r) return std::unexpected(r.error());
  const cuda::LtResources lt{s.lt, s.workspace.get(), s.workspace.bytes(), s.stream, s.l2_bytes};
  auto rec = cuda::measure_layer_step(lt, shape, options);
  (void)cudaStreamSynchronize(s.stream);
  return rec;
}

Result<double> CudaBackend::gemm_relative_error(const GemmShape& shape) {
  Impl& s = *impl_;
  const std::string where = std::string("cuda/gemm_check/") + sim::to_string(shape.dtype);
  if (!supports(shape.dtype)) return fail(where, "dtype not supported on this device");
  if (static_cast<double>(shape.m) * static_cast<double>(shape.n) * static_cast<double>(shape.k) *
          static_cast<double>(shape.batch) >
      double(1 << 28)) {
    return fail(where, "shape too large for a host reference (m*n*k*batch > 2^28)");
  }
  if (auto r = s.select(); !r) return std::unexpected(r.error());
  const cuda::MatmulSpec spec = cuda::tn_spec(shape);
  auto plan = cuda::LtMatmul::create(s.lt, spec, s.workspace.bytes());
  if (!plan) return std::unexpected(plan.error());
  const auto na = static_cast<std::size_t>(spec.stride_a * shape.batch);
  const auto nb = static_cast<std::size_t>(spec.stride_b * shape.batch);
  const auto nc = static_cast<std::size_t>(spec.stride_c * shape.batch);
  auto a = DeviceBuffer::allocate(na * cuda::operand_bytes(shape.dtype), "check A");
  auto b = DeviceBuffer::allocate(nb * cuda::operand_bytes(shape.dtype), "check B");
  auto c = DeviceBuffer::allocate(nc * cuda::result_bytes(shape.dtype), "check C");
  if (!a || !b || !c) return fail(where, "allocation failed");
  const int in_dtype = cuda::operand_kernel_dtype(shape.dtype), out_dtype = cuda::result_kernel_dtype(shape.dtype);
  if (auto r = s.fill(a->get(), in_dtype, na, 101); !r) return std::unexpected(r.error());
  if (auto r = s.fill(b->get(), in_dtype, nb, 102); !r) return std::unexpected(r.error());
  // Poison C so an unwritten element shows up as a large error.
  if (auto r = check(capplan_fill_uniform(c->get(), out_dtype, nc, 103, 1000.0f, 2000.0f, s.stream), "poison"); !r) {
    return std::unexpected(r.error());
  }
  if (auto r = plan->run(a->get(), b->get(), c->get(), s.workspace.get(), s.stream); !r) {
    return std::unexpected(r.error());
  }
  Diagnostics errors;
  const std::vector<double> ha = s.download_f32(a->get(), in_dtype, na, errors);
  const std::vector<double> hb = s.download_f32(b->get(), in_dtype, nb, errors);
  const std::vector<double> hc = s.download_f32(c->get(), out_dtype, nc, errors);
  if (!errors.empty()) return std::unexpected(errors);
  std::vector<double> ref(nc, 0.0);
  for (std::int64_t bt = 0; bt < shape.batch; ++bt) {
    for (std::int64_t i = 0; i < shape.m; ++i) {
      for (std::int64_t j = 0; j < shape.n; ++j) {
        double acc = 0.0;
        const double* ar = ha.data() + bt * spec.stride_a + i * shape.k;
        const double* br = hb.data() + bt * spec.stride_b + j * shape.k;  // B stored n x k
        for (std::int64_t k = 0; k < shape.k; ++k) acc += ar[k] * br[k];
        ref[static_cast<std::size_t>(bt * spec.stride_c + i * shape.n + j)] = acc;
      }
    }
  }
  return relative_error(hc, ref);
}

Result<double> CudaBackend::norm_relative_error(int rows, int cols) {
  Impl& s = *impl_;
  if (rows <= 0 || cols <= 0 || cols % 8 != 0) return fail("cuda/norm_check", "rows > 0 and cols a multiple of 8");
  if (auto r = s.select(); !r) return std::unexpected(r.error());
  const auto n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  auto x = DeviceBuffer::allocate(n * 2, "check x");
  auto y = DeviceBuffer::allocate(n * 2, "check y");
  if (!x || !y) return fail("cuda/norm_check", "allocation failed");
  if (auto r = s.fill(x->get(), capplan_bf16, n, 201); !r) return std::unexpected(r.error());
  if (auto r = check(capplan_fill_uniform(y->get(), capplan_bf16, n, 202, 1000.0f, 2000.0f, s.stream), "poison"); !r) {
    return std::unexpected(r.error());
  }
  if (auto r = check(capplan_rms_norm(x->get(), y->get(), capplan_bf16, static_cast<std::size_t>(rows), cols, s.stream),
                     "rms_norm");
      !r) {
    return std::unexpected(r.error());
  }
  Diagnostics errors;
  const std::vector<double> hx = s.download_f32(x->get(), capplan_bf16, n, errors);
  const std::vector<double> hy = s.download_f32(y->get(), capplan_bf16, n, errors);
  if (!errors.empty()) return std::unexpected(errors);
  std::vector<double> ref(n);
  for (int r = 0; r < rows; ++r) {
    double ss = 0.0;
    for (int c = 0; c < cols; ++c) ss += hx[static_cast<std::size_t>(r) * cols + c] * hx[static_cast<std::size_t>(r) * cols + c];
    const double inv = 1.0 / std::sqrt(ss / cols + 1e-5);
    for (int c = 0; c < cols; ++c) ref[static_cast<std::size_t>(r) * cols + c] = hx[static_cast<std::size_t>(r) * cols + c] * inv;
  }
  return relative_error(hy, ref);
}

}  // namespace capplan::calib
