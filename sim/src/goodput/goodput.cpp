// SPDX-License-Identifier: Apache-2.0
// Goodput and cost beyond the sticker price; every formula is written out in docs/model.md
// ("Goodput and cost").
#include "capplan/sim/goodput.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "capplan/sim/step_model.hpp"

namespace capplan::sim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kHoursPerYear = 8760.0;
constexpr double kHoursPerMonth = kHoursPerYear / 12.0;

std::string text(double v, int decimals = 1) {
  if (!std::isfinite(v)) return "inf";
  const double scale = std::pow(10.0, decimals);
  const double r = std::round(v * scale) / scale;
  std::string s = std::to_string(r);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

}  // namespace

const char* to_string(CheckpointMode m) { return m == CheckpointMode::async ? "async" : "sync"; }

std::optional<CheckpointMode> checkpoint_mode_from_string(const std::string& s) {
  if (s == "sync") return CheckpointMode::sync;
  if (s == "async") return CheckpointMode::async;
  return std::nullopt;
}

const char* to_string(PurchaseModel m) {
  switch (m) {
    case PurchaseModel::on_demand: return "on_demand";
    case PurchaseModel::spot: return "spot";
    case PurchaseModel::reserved: return "reserved";
    case PurchaseModel::on_prem: return "on_prem";
  }
  return "on_demand";
}

std::optional<PurchaseModel> purchase_model_from_string(const std::string& s) {
  for (auto m : {PurchaseModel::on_demand, PurchaseModel::spot, PurchaseModel::reserved, PurchaseModel::on_prem}) {
    if (s == to_string(m)) return m;
  }
  return std::nullopt;
}

double interruptions_per_hour(double per_gpu_hour, int gpus, double preemptions_per_node_hour, int nodes) {
  return per_gpu_hour * gpus + preemptions_per_node_hour * nodes;
}

units::Seconds mtbi(double per_hour) { return units::seconds(per_hour > 0 ? 3600.0 / per_hour : kInf); }

units::Seconds young_interval(units::Seconds delta, units::Seconds m) {
  return units::seconds(std::sqrt(2.0 * delta.base() * m.base()));
}

units::Seconds daly_interval(units::Seconds delta, units::Seconds m) {
  const double d = delta.base(), mm = m.base();
  if (!(d < 2.0 * mm)) return m;
  const double x = d / (2.0 * mm);
  return units::seconds(std::sqrt(2.0 * d * mm) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - d);
}

units::Seconds daly_wall_time(units::Seconds solve, units::Seconds tau, units::Seconds delta, units::Seconds restart,
                              units::Seconds m) {
  const double mm = m.base();
  const double segments = solve.base() / tau.base();
  if (!std::isfinite(mm)) return units::seconds(solve.base() + segments * delta.base());
  const double a = restart.base() / mm, b = (tau.base() + delta.base()) / mm;
  if (a + b > 700.0) return units::seconds(kInf);
  return units::seconds(mm * std::exp(a) * std::expm1(b) * segments);
}

CheckpointSize checkpoint_size(const ModelSpec& m, const Parallelism& p, int gpus, int gpus_per_node,
                               double bytes_per_param) {
  CheckpointSize out;
  const double per_param = bytes_per_param;
  out.total = units::bytes(m.total_params() * per_param);
  const double dense_dp = static_cast<double>(p.dp) * p.cp;
  const double edp = expert_data_parallel(p);
  double rank = 0;
  for (const StageRun& run : stage_runs(m, p)) {
    const StageLayers& sl = run.layers;
    const StageParams sp = stage_params(m, p, sl);
    const double bytes = p.zero >= 1 ? sp.dense * per_param / dense_dp + sp.expert * per_param / edp
                                     : sp.total() * per_param;
    rank = std::max(rank, bytes);
  }
  out.per_rank_max = units::bytes(rank);
  if (p.zero >= 1) {
    out.writers = gpus;
    out.per_node_max = units::bytes(rank * std::min(gpus, gpus_per_node));
  } else {
    // Data-parallel rank 0 of every tensor/pipeline group; ranks are laid out TP fastest, so a node
    // holds min(node, tp) writers when dp > 1.
    out.writers = std::max<long long>(1, static_cast<long long>(gpus / dense_dp));
    const int per_node = dense_dp > 1 ? std::min(gpus_per_node, p.tp) : std::min(gpus, gpus_per_node);
    out.per_node_max = units::bytes(rank * per_node);
  }
  return out;
}

