// SPDX-License-Identifier: Apache-2.0
// The serving planner: the asked layout's plan and, when asked to compare, every layout the GPU
// runs (TP sizes inside a node x weight formats), on the scenario's cluster or on every offering
// x engine x layout, ranked cheapest first with the Pareto front of cost per output token against
// the latency target. It returns structure; data/ words it (tables, JSON, the runner-up sentence).
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "capplan/sim/cost/op_cost.hpp"
#include "capplan/sim/search/search.hpp"
#include "capplan/sim/serve/serve.hpp"

namespace capplan::sim {

struct ServeOption {
  ServeJob job;
  ServePlan plan;
  Cluster cluster;          // where it was planned: the asked cluster, or an offering's node
  std::string instance_id;  // the offering's catalog id (empty: the asked cluster)
  bool confirmed = true;    // false: the closed form's figures (an offering search confirms only its front)
  std::string label;        // "[instance ][engine ]TP2 fp8": the option's name in tables and sentences
};

// The cost model a layout is priced with: per GPU (cluster) and engine (its assumptions).
using ServeCostFactory = std::function<std::shared_ptr<const OpCostModel>(const Cluster&, const EngineSpec&)>;

struct ServePlanRequest {
  ServeJob job;
  Cluster cluster;
  bool compare = false;            // also plan every TP size and weight format the GPU runs
  std::vector<Offering> offerings; // plan on these (compare mode); empty: the asked cluster
  std::vector<EngineSpec> engines; // engines to compare besides the job's (compare mode)
  int curve_points = 0;            // > 1: the asked layout's latency-throughput curve
};

struct ServePlanning {
  ServeOption asked;
  std::vector<ServeOption> options;  // compare mode: every layout planned, cheapest feasible first
  std::vector<std::size_t> pareto;   // indices into options
  std::vector<CurvePoint> curve;     // the asked layout's, when curve_points > 1
  std::string cost_source;           // the asked cluster's cost model (OpCostModel::source)
};

// With offerings or engines, every offering x engine x layout is planned by the closed form (one
// replica plan per GPU, GPUs per node, engine and layout, priced on each offering of it), then the
// cheapest feasible and the Pareto front are confirmed by simulation and the list re-sorted.
ServePlanning plan_serve_options(const ServePlanRequest& r, const ServeCostFactory& cost);

// The latency the job's SLO names, at its percentile (the end-to-end one when none is set).
double slo_latency(const ServeJob& j, const ServeLoad& l);
// "TP2 fp8", "TP1 PP2 EP4 bf16": a layout's short name.
std::string layout_name(const ServeJob& j);

}  // namespace capplan::sim
