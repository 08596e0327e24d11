// SPDX-License-Identifier: Apache-2.0
// Field tables: one declaration per field of a scenario section (its key, the kind and unit of its
// value, its range and why, its help, its command-line flag, and where it lands in the sim struct).
// The section's reader checks values against it, the CLI derives its flags from it, and
// `capplan schema` writes the JSON Schema from it: a field is added in one row.
#pragma once
#include <nlohmann/json.hpp>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "capplan/data/serve_io.hpp"
#include "capplan/sim/tco/tco.hpp"
#include "capplan/sim/workload/pricing.hpp"
#include "capplan/sim/workload/scenario.hpp"
#include "capplan/sim/workload/training.hpp"

namespace capplan::data {

enum class FieldKind {
  number,   // a finite number in [min, max] (min excluded when min_open)
  integer,  // an integer in [min, max]
  boolean,
  text,     // a non-empty string (an id, a name)
  choice,   // a string, one of `choices`
  length,   // tokens per request: a number in [min, max], or {mean, p95} each in [min, max], p95 >= mean
  per_choice,  // an object with one key per choice, each a number in [min, max] or null (its default)
  count,    // a count of `unit`: a number, or a string with an SI or binary suffix ("2B", "4Mi"), in [min, max]
  list,     // a non-empty list of strings, each one of `choices`
  records,  // a non-empty list of objects, each as the schema's $defs/`record` says (read by hand)
};

// A command-line flag that sets the field (name nullptr: none).
struct FieldFlag {
  const char* name = nullptr;  // "--max-num-seqs"
  const char* type = "";       // shown in --help: "INT", "FRACTION"
  const char* help = "";       // --help's line
  const char* group = "";      // --help's group ("Engine and layout")
  // capplan search's --help line: "" the same as `help`, nullptr not a flag of search.
  const char* search_help = "";
};

// What decides whether a given field is used: the scenario as read, and what reads it besides the
// estimate (FieldSpec::applies).
struct FieldUse {
  const sim::Scenario& scenario;
  bool tco = false;  // a tco section: capplan tco reads the spot and reserved rates, the on-premises terms
};

// What every user of a field knows about it (designated initializers: unnamed members keep these).
struct FieldSpec {
  const char* pointer = "";  // below its section, "/"-separated: "engine/max_num_seqs"
  FieldKind kind = FieldKind::number;
  const char* unit = "";     // "tokens", "s", "us", "GiB", "requests/s"; "" for counts, fractions, names
  double min = -std::numeric_limits<double>::infinity();  // numbers, integers, lengths
  double max = std::numeric_limits<double>::infinity();
  bool min_open = false;     // min itself excluded (numbers)
  double least = 0;          // numbers above an open min: smaller values refused too, `bound` saying why
  const char* help = "";     // the schema's description, the form's tooltip
  const char* bound = "";    // why the range is what it is ("" when only the kind's)
  FieldFlag flag = {};
  FieldFlag p95_flag = {};   // lengths: the flag that sets {p95}, the flag above setting {mean}
  std::span<const char* const> choices = {};  // choices: the spellings accepted
  const char* noun = "";                      // choices: what an unknown spelling is ("weight format")
  const char* pattern = "";                   // text: the regular expression the schema states
  int items = 0;                              // > 0: a list of exactly that many values of the kind
  bool required = false;  // must be given when its object is (a reader may waive it: a preset's own)
  // A setting of the run, not a property of the model: a scenario key, not a key of the catalog's
  // records (an MoE model's capacity factor, its dispatcher).
  bool run_only = false;
  bool nullable = false;                      // null accepted, meaning "unknown": nothing is stored
  const char* record = "";                    // records: the $defs entry of one item ("tier")
  // When the field is used (nullptr: always). A value given where it is not is accepted with a
  // warning that names the field and says `unused` ("used only with precision fp8 or fp4").
  bool (*applies)(const FieldUse& use) = nullptr;
  const char* unused = "";
};

// A field, where a checked value lands in `T` (nullptr: read by hand beside the table), and how it
// is written back (nullptr: it is not; a null result: left out).
template <class T>
struct Field {
  FieldSpec spec;
  void (*set)(T& out, const nlohmann::json& value) = nullptr;
  nlohmann::json (*get)(const T& in) = nullptr;
};

// --- the model section, pointers below /model ------------------------------------------------
// Its name, dimensions and switches; the preset, MoE, attention (MLA, sliding window) and hybrid
// layers are read beside it (input/scenario/model.cpp).
std::span<const Field<sim::ModelSpec>> model_fields();

// The model's mixture of experts (below /model/moe), multi-head latent attention (below
// /model/mla) and Mamba-2 mixer of a hybrid model (below /model/mamba): read in scenarios and in
// the catalog's model records alike (run_only rows in scenarios only).
std::span<const Field<sim::MoeSpec>> moe_fields();
std::span<const Field<sim::MlaSpec>> mla_fields();
std::span<const Field<sim::MambaSpec>> mamba_fields();

// --- a serving engine, below an engine object -------------------------------------------------
// A catalog engine's defaults (data/engines.json, each {value, source}) and a serve scenario's
// overrides (workload.engine {id, ...}): the same keys.
std::span<const Field<sim::EngineSpec>> engine_fields();

// --- the serve workload (workload.kind serve; capplan serve), pointers below /workload ---------
// The engine (workload.engine: an id, or {id, overrides} with the overrides engine_fields'
// keys, landing in ServeRequest::job.engine).
std::span<const Field<ServeRequest>> serve_engine_fields();
// Layout of a replica: weights, KV cache, tp, pp, ep, compare.
std::span<const Field<ServeRequest>> serve_layout_fields();
// Traffic (workload.traffic): arrival, rate, concurrency, requests, lengths, prefix hits.
std::span<const Field<ServeRequest>> serve_traffic_fields();
// Latency target (workload.slo) and the headroom kept for the peak.
std::span<const Field<ServeRequest>> serve_slo_fields();
// The four above, in that order (the order of capplan serve's flags).
std::span<const std::span<const Field<ServeRequest>>> serve_field_tables();

// --- the fine-tuning workload (workload.kind finetune), pointers below /workload -----------------
// The kind, method, adapters, frozen parts and dataset: land in a scenario's training.finetune and
// workload.dataset. The recipe's defaults, the LoRA targets and the rules between fields (adapters
// need lora or qlora, ...) are read beside it (input/scenario/workload.cpp).
std::span<const Field<sim::Scenario>> finetune_fields();

// --- the goodput sections: reliability, storage, data ------------------------------------------
// The storage section as written, before its tier is looked up in the catalog (storage.json) and
// its explicit bandwidths laid over the tier's (input/scenario/storage.cpp).
struct StorageInput {
  std::optional<std::string> tier, upload_tier;
  std::optional<double> capacity_tib, write, read, write_node, read_node, usd_per_gb_month;
  std::optional<bool> local;
};
// Failures, restarts and checkpoints, below /reliability.
std::span<const Field<sim::ReliabilitySpec>> reliability_fields();
// Checkpoint and dataset storage, below /storage.
std::span<const Field<StorageInput>> storage_fields();
// Data loading, below /data.
std::span<const Field<sim::DataLoadingSpec>> data_fields();
// --- the training section, pointers below /training ---------------------------------------------
// Precision, kernels, recipe switches and host times land in the job; tokens and the global batch
// (an SI count, one of two spellings, refused for fine-tuning), the framework (a catalog recipe
// whose defaults fill the keys left out) are read beside it (input/scenario/training.cpp).
std::span<const Field<sim::TrainingJob>> training_fields();

// --- the cluster section, pointers below /cluster -----------------------------------------------
// The values the cluster table stores before the reader resolves the instance or GPU in the
// catalog and sizes the cluster (input/scenario/cluster.cpp): each is set only when valid.
struct ClusterLinks {
  std::optional<double> intra_node_gbps;
  std::optional<double> inter_node_gbps_per_gpu;
  std::optional<double> gpu_speed_spread;
};
// The links and speed spread land in ClusterLinks; the catalog ids, the sizes (which of them apply
// depends on instance or gpu) and the network tiers are read by hand beside the table.
std::span<const Field<ClusterLinks>> cluster_fields();

// --- the pricing section, pointers below /pricing ---------------------------------------------
// The purchase model and the spot ("spot/..."), reserved and on-premises terms land in the terms
// as written (the reader converts them to US dollars). The GPU-hour and node-hour prices (which of
// them applies, the cluster's GPUs per node), the currency and its rate, and the price sheet are
// read by hand beside the table (input/scenario/pricing.cpp).
std::span<const Field<sim::PricingTerms>> pricing_fields();

// --- the tco section (capplan tco), pointers below /tco ------------------------------------------
// The terms as written, amounts in pricing.currency; the reader converts them, refuses both space
// prices at once and fills the node power's default (input/tco_io.cpp).
std::span<const Field<sim::TcoInputs>> tco_fields();

// The JSON Schema of one field's value: type, range, enum, the help as its description (after
// `prefix`), the unit and the bound's reason as annotations (x-unit, x-bound).
nlohmann::ordered_json field_schema(const FieldSpec& f, std::string_view prefix = {});

// The scenario JSON Schema (schema/scenario.schema.json) with every part a field table declares
// written from its table (`capplan-schema` rewrites the file; tests/data/input/schema_test.cpp fails
// when it is stale). Parts without a table yet are kept as `schema` has them.
nlohmann::ordered_json generate_scenario_schema(nlohmann::ordered_json schema);

}  // namespace capplan::data
