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

}  // namespace

const char* to_string(CheckpointMode m) { return m == CheckpointMode::async ? "async" : "sync"; }

const char* to_string(IntervalRule r) {
  switch (r) {
    case IntervalRule::scenario: return "scenario";
    case IntervalRule::daly: return "daly";
    case IntervalRule::minimum: return "min_interval";
    case IntervalRule::step: return "step";
    case IntervalRule::persist: return "persist";
    case IntervalRule::end_only: return "no_interruptions";
  }
  return "daly";
}

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

namespace {

// The writers and per-rank sizes of a checkpoint whose stage bytes (before ZeRO sharding, split
// dense / expert) come from `stage_bytes`.
template <class StageBytes>
CheckpointSize checkpoint_layout(const ModelSpec& m, const Parallelism& p, int gpus, int gpus_per_node,
                                 units::Bytes total, StageBytes stage_bytes) {
  CheckpointSize out;
  out.total = total;
  const double dense_dp = static_cast<double>(p.dp) * p.cp;
  const double edp = expert_data_parallel(p);
  double rank = 0;
  for (const StageRun& run : stage_runs(m, p)) {
    const auto [dense, expert] = stage_bytes(run.layers);
    rank = std::max(rank, p.zero >= 1 ? dense / dense_dp + expert / edp : dense + expert);
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

}  // namespace

CheckpointSize checkpoint_size(const ModelSpec& m, const Parallelism& p, int gpus, int gpus_per_node,
                               double bytes_per_param) {
  return checkpoint_layout(m, p, gpus, gpus_per_node, units::bytes(m.total_params() * bytes_per_param),
                           [&](const StageLayers& sl) {
                             const StageParams sp = stage_params(m, p, sl);
                             return std::pair{sp.dense * bytes_per_param, sp.expert * bytes_per_param};
                           });
}

CheckpointSize checkpoint_size(const ModelSpec& m, const TrainingJob& job, const Parallelism& p, int gpus,
                               int gpus_per_node) {
  const FinetuneSpec& ft = job.finetune;
  if (!ft.adapters() && ft.frozen_layers == 0 && !ft.freeze_embeddings) {
    return checkpoint_size(m, p, gpus, gpus_per_node, job.checkpoint_bytes_per_param());
  }
  // Fine-tuning: the trained parameters with their optimizer state; the frozen base too under full
  // SFT with frozen parts (the model is saved whole), not under adapters (PEFT saves the adapters:
  // the base is the one it started from).
  const double w = job.gathered_param_bytes(), opt = job.optimizer_state_bytes();
  const double frozen = ft.adapters() ? 0.0 : w;
  const double trained = trainable_params(m, ft);
  const double base = ft.adapters() ? 0.0 : m.total_params() - trained;
  return checkpoint_layout(m, p, gpus, gpus_per_node, units::bytes(trained * (w + opt) + base * frozen),
                           [&](const StageLayers& sl) {
                             const StageParams sp = stage_params(m, job, p, sl);
                             return std::pair{sp.trained_dense * (w + opt) + (sp.dense - sp.trained_dense) * frozen,
                                              sp.trained_expert * (w + opt) + (sp.expert - sp.trained_expert) * frozen};
                           });
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
CostBreakdown cost_of(const GoodputInputs& in, const Goodput& g, std::vector<Finding>& findings) {
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
  auto need = [&](const std::string& field, bool excluded = false) {
    out.missing.push_back(field);
    if (field == "pricing.usd_per_gpu_hour") return;
    findings.push_back(finding(excluded ? FindingCode::cost_part_unknown : FindingCode::cost_input_unknown, field));
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
      if (!rate) need("pricing.usd_per_gpu_hour");
      rent(rate);
      break;
    }
    case PurchaseModel::spot:
      if (!pr.spot.usd_per_gpu_hour) need("pricing.spot.usd_per_gpu_hour");
      rent(pr.spot.usd_per_gpu_hour);
      break;
    case PurchaseModel::reserved: {
      if (!pr.reserved.usd_per_gpu_hour) need("pricing.reserved.usd_per_gpu_hour");
      rent(pr.reserved.usd_per_gpu_hour);
      if (out.compute) {
        const double committed = pr.reserved.committed_gpus ? *pr.reserved.committed_gpus : gpus + spare_gpus;
        if (committed < gpus + spare_gpus) {
          findings.push_back(finding(FindingCode::reserved_commitment_short, "pricing.reserved.committed_gpus",
                                     {{"committed", committed}, {"used", gpus + spare_gpus}}));
        }
        double term = hours;
        bool bought_in_blocks = false;  // a subscription bought for this run in whole blocks (months)
        if (pr.reserved.term_hours) {
          term = *pr.reserved.term_hours;
        } else if (pr.reserved.term_block_hours && *pr.reserved.term_block_hours > 0) {
          term = std::ceil(hours / *pr.reserved.term_block_hours) * *pr.reserved.term_block_hours;
          bought_in_blocks = true;
        } else {
          need("pricing.reserved.term_months");
        }
        if (term < hours) {
          findings.push_back(finding(FindingCode::reserved_term_short, "pricing.reserved.term_months",
                                     {{"run_months", hours / kHoursPerMonth}, {"term_months", term / kHoursPerMonth}}));
        }
        // Committed GPU-hours not used by this run, billed at the idle rate (default: the reserved rate).
        const double used = gpus + spare_gpus;
        const double held = std::max(committed, used), whole_hours = std::max(term, hours);
        const double idle_hours = std::max(0.0, held * whole_hours - used * hours);
        const double rate = *out.usd_per_gpu_hour;
        const double idle_rate = pr.reserved.idle_usd_per_gpu_hour.value_or(rate);
        out.idle_commitment = units::usd(idle_rate * idle_hours);
        // The run's share at utilisation u: its GPU-hours, plus (1 - u) / u of them idle at the idle
        // rate; the whole term: the held GPUs for the term, a share u used and 1 - u idle.
        const double u = pr.reserved.utilisation;
        out.utilisation = u;
        out.term_hours = whole_hours;
        out.committed_gpus = held;
        if (bought_in_blocks) {
          // Blocks bought for this run: nothing else uses them, so the run pays them whole (the rest of
          // the last block is its idle share) and the whole term is that.
          out.utilisation = used * hours / (held * whole_hours);
          out.idle_share = out.idle_commitment;
          out.whole_term = units::usd(used * hours * rate + idle_rate * idle_hours);
        } else {
          out.idle_share = units::usd(used * hours * (1.0 - u) / u * idle_rate);
          out.whole_term = units::usd(held * whole_hours * (u * rate + (1.0 - u) * idle_rate));
        }
      }
      break;
    }
    case PurchaseModel::on_prem: {
      const OnPremTerms& op = pr.on_prem;
      if (!op.usd_per_node) need("pricing.on_prem.usd_per_node");
      if (!op.amortisation_years) need("pricing.on_prem.amortisation_years");
      if (!op.usd_per_kwh) need("pricing.on_prem.usd_per_kwh");
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
        if (!op.node_power_w) need("pricing.on_prem.node_power_w");
      }
      if (op.ops_usd_per_year) {
        out.operations = units::usd(*op.ops_usd_per_year * hours / kHoursPerYear / util);
      } else {
        need("pricing.on_prem.ops_usd_per_year", true);
      }
      out.utilisation = util;
      out.committed_gpus = (c.nodes() + spare_nodes) * c.gpus_per_node;
      if (op.amortisation_years) out.term_hours = *op.amortisation_years * kHoursPerYear;
      if (out.compute && out.energy) {
        // The fleet owned for the amortisation period: every node bought, the energy of a share
        // `util` of the period, the operations for all of it.
        const double period = *out.term_hours;
        double whole = *op.usd_per_node * (c.nodes() + spare_nodes);
        whole += c.nodes() * *op.node_power_w / 1000.0 * op.pue * util * period * *op.usd_per_kwh;
        if (op.ops_usd_per_year) whole += *op.ops_usd_per_year * *op.amortisation_years;
        out.whole_term = units::usd(whole);
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
    need("storage.usd_per_gb_month", true);
  } else {
    out.missing.push_back("storage.tier");  // said once, with the bandwidth fallback
  }
  if (essential_known && std::isfinite(hours)) {
    double total = 0;
    for (const auto* part : {&out.compute, &out.spares, &out.idle_share, &out.energy, &out.operations,
                             &out.checkpoint_storage, &out.data_storage}) {
      if (*part) total += (*part)->base();
    }
    out.total = units::usd(total);
  }
  return out;
}

}  // namespace

Goodput compute_goodput(const GoodputInputs& in, const Parallelism& p, units::Seconds steady, units::Seconds step,
                        double tokens_per_s, std::vector<Finding>& findings) {
  const Cluster& c = *in.cluster;
  const ReliabilitySpec& rel = *in.reliability;
  const PricingTerms& pr = *in.pricing;
  Goodput g;
  g.modelled = true;
  g.steady = steady;
  g.mode = rel.checkpoint_mode;
  const int nodes = c.nodes();

  // Storage: the scenario's tier, else the catalog's default tier (said), else the node's network
  // as an optimistic stand-in.
  StorageTier tier = in.storage->tier;
  const bool tier_known = tier.write.known() || tier.read.known();
  if (!in.storage->given && in.storage->assumed && tier_known) {
    Finding f = finding(FindingCode::storage_tier_assumed, "storage.tier",
                        {{"write_gb_per_s", tier.write.aggregate.base() / 1e9},
                         {"read_gb_per_s", tier.read.aggregate.base() / 1e9}});
    f.values.push_back({"tier", 0, tier.id, true});
    findings.push_back(std::move(f));
  } else if (!in.storage->given || !tier_known) {
    const units::BytesPerSecond nic = c.inter_node_bandwidth * static_cast<double>(c.gpus_per_node);
    tier.write.per_node = nic;
    tier.read.per_node = nic;
    findings.push_back(finding(FindingCode::no_storage_tier, "storage.tier", {{"node_gb_per_s", nic.base() / 1e9}}));
  }

  // Data loading.
  g.data = data_loading(tokens_per_s, *in.data, in.model->vocab, tier, nodes);
  if (g.data.bound != "none") {
    Finding f = finding(FindingCode::data_loading_bound, {},
                        {{"gb_per_s", g.data.required_bytes_per_s / 1e9},
                         {"bytes_per_token", g.data.bytes_per_token},
                         {"slowdown", g.data.slowdown}});
    f.values.push_back({"bound", 0, g.data.bound, true});
    findings.push_back(std::move(f));
  }
  const units::Seconds solve = steady * g.data.slowdown;
  g.data_stall = solve - steady;

  // Interruptions: failures scale with GPUs, spot preemptions with nodes.
  g.interruptions_per_gpu_hour = rel.interruptions_per_gpu_hour;
  if (pr.model == PurchaseModel::spot) {
    if (pr.spot.preemptions_per_node_hour) {
      g.preemptions_per_node_hour = *pr.spot.preemptions_per_node_hour;
    } else {
      findings.push_back(finding(FindingCode::spot_preemptions_unknown, "pricing.spot.preemptions_per_node_hour"));
    }
  }
  const double per_hour = interruptions_per_hour(g.interruptions_per_gpu_hour, c.gpus, g.preemptions_per_node_hour,
                                                 nodes);
  g.mtbi = mtbi(per_hour);

  // Checkpoints.
  g.checkpoint = checkpoint_size(*in.model, *in.training, p, c.gpus, c.gpus_per_node);
  const units::Seconds local_write = transfer_time(g.checkpoint.per_node_max, g.checkpoint.total, tier.write);
  units::Seconds upload;  // local tier: until the copy on shared storage is complete
  units::Seconds read = transfer_time(g.checkpoint.per_node_max, g.checkpoint.total, tier.read);
  if (tier.local) {
    if (in.storage->upload) {
      upload = transfer_time(g.checkpoint.per_node_max, g.checkpoint.total, in.storage->upload->write);
      read = transfer_time(g.checkpoint.per_node_max, g.checkpoint.total, in.storage->upload->read);
    } else {
      Finding f = text_finding(FindingCode::local_tier_without_upload, "tier", tier.id);
      f.field = "storage.upload_tier";
      findings.push_back(std::move(f));
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
  g.daly_interval = no_failures ? units::seconds(kInf) : daly_interval(g.checkpoint_stall, g.mtbi);
  g.min_interval = rel.min_checkpoint_interval;
  if (rel.checkpoint_interval) {
    g.checkpoint_interval = *rel.checkpoint_interval;
    g.interval_given = true;
    g.interval_rule = IntervalRule::scenario;
  } else if (no_failures) {
    g.checkpoint_interval = solve;  // one checkpoint at the end is all that is needed
    g.interval_rule = IntervalRule::end_only;
  } else if (g.daly_interval < g.min_interval) {
    g.checkpoint_interval = g.min_interval;
    g.interval_rule = IntervalRule::minimum;
  } else {
    g.checkpoint_interval = g.daly_interval;
    g.interval_rule = IntervalRule::daly;
  }
  // No more often than once per step, and (async) not before the previous one is durable.
  const units::Seconds floor = std::max(step, pending - g.checkpoint_stall);
  if (g.checkpoint_interval < floor) {
    if (g.interval_given) {
      findings.push_back(finding(floor == step ? FindingCode::checkpoint_interval_below_step
                                               : FindingCode::checkpoint_interval_below_persist,
                                 "reliability.checkpoint_interval_s",
                                 {{"given_s", g.checkpoint_interval.base()}, {"floor_s", floor.base()}}));
    }
    g.checkpoint_interval = floor;
    g.interval_rule = floor == step ? IntervalRule::step : IntervalRule::persist;
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
    findings.push_back(
        finding(FindingCode::restart_overhead_assumed, "reliability.restart_s", {{"restart_s", kDefaultRestartOverheadS}}));
  }
  g.lost_per_interruption = (g.checkpoint_interval + g.checkpoint_stall) * 0.5 + pending;

  // Expected wall time (Daly 2006), and its split.
  g.checkpoints = solve / g.checkpoint_interval;
  g.checkpoint_overhead = g.checkpoint_stall * g.checkpoints;
  // A cadence no published run keeps (goodput.hpp): said, the numbers stand.
  if (g.interval_rule != IntervalRule::end_only && step.base() > 0) {
    const double steps = g.checkpoint_interval / step;
    if (steps < kMinPlausibleStepsPerCheckpoint) {
      findings.push_back(finding(FindingCode::checkpoint_every_few_steps,
                                 g.interval_given ? "reliability.checkpoint_interval_s"
                                                  : "reliability.min_checkpoint_interval_s",
                                 {{"interval_s", g.checkpoint_interval.base()},
                                  {"steps", steps},
                                  {"min_steps", kMinPlausibleStepsPerCheckpoint}}));
    }
  }
  const double stall_share = g.checkpoint_stall / (g.checkpoint_interval + g.checkpoint_stall);
  if (g.interval_rule != IntervalRule::end_only && stall_share > kMaxPlausibleCheckpointStallShare) {
    findings.push_back(finding(FindingCode::checkpoint_stalls_dominate, "storage.tier",
                               {{"stall_pct", 100.0 * stall_share},
                                {"max_pct", 100.0 * kMaxPlausibleCheckpointStallShare}}));
  }
  g.wall = daly_wall_time(solve, g.checkpoint_interval, g.checkpoint_stall, g.restart + pending, g.mtbi);
  g.finite = std::isfinite(g.wall.base());
  if (!g.finite) {
    findings.push_back(finding(FindingCode::interruptions_unbounded, {}, {{"mtbi_h", g.mtbi.base() / 3600.0}}));
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
      findings.push_back(finding(FindingCode::recovery_dominates, {}, {{"mtbi_h", g.mtbi.base() / 3600.0}}));
    }
  }
  g.cost = cost_of(in, g, findings);
  return g;
}

}  // namespace capplan::sim
