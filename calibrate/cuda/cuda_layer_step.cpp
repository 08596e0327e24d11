// SPDX-License-Identifier: Apache-2.0
#include "cuda_layer_step.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cuda_util.hpp"
#include "gemm_layout.hpp"
#include "kernels.hpp"
#include "lt_matmul.hpp"
#include "timing_plan.hpp"

namespace capplan::calib::cuda {
namespace {

constexpr const char* kComponentNames[] = {"gemm", "attention", "memory"};

// The component the fused-attention GEMMs are also reported under (records.hpp, StepRecord).
constexpr const char* kAttentionBatchedGemm = "attention_batched_gemm";

struct Op {
  sim::Phase phase;
  int component;
  double count;
  bool fused_attention;
  std::function<Status(std::size_t slot)> run;  // slot: which copy of the weights (B operands) to read
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

  // Scratch sizes: the largest A and C operand over the plan, per GEMM dtype (fp8 steps have fp8
  // linear GEMMs and a bf16 attention core: each reads operands of its own dtype). B operands (a
  // linear GEMM's weight; the keys or values of attention, a decode step's KV cache) are not shared:
  // each GEMM of the layer has its own (b_offset into one weight set), as each layer of a model
  // reads weights no other GEMM reads, and the set is copied into `slots` copies spanning twice the
  // L2 (rotation_sets), layer l of iteration i reading copy (i * layers + l) % slots. So every GEMM
  // streams its B from HBM, as in real decoding, where a shared buffer would come from the L2.
  struct Operands {
    sim::Precision dtype;
    std::size_t a_bytes = 1, c_bytes = 1;
    void *a = nullptr, *c = nullptr;
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
  std::vector<std::size_t> b_offset, b_bytes;  // per GEMM of the plan, in plan order
  std::size_t weight_set_bytes = 0;
  for (const PlannedKernel& k : *planned) {
    if (k.kernel == StepKernel::gemm) {
      const MatmulSpec& g = k.gemm;
      Operands& o = operands_of(g.dtype);
      o.a_bytes = std::max(o.a_bytes, static_cast<std::size_t>(g.stride_a * g.batch) * operand_bytes(g.dtype));
      o.c_bytes = std::max(o.c_bytes, static_cast<std::size_t>(g.stride_c * g.batch) * result_bytes(g.dtype));
      const std::size_t nb = static_cast<std::size_t>(g.stride_b * g.batch) * operand_bytes(g.dtype);
      b_offset.push_back(weight_set_bytes);
      b_bytes.push_back(nb);
      weight_set_bytes += (std::max<std::size_t>(nb, 1) + 255) / 256 * 256;  // tn_spec: 256-byte aligned
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
  const auto slots = static_cast<std::size_t>(
      rotation_sets(static_cast<double>(weight_set_bytes), lt.l2_bytes, 2.0 * 1024 * 1024 * 1024));
  void* weights = nullptr;  // `slots` weight sets of weight_set_bytes each
  void* X[4] = {nullptr, nullptr, nullptr, nullptr};
  float *gamma = nullptr, *beta = nullptr, *dgamma = nullptr, *dbeta = nullptr, *mean = nullptr, *rstd = nullptr;
  {
    std::vector<std::pair<void**, std::pair<std::size_t, const char*>>> wants;
    for (auto& o : operands) {
      wants.push_back({&o.a, {o.a_bytes, "gemm A"}});
      wants.push_back({&o.c, {o.c_bytes, "gemm C"}});
    }
    wants.push_back({&weights, {std::max<std::size_t>(slots * weight_set_bytes, 1), "gemm B (weights)"}});
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
  }
  for (std::size_t slot = 0; slot < slots; ++slot) {
    std::size_t g = 0;
    for (const PlannedKernel& k : *planned) {
      if (k.kernel != StepKernel::gemm) continue;
      char* b = static_cast<char*>(weights) + slot * weight_set_bytes + b_offset[g];
      fill(b, operand_kernel_dtype(k.gemm.dtype), b_bytes[g] / operand_bytes(k.gemm.dtype), -0.05f, 0.05f);
      ++g;
    }
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
    Op op{k.phase, static_cast<int>(k.component), k.count, k.kernel == StepKernel::gemm && k.fused_attention, {}};
    const auto r = static_cast<int>(k.rows), c = static_cast<int>(k.cols);
    const auto n = static_cast<std::size_t>(k.rows * k.cols);
    const std::string name = k.op;
    switch (k.kernel) {
      case StepKernel::gemm: {
        const std::size_t g = next_plan++;
        const LtMatmul* m = &plans[g];
        const Operands& o = operands_of(k.gemm.dtype);
        void *ga = o.a, *gc = o.c;
        char* gb = static_cast<char*>(weights) + b_offset[g];
        op.run = [=, &lt](std::size_t slot) {
          return m->run(ga, gb + slot * weight_set_bytes, gc, lt.workspace, st);
        };
        break;
      }
      case StepKernel::layernorm_fwd:
        op.run = [=](std::size_t) {
          return check(capplan_layernorm_fwd(X[0], gamma, beta, X[1], mean, rstd, dt, r, c, st), name);
        };
        break;
      case StepKernel::layernorm_bwd:
        op.run = [=](std::size_t) {
          return check(capplan_layernorm_bwd(X[0], X[1], gamma, mean, rstd, nullptr, X[2], dgamma, dbeta, dt, r, c, st),
                       name);
        };
        break;
      case StepKernel::rms_norm:
        op.run = [=](std::size_t) {
          return check(capplan_rms_norm(X[0], X[1], dt, static_cast<std::size_t>(r), c, st), name);
        };
        break;
      case StepKernel::softmax_fwd:
        op.run = [=](std::size_t) {
          return check(capplan_softmax_fwd(X[0], scale, 1, dt, static_cast<std::size_t>(r), c, st), name);
        };
        break;
      case StepKernel::softmax_bwd:
        op.run = [=](std::size_t) {
          return check(capplan_softmax_bwd(X[0], X[1], scale, dt, static_cast<std::size_t>(r), c, st), name);
        };
        break;
      case StepKernel::gelu_fwd:
        op.run = [=](std::size_t) { return check(capplan_gelu_fwd(X[0], X[1], dt, n, st), name); };
        break;
      case StepKernel::gelu_bwd:
        op.run = [=](std::size_t) { return check(capplan_gelu_bwd(X[0], X[1], X[2], dt, n, st), name); };
        break;
      case StepKernel::gated_gelu:
        op.run = [=](std::size_t) { return check(capplan_gated_gelu(X[0], X[1], X[2], dt, n, st), name); };
        break;
      case StepKernel::add:
        op.run = [=](std::size_t) { return check(capplan_add(X[0], X[1], X[2], dt, n, st), name); };
        break;
      case StepKernel::copy:
        op.run = [=](std::size_t) {
          return check(cudaMemcpyAsync(X[1], X[0], n * es, cudaMemcpyDeviceToDevice, st), name);
        };
        break;
    }
    ops.push_back(std::move(op));
  }
  // Every layer's forward ops, then every layer's backward ops; each entry knows its layer.
  struct Step {
    const Op* op;
    int layer;
  };
  std::vector<Step> order;
  for (const sim::Phase phase : {sim::Phase::forward, sim::Phase::backward}) {
    for (int l = 0; l < shape.layers; ++l) {
      for (const Op& op : ops) {
        if (op.phase == phase) order.push_back({&op, l});
      }
    }
  }
  std::size_t pass = 0;  // iterations run so far (warm-up included): picks the weight copies
  const auto slot_of = [&](int layer) {
    return (pass * static_cast<std::size_t>(shape.layers) + static_cast<std::size_t>(layer)) % slots;
  };

  // Warm-up (untimed), enqueued as the timed loop is (an event recorded after every op): it
  // estimates one step on the device (events around it) and its enqueueing on the host (the
  // fastest warm-up iteration by the host clock), for sizing the timed run and its spins.
  using Clock = std::chrono::steady_clock;
  Events warm;
  warm.ev.resize(3, nullptr);
  for (cudaEvent_t& e : warm.ev) {
    if (auto r = check(cudaEventCreate(&e), "cudaEventCreate"); !r) return std::unexpected(r.error());
  }
  const int warmup = std::max(1, options.warmup);
  if (auto r = check(cudaEventRecord(warm.ev[0], st), "cudaEventRecord"); !r) return std::unexpected(r.error());
  double host_s = INFINITY;
  for (int i = 0; i < warmup; ++i, ++pass) {
    const auto t0 = Clock::now();
    if (auto r = check(cudaEventRecord(warm.ev[2], st), "cudaEventRecord"); !r) return std::unexpected(r.error());
    for (const Step& step : order) {
      if (auto r = step.op->run(slot_of(step.layer)); !r) return std::unexpected(r.error());
      if (auto r = check(cudaEventRecord(warm.ev[2], st), "cudaEventRecord"); !r) return std::unexpected(r.error());
    }
    host_s = std::min(host_s, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  if (auto r = check(cudaEventRecord(warm.ev[1], st), "cudaEventRecord"); !r) return std::unexpected(r.error());
  if (auto r = check(cudaEventSynchronize(warm.ev[1]), "training step warm-up"); !r) return std::unexpected(r.error());
  float warm_ms = 0.0f;
  if (auto r = check(cudaEventElapsedTime(&warm_ms, warm.ev[0], warm.ev[1]), "cudaEventElapsedTime"); !r) {
    return std::unexpected(r.error());
  }

  // Timed iterations, as many as fit in max_seconds_per_case by the warm-up's estimate, each with
  // an event before its first op and after every op, queued in batches behind a spin kernel long
  // enough for the host to enqueue the batch (timing_plan.hpp): the GPU runs the ops back to back
  // without waiting for the host, so each interval is an op's device time even where the op is
  // shorter than its launch. A spin only ever lies between iterations, outside every interval.
  const double est = static_cast<double>(warm_ms) * 1e-3 / warmup;
  int iterations = std::max(1, options.iterations);
  if (est > 0) iterations = std::clamp(static_cast<int>(options.max_seconds_per_case / est), 1, iterations);
  const std::size_t per_iteration = order.size() + 1;  // events of one iteration
  Events events;
  events.ev.resize(per_iteration * static_cast<std::size_t>(iterations), nullptr);
  for (cudaEvent_t& e : events.ev) {
    if (auto r = check(cudaEventCreate(&e), "cudaEventCreate"); !r) return std::unexpected(r.error());
  }
  // Per op: its kernel (two for a split-K cuBLASLt product) and its event.
  const QueuePlan q = plan_queue(iterations, host_s, static_cast<int>(3 * order.size() + 1));
  for (int first = 0; first < iterations; first += q.per_batch) {
    if (auto r = check(capplan_spin(static_cast<unsigned long long>(q.spin_s * 1e9), st), "spin kernel"); !r) {
      return std::unexpected(r.error());
    }
    for (int it = first; it < std::min(iterations, first + q.per_batch); ++it, ++pass) {
      std::size_t next = static_cast<std::size_t>(it) * per_iteration;
      if (auto r = check(cudaEventRecord(events.ev[next++], st), "cudaEventRecord"); !r) {
        return std::unexpected(r.error());
      }
      for (const Step& step : order) {
        if (auto r = step.op->run(slot_of(step.layer)); !r) return std::unexpected(r.error());
        if (auto r = check(cudaEventRecord(events.ev[next++], st), "cudaEventRecord"); !r) {
          return std::unexpected(r.error());
        }
      }
    }
  }
  if (auto r = check(cudaEventSynchronize(events.ev.back()), "cudaEventSynchronize"); !r) {
    return std::unexpected(r.error());
  }
  std::vector<double> totals, fused;
  std::vector<std::vector<double>> parts(3);
  bool has_fused = false;
  for (int it = 0; it < iterations; ++it) {
    double part[3] = {0, 0, 0};
    double fused_s = 0;
    const std::size_t base = static_cast<std::size_t>(it) * per_iteration;
    for (std::size_t i = 0; i < order.size(); ++i) {
      float ms = 0.0f;
      if (auto r = check(cudaEventElapsedTime(&ms, events.ev[base + i], events.ev[base + i + 1]),
                         "cudaEventElapsedTime");
          !r) {
        return std::unexpected(r.error());
      }
      const Op& op = *order[i].op;
      const double t = static_cast<double>(ms) * 1e-3 * op.count;
      part[op.component] += t;
      if (op.fused_attention) {
        fused_s += t;
        has_fused = true;
      }
    }
    totals.push_back(part[0] + part[1] + part[2]);
    for (int c = 0; c < 3; ++c) parts[static_cast<std::size_t>(c)].push_back(part[c]);
    fused.push_back(fused_s);
  }

  StepRecord rec;
  rec.shape = shape;
  rec.time = summarize(std::move(totals));
  for (int c = 0; c < 3; ++c) {
    rec.components_s[kComponentNames[c]] = summarize(std::move(parts[static_cast<std::size_t>(c)])).median_s;
  }
  if (has_fused) rec.components_s[kAttentionBatchedGemm] = summarize(std::move(fused)).median_s;
  return rec;
}

}  // namespace capplan::calib::cuda
