// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/lowering/ops.hpp"


namespace capplan::sim {


units::Flops GemmOp::flops() const {
  return units::flops(2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
                      static_cast<double>(batch));
}

units::Bytes GemmOp::min_bytes() const {
  const double md = static_cast<double>(m), nd = static_cast<double>(n), kd = static_cast<double>(k);
  // Inputs in dtype; output written in bf16 (fp8 GEMMs emit bf16 in Transformer Engine).
  const bool narrow = dtype == Precision::fp8 || dtype == Precision::fp4;
  const double out_bytes = narrow ? 2.0 : element_bytes(dtype);
  const double b_bytes = weight_bytes > 0 ? weight_bytes : element_bytes(dtype);
  return units::bytes(static_cast<double>(batch) *
                      (md * kd * element_bytes(dtype) + kd * nd * b_bytes + md * nd * out_bytes));
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

const char* to_string(OpRole r) {
  switch (r) {
    case OpRole::linear: return "linear";
    case OpRole::attention_core: return "attention_core";
    case OpRole::softmax: return "softmax";
    case OpRole::norm: return "norm";
    case OpRole::activation: return "activation";
    case OpRole::expert_activation: return "expert_activation";
    case OpRole::residual: return "residual";
    case OpRole::dropout: return "dropout";
    case OpRole::rope: return "rope";
    case OpRole::ssm: return "ssm";
    case OpRole::kv_cache: return "kv_cache";
    case OpRole::host_copy: return "host_copy";
    case OpRole::latent_norm: return "latent_norm";
    case OpRole::copy: return "copy";
    case OpRole::moe_permute: return "moe_permute";
    case OpRole::moe_elementwise: return "moe_elementwise";
    case OpRole::fp8_cast: return "fp8_cast";
    case OpRole::embedding: return "embedding";
    case OpRole::loss: return "loss";
    case OpRole::checkpoint: return "checkpoint";
    case OpRole::collective: return "collective";
    case OpRole::p2p: return "p2p";
    case OpRole::optimizer: return "optimizer";
    case OpRole::adapter: return "adapter";
    case OpRole::dequantize: return "dequantize";
  }
  return "?";
}

}  // namespace capplan::sim
