// SPDX-License-Identifier: Apache-2.0
// A serving replica: weight formats, the engine's memory budget and KV capacity, and the step
// time tabulated from the pass op list (build_pass_ops).
#include <algorithm>
#include <cmath>

#include "capplan/sim/lowering/scope.hpp"
#include "capplan/sim/serve/serve.hpp"
#include "capplan/sim/lowering/stage_layout.hpp"
#include "capplan/sim/lowering/step_model.hpp"
#include "capplan/sim/workload/variability.hpp"

namespace capplan::sim {

const char* to_string(WeightFormat f) {
  switch (f) {
    case WeightFormat::bf16: return "bf16";
    case WeightFormat::fp16: return "fp16";
    case WeightFormat::fp8: return "fp8";
    case WeightFormat::int8: return "int8";
    case WeightFormat::int4: return "int4";
    case WeightFormat::fp4: return "fp4";
  }
  return "?";
}

std::optional<WeightFormat> weight_format_from_string(const std::string& s) {
  for (int i = 0; i < kWeightFormats; ++i) {
    const auto f = static_cast<WeightFormat>(i);
    if (s == to_string(f)) return f;
  }
  return std::nullopt;
}

int index(WeightFormat f) { return static_cast<int>(f); }

WeightFormatTraits traits(WeightFormat f) {
  switch (f) {
    case WeightFormat::bf16: return {Precision::bf16, 2.0};
    case WeightFormat::fp16: return {Precision::fp16, 2.0};
    // Per-channel fp32 scales: 4 bytes per output row, negligible against the row's k bytes.
    case WeightFormat::fp8: return {Precision::fp8, 1.0};
    case WeightFormat::int8: return {Precision::bf16, 1.0};
    // AWQ / GPTQ: 4-bit weights with a 16-bit scale and a zero point (packed 4-bit in AWQ,
    // 16-bit here as the upper bound) per group of 128 input channels: 0.5 + 4 / 128.
    case WeightFormat::int4: return {Precision::bf16, 0.5 + 4.0 / 128.0};
    // NVFP4: 4-bit E2M1 values with one E4M3 scale per 16 (NVIDIA, "Introducing NVFP4", 2025).
    case WeightFormat::fp4: return {Precision::fp4, 0.5 + 1.0 / 16.0};
  }
  return {};
}

DatasheetAssumptions serving_assumptions(const EngineSpec& e, DatasheetAssumptions base) {
  if (e.cuda_graphs && e.kernel_gap.base() > 0) {
    base.gemm_launch_us = e.kernel_gap.base() * 1e6;
    base.memory_launch_us = e.kernel_gap.base() * 1e6;
  }
  return base;
}

double LengthDistribution::sigma() const {
  if (!(p95 > mean) || !(mean > 0)) return 0.0;
  // Log-normal with E = exp(mu + s^2 / 2) and p95 = exp(mu + 1.645 s): the smaller root of
  // s^2 / 2 - 1.645 s + ln(p95 / E) = 0 (a p95 beyond 3.87 x the mean is taken at the vertex).
  constexpr double z = 1.6448536269514722;
  const double r = std::log(p95 / mean);
  const double disc = z * z - 2.0 * r;
  return disc > 0 ? z - std::sqrt(disc) : z;
}

double LengthDistribution::quantile(double q) const {
  const double s = sigma();
  if (s <= 0) return mean;
  const double mu = std::log(mean) - s * s / 2.0;
  return std::exp(mu + s * inverse_normal_cdf(std::clamp(q, 1e-12, 1.0 - 1e-12)));
}

double kept_bytes_per_token(const StepOps& ops, const PerScope<int>& layers, double tokens) {
  double kept = 0;
  for (const StepOp& op : ops.ops) {
    if (const auto* mem = std::get_if<MemoryOp>(&op.op)) kept += mem->kept.base() * op.count * layers[op.scope];
  }
  return tokens > 0 ? kept / tokens : 0.0;
}

double kv_bytes_per_token(const ModelSpec& m, double element_bytes) {
  InferencePass ip;
  ip.kv_bytes = element_bytes;
  ip.prefill_tokens = 1;
  PerScope<int> layers;
  for (const ScopeTraits& t : kScopeTraits) layers[t.scope] = t.in_model(m);
  return kept_bytes_per_token(build_pass_ops(m, ip, Parallelism{}, Cluster{}), layers, 1.0);
}

namespace {

// The replica's layout in the op list's terms: experts split over the TP ranks (etp = tp) or
// whole experts per rank (ep = tp, etp = 1).
Parallelism replica_layout(const ServeJob& job) {
  Parallelism p;
  p.tp = std::max(1, job.tp);
  p.pp = std::max(1, job.pp);
  p.dp = 1;
  if (job.model.is_moe()) {
    p.ep = std::max(1, job.ep);
    p.etp = p.ep > 1 ? std::max(1, p.tp / p.ep) : p.tp;
  }
  return p;
}

InferencePass pass_for(const ServeJob& job) {
  InferencePass ip;
  const WeightFormatTraits w = traits(job.weights);
  ip.compute = w.compute;
  ip.weight_bytes = w.bytes;
  ip.kv_bytes = element_bytes(job.kv);
  return ip;
}

}  // namespace

std::optional<Finding> check_serve_job(const ServeJob& job, const Cluster& c) {
  using F = FindingCode;
  const ModelSpec& m = job.model;
  if (job.tp < 1 || job.pp < 1) return finding(F::serve_tp_pp_below_one, {}, {{"tp", job.tp}, {"pp", job.pp}});
  if (m.heads % job.tp != 0) return finding(F::serve_tp_divides_heads, {}, {{"tp", job.tp}, {"heads", m.heads}});
  if (m.attention != Attention::mla && job.tp % std::max(1, m.kv_heads) != 0 && m.kv_heads % job.tp != 0) {
    return finding(F::serve_tp_and_kv_heads, {}, {{"tp", job.tp}, {"kv_heads", m.kv_heads}});
  }
  if (job.pp > m.layers) return finding(F::serve_pp_exceeds_layers, {}, {{"pp", job.pp}, {"layers", m.layers}});
  if (job.ep > 1 && (!m.is_moe() || job.ep != job.tp)) {
    return finding(F::serve_ep_layout, {}, {{"ep", job.ep}, {"tp", job.tp}});
  }
  if (m.is_moe() && job.ep > 1 && m.moe.experts % job.ep != 0) {
    return finding(F::serve_ep_divides_experts, {}, {{"ep", job.ep}, {"experts", m.moe.experts}});
  }
  if (m.mamba_layer_count() > 0) {
    return finding(F::serve_hybrid_unsupported, {}, {{"mamba_layers", static_cast<double>(m.mamba_layer_count())}});
  }
  const Precision compute = traits(job.weights).compute;
  if (c.gpu.peak.for_precision(compute).base() <= 0) {
    Finding f = text_finding(F::serve_weights_need_tensor_cores, "weights", std::string(to_string(job.weights)));
    with_text(f, "compute", std::string(to_string(compute)));
    return with_text(f, "gpu", c.gpu.name);
  }
  if (job.kv != Precision::bf16 && job.kv != Precision::fp16 && job.kv != Precision::fp8) {
    return text_finding(F::serve_kv_precision, "kv", std::string(to_string(job.kv)));
  }
  if (job.gpus() > c.gpus_per_node && job.tp > c.gpus_per_node) {
    return finding(F::serve_tp_spans_nodes, {}, {{"tp", job.tp}, {"gpus_per_node", c.gpus_per_node}});
  }
  const Traffic& t = job.traffic;
  if (!(t.input.mean >= 1) || !(t.output.mean >= 1)) {
    return finding(F::serve_lengths_below_one, {}, {{"input", t.input.mean}, {"output", t.output.mean}});
  }
  if (t.arrival == Arrival::poisson && !(t.rate > 0)) return finding(F::serve_rate_needed, {}, {{"rate", t.rate}});
  if (t.arrival == Arrival::closed_loop && t.concurrency < 1) {
    return finding(F::serve_concurrency_needed, {}, {{"concurrency", t.concurrency}});
  }
  if (!(t.prefix_hit >= 0 && t.prefix_hit < 1)) {
    return finding(F::serve_prefix_hit_out_of_range, {}, {{"prefix_hit", t.prefix_hit}});
  }
  const EngineSpec& e = job.engine;
  if (e.max_num_seqs < 1 || e.max_num_batched_tokens < 1) {
    return finding(F::serve_engine_limits, {},
                   {{"max_num_seqs", e.max_num_seqs}, {"max_num_batched_tokens", static_cast<double>(e.max_num_batched_tokens)}});
  }
  if (!e.chunked_prefill && t.input.quantile(0.99) > static_cast<double>(e.max_num_batched_tokens)) {
    return finding(F::serve_prompt_exceeds_batch, {},
                   {{"tokens", std::floor(t.input.quantile(0.99))},
                    {"max_num_batched_tokens", static_cast<double>(e.max_num_batched_tokens)}});
  }
  return std::nullopt;
}

ReplicaMemory replica_memory(const ServeJob& job, const Cluster& c) {
  const ModelSpec& m = job.model;
  const EngineSpec& e = job.engine;
  const Parallelism p = replica_layout(job);
  ReplicaMemory out;
  out.capacity = c.gpu.hbm_capacity;
  const double fmt = traits(job.weights).bytes;
  // Weights of the most loaded stage: layer linears in the format, embeddings and lm_head in 16 bits.
  double weights = 0, kv_per_token = 0;
  // One token's pass: what its cache writes keep is the KV cache per token.
  InferencePass one = pass_for(job);
  one.prefill_tokens = 1;
  const StepOps pass = build_pass_ops(m, one, p, c);
  for (const StageRun& run : stage_runs(m, p)) {
    const StageLayers& sl = run.layers;
    const StageParams sp = stage_params(m, p, sl);
    double vocab = (sl.first ? m.embedding_params() : 0.0) +
                   (sl.last ? (m.tied_embeddings ? (p.pp > 1 ? m.embedding_params() : 0.0) : m.output_params()) : 0.0);
    vocab /= p.tp;
    const double bytes = 2.0 * vocab + fmt * std::max(0.0, sp.total() - vocab);
    weights = std::max(weights, bytes);
    // KV per token on this GPU: its stage's attention layers.
    PerScope<int> layers;
    for (const ScopeTraits& t : kScopeTraits) layers[t.scope] = t.on_stage(sl);
    kv_per_token = std::max(kv_per_token, kept_bytes_per_token(pass, layers, 1.0));
  }
  out.weights = units::bytes(weights);
  // The engine's profiling forward at max_num_batched_tokens tokens (vLLM's profile_run): the
  // residual stream and a norm output, the widest intermediate (the gated FFN's up output and its
  // product, or the fused MoE kernel's per-copy cache) in 16 bits; and the sampler's fp32 logits
  // and probabilities for max_num_seqs rows.
  const double T = static_cast<double>(e.max_num_batched_tokens);
  const double gate = m.gated_ffn ? 3.0 : 2.0;
  const double dense = gate * static_cast<double>(m.ffn_hidden) / p.tp;
  const double moe = m.is_moe() ? m.moe.top_k * gate * static_cast<double>(m.moe.expert_ffn_hidden) / p.etp : 0.0;
  const double acts = 2.0 * T * (2.0 * m.hidden + std::max(dense, moe));
  const double sampler = 8.0 * std::min<double>(e.max_num_seqs, T) * static_cast<double>(m.vocab) / p.tp;
  out.activations = units::bytes(acts + sampler);
  out.reserve = e.runtime_reserve;
  const double cap = out.capacity.base();
  const double used = out.weights.base() + out.activations.base() + out.reserve.base();
  double budget = e.kv_budget == KvBudget::total_memory ? e.kv_memory_fraction * cap - used
                                                        : e.kv_memory_fraction * (cap - used);
  if (out.weights.base() + out.reserve.base() > cap) budget = 0;
  out.kv_budget = units::bytes(std::max(0.0, budget));
  out.kv_bytes_per_token = kv_per_token;
  out.kv_tokens = kv_per_token > 0 ? static_cast<std::int64_t>(out.kv_budget.base() / kv_per_token) : 0;
  // Mean sequence at its end, plus half a block of slack in its last block.
  const double seq = job.traffic.input.mean + job.traffic.output.mean + e.kv_block_tokens / 2.0;
  out.max_sequences = static_cast<int>(std::min<double>(e.max_num_seqs, std::floor(out.kv_tokens / seq)));
  return out;
}

namespace {

// Seconds of the ops `keep` selects, over the replica's pipeline stages (a token passes every
// stage in turn: their times add), linear GEMMs of the layers at the engine's kernel efficiency.
template <class Keep>
double price(const ServeJob& job, const Cluster& c, const OpCostModel& cost, const InferencePass& ip, Keep keep) {
  const Parallelism p = replica_layout(job);
  const StepOps ops = build_pass_ops(job.model, ip, p, c);
  const int f = index(job.weights);
  const double dense_eff = std::clamp(job.engine.quant_efficiency[static_cast<std::size_t>(f)], 1e-3, 1.0);
  const double moe_eff = std::clamp(job.engine.quant_moe_efficiency[static_cast<std::size_t>(f)], 1e-3, 1.0);
  PerScope<double> by_scope;
  for (const StepOp& so : ops.ops) {
    if (!keep(so)) continue;
    double t = cost.cost(so.op).base() * so.count;
    if (so.role == OpRole::linear && traits(so.scope).per_layer() && std::holds_alternative<GemmOp>(so.op)) {
      t /= so.scope == Scope::moe_ffn ? moe_eff : dense_eff;
    }
    by_scope[so.scope] += t;
  }
  double total = by_scope[Scope::pipeline] * (p.pp - 1);
  for (const StageRun& run : stage_runs(job.model, p)) {
    // The stage's layers, each kind's scope once per layer of that kind, then its embedding and
    // output layer (kScopeTraits).
    double stage = 0;
    for (const Repeat r : {Repeat::per_layer, Repeat::first_stage, Repeat::last_stage}) {
      for_each_scope(r, [&](const ScopeTraits& st) { stage += st.on_stage(run.layers) * by_scope[st.scope]; });
    }
    total += run.count * stage;
  }
  return total;
}

bool is_logits(const StepOp& so) { return so.scope == Scope::output && so.role != OpRole::norm; }

double interpolate(const std::vector<double>& x, const std::vector<double>& y, double v) {
  if (x.empty()) return 0.0;
  if (v <= x.front()) return y.front() * std::max(0.0, v) / x.front();
  auto it = std::upper_bound(x.begin(), x.end(), v);
  std::size_t i = it == x.end() ? x.size() - 1 : static_cast<std::size_t>(it - x.begin());
  if (i == 0) i = 1;
  const double x0 = x[i - 1], x1 = x[i], y0 = y[i - 1], y1 = y[i];
  return y0 + (y1 - y0) * (v - x0) / (x1 - x0);  // linear extrapolation past the last point
}

}  // namespace

PassModel::PassModel(const ServeJob& job, const Cluster& c, const OpCostModel& cost) {
  const InferencePass base_pass = pass_for(job);
  const EngineSpec& e = job.engine;
  max_tokens_ = std::max<std::int64_t>({e.max_num_batched_tokens, e.max_num_seqs, 1});
  overhead_ = std::max(0.0, e.step_overhead.base());
  // Every token count up to 64, then 4% apart: the roofline's max(compute, memory) is piecewise
  // smooth, so linear interpolation between neighbours stays within a fraction of a percent.
  for (double t = 1; t <= static_cast<double>(max_tokens_) * 1.04; t = t < 64 ? t + 1 : std::ceil(t * 1.04)) {
    grid_.push_back(t);
  }
  const auto keep_base = [](const StepOp& so) { return so.role != OpRole::attention_core && !is_logits(so); };
  for (double t : grid_) {
    InferencePass ip = base_pass;
    ip.prefill_tokens = static_cast<std::int64_t>(t);
    base_.push_back(price(job, c, cost, ip, keep_base));
    InferencePass lp = base_pass;
    lp.prefill_tokens = 1;
    lp.logits_rows = static_cast<std::int64_t>(t);
    logits_.push_back(price(job, c, cost, lp, is_logits));
  }
  // Both tables at every whole count up to the grid's end, so that a step (whose token and row
  // counts are whole) looks its times up: the same interpolation, done once.
  const auto whole = static_cast<std::size_t>(grid_.back()) + 1;
  base_at_.resize(whole);
  logits_at_.resize(whole);
  for (std::size_t v = 0; v < whole; ++v) {
    base_at_[v] = interpolate(grid_, base_, static_cast<double>(v));
    logits_at_[v] = interpolate(grid_, logits_, static_cast<double>(v));
  }
  const auto keep_attention = [](const StepOp& so) { return so.role == OpRole::attention_core; };
  const auto attention = [&](std::int64_t prefill, double keys, std::int64_t decode, double context) {
    InferencePass ip = base_pass;
    ip.prefill_tokens = prefill;
    ip.prefill_keys = keys;
    ip.decode_sequences = decode;
    ip.decode_context = context;
    return price(job, c, cost, ip, keep_attention);
  };
  // Prefill attention: fused kernels whose time is linear in the query-key work, plus launches.
  {
    const double p1 = attention(1024, 512, 0, 0), p2 = attention(1024, 4096, 0, 0);
    prefill_per_work_ = std::max(0.0, (p2 - p1) / (1024.0 * (4096.0 - 512.0)));
    prefill_fixed_ = std::max(0.0, p1 - prefill_per_work_ * 1024.0 * 512.0);
  }
  // Decode attention: bound by the cache reads, linear in the cached tokens, plus a per-sequence
  // part (the queries and outputs) and launches.
  {
    // Fitted where batches run (16 and 128 sequences, 1k and 8k tokens): below that the kernels'
    // fixed costs dominate and the fit's intercept carries them.
    const double d1 = attention(0, 0, 16, 1024), d2 = attention(0, 0, 16, 8192), d3 = attention(0, 0, 128, 1024);
    decode_per_token_ = std::max(0.0, (d2 - d1) / (16.0 * (8192.0 - 1024.0)));
    decode_per_seq_ = std::max(0.0, (d3 - d1 - 112.0 * 1024.0 * decode_per_token_) / 112.0);
    decode_fixed_ = std::max(0.0, d1 - 16.0 * decode_per_seq_ - 16.0 * 1024.0 * decode_per_token_);
  }
}

double PassModel::table(const std::vector<double>& y, const std::vector<double>& at, double v) const {
  // Whole counts up to the grid's end are looked up, others interpolated.
  if (v >= 0 && v < static_cast<double>(at.size())) {
    const auto w = static_cast<std::size_t>(v);
    if (static_cast<double>(w) == v) return at[w];
  }
  return interpolate(grid_, y, v);
}

double PassModel::base(double tokens) const { return table(base_, base_at_, tokens); }
double PassModel::logits(double rows) const { return rows > 0 ? table(logits_, logits_at_, rows) : 0.0; }

double PassModel::step(const StepLoad& l) const {
  const double tokens = static_cast<double>(l.prefill_tokens) + l.decode_sequences;
  if (tokens <= 0) return 0.0;
  double t = overhead_ + base(tokens) + logits(l.logits_rows);
  if (l.prefill_tokens > 0 && l.prefill_work > 0) t += prefill_fixed_ + prefill_per_work_ * l.prefill_work;
  if (l.decode_sequences > 0) {
    t += decode_fixed_ + decode_per_seq_ * l.decode_sequences + decode_per_token_ * l.decode_context;
  }
  return t;
}

// step() of {0, 0, d, context, d} evaluates (overhead + base + logits) + ((fixed + per_seq d) +
// per_token context), left to right: the same sums, grouped the same way.
PassModel::DecodeLine PassModel::decode_line(int sequences) const {
  if (sequences <= 0) return {};
  const double d = static_cast<double>(sequences);
  return {overhead_ + base(d) + logits(d), decode_fixed_ + decode_per_seq_ * sequences, decode_per_token_};
}

double PassModel::DecodeLine::time(double context, double growth, std::int64_t k) const {
  const double kk = static_cast<double>(k);
  return kk * (fixed + per_seq) + per_token * (kk * context + growth * kk * (kk - 1.0) / 2.0);
}

// time() is increasing in k (every step takes a positive time): the root of the quadratic
// h k^2 + b k = span (h = per_token growth / 2, b = fixed + per_seq + per_token context - h) is
// the estimate, and the whole count is then checked against time() itself on both sides.
std::int64_t PassModel::DecodeLine::steps_to(double context, double growth, double span, std::int64_t cap) const {
  if (cap <= 1 || !(span > 0)) return std::max<std::int64_t>(0, std::min<std::int64_t>(cap, 1));
  const double h = per_token * growth / 2.0, b = fixed + per_seq + per_token * context - h;
  const double root = b > 0 ? 2.0 * span / (b + std::sqrt(b * b + 4.0 * h * span)) : static_cast<double>(cap);
  std::int64_t k = std::clamp<std::int64_t>(
      static_cast<std::int64_t>(std::ceil(std::min(root, static_cast<double>(cap)))), 1, cap);
  std::int64_t lo = 0, hi = cap;  // time(lo) < span (or lo = 0); time(hi) >= span or hi = cap
  for (int i = 0; i < 4; ++i) {   // the estimate is off by a step at most but for rounding
    if (time(context, growth, k) >= span) {
      hi = k;
      if (k == 1 || time(context, growth, k - 1) < span) return k;
      --k;
    } else {
      lo = k;
      if (k == cap) return cap;
      ++k;
    }
  }
  while (hi - lo > 1) {  // bisection: lo too few, hi enough (or the cap)
    const std::int64_t mid = lo + (hi - lo) / 2;
    (time(context, growth, mid) >= span ? hi : lo) = mid;
  }
  return hi;
}

double PassModel::prefill(std::int64_t tokens) const {
  double t = 0;
  for (std::int64_t done = 0; done < tokens;) {
    const std::int64_t chunk = std::min(max_tokens_, tokens - done);
    const double c = static_cast<double>(chunk), d = static_cast<double>(done);
    const bool last = done + chunk >= tokens;
    t += step({chunk, c * (d + (c + 1.0) / 2.0), 0, 0, last ? 1 : 0});
    done += chunk;
  }
  return t;
}

double PassModel::decode(int batch, double context) const {
  return step({0, 0, batch, batch * context, batch});
}

std::vector<StepOps> serving_passes(const ServeJob& job, const Cluster& c) {
  std::vector<StepOps> out;
  const Parallelism p = replica_layout(job);
  const InferencePass base = pass_for(job);
  const double context = std::max(1.0, job.traffic.input.mean + job.traffic.output.mean / 2.0);
  std::vector<int> batches = {1, 8, 32, 128, job.engine.max_num_seqs};
  std::sort(batches.begin(), batches.end());
  batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
  for (int b : batches) {
    if (b < 1 || b > job.engine.max_num_seqs) continue;
    InferencePass ip = base;
    ip.decode_sequences = b;
    ip.decode_context = context;
    ip.logits_rows = b;
    out.push_back(build_pass_ops(job.model, ip, p, c));
  }
  InferencePass prefill = base;
  prefill.prefill_tokens = std::max<std::int64_t>(1, job.engine.max_num_batched_tokens);
  prefill.prefill_keys = static_cast<double>(prefill.prefill_tokens) / 2.0;
  prefill.logits_rows = 1;
  out.push_back(build_pass_ops(job.model, prefill, p, c));
  return out;
}

}  // namespace capplan::sim
