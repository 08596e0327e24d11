// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/workload/finetune.hpp"

#include <algorithm>
#include <cmath>

#include "capplan/sim/workload/model.hpp"
#include "capplan/sim/workload/scenario.hpp"
#include "capplan/sim/workload/strategy.hpp"

namespace capplan::sim {

const char* to_string(TuneMethod m) {
  switch (m) {
    case TuneMethod::full: return "full";
    case TuneMethod::lora: return "lora";
    case TuneMethod::qlora: return "qlora";
  }
  return "full";
}

std::optional<TuneMethod> tune_method_from_string(const std::string& s) {
  for (TuneMethod m : {TuneMethod::full, TuneMethod::lora, TuneMethod::qlora}) {
    if (s == to_string(m)) return m;
  }
  return std::nullopt;
}

StackSupport stack_support(StackSupport recipe, TuneMethod method) {
  if (method == TuneMethod::qlora) {
    recipe.tensor_parallel = false;
    recipe.sequence_parallel = false;
  }
  return recipe;
}

const char* lora_target_name(LoraTarget t) {
  switch (t) {
    case lora_q: return "q";
    case lora_k: return "k";
    case lora_v: return "v";
    case lora_o: return "o";
    case lora_gate: return "gate";
    case lora_up: return "up";
    case lora_down: return "down";
  }
  return "?";
}

std::optional<LoraTarget> lora_target_from_string(const std::string& s) {
  for (LoraTarget t : {lora_q, lora_k, lora_v, lora_o, lora_gate, lora_up, lora_down}) {
    if (s == lora_target_name(t)) return t;
  }
  return std::nullopt;
}

const char* to_string(BaseFormat f) {
  switch (f) {
    case BaseFormat::same: return "same";
    case BaseFormat::nf4: return "nf4";
    case BaseFormat::int4: return "int4";
  }
  return "same";
}

std::optional<BaseFormat> base_format_from_string(const std::string& s) {
  for (BaseFormat f : {BaseFormat::same, BaseFormat::nf4, BaseFormat::int4}) {
    if (s == to_string(f)) return f;
  }
  return std::nullopt;
}

double FinetuneSpec::quantized_bytes_per_param() const {
  switch (base()) {
    case BaseFormat::same: return 0.0;
    // 4 bits, plus an fp32 absmax per block of 64 (32/64 = 0.5 bits); double quantisation stores
    // that absmax in 8 bits with an fp32 second-level constant per 256 blocks:
    // 8/64 + 32/(64*256) = 0.127 bits (Dettmers et al. 2023, Sec. 3).
    case BaseFormat::nf4: return (4.0 + (double_quant ? 8.0 / 64.0 + 32.0 / (64.0 * 256.0) : 32.0 / 64.0)) / 8.0;
    // 4 bits, plus an fp16 scale and a 4-bit zero point per group of 128 weights.
    case BaseFormat::int4: return (4.0 + (16.0 + 4.0) / 128.0) / 8.0;
  }
  return 0.0;
}

double FinetuneSpec::trained_layer_share(int layers) const {
  if (adapters() || layers <= 0) return adapters() ? 0.0 : 1.0;
  return std::clamp(1.0 - static_cast<double>(frozen_layers) / layers, 0.0, 1.0);
}

namespace {

// Log-normal sample lengths through the mean and p95: ln(p95 / mean) = 1.645 sigma - sigma^2 / 2,
// the smaller root; E[l^2] / E[l] = mean * exp(sigma^2).
double length_sigma(double mean, double p95) {
  if (mean <= 0 || p95 <= mean) return 0.0;
  constexpr double z95 = 1.6448536269514722;
  const double disc = z95 * z95 - 2.0 * std::log(p95 / mean);
  return disc > 0 ? z95 - std::sqrt(disc) : z95;
}

// E[min(max of n draws, cap)^power] for log-normal sample lengths with this mean and sigma: the
// integral of min(exp(mu + sigma z), cap)^power n Phi(z)^(n-1) phi(z) dz by the midpoint rule
// over [-8, 8] (4,000 points: a smooth integrand, relative error far below 1e-6).
double expected_capped_max(double mean, double sigma, int n, double cap, int power = 1) {
  if (sigma <= 0) return std::pow(std::min(mean, cap), power);
  const double mu = std::log(mean) - sigma * sigma / 2.0;
  constexpr int kSteps = 4000;
  constexpr double lo = -8.0, hi = 8.0, dz = (hi - lo) / kSteps;
  const double inv_sqrt2pi = 1.0 / std::sqrt(2.0 * 3.14159265358979323846);
  double sum = 0;
  for (int i = 0; i < kSteps; ++i) {
    const double z = lo + (i + 0.5) * dz;
    const double phi = inv_sqrt2pi * std::exp(-0.5 * z * z);
    const double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0));
    sum += std::pow(std::min(std::exp(mu + sigma * z), cap), power) * n * std::pow(cdf, n - 1) * phi * dz;
  }
  return sum;
}

}  // namespace

