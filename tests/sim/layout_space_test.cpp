// SPDX-License-Identifier: Apache-2.0
// The layout space as a value (sim/src/estimate/layout_space.hpp): its named dimensions and
// domains, its size, construct() against the nested loops it replaced (kept here as the oracle),
// and split() for threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "estimate/layout_space.hpp"
#include "test_support.hpp"

namespace capplan::sim {
namespace {

// ---------------------------------------------------------------------------------------------
// The oracle: the enumeration as it was before the space became a value (outer_layouts() and
// for_each_inner_layout()), copied verbatim apart from names.

template <class T>
std::vector<T> old_fixed_or(const std::optional<T>& fixed, std::vector<T> all) {
  return fixed ? std::vector<T>{*fixed} : all;
}

std::vector<int> old_divisors(long long n, long long limit) {
  std::vector<int> out;
  for (long long d = 1; d <= std::min(n, limit); ++d) {
    if (n % d == 0) out.push_back(static_cast<int>(d));
  }
  return out;
}

std::vector<OuterLayout> old_outer_layouts(const ModelSpec& m, const TrainingJob& job, const StrategyRequest& r,
                                           int gpus, int gpn, LayoutSpaceKind kind) {
  std::vector<int> tps;
  for (int t : old_divisors(gpus, kind == LayoutSpaceKind::exhaustive ? gpus : gpn)) {
    if (m.heads % t == 0 && m.ffn_hidden % t == 0) tps.push_back(t);
  }
  tps = old_fixed_or(r.tp, tps);
  const int etp = r.etp.value_or(1);
  std::vector<int> cps{1};
  if (m.seq_len >= kLongContext) {
    for (int c : {2, 4, 8, 16}) {
      if (gpus % c == 0 && m.seq_len % (2 * c) == 0) cps.push_back(c);
    }
  }
  cps = old_fixed_or(r.cp, cps);
  std::vector<int> eps{1};
  if (m.is_moe()) {
    for (int e : {2, 4, 8, 16, 32, 64, 128, 256}) {
      if (m.moe.experts % e == 0) eps.push_back(e);
    }
  }
  eps = old_fixed_or(r.ep, eps);
  std::vector<OuterLayout> out;
  for (int cp : cps)
    for (int ep : eps)
      for (int tp : tps) {
        if (tp < 1 || gpus % tp != 0) continue;
        for (int pp : old_fixed_or(r.pp, old_divisors(gpus / tp, m.layers))) {
          if (pp < 1 || 1LL * tp * pp * cp > gpus || gpus % (1LL * tp * pp * cp) != 0) continue;
          const int dp = static_cast<int>(gpus / (1LL * tp * pp * cp));
          if (m.is_moe() && (1LL * tp * dp * cp) % (1LL * ep * etp) != 0) continue;
          if (r.dp && *r.dp != dp) continue;
          if (job.global_batch % dp != 0) continue;
          out.push_back({tp, pp, dp, cp, ep, etp, job.global_batch / dp});
        }
      }
  return out;
}

struct Completion {
  Parallelism p;
  long long micro_batches = 0;
};

std::vector<Completion> old_inner_layouts(const ModelSpec& m, const StrategyRequest& r, const OuterLayout& o,
                                          LayoutSpaceKind kind) {
  std::vector<Completion> out;
  const bool wide = kind == LayoutSpaceKind::exhaustive;
  // Micro-batches dividing the batch per DP rank: 1..1024 (exhaustive), powers of two to 32.
  std::vector<int> mbs;
  const std::vector<long long> powers{1, 2, 4, 8, 16, 32};
  for (long long mb = 1; mb <= (wide ? std::min<long long>(o.per_dp, 1024) : 32); ++mb) {
    const bool candidate = wide || std::find(powers.begin(), powers.end(), mb) != powers.end();
    if (candidate && o.per_dp % mb == 0) mbs.push_back(static_cast<int>(mb));
  }
  const std::vector<int> zeros = o.dp == 1 ? std::vector<int>{0}
                                 : (o.pp > 1 && !wide) ? std::vector<int>{0, 1}
                                                       : std::vector<int>{0, 1, 2, 3};
  const bool dp_overlap = r.overlap_dp_comm.value_or(true);
  const std::vector<bool> tp_overlaps =
      old_fixed_or(r.tp_comm_overlap, wide && o.tp > 1 ? std::vector<bool>{false, true} : std::vector<bool>{false});
  const std::vector<bool> pp_overlaps =
      old_fixed_or(r.pp_comm_overlap, wide && o.pp > 1 ? std::vector<bool>{false, true} : std::vector<bool>{false});
  const std::vector<bool> ep_overlaps = old_fixed_or(
      r.ep_comm_overlap, wide && o.ep > 1 && m.is_moe() ? std::vector<bool>{false, true} : std::vector<bool>{false});
  const std::vector<bool> sps =
      o.tp > 1 ? (m.is_moe() ? std::vector<bool>{true} : std::vector<bool>{true, false}) : std::vector<bool>{false};
  const std::vector<Recompute> rcs = old_fixed_or(
      r.recompute, r.selective_recompute ? std::vector<Recompute>{Recompute::none, Recompute::selective, Recompute::full}
                                         : std::vector<Recompute>{Recompute::none, Recompute::full});
  for (int mb : old_fixed_or(r.micro_batch, mbs)) {
    const long long micro_batches = o.per_dp / std::max(1, mb);
    std::vector<int> vs{1};
    if (o.pp > 1 && micro_batches % o.pp == 0 && !r.first_stage_layers && !r.last_stage_layers) {
      for (int v = 2; v <= 8; ++v) {
        if (m.layers % (o.pp * v) == 0) vs.push_back(v);
      }
    }
    for (int v : old_fixed_or(r.virtual_stages, vs))
      for (int zero : old_fixed_or(r.zero, zeros))
        for (Recompute rc : rcs)
          for (bool sp : old_fixed_or(r.sequence_parallel, sps))
            for (bool tpo : tp_overlaps)
              for (bool ppo : pp_overlaps)
                for (bool epo : ep_overlaps) {
                  Parallelism p{o.tp, o.pp, o.dp, o.cp, o.ep, o.etp, mb, v, zero, rc, sp, dp_overlap, tpo, ppo, epo};
                  for (const auto& opt : kStrategyOptions) {
                    if (!opt.searched) p.*opt.value = (r.*opt.request).value_or(opt.fallback);
                  }
                  if (o.pp > 1) {
                    p.first_stage_layers = r.first_stage_layers.value_or(0);
                    p.last_stage_layers = r.last_stage_layers.value_or(0);
                  }
                  out.push_back({p, micro_batches});
                }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Cases.

// The space reads the layers, heads, FFN width, sequence length and expert count only.
ModelSpec dense_model() { return test::gpt_1_3b(); }  // 24 layers, 16 heads, FFN 8192, 2k tokens
ModelSpec moe_long_context_model() {                   // 32 layers, 32 heads, 8 experts
  ModelSpec m = test::mixtral_8x7b();
  m.seq_len = 32768;
  return m;
}

struct Case {
  std::string name;
  ModelSpec model;
  long long global_batch = 0;
  StrategyRequest request;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  out.push_back({"dense auto", dense_model(), 64, {}});
  out.push_back({"dense batch 48", dense_model(), 48, {}});
  {
    StrategyRequest r;
    r.zero = 1;
    r.tp = 2;
    r.tp_comm_overlap = true;
    out.push_back({"dense tp 2 zero 1 tp-overlap", dense_model(), 64, r});
  }
  {
    StrategyRequest r;
    r.pp = 4;
    r.micro_batch = 2;
    r.selective_recompute = false;
    r.recompute_norms = true;
    r.overlap_dp_comm = false;
    out.push_back({"dense pp 4 mb 2 no selective", dense_model(), 64, r});
  }
  {
    StrategyRequest r;
    r.first_stage_layers = 4;
    out.push_back({"dense uneven first stage", dense_model(), 64, r});
  }
  {
    StrategyRequest r;
    r.virtual_stages = 3;
    r.dp = 2;
    out.push_back({"dense v 3 dp 2", dense_model(), 64, r});
  }
  out.push_back({"moe long context auto", moe_long_context_model(), 16, {}});
  {
    StrategyRequest r;
    r.ep = 4;
    r.etp = 2;
    r.sequence_parallel = true;
    r.ep_comm_overlap = false;
    out.push_back({"moe ep 4 etp 2", moe_long_context_model(), 16, r});
  }
  return out;
}

constexpr LayoutSpaceKind kKinds[] = {LayoutSpaceKind::standard, LayoutSpaceKind::exhaustive};
constexpr int kGpuCounts[] = {1, 2, 4, 6, 8, 12, 16, 32};

std::string label(const Case& c, LayoutSpaceKind kind, int gpus) {
  return c.name + (kind == LayoutSpaceKind::exhaustive ? ", exhaustive" : ", standard") + ", " +
         std::to_string(gpus) + " GPUs";
}

void expect_same_outer(const OuterLayout& a, const OuterLayout& b) {
  EXPECT_EQ(a.tp, b.tp);
  EXPECT_EQ(a.pp, b.pp);
  EXPECT_EQ(a.dp, b.dp);
  EXPECT_EQ(a.cp, b.cp);
  EXPECT_EQ(a.ep, b.ep);
  EXPECT_EQ(a.etp, b.etp);
  EXPECT_EQ(a.per_dp, b.per_dp);
}

std::vector<std::string_view> names(const std::vector<LayoutDimension>& dims) {
  std::vector<std::string_view> out;
  for (const LayoutDimension& d : dims) out.push_back(d.name);
  return out;
}

std::size_t product(const std::vector<LayoutDimension>& dims) {
  std::size_t n = 1;
  for (const LayoutDimension& d : dims) n *= d.values.size();
  return n;
}

ShapeLayoutSpace space_of(const Case& c, int gpus, int gpn, LayoutSpaceKind kind) {
  TrainingJob job;
  job.global_batch = c.global_batch;
  return ShapeLayoutSpace(c.model, job, c.request, gpus, gpn, kind);
}

// An outer layout without CP or EP.
OuterLayout outer_of(int tp, int pp, int dp, long long per_dp) { return {tp, pp, dp, 1, 1, 1, per_dp}; }

// ---------------------------------------------------------------------------------------------

TEST(LayoutSpace, DimensionsAreNamedInSearchOrder) {
  const Case c = cases().front();
  const ShapeLayoutSpace space = space_of(c, 8, 4, LayoutSpaceKind::standard);
  EXPECT_EQ(names(space.dimensions()), (std::vector<std::string_view>{"cp", "ep", "etp", "tp", "pp"}));
  const InnerLayoutSpace inner = space.inner(space.outer_layouts().front());
  EXPECT_EQ(names(inner.dimensions()),
            (std::vector<std::string_view>{"micro_batch", "virtual_stages", "zero", "recompute", "sequence_parallel",
                                           "tp_comm_overlap", "pp_comm_overlap", "ep_comm_overlap"}));
  EXPECT_EQ(space.dimension("dp"), nullptr);  // derived from the others, not a dimension
  EXPECT_EQ(inner.dimension("no_such_dimension"), nullptr);
}

TEST(LayoutSpace, OuterDomainsOfTheStandardAndExhaustiveKinds) {
  const Case c = cases().front();  // 16 heads, 24 layers
  const ShapeLayoutSpace standard = space_of(c, 16, 4, LayoutSpaceKind::standard);
  const ShapeLayoutSpace exhaustive = space_of(c, 16, 4, LayoutSpaceKind::exhaustive);
  EXPECT_EQ(standard.dimension("tp")->values, (std::vector<int>{1, 2, 4}));  // inside a node of 4
  EXPECT_EQ(exhaustive.dimension("tp")->values, (std::vector<int>{1, 2, 4, 8, 16}));
  EXPECT_EQ(standard.dimension("pp")->values, (std::vector<int>{1, 2, 4, 8, 16}));  // divisors up to 24 layers
  EXPECT_EQ(standard.dimension("cp")->values, (std::vector<int>{1}));  // short sequences
  EXPECT_EQ(standard.dimension("ep")->values, (std::vector<int>{1}));  // dense
  EXPECT_EQ(standard.size(), 3u * 5u);
  EXPECT_EQ(exhaustive.size(), 5u * 5u);

  const Case moe = cases()[6];  // 32k tokens, 8 experts, 32 heads, FFN 14336 = 7 x 2048
  const ShapeLayoutSpace long_context = space_of(moe, 16, 8, LayoutSpaceKind::standard);
  EXPECT_EQ(long_context.dimension("cp")->values, (std::vector<int>{1, 2, 4, 8, 16}));
  EXPECT_EQ(long_context.dimension("ep")->values, (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(long_context.dimension("tp")->values, (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(long_context.dimension("pp")->values, (std::vector<int>{1, 2, 4, 8, 16}));
  const ShapeLayoutSpace six = space_of(moe, 24, 8, LayoutSpaceKind::exhaustive);
  EXPECT_EQ(six.dimension("tp")->values, (std::vector<int>{1, 2, 4, 8}));  // 3, 6, 12, 24 do not divide 32 heads
  EXPECT_EQ(six.dimension("cp")->values, (std::vector<int>{1, 2, 4, 8}));  // 16 does not divide 24 GPUs

  // A short sequence whose global batch holds fewer sequences than there are GPUs: the layout must
  // split something other than the batch, and CP is one of the ways (searches_cp).
  Case small_batch = c;
  small_batch.global_batch = 8;
  EXPECT_EQ(space_of(small_batch, 16, 4, LayoutSpaceKind::standard).dimension("cp")->values,
            (std::vector<int>{1, 2, 4, 8, 16}));
  small_batch.global_batch = 16;
  EXPECT_EQ(space_of(small_batch, 16, 4, LayoutSpaceKind::standard).dimension("cp")->values, (std::vector<int>{1}));
}

TEST(LayoutSpace, InnerDomainsOfTheStandardAndExhaustiveKinds) {
  const Case c = cases().front();
  const OuterLayout piped = outer_of(2, 2, 4, 16);  // tp 2, pp 2, dp 4
  const InnerLayoutSpace standard(c.model, c.request, piped, LayoutSpaceKind::standard);
  const InnerLayoutSpace exhaustive(c.model, c.request, piped, LayoutSpaceKind::exhaustive);
  EXPECT_EQ(standard.dimension("zero")->values, (std::vector<int>{0, 1}));  // pipelined: ZeRO 0-1
  EXPECT_EQ(exhaustive.dimension("zero")->values, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(standard.dimension("micro_batch")->values, (std::vector<int>{1, 2, 4, 8, 16}));  // 16 per DP rank
  EXPECT_EQ(exhaustive.dimension("micro_batch")->values, (std::vector<int>{1, 2, 4, 8, 16}));
  // Interleaving: 2..8 chunks with 2 x v dividing 24 layers.
  EXPECT_EQ(standard.dimension("virtual_stages")->values, (std::vector<int>{1, 2, 3, 4, 6}));
  const auto rc = [](Recompute x) { return static_cast<int>(x); };
  EXPECT_EQ(standard.dimension("recompute")->values,
            (std::vector<int>{rc(Recompute::none), rc(Recompute::selective), rc(Recompute::full)}));
  EXPECT_EQ(standard.dimension("sequence_parallel")->values, (std::vector<int>{1, 0}));  // TP > 1, dense
  EXPECT_EQ(standard.dimension("tp_comm_overlap")->values, (std::vector<int>{0}));
  EXPECT_EQ(exhaustive.dimension("tp_comm_overlap")->values, (std::vector<int>{0, 1}));
  EXPECT_EQ(exhaustive.dimension("pp_comm_overlap")->values, (std::vector<int>{0, 1}));
  EXPECT_EQ(exhaustive.dimension("ep_comm_overlap")->values, (std::vector<int>{0}));  // dense
  EXPECT_EQ(standard.size(), product(standard.dimensions()));
  EXPECT_EQ(exhaustive.size(), product(exhaustive.dimensions()));

  // Every micro-batch dividing the batch per DP rank in the exhaustive kind; ZeRO 0 alone at DP 1;
  // no interleaving, sequence parallelism or TP overlap without PP and TP.
  const OuterLayout flat = outer_of(1, 1, 1, 12);
  const InnerLayoutSpace flat_standard(c.model, c.request, flat, LayoutSpaceKind::standard);
  const InnerLayoutSpace flat_exhaustive(c.model, c.request, flat, LayoutSpaceKind::exhaustive);
  EXPECT_EQ(flat_standard.dimension("micro_batch")->values, (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(flat_exhaustive.dimension("micro_batch")->values, (std::vector<int>{1, 2, 3, 4, 6, 12}));
  EXPECT_EQ(flat_exhaustive.dimension("zero")->values, (std::vector<int>{0}));
  EXPECT_EQ(flat_exhaustive.dimension("virtual_stages")->values, (std::vector<int>{1}));
  EXPECT_EQ(flat_exhaustive.dimension("sequence_parallel")->values, (std::vector<int>{0}));
  EXPECT_EQ(flat_exhaustive.dimension("tp_comm_overlap")->values, (std::vector<int>{0}));

  // MoE: sequence parallelism always on with TP; EP overlap searched with EP > 1 (exhaustive).
  const Case moe = cases()[6];
  OuterLayout experts = outer_of(2, 1, 4, 4);
  experts.ep = 4;
  const InnerLayoutSpace moe_exhaustive(moe.model, moe.request, experts, LayoutSpaceKind::exhaustive);
  EXPECT_EQ(moe_exhaustive.dimension("sequence_parallel")->values, (std::vector<int>{1}));
  EXPECT_EQ(moe_exhaustive.dimension("ep_comm_overlap")->values, (std::vector<int>{0, 1}));
}

// A stack's support (StrategyRequest::support, from the recipe and the fine-tuning method) takes
// the dimensions it does not run out of the space: what a planner proposes, the stack can run.
TEST(LayoutSpace, OnlyWhatTheStackRunsIsSearched) {
  Case c = cases()[6];  // MoE, 32k tokens: every outer dimension is searched when unrestricted
  c.request.support.tensor_parallel = false;
  c.request.support.pipeline_parallel = false;
  c.request.support.context_parallel = false;
  c.request.support.expert_parallel = false;
  const ShapeLayoutSpace none = space_of(c, 16, 8, LayoutSpaceKind::exhaustive);
  for (const char* d : {"tp", "pp", "cp", "ep"}) EXPECT_EQ(none.dimension(d)->values, (std::vector<int>{1})) << d;
  c.request.support = {};
  c.request.support.context_parallel = false;  // one dimension alone: the others as before
  const ShapeLayoutSpace no_cp = space_of(c, 16, 8, LayoutSpaceKind::standard);
  EXPECT_EQ(no_cp.dimension("cp")->values, (std::vector<int>{1}));
  EXPECT_EQ(no_cp.dimension("tp")->values, (std::vector<int>{1, 2, 4, 8}));

  // Inner level: no sequence parallelism, and only the ZeRO stages listed (FSDP: 2 and 3) where
  // there is more than one data-parallel rank; at DP 1 every stage is stage 0.
  Case d = cases().front();
  d.request.support.sequence_parallel = false;
  d.request.support.zero_stages = (1u << 2) | (1u << 3);
  const InnerLayoutSpace inner(d.model, d.request, outer_of(2, 1, 8, 16), LayoutSpaceKind::exhaustive);
  EXPECT_EQ(inner.dimension("sequence_parallel")->values, (std::vector<int>{0}));
  EXPECT_EQ(inner.dimension("zero")->values, (std::vector<int>{2, 3}));
  const InnerLayoutSpace one_rank(d.model, d.request, outer_of(1, 1, 1, 16), LayoutSpaceKind::exhaustive);
  EXPECT_EQ(one_rank.dimension("zero")->values, (std::vector<int>{0}));

  // QLoRA narrows any recipe: its 4-bit base has no tensor-parallel split.
  const StackSupport q = stack_support(StackSupport{}, TuneMethod::qlora);
  EXPECT_EQ(q.tensor_parallel, std::optional<bool>(false));
  EXPECT_EQ(q.sequence_parallel, std::optional<bool>(false));
  EXPECT_FALSE(q.pipeline_parallel.has_value());
  EXPECT_FALSE(stack_support(StackSupport{}, TuneMethod::lora).tensor_parallel.has_value());
}

TEST(LayoutSpace, UnevenStagesInterleaveWhereMegatronCoreSplitsThem) {
  // 126 layers on pp 16 with the first and last stage one layer short (7 + 14 x 8 + 7): the
  // embedding and the loss each take a layer's place (--account-for-embedding/loss-in-pipeline-
  // split), so v = 2 and 4 chunks of the 8-layer stages are built; 3, 5, 6 and 7 do not divide 8,
  // and 8 would leave the first stage's first chunk without a layer (layout_stage_layers_below_virtual).
  Case c = cases().front();
  c.model.layers = 126;
  c.request.first_stage_layers = 7;
  c.request.last_stage_layers = 7;
  const OuterLayout piped = outer_of(1, 16, 1, 16);
  const InnerLayoutSpace accounted(c.model, c.request, piped, LayoutSpaceKind::standard);
  EXPECT_EQ(accounted.dimension("virtual_stages")->values, (std::vector<int>{1, 2, 4}));
  // 6 + 14 x 8 + 8 = 126 (not the accounted form): every stage's layers divisible by v
  // (--decoder-first/last-pipeline-num-layers): v = 2 only (6, 8 and 8).
  c.request.first_stage_layers = 6;
  c.request.last_stage_layers = 8;
  const InnerLayoutSpace divisible(c.model, c.request, piped, LayoutSpaceKind::standard);
  EXPECT_EQ(divisible.dimension("virtual_stages")->values, (std::vector<int>{1, 2}));
  // Only one of the two given: never interleaved by the search.
  c.request.last_stage_layers.reset();
  const InnerLayoutSpace one_sided(c.model, c.request, piped, LayoutSpaceKind::standard);
  EXPECT_EQ(one_sided.dimension("virtual_stages")->values, (std::vector<int>{1}));
}

TEST(LayoutSpace, AFixedRequestFieldCollapsesItsDimensionToOneValue) {
  Case c = cases().front();
  c.request.tp = 4;
  c.request.pp = 2;
  c.request.micro_batch = 2;
  c.request.virtual_stages = 3;
  c.request.zero = 2;
  c.request.recompute = Recompute::full;
  c.request.sequence_parallel = false;
  c.request.tp_comm_overlap = true;
  c.request.pp_comm_overlap = false;
  const ShapeLayoutSpace space = space_of(c, 16, 4, LayoutSpaceKind::exhaustive);
  EXPECT_EQ(space.dimension("tp")->values, (std::vector<int>{4}));
  EXPECT_EQ(space.dimension("pp")->values, (std::vector<int>{2}));
  EXPECT_EQ(space.size(), 1u);
  const std::vector<OuterLayout> outer = space.outer_layouts();
  ASSERT_EQ(outer.size(), 1u);
  EXPECT_EQ(outer[0].dp, 2);
  const InnerLayoutSpace inner = space.inner(outer[0]);
  EXPECT_EQ(inner.dimension("micro_batch")->values, (std::vector<int>{2}));
  EXPECT_EQ(inner.dimension("virtual_stages")->values, (std::vector<int>{3}));
  EXPECT_EQ(inner.dimension("zero")->values, (std::vector<int>{2}));
  EXPECT_EQ(inner.dimension("recompute")->values, (std::vector<int>{static_cast<int>(Recompute::full)}));
  EXPECT_EQ(inner.dimension("sequence_parallel")->values, (std::vector<int>{0}));
  EXPECT_EQ(inner.dimension("tp_comm_overlap")->values, (std::vector<int>{1}));
  EXPECT_EQ(inner.dimension("pp_comm_overlap")->values, (std::vector<int>{0}));
  EXPECT_EQ(inner.size(), 1u);
  Parallelism p;
  long long micro_batches = 0;
  ASSERT_EQ(inner.construct(0, p, micro_batches), PointStatus::ok);
  EXPECT_EQ(p.micro_batch, 2);
  EXPECT_EQ(p.virtual_stages, 3);
  EXPECT_EQ(p.zero, 2);
  EXPECT_TRUE(p.tp_comm_overlap);
  EXPECT_EQ(micro_batches, 16);  // 64 sequences / DP 2 / micro-batch 2
}

TEST(LayoutSpace, PointsThatAreNotLayoutsSayWhy) {
  const Case c = cases().front();
  // 12 GPUs on nodes of 4: tp 4, pp 8 would need 32 GPUs.
  const ShapeLayoutSpace space = space_of(c, 12, 4, LayoutSpaceKind::standard);
  OuterLayout o;
  std::vector<PointStatus> statuses;
  for (std::size_t i = 0; i < space.size(); ++i) statuses.push_back(space.construct(i, o));
  EXPECT_NE(std::find(statuses.begin(), statuses.end(), PointStatus::model_not_dividing_gpus), statuses.end());
  EXPECT_NE(std::find(statuses.begin(), statuses.end(), PointStatus::ok), statuses.end());
  // DP 12 does not divide a batch of 64 (tp 1, pp 1).
  EXPECT_NE(std::find(statuses.begin(), statuses.end(), PointStatus::dp_not_dividing_batch), statuses.end());
  EXPECT_STREQ(to_string(PointStatus::dp_not_dividing_batch), "dp_not_dividing_batch");

  // pp 2, 3 sequences per DP rank: micro-batch 1 gives 3 micro-batches, not a multiple of PP, so
  // its interleaved points are not layouts (plain 1F1B is).
  const InnerLayoutSpace inner(c.model, c.request, outer_of(1, 2, 8, 3), LayoutSpaceKind::exhaustive);
  Parallelism p;
  long long micro_batches = 0;
  long skipped = 0;
  for (std::size_t i = 0; i < inner.size(); ++i) {
    const PointStatus s = inner.construct(i, p, micro_batches);
    if (s == PointStatus::ok) {
      EXPECT_EQ(p.virtual_stages, 1);
    } else {
      EXPECT_EQ(s, PointStatus::interleaving_without_rounds);
      ++skipped;
    }
  }
  EXPECT_GT(skipped, 0);
}

// size() is the index range, every index constructs to a layout or a status, the layouts are
// exactly those of the old nested loops in their order, and for_each visits the same.
TEST(LayoutSpace, ConstructReproducesTheOldEnumerationInOrder) {
  long outer_total = 0, inner_total = 0;
  for (const Case& c : cases()) {
    TrainingJob job;
    job.global_batch = c.global_batch;
    for (LayoutSpaceKind kind : kKinds) {
      for (int gpus : kGpuCounts) {
        for (int gpn : {4, 8}) {
          SCOPED_TRACE(label(c, kind, gpus) + " on nodes of " + std::to_string(gpn));
          const ShapeLayoutSpace space(c.model, job, c.request, gpus, gpn, kind);
          EXPECT_EQ(space.size(), product(space.dimensions()));
          const std::vector<OuterLayout> expected = old_outer_layouts(c.model, job, c.request, gpus, gpn, kind);
          std::vector<OuterLayout> built;
          for (std::size_t i = 0; i < space.size(); ++i) {
            OuterLayout o;
            if (space.construct(i, o) == PointStatus::ok) built.push_back(o);
          }
          ASSERT_EQ(built.size(), expected.size());
          const std::vector<OuterLayout> listed = space.outer_layouts();
          ASSERT_EQ(listed.size(), expected.size());
          for (std::size_t i = 0; i < expected.size(); ++i) {
            expect_same_outer(built[i], expected[i]);
            expect_same_outer(listed[i], expected[i]);
          }
          outer_total += static_cast<long>(expected.size());

          std::vector<Completion> all_expected, all_visited;
          for (const OuterLayout& o : expected) {
            const std::vector<Completion> want = old_inner_layouts(c.model, c.request, o, kind);
            const InnerLayoutSpace inner = space.inner(o);
            EXPECT_EQ(inner.size(), product(inner.dimensions()));
            std::vector<Completion> got;
            for (std::size_t i = 0; i < inner.size(); ++i) {
              Completion x;
              if (inner.construct(i, x.p, x.micro_batches) == PointStatus::ok) got.push_back(x);
            }
            ASSERT_EQ(got.size(), want.size());
            for (std::size_t i = 0; i < want.size(); ++i) {
              EXPECT_EQ(got[i].p, want[i].p) << "point " << i;
              EXPECT_EQ(got[i].micro_batches, want[i].micro_batches) << "point " << i;
            }
            std::vector<Completion> visited;
            inner.for_each([&](const Parallelism& p, long long mbs) { visited.push_back({p, mbs}); });
            ASSERT_EQ(visited.size(), want.size());
            for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(visited[i].p, want[i].p) << "point " << i;
            all_expected.insert(all_expected.end(), want.begin(), want.end());
            inner_total += static_cast<long>(want.size());
          }
          space.for_each([&](const Parallelism& p, long long mbs) { all_visited.push_back({p, mbs}); });
          ASSERT_EQ(all_visited.size(), all_expected.size());
          for (std::size_t i = 0; i < all_expected.size(); ++i) {
            EXPECT_EQ(all_visited[i].p, all_expected[i].p);
            EXPECT_EQ(all_visited[i].micro_batches, all_expected[i].micro_batches);
          }
        }
      }
    }
  }
  // The cases exercise the space: outer layouts and completions by the thousand.
  EXPECT_GT(outer_total, 500);
  EXPECT_GT(inner_total, 50000);
}

TEST(LayoutSpace, SplitCoversEveryIndexExactlyOnce) {
  for (std::size_t size : {0u, 1u, 2u, 7u, 64u, 1001u}) {
    for (int n = 1; n <= 5; ++n) {
      SCOPED_TRACE("size " + std::to_string(size) + ", " + std::to_string(n) + " parts");
      const std::vector<IndexRange> parts = split_indices(size, n);
      ASSERT_EQ(parts.size(), static_cast<std::size_t>(n));
      std::vector<int> seen(size, 0);
      std::size_t counted = 0;
      for (const IndexRange& r : parts) {
        counted += r.count();
        for (std::size_t i = r.begin; i < r.end; i += r.stride) ++seen[i];
      }
      EXPECT_EQ(counted, size);
      for (std::size_t i = 0; i < size; ++i) EXPECT_EQ(seen[i], 1) << "index " << i;
      EXPECT_EQ(split_indices(size, n).front().begin, parts.front().begin);  // the same every time
    }
  }
}

// for_each over the parts of split(n) visits, between them, exactly the layouts of the whole
// space: each once (the odometer for stride 1 and construct() for other strides agree).
TEST(LayoutSpace, ForEachOverTheSplitVisitsEachLayoutOnce) {
  for (const Case& c : cases()) {
    const ShapeLayoutSpace space = space_of(c, 8, 4, LayoutSpaceKind::exhaustive);
    for (const OuterLayout& o : space.outer_layouts()) {
      const InnerLayoutSpace inner = space.inner(o);
      std::vector<Parallelism> whole;
      inner.for_each([&](const Parallelism& p, long long) { whole.push_back(p); });
      for (int n = 1; n <= 5; ++n) {
        std::vector<Parallelism> parts;
        for (const IndexRange& r : inner.split(n)) {
          inner.for_each(r, [&](const Parallelism& p, long long) { parts.push_back(p); });
        }
        std::sort(parts.begin(), parts.end());
        std::vector<Parallelism> sorted = whole;
        std::sort(sorted.begin(), sorted.end());
        ASSERT_EQ(parts, sorted) << c.name << ", " << n << " parts";
        EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end()) << "a layout visited twice";
      }
      // A contiguous sub-range through the odometer equals construct() on the same indices.
      const std::size_t begin = inner.size() / 3, end = inner.size() - inner.size() / 4;
      std::vector<Parallelism> odometer, constructed;
      inner.for_each(IndexRange{begin, end, 1}, [&](const Parallelism& p, long long) { odometer.push_back(p); });
      for (std::size_t i = begin; i < end; ++i) {
        Parallelism p;
        long long mbs = 0;
        if (inner.construct(i, p, mbs) == PointStatus::ok) constructed.push_back(p);
      }
      EXPECT_EQ(odometer, constructed) << c.name;
    }
    // The outer level splits too.
    for (int n = 1; n <= 5; ++n) {
      std::vector<int> seen(space.size(), 0);
      for (const IndexRange& r : space.split(n)) {
        for (std::size_t i = r.begin; i < r.end; i += r.stride) ++seen[i];
      }
      EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<long>(space.size()));
    }
  }
}

}  // namespace
}  // namespace capplan::sim