units::Seconds transfer_time(units::Bytes per_node, units::Bytes total, const StorageBandwidth& bw) {
  double t = 0;
  if (bw.per_node.base() > 0) t = std::max(t, per_node.base() / bw.per_node.base());
  if (bw.aggregate.base() > 0) t = std::max(t, total.base() / bw.aggregate.base());
  return units::seconds(t);
}

DataLoadingCheck data_loading(double tokens_per_s, const DataLoadingSpec& d, int vocab, const StorageTier& tier,
                              int nodes) {
  DataLoadingCheck out;
  out.bytes_per_token = d.bytes_per_token > 0 ? d.bytes_per_token : (vocab < 65500 ? 2.0 : 4.0);
  out.required_bytes_per_s = tokens_per_s * out.bytes_per_token;
  double limit = kInf;
  if (tier.read.aggregate.base() > 0) limit = tier.read.aggregate.base();
  if (tier.read.per_node.base() > 0) limit = std::min(limit, tier.read.per_node.base() * nodes);
  if (std::isfinite(limit)) out.storage_read_bytes_per_s = limit;
  if (d.cpu_tokens_per_s_per_node) out.cpu_tokens_per_s = *d.cpu_tokens_per_s_per_node * nodes;
  const double by_storage = std::isfinite(limit) && limit > 0 ? out.required_bytes_per_s / limit : 0.0;
  const double by_cpu = out.cpu_tokens_per_s && *out.cpu_tokens_per_s > 0 ? tokens_per_s / *out.cpu_tokens_per_s : 0.0;
  if (by_storage > 1.0 && by_storage >= by_cpu) {
    out.bound = "storage";
    out.slowdown = by_storage;
  } else if (by_cpu > 1.0) {
    out.bound = "cpu";
    out.slowdown = by_cpu;
  }
  return out;
}

