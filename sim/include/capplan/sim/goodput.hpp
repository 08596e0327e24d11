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

#include "capplan/sim/finding.hpp"
#include "capplan/sim/hardware.hpp"
#include "capplan/sim/strategy.hpp"
#include "capplan/sim/units.hpp"
#include "capplan/sim/workload.hpp"

namespace capplan::sim {

// Llama 3 405B pre-training (Llama Team, Meta 2024, "The Llama 3 Herd of Models", Sec. 3.3.4 and
// Table 5): 466 job interruptions (47 planned, 419 unexpected) in a 54-day snapshot on 16,384 H100.
inline constexpr double kLlama3Interruptions = 466;
inline constexpr double kLlama3UnexpectedInterruptions = 419;
inline constexpr double kLlama3Gpus = 16384;
inline constexpr double kLlama3Days = 54;
// 466 / (16,384 x 54 x 24 GPU-hours) = 2.195e-5 interruptions per GPU-hour (all interruptions: the
// planned ones also stop and restart the job).
inline constexpr double kDefaultInterruptionsPerGpuHour =
    kLlama3Interruptions / (kLlama3Gpus * kLlama3Days * 24.0);
inline constexpr const char* kDefaultFailureRateSource =
    "Llama 3 405B: 466 interruptions in 54 days on 16,384 H100 (Dubey et al. 2024, Sec. 3.3.4) = "
    "466/(16384*54*24) per GPU-hour";

// Relaunch + re-initialisation (scheduler, NCCL communicators, data loader) before the checkpoint
// load starts. An ASSUMPTION (no published figure we can cite for a general cluster): override
// reliability.restart_s with your own measurement.
inline constexpr double kDefaultRestartOverheadS = 600;

// Uptime Institute Global Data Center Survey 2023: average annual PUE 1.58.
inline constexpr double kDefaultPue = 1.58;

enum class CheckpointMode { sync, async };
const char* to_string(CheckpointMode m);
std::optional<CheckpointMode> checkpoint_mode_from_string(const std::string& s);

enum class PurchaseModel { on_demand, spot, reserved, on_prem };
const char* to_string(PurchaseModel m);
std::optional<PurchaseModel> purchase_model_from_string(const std::string& s);

struct ReliabilitySpec {
  double interruptions_per_gpu_hour = kDefaultInterruptionsPerGpuHour;
  std::string rate_source = kDefaultFailureRateSource;
  units::Seconds restart_overhead = units::seconds(kDefaultRestartOverheadS);  // relaunch + init
  bool restart_overhead_given = false;
  // Waiting for a replacement node after a hardware failure; skipped when a hot spare is ready.
  std::optional<units::Seconds> node_replacement;
  int hot_spare_nodes = 0;
  std::optional<units::Seconds> checkpoint_interval;  // empty: the Daly optimum
  CheckpointMode checkpoint_mode = CheckpointMode::sync;
  int checkpoints_kept = 2;  // retained on storage (for the storage cost)
};

// Bandwidth limits of one direction of a storage tier: a cluster-wide aggregate and a per-node
// cap (the node's storage NIC or local device). Zero means "no limit of this kind known".
struct StorageBandwidth {
  units::BytesPerSecond aggregate;
  units::BytesPerSecond per_node;
  bool known() const { return aggregate.base() > 0 || per_node.base() > 0; }
};

struct StorageTier {
  std::string id;  // catalog id or "custom"
  StorageBandwidth write;
  StorageBandwidth read;
  std::optional<double> usd_per_gb_month;  // decimal GB
  bool local = false;  // node-local (NVMe): a checkpoint is durable only once uploaded
};

struct StorageSpec {
  bool given = false;  // false: fall back to the node's network bandwidth, with a warning
  StorageTier tier;
  std::optional<StorageTier> upload;  // for a local tier: where checkpoints are uploaded
};

struct DataLoadingSpec {
  // Bytes read per training token. 0 = Megatron's pre-tokenised indexed dataset: 2 bytes (uint16)
  // when the vocabulary has fewer than 65,500 entries, else 4 (int32) (Megatron-LM
  // megatron/core/datasets/indexed_dataset.py, DType.optimal_dtype).
  double bytes_per_token = 0;
  std::optional<double> cpu_tokens_per_s_per_node;  // preprocessing capacity of one node
  std::optional<double> dataset_bytes;               // stored dataset (default: tokens x bytes/token)
};

struct SpotTerms {
  std::optional<double> usd_per_gpu_hour;
  std::optional<double> preemptions_per_node_hour;  // probability per node-hour, 0..1
};
struct ReservedTerms {
  std::optional<double> usd_per_gpu_hour;
  std::optional<double> term_hours;     // commitment paid whether used or not
  std::optional<int> committed_gpus;    // default: the cluster's GPUs
  // Rate at which committed but unused GPU-hours are billed, where the provider bills idle
  // capacity differently (Tencent Cloud CVM billing doc 560/8025: an idle reserved pool at 0.3x
  // on-demand). Default: the reserved rate (the whole commitment is paid).
  std::optional<double> idle_usd_per_gpu_hour;
};
struct OnPremTerms {
  std::optional<double> usd_per_node;          // purchase price of one node
  std::optional<double> amortisation_years;
  std::optional<double> node_power_w;          // default: GPU TDP x GPUs per node (GPUs only)
  bool node_power_from_tdp = false;
  double pue = kDefaultPue;
  std::optional<double> usd_per_kwh;
  std::optional<double> ops_usd_per_year;      // operations staff and support for the cluster
  double utilisation = 1.0;                    // share of the owned cluster's time doing useful work
};

struct PricingTerms {
  PurchaseModel model = PurchaseModel::on_demand;
  SpotTerms spot;
  ReservedTerms reserved;
  OnPremTerms on_prem;
};

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
  std::optional<units::Usd> idle_commitment;  // reserved: committed but unused hours
  std::optional<units::Usd> energy;        // on-prem: power x PUE x price
  std::optional<units::Usd> operations;    // on-prem: staff
  std::optional<units::Usd> checkpoint_storage;
  std::optional<units::Usd> data_storage;
  std::optional<units::Usd> total;         // empty when a needed part is unknown
  std::optional<double> usd_per_gpu_hour;  // effective rate used for compute
  std::vector<std::string> missing;        // inputs to give ("pricing.spot.usd_per_gpu_hour")
};

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
// `step` bounds the interval from below (no checkpoint more often than once per step).
Goodput compute_goodput(const GoodputInputs& in, const Parallelism& p, units::Seconds steady, units::Seconds step,
                        double tokens_per_s, std::vector<Finding>& findings);

}  // namespace capplan::sim
