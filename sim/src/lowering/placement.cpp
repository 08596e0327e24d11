// SPDX-License-Identifier: Apache-2.0
// Where a communicator's ranks sit on the network's tiers (place_group, pipeline_pair), and how many
// ranks hold the same expert shard.
#include <algorithm>
#include <cstddef>

#include "capplan/sim/lowering/step_model.hpp"
#include "lowering/shared_ops.hpp"

namespace capplan::sim {

GroupPlacement place_group(int size, int stride, const Topology& topology) {
  GroupPlacement g;
  g.size = std::max(1, size);
  g.tier = 0;
  g.span.fill(1);
  if (g.size == 1) return g;
  const int tiers = std::clamp(topology.size(), 1, kMaxTiers);
  int below = 1;  // members in one domain of the tier inside
  for (int i = 0; i < tiers; ++i) {
    const int domain = topology.empty() ? 0 : topology.tiers[static_cast<std::size_t>(i)].gpus;
    int members = g.size;  // unbounded (or outermost) tier: the whole group
    if (domain > 0 && i + 1 < tiers) {
      members = stride >= domain ? 1 : std::clamp(domain / std::max(1, stride), 1, g.size);
    }
    members = std::max(members, below);
    g.span[static_cast<std::size_t>(i)] = (members + below - 1) / below;
    if (g.span[static_cast<std::size_t>(i)] > 1) g.tier = i;
    below = members;
  }
  g.ranks_per_node = g.span[0];
  g.nodes = (g.size + g.ranks_per_node - 1) / g.ranks_per_node;
  return g;
}

// Two ranks of one pipeline, `stages` apart or neighbours: stage i occupies ranks
// [i*tp*dp*cp, (i+1)*tp*dp*cp), so the pair shares a node only when the whole pipeline does.
// (place_group's strided placement assumes the stride divides the node; a pipeline's may not.)
GroupPlacement pipeline_pair(const Parallelism& p, const Cluster& c) {
  const bool crosses = 1LL * p.tp * p.dp * p.cp * p.pp > c.gpus_per_node;
  return GroupPlacement{2, crosses ? 1 : 2, crosses ? 2 : 1};
}

GroupPlacement place_group(int size, int stride, int gpus_per_node) {
  return place_group(size, stride, Topology::two_tier(gpus_per_node, {}, {}));
}

int expert_data_parallel(const Parallelism& p) {
  const int ranks = p.tp * p.dp * p.cp;
  const int ep = std::max(1, p.ep * p.etp);
  return std::max(1, ranks / ep);
}

}  // namespace capplan::sim
