// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/serve/serve_planner.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace capplan::sim {

double slo_latency(const ServeJob& j, const ServeLoad& l) {
  const double q = j.slo.percentile;
  if (j.slo.e2e.base() > 0) return l.e2e.at(q);
  if (j.slo.ttft.base() > 0) return l.ttft.at(q);
  if (j.slo.tpot.base() > 0) return l.tpot.at(q);
  return l.e2e.at(q);
}

std::string layout_name(const ServeJob& j) {
  std::string s = "TP" + std::to_string(j.tp);
  if (j.pp > 1) s += " PP" + std::to_string(j.pp);
  if (j.ep > 1) s += " EP" + std::to_string(j.ep);
  return s + " " + to_string(j.weights);
}

namespace {

double per_output(const ServePlan& p) { return p.usd_per_million_output.value_or(1e300); }

// Every TP size inside one node that the model's heads allow, every weight format the GPU runs
// (bf16 and int4 stand for fp16 and int8).
std::vector<ServeJob> layouts_on(const ServeJob& base, const Cluster& c) {
  std::vector<WeightFormat> formats;
  for (int i = 0; i < kWeightFormats; ++i) {
    const auto f = static_cast<WeightFormat>(i);
    if (f == WeightFormat::fp16 || f == WeightFormat::int8) continue;
    if (c.gpu.peak.for_precision(traits(f).compute).base() > 0) formats.push_back(f);
  }
  std::vector<ServeJob> out;
  for (int tp = 1; tp <= c.gpus_per_node; tp *= 2) {
    for (WeightFormat f : formats) {
      ServeJob j = base;
      j.tp = tp;
      j.pp = 1;
      j.ep = base.ep > 1 ? tp : 1;
      j.weights = f;
      if (!check_serve_job(j, c)) out.push_back(j);
    }
  }
  return out;
}

void sort_options(std::vector<ServeOption>& options) {
  std::stable_sort(options.begin(), options.end(), [](const ServeOption& a, const ServeOption& b) {
    if (a.plan.feasible != b.plan.feasible) return a.plan.feasible;
    // A known cost before an unknown one, then the cheaper, then fewer GPUs.
    if (a.plan.usd_per_month.has_value() != b.plan.usd_per_month.has_value()) return a.plan.usd_per_month.has_value();
    const double ca = a.plan.usd_per_month.value_or(0), cb = b.plan.usd_per_month.value_or(0);
    if (ca != cb) return ca < cb;
    return a.plan.gpus < b.plan.gpus;
  });
}

// Pareto front: no other layout both cheaper per output token and faster at the percentile.
std::vector<std::size_t> pareto_of(const std::vector<ServeOption>& options) {
  std::vector<std::size_t> front;
  for (std::size_t i = 0; i < options.size(); ++i) {
    const auto& a = options[i];
    if (!a.plan.feasible) continue;
    bool dominated = false;
    for (const auto& b : options) {
      if (&a == &b || !b.plan.feasible) continue;
      const double la = slo_latency(a.job, a.plan.at_rate), lb = slo_latency(b.job, b.plan.at_rate);
      if (per_output(b.plan) <= per_output(a.plan) && lb <= la && (per_output(b.plan) < per_output(a.plan) || lb < la)) {
        dominated = true;
        break;
      }
    }
    if (!dominated) front.push_back(i);
  }
  return front;
}

// Offerings x engines x layouts: one closed-form replica plan per (GPU, GPUs per node, engine,
// layout), priced on every offering of that shape; a cost model per GPU and engine. The closed
// form ranks; the simulation confirms what is kept: the cheapest feasible and the Pareto front,
// each re-planned on its own offering. A confirmed plan can move (the simulation may add a
// replica), so the front is taken again until every member of it and the cheapest are confirmed,
// or 48 simulations are spent (the rest keep the closed form's figures, marked).
std::vector<ServeOption> plan_offerings(const ServePlanRequest& r, const ServeCostFactory& cost_of) {
  std::vector<ServeOption> options;
  std::vector<Offering> wheres = r.offerings;
  if (wheres.empty()) {
    Offering own;
    own.node = r.cluster;
    wheres.push_back(own);
  }
  std::vector<EngineSpec> engines = {r.job.engine};
  for (const auto& e : r.engines) {
    if (std::none_of(engines.begin(), engines.end(), [&](const EngineSpec& x) { return x.id == e.id; })) {
      engines.push_back(e);
    }
  }
  const bool name_engine = engines.size() > 1;
  struct Shape {
    std::string key;
    std::vector<std::pair<ServeJob, ServePlan>> plans;
  };
  std::vector<Shape> shapes;
  std::map<std::string, std::shared_ptr<const OpCostModel>> costs;
  const auto cost_key = [](const Cluster& c, const EngineSpec& e) { return c.gpu.id + "|" + e.id; };
  for (const Offering& off : wheres) {
    const Cluster& c = off.node;
    for (const EngineSpec& e : engines) {
      const std::string key = cost_key(c, e) + "|" + std::to_string(c.gpus_per_node);
      auto shape = std::find_if(shapes.begin(), shapes.end(), [&](const Shape& s) { return s.key == key; });
      if (shape == shapes.end()) {
        auto& model = costs[cost_key(c, e)];
        if (!model) model = cost_of(c, e);
        Shape s{key, {}};
        Cluster unpriced = c;
        unpriced.price_per_gpu.reset();
        ServeJob base = r.job;
        base.engine = e;
        for (const ServeJob& j : layouts_on(base, c)) {
          s.plans.emplace_back(j, plan_serving(j, unpriced, *model, /*confirm=*/false));
        }
        shapes.push_back(std::move(s));
        shape = shapes.end() - 1;
      }
      for (const auto& [j, plan] : shape->plans) {
        std::string label = off.instance_id.empty() ? std::string() : off.instance_id + " ";
        if (name_engine) label += e.id + " ";
        ServeOption o{j, plan, c, off.instance_id, false, label + layout_name(j)};
        // The scenario's purchase terms are its own instance's; another offering is priced on
        // demand at its catalog price.
        if (!r.offerings.empty() && off.instance_id != r.cluster.instance_id) o.job.pricing = PricingTerms{};
        price_plan(o.plan, o.job, c);
        options.push_back(std::move(o));
      }
    }
  }
  int budget = 48;
  for (bool changed = true; changed && budget > 0;) {
    changed = false;
    sort_options(options);
    std::vector<std::size_t> keep;
    for (std::size_t i = 0; i < options.size(); ++i) {
      if (options[i].plan.feasible) {
        keep.push_back(i);  // the cheapest feasible
        break;
      }
    }
    for (std::size_t i : pareto_of(options)) keep.push_back(i);
    for (std::size_t i : keep) {
      ServeOption& o = options[i];
      if (o.confirmed || budget <= 0) continue;
      o.plan = plan_serving(o.job, o.cluster, *costs.at(cost_key(o.cluster, o.job.engine)));
      o.confirmed = true;
      changed = true;
      --budget;
    }
  }
  return options;
}

}  // namespace

