// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/cost/collective_model.hpp"

#include <algorithm>
#include <cmath>

namespace capplan::sim {

TierSpan tier_span(const GroupPlacement& g, int tiers) {
  TierSpan t;
  t.span.fill(1);
  const int last = std::clamp(tiers, 1, kMaxTiers) - 1;
  const int n = std::max(1, g.size);
  if (g.tier < 0) {
    // Built by hand, without a topology: ranks_per_node per innermost domain, `nodes` domains.
    if (g.nodes > 1 && last >= 1) {
      t.span[0] = std::max(1, g.ranks_per_node);
      t.span[1] = g.nodes;
      t.outer = 1;
    } else {
      t.span[0] = n;  // one domain (or a one-tier topology that holds every GPU)
    }
    return t;
  }
  for (int i = 0; i < kMaxTiers; ++i) t.span[static_cast<std::size_t>(i)] = std::max(1, g.span[static_cast<std::size_t>(i)]);
  t.outer = std::min(g.tier, last);
  for (int i = last + 1; i <= g.tier && i < kMaxTiers; ++i) {
    t.span[static_cast<std::size_t>(last)] *= t.span[static_cast<std::size_t>(i)];  // fold tiers the links lack
    t.span[static_cast<std::size_t>(i)] = 1;
  }
  if (t.outer == 0) t.span[0] = n;
  return t;
}

units::Seconds hierarchical_collective_time(const CollectiveOp& op, std::span<const TierLink> links,
                                            double latency_per_log2_us, const RingLatency* ring) {
  const int n = op.group.size;
  if (n <= 1 || op.bytes.base() <= 0 || links.empty()) return {};
  const TierSpan ts = tier_span(op.group, static_cast<int>(links.size()));
  const int outer = ts.outer;
  const double S = op.bytes.base();
  auto span = [&](int i) { return static_cast<double>(ts.span[static_cast<std::size_t>(i)]); };
  auto busbw = [&](int i) { return links[static_cast<std::size_t>(i)].busbw.base(); };
  const double alpha_us = links[static_cast<std::size_t>(outer)].latency_us + latency_per_log2_us * std::log2(double(n));
  double seconds = 0.0;
  switch (op.kind) {
    case CollectiveKind::all_reduce:
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter: {
      // Ring phases tier by tier; each rank enters tier i holding S / (s_0 ... s_{i-1}).
      const double factor = op.kind == CollectiveKind::all_reduce ? 2.0 : 1.0;
      double held = S;
      for (int i = 0; i <= outer; ++i) {
        const double s = span(i);
        if (s > 1) seconds += factor * (s - 1) / s * held / busbw(i);
        held = held / s;
      }
      break;
    }
    case CollectiveKind::all_to_all: {
      // Each tier carries the share of every rank's data whose nearest common domain it is.
      double inside = 1;  // P_{i-1}: ranks in the rank's own tier-(i-1) domain
      for (int i = 0; i <= outer; ++i) {
        const double reach = i == outer ? static_cast<double>(n) : inside * span(i);
        if (reach > inside) seconds = std::max(seconds, (reach - inside) / n * S / busbw(i));
        inside = reach;
      }
      break;
    }
    case CollectiveKind::send_recv:
      seconds = S / busbw(outer);
      break;
  }
  const bool ring_across_nodes = ring != nullptr && outer >= 1 &&
                                 (op.kind == CollectiveKind::all_gather || op.kind == CollectiveKind::reduce_scatter);
  if (ring_across_nodes) {
    // n - 1 ring steps, nodes - 1 of them over the network; the fastest protocol wins.
    const double nodes = static_cast<double>(n) / span(0);
    const double intra_steps = std::max(0.0, n - nodes);
    const double inter_steps = std::max(0.0, nodes - 1);
    double best = 0;
    bool first = true;
    for (const RingProtocol& p : ring->protocols) {
      if (!(p.bandwidth_fraction > 0)) continue;
      const double t = (p.base_us + intra_steps * p.intra_step_us + inter_steps * p.inter_step_us) * 1e-6 +
                       seconds / p.bandwidth_fraction;
      if (first || t < best) best = t;
      first = false;
    }
    if (!first) return units::seconds(best);
  }
  return units::seconds(seconds) + units::microseconds(alpha_us);
}

}  // namespace capplan::sim
