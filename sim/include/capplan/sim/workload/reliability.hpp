// SPDX-License-Identifier: Apache-2.0
// The scenario's `reliability` section: how often the job is interrupted, how it restarts and
// checkpoints (goodput.hpp turns it into expected wall time).
#pragma once
#include <optional>
#include <string>

#include "capplan/sim/units.hpp"

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

// The shortest checkpoint interval the optimum may give (reliability.min_checkpoint_interval_s): 15
// minutes, the short end of the cadence practitioners' write-ups give for large runs (every 15-30
// min, prefersystems.com 2026; 10-30 min "frequent", rounded to 30 or 60, systemoverflow.com
// "Checkpoint Frequency"; secondary sources, no primary figure found; BLOOM-176B saved every ~3 h,
// BigScience 2022).
// Daly's optimum sqrt(2 delta M) assumes a checkpoint costs only its stall delta; with a fast tier or
// an async snapshot delta falls to milliseconds and the optimum to a checkpoint every step, which no
// run does: each save also costs metadata, barriers and shared-storage traffic the model leaves out.
// The interval used is max(optimum, this); 0 turns the minimum off. A given checkpoint_interval_s
// is used as given.
inline constexpr double kDefaultMinCheckpointIntervalS = 900;

enum class CheckpointMode { sync, async };
const char* to_string(CheckpointMode m);
std::optional<CheckpointMode> checkpoint_mode_from_string(const std::string& s);

struct ReliabilitySpec {
  double interruptions_per_gpu_hour = kDefaultInterruptionsPerGpuHour;
  std::string rate_source = kDefaultFailureRateSource;
  units::Seconds restart_overhead = units::seconds(kDefaultRestartOverheadS);  // relaunch + init
  bool restart_overhead_given = false;
  // Waiting for a replacement node after a hardware failure; skipped when a hot spare is ready.
  std::optional<units::Seconds> node_replacement;
  int hot_spare_nodes = 0;
  std::optional<units::Seconds> checkpoint_interval;  // empty: max(Daly optimum, minimum)
  units::Seconds min_checkpoint_interval = units::seconds(kDefaultMinCheckpointIntervalS);
  CheckpointMode checkpoint_mode = CheckpointMode::sync;
  int checkpoints_kept = 2;  // retained on storage (for the storage cost)
};

}  // namespace capplan::sim
