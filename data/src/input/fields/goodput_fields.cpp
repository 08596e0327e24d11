// SPDX-License-Identifier: Apache-2.0
// The goodput sections' fields (sim/workload/reliability.hpp, storage.hpp): failures, restarts and
// checkpoints below /reliability, checkpoint and dataset storage below /storage, data loading
// below /data.
#include <string>

#include "capplan/data/fields.hpp"

namespace capplan::data {
namespace {

using nlohmann::json;

constexpr const char* kReliability = "Reliability (interruptions, restarts, checkpoints)";
constexpr const char* kStorage = "Storage (checkpoints and data)";
constexpr const char* kData = "Data loading";

constexpr const char* kCheckpointModes[] = {"sync", "async"};

// Seconds: over 100 days of waiting, beyond any restart or replacement.
constexpr double kMaxWaitS = 1e7;
constexpr const char* kMaxWaitWhy = "over 100 days";
// Seconds of compute between checkpoints: beyond any run's length (30 years).
constexpr double kMaxIntervalS = 1e9;
constexpr const char* kMaxIntervalWhy = "beyond any run's length (about 30 years)";

const Field<sim::ReliabilitySpec> kReliabilityRows[] = {
    {{.pointer = "failure_rate_per_gpu_hour",
      .kind = FieldKind::number,
      .unit = "per GPU-hour",
      .min = 0,
      .max = 1,
      .help = "job interruptions per GPU-hour (default 466/(16384*54*24), Llama 3 405B)",
      .bound = "one interruption per GPU-hour: no job makes progress beyond it",
      .flag = {"--failure-rate-per-gpu-hour", "RATE", "Job interruptions per GPU-hour (default: Llama 3 405B's 2.2e-5)",
               kReliability}},
     [](sim::ReliabilitySpec& r, const json& v) {
       r.interruptions_per_gpu_hour = v.get<double>();
       r.rate_source = "scenario";
     }},
    {{.pointer = "restart_s",
      .kind = FieldKind::number,
      .unit = "s",
      .min = 0,
      .max = kMaxWaitS,
      .help = "seconds to relaunch and re-initialise before loading the checkpoint (default 600, an assumption)",
      .bound = kMaxWaitWhy,
      .flag = {"--restart-s", "S",
               "Relaunch + initialisation seconds before the checkpoint load (default 600, an assumption)",
               kReliability}},
     [](sim::ReliabilitySpec& r, const json& v) {
       r.restart_overhead = units::seconds(v.get<double>());
       r.restart_overhead_given = true;
     }},
    {{.pointer = "node_replacement_s",
      .kind = FieldKind::number,
      .unit = "s",
      .min = 0,
      .max = kMaxWaitS,
      .help = "seconds to get a replacement node when no hot spare is ready (default: unknown)",
      .bound = kMaxWaitWhy,
      .flag = {"--node-replacement-s", "S", "Seconds to get a replacement node when no hot spare is ready",
               kReliability},
      .nullable = true},
     [](sim::ReliabilitySpec& r, const json& v) { r.node_replacement = units::seconds(v.get<double>()); }},
    {{.pointer = "hot_spares",
      .kind = FieldKind::integer,
      .unit = "nodes",
      .min = 0,
      .max = 1e5,
      .help = "spare nodes kept ready (paid for the whole run)",
      .bound = "the scenario's limit on nodes",
      .flag = {"--hot-spares", "NODES", "Spare nodes kept ready", kReliability}},
     [](sim::ReliabilitySpec& r, const json& v) { r.hot_spare_nodes = static_cast<int>(v.get<double>()); }},
    {{.pointer = "checkpoint_interval_s",
      .kind = FieldKind::number,
      .unit = "s",
      .min = 0,
      .max = kMaxIntervalS,
      .min_open = true,
      .help = "compute seconds between checkpoints (default: the Daly optimum, at least min_checkpoint_interval_s)",
      .bound = kMaxIntervalWhy,
      .flag = {"--checkpoint-interval-s", "S",
               "Seconds of training between checkpoints (default: Daly optimum, at least the minimum)", kReliability},
      .nullable = true},
     [](sim::ReliabilitySpec& r, const json& v) { r.checkpoint_interval = units::seconds(v.get<double>()); }},
    {{.pointer = "min_checkpoint_interval_s",
      .kind = FieldKind::number,
      .unit = "s",
      .min = 0,
      .max = kMaxIntervalS,
      .help = "shortest interval the Daly optimum may give, compute seconds (default 900: 15 min; 0 = none)",
      .bound = kMaxIntervalWhy,
      .flag = {"--min-checkpoint-interval-s", "S",
               "Shortest interval the Daly optimum may give (default 900; 0 = none)", kReliability}},
     [](sim::ReliabilitySpec& r, const json& v) { r.min_checkpoint_interval = units::seconds(v.get<double>()); }},
    {{.pointer = "checkpoint",
      .kind = FieldKind::choice,
      .help = "checkpoint mode: sync (default) or async",
      .flag = {"--checkpoint", "MODE", "sync (default) or async", kReliability},
      .choices = kCheckpointModes,
      .noun = "checkpoint mode"},
     [](sim::ReliabilitySpec& r, const json& v) {
       r.checkpoint_mode = *sim::checkpoint_mode_from_string(v.get<std::string>());
     }},
    {{.pointer = "checkpoints_kept",
      .kind = FieldKind::integer,
      .unit = "checkpoints",
      .min = 1,
      .max = 1e4,
      .help = "checkpoints retained on storage (default 2)",
      .bound = "beyond any retention policy",
      .flag = {"--checkpoints-kept", "INT", "Checkpoints retained on storage (default 2)", kReliability}},
     [](sim::ReliabilitySpec& r, const json& v) { r.checkpoints_kept = static_cast<int>(v.get<double>()); }},
};

// Bandwidth of a storage tier: GB/s, up to 100 TB/s (beyond any parallel file system).
#define CAPPLAN_BANDWIDTH(key, member, help_, flag_, flag_help)                                             \
  Field<StorageInput> {                                                                                   \
    {.pointer = key, .kind = FieldKind::number, .unit = "GB/s", .min = 0, .max = 1e5, .min_open = true,   \
     .help = help_, .bound = "100 TB/s, beyond any parallel file system",                                 \
     .flag = {flag_, "GBPS", flag_help, kStorage}},                                                        \
        [](StorageInput& s, const json& v) { s.member = v.get<double>(); }                                \
  }

const Field<StorageInput> kStorageRows[] = {
    {{.pointer = "tier",
      .kind = FieldKind::text,
      .help = "storage tier id (capplan catalog storage)",
      .flag = {"--storage-tier", "ID", "Storage tier id (capplan catalog storage)", kStorage}},
     [](StorageInput& s, const json& v) { s.tier = v.get<std::string>(); }},
    {{.pointer = "capacity_tib",
      .kind = FieldKind::number,
      .unit = "TiB",
      .min = 0,
      .max = 1e6,
      .min_open = true,
      .help = "provisioned capacity (tiers whose throughput scales with capacity)",
      .bound = "an exbibyte, beyond any file system",
      .flag = {"--storage-capacity-tib", "TIB", "Provisioned capacity (tiers whose throughput scales with it)",
               kStorage}},
     [](StorageInput& s, const json& v) { s.capacity_tib = v.get<double>(); }},
    CAPPLAN_BANDWIDTH("write_gb_per_s", write, "aggregate write bandwidth", "--storage-write-gb-per-s",
                      "Aggregate storage write bandwidth, GB/s"),
    CAPPLAN_BANDWIDTH("read_gb_per_s", read, "aggregate read bandwidth", "--storage-read-gb-per-s",
                      "Aggregate storage read bandwidth, GB/s"),
    CAPPLAN_BANDWIDTH("write_gb_per_s_per_node", write_node, "write bandwidth of one node",
                      "--storage-write-gb-per-s-per-node", "Storage write bandwidth of one node, GB/s"),
    CAPPLAN_BANDWIDTH("read_gb_per_s_per_node", read_node, "read bandwidth of one node",
                      "--storage-read-gb-per-s-per-node", "Storage read bandwidth of one node, GB/s"),
    {{.pointer = "local",
      .kind = FieldKind::boolean,
      .help = "node-local storage (NVMe)",
      .flag = {"--storage-local", "BOOL", "Node-local storage (NVMe)", kStorage}},
     [](StorageInput& s, const json& v) { s.local = v.get<bool>(); }},
    {{.pointer = "upload_tier",
      .kind = FieldKind::text,
      .help = "tier a node-local checkpoint is uploaded to (asynchronously)",
      .flag = {"--storage-upload-tier", "ID", "Tier node-local checkpoints are uploaded to", kStorage}},
     [](StorageInput& s, const json& v) { s.upload_tier = v.get<std::string>(); }},
    {{.pointer = "usd_per_gb_month",
      .kind = FieldKind::number,
      .unit = "USD per GB-month",
      .min = 0,
      .max = 1e3,
      .help = "storage price per decimal GB-month",
      .bound = "far above any storage price",
      .flag = {"--storage-usd-per-gb-month", "USD", "Storage price per GB-month", kStorage}},
     [](StorageInput& s, const json& v) { s.usd_per_gb_month = v.get<double>(); }},
};

#undef CAPPLAN_BANDWIDTH

const Field<sim::DataLoadingSpec> kDataRows[] = {
    {{.pointer = "bytes_per_token",
      .kind = FieldKind::number,
      .unit = "bytes",
      .min = 0,
      .max = 1e6,
      .min_open = true,
      .help = "bytes read per training token (default 2 or 4: Megatron's pre-tokenised uint16/int32)",
      .bound = "a megabyte per token, beyond any multimodal sample",
      .flag = {"--bytes-per-token", "BYTES", "Bytes read per training token (default 2 or 4: pre-tokenised)", kData}},
     [](sim::DataLoadingSpec& d, const json& v) { d.bytes_per_token = v.get<double>(); }},
    {{.pointer = "preprocessing_tokens_per_s_per_node",
      .kind = FieldKind::number,
      .unit = "tokens/s",
      .min = 0,
      .max = 1e12,
      .min_open = true,
      .help = "tokens one node's CPUs can load and preprocess per second (default: unknown)",
      .bound = "beyond any node's CPUs",
      .flag = {"--preprocessing-tokens-per-s-per-node", "RATE",
               "Tokens one node's CPUs can load and preprocess per second", kData},
      .nullable = true},
     [](sim::DataLoadingSpec& d, const json& v) { d.cpu_tokens_per_s_per_node = v.get<double>(); }},
    {{.pointer = "dataset_bytes",
      .kind = FieldKind::number,
      .unit = "bytes",
      .min = 0,
      .max = 1e18,
      .min_open = true,
      .help = "stored dataset size (default tokens x bytes_per_token)",
      .bound = "an exabyte, beyond any training corpus",
      .flag = {"--dataset-bytes", "BYTES", "Stored dataset size", kData},
      .nullable = true},
     [](sim::DataLoadingSpec& d, const json& v) { d.dataset_bytes = v.get<double>(); }},
};

}  // namespace

std::span<const Field<sim::ReliabilitySpec>> reliability_fields() { return kReliabilityRows; }
std::span<const Field<StorageInput>> storage_fields() { return kStorageRows; }
std::span<const Field<sim::DataLoadingSpec>> data_fields() { return kDataRows; }

}  // namespace capplan::data
