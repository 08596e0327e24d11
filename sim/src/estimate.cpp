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
            positive("ep", p.ep) & positive("etp", p.etp) & positive("micro_batch", p.micro_batch) &
            positive("virtual_stages", p.virtual_stages);
  if (p.zero < 0 || p.zero > 3) error(d, "zero", "must be 0, 1, 2 or 3; got " + num(p.zero));
  if (!ok) return d;
  if (p.etp > 1 && !m.is_moe()) error(d, "etp", "expert tensor parallelism needs an MoE model; got " + num(p.etp));
  if (p.etp > 1 && m.is_moe() && m.moe.expert_ffn_hidden % p.etp != 0) {
    error(d, "etp", "must divide expert_ffn_hidden (" + num(m.moe.expert_ffn_hidden) + "); got " + num(p.etp));
  }
  if (p.ep > 1 && !m.is_moe()) error(d, "ep", "expert parallelism needs an MoE model; got " + num(p.ep));
  if (m.is_moe()) {
    const long long ranks = 1LL * p.tp * p.dp * p.cp;
    if (m.moe.experts % p.ep != 0) {
      error(d, "ep", "must divide the number of routed experts (" + num(m.moe.experts) + "); got " + num(p.ep));
    }
    if (ranks % (1LL * p.ep * p.etp) != 0) {
      // Megatron-Core spreads the experts over the same ranks as tp*dp*cp.
      error(d, "ep", "ep*etp must divide tp*dp*cp (" + num(static_cast<double>(ranks)) + "); got " + num(p.ep) +
                         "*" + num(p.etp));
    }
    if (p.tp > 1 && !p.sequence_parallel) {
      error(d, "sequence_parallel", "MoE with tp > 1 needs sequence parallelism (Megatron-Core); got false");
    }
  }
  if ((p.recompute_norms || p.recompute_moe_act) && p.recompute != Recompute::selective) {
    // Megatron-Core takes --recompute-modules only with --recompute-granularity selective.
    error(d, p.recompute_norms ? "recompute_norms" : "recompute_moe_act",
          std::string("module recompute needs recompute selective; got recompute ") + to_string(p.recompute));
  }
  if (p.recompute_moe_act && !m.is_moe()) {
    error(d, "recompute_moe_act", "recomputing the experts' activation needs an MoE model; got true");
  }
  if (p.cp > 1 && m.seq_len % (2 * p.cp) != 0) {
    // Megatron-Core splits each sequence into 2*cp chunks to balance the causal work.
    error(d, "cp", "seq_len (" + num(m.seq_len) + ") must be a multiple of 2*cp; got cp " + num(p.cp));
  }
  if (m.heads % p.tp != 0) {
    error(d, "tp", "must divide the number of attention heads (" + num(m.heads) + "); got " + num(p.tp));
  }
  if (m.ffn_hidden % p.tp != 0) {
    error(d, "tp", "must divide ffn_hidden (" + num(m.ffn_hidden) + "); got " + num(p.tp));
  }
  // Megatron-Core's layout: tp*pp*dp*cp ranks; experts are spread over the tp*dp*cp ranks.
  const long long product = 1LL * p.tp * p.pp * p.dp * p.cp;
  if (product != s.cluster.gpus) {
    d.push_back({Diagnostic::Severity::error, "scenario#/strategy",
                 "tp*pp*dp*cp must equal the number of GPUs (" + num(s.cluster.gpus) + "); got " + num(p.tp) +
                     "*" + num(p.pp) + "*" + num(p.dp) + "*" + num(p.cp) + " = " + num(static_cast<double>(product))});
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
  // Per token, forward: 2 FLOPs per weight of every GEMM the token passes through (for MoE the
  // router, its top_k experts and the shared experts: active parameters), plus the attention core
  // 2*s_k*heads*(d_qk + d_v) over the full s x s square (Megatron's convention; Narayanan et al.
  // 2021 Appendix / Korthikanti et al. 2022 Sec. 6; 4*s*h for standard attention), with s_k the
  // window for sliding-window attention. Backward is twice the forward.
  const double h = m.hidden, s = m.seq_len;
  const double norms = 2.0 * h;
  const double attention_gemm = 2.0 * (m.attention_params() - norms);
  const double d_qk = m.attention == Attention::mla ? m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim : m.head_dim();
  const double d_v = m.attention == Attention::mla ? m.mla.v_head_dim : m.head_dim();
  const double share = 1.0 / std::max(1, m.sliding_window_every);  // windowed layers
  const double keys =
      m.sliding_window > 0 && m.sliding_window < m.seq_len ? share * m.sliding_window + (1.0 - share) * s : s;
  const double attention_core = 2.0 * keys * m.heads * (d_qk + d_v);
  const double moe_layers = m.moe_layer_count();
  const double dense_layers = m.layers - moe_layers;
  const double ffn = dense_layers * 2.0 * m.dense_ffn_params() + moe_layers * 2.0 * m.moe_active_ffn_params();
  const double logits = 2.0 * h * m.vocab;
  const double tokens = static_cast<double>(job.global_batch) * s;
  const double layers_forward = m.layers * (attention_gemm + attention_core) + ffn;
  StepFlops out;
  out.model = units::flops(3.0 * (layers_forward + logits) * tokens);
  double extra = 0;
  if (recompute == Recompute::full) extra = layers_forward;
  if (recompute == Recompute::selective && !m.flash_attention) extra = m.layers * attention_core;
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
  const units::FlopsPerSecond bf16 =
      s.cluster.gpu.peak.bf16.base() > 0 ? s.cluster.gpu.peak.bf16 : s.cluster.gpu.peak.fp16;
  e.mfu_bf16_peak = bf16.base() > 0 ? e.model_flops_per_gpu / bf16 : 0.0;
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
  {
    const GoodputInputs in{&s.model, &s.training, &s.cluster, &s.reliability, &s.storage, &s.data, &s.pricing};
    e.goodput = compute_goodput(in, p, e.time_to_train, e.step_time, e.tokens_per_s, e.warnings);
  }
  if (!s.cluster.price_per_gpu && s.pricing.model == PurchaseModel::on_demand) warn("no price known for this cluster: cost_usd is null (give pricing.usd_per_gpu_hour)");
  return e;
}

}  // namespace capplan::sim
