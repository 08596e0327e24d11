// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "capplan/sim/workload/framework.hpp"
#include "capplan/sim/workload/hardware.hpp"
#include "capplan/sim/workload/pricing.hpp"
#include "capplan/sim/workload/result.hpp"
#include "capplan/sim/serve/serve.hpp"
#include "capplan/sim/workload/workload.hpp"

namespace capplan::data {

struct GpuEntry {
  sim::GpuSpec spec;  // measured efficiencies filled from "measured" where published, else 0
  std::string vendor;
  std::string arch;
  int pcie_gen = 0;
  double tdp_w = 0;
  // Maximum power of the vendor's server built on this GPU (DGX/HGX), the whole system: GPUs,
  // CPUs, NICs, fans. The default node power of an owned cluster; empty when unpublished.
  struct SystemPower {
    double w = 0;
    int gpus = 0;        // GPUs in that server
    std::string system;  // "NVIDIA DGX H100"
    std::string source;
  };
  std::optional<SystemPower> system_power;
  std::string confidence;
  std::vector<std::string> sources;
  std::string notes;
  // The names the driver reports for this GPU (nvidia-smi's product name, cudaDeviceProp::name),
  // as published in the sources; empty when none is. Matched by gpu_for_device_name.
  std::vector<std::string> device_names;
};

struct InstancePrice {
  std::optional<double> usd_per_node_hour;
  std::optional<double> usd_per_gpu_hour;
  std::string type;    // "on-demand", ...
  std::string region;  // empty = not given
  std::string date;    // empty = not given
  std::string currency;                // ISO 4217 code the price figures are in (checked at load)
  std::optional<double> usd_per_unit;  // its rate to US dollars; needed for a non-USD price
  std::vector<std::string> sources;
  std::string confidence;
  std::string notes;

  // Per-GPU hourly price derived from whichever figure the source gives, in `currency`; empty
  // when unknown. (The usd_ field names are the catalog's; the figures are in `currency`.)
  std::optional<double> per_gpu_hour(int gpus_per_node) const;
  // The same in US dollars; empty when unknown, or when the price is not in USD and the catalog
  // gives no usd_per_unit (such a price is never used, nor shown, as dollars).
  std::optional<double> per_gpu_hour_usd(int gpus_per_node) const;
  // The currency as sim/ carries it: code, rate (0 when a non-USD price has none) and the price date.
  sim::Currency money() const;
};

struct InstanceEntry {
  std::string id;  // "<provider>-<name>", lower case
  std::string provider;
  std::string name;
  std::string gpu;  // GpuEntry id
  int gpus_per_node = 0;
  std::optional<double> network_gbps;  // per node, Gbit/s
  std::string network;
  std::optional<sim::Topology> topology;  // network tiers; empty: two tiers from gpus_per_node and network_Gbps
  std::optional<bool> rdma;
  std::optional<int> vcpu;
  std::optional<double> ram_gib;
  InstancePrice price;
  std::vector<std::string> sources;
  std::string notes;
};

struct ModelEntry {
  std::string id;
  sim::ModelSpec spec;  // spec.name == display name
  double params_b_published = 0;
  std::vector<std::string> sources;
  std::string notes;
};

// A storage offering (data/storage.json): bandwidths in decimal GB/s, each figure with its source;
// null (empty) = not published / not found. `gb_per_s_per_tib`: throughput that scales with the
// provisioned capacity (FSx for Lustre), aggregate = capacity_tib x this; the directional
// `write_/read_gb_per_s_per_tib` where the two differ (CPFS), capped at `max_write_/max_read_gb_per_s`.
// `is_default`: the tier assumed when a scenario has no storage section (at most one; it needs a
// bandwidth that does not depend on a capacity).
struct StorageEntry {
  std::string id;
  std::string provider;
  std::string name;
  std::string kind;  // parallel_fs, object, local_nvme
  std::optional<double> write_gb_per_s;           // cluster aggregate
  std::optional<double> read_gb_per_s;
  std::optional<double> write_gb_per_s_per_node;  // one node's cap
  std::optional<double> read_gb_per_s_per_node;
  std::optional<double> gb_per_s_per_tib;         // read and write per TiB provisioned
  std::optional<double> write_gb_per_s_per_tib;   // write per TiB provisioned
  std::optional<double> read_gb_per_s_per_tib;    // read per TiB provisioned
  std::optional<double> max_write_gb_per_s;       // cap on the per-TiB aggregate
  std::optional<double> max_read_gb_per_s;
  bool is_default = false;
  std::optional<double> usd_per_gb_month;
  std::string region;
  std::string date;
  std::string currency;
  std::vector<std::string> sources;
  std::string confidence;
  std::string notes;
};

// One default of a framework recipe as data/frameworks.json gives it: the value as JSON text
// ("null" where the framework has none or it was not read), its source, or the note saying why
// there is no value.
struct FrameworkDefault {
  std::string key;
  std::string value;
  std::string source;
  std::string note;
};

// A framework recipe (data/frameworks.json): the values the model uses, and where each came from.
struct FrameworkEntry {
  sim::FrameworkRecipe recipe;  // recipe.id, recipe.name
  std::string version;
  std::string summary;
  std::vector<FrameworkDefault> defaults;  // in the file's order
  std::vector<FrameworkDefault> supports;  // what the stack runs, each with its source or note
};

// A serving engine's recipe (data/engines.json): its scheduler and memory defaults as the engine's
// source sets them, and the measured characteristics the serving model needs (step overhead,
// kernel gap, runtime reserve, quantised-kernel efficiencies), each default with its source or the
// note saying why it is null (a null leaves the EngineSpec member at its C++ default).
struct EngineEntry {
  sim::EngineSpec spec;                    // spec.id, spec.name, spec.version, spec.source (where the defaults come from)
  std::string summary;
  std::vector<FrameworkDefault> defaults;  // in the file's order
};

struct Catalogs {
  std::vector<GpuEntry> gpus;
  std::vector<InstanceEntry> instances;
  std::vector<ModelEntry> models;
  std::vector<StorageEntry> storage;  // storage.json; empty when the file is absent
  std::vector<FrameworkEntry> frameworks;  // frameworks.json; empty when the file is absent
  std::vector<EngineEntry> engines;        // engines.json; empty when the file is absent

