// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to capplan_data: the `topology` list shared by a scenario's cluster section and an
// instances.json entry. Keys carry their units: gpus, gbps_per_gpu (Gbit/s, one direction, per
// GPU), latency_us, rails, oversubscription (data/README.md, instances.json "topology"; docs/model.md 3a).
#include <optional>
#include <string>

#include "capplan/sim/workload/topology.hpp"
#include "reading/json_reader.hpp"

namespace capplan::data::detail {

// Reads and checks a topology list at `pointer`; every finding goes to `r`. `require_source`:
// each tier must name where its numbers come from (catalog entries). Empty on any error.
std::optional<sim::Topology> read_topology(const json& v, const std::string& pointer, Reader& r, bool require_source);

// Checks a topology against the cluster it describes: the outermost tier holds every GPU (or is
// unbounded) and GPUs per node and the innermost domain divide one another.
void check_topology_fits(const sim::Topology& t, int gpus, int gpus_per_node, const std::string& pointer, Reader& r);

}  // namespace capplan::data::detail
