// SPDX-License-Identifier: Apache-2.0
// The layout space's dimensions and domains (layout_space.hpp).
#include "estimate/layout_space.hpp"

#include <optional>

namespace capplan::sim {

const char* to_string(PointStatus s) {
  switch (s) {
    case PointStatus::ok: return "ok";
    case PointStatus::tp_not_dividing_gpus: return "tp_not_dividing_gpus";
    case PointStatus::model_not_dividing_gpus: return "model_not_dividing_gpus";
    case PointStatus::experts_not_dividing_ranks: return "experts_not_dividing_ranks";
    case PointStatus::dp_not_the_requested: return "dp_not_the_requested";
    case PointStatus::dp_not_dividing_batch: return "dp_not_dividing_batch";
    case PointStatus::interleaving_without_rounds: return "interleaving_without_rounds";
  }
  return "ok";
}

std::vector<IndexRange> split_indices(std::size_t size, int n) {
  const std::size_t parts = static_cast<std::size_t>(std::max(1, n));
  std::vector<IndexRange> out;
  out.reserve(parts);
  for (std::size_t t = 0; t < parts; ++t) out.push_back({t, size, parts});
  return out;
}

namespace detail {

const LayoutDimension* find_dimension(const std::vector<LayoutDimension>& dims, std::string_view name) {
  for (const LayoutDimension& d : dims) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

std::size_t product_of_domains(const std::vector<LayoutDimension>& dims) {
  std::size_t n = 1;
  for (const LayoutDimension& d : dims) n *= d.values.size();
  return n;
}

}  // namespace detail

namespace {

template <class T>
std::vector<int> fixed_or(const std::optional<T>& fixed, std::vector<int> all) {
  if (fixed) return {static_cast<int>(*fixed)};
  return all;
}

std::vector<int> divisors(long long n, long long limit) {
  std::vector<int> out;
  for (long long d = 1; d <= n && d <= limit; ++d) {
    if (n % d == 0) out.push_back(static_cast<int>(d));
  }
  return out;
}

// Mixed-radix digits of `index` over `dims`, the last dimension fastest.
template <std::size_t N>
std::array<std::size_t, N> digits(std::size_t index, const std::vector<LayoutDimension>& dims) {
  std::array<std::size_t, N> d{};
  for (std::size_t k = N; k-- > 0;) {
    const std::size_t radix = dims[k].values.size();
    d[k] = index % radix;
    index /= radix;
  }
  return d;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Inner level.

InnerLayoutSpace::InnerLayoutSpace(const ModelSpec& m, const StrategyRequest& r, const OuterLayout& o,
                                   LayoutSpaceKind kind) {
  const bool wide = kind == LayoutSpaceKind::exhaustive;
  std::vector<int> mbs;
  if (wide) {
    for (long long mb = 1; mb <= o.per_dp && mb <= 1024; ++mb) {
      if (o.per_dp % mb == 0) mbs.push_back(static_cast<int>(mb));
    }
  } else {
    for (int mb : {1, 2, 4, 8, 16, 32}) {
      if (o.per_dp % mb == 0) mbs.push_back(mb);
    }
  }
  mbs = fixed_or(r.micro_batch, mbs);
  // Interleaving: 2..8 chunks where PP x v divides the layers; a searched v > 1 also needs the
  // micro-batch count to be a multiple of PP (rounds_ok_). With uneven first/last stages, the
  // splits Megatron-Core builds (transformer_config.py): every stage's layers divisible by v
  // (--decoder-first/last-pipeline-num-layers with virtual stages), or first and last one layer
  // short of the others, whose count v divides (--account-for-embedding-in-pipeline-split and
  // --account-for-loss-in-pipeline-split: the embedding and the loss each take a layer's place in
  // the first and last chunk).
  std::vector<int> vs{1};
  if (o.pp > 1 && !r.first_stage_layers && !r.last_stage_layers) {
    for (int v = 2; v <= 8; ++v) {
      if (m.layers % (o.pp * v) == 0) vs.push_back(v);
    }
  } else if (o.pp > 2 && r.first_stage_layers && r.last_stage_layers) {
    const int first = *r.first_stage_layers, last = *r.last_stage_layers;
    const int rest = m.layers - first - last, middle_stages = o.pp - 2;
    if (rest > 0 && rest % middle_stages == 0) {
      const int middle = rest / middle_stages;
      const bool accounted = first == middle - 1 && last == middle - 1;
      for (int v = 2; v <= 8; ++v) {
        if (middle % v != 0 || first < v || last < v) continue;  // every chunk holds a layer (check_layout)
        if ((first % v == 0 && last % v == 0) || accounted) vs.push_back(v);
      }
    }
  }
  rounds_checked_ = !r.virtual_stages && o.pp > 1;
  for (int mb : mbs) {
    const long long micro_batches = o.per_dp / std::max(1, mb);
    micro_batches_.push_back(micro_batches);
    rounds_ok_.push_back(o.pp > 1 && micro_batches % o.pp == 0 ? 1 : 0);
  }
  // Offloaded parameters are ZeRO-3's shards (check_layout): no other stage is tried.
  std::vector<int> zeros = r.offload_params.value_or(false) ? std::vector<int>{3}
                           : o.dp == 1                      ? std::vector<int>{0}
                           : (o.pp > 1 && !wide) ? std::vector<int>{0, 1}
                                                 : std::vector<int>{0, 1, 2, 3};
  // Only the stages the stack runs (with one DP rank every stage is stage 0).
  if (o.dp > 1) std::erase_if(zeros, [&](int z) { return !r.support.allows_zero(z); });
  const bool sp_runs = StackSupport::runs(r.support.sequence_parallel);
  const std::vector<int> off{0}, both{0, 1};
  const auto rc = [](Recompute x) { return static_cast<int>(x); };
  dims_ = {
      {"micro_batch", mbs},
      {"virtual_stages", fixed_or(r.virtual_stages, vs)},
      {"zero", fixed_or(r.zero, zeros)},
      {"recompute", fixed_or(r.recompute, r.selective_recompute
                                              ? std::vector<int>{rc(Recompute::none), rc(Recompute::selective),
                                                                 rc(Recompute::full)}
                                              : std::vector<int>{rc(Recompute::none), rc(Recompute::full)})},
      {"sequence_parallel",
       fixed_or(r.sequence_parallel,
                o.tp > 1 && sp_runs ? (m.is_moe() ? std::vector<int>{1} : std::vector<int>{1, 0}) : off)},
      {"tp_comm_overlap", fixed_or(r.tp_comm_overlap, wide && o.tp > 1 ? both : off)},
      {"pp_comm_overlap", fixed_or(r.pp_comm_overlap, wide && o.pp > 1 ? both : off)},
      {"ep_comm_overlap", fixed_or(r.ep_comm_overlap, wide && o.ep > 1 && m.is_moe() ? both : off)},
  };
  size_ = detail::product_of_domains(dims_);

  // What every point shares. The options never searched (kStrategyOptions) are the user's choice,
  // else the default; none of them is an inner dimension, so apply() never overwrites them.
  base_ = Parallelism{o.tp, o.pp, o.dp, o.cp, o.ep, o.etp};
  base_.overlap_dp_comm = r.overlap_dp_comm.value_or(true);
  for (const auto& opt : kStrategyOptions) {
    if (!opt.searched) base_.*opt.value = (r.*opt.request).value_or(opt.fallback);
  }
  // Uneven first/last stages: the user's, never searched (applied only with pp > 1).
  if (o.pp > 1) {
    base_.first_stage_layers = r.first_stage_layers.value_or(0);
    base_.last_stage_layers = r.last_stage_layers.value_or(0);
  }
}

InnerLayoutSpace::Digits InnerLayoutSpace::digits_of(std::size_t index) const { return digits<kDims>(index, dims_); }

void InnerLayoutSpace::apply(const Digits& d, Parallelism& p) const {
  p.micro_batch = dims_[kMicroBatch].values[d[kMicroBatch]];
  p.virtual_stages = dims_[kVirtualStages].values[d[kVirtualStages]];
  p.zero = dims_[kZero].values[d[kZero]];
  p.recompute = static_cast<Recompute>(dims_[kRecompute].values[d[kRecompute]]);
  p.sequence_parallel = dims_[kSp].values[d[kSp]] != 0;
  p.tp_comm_overlap = dims_[kTpOverlap].values[d[kTpOverlap]] != 0;
  p.pp_comm_overlap = dims_[kPpOverlap].values[d[kPpOverlap]] != 0;
  p.ep_comm_overlap = dims_[kEpOverlap].values[d[kEpOverlap]] != 0;
}

PointStatus InnerLayoutSpace::construct(std::size_t index, Parallelism& p, long long& micro_batches) const {
  const Digits d = digits_of(index);
  if (!valid(d)) return PointStatus::interleaving_without_rounds;
  p = base_;
  apply(d, p);
  micro_batches = micro_batches_[d[kMicroBatch]];
  return PointStatus::ok;
}

// ---------------------------------------------------------------------------------------------
// Outer level.

ShapeLayoutSpace::ShapeLayoutSpace(const ModelSpec& m, const TrainingJob& job, const StrategyRequest& r, int gpus, int gpn,
                         LayoutSpaceKind kind, bool even_stages)
    : model_(m), request_(r), global_batch_(job.global_batch), gpus_(gpus), kind_(kind) {
  // Each dimension only where the stack runs it (StrategyRequest::support).
  const StackSupport& sup = r.support;
  std::vector<int> tps;
  for (int t : divisors(gpus, kind == LayoutSpaceKind::exhaustive ? gpus : gpn)) {
    if (t > 1 && !StackSupport::runs(sup.tensor_parallel)) continue;
    if (m.heads % t == 0 && m.ffn_hidden % t == 0) tps.push_back(t);
  }
  // Context parallelism is searched where searches_cp says; expert parallelism for MoE models.
  std::vector<int> cps{1};
  if (searches_cp(m, job.global_batch, gpus) && StackSupport::runs(sup.context_parallel)) {
    for (int c : {2, 4, 8, 16}) {
      if (gpus % c == 0 && m.seq_len % (2 * c) == 0) cps.push_back(c);
    }
  }
  std::vector<int> eps{1};
  if (m.is_moe() && StackSupport::runs(sup.expert_parallel)) {
    for (int e : {2, 4, 8, 16, 32, 64, 128, 256}) {
      if (m.moe.experts % e == 0) eps.push_back(e);
    }
  }
  // PP: the divisors of the GPUs up to the layers; those that do not divide GPUs / (TP x CP)
  // construct to model_not_dividing_gpus, which leaves the divisors of GPUs / TP in order. Even
  // stages: only those that divide the layers too (PP x v with virtual stages fixed; searched
  // virtual stages always divide them).
  std::vector<int> pps = fixed_or(r.pp, StackSupport::runs(sup.pipeline_parallel) ? divisors(gpus, m.layers)
                                                                                   : std::vector<int>{1});
  if (even_stages) {
    const long long v = std::max(1, r.virtual_stages.value_or(1));
    std::erase_if(pps, [&](int pp) { return pp < 1 || m.layers % (pp * v) != 0; });
  }
  dims_ = {
      {"cp", fixed_or(r.cp, cps)},
      {"ep", fixed_or(r.ep, eps)},
      {"etp", {r.etp.value_or(1)}},
      {"tp", fixed_or(r.tp, tps)},
      {"pp", pps},
  };
  size_ = detail::product_of_domains(dims_);
}

PointStatus ShapeLayoutSpace::construct(std::size_t index, OuterLayout& out) const {
  const auto d = digits<kDims>(index, dims_);
  const int cp = dims_[kCp].values[d[kCp]], ep = dims_[kEp].values[d[kEp]], etp = dims_[kEtp].values[d[kEtp]];
  const int tp = dims_[kTp].values[d[kTp]], pp = dims_[kPp].values[d[kPp]];
  const int gpus = gpus_;
  if (tp < 1 || gpus % tp != 0) return PointStatus::tp_not_dividing_gpus;
  if (pp < 1 || 1LL * tp * pp * cp > gpus || gpus % (1LL * tp * pp * cp) != 0) {
    return PointStatus::model_not_dividing_gpus;
  }
  const int dp = static_cast<int>(gpus / (1LL * tp * pp * cp));
  if (model_.is_moe() && (1LL * tp * dp * cp) % (1LL * ep * etp) != 0) return PointStatus::experts_not_dividing_ranks;
  if (request_.dp && *request_.dp != dp) return PointStatus::dp_not_the_requested;
  if (global_batch_ % dp != 0) return PointStatus::dp_not_dividing_batch;
  out = {tp, pp, dp, cp, ep, etp, global_batch_ / dp};
  return PointStatus::ok;
}

std::vector<OuterLayout> ShapeLayoutSpace::outer_layouts() const {
  std::vector<OuterLayout> out;
  OuterLayout o;
  for (std::size_t i = 0; i < size_; ++i) {
    if (construct(i, o) == PointStatus::ok) out.push_back(o);
  }
  return out;
}

}  // namespace capplan::sim
