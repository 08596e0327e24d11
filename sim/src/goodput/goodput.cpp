// SPDX-License-Identifier: Apache-2.0
// Goodput: interruptions, checkpoints and the expected wall time, with the storage and data loading
// (data_loading.cpp) and the money (run_cost.cpp) they feed; every formula is written out in
// docs/model.md ("Goodput and cost").
#include "capplan/sim/goodput/goodput.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "capplan/sim/lowering/step_model.hpp"
#include "goodput/goodput_parts.hpp"

namespace capplan::sim {

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

namespace {

// Interruptions: failures scale with GPUs, spot preemptions with nodes. Returns them per hour.
double add_interruptions(Goodput& g, const GoodputInputs& in, std::vector<Finding>& findings) {
  const Cluster& c = *in.cluster;
  const PricingTerms& pr = *in.pricing;
  g.interruptions_per_gpu_hour = in.reliability->interruptions_per_gpu_hour;
  if (pr.model == PurchaseModel::spot) {
    if (pr.spot.preemptions_per_node_hour) {
      g.preemptions_per_node_hour = *pr.spot.preemptions_per_node_hour;
    } else {
      findings.push_back(finding(FindingCode::spot_preemptions_unknown, "pricing.spot.preemptions_per_node_hour"));
    }
  }
  const double per_hour = interruptions_per_hour(g.interruptions_per_gpu_hour, c.gpus, g.preemptions_per_node_hour,
                                                 c.nodes());
  g.mtbi = mtbi(per_hour);
  return per_hour;
}

// A checkpoint's size, its write (and upload from a local tier), its read, and the stall it costs
// the GPUs. Returns the time after the stall until the checkpoint is durable.
units::Seconds add_checkpoint_times(Goodput& g, const GoodputInputs& in, const Parallelism& p,
                                    const StorageTier& tier, std::vector<Finding>& findings) {
  const Cluster& c = *in.cluster;
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
  if (in.reliability->checkpoint_mode == CheckpointMode::async) {
    // The GPUs pause only for the device-to-host snapshot of their own shard; the write to storage
    // runs in the background and must finish before the next checkpoint starts.
    const units::BytesPerSecond pcie = c.gpu.pcie_bandwidth;
    g.checkpoint_stall = pcie.base() > 0 ? g.checkpoint.per_rank_max / pcie : units::seconds(0);
    pending = g.checkpoint_write;
  } else {
    g.checkpoint_stall = local_write;
    pending = upload;
  }
  return pending;
}

// The interval: the scenario's, else max(Daly's optimum, the minimum interval), a single one at the
// end without interruptions; then no checkpoint more often than once per `step` (or, async, before
// the previous one is durable).
void choose_checkpoint_interval(Goodput& g, const ReliabilitySpec& rel, units::Seconds solve, units::Seconds step,
                                units::Seconds pending, std::vector<Finding>& findings) {
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
}

// Restart: relaunch and initialise, wait for a replacement node unless a spare is ready, load; and
// the work an interruption loses.
void add_restart(Goodput& g, const ReliabilitySpec& rel, double per_hour, units::Seconds pending,
                 std::vector<Finding>& findings) {
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
}

// A cadence no published run keeps (goodput.hpp): said, the numbers stand.
void check_checkpoint_cadence(const Goodput& g, units::Seconds step, std::vector<Finding>& findings) {
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
}

// Expected wall time (Daly 2006), and its split into restarts and lost work.
void add_wall_time(Goodput& g, units::Seconds steady, units::Seconds solve, units::Seconds pending,
                   std::vector<Finding>& findings) {
  const bool no_failures = !std::isfinite(g.mtbi.base());
  g.wall = daly_wall_time(solve, g.checkpoint_interval, g.checkpoint_stall, g.restart + pending, g.mtbi);
  g.finite = std::isfinite(g.wall.base());
  if (!g.finite) {
    findings.push_back(finding(FindingCode::interruptions_unbounded, {}, {{"mtbi_h", g.mtbi.base() / 3600.0}}));
    g.fraction = 0;
    g.expected_interruptions = kInf;
    return;
  }
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

}  // namespace

Goodput compute_goodput(const GoodputInputs& in, const Parallelism& p, units::Seconds steady, units::Seconds step,
                        double tokens_per_s, std::vector<Finding>& findings) {
  const ReliabilitySpec& rel = *in.reliability;
  Goodput g;
  g.modelled = true;
  g.steady = steady;
  g.mode = rel.checkpoint_mode;

  const StorageTier tier = resolve_storage_tier(in, findings);
  check_data_loading(g, in, tier, tokens_per_s, findings);
  const units::Seconds solve = steady * g.data.slowdown;
  g.data_stall = solve - steady;

  const double per_hour = add_interruptions(g, in, findings);
  const units::Seconds pending = add_checkpoint_times(g, in, p, tier, findings);
  choose_checkpoint_interval(g, rel, solve, step, pending, findings);
  add_restart(g, rel, per_hour, pending, findings);

  g.checkpoints = solve / g.checkpoint_interval;
  g.checkpoint_overhead = g.checkpoint_stall * g.checkpoints;
  check_checkpoint_cadence(g, step, findings);
  add_wall_time(g, steady, solve, pending, findings);
  g.cost = run_cost(in, g, findings);
  return g;
}

}  // namespace capplan::sim
