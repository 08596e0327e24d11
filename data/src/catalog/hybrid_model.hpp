// SPDX-License-Identifier: Apache-2.0
// A hybrid model's keys in a `model` object (catalog record or scenario): `layer_pattern`
// (Megatron-Core's hybrid_override_pattern: M, *, -, E per layer) and `mamba` (the Mamba-2 mixer's
// shape). Private to capplan_data: catalog.cpp and scenario_io.cpp read them the same way.
#pragma once
#include <string>

#include "capplan/sim/workload/model.hpp"
#include "reading/json_reader.hpp"

namespace capplan::data::detail {

// Reads `layer_pattern` and `mamba` of `j` (at pointer `p`) into `m`, merging `mamba` over the
// shape `m` already holds (a preset's). A pattern sets `layers` to its length when `j` gives no
// `layers`.
void read_hybrid(const nlohmann::json& j, const std::string& p, sim::ModelSpec& m, Reader& r);

// The contract of ModelSpec::layer_pattern and MambaSpec, each violation an error naming the key.
void check_hybrid(const sim::ModelSpec& m, const std::string& p, Reader& r);

// The hybrid keys of `m` as read_hybrid reads them (nothing for a model without a pattern).
void hybrid_to_json(const sim::ModelSpec& m, nlohmann::json& model);

}  // namespace capplan::data::detail
