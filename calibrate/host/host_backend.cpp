// SPDX-License-Identifier: Apache-2.0
#include "capplan/calibrate/host_backend.hpp"

#include <unistd.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "capplan/calibrate/calibration_run.hpp"
#include "host_clock.hpp"
#include "host_kernels.hpp"
#include "host_layer.hpp"
#include "host_mpi.hpp"

namespace capplan::calib {
namespace {

using Clock = std::chrono::steady_clock;
using host::Mat;
using host::Vec;

// Larger cases would take minutes on one core; the host backend exists for the loop, not for
// planning-size GEMMs (the CUDA backend measures those).
constexpr double kMaxGemmFlops = 2e11;
constexpr double kMaxBufferBytes = 1024.0 * 1024 * 1024;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Times `fn` by thread CPU time (host_clock.hpp): `warmup` untimed calls, then samples of `reps` back-to-back calls each (reps chosen
// so a sample lasts at least `min_sample_s`, which keeps timer resolution out of tiny kernels),
// stopping early once max_seconds_per_case is spent (after at least one sample).
template <class F>
SampleStats measure(F&& fn, const RunOptions& o, double min_sample_s = 2e-4) {
  double one = 0;
  for (int i = 0; i < std::max(o.warmup, 1); ++i) {
    const double t0 = host::thread_cpu_seconds();
    fn();
    one = host::thread_cpu_seconds() - t0;
  }
  const int reps = static_cast<int>(std::clamp(min_sample_s / std::max(one, 1e-9), 1.0, 10000.0));
  std::vector<double> samples;
  const auto start = Clock::now();
  for (int i = 0; i < std::max(o.iterations, 1); ++i) {
    const double t0 = host::thread_cpu_seconds();
    for (int r = 0; r < reps; ++r) fn();
    samples.push_back((host::thread_cpu_seconds() - t0) / reps);
    if (since(start) > o.max_seconds_per_case) break;
  }
  return summarize(std::move(samples));
}

template <class T>
void fill_random(Mat<T>& m, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = T(d(rng));
}

template <class T>
SampleStats time_gemm(const GemmShape& s, const RunOptions& o) {
  std::mt19937 rng(42);
  std::vector<Mat<T>> a(static_cast<std::size_t>(s.batch)), b(a.size()), c(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i].resize(s.m, s.k);
    b[i].resize(s.k, s.n);
    c[i].resize(s.m, s.n);
    fill_random(a[i], rng);
    fill_random(b[i], rng);
  }
  return measure(
      [&] {
        for (std::size_t i = 0; i < a.size(); ++i) c[i].noalias() = a[i] * b[i];
      },
      o);
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      if (const auto colon = line.find(':'); colon != std::string::npos) {
        auto name = line.substr(colon + 1);
        name.erase(0, name.find_first_not_of(' '));
        return name;
      }
    }
  }
  return "unknown CPU";
}

