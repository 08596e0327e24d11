// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/estimate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "capplan/sim/step_model.hpp"
#include "step_timing.hpp"

namespace capplan::sim {

namespace {

// Integers as integers, other values with one decimal (enough for GiB in messages).
std::string num(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  const long long tenths = std::llround(v * 10.0);
  return std::to_string(tenths / 10) + "." + std::to_string(std::llabs(tenths % 10));
}

void error(Diagnostics& d, const std::string& field, std::string message) {
  d.push_back({Diagnostic::Severity::error, "scenario#/strategy/" + field, std::move(message)});
}

}  // namespace

Diagnostics check_layout(const Scenario& s, const Parallelism& p) {
  Diagnostics d;
  const ModelSpec& m = s.model;
  auto positive = [&](const char* field, int v) {
    if (v < 1) error(d, field, "must be a positive integer; got " + num(v));
    return v >= 1;
  };
  bool ok = positive("tp", p.tp) & positive("pp", p.pp) & positive("dp", p.dp) & positive("cp", p.cp) &
            positive("ep", p.ep) & positive("micro_batch", p.micro_batch) &
            positive("virtual_stages", p.virtual_stages);
  if (p.zero < 0 || p.zero > 3) error(d, "zero", "must be 0, 1, 2 or 3; got " + num(p.zero));
  if (!ok) return d;
  if (p.cp != 1) error(d, "cp", "context parallelism (cp > 1) is not supported yet; got " + num(p.cp));
  if (p.ep != 1) error(d, "ep", "expert parallelism (ep > 1) needs an MoE model, not supported yet; got " + num(p.ep));
  if (m.heads % p.tp != 0) {
    error(d, "tp", "must divide the number of attention heads (" + num(m.heads) + "); got " + num(p.tp));
  }
  if (m.ffn_hidden % p.tp != 0) {
    error(d, "tp", "must divide ffn_hidden (" + num(m.ffn_hidden) + "); got " + num(p.tp));
  }
  const long long product = 1LL * p.tp * p.pp * p.dp * p.cp * p.ep;
  if (product != s.cluster.gpus) {
    d.push_back({Diagnostic::Severity::error, "scenario#/strategy",
                 "tp*pp*dp*cp*ep must equal the number of GPUs (" + num(s.cluster.gpus) + "); got " + num(p.tp) +
                     "*" + num(p.pp) + "*" + num(p.dp) + "*" + num(p.cp) + "*" + num(p.ep) + " = " +
                     num(static_cast<double>(product))});
  }
  if (p.pp > m.layers) {
    error(d, "pp", "more pipeline stages than layers (" + num(m.layers) + "); got " + num(p.pp));
  } else if (1LL * p.pp * p.virtual_stages > m.layers) {
    error(d, "virtual_stages",
          "pp*virtual_stages must not exceed the layers (" + num(m.layers) + "); got " + num(p.pp) + "*" +
              num(p.virtual_stages));
  }
  if (p.virtual_stages > 1 && p.pp == 1) {
    error(d, "virtual_stages", "interleaving needs pipeline parallelism (pp > 1); got " + num(p.virtual_stages));
  }
  const long long per_step = 1LL * p.micro_batch * p.dp;
  if (s.training.global_batch % per_step != 0) {
    error(d, "micro_batch",
          "global batch (" + num(static_cast<double>(s.training.global_batch)) +
              " sequences) must be a multiple of micro_batch*dp (" + num(p.micro_batch) + "*" + num(p.dp) + " = " +
              num(static_cast<double>(per_step)) + ")");
  }
  return d;
}

StepFlops step_flops(const ModelSpec& m, const TrainingJob& job, Recompute recompute) {
  // Per token, forward: 2 FLOPs per weight of every GEMM, plus the attention core 2*2*s*h
  // (Q K^T and P V over the full s x s square, Megatron's convention; Narayanan et al. 2021
  // Appendix / Korthikanti et al. 2022 Sec. 6). Backward is twice the forward.
  const double h = m.hidden, s = m.seq_len, f = m.ffn_hidden;
  const double layer_gemm = 2.0 * (h * (h + 2.0 * m.kv_dim()) + h * h + (m.gated_ffn ? 3.0 : 2.0) * h * f);
  const double attention = 4.0 * s * h;
  const double logits = 2.0 * h * m.vocab;
  const double tokens = static_cast<double>(job.global_batch) * s;
  const double forward = m.layers * (layer_gemm + attention) + logits;
  StepFlops out;
  out.model = units::flops(3.0 * forward * tokens);
  double extra = 0;
  if (recompute == Recompute::full) extra = m.layers * (layer_gemm + attention);
  if (recompute == Recompute::selective && !m.flash_attention) extra = m.layers * attention;
  out.hardware = out.model + units::flops(extra * tokens);
  return out;
}

Estimate evaluate(const Scenario& s, const Parallelism& p, const OpCostModel& cost) {
  const StepTiming timing = time_step(s, p, cost);
  Estimate e;
  e.strategy = p;
  e.micro_batches = timing.micro_batches;
  e.breakdown = timing.breakdown;
  e.step_time = e.breakdown.total();
  e.memory = memory_per_gpu(s.model, s.training, p, s.cluster.gpu, timing.micro_batches);
  e.cost_model = cost.source();
  e.flops = step_flops(s.model, s.training, p.recompute);

  const double gpus = s.cluster.gpus;
  const double step = e.step_time.base();
  const double tokens_per_step = static_cast<double>(s.training.global_batch) * s.model.seq_len;
  e.tokens_per_s = tokens_per_step / step;
  e.model_flops_per_gpu = e.flops.model / e.step_time / gpus;
  const units::FlopsPerSecond peak = s.cluster.gpu.peak.for_precision(s.training.precision);
  e.mfu = peak.base() > 0 ? e.model_flops_per_gpu / peak : 0.0;
  e.hfu = peak.base() > 0 ? (e.flops.hardware / e.step_time / gpus) / peak : 0.0;
  e.steps = s.training.tokens / tokens_per_step;
  e.time_to_train = e.step_time * e.steps;
  e.gpu_hours = gpus * units::to_hours(e.time_to_train);
  e.price_per_gpu = s.cluster.price_per_gpu;
  if (s.cluster.price_per_gpu) e.cost = *s.cluster.price_per_gpu * e.time_to_train * gpus;

  // Warnings: things that are allowed but that a user should know.
  auto warn = [&](std::string w) { e.warnings.push_back(std::move(w)); };
  if (s.model.layers % (p.pp * p.virtual_stages) != 0) {
    warn("layers (" + num(s.model.layers) + ") do not divide evenly into pp*virtual_stages (" +
         num(p.pp * p.virtual_stages) + "): uneven stages, the slowest sets the pace");
  }
  if (p.tp > s.cluster.gpus_per_node) {
    warn("tp (" + num(p.tp) + ") is wider than a node (" + num(s.cluster.gpus_per_node) +
         " GPUs): tensor-parallel traffic crosses the network");
  }
  if (p.sequence_parallel && p.tp == 1) warn("sequence_parallel has no effect with tp = 1");
  if (p.virtual_stages > 1 && timing.micro_batches % p.pp != 0) {
    warn("interleaved schedule with micro-batches (" + num(timing.micro_batches) +
         ") not a multiple of pp (" + num(p.pp) + "): Megatron-LM requires it");
  }
  if (p.zero >= 2 && p.pp > 1) warn("ZeRO stage >= 2 with pipeline parallelism is not supported by DeepSpeed");
  if (p.pp > 1 && timing.micro_batches < p.pp) {
    warn("fewer micro-batches (" + num(timing.micro_batches) + ") than pipeline stages (" + num(p.pp) +
         "): the pipeline never fills");
  }
  if (!e.memory.fits()) {
    warn("does not fit in memory: needs " + num(units::to_gib(e.memory.total())) + " GiB per GPU, the GPU has " +
         num(units::to_gib(e.memory.capacity)) + " GiB");
  }
  if (!s.cluster.price_per_gpu) warn("no price known for this cluster: cost_usd is null (give pricing.usd_per_gpu_hour)");
  return e;
}

}  // namespace capplan::sim