namespace {

// Cost of the run (see docs/model.md, "Cost beyond the sticker price").
CostBreakdown cost_of(const GoodputInputs& in, const Goodput& g, std::vector<std::string>& warnings) {
  const Cluster& c = *in.cluster;
  const PricingTerms& pr = *in.pricing;
  const ReliabilitySpec& rel = *in.reliability;
  CostBreakdown out;
  out.model = pr.model;
  const double hours = units::to_hours(g.wall);
  const double gpus = c.gpus;
  const double spare_nodes = rel.hot_spare_nodes;
  const double spare_gpus = spare_nodes * c.gpus_per_node;
  // An input the user must supply: listed, and said once (the on-demand price is already said by
  // the steady-state estimate). `excluded`: the total is still given, without this part.
  auto need = [&](const std::string& field, const std::string& what, bool excluded = false) {
    out.missing.push_back(field);
    if (field == "pricing.usd_per_gpu_hour") return;
    warnings.push_back("total cost: " + what + " is unknown" +
                       (excluded ? std::string(", so it is left out of the total") : std::string()) + "; give " +
                       field);
  };
  bool essential_known = true;
  auto rent = [&](std::optional<double> rate) {
    if (!rate) {
      essential_known = false;
      return;
    }
    out.usd_per_gpu_hour = *rate;
    out.compute = units::usd(*rate * gpus * hours);
    out.spares = units::usd(*rate * spare_gpus * hours);
  };
  switch (pr.model) {
    case PurchaseModel::on_demand: {
      std::optional<double> rate;
      if (c.price_per_gpu) rate = units::to_usd_per_hour(*c.price_per_gpu);
      if (!rate) need("pricing.usd_per_gpu_hour", "the on-demand price");
      rent(rate);
      break;
    }
    case PurchaseModel::spot:
      if (!pr.spot.usd_per_gpu_hour) need("pricing.spot.usd_per_gpu_hour", "the spot price");
      rent(pr.spot.usd_per_gpu_hour);
      break;
    case PurchaseModel::reserved: {
      if (!pr.reserved.usd_per_gpu_hour) need("pricing.reserved.usd_per_gpu_hour", "the reserved (committed) price");
      rent(pr.reserved.usd_per_gpu_hour);
      if (out.compute) {
        const double committed = pr.reserved.committed_gpus ? *pr.reserved.committed_gpus : gpus + spare_gpus;
        if (committed < gpus + spare_gpus) {
          warnings.push_back("pricing.reserved.committed_gpus (" + text(committed, 0) + ") is less than the GPUs used (" +
                             text(gpus + spare_gpus, 0) + "): the extra GPUs are priced at the reserved rate too");
        }
        double term = hours;
        if (pr.reserved.term_hours) {
          term = *pr.reserved.term_hours;
        } else {
          need("pricing.reserved.term_months", "the commitment term");
        }
        if (term < hours) {
          warnings.push_back("the run (" + text(hours / kHoursPerMonth) + " months) outlasts the reserved term (" +
                             text(term / kHoursPerMonth) + " months): hours beyond it priced at the reserved rate");
        }
        // Committed GPU-hours not used by this run, billed at the idle rate (default: the reserved rate).
        const double idle_hours =
            std::max(0.0, std::max(committed, gpus + spare_gpus) * std::max(term, hours) - (gpus + spare_gpus) * hours);
        const double idle_rate = pr.reserved.idle_usd_per_gpu_hour.value_or(*out.usd_per_gpu_hour);
        out.idle_commitment = units::usd(idle_rate * idle_hours);
      }
      break;
    }
    case PurchaseModel::on_prem: {
      const OnPremTerms& op = pr.on_prem;
      if (!op.usd_per_node) need("pricing.on_prem.usd_per_node", "the purchase price per node");
      if (!op.amortisation_years) need("pricing.on_prem.amortisation_years", "the amortisation period");
      if (!op.usd_per_kwh) need("pricing.on_prem.usd_per_kwh", "the electricity price");
      const double util = op.utilisation;
      if (op.usd_per_node && op.amortisation_years) {
        // Capital charged to this run: the owned nodes' amortised price for the wall time, divided
        // by the utilisation (idle owned time is paid by the work that runs).
        const double per_node_hour = *op.usd_per_node / (*op.amortisation_years * kHoursPerYear) / util;
        out.compute = units::usd(per_node_hour * c.nodes() * hours);
        out.spares = units::usd(per_node_hour * spare_nodes * hours);
        out.usd_per_gpu_hour = per_node_hour / c.gpus_per_node;
      } else {
        essential_known = false;
      }
      if (op.usd_per_kwh && op.node_power_w) {
        out.energy = units::usd(c.nodes() * *op.node_power_w / 1000.0 * op.pue * hours * *op.usd_per_kwh);
      } else {
        essential_known = false;
        if (!op.node_power_w) need("pricing.on_prem.node_power_w", "the node power");
      }
      if (op.ops_usd_per_year) {
        out.operations = units::usd(*op.ops_usd_per_year * hours / kHoursPerYear / util);
      } else {
        need("pricing.on_prem.ops_usd_per_year", "the operations (staff) cost", true);
      }
      break;
    }
  }
  // Storage: the retained checkpoints and the dataset, for the wall time.
  const StorageTier& tier = in.storage->tier;
  const std::optional<double> price = in.storage->given ? tier.usd_per_gb_month : std::nullopt;
  if (price) {
    const double months = hours / kHoursPerMonth;
    out.checkpoint_storage = units::usd(rel.checkpoints_kept * g.checkpoint.total.base() / 1e9 * *price * months);
    const double data_bytes = in.data->dataset_bytes ? *in.data->dataset_bytes : in.training->tokens * g.data.bytes_per_token;
    out.data_storage = units::usd(data_bytes / 1e9 * *price * months);
  } else if (in.storage->given) {
    need("storage.usd_per_gb_month", "the storage price for checkpoints and data", true);
  } else {
    out.missing.push_back("storage.tier");  // said once, with the bandwidth fallback
  }
  if (essential_known && std::isfinite(hours)) {
    double total = 0;
    for (const auto* part : {&out.compute, &out.spares, &out.idle_commitment, &out.energy, &out.operations,
                             &out.checkpoint_storage, &out.data_storage}) {
      if (*part) total += (*part)->base();
    }
    out.total = units::usd(total);
  }
  return out;
}

}  // namespace