class HostBackend final : public MeasurementBackend {
 public:
  explicit HostBackend(std::unique_ptr<host::MpiWorld> mpi) : mpi_(std::move(mpi)) {
    ctx_.backend = "host";
    ctx_.device = cpu_model();
    char name[256] = {};
    ctx_.host = gethostname(name, sizeof name - 1) == 0 ? name : "unknown";
    ctx_.date_utc = utc_now_iso8601();
    ctx_.capplan_version = CAPPLAN_VERSION;
    ctx_.versions["eigen"] = std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) +
                             "." + std::to_string(EIGEN_MINOR_VERSION);
    ctx_.versions["eigen_simd"] = Eigen::SimdInstructionSetsInUse();
    ctx_.versions["compiler"] = std::string("gcc ") + __VERSION__;
    if (mpi_) ctx_.versions["mpi"] = mpi_->library_version();
    ctx_.ranks = mpi_ ? mpi_->size() : 1;
    ctx_.ranks_per_node = mpi_ ? mpi_->ranks_per_node() : 1;
    ctx_.devices_per_rank = 1;
    ctx_.threads = Eigen::nbThreads();
    ctx_.clocks["timer"] = mpi_ ? "thread CPU time (collectives: wall clock, max over ranks)" : "thread CPU time";
  }

  std::string name() const override { return "host"; }
  Context context() const override { return ctx_; }
  int rank() const override { return mpi_ ? mpi_->rank() : 0; }
  int ranks() const override { return mpi_ ? mpi_->size() : 1; }

  bool supports(sim::Precision p) const override {
    // Eigen computes fp32 natively; Eigen::half and Eigen::bfloat16 products run through the
    // same kernels with conversions (storage in 16 bits, arithmetic in fp32). No tf32 or fp8 on CPUs.
    return p == sim::Precision::fp32 || p == sim::Precision::bf16 || p == sim::Precision::fp16;
  }

  Result<GemmRecord> gemm(const GemmShape& s, const RunOptions& o) override {
    const std::string where = "gemm " + std::string(sim::to_string(s.dtype));
    if (!supports(s.dtype)) {
      return fail(where, std::string("the host backend measures fp32, bf16 and fp16 GEMMs; ") +
                             sim::to_string(s.dtype) + " is not available on a CPU");
    }
    if (s.m <= 0 || s.n <= 0 || s.k <= 0 || s.batch <= 0) return fail(where, "sizes must be positive");
    GemmRecord r;
    r.shape = s;
    r.flops = 2.0 * static_cast<double>(s.m) * s.n * s.k * s.batch;
    const double e = sim::element_bytes(s.dtype);
    r.bytes = e * static_cast<double>(s.batch) * (double(s.m) * s.k + double(s.k) * s.n + double(s.m) * s.n);
    if (r.flops > kMaxGemmFlops) {
      return fail(where, "m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) +
                             " batch=" + std::to_string(s.batch) + " is too large for the host backend (" +
                             std::to_string(static_cast<long long>(r.flops / 1e9)) + " GFLOP > " +
                             std::to_string(static_cast<long long>(kMaxGemmFlops / 1e9)) + ")");
    }
    if (r.bytes > kMaxBufferBytes) return fail(where, "operands larger than 1 GiB");
    switch (s.dtype) {
      case sim::Precision::fp32:
        r.time = time_gemm<float>(s, o);
        break;
      case sim::Precision::bf16:
        r.time = time_gemm<Eigen::bfloat16>(s, o);
        break;
      default:
        r.time = time_gemm<Eigen::half>(s, o);
        break;
    }
    return r;
  }

  Result<MemoryRecord> memory(const std::string& pattern, double bytes, const RunOptions& o) override {
    const std::string where = "memory " + pattern;
    if (bytes <= 0 || bytes > kMaxBufferBytes) return fail(where, "bytes must be in (0, 1 GiB]");
    MemoryRecord r;
    r.pattern = pattern;
    std::mt19937 rng(7);
    // Each pattern is the step's own kernel (host_kernels.hpp) over fp32 buffers; `bytes` is what
    // it reads plus writes, rounded to whole rows.
    if (pattern == "copy") {  // read x, write y
      const Eigen::Index n = std::max<Eigen::Index>(1, static_cast<Eigen::Index>(bytes / 8));
      Mat<float> x(1, n), y(1, n);
      fill_random(x, rng);
      r.bytes = 8.0 * n;
      r.time = measure([&] { std::copy(x.data(), x.data() + n, y.data()); }, o);
    } else if (pattern == "norm") {  // LayerNorm forward over rows of 1024: read x, write y
      const Eigen::Index w = 1024;
      const Eigen::Index rows = std::max<Eigen::Index>(1, static_cast<Eigen::Index>(bytes / (8.0 * w)));
      Mat<float> x(rows, w), y(rows, w);
      Vec<float> g = Vec<float>::Ones(w), b = Vec<float>::Zero(w), mean(rows), rstd(rows);
      fill_random(x, rng);
      r.bytes = 8.0 * rows * w;
      r.time = measure([&] { host::layernorm_forward(x, g, b, y, mean, rstd); }, o);
    } else if (pattern == "elementwise") {  // residual add: read two, write one
      const Eigen::Index n = std::max<Eigen::Index>(1, static_cast<Eigen::Index>(bytes / 12));
      Mat<float> a(1, n), b(1, n), c(1, n);
      fill_random(a, rng);
      fill_random(b, rng);
      r.bytes = 12.0 * n;
      r.time = measure([&] { host::residual_add(a, b, c); }, o);
    } else if (pattern == "gelu") {  // GELU forward: read u, write g (tanh makes it compute-heavy on CPUs)
      const Eigen::Index n = std::max<Eigen::Index>(1, static_cast<Eigen::Index>(bytes / 8));
      Mat<float> u(1, n), g(1, n);
      fill_random(u, rng);
      r.bytes = 8.0 * n;
      r.time = measure([&] { host::gelu_forward(u, g); }, o);
    } else if (pattern == "softmax") {  // causal softmax forward over [256 x 256] blocks, in place
      const Eigen::Index s = 256;
      const Eigen::Index rows = s * std::max<Eigen::Index>(1, static_cast<Eigen::Index>(bytes / (8.0 * s * s)));
      Mat<float> scores(rows, s), work(rows, s);
      fill_random(scores, rng);
      r.bytes = 8.0 * rows * s;
      r.time = measure(
          [&] {
            work = scores;  // fresh scores each time (the copy is timed too: see below)
            host::softmax_forward(work, s, 0.125f);
          },
          o);
      // Remove the refresh copy: time it alone and subtract (it moves the same bytes).
      const auto copy = measure([&] { work = scores; }, o);
      for (auto& t : r.time.samples_s) t = std::max(t - copy.median_s, 1e-9);
      r.time = summarize(r.time.samples_s);
    } else {
      return fail(where, "unknown pattern; the host backend measures copy, norm, elementwise, gelu, softmax");
    }
    return r;
  }

  std::vector<std::string> launch_patterns() const override { return {"launch", "back_to_back"}; }

  // The host's "launch" is what the step runner pays per op: a call through its vector of
  // std::function kernels (host_layer.cpp). "launch" calls `kernels` empty ones; "back_to_back"
  // `kernels` of the smallest real kernel (a residual add over 64 floats), so per kernel it is
  // the dispatch plus the least work a kernel does. Both by thread CPU time like every host case.
  Result<LaunchRecord> launch(const std::string& pattern, int kernels, const RunOptions& o) override {
    const std::string where = "launch " + pattern;
    if (kernels <= 0 || kernels > 1'000'000) return fail(where, "kernels must be in [1, 1000000]");
    std::vector<std::function<void()>> issue;
    issue.reserve(static_cast<std::size_t>(kernels));
    Mat<float> a(1, 64), b(1, 64), c(1, 64);
    std::mt19937 rng(11);
    fill_random(a, rng);
    fill_random(b, rng);
    volatile int sink = 0;
    if (pattern == "launch") {
      for (int i = 0; i < kernels; ++i) issue.emplace_back([&sink] { sink = sink + 1; });
    } else if (pattern == "back_to_back") {
      for (int i = 0; i < kernels; ++i) issue.emplace_back([&] { host::residual_add(a, b, c); });
    } else {
      return fail(where, "unknown pattern; the host backend measures launch and back_to_back");
    }
    LaunchRecord r;
    r.pattern = pattern;
    r.kernels = kernels;
    r.time = measure(
        [&] {
          for (const auto& k : issue) k();
        },
        o);
    return r;
  }

  Result<CollectiveRecord> collective(sim::CollectiveKind kind, double bytes, const RunOptions& o) override {
    if (!mpi_ || mpi_->size() < 2) {
      return fail(std::string("collective ") + sim::to_string(kind),
                  "skipped: this process is 1 rank; MPI collectives need several "
                  "(run under mpirun -np 2 or more)");
    }
    return mpi_->collective(kind, bytes, o);
  }

  Result<StepRecord> training_step(const StepShape& shape, const RunOptions& o) override {
    // The step is sim::layer_step_ops run one kernel per entry (host_layer.hpp); its time is the
    // sum of the kernels' times, each scaled by its op's count, split by component.
    const sim::LayerStepShape ls = layer_step_shape(shape);
    if (auto d = sim::check(ls); has_errors(d)) return std::unexpected(d);
    if (sim::layer_step_flops(ls).base() > kMaxGemmFlops * 5) {
      return fail("step", "too large for the host backend (more than 1 TFLOP per step)");
    }
    auto runner = host::LayerStepRunner::create(ls);
    if (!runner) return std::unexpected(runner.error());
    for (int i = 0; i < std::max(o.warmup, 1); ++i) runner->step(nullptr);
    std::vector<double> total, gemm, attention, memory;
    const auto start = Clock::now();
    for (int i = 0; i < std::max(o.iterations, 1); ++i) {
      host::ComponentTimes t;
      runner->step(&t);
      total.push_back(t.total());
      gemm.push_back(t.gemm);
      attention.push_back(t.attention);
      memory.push_back(t.memory);
      if (since(start) > o.max_seconds_per_case) break;
    }
    StepRecord r;
    r.shape = shape;
    r.time = summarize(total);
    r.components_s["gemm"] = summarize(gemm).median_s;
    r.components_s["attention"] = summarize(attention).median_s;
    r.components_s["memory"] = summarize(memory).median_s;
    return r;
  }

 private:
  std::unique_ptr<host::MpiWorld> mpi_;
  Context ctx_;
};

}  // namespace

bool host_backend_has_mpi() {
#ifdef CAPPLAN_HAVE_MPI
  return true;
#else
  return false;
#endif
}

Result<std::unique_ptr<MeasurementBackend>> make_host_backend(const HostBackendOptions& options) {
  std::unique_ptr<host::MpiWorld> mpi;
  if (options.use_mpi) {
    auto w = host::MpiWorld::launch();
    if (!w) return std::unexpected(w.error());
    mpi = std::move(*w);
  }
  return std::unique_ptr<MeasurementBackend>(new HostBackend(std::move(mpi)));
}

}  // namespace capplan::calib