  const GpuEntry* find_gpu(std::string_view id) const;
  // The GPU whose device_names hold `reported` (a name nvidia-smi or CUDA reports), compared
  // without case and with spaces, hyphens and underscores alike (Kubernetes node labels write
  // "NVIDIA-H100-80GB-HBM3"); nullptr when no entry lists it.
  const GpuEntry* gpu_for_device_name(std::string_view reported) const;
  const InstanceEntry* find_instance(std::string_view id) const;
  const ModelEntry* find_model(std::string_view id) const;
  const StorageEntry* find_storage(std::string_view id) const;
  // The tier marked "default": true in storage.json; nullptr when none is.
  const StorageEntry* default_storage() const;
  const FrameworkEntry* find_framework(std::string_view id) const;
  // The recipe training.framework names: frameworks.json's, else the built-in kernel-style
  // recipes "megatron" and "pytorch" (catalogs without frameworks.json); nullopt when unknown.
  std::optional<sim::FrameworkRecipe> framework_recipe(std::string_view id) const;
  // Every id training.framework accepts, for "known: ..." messages and combo boxes.
  std::vector<std::string> framework_ids() const;
  const EngineEntry* find_engine(std::string_view id) const;
  // The ids engines.json defines, in the file's order.
  std::vector<std::string> engine_ids() const;
};

// The power of one owned node when the scenario gives none: the catalog's system power of the
// GPU's server when the node holds as many GPUs (`from_tdp` false), else the GPUs' TDP x GPUs per
// node (GPUs only); `said` words where it came from, for a warning. Empty for an unknown GPU.
struct NodePower {
  double w = 0;
  bool from_tdp = false;
  std::string said;
};
std::optional<NodePower> default_node_power(const Catalogs& catalogs, const sim::Cluster& cluster);

// The folder with gpus.json, instances.json, models.json: $CAPPLAN_DATA_DIR if set, else
// <exe dir>/../share/capplan/data when it holds gpus.json (an install), else the nearest folder
// above the executable that holds data/gpus.json (a build tree in its checkout, also one carried
// with its sources to another machine), else the source tree's data/ (compile-time), else
// <exe dir>/../share/capplan/data.
std::filesystem::path default_data_dir();

// Loads and validates all three catalogs (and storage.json, frameworks.json, engines.json when present); every problem is reported with its JSON pointer
// ("gpus.json#/gpus/3/hbm_GiB: must be > 0; got -80"), cross-references included
// (instance -> gpu id).
Result<Catalogs> load_catalogs(const std::filesystem::path& dir);

// "known: a, b, c" and the closest name ("did you mean 'h100-sxm-80gb'?") for error messages.
// Names longer than this get no "did you mean" (edit distance is quadratic in the length).
inline constexpr std::size_t kMaxSuggestedLength = 64;
std::string suggest(std::string_view got, const std::vector<std::string>& known);

}  // namespace capplan::data