FinetuneShape resolve_finetune(const FinetuneData& data, int seq_len, int micro_batch) {
  FinetuneShape out;
  out.step_tokens = seq_len;
  out.max_tokens = seq_len;
  out.micro_batch = std::max(1, micro_batch);
  const double cap = seq_len;
  const double mean = data.mean_sample_tokens;
  const double sigma = length_sigma(mean, data.p95_sample_tokens);
  double epoch_tokens = data.tokens;  // processed per epoch
  if (data.packing) {
    if (data.document_mask && mean > 0) out.attention_tokens = std::min(cap, mean * std::exp(sigma * sigma));
  } else if (mean > 0) {
    // Each sample is a sequence of its own, truncated at seq_len and padded to seq_len or to the
    // longest sample of its micro-batch (expected over the length distribution).
    const double padded = data.pad_to_max ? cap : expected_capped_max(mean, sigma, std::max(1, micro_batch), cap);
    out.step_tokens = std::clamp(static_cast<int>(std::lround(padded)), 1, seq_len);
    // Attention is quadratic in each sequence's length: the square of the mean length
    // underprices it when lengths vary (E[L^2] >= E[L]^2, Jensen). The step's sequences are its
    // padded lengths L (the longest of the micro-batch, capped), so each query attends over
    // E[L^2] / E[L] keys on average: mean x exp(sigma^2) for one sample per micro-batch.
    if (!data.pad_to_max && sigma > 0) {
      out.attention_tokens = std::min(cap, expected_capped_max(mean, sigma, std::max(1, micro_batch), cap, 2) / padded);
    }
    epoch_tokens = data.tokens / mean * out.step_tokens;  // samples x their padded length
    out.useful_share = std::min(1.0, expected_capped_max(mean, sigma, 1, cap) / out.step_tokens);
  }
  out.processed_tokens = epoch_tokens * std::max(0.0, data.epochs);
  return out;
}

namespace {

// r (k + n) for each adapted linear of `targets` (k inputs, n outputs).
double adapter(const FinetuneSpec& f, unsigned targets, double k, double n) {
  return f.adapted(targets) ? static_cast<double>(f.lora_rank) * (k + n) : 0.0;
}

}  // namespace

double lora_attention_params(const ModelSpec& m, const FinetuneSpec& f) {
  if (!f.adapters()) return 0.0;
  const double h = m.hidden;
  if (m.attention == Attention::mla) {
    const auto& a = m.mla;
    const double qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    double q = 0;
    if (a.q_lora_rank > 0) {
      q = adapter(f, lora_q, h, a.q_lora_rank) + adapter(f, lora_q, a.q_lora_rank, m.heads * qk);
    } else {
      q = adapter(f, lora_q, h, m.heads * qk);
    }
    const double kv = adapter(f, lora_k | lora_v, h, a.kv_lora_rank + a.qk_rope_head_dim) +
                      adapter(f, lora_k | lora_v, a.kv_lora_rank, m.heads * (a.qk_nope_head_dim + a.v_head_dim));
    return q + kv + adapter(f, lora_o, static_cast<double>(m.heads) * a.v_head_dim, h);
  }
  const double q = static_cast<double>(m.heads) * m.head_dim();
  const double kv = static_cast<double>(m.kv_dim());
  return adapter(f, lora_q, h, q) + adapter(f, lora_k, h, kv) + adapter(f, lora_v, h, kv) + adapter(f, lora_o, q, h);
}

double lora_dense_ffn_params(const ModelSpec& m, const FinetuneSpec& f) {
  if (!f.adapters()) return 0.0;
  const double h = m.hidden, ff = m.ffn_hidden;
  return (m.gated_ffn ? adapter(f, lora_gate, h, ff) : 0.0) + adapter(f, lora_up, h, ff) + adapter(f, lora_down, ff, h);
}

double lora_moe_ffn_params(const ModelSpec& m, const FinetuneSpec& f) {
  if (!f.adapters() || !m.is_moe()) return 0.0;
  const double h = m.hidden, ff = m.moe.expert_ffn_hidden;
  const double one = (m.gated_ffn ? adapter(f, lora_gate, h, ff) : 0.0) + adapter(f, lora_up, h, ff) + adapter(f, lora_down, ff, h);
  return (m.moe.experts + m.moe.shared_experts) * one;
}

double lora_params(const ModelSpec& m, const FinetuneSpec& f) {
  const double moe_layers = m.moe_layer_count();
  return m.layers * lora_attention_params(m, f) + (m.layers - moe_layers) * lora_dense_ffn_params(m, f) +
         moe_layers * lora_moe_ffn_params(m, f);
}

double trainable_params(const ModelSpec& m, const FinetuneSpec& f) {
  const double embeddings = m.embedding_params() + m.output_params();
  const double rest = m.total_params() - embeddings;
  const double base = f.adapters() ? 0.0 : rest * f.trained_layer_share(m.layers);
  return base + lora_params(m, f) + (f.trains_embeddings() ? embeddings : 0.0);
}

void resolve_workload(Scenario& s, int micro_batch) {
  if (s.workload.kind != WorkloadKind::finetune) return;
  const FinetuneShape shape = resolve_finetune(s.workload.dataset, s.model.seq_len, std::max(1, micro_batch));
  s.workload.shape = shape;
  s.model.seq_len = shape.step_tokens;
  s.training.tokens = shape.processed_tokens;
  s.training.attention_tokens = shape.attention_tokens;
}

bool shape_follows_micro_batch(const Scenario& s) {
  const FinetuneData& d = s.workload.dataset;
  return s.workload.kind == WorkloadKind::finetune && !d.packing && !d.pad_to_max && d.mean_sample_tokens > 0 &&
         s.workload.shape.max_tokens > 0;
}

Scenario at_micro_batch(const Scenario& s, int micro_batch) {
  Scenario out = s;
  if (!shape_follows_micro_batch(s) || s.workload.shape.micro_batch == std::max(1, micro_batch)) return out;
  out.model.seq_len = s.workload.shape.max_tokens;
  resolve_workload(out, micro_batch);
  return out;
}

const Scenario& ScenarioByMicroBatch::at(int micro_batch) {
  if (!follows_ || s_.workload.shape.micro_batch == std::max(1, micro_batch)) return s_;
  auto it = at_.find(micro_batch);
  if (it == at_.end()) it = at_.emplace(micro_batch, at_micro_batch(s_, micro_batch)).first;
  return it->second;
}

}  // namespace capplan::sim
