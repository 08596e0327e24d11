// SPDX-License-Identifier: Apache-2.0
#include "cuda_layer_step.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cuda_util.hpp"
#include "kernels.hpp"
#include "gemm_layout.hpp"
#include "lt_matmul.hpp"

namespace capplan::calib::cuda {
namespace {

// The layer_step components (sim::LayerComponent): dense GEMMs, the attention core (scores,
// softmax, context and their gradients), and the remaining memory-bound kernels.
enum class Component { gemm, attention, memory };
constexpr const char* kComponentNames[] = {"gemm", "attention", "memory"};

struct Op {
  const char* name;
  Component component;
  std::function<Status()> run;
};

struct Events {
  std::vector<cudaEvent_t> ev;
  ~Events() {
    for (cudaEvent_t e : ev) (void)cudaEventDestroy(e);
  }
};

struct Layer {
  const void* x = nullptr;  // input (the previous layer's output)
  void *wqkv, *wo, *w1, *w2, *dwqkv, *dwo, *dw1, *dw2;
  float *g1, *b1, *g2, *b2, *dg1, *db1, *dg2, *db2, *mean1, *rstd1, *mean2, *rstd2;
  void *y1, *qkv, *p, *ctx, *c, *x2, *y2, *u, *g, *z, *out;
};

struct Plans {
  LtMatmul qkv, scores, context, proj, fc1, fc2;                           // forward
  LtMatmul fc2_dgrad, fc2_wgrad, fc1_dgrad, fc1_wgrad, proj_dgrad, proj_wgrad;  // backward, dense
  LtMatmul d_probs, d_value, d_query, d_key, qkv_dgrad, qkv_wgrad;              // backward, attention + qkv
};

}  // namespace

Result<StepRecord> measure_layer_step(const LtResources& lt, const StepShape& shape, const RunOptions& options) {
  const std::string where = "cuda/training_step";
  if (shape.dtype != sim::Precision::bf16 && shape.dtype != sim::Precision::fp16) {
    return fail(where + "/dtype", std::string("the CUDA training step runs bf16 or fp16; got ") +
                                      sim::to_string(shape.dtype));
  }
  if (shape.gated_ffn) return fail(where + "/gated_ffn", "the measured layer has a GELU MLP (not gated)");
  if (shape.layers <= 0 || shape.hidden <= 0 || shape.heads <= 0 || shape.ffn_hidden <= 0 || shape.seq_len <= 0 ||
      shape.micro_batch <= 0) {
    return fail(where, "layers, hidden, heads, ffn_hidden, seq_len and micro_batch must be > 0");
  }
  if (shape.hidden % shape.heads != 0) {
    return fail(where + "/heads", "must divide hidden (" + std::to_string(shape.hidden) + "); got " +
                                      std::to_string(shape.heads));
  }
  const std::int64_t b = shape.micro_batch, s = shape.seq_len, h = shape.hidden, a = shape.heads, d = h / a,
                     f = shape.ffn_hidden, T = b * s;
  if (d % 8 != 0 || f % 8 != 0 || s % 8 != 0) {
    return fail(where, "head dim (hidden/heads), ffn_hidden and seq_len must be multiples of 8 (16-byte rows)");
  }
  const int dt = shape.dtype == sim::Precision::bf16 ? capplan_bf16 : capplan_f16;
  const std::size_t es = 2;
  cudaStream_t st = lt.stream;

  std::vector<DeviceBuffer> pool;
  Diagnostics alloc_errors;
  auto alloc = [&](std::int64_t elems, std::size_t elem_size, const char* what) -> void* {
    auto buf = DeviceBuffer::allocate(static_cast<std::size_t>(elems) * elem_size, std::string("step ") + what);
    if (!buf) {
      if (alloc_errors.empty()) alloc_errors = buf.error();
      return nullptr;
    }
    pool.push_back(std::move(*buf));
    return pool.back().get();
  };
  auto act = [&](std::int64_t elems, const char* what) { return alloc(elems, es, what); };
  auto f32 = [&](std::int64_t elems, const char* what) { return static_cast<float*>(alloc(elems, 4, what)); };
  std::uint64_t seed = 1;
  Status filled;
  auto fill = [&](void* p, int dtype, std::int64_t n, float lo, float hi) {
    if (filled && p != nullptr) {
      filled = check(capplan_fill_uniform(p, dtype, static_cast<std::size_t>(n), seed++, lo, hi, st), "fill");
    }
  };

  void* x0 = act(T * h, "input");
  void* dout_top = act(T * h, "output gradient");
  void* grad[2] = {act(T * h, "gradient"), act(T * h, "gradient")};
  void* dg = act(T * f, "dgelu");
  void* du = act(T * f, "dfc1");
  void* dy2 = act(T * h, "dln2");
  void* dx2 = act(T * h, "dresidual");
  void* dctx = act(T * h, "dcontext");
  void* dp = act(b * a * s * s, "dprobs");
  void* dqkv = act(T * 3 * h, "dqkv");
  void* dy1 = act(T * h, "dln1");
  void* dnorm = act(T * h, "layernorm input gradient");
  fill(x0, dt, T * h, -1.0f, 1.0f);
  fill(dout_top, dt, T * h, -1e-2f, 1e-2f);

  std::vector<Layer> layers(static_cast<std::size_t>(shape.layers));
  for (std::size_t l = 0; l < layers.size(); ++l) {
    Layer& L = layers[l];
    L.x = l == 0 ? x0 : layers[l - 1].out;
    L.wqkv = act(h * 3 * h, "w_qkv");
    L.wo = act(h * h, "w_o");
    L.w1 = act(h * f, "w_1");
    L.w2 = act(f * h, "w_2");
    L.dwqkv = act(h * 3 * h, "dw_qkv");
    L.dwo = act(h * h, "dw_o");
    L.dw1 = act(h * f, "dw_1");
    L.dw2 = act(f * h, "dw_2");
    for (float** p : {&L.g1, &L.b1, &L.g2, &L.b2, &L.dg1, &L.db1, &L.dg2, &L.db2}) *p = f32(h, "norm weights");
    for (float** p : {&L.mean1, &L.rstd1, &L.mean2, &L.rstd2}) *p = f32(T, "norm statistics");
    L.y1 = act(T * h, "ln1");
    L.qkv = act(T * 3 * h, "qkv");
    L.p = act(b * a * s * s, "scores");
    L.ctx = act(T * h, "context");
    L.c = act(T * h, "proj");
    L.x2 = act(T * h, "residual");
    L.y2 = act(T * h, "ln2");
    L.u = act(T * f, "fc1");
    L.g = act(T * f, "gelu");
    L.z = act(T * h, "fc2");
    L.out = act(T * h, "output");
    if (!alloc_errors.empty()) return std::unexpected(alloc_errors);
    const float wh = 1.0f / std::sqrt(static_cast<float>(h)), wf = 1.0f / std::sqrt(static_cast<float>(f));
    fill(L.wqkv, dt, h * 3 * h, -wh, wh);
    fill(L.wo, dt, h * h, -wh, wh);
    fill(L.w1, dt, h * f, -wh, wh);
    fill(L.w2, dt, f * h, -wf, wf);
    fill(L.g1, capplan_f32, h, 0.9f, 1.1f);
    fill(L.b1, capplan_f32, h, -0.1f, 0.1f);
    fill(L.g2, capplan_f32, h, 0.9f, 1.1f);
    fill(L.b2, capplan_f32, h, -0.1f, 0.1f);
  }
  if (!alloc_errors.empty()) return std::unexpected(alloc_errors);
  if (!filled) return std::unexpected(filled.error());

  // --- GEMM plans (gemm_layout.hpp); attention reads Q, K, V per head in place ---
  const LayerGemmSpecs specs = layer_gemm_specs(shape);
  Plans plans;
  Diagnostics plan_errors;
  auto plan = [&](LtMatmul& out, const MatmulSpec& sp) {
    if (!plan_errors.empty()) return;
    auto p = LtMatmul::create(lt.handle, sp, lt.workspace_bytes);
    if (!p) {
      plan_errors = p.error();
      return;
    }
    out = std::move(*p);
  };
  const std::int64_t h3 = 3 * h, ss = s * s;
  plan(plans.qkv, specs.qkv);
  plan(plans.scores, specs.scores);
  plan(plans.context, specs.context);
  plan(plans.proj, specs.proj);
  plan(plans.fc1, specs.fc1);
  plan(plans.fc2, specs.fc2);
  plan(plans.fc2_dgrad, specs.fc2_dgrad);
  plan(plans.fc2_wgrad, specs.fc2_wgrad);
  plan(plans.fc1_dgrad, specs.fc1_dgrad);
  plan(plans.fc1_wgrad, specs.fc1_wgrad);
  plan(plans.proj_dgrad, specs.proj_dgrad);
  plan(plans.proj_wgrad, specs.proj_wgrad);
  plan(plans.d_probs, specs.d_probs);
  plan(plans.d_value, specs.d_value);
  plan(plans.d_query, specs.d_query);
  plan(plans.d_key, specs.d_key);
  plan(plans.qkv_dgrad, specs.qkv_dgrad);
  plan(plans.qkv_wgrad, specs.qkv_wgrad);
  if (!plan_errors.empty()) return std::unexpected(plan_errors);

  auto at = [es](const void* p, std::int64_t elems) {
    return static_cast<void*>(static_cast<char*>(const_cast<void*>(p)) + static_cast<std::size_t>(elems) * es);
  };
  auto gemm = [&](const LtMatmul& m, const void* A, const void* B, void* C) {
    return m.run(A, B, C, lt.workspace, st);
  };
  // One batched product per micro-batch sample (the batch runs over heads).
  auto per_sample = [&](const LtMatmul& m, const void* A, std::int64_t sa, const void* B, std::int64_t sb, void* C,
                        std::int64_t sc) -> Status {
    for (std::int64_t i = 0; i < b; ++i) {
      if (auto r = gemm(m, at(A, i * sa), at(B, i * sb), at(C, i * sc)); !r) return r;
    }
    return {};
  };
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const auto n_th = static_cast<std::size_t>(T * h), n_tf = static_cast<std::size_t>(T * f);
  const auto rows_p = static_cast<std::size_t>(b * a * s);
  const std::int64_t tok3 = s * h3, tok1 = s * h, sc = a * ss;  // per-sample strides

  std::vector<Op> ops;
  for (Layer& L : layers) {
    Layer* P = &L;
    ops.push_back({"layernorm_fwd", Component::memory, [=] {
                     return check(capplan_layernorm_fwd(P->x, P->g1, P->b1, P->y1, P->mean1, P->rstd1, dt,
                                                        static_cast<int>(T), static_cast<int>(h), st),
                                  "layernorm_fwd");
                   }});
    ops.push_back({"qkv", Component::gemm, [=, &plans] { return gemm(plans.qkv, P->y1, P->wqkv, P->qkv); }});
    ops.push_back({"attn_scores", Component::attention,
                   [=, &plans] { return per_sample(plans.scores, P->qkv, tok3, at(P->qkv, h), tok3, P->p, sc); }});
    ops.push_back({"softmax_fwd", Component::attention, [=] {
                     return check(capplan_softmax_fwd(P->p, scale, 1, dt, rows_p, static_cast<int>(s), st),
                                  "softmax_fwd");
                   }});
    ops.push_back({"attn_context", Component::attention,
                   [=, &plans] { return per_sample(plans.context, P->p, sc, at(P->qkv, 2 * h), tok3, P->ctx, tok1); }});
    ops.push_back({"attn_proj", Component::gemm, [=, &plans] { return gemm(plans.proj, P->ctx, P->wo, P->c); }});
    ops.push_back({"residual_add", Component::memory,
                   [=] { return check(capplan_add(P->x, P->c, P->x2, dt, n_th, st), "add"); }});
    ops.push_back({"layernorm_fwd", Component::memory, [=] {
                     return check(capplan_layernorm_fwd(P->x2, P->g2, P->b2, P->y2, P->mean2, P->rstd2, dt,
                                                        static_cast<int>(T), static_cast<int>(h), st),
                                  "layernorm_fwd");
                   }});
    ops.push_back({"fc1", Component::gemm, [=, &plans] { return gemm(plans.fc1, P->y2, P->w1, P->u); }});
    ops.push_back({"gelu_fwd", Component::memory,
                   [=] { return check(capplan_gelu_fwd(P->u, P->g, dt, n_tf, st), "gelu_fwd"); }});
    ops.push_back({"fc2", Component::gemm, [=, &plans] { return gemm(plans.fc2, P->g, P->w2, P->z); }});
    ops.push_back({"residual_add", Component::memory,
                   [=] { return check(capplan_add(P->x2, P->z, P->out, dt, n_th, st), "add"); }});
  }
  for (std::size_t li = layers.size(); li-- > 0;) {
    Layer* P = &layers[li];
    // Gradient arriving at this layer's output, and where its input gradient goes.
    const void* dout = li + 1 == layers.size() ? dout_top : grad[(li + 1) % 2];
    void* dx = grad[li % 2];
    ops.push_back({"fc2_dgrad", Component::gemm, [=, &plans] { return gemm(plans.fc2_dgrad, dout, P->w2, dg); }});
    ops.push_back({"fc2_wgrad", Component::gemm, [=, &plans] { return gemm(plans.fc2_wgrad, P->g, dout, P->dw2); }});
    ops.push_back({"gelu_bwd", Component::memory,
                   [=] { return check(capplan_gelu_bwd(P->u, dg, du, dt, n_tf, st), "gelu_bwd"); }});
    ops.push_back({"fc1_dgrad", Component::gemm, [=, &plans] { return gemm(plans.fc1_dgrad, du, P->w1, dy2); }});
    ops.push_back({"fc1_wgrad", Component::gemm, [=, &plans] { return gemm(plans.fc1_wgrad, P->y2, du, P->dw1); }});
    ops.push_back({"layernorm_bwd", Component::memory, [=] {
                     return check(capplan_layernorm_bwd(dy2, P->x2, P->g2, P->mean2, P->rstd2, nullptr, dnorm, P->dg2,
                                                        P->db2, dt, static_cast<int>(T), static_cast<int>(h), st),
                                  "layernorm_bwd");
                   }});
    ops.push_back({"residual_add", Component::memory,  // dx2 = dout + LN2 backward
                   [=] { return check(capplan_add(dout, dnorm, dx2, dt, n_th, st), "add"); }});
    ops.push_back({"attn_proj_dgrad", Component::gemm, [=, &plans] { return gemm(plans.proj_dgrad, dx2, P->wo, dctx); }});
    ops.push_back({"attn_proj_wgrad", Component::gemm, [=, &plans] { return gemm(plans.proj_wgrad, P->ctx, dx2, P->dwo); }});
    ops.push_back({"attn_dprobs", Component::attention,
                   [=, &plans] { return per_sample(plans.d_probs, dctx, tok1, at(P->qkv, 2 * h), tok3, dp, sc); }});
    ops.push_back({"attn_dv", Component::attention,
                   [=, &plans] { return per_sample(plans.d_value, P->p, sc, dctx, tok1, at(dqkv, 2 * h), tok3); }});
    ops.push_back({"softmax_bwd", Component::attention, [=] {
                     return check(capplan_softmax_bwd(P->p, dp, scale, dt, rows_p, static_cast<int>(s), st),
                                  "softmax_bwd");
                   }});
    ops.push_back({"attn_dq", Component::attention,
                   [=, &plans] { return per_sample(plans.d_query, dp, sc, at(P->qkv, h), tok3, dqkv, tok3); }});
    ops.push_back({"attn_dk", Component::attention,
                   [=, &plans] { return per_sample(plans.d_key, dp, sc, P->qkv, tok3, at(dqkv, h), tok3); }});
    ops.push_back({"qkv_dgrad", Component::gemm, [=, &plans] { return gemm(plans.qkv_dgrad, dqkv, P->wqkv, dy1); }});
    ops.push_back({"qkv_wgrad", Component::gemm, [=, &plans] { return gemm(plans.qkv_wgrad, P->y1, dqkv, P->dwqkv); }});
    ops.push_back({"layernorm_bwd", Component::memory, [=] {
                     return check(capplan_layernorm_bwd(dy1, P->x, P->g1, P->mean1, P->rstd1, nullptr, dnorm, P->dg1,
                                                        P->db1, dt, static_cast<int>(T), static_cast<int>(h), st),
                                  "layernorm_bwd");
                   }});
    ops.push_back({"residual_add", Component::memory,  // dx = dx2 + LN1 backward
                   [=] { return check(capplan_add(dx2, dnorm, dx, dt, n_th, st), "add"); }});
  }

  // Warm-up (untimed, also an estimate of one step for sizing the timed run), then the check
  // phase: the input gradient must be finite (a layout or kernel bug shows up as NaN/Inf).
  Events warm;
  warm.ev.resize(2, nullptr);
  for (cudaEvent_t& e : warm.ev) {
    if (auto r = check(cudaEventCreate(&e), "cudaEventCreate"); !r) return std::unexpected(r.error());
  }
  const int warmup = std::max(1, options.warmup);
  if (auto r = check(cudaEventRecord(warm.ev[0], st), "cudaEventRecord"); !r) return std::unexpected(r.error());
  for (int i = 0; i < warmup; ++i) {
    for (const Op& op : ops) {
      if (auto r = op.run(); !r) return std::unexpected(r.error());
    }
  }
  if (auto r = check(cudaEventRecord(warm.ev[1], st), "cudaEventRecord"); !r) return std::unexpected(r.error());
  if (auto r = check(cudaEventSynchronize(warm.ev[1]), "training step warm-up"); !r) return std::unexpected(r.error());
  float warm_ms = 0.0f;
  (void)cudaEventElapsedTime(&warm_ms, warm.ev[0], warm.ev[1]);
  {
    void* dx0 = grad[0];
    auto tmp = DeviceBuffer::allocate(n_th * sizeof(float), "step check");
    if (!tmp) return std::unexpected(tmp.error());
    std::vector<float> host(n_th);
    Status ok = check(capplan_to_f32(dx0, dt, tmp->as<float>(), n_th, st), "to_f32");
    if (ok) ok = check(cudaMemcpyAsync(host.data(), tmp->get(), n_th * sizeof(float), cudaMemcpyDeviceToHost, st), "copy");
    if (ok) ok = check(cudaStreamSynchronize(st), "copy");
    if (!ok) return std::unexpected(ok.error());
    for (float v : host) {
      if (!std::isfinite(v)) return fail(where, "the backward pass produced a non-finite input gradient");
    }
  }

  // Timed iterations back to back (the GPU never waits for the host between them), an event
  // between every two ops; as many as fit in max_seconds_per_case by the warm-up's estimate.
  const double est = static_cast<double>(warm_ms) * 1e-3 / warmup;
  int iterations = std::max(1, options.iterations);
  if (est > 0) iterations = std::clamp(static_cast<int>(options.max_seconds_per_case / est), 1, iterations);
  Events events;
  events.ev.resize(ops.size() * static_cast<std::size_t>(iterations) + 1, nullptr);
  for (cudaEvent_t& e : events.ev) {
    if (auto r = check(cudaEventCreate(&e), "cudaEventCreate"); !r) return std::unexpected(r.error());
  }
  if (auto r = check(cudaEventRecord(events.ev[0], st), "cudaEventRecord"); !r) return std::unexpected(r.error());
  std::size_t next = 1;
  for (int it = 0; it < iterations; ++it) {
    for (const Op& op : ops) {
      if (auto r = op.run(); !r) return std::unexpected(r.error());
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
    const std::size_t base = static_cast<std::size_t>(it) * ops.size();
    for (std::size_t i = 0; i < ops.size(); ++i) {
      float ms = 0.0f;
      if (auto r = check(cudaEventElapsedTime(&ms, events.ev[base + i], events.ev[base + i + 1]),
                         "cudaEventElapsedTime");
          !r) {
        return std::unexpected(r.error());
      }
      part[static_cast<int>(ops[i].component)] += static_cast<double>(ms) * 1e-3;
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
