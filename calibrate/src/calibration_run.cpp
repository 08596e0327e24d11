// SPDX-License-Identifier: Apache-2.0
#include "capplan/calibrate/calibration_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <new>
#include <set>
#include <tuple>
#include <variant>

#include "capplan/sim/cost/layer_step.hpp"

namespace capplan::calib {
namespace {

constexpr double KiB = 1024.0, MiB = 1024.0 * KiB, GiB = 1024.0 * MiB;

bool is_host(const MeasurementBackend& b) { return b.name() == "host"; }

// General GEMM grid: squares, then the three tall/wide/deep shapes of transformer layers
// (tokens x hidden, hidden x ffn, K = tokens for weight gradients).
std::vector<GemmShape> gemm_grid(const MeasurementBackend& b, bool quick, sim::Precision dtype) {
  std::vector<std::int64_t> squares;
  std::int64_t rect = 0;
  if (is_host(b)) {
    // Eigen's 16-bit products are not vectorised (~0.1-0.3 GFLOP/s): a grid of small shapes,
    // still six or more distinct ones so the fitter can fit them.
    if (dtype == sim::Precision::fp32) {
      squares = quick ? std::vector<std::int64_t>{64, 128, 256, 512} : std::vector<std::int64_t>{64, 128, 256, 512, 1024, 2048};
      rect = quick ? 256 : 1024;
    } else {
      squares = quick ? std::vector<std::int64_t>{32, 64, 128, 256} : std::vector<std::int64_t>{32, 64, 128, 256, 512};
      rect = quick ? 64 : 128;
    }
  } else {
    squares = quick ? std::vector<std::int64_t>{512, 1024, 2048, 4096, 8192}
                    : std::vector<std::int64_t>{256, 512, 1024, 2048, 4096, 6144, 8192, 12288, 16384};
    rect = quick ? 4096 : 8192;
  }
  std::vector<GemmShape> out;
  for (auto n : squares) out.push_back({n, n, n, 1, dtype});
  if (rect > 0) {
    out.push_back({4 * rect, rect, rect, 1, dtype});
    out.push_back({rect, 4 * rect, rect, 1, dtype});
    out.push_back({rect, rect, 4 * rect, 1, dtype});
  }
  if (!is_host(b)) {
    // The small-GEMM curve: few rows against a layer-sized weight (decode batches, a micro-batch
    // of one short sequence, LoRA adapters), where wave quantisation and launch dominate.
    const std::vector<std::int64_t> rows = quick ? std::vector<std::int64_t>{16, 128}
                                                 : std::vector<std::int64_t>{1, 8, 16, 32, 64, 128, 256};
    for (auto m : rows) out.push_back({m, 4096, 4096, 1, dtype});
    if (!quick) out.push_back({64, 64, 64, 1, dtype});
    const bool serving_dtype = dtype == sim::Precision::bf16 || dtype == sim::Precision::fp16 ||
                               dtype == sim::Precision::fp8;
    if (!quick && serving_dtype) {
      // Decode-shaped linears: a decode batch against an 8B-class layer's
      // up/gate (4096 x 14336) and down (14336 x 4096) weights, streamed from memory.
      for (auto m : rows) {
        out.push_back({m, 14336, 4096, 1, dtype});
        out.push_back({m, 4096, 14336, 1, dtype});
      }
    }
    if (!quick && (dtype == sim::Precision::bf16 || dtype == sim::Precision::fp16)) {
      // Decode attention as the op list prices it (sim/src/lowering/serving_attention.cpp): per sequence and KV head, a
      // group of query heads against the cached keys (group x ctx x 128), then against the values
      // in 512-key splits (group x 128 x 512, batch x splits); 256 sequence-heads, MHA to GQA 8.
      for (std::int64_t group : {1, 4, 8}) {
        for (std::int64_t ctx : {1024, 4096, 16384}) {
          out.push_back({group, ctx, 128, 256, dtype});
          out.push_back({group, 128, 512, 256 * (ctx / 512), dtype});
        }
      }
    }
  }
  return out;
}

std::vector<double> geometric(double from, double to, double factor) {
  std::vector<double> v;
  for (double x = from; x <= to * (1 + 1e-9); x *= factor) v.push_back(x);
  return v;
}

}  // namespace

std::string Case::label() const {
  switch (kind) {
    case CaseKind::gemm:
      return std::string("gemm ") + sim::to_string(gemm.dtype) + " m=" + std::to_string(gemm.m) +
             " n=" + std::to_string(gemm.n) + " k=" + std::to_string(gemm.k) +
             (gemm.batch > 1 ? " batch=" + std::to_string(gemm.batch) : "");
    case CaseKind::memory:
      return "memory " + pattern + " " + std::to_string(static_cast<long long>(bytes)) + " B";
    case CaseKind::collective:
      return std::string(sim::to_string(collective)) + " " + std::to_string(static_cast<long long>(bytes)) + " B";
    case CaseKind::launch:
      return "launch " + pattern + " " + std::to_string(kernels) + " kernels";
    case CaseKind::step:
      return "training step h=" + std::to_string(step.hidden) + " heads=" + std::to_string(step.heads) +
             " seq=" + std::to_string(step.seq_len) + " mb=" + std::to_string(step.micro_batch) +
             " layers=" + std::to_string(step.layers) + " " + sim::to_string(step.dtype) +
             (step.kv_heads > 0 && step.kv_heads != step.heads ? " kv_heads=" + std::to_string(step.kv_heads) : "") +
             (step.gated_ffn ? " swiglu" : "") + (step.rmsnorm ? " rmsnorm" : "") + (step.rope ? " rope" : "") +
             (step.flash_attention ? " flash" : "");
  }
  return "?";
}

sim::LayerStepShape layer_step_shape(const StepShape& s) {
  sim::LayerStepShape l;
  l.layers = s.layers;
  l.hidden = s.hidden;
  l.heads = s.heads;
  l.ffn_hidden = s.ffn_hidden;
  l.seq_len = s.seq_len;
  l.micro_batch = s.micro_batch;
  l.dtype = s.dtype;
  l.kv_heads = s.kv_heads;
  l.gated_ffn = s.gated_ffn;
  l.rmsnorm = s.rmsnorm;
  l.rope = s.rope;
  l.flash_attention = s.flash_attention;
  l.decode_context = s.decode_context;
  return l;
}

StepShape default_step_shape(const std::string& backend, bool /*quick*/) {
  StepShape s;
  if (backend == "host") {
    // ~5 GFLOP per step: about 0.1-0.5 s on one CPU core, GEMM-dominated like a real layer
    // (d_head 64 as in GPT-3 and Llama).
    s.hidden = 512;
    s.heads = 8;
    s.seq_len = 256;
    s.micro_batch = 1;
    s.dtype = sim::Precision::fp32;
  } else {
    // A Llama-2-7B-sized layer (h 4096, 32 heads, seq 2048) in bf16 with a GELU 4h MLP.
    s.hidden = 4096;
    s.heads = 32;
    s.seq_len = 2048;
    s.micro_batch = 1;
    s.dtype = sim::Precision::bf16;
  }
  s.ffn_hidden = 4 * s.hidden;
  s.layers = 1;
  return s;
}

std::vector<GemmShape> gemm_shapes_of(const sim::StepOps& ops) {
  std::vector<GemmShape> out;
  for (const auto& op : ops.ops) {
    if (const auto* g = std::get_if<sim::GemmOp>(&op.op)) {
      const GemmShape s{g->m, g->n, g->k, g->batch, g->dtype};
      if (s.m > 0 && s.n > 0 && s.k > 0 && s.batch > 0 && std::find(out.begin(), out.end(), s) == out.end()) {
        out.push_back(s);
      }
    }
  }
  return out;
}

std::vector<Case> plan_sweep(const MeasurementBackend& b, const PlanOptions& o) {
  std::vector<Case> plan;
  const bool host = is_host(b);
  std::vector<StepShape> steps = o.steps;
  if (steps.empty()) steps.push_back(default_step_shape(b.name(), o.quick));

  if (!o.collectives_only) {
    std::vector<GemmShape> gemms;
    auto add = [&](const GemmShape& s) {
      if (b.supports(s.dtype) && std::find(gemms.begin(), gemms.end(), s) == gemms.end()) gemms.push_back(s);
    };
    for (auto dtype : {sim::Precision::fp32, sim::Precision::tf32, sim::Precision::bf16, sim::Precision::fp16,
                       sim::Precision::fp8}) {
      if (!b.supports(dtype)) continue;
      for (const auto& s : gemm_grid(b, o.quick, dtype)) add(s);
    }
    // Exactly the GEMMs of the training steps `capplan validate` runs, and of the planned scenarios.
    for (const auto& step : steps) {
      for (const auto& op : sim::layer_step_ops(layer_step_shape(step))) {
        if (const auto* g = std::get_if<sim::GemmOp>(&op.op.op)) add({g->m, g->n, g->k, g->batch, g->dtype});
      }
    }
    for (const auto& s : o.extra_gemms) add(s);
    for (const auto& s : gemms) {
      Case c;
      c.kind = CaseKind::gemm;
      c.gemm = s;
      plan.push_back(c);
    }

    // Memory patterns over sizes from cache-resident to well past the last-level cache (host), and
    // on a GPU from 64 KiB (a decode step's norms and activations: launch and HBM latency dominate)
    // to GiBs (bandwidth); the CUDA backend reads every size from HBM (CudaBackend::memory rotates
    // the small ones over copies spanning twice the L2).
    const double max_mem = o.max_memory_bytes > 0 ? o.max_memory_bytes
                           : host                 ? (o.quick ? 32 * MiB : 256 * MiB)
                                                  : (o.quick ? 1 * GiB : 4 * GiB);
    const double min_mem = host ? 32 * KiB : 64 * KiB;
    const std::vector<std::string> patterns = host
        ? std::vector<std::string>{"copy", "norm", "elementwise", "gelu", "softmax"}
        : std::vector<std::string>{"copy", "norm", "elementwise"};
    for (const auto& pattern : patterns) {
      // The host softmax runs whole [256 x 256] blocks (512 KiB read + written).
      const double from = pattern == "softmax" && host ? std::max(min_mem, 512 * KiB) : min_mem;
      for (double bytes : geometric(from, max_mem, 4.0)) {
        Case c;
        c.kind = CaseKind::memory;
        c.pattern = pattern;
        c.bytes = bytes;
        plan.push_back(c);
      }
    }
  }

  // Collectives over every rank, bytes to MiB/GiB (needs more than one rank).
  if (b.ranks() > 1) {
    const double max_coll = o.max_collective_bytes > 0 ? o.max_collective_bytes
                            : host                     ? (o.quick ? 16 * MiB : 256 * MiB)
                                                       : (o.quick ? 1 * GiB : 8 * GiB);
    for (auto kind : {sim::CollectiveKind::all_reduce, sim::CollectiveKind::all_gather,
                      sim::CollectiveKind::reduce_scatter, sim::CollectiveKind::all_to_all,
                      sim::CollectiveKind::send_recv}) {
      for (double bytes : geometric(8, max_coll, 4.0)) {
        Case c;
        c.kind = CaseKind::collective;
        c.collective = kind;
        c.bytes = bytes;
        plan.push_back(c);
      }
    }
  }

  if (!o.collectives_only) {
    // Launch and dispatch: batches of 16 to 1024 kernels (4 sizes, so the per-kernel cost is a
    // slope through four points and the fixed cost of the timing itself drops out).
    const std::vector<int> batches = o.quick ? std::vector<int>{16, 128, 1024} : std::vector<int>{16, 64, 256, 1024};
    for (const auto& pattern : b.launch_patterns()) {
      for (int k : batches) {
        Case c;
        c.kind = CaseKind::launch;
        c.pattern = pattern;
        c.kernels = k;
        plan.push_back(c);
      }
    }
    for (const auto& s : steps) {
      Case c;
      c.kind = CaseKind::step;
      c.step = s;
      plan.push_back(c);
    }
  }
  return plan;
}

bool already_measured(const Measurements& m, const Case& c) {
  switch (c.kind) {
    case CaseKind::gemm:
      return std::any_of(m.gemms.begin(), m.gemms.end(), [&](const GemmRecord& r) { return r.shape == c.gemm; });
    case CaseKind::memory:
      // Backends round a size to whole rows/elements: within 1% is the same case.
      return std::any_of(m.memory.begin(), m.memory.end(), [&](const MemoryRecord& r) {
        return r.pattern == c.pattern && std::abs(r.bytes - c.bytes) <= 0.01 * c.bytes;
      });
    case CaseKind::collective:
      // Rounded to whole floats per rank: within 4 bytes per rank (or 1%) is the same case.
      return std::any_of(m.collectives.begin(), m.collectives.end(), [&](const CollectiveRecord& r) {
        return r.kind == c.collective && r.ranks == m.context.ranks &&
               std::abs(r.bytes - c.bytes) <= std::max(0.01 * c.bytes, 4.0 * r.ranks);
      });
    case CaseKind::step:
      return std::any_of(m.steps.begin(), m.steps.end(), [&](const StepRecord& r) { return r.shape == c.step; });
    case CaseKind::launch:
      return std::any_of(m.launches.begin(), m.launches.end(),
                         [&](const LaunchRecord& r) { return r.pattern == c.pattern && r.kernels == c.kernels; });
  }
  return false;
}

RunReport run_calibration(MeasurementBackend& backend, const std::vector<Case>& plan, Measurements start,
                          const RunOptions& options, const ProgressFn& progress, const CheckpointFn& checkpoint,
                          const StopFn& stop) {
  using Clock = std::chrono::steady_clock;
  RunReport report;
  report.measurements = std::move(start);
  auto& m = report.measurements;
  m.context = backend.context();  // a resumed run records where its new measurements were taken
  // The device's clocks, power and throttle state around the run (read only), so a record shows
  // whether the GPU ran the sweep at the clocks it started with.
  const auto record_state = [&](const char* suffix) {
    for (const auto& [key, value] : backend.device_state()) m.context.clocks[key + suffix] = value;
  };
  record_state("_before");
  const bool leader = backend.rank() == 0;
  const auto t0 = Clock::now();
  std::size_t done = 0;
  for (const auto& c : plan) {
    if (stop && stop()) {
      report.stopped = true;
      break;
    }
    ++done;
    if (already_measured(m, c)) {
      ++report.resumed;
      continue;
    }
    // Only collectives need every rank; the rest is measured once, on rank 0.
    if (c.kind != CaseKind::collective && !leader) continue;
    std::optional<Diagnostics> failed;
    try {
      switch (c.kind) {
        case CaseKind::gemm:
          if (auto r = backend.gemm(c.gemm, options)) m.gemms.push_back(*r);
          else failed = r.error();
          break;
        case CaseKind::memory:
          if (auto r = backend.memory(c.pattern, c.bytes, options)) m.memory.push_back(*r);
          else failed = r.error();
          break;
        case CaseKind::collective:
          if (auto r = backend.collective(c.collective, c.bytes, options)) m.collectives.push_back(*r);
          else failed = r.error();
          break;
        case CaseKind::step:
          if (auto r = backend.training_step(c.step, options)) m.steps.push_back(*r);
          else failed = r.error();
          break;
        case CaseKind::launch:
          if (auto r = backend.launch(c.pattern, c.kernels, options)) m.launches.push_back(*r);
          else failed = r.error();
          break;
      }
    } catch (const std::bad_alloc&) {
      failed = Diagnostics{{Diagnostic::Severity::warning, {}, "out of memory"}};
    } catch (const std::exception& e) {
      failed = Diagnostics{{Diagnostic::Severity::warning, {}, std::string("failed: ") + e.what()}};
    } catch (...) {
      failed = Diagnostics{{Diagnostic::Severity::warning, {}, "failed (an exception that is not std::exception)"}};
    }
    if (failed) {
      ++report.failed;
      if (failed->empty()) failed->push_back({Diagnostic::Severity::warning, {}, "failed"});
      for (auto d : *failed) {
        d.severity = Diagnostic::Severity::warning;
        d.where = c.label() + (d.where.empty() ? "" : ": " + d.where);
        report.notes.push_back(d);
      }
    } else {
      ++report.measured;
      if (checkpoint) checkpoint(m);
    }
    if (progress) {
      Progress p;
      p.done = done;
      p.total = plan.size();
      p.elapsed_s = std::chrono::duration<double>(Clock::now() - t0).count();
      const std::size_t tried = done - report.resumed;
      p.eta_s = tried > 0 ? p.elapsed_s / static_cast<double>(tried) * static_cast<double>(plan.size() - done) : 0;
      p.label = c.label();
      progress(p);
    }
    if (failed && !backend.healthy()) {
      report.lost = c.label();
      break;
    }
  }
  record_state("_after");  // also after a stop or a lost device: what the GPU was doing then
  return report;
}

}  // namespace capplan::calib
