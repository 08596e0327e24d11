// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/stage_layout.hpp"

#include <algorithm>

namespace capplan::sim {

int layers_on_stage(int layers, int pp, int stage) {
  const int base = layers / pp;
  const int extra = layers % pp;
  return base + (stage < extra ? 1 : 0);
}

int stage_layer_count(int layers, const Parallelism& p, int stage) {
  const int first = p.pp > 1 ? p.first_stage_layers : 0;
  const int last = p.pp > 1 ? p.last_stage_layers : 0;
  if (first <= 0 && last <= 0) return layers_on_stage(layers, p.pp, stage);
  if (first > 0 && stage == 0) return first;
  if (last > 0 && stage == p.pp - 1) return last;
  // The stages between share what is left, evenly.
  const int lo = first > 0 ? 1 : 0;
  const int hi = last > 0 ? p.pp - 1 : p.pp;
  const int rest = layers - std::max(0, first) - std::max(0, last);
  return layers_on_stage(rest, hi - lo, stage - lo);
}

StageLayers stage_layers(const ModelSpec& m, const Parallelism& p, int stage) {
  StageLayers out;
  out.layers = stage_layer_count(m.layers, p, stage);
  out.first = stage == 0;
  out.last = stage == p.pp - 1;
  if (!m.is_moe()) return out;
  const int v = std::max(1, p.virtual_stages);
  // Model layer index where chunk k of stage i starts: all chunks of earlier rounds (k' < k, any
  // stage) and the chunks of earlier stages in round k come first.
  auto chunk_size = [&](int st, int k) { return layers_on_stage(stage_layer_count(m.layers, p, st), v, k); };
  int start = 0;
  for (int k = 0; k < v; ++k) {
    for (int st = 0; st < p.pp; ++st) {
      const int n = chunk_size(st, k);
      if (st == stage) {
        for (int l = start; l < start + n; ++l) out.moe += m.is_moe_layer(l) ? 1 : 0;
      }
      start += n;
    }
  }
  return out;
}

}  // namespace capplan::sim