Goodput compute_goodput(const GoodputInputs& in, const Parallelism& p, units::Seconds steady, units::Seconds step,
                        double tokens_per_s, std::vector<std::string>& warnings) {
  const Cluster& c = *in.cluster;
  const ReliabilitySpec& rel = *in.reliability;
  const PricingTerms& pr = *in.pricing;
  Goodput g;
  g.modelled = true;
  g.steady = steady;
  g.mode = rel.checkpoint_mode;
  const int nodes = c.nodes();

  // Storage: the scenario's tier, else the node's network as an optimistic stand-in.
  StorageTier tier = in.storage->tier;
  if (!in.storage->given || (!tier.write.known() && !tier.read.known())) {
    const units::BytesPerSecond nic = c.inter_node_bandwidth * static_cast<double>(c.gpus_per_node);
    tier.write.per_node = nic;
    tier.read.per_node = nic;
    warnings.push_back("no storage tier given: checkpoints and data assumed to move at the node's network bandwidth (" +
                       text(nic.base() / 1e9) + " GB/s per node), an optimistic bound; give storage.tier or "
                       "storage.write_gb_per_s / storage.read_gb_per_s (storage cost not included)");
  }

  // Data loading.
  g.data = data_loading(tokens_per_s, *in.data, in.model->vocab, tier, nodes);
  if (g.data.bound != "none") {
    warnings.push_back("data loading is the bottleneck (" + g.data.bound + "): it needs " +
                       text(g.data.required_bytes_per_s / 1e9, 2) + " GB/s (" + text(g.data.bytes_per_token, 1) +
                       " bytes/token); training slows by x" + text(g.data.slowdown, 2));
  }
  const units::Seconds solve = steady * g.data.slowdown;
  g.data_stall = solve - steady;

  // Interruptions: failures scale with GPUs, spot preemptions with nodes.
  g.interruptions_per_gpu_hour = rel.interruptions_per_gpu_hour;
  if (pr.model == PurchaseModel::spot) {
    if (pr.spot.preemptions_per_node_hour) {
      g.preemptions_per_node_hour = *pr.spot.preemptions_per_node_hour;
    } else {
      warnings.push_back("spot: the preemption rate is unknown, so no preemptions are modelled; give "
                         "pricing.spot.preemptions_per_node_hour");
    }
  }
  const double per_hour = interruptions_per_hour(g.interruptions_per_gpu_hour, c.gpus, g.preemptions_per_node_hour,
                                                 nodes);
  g.mtbi = mtbi(per_hour);

  // Checkpoints.
  g.checkpoint = checkpoint_size(*in.model, p, c.gpus, c.gpus_per_node, in.training->checkpoint_bytes_per_param());
  const units::Seconds local_write = transfer_time(g.checkpoint.per_node_max, g.checkpoint.total, tier.write);
  units::Seconds upload;  // local tier: until the copy on shared storage is complete
  units::Seconds read = transfer_time(g.checkpoint.per_node_max, g.checkpoint.total, tier.read);
  if (tier.local) {
    if (in.storage->upload) {
      upload = transfer_time(g.checkpoint.per_node_max, g.checkpoint.total, in.storage->upload->write);
      read = transfer_time(g.checkpoint.per_node_max, g.checkpoint.total, in.storage->upload->read);
    } else {
      warnings.push_back("storage tier '" + tier.id + "' is node-local and no upload tier is given: a checkpoint on a "
                         "failed node is lost with it (modelled as durable; give storage.upload_tier)");
    }
  }
  g.checkpoint_write = local_write + upload;
  g.checkpoint_read = read;
  units::Seconds pending;  // time after the stall until the checkpoint is durable
  if (rel.checkpoint_mode == CheckpointMode::async) {
    // The GPUs pause only for the device-to-host snapshot of their own shard; the write to storage
    // runs in the background and must finish before the next checkpoint starts.
    const units::BytesPerSecond pcie = c.gpu.pcie_bandwidth;
    g.checkpoint_stall = pcie.base() > 0 ? g.checkpoint.per_rank_max / pcie : units::seconds(0);
    pending = g.checkpoint_write;
  } else {
    g.checkpoint_stall = local_write;
    pending = upload;
  }
  const bool no_failures = !std::isfinite(g.mtbi.base());
  g.young_interval = no_failures ? units::seconds(kInf) : young_interval(g.checkpoint_stall, g.mtbi);
  if (rel.checkpoint_interval) {
    g.checkpoint_interval = *rel.checkpoint_interval;
    g.interval_given = true;
  } else if (no_failures) {
    g.checkpoint_interval = solve;  // one checkpoint at the end is all that is needed
  } else {
    g.checkpoint_interval = daly_interval(g.checkpoint_stall, g.mtbi);
  }
  // No more often than once per step, and (async) not before the previous one is durable.
  const units::Seconds floor = std::max(step, pending - g.checkpoint_stall);
  if (g.checkpoint_interval < floor) {
    if (g.interval_given) {
      warnings.push_back("reliability.checkpoint_interval_s (" + text(g.checkpoint_interval.base()) +
                         " s) is shorter than " +
                         (floor == step ? "one step" : std::string("the time to persist a checkpoint")) + " (" +
                         text(floor.base()) + " s): using " + text(floor.base()) + " s");
    }
    g.checkpoint_interval = floor;
  }
  if (g.checkpoint_interval.base() <= 0) g.checkpoint_interval = units::seconds(1);

  // Restart: relaunch and initialise, wait for a replacement node unless a spare is ready, load.
  units::Seconds replacement;
  if (rel.hot_spare_nodes == 0) {
    if (rel.node_replacement) {
      replacement = *rel.node_replacement;
    }
  }
  g.restart = rel.restart_overhead + replacement + g.checkpoint_read;
  if (!rel.restart_overhead_given && per_hour > 0) {
    warnings.push_back("restart overhead (relaunch + initialisation) assumed " + text(kDefaultRestartOverheadS, 0) +
                       " s before the checkpoint load; measure yours and give reliability.restart_s");
  }
  g.lost_per_interruption = (g.checkpoint_interval + g.checkpoint_stall) * 0.5 + pending;

  // Expected wall time (Daly 2006), and its split.
  g.checkpoints = solve / g.checkpoint_interval;
  g.checkpoint_overhead = g.checkpoint_stall * g.checkpoints;
  g.wall = daly_wall_time(solve, g.checkpoint_interval, g.checkpoint_stall, g.restart + pending, g.mtbi);
  g.finite = std::isfinite(g.wall.base());
  if (!g.finite) {
    warnings.push_back("interruptions come faster (every " + text(g.mtbi.base() / 3600.0, 2) +
                       " h) than the job can restart and make progress: the expected time to train is unbounded");
    g.fraction = 0;
    g.expected_interruptions = kInf;
  } else {
    g.expected_interruptions = no_failures ? 0.0 : g.wall / g.mtbi;
    // Without interruptions nothing is restarted or lost (the difference is rounding only).
    const units::Seconds rest =
        no_failures ? units::seconds(0) : std::max(units::seconds(0), g.wall - solve - g.checkpoint_overhead);
    const double r = g.restart.base(), l = g.lost_per_interruption.base();
    g.restart_total = r + l > 0 ? rest * (r / (r + l)) : units::seconds(0);
    g.lost_work = rest - g.restart_total;
    g.fraction = g.wall.base() > 0 ? steady / g.wall : 1.0;
    if (!no_failures && (g.checkpoint_interval + g.checkpoint_stall + g.restart) > g.mtbi * 0.5) {
      warnings.push_back("checkpoint interval + restart is more than half the mean time between interruptions (" +
                         text(g.mtbi.base() / 3600.0, 2) + " h): most time goes to recovery");
    }
  }
  g.cost = cost_of(in, g, warnings);
  return g;
}

}  // namespace capplan::sim
