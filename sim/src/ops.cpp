// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/ops.hpp"

#include "capplan/sim/op_cost.hpp"

namespace capplan::sim {

namespace {
double element_bytes(Precision p) {
  switch (p) {
    case Precision::fp32:
    case Precision::tf32: return 4.0;
    case Precision::fp16:
    case Precision::bf16: return 2.0;
    case Precision::fp8: return 1.0;
  }
  return 2.0;
}
}  // namespace

units::Flops GemmOp::flops() const {
  return units::flops(2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
                      static_cast<double>(batch));
}

units::Bytes GemmOp::min_bytes() const {
  const double md = static_cast<double>(m), nd = static_cast<double>(n), kd = static_cast<double>(k);
  // Inputs in dtype; output written in bf16 (fp8 GEMMs emit bf16 in Transformer Engine).
  const double out_bytes = dtype == Precision::fp8 ? 2.0 : element_bytes(dtype);
  return units::bytes(static_cast<double>(batch) * ((md * kd + kd * nd) * element_bytes(dtype) + md * nd * out_bytes));
}

const char* to_string(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::all_reduce: return "all_reduce";
    case CollectiveKind::all_gather: return "all_gather";
    case CollectiveKind::reduce_scatter: return "reduce_scatter";
    case CollectiveKind::all_to_all: return "all_to_all";
    case CollectiveKind::send_recv: return "send_recv";
  }
  return "?";
}

std::optional<CollectiveKind> collective_kind_from_string(std::string_view name) {
  for (auto k : {CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::reduce_scatter,
                 CollectiveKind::all_to_all, CollectiveKind::send_recv}) {
    if (name == to_string(k)) return k;
  }
  return std::nullopt;
}

units::Seconds OpCostModel::cost(const Op& op) const {
  if (const auto* g = std::get_if<GemmOp>(&op)) return gemm(*g);
  if (const auto* mem = std::get_if<MemoryOp>(&op)) return memory(*mem);
  return collective(std::get<CollectiveOp>(op));
}

}  // namespace capplan::sim
