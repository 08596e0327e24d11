// SPDX-License-Identifier: Apache-2.0
// The space of parallel layouts searched for one cluster size: shared by estimate()'s "auto"
// strategy and by the planner (search.cpp), so both search exactly the same layouts in the same
// order.
#pragma once
#include <algorithm>
#include <optional>
#include <vector>

#include "capplan/sim/strategy.hpp"
#include "capplan/sim/workload.hpp"

namespace capplan::sim {

// Sequences from this length on are searched with context parallelism too.
inline constexpr int kLongContext = 32768;

// The fields that fix how many GPUs each dimension takes (plus the batch left per DP rank).
struct OuterLayout {
  int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, etp = 1;
  long long per_dp = 0;  // sequences per data-parallel rank per step
};

// standard: the space estimate() searches for "auto" (TP inside a node, micro-batches 1..32 in
// powers of two, ZeRO 0/1 with pipelining, the default overlap switches). exhaustive (the planner
// only): TP across nodes too, every micro-batch that divides the batch per DP rank, ZeRO 0-3 with
// any pipeline, and the TP / PP communication overlap switches both ways.
enum class LayoutSpaceKind { standard, exhaustive };

// Candidate (cp, ep, tp, pp) combinations for `gpus` GPUs on nodes of `gpus_per_node`, with the
// fixed fields of `r` applied, in the order estimate() has always searched them. Automatic TP stays
// inside a node (NVLink); pipeline depth is bounded by the layers.
std::vector<OuterLayout> outer_layouts(const ModelSpec& m, const TrainingJob& job, const StrategyRequest& r, int gpus,
                                       int gpus_per_node, LayoutSpaceKind kind = LayoutSpaceKind::standard);

namespace detail {
template <class T>
std::vector<T> fixed_or(const std::optional<T>& fixed, std::vector<T> all) {
  if (fixed) return {*fixed};
  return all;
}
}  // namespace detail

// Calls visit(const Parallelism&, long long micro_batches) for every completion of `o`: micro-batch
// (increasing), virtual stages, ZeRO stage, recompute, sequence parallelism. The layouts are not
// yet checked with check_layout.
// The one rule by which estimate's `auto` choice and the planner rank layouts that fit: the
// faster step first, then the smaller peak memory, then the layout order, so a choice never
// depends on the order layouts are visited in or on how they are split across threads.
struct LayoutScore {
  double step_s = 0;
  double memory_bytes = 0;
  Parallelism p;
};
inline bool better(const LayoutScore& a, const LayoutScore& b) {
  if (a.step_s != b.step_s) return a.step_s < b.step_s;
  if (a.memory_bytes != b.memory_bytes) return a.memory_bytes < b.memory_bytes;
  return a.p < b.p;
}

template <class Visit>
void for_each_inner_layout(const ModelSpec& m, const StrategyRequest& r, const OuterLayout& o, Visit&& visit,
                           LayoutSpaceKind kind = LayoutSpaceKind::standard) {
  using detail::fixed_or;
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
  const std::vector<int> zeros = o.dp == 1 ? std::vector<int>{0}
                                 : (o.pp > 1 && !wide) ? std::vector<int>{0, 1}
                                                       : std::vector<int>{0, 1, 2, 3};
  const bool dp_overlap = r.overlap_dp_comm.value_or(true);
  const std::vector<bool> tp_overlaps =
      fixed_or(r.tp_comm_overlap, wide && o.tp > 1 ? std::vector<bool>{false, true} : std::vector<bool>{false});
  const std::vector<bool> pp_overlaps =
      fixed_or(r.pp_comm_overlap, wide && o.pp > 1 ? std::vector<bool>{false, true} : std::vector<bool>{false});
  const std::vector<bool> ep_overlaps = fixed_or(
      r.ep_comm_overlap, wide && o.ep > 1 && m.is_moe() ? std::vector<bool>{false, true} : std::vector<bool>{false});
  const std::vector<bool> sps =
      o.tp > 1 ? (m.is_moe() ? std::vector<bool>{true} : std::vector<bool>{true, false}) : std::vector<bool>{false};
  const std::vector<Recompute> rcs =
      fixed_or(r.recompute, r.selective_recompute ? std::vector<Recompute>{Recompute::none, Recompute::selective,
                                                                           Recompute::full}
                                                  : std::vector<Recompute>{Recompute::none, Recompute::full});
  for (int mb : fixed_or(r.micro_batch, mbs)) {
    const long long micro_batches = o.per_dp / std::max(1, mb);
    std::vector<int> vs{1};
    if (o.pp > 1 && micro_batches % o.pp == 0 && !r.first_stage_layers && !r.last_stage_layers) {
      for (int v = 2; v <= 8; ++v) {
        if (m.layers % (o.pp * v) == 0) vs.push_back(v);
      }
    }
    for (int v : fixed_or(r.virtual_stages, vs)) {
      for (int zero : fixed_or(r.zero, zeros)) {
        for (Recompute rc : rcs) {
          for (bool sp : fixed_or(r.sequence_parallel, sps)) {
            for (bool tpo : tp_overlaps) {
              for (bool ppo : pp_overlaps) {
                for (bool epo : ep_overlaps) {
                  Parallelism p{o.tp, o.pp, o.dp, o.cp, o.ep, o.etp, mb, v, zero, rc, sp, dp_overlap, tpo, ppo, epo};
                  // The options never searched (kStrategyOptions): the user's choice, else the default.
                  for (const auto& opt : kStrategyOptions) {
                    if (!opt.searched) p.*opt.value = (r.*opt.request).value_or(opt.fallback);
                  }
                  // Uneven first/last stages: the user's, never searched (applied only with pp > 1).
                  if (o.pp > 1) {
                    p.first_stage_layers = r.first_stage_layers.value_or(0);
                    p.last_stage_layers = r.last_stage_layers.value_or(0);
                  }
                  visit(p, micro_batches);
                }
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace capplan::sim