ServePlanning plan_serve_options(const ServePlanRequest& r, const ServeCostFactory& cost_of) {
  ServePlanning out;
  // The asked engine: its assumptions (CUDA-graph kernel gaps) hold for its layouts.
  const auto cost = cost_of(r.cluster, r.job.engine);
  const auto plan_one = [&](const ServeJob& j) {
    return ServeOption{j, plan_serving(j, r.cluster, *cost), r.cluster, {}, true, layout_name(j)};
  };
  out.cost_source = cost->source();
  out.asked = plan_one(r.job);
  if (r.curve_points > 1) out.curve = latency_curve(r.job, r.cluster, *cost, out.asked.plan, r.curve_points);
  if (!r.compare && r.offerings.empty() && r.engines.empty()) return out;
  if (r.offerings.empty() && r.engines.empty()) {
    // A layout differs from the asked job only in the fields layouts_on sets; when those match,
    // it is the asked job on the asked cluster and cost model, whose plan is already made (the
    // planner is deterministic: planning it again gives the same plan).
    const auto is_asked = [&](const ServeJob& j) {
      return j.tp == r.job.tp && j.pp == r.job.pp && j.ep == r.job.ep && j.weights == r.job.weights;
    };
    for (const ServeJob& j : layouts_on(r.job, r.cluster)) {
      out.options.push_back(is_asked(j) ? out.asked : plan_one(j));
    }
  } else {
    out.options = plan_offerings(r, cost_of);
  }
  sort_options(out.options);
  out.pareto = pareto_of(out.options);
  return out;
}

}  // namespace capplan::sim
