// SPDX-License-Identifier: Apache-2.0
// The capacity plan: the rate one replica serves within the SLO (closed form, then confirmed by
// simulation), the replicas for the peak, GPU-hours under the daily profile, and the cost per
// million tokens.
#include <algorithm>
#include <cmath>

#include "capplan/sim/workload/pricing.hpp"
#include "capplan/sim/serve/serve.hpp"

namespace capplan::sim {

namespace {

// The first SLO target `s` misses ("" when it meets them all).
std::string missed(const ServeJob& job, const ServeLoad& s) {
  const Slo& slo = job.slo;
  if (s.saturated) return "throughput";
  const double q = slo.percentile;
  if (slo.ttft.base() > 0 && s.ttft.at(q) > slo.ttft.base()) return "ttft";
  if (slo.tpot.base() > 0 && s.tpot.at(q) > slo.tpot.base()) return "tpot";
  if (slo.e2e.base() > 0 && s.e2e.at(q) > slo.e2e.base()) return "e2e";
  return {};
}

ServeJob at(const ServeJob& job, double rate) {
  ServeJob j = job;
  j.traffic.arrival = Arrival::poisson;
  j.traffic.rate = rate;
  return j;
}

}  // namespace

ServePlan plan_serving(const ServeJob& job, const Cluster& c, const OpCostModel& cost, bool confirm) {
  ServePlan plan;
  if (auto why = check_serve_job(job, c)) {
    plan.reason = std::move(why);
    return plan;
  }
  plan.memory = replica_memory(job, c);
  if (!plan.memory.fits()) {
    // What takes the memory: the weights, the engine's profiled activations and its reserve.
    Finding f = finding(FindingCode::serve_weights_leave_no_kv, {},
                        {{"weights_gib", units::to_gib(plan.memory.weights)},
                         {"activations_gib", units::to_gib(plan.memory.activations)},
                         {"reserve_gib", units::to_gib(plan.memory.reserve)}});
    plan.reason = with_text(f, "gpu", c.gpu.name);
    plan.binding = "kv_cache";
    return plan;
  }
  const double longest = job.traffic.input.quantile(0.99) + job.traffic.output.quantile(0.99);
  if (static_cast<double>(plan.memory.kv_tokens) < longest) {
    plan.reason = finding(FindingCode::serve_kv_below_one_request, {},
                          {{"kv_tokens", static_cast<double>(plan.memory.kv_tokens)}, {"longest", std::floor(longest)}});
    plan.binding = "kv_cache";
    return plan;
  }
  const PassModel pass(job, c, cost);
  const Traffic& tr = job.traffic;
  if (tr.arrival != Arrival::poisson) {
    // Offline or closed-loop traffic: what one replica does (no rate to size a fleet for).
    plan.at_rate = simulate(job, pass, plan.memory);
    plan.max_rate = plan.at_rate.requests_per_s;
    plan.binding = plan.at_rate.limit.empty() ? "throughput" : plan.at_rate.limit;
    plan.replicas = 1;
  } else {
    // The most one replica can take: the offline (full batch) rate.
    ServeJob offline = job;
    offline.traffic.arrival = Arrival::offline;
    const double ceiling = steady_state(offline, pass, plan.memory).requests_per_s;
    const auto meets = [&](double rate) { return missed(job, steady_state(at(job, rate), pass, plan.memory)); };
    double lo = 0, hi = std::max(ceiling, 1e-6);
    if (const std::string m = meets(hi * 1e-3); !m.empty()) {
      // Even an idle replica misses the target.
      plan.binding = m;
      Finding f = finding(FindingCode::serve_one_request_misses, {},
                          {{"percentile", std::round(job.slo.percentile * 100)}});
      plan.reason = with_text(f, "metric", m);
      plan.at_rate = steady_state(at(job, hi * 1e-3), pass, plan.memory);
      return plan;
    }
    lo = hi * 1e-3;
    for (int i = 0; i < 40; ++i) {
      const double mid = 0.5 * (lo + hi);
      (meets(mid).empty() ? lo : hi) = mid;
    }
    plan.max_rate = lo;
    plan.binding = meets(lo * 1.02);
    if (plan.binding == "throughput") {
      const ServeLoad s = steady_state(at(job, lo * 1.02), pass, plan.memory);
      if (!s.limit.empty()) plan.binding = s.limit;
    }
    if (plan.binding.empty()) plan.binding = "throughput";
    // Replicas at the peak with headroom; the simulation confirms the share each one gets, and
    // a replica more is added while it misses the target (the closed form is approximate).
    const double usable = plan.max_rate * (1.0 - std::clamp(job.headroom, 0.0, 0.9));
    plan.replicas = std::max(1, static_cast<int>(std::ceil(tr.rate / usable - 1e-9)));
    if (!confirm) {
      plan.at_rate = steady_state(at(job, tr.rate / plan.replicas), pass, plan.memory);
      plan.feasible = true;
      price_plan(plan, job, c);
      return plan;
    }
    bool confirmed = false;
    for (int tries = 0; tries < 12 && !confirmed; ++tries) {
      plan.at_rate = simulate(at(job, tr.rate / plan.replicas), pass, plan.memory);
      confirmed = missed(job, plan.at_rate).empty();
      if (!confirmed) plan.replicas = std::max(plan.replicas + 1, static_cast<int>(std::ceil(plan.replicas * 1.1)));
    }
    if (!confirmed) {
      plan.binding = missed(job, plan.at_rate);
      Finding f = finding(FindingCode::serve_simulation_misses, {}, {{"rate", tr.rate / plan.replicas}});
      plan.reason = with_text(f, "metric", plan.binding);
      return plan;
    }
    // What the simulation confirmed bounds what the closed form promised.
    plan.max_rate = std::min(plan.max_rate, tr.rate / plan.replicas / (1.0 - std::clamp(job.headroom, 0.0, 0.9)));
  }
  plan.feasible = true;
  price_plan(plan, job, c);
  return plan;
}

void price_plan(ServePlan& plan, const ServeJob& job, const Cluster& c) {
  if (!plan.feasible) return;
  const Traffic& tr = job.traffic;
  const double I = tr.input.mean, O = tr.output.mean;
  plan.usd_per_month.reset();
  plan.usd_per_million_input.reset();
  plan.usd_per_million_output.reset();
  const int g = job.gpus();
  plan.gpus = plan.replicas * g;
  const int per_node = std::max(1, c.gpus_per_node / g);
  const int nodes_per_replica = std::max(1, (g + c.gpus_per_node - 1) / c.gpus_per_node);
  plan.instances = g >= c.gpus_per_node ? plan.replicas * nodes_per_replica : (plan.replicas + per_node - 1) / per_node;
  // GPU-hours in a billing month: whole instances, scaled by hour when a load profile is given.
  const double hours_per_slot = kBillingHoursPerMonth / 24.0;
  double gpu_hours = 0, input_tokens = 0, output_tokens = 0;
  const double base_rate = tr.arrival == Arrival::poisson ? tr.rate : plan.at_rate.requests_per_s;
  for (int h = 0; h < 24; ++h) {
    const double share = tr.hourly_load.empty() ? 1.0 : std::clamp(tr.hourly_load[static_cast<std::size_t>(h) % tr.hourly_load.size()], 0.0, 1.0);
    int replicas = plan.replicas;
    if (!tr.hourly_load.empty() && tr.arrival == Arrival::poisson) {
      const double usable = plan.max_rate * (1.0 - std::clamp(job.headroom, 0.0, 0.9));
      replicas = std::clamp(static_cast<int>(std::ceil(base_rate * share / usable - 1e-9)), 1, plan.replicas);
    }
    const int inst = g >= c.gpus_per_node ? replicas * nodes_per_replica : (replicas + per_node - 1) / per_node;
    gpu_hours += static_cast<double>(inst) * c.gpus_per_node * hours_per_slot;  // whole instances
    input_tokens += base_rate * share * 3600.0 * hours_per_slot * I;
    output_tokens += base_rate * share * 3600.0 * hours_per_slot * O;
  }
  plan.gpu_hours_per_month = gpu_hours;
  if (c.price_per_gpu) {
    const double usd_per_gpu_hour = c.price_per_gpu->base() * 3600.0;
    plan.usd_per_month = gpu_hours * usd_per_gpu_hour;
    // The month's cost split between prompt and generated tokens by the GPU time each takes.
    const double share = plan.at_rate.prefill_share;
    if (input_tokens > 0) plan.usd_per_million_input = *plan.usd_per_month * share / input_tokens * 1e6;
    if (output_tokens > 0) plan.usd_per_million_output = *plan.usd_per_month * (1.0 - share) / output_tokens * 1e6;
  }
}

std::vector<CurvePoint> latency_curve(const ServeJob& job, const Cluster& c, const OpCostModel& cost,
                                      const ServePlan& plan, int points, double beyond) {
  std::vector<CurvePoint> out;
  if (points < 2 || check_serve_job(job, c)) return out;
  const ReplicaMemory memory = replica_memory(job, c);
  if (!memory.fits()) return out;
  const PassModel pass(job, c, cost);
  ServeJob offline = job;
  offline.traffic.arrival = Arrival::offline;
  const double ceiling = steady_state(offline, pass, memory).requests_per_s;
  if (!(ceiling > 0) || !std::isfinite(ceiling)) return out;
  std::vector<double> rates;
  const double top = ceiling * std::max(beyond, 0.2);
  for (int i = 0; i < points; ++i) rates.push_back(top * (0.1 + 0.9 * i / (points - 1)));
  if (plan.max_rate > 0 && std::isfinite(plan.max_rate)) rates.push_back(plan.max_rate);
  std::sort(rates.begin(), rates.end());
  rates.erase(std::unique(rates.begin(), rates.end(), [](double a, double b) { return std::abs(a - b) <= 1e-9 * b; }),
              rates.end());
  out.reserve(rates.size());
  for (double r : rates) out.push_back({r, simulate(at(job, r), pass, memory)});
  return out;
}

}  // namespace capplan::sim
