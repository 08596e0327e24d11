// SPDX-License-Identifier: Apache-2.0
// Real time-to-train and real cost: interruptions (failures and spot preemptions), restarts,
// checkpoints (size per rank, write/read time, sync or async, Young/Daly interval), data loading,
// and the cost beyond the sticker price (spot, reserved, on-premises, storage).
//
// Contract: every function here is pure; inputs are the plain structs below, filled by
// capplan_data from a scenario (sections reliability, storage, data, pricing). Unknown inputs are
// empty optionals and turn into warnings naming the scenario field to give, never into guesses.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "capplan/sim/workload/finding.hpp"
#include "capplan/sim/workload/hardware.hpp"
#include "capplan/sim/workload/pricing.hpp"
#include "capplan/sim/workload/reliability.hpp"
#include "capplan/sim/workload/storage.hpp"
#include "capplan/sim/workload/strategy.hpp"
#include "capplan/sim/units.hpp"
#include "capplan/sim/workload/workload.hpp"

namespace capplan::sim {

// ---- results -------------------------------------------------------------------------------

// What one checkpoint holds and what each rank writes (Megatron-Core distributed checkpoint).
struct CheckpointSize {
  units::Bytes total;          // whole model: weights + fp32 master + Adam m, v
  units::Bytes per_rank_max;   // most loaded rank
  units::Bytes per_node_max;   // most loaded node
  long long writers = 0;       // ranks that write
};

struct DataLoadingCheck {
  double bytes_per_token = 0;
  double required_bytes_per_s = 0;                      // tokens/s x bytes/token
  std::optional<double> storage_read_bytes_per_s;       // the tier's read limit for the cluster
  std::optional<double> cpu_tokens_per_s;               // cluster preprocessing capacity
  std::string bound = "none";                           // none, storage, cpu
  double slowdown = 1.0;                                // >= 1: step time multiplier
};

struct CostBreakdown {
  PurchaseModel model = PurchaseModel::on_demand;
  std::optional<units::Usd> compute;       // GPU time at the model's rate (on-prem: capital)
  std::optional<units::Usd> spares;        // hot spare nodes for the wall time
  std::optional<units::Usd> idle_commitment;  // reserved: committed hours this run alone leaves unused
  std::optional<units::Usd> idle_share;    // reserved: the run's share of the idle committed hours at `utilisation`
  std::optional<units::Usd> energy;        // on-prem: power x PUE x price
  std::optional<units::Usd> operations;    // on-prem: staff
  std::optional<units::Usd> checkpoint_storage;
  std::optional<units::Usd> data_storage;
  std::optional<units::Usd> total;         // empty when a needed part is unknown; reserved and
                                           // on-prem: the run's share at `utilisation`
  // Reserved and on-prem, framed alike: the whole commitment beside the run's share. Reserved: the
  // committed GPUs for the term, used at `utilisation` (idle hours at the idle rate); on-prem: the
  // owned nodes' purchase, energy at `utilisation` and operations for the amortisation period.
  // Storage is not included. Empty for on-demand and spot, or when a needed input is unknown.
  std::optional<units::Usd> whole_term;
  std::optional<double> utilisation;       // reserved and on-prem: the stated share of the term in use
  std::optional<double> term_hours;        // reserved: the term; on-prem: the amortisation period
  std::optional<double> committed_gpus;    // reserved: committed GPUs; on-prem: owned GPUs (with spares)
  std::optional<double> usd_per_gpu_hour;  // effective rate used for compute
  std::vector<std::string> missing;        // inputs to give ("pricing.spot.usd_per_gpu_hour")
};

// What set the checkpoint interval: the scenario's checkpoint_interval_s, Daly's optimum, the
// minimum interval (the optimum was shorter), one step or the time to persist a checkpoint (the
// interval was shorter), or a single checkpoint at the end (no interruptions).
enum class IntervalRule { scenario, daly, minimum, step, persist, end_only };
const char* to_string(IntervalRule r);

// A cadence no published run keeps (findings checkpoint_every_few_steps and
// checkpoint_stalls_dominate): a checkpoint more often than every kMinPlausibleStepsPerCheckpoint
// steps (BLOOM-176B saved every 100 iterations, BigScience 2022; framework save intervals are counted
// in hundreds to thousands of steps), or GPUs stalled on checkpoints for more than
// kMaxPlausibleCheckpointStallShare of the compute time (Llama 3 405B kept effective training time
// above 90% with all interruptions included, Dubey et al. 2024, Sec. 3.3.4).
inline constexpr double kMinPlausibleStepsPerCheckpoint = 10;
inline constexpr double kMaxPlausibleCheckpointStallShare = 0.10;

struct Goodput {
  bool modelled = false;
  units::Seconds steady;              // time_to_train of the step model
  units::Seconds data_stall;          // added by data loading when it binds
  units::Seconds checkpoint_overhead; // GPU time stalled by checkpoints, whole run
  units::Seconds restart_total;       // all restarts
  units::Seconds lost_work;           // recomputed work since the last durable checkpoint, all
  units::Seconds wall;                // expected wall time with all of the above
  bool finite = true;                 // false: interruptions outpace progress (wall is a bound)
  double fraction = 1.0;              // steady / wall (useful time / wall time)
  double expected_interruptions = 0;
  double interruptions_per_gpu_hour = 0;
  double preemptions_per_node_hour = 0;
  units::Seconds mtbi;                // cluster mean time between interruptions
  units::Seconds checkpoint_interval; // compute time between checkpoints
  bool interval_given = false;
  IntervalRule interval_rule = IntervalRule::daly;
  units::Seconds daly_interval;       // Daly's optimum (infinite without interruptions), always reported
  units::Seconds min_interval;        // reliability.min_checkpoint_interval_s
  units::Seconds young_interval;      // sqrt(2 delta M), the first-order check
  units::Seconds checkpoint_stall;    // per checkpoint, GPUs paused (delta)
  units::Seconds checkpoint_write;    // per checkpoint, until durable on storage
  units::Seconds checkpoint_read;     // per restart
  units::Seconds restart;             // per interruption: overhead + replacement + read
  units::Seconds lost_per_interruption;
  double checkpoints = 0;
  CheckpointMode mode = CheckpointMode::sync;
  CheckpointSize checkpoint;
  DataLoadingCheck data;
  CostBreakdown cost;
};

// ---- the formulas (each tested against a hand derivation) ------------------------------------

// Cluster interruptions per hour: GPUs x rate per GPU-hour + nodes x spot preemptions per node-hour.
double interruptions_per_hour(double per_gpu_hour, int gpus, double preemptions_per_node_hour, int nodes);

// Mean time between interruptions of the whole job: 1 / interruptions_per_hour.
units::Seconds mtbi(double interruptions_per_hour);

// Young (1974): tau = sqrt(2 delta M).
units::Seconds young_interval(units::Seconds delta, units::Seconds m);

// Daly (2006), higher-order optimum: tau = sqrt(2 delta M) [1 + (1/3) sqrt(delta/(2M)) + (1/9) delta/(2M)] - delta
// for delta < 2M, else tau = M.
units::Seconds daly_interval(units::Seconds delta, units::Seconds m);

// Daly (2006), expected wall time of `solve` seconds of work with interval tau, checkpoint
// cost delta, restart R and mean time between interruptions M (Poisson interruptions, which can
// also strike during restarts and checkpoints): T = M e^{R/M} (e^{(tau+delta)/M} - 1) solve/tau.
// Returns +inf when the exponent overflows.
units::Seconds daly_wall_time(units::Seconds solve, units::Seconds tau, units::Seconds delta, units::Seconds restart,
                              units::Seconds m);

// Size of one checkpoint and what each rank writes. Bytes per parameter: `weight_bytes` (bf16
// weights, 2) + `optimizer_bytes` (fp32 master + Adam m, v = 12; Rajbhandari et al. 2020).
// Parameters of the most loaded pipeline stage on one TP rank; ZeRO >= 1 (distributed optimizer)
// shards the optimizer state over the data-parallel group, and Megatron-Core's fully parallel save
// spreads the replicated weights over it too; ZeRO 0 has data-parallel rank 0 write everything.
// `bytes_per_param`: TrainingJob::checkpoint_bytes_per_param() (the weights as stored and the
// optimizer state: 2 + 12 for bf16 mixed precision). The largest rank of every pipeline stage
// sets per_rank_max.
CheckpointSize checkpoint_size(const ModelSpec& m, const Parallelism& p, int gpus, int gpus_per_node,
                               double bytes_per_param = 14.0);
// The same for the job's training: fine-tuning saves the trained parameters with their optimizer
// state, and the frozen base only when the model is saved whole (full SFT with frozen parts).
CheckpointSize checkpoint_size(const ModelSpec& m, const TrainingJob& job, const Parallelism& p, int gpus,
                               int gpus_per_node);

// Seconds to move `per_node` bytes from every node and `total` bytes overall through `bw`
// (the slower of the per-node and the aggregate limit); 0 when no limit is known.
units::Seconds transfer_time(units::Bytes per_node, units::Bytes total, const StorageBandwidth& bw);

// Data loading: tokens/s x bytes/token against the tier's read bandwidth and the nodes' CPU.
DataLoadingCheck data_loading(double tokens_per_s, const DataLoadingSpec& d, int vocab, const StorageTier& tier,
                              int nodes);

// Everything above for one scenario, given its steady-state time-to-train and throughput.
// `findings` receives what the user should know (missing prices, data loading bound, ...).
struct GoodputInputs {
  const ModelSpec* model = nullptr;
  const TrainingJob* training = nullptr;
  const Cluster* cluster = nullptr;
  const ReliabilitySpec* reliability = nullptr;
  const StorageSpec* storage = nullptr;
  const DataLoadingSpec* data = nullptr;
  const PricingTerms* pricing = nullptr;
};
// The interval: the scenario's, else max(Daly's optimum, the minimum interval); then no checkpoint
// more often than once per `step` (or, async, before the previous one is durable).
Goodput compute_goodput(const GoodputInputs& in, const Parallelism& p, units::Seconds steady, units::Seconds step,
                        double tokens_per_s, std::vector<Finding>& findings);

}  // namespace capplan::sim
