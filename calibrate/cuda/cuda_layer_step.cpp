// SPDX-License-Identifier: Apache-2.0
#include "cuda_layer_step.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cuda_util.hpp"
#include "gemm_layout.hpp"
#include "kernels.hpp"
#include "lt_matmul.hpp"

namespace capplan::calib::cuda {
namespace {

constexpr const char* kComponentNames[] = {"gemm", "attention", "memory"};

struct Op {
  sim::Phase phase;
  int component;
  double count;
  std::function<Status()> run;
};

struct Events {
  std::vector<cudaEvent_t> ev;
  ~Events() {
    for (cudaEvent_t e : ev) (void)cudaEventDestroy(e);
  }
};

}  // namespace

Result<StepRecord> measure_layer_step(const LtResources& lt, const StepShape& shape, const RunOptions& options) {
  auto planned = layer_step_plan(shape);
  if (!planned) return std::unexpected(planned.error());
  const int dt = shape.dtype == sim::Precision::fp16 ? capplan_f16 : capplan_bf16;  // activations
  const std::size_t es = 2;
  cudaStream_t st = lt.stream;
  const float scale = 1.0f / std::sqrt(static_cast<float>(shape.hidden / shape.heads));

  // Scratch sizes: the largest operand of each kind over the plan, per GEMM dtype (fp8 steps
  // have fp8 linear GEMMs and a bf16 attention core: each reads operands of its own dtype).
  struct Operands {
    sim::Precision dtype;
    std::size_t a_bytes = 1, b_bytes = 1, c_bytes = 1;
    void *a = nullptr, *b = nullptr, *c = nullptr;
  };
  std::vector<Operands> operands;
  auto operands_of = [&](sim::Precision p) -> Operands& {
    for (auto& o : operands) {
      if (o.dtype == p) return o;
    }
    operands.push_back({p});
    return operands.back();
  };
  std::size_t elems = 1;
  std::int64_t max_rows = 1, max_cols = 1;
  std::vector<LtMatmul> plans;
  plans.reserve(planned->size());
  for (const PlannedKernel& k : *planned) {
    if (k.kernel == StepKernel::gemm) {
      const MatmulSpec& g = k.gemm;
      Operands& o = operands_of(g.dtype);
      o.a_bytes = std::max(o.a_bytes, static_cast<std::size_t>(g.stride_a * g.batch) * operand_bytes(g.dtype));
      o.b_bytes = std::max(o.b_bytes, static_cast<std::size_t>(g.stride_b * g.batch) * operand_bytes(g.dtype));
      o.c_bytes = std::max(o.c_bytes, static_cast<std::size_t>(g.stride_c * g.batch) * result_bytes(g.dtype));
      auto p = LtMatmul::create(lt.handle, g, lt.workspace_bytes);
      if (!p) return std::unexpected(p.error());
      plans.push_back(std::move(*p));
    } else {
      elems = std::max(elems, static_cast<std::size_t>(k.rows * k.cols));
      max_rows = std::max(max_rows, k.rows);
      max_cols = std::max(max_cols, k.cols);
    }
  }
  std::vector<DeviceBuffer> pool;
  auto alloc = [&](std::size_t bytes, const char* what) -> Result<void*> {
    auto buf = DeviceBuffer::allocate(bytes, std::string("step ") + what);
    if (!buf) return std::unexpected(buf.error());
    pool.push_back(std::move(*buf));
    return pool.back().get();
  };
  void* X[4] = {nullptr, nullptr, nullptr, nullptr};
  float *gamma = nullptr, *beta = nullptr, *dgamma = nullptr, *dbeta = nullptr, *mean = nullptr, *rstd = nullptr;
  {
    std::vector<std::pair<void**, std::pair<std::size_t, const char*>>> wants;
    for (auto& o : operands) {
      wants.push_back({&o.a, {o.a_bytes, "gemm A"}});
      wants.push_back({&o.b, {o.b_bytes, "gemm B"}});
      wants.push_back({&o.c, {o.c_bytes, "gemm C"}});
    }
    for (void*& x : X) wants.push_back({&x, {elems * es, "activations"}});
    for (auto& [ptr, want] : wants) {
      auto p = alloc(want.first, want.second);
      if (!p) return std::unexpected(p.error());
      *ptr = *p;
    }
    for (float** f : {&gamma, &beta, &dgamma, &dbeta}) {
      auto p = alloc(static_cast<std::size_t>(max_cols) * 4, "norm weights");
      if (!p) return std::unexpected(p.error());
      *f = static_cast<float*>(*p);
    }
    for (float** f : {&mean, &rstd}) {
      auto p = alloc(static_cast<std::size_t>(max_rows) * 4, "norm statistics");
      if (!p) return std::unexpected(p.error());
      *f = static_cast<float*>(*p);
    }
  }
  Status filled;
  std::uint64_t seed = 1;
  auto fill = [&](void* p, int kind, std::size_t n, float lo, float hi) {
    if (filled) filled = check(capplan_fill_uniform(p, kind, n, seed++, lo, hi, st), "fill");
  };
  for (const auto& o : operands) {
    fill(o.a, operand_kernel_dtype(o.dtype), o.a_bytes / operand_bytes(o.dtype), -1.0f, 1.0f);
    fill(o.b, operand_kernel_dtype(o.dtype), o.b_bytes / operand_bytes(o.dtype), -0.05f, 0.05f);
  }
  for (void* x : X) fill(x, dt, elems, -1.0f, 1.0f);
  fill(gamma, capplan_f32, static_cast<std::size_t>(max_cols), 0.9f, 1.1f);
  fill(beta, capplan_f32, static_cast<std::size_t>(max_cols), -0.1f, 0.1f);
  fill(mean, capplan_f32, static_cast<std::size_t>(max_rows), -0.1f, 0.1f);
  fill(rstd, capplan_f32, static_cast<std::size_t>(max_rows), 0.9f, 1.1f);
  if (!filled) return std::unexpected(filled.error());

  std::vector<Op> ops;
  std::size_t next_plan = 0;
  for (const PlannedKernel& k : *planned) {
    Op op{k.phase, static_cast<int>(k.component), k.count, {}};
    const auto r = static_cast<int>(k.rows), c = static_cast<int>(k.cols);
    const auto n = static_cast<std::size_t>(k.rows * k.cols);
    const std::string name = k.op;
    switch (k.kernel) {
      case StepKernel::gemm: {
        const LtMatmul* m = &plans[next_plan++];
        const Operands& o = operands_of(k.gemm.dtype);
        void *ga = o.a, *gb = o.b, *gc = o.c;
        op.run = [=, &lt] { return m->run(ga, gb, gc, lt.workspace, st); };
        break;
      }
      case StepKernel::layernorm_fwd:
        op.run = [=] { return check(capplan_layernorm_fwd(X[0], gamma, beta, X[1], mean, rstd, dt, r, c, st), name); };
        break;
      case StepKernel::layernorm_bwd:
        op.run = [=] {
          return check(capplan_layernorm_bwd(X[0], X[1], gamma, mean, rstd, nullptr, X[2], dgamma, dbeta, dt, r, c, st),
                       name);
        };
        break;
      case StepKernel::rms_norm:
        op.run = [=] { return check(capplan_rms_norm(X[0], X[1], dt, static_cast<std::size_t>(r), c, st), name); };
        break;
      case StepKernel::softmax_fwd:
        op.run = [=] {
          return check(capplan_softmax_fwd(X[0], scale, 1, dt, static_cast<std::size_t>(r), c, st), name);
        };
        break;
      case StepKernel::softmax_bwd:
        op.run = [=] {
          return check(capplan_softmax_bwd(X[0], X[1], scale, dt, static_cast<std::size_t>(r), c, st), name);
        };
        break;
      case StepKernel::gelu_fwd:
        op.run = [=] { return check(capplan_gelu_fwd(X[0], X[1], dt, n, st), name); };
        break;
      case StepKernel::gelu_bwd:
        op.run = [=] { return check(capplan_gelu_bwd(X[0], X[1], X[2], dt, n, st), name); };
        break;
      case StepKernel::gated_gelu:
        op.run = [=] { return check(capplan_gated_gelu(X[0], X[1], X[2], dt, n, st), name); };
        break;
      case StepKernel::add:
        op.run = [=] { return check(capplan_add(X[0], X[1], X[2], dt, n, st), name); };
        break;
      case StepKernel::copy:
        op.run = [=] { return check(cudaMemcpyAsync(X[1], X[0], n * es, cudaMemcpyDeviceToDevice, st), name); };
        break;
    }
    ops.push_back(std::move(op));
  }
  // Every layer's forward ops, then every layer's backward ops.
  std::vector<const Op*> order;
  for (const sim::Phase phase : {sim::Phase::forward, sim::Phase::backward}) {
    for (int l = 0; l < shape.layers; ++l) {
      for (const Op& op : ops) {
        if (op.phase == phase) order.push_back(&op);
      }
    }
  }

  // Warm-up (untimed, also an estimate of one step for sizing the timed run).
  Events warm;
  warm.ev.resize(2, nullptr);
  for (cudaEvent_t& e : warm.ev) {
    if (auto r = check(cudaEventCreate(&e), "cudaEventCreate"); !r) return std::unexpected(r.error());
  }
  const int warmup = std::max(1, options.warmup);
  if (auto r = check(cudaEventRecord(warm.ev[0], st), "cudaEventRecord"); !r) return std::unexpected(r.error());
  for (int i = 0; i < warmup; ++i) {
    for (const Op* op : order) {
      if (auto r = op->run(); !r) return std::unexpected(r.error());
    }
  }
  if (auto r = check(cudaEventRecord(warm.ev[1], st), "cudaEventRecord"); !r) return std::unexpected(r.error());
  if (auto r = check(cudaEventSynchronize(warm.ev[1]), "training step warm-up"); !r) return std::unexpected(r.error());
  float warm_ms = 0.0f;
  (void)cudaEventElapsedTime(&warm_ms, warm.ev[0], warm.ev[1]);

  // Timed iterations back to back (the GPU never waits for the host between them), an event
  // between every two ops; as many as fit in max_seconds_per_case by the warm-up's estimate.
  const double est = static_cast<double>(warm_ms) * 1e-3 / warmup;
  int iterations = std::max(1, options.iterations);
  if (est > 0) iterations = std::clamp(static_cast<int>(options.max_seconds_per_case / est), 1, iterations);
  Events events;
  events.ev.resize(order.size() * static_cast<std::size_t>(iterations) + 1, nullptr);
  for (cudaEvent_t& e : events.ev) {
    if (auto r = check(cudaEventCreate(&e), "cudaEventCreate"); !r) return std::unexpected(r.error());
  }
  if (auto r = check(cudaEventRecord(events.ev[0], st), "cudaEventRecord"); !r) return std::unexpected(r.error());
  std::size_t next = 1;
  for (int it = 0; it < iterations; ++it) {
    for (const Op* op : order) {
      if (auto r = op->run(); !r) return std::unexpected(r.error());
      if (auto r = check(cudaEventRecord(events.ev[next++], st), "cudaEventRecord"); !r) {
        return std::unexpected(r.error());
      }
    }
  }
  if (auto r = check(cudaEventSynchronize(events.ev.back()), "cudaEventSynchronize"); !r) {
    return std::unexpected(r.error());
  }
  std::vector<double> totals;
  std::vector<std::vector<double>> parts(3);
  for (int it = 0; it < iterations; ++it) {
    double part[3] = {0, 0, 0};
    const std::size_t base = static_cast<std::size_t>(it) * order.size();
    for (std::size_t i = 0; i < order.size(); ++i) {
      float ms = 0.0f;
      if (auto r = check(cudaEventElapsedTime(&ms, events.ev[base + i], events.ev[base + i + 1]),
                         "cudaEventElapsedTime");
          !r) {
        return std::unexpected(r.error());
      }
      part[order[i]->component] += static_cast<double>(ms) * 1e-3 * order[i]->count;
    }
    totals.push_back(part[0] + part[1] + part[2]);
    for (int c = 0; c < 3; ++c) parts[static_cast<std::size_t>(c)].push_back(part[c]);
  }

  StepRecord rec;
  rec.shape = shape;
  rec.time = summarize(std::move(totals));
  for (int c = 0; c < 3; ++c) {
    rec.components_s[kComponentNames[c]] = summarize(std::move(parts[static_cast<std::size_t>(c)])).median_s;
  }
  return rec;
}

}  // namespace capplan::calib::cuda
