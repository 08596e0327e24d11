// SPDX-License-Identifier: Apache-2.0
// The capacity plan: the rate one replica serves within the SLO (closed form, then confirmed by
// simulation), the replicas for the peak, GPU-hours under the daily profile, and the cost per
// million tokens.
#include <array>
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
    int short_of = 0;  // the most replicas the simulation saw miss the target
    // A try that misses is stopped as soon as the miss is certain (simulate_unless_missed): only
    // the last miss's figures are kept (its binding; its load when no try meets the target), so
    // that one is simulated again in full, and every answer is the one of full runs.
    bool stopped = false;  // the last try was stopped early
    for (int tries = 0; tries < 12 && !confirmed; ++tries) {
      std::optional<ServeLoad> s = simulate_unless_missed(at(job, tr.rate / plan.replicas), pass, plan.memory);
      stopped = !s;
      if (s) plan.at_rate = std::move(*s);
      const std::string short_by = stopped ? std::string("?") : missed(job, plan.at_rate);
      confirmed = short_by.empty();
      if (!confirmed) {
        short_of = plan.replicas;
        plan.binding = short_by;
        if (tries + 1 == 12) break;  // the last try: its load is the answer
        plan.replicas = std::max(plan.replicas + 1, static_cast<int>(std::ceil(plan.replicas * 1.1)));
      }
    }
    if (!confirmed) {
      // Twelve tries, none met: the last, at short_of replicas, is reported.
      if (stopped) plan.at_rate = simulate(at(job, tr.rate / plan.replicas), pass, plan.memory);
      plan.replicas = std::max(plan.replicas + 1, static_cast<int>(std::ceil(plan.replicas * 1.1)));
    } else if (short_of > 0 && plan.binding == "?") {
      // The last miss was stopped early: its binding is that of its full run.
      plan.binding = missed(job, simulate(at(job, tr.rate / short_of), pass, plan.memory));
    }
    if (confirmed && short_of > 0) {
      // The 10% steps can overshoot: the fewest replicas between the last that missed and the
      // first that met the target, so that a tighter target never plans fewer.
      int misses = short_of, meets_at = plan.replicas;
      ServeLoad at_meets = plan.at_rate;
      while (meets_at - misses > 1) {
        const int mid = misses + (meets_at - misses) / 2;
        std::optional<ServeLoad> s = simulate_unless_missed(at(job, tr.rate / mid), pass, plan.memory);
        if (s && missed(job, *s).empty()) {
          meets_at = mid;
          at_meets = std::move(*s);
        } else {
          misses = mid;
        }
      }
      plan.replicas = meets_at;
      plan.at_rate = std::move(at_meets);
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

std::optional<Finding> check_serve_purchase(const PricingTerms& pricing) {
  // A preempted spot instance takes its replicas' requests with it: a latency target cannot be
  // planned on capacity the provider reclaims at will.
  if (pricing.model != PurchaseModel::spot) return std::nullopt;
  Finding f = finding(FindingCode::serve_purchase_unsupported, "pricing.purchase");
  return with_text(f, "purchase", to_string(pricing.model));
}

std::vector<std::string> serve_cost_missing(const PricingTerms& pricing, const Cluster& c) {
  std::vector<std::string> out;
  switch (pricing.model) {
    case PurchaseModel::on_demand:
    case PurchaseModel::spot:
      if (!c.price_per_gpu) out.emplace_back("pricing.usd_per_gpu_hour");
      break;
    case PurchaseModel::reserved:
      if (!pricing.reserved.usd_per_gpu_hour) out.emplace_back("pricing.reserved.usd_per_gpu_hour");
      break;
    case PurchaseModel::on_prem: {
      const OnPremTerms& op = pricing.on_prem;
      if (!op.usd_per_node) out.emplace_back("pricing.on_prem.usd_per_node");
      if (!op.amortisation_years) out.emplace_back("pricing.on_prem.amortisation_years");
      if (!op.usd_per_kwh) out.emplace_back("pricing.on_prem.usd_per_kwh");
      if (!op.node_power_w) out.emplace_back("pricing.on_prem.node_power_w");
      break;
    }
  }
  return out;
}

namespace {

// A month of the plan's capacity under the purchase terms: `used[h]` instances busy in hour h of
// the day (the hourly load profile), `peak` the most of them. Sets the billed GPU-hours and rate;
// returns the month's cost, or nothing when an input it needs is not given (serve_cost_missing).
std::optional<double> month_cost(ServePlan& plan, const PricingTerms& pricing, const Cluster& c,
                                 const std::array<int, 24>& used, int peak) {
  const double slot = kBillingHoursPerMonth / 24.0;  // hours a month of one hour of the day
  const double per_node = c.gpus_per_node;
  double used_hours = 0;
  for (int u : used) used_hours += u * per_node * slot;
  const double held_hours = peak * per_node * kBillingHoursPerMonth;
  plan.billed_gpu_hours_per_month = used_hours;
  if (!serve_cost_missing(pricing, c).empty()) return std::nullopt;
  switch (pricing.model) {
    case PurchaseModel::on_demand:
    case PurchaseModel::spot: {
      const double rate = units::to_usd_per_hour(*c.price_per_gpu);
      plan.usd_per_gpu_hour = rate;
      return used_hours * rate;
    }
    case PurchaseModel::reserved: {
      // The committed GPUs are paid every hour: the peak's (or the commitment's, when larger),
      // the hours the profile leaves them idle at the idle rate (default: the reserved rate).
      const ReservedTerms& rs = pricing.reserved;
      const double rate = *rs.usd_per_gpu_hour;
      const double held = std::max(held_hours, rs.committed_gpus.value_or(0) * kBillingHoursPerMonth);
      plan.usd_per_gpu_hour = rate;
      plan.billed_gpu_hours_per_month = held;
      return used_hours * rate + (held - used_hours) * rs.idle_usd_per_gpu_hour.value_or(rate);
    }
    case PurchaseModel::on_prem: {
      // Owned nodes at the peak, all month: their amortised price and their energy (drawn every
      // hour), plus the operations of the fleet; idle owned time is charged to the work through
      // the utilisation, as for training (run_cost.cpp).
      const OnPremTerms& op = pricing.on_prem;
      const double nodes = peak, util = op.utilisation;
      const double capital = *op.usd_per_node / (*op.amortisation_years * 8760.0) * kBillingHoursPerMonth * nodes / util;
      const double energy = nodes * *op.node_power_w / 1000.0 * op.pue * kBillingHoursPerMonth * *op.usd_per_kwh;
      const double ops = op.ops_usd_per_year.value_or(0) / 12.0 / util;
      plan.billed_gpu_hours_per_month = held_hours;
      const double month = capital + energy + ops;
      plan.usd_per_gpu_hour = held_hours > 0 ? month / held_hours : 0.0;
      return month;
    }
  }
  return std::nullopt;
}

}  // namespace

void price_plan(ServePlan& plan, const ServeJob& job, const Cluster& c) {
  if (!plan.feasible) return;
  const Traffic& tr = job.traffic;
  const double I = tr.input.mean, O = tr.output.mean;
  plan.usd_per_month.reset();
  plan.usd_per_million_input.reset();
  plan.usd_per_million_output.reset();
  plan.usd_per_gpu_hour.reset();
  const int g = job.gpus();
  plan.gpus = plan.replicas * g;
  const int per_node = std::max(1, c.gpus_per_node / g);
  const int nodes_per_replica = std::max(1, (g + c.gpus_per_node - 1) / c.gpus_per_node);
  plan.instances = g >= c.gpus_per_node ? plan.replicas * nodes_per_replica : (plan.replicas + per_node - 1) / per_node;
  // Instances busy in each hour of the day: whole instances, scaled by hour when a load profile is given.
  const double hours_per_slot = kBillingHoursPerMonth / 24.0;
  std::array<int, 24> used{};
  plan.replicas_by_hour.clear();
  plan.instances_by_hour.clear();
  plan.usd_per_month_without_scaling.reset();
  const bool scaled = !tr.hourly_load.empty() && tr.arrival == Arrival::poisson;
  double input_tokens = 0, output_tokens = 0;
  const double base_rate = tr.arrival == Arrival::poisson ? tr.rate : plan.at_rate.requests_per_s;
  for (int h = 0; h < 24; ++h) {
    const double share = tr.hourly_load.empty() ? 1.0 : std::clamp(tr.hourly_load[static_cast<std::size_t>(h) % tr.hourly_load.size()], 0.0, 1.0);
    int replicas = plan.replicas;
    if (!tr.hourly_load.empty() && tr.arrival == Arrival::poisson) {
      const double usable = plan.max_rate * (1.0 - std::clamp(job.headroom, 0.0, 0.9));
      replicas = std::clamp(static_cast<int>(std::ceil(base_rate * share / usable - 1e-9)), 1, plan.replicas);
    }
    used[static_cast<std::size_t>(h)] = g >= c.gpus_per_node ? replicas * nodes_per_replica : (replicas + per_node - 1) / per_node;
    if (scaled) {
      plan.replicas_by_hour.push_back(replicas);
      plan.instances_by_hour.push_back(used[static_cast<std::size_t>(h)]);
    }
    input_tokens += base_rate * share * 3600.0 * hours_per_slot * I;
    output_tokens += base_rate * share * 3600.0 * hours_per_slot * O;
  }
  double gpu_hours = 0;
  for (int u : used) gpu_hours += static_cast<double>(u) * c.gpus_per_node * hours_per_slot;
  plan.gpu_hours_per_month = gpu_hours;
  if (scaled) {
    std::array<int, 24> flat;
    flat.fill(plan.instances);
    ServePlan held = plan;
    plan.usd_per_month_without_scaling = month_cost(held, job.pricing, c, flat, plan.instances);
  }
  plan.usd_per_month = month_cost(plan, job.pricing, c, used, plan.instances);
  if (plan.usd_per_month) {
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
