// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/workload.hpp"

namespace capplan::sim {

const char* to_string(Framework f) { return f == Framework::pytorch ? "pytorch" : "megatron"; }

std::optional<Framework> framework_from_string(const std::string& s) {
  if (s == "megatron") return Framework::megatron;
  if (s == "pytorch") return Framework::pytorch;
  return std::nullopt;
}

// Weights only (no biases, as in Llama; GPT biases are < 0.1% of the total), plus the two
// norm scales per layer.
double ModelSpec::layer_params() const {
  const double h = hidden;
  const double attention = h * (h + 2.0 * kv_dim()) + h * h;  // QKV + output projection
  const double ffn = (gated_ffn ? 3.0 : 2.0) * h * ffn_hidden;
  return attention + ffn + 2.0 * h;
}

double ModelSpec::embedding_params() const { return static_cast<double>(vocab) * hidden; }

double ModelSpec::output_params() const { return tied_embeddings ? 0.0 : static_cast<double>(vocab) * hidden; }

double ModelSpec::total_params() const {
  return layers * layer_params() + embedding_params() + output_params() + hidden;  // + final norm
}

}  // namespace capplan::sim
