// SPDX-License-Identifier: Apache-2.0
// An op's price: the cost model's GEMM, memory or collective term by the op's kind.
#include "capplan/sim/cost/op_cost.hpp"

#include <variant>

namespace capplan::sim {

units::Seconds OpCostModel::cost(const Op& op) const {
  if (const auto* g = std::get_if<GemmOp>(&op)) return gemm(*g);
  if (const auto* mem = std::get_if<MemoryOp>(&op)) return memory(*mem);
  return collective(std::get<CollectiveOp>(op));
}

}  // namespace capplan::sim
