// SPDX-License-Identifier: Apache-2.0
#include "scenario_flags.hpp"

#include <iterator>
#include <span>
#include <string_view>
#include <utility>

#include "capplan/sim/workload/strategy.hpp"
#include "capplan/data/fields.hpp"
#include "capplan/data/json_pointer.hpp"

namespace capplan::cli {
namespace {

using data::set_at;
using nlohmann::json;

constexpr FlagValue kText = FlagValue::text;
constexpr FlagValue kNumber = FlagValue::number_or_text;
constexpr FlagValue kList = FlagValue::list;

struct Row {
  const char* flag;
  const char* pointer;
  FlagValue value;
  const char* type;
  const char* help;
  const char* search_help;
};

// First, then the model's fields (data::model_fields).
constexpr Row kPresetRow = {"--model", "/model/preset", kText, "ID",
                            "Model preset id (capplan catalog models); replaces the file's model", kSameHelp};

// After the model's fields, before the training and cluster fields.
constexpr Row kFieldRows[] = {
    {"--workload", "/workload/kind", kText, "NAME", "pretrain (default) or finetune", kSameHelp},
    {"--method", "/workload/method", kText, "NAME", "Fine-tuning method: full, lora or qlora", kSameHelp},
    {"--lora-rank", "/workload/lora/rank", kNumber, "INT", "LoRA rank (default: the framework recipe's)", kSameHelp},
    {"--lora-targets", "/workload/lora/targets", kList, "LIST",
     "Linears LoRA adapts, comma-separated: q,k,v,o,gate,up,down (default: the recipe's)", kSameHelp},
    {"--lora-train-embeddings", "/workload/lora/train_embeddings", kNumber, "BOOL",
     "Train the embedding and output layer beside the adapters (PEFT modules_to_save)", kSameHelp},
    {"--base-weights", "/workload/base_weights", kText, "NAME", "QLoRA's frozen base: nf4 (default) or int4",
     kSameHelp},
    {"--double-quant", "/workload/double_quant", kNumber, "BOOL", "QLoRA double quantisation (default true)",
     kSameHelp},
    {"--freeze-embeddings", "/workload/freeze/embeddings", kNumber, "BOOL",
     "Full fine-tuning: keep the embedding and output layer frozen", kSameHelp},
    {"--frozen-layers", "/workload/freeze/layers", kNumber, "INT", "Full fine-tuning: the first INT layers frozen",
     kSameHelp},
    {"--dataset-tokens", "/workload/dataset/tokens", kNumber, "SI", "Fine-tuning data: tokens of one epoch, e.g. 2B",
     kSameHelp},
    {"--epochs", "/workload/dataset/epochs", kNumber, "N", "Fine-tuning epochs (default 1)", kSameHelp},
    {"--mean-sample-tokens", "/workload/dataset/mean_sample_tokens", kNumber, "TOKENS",
     "Mean sample length (needed when unpacked)", kSameHelp},
    {"--p95-sample-tokens", "/workload/dataset/p95_sample_tokens", kNumber, "TOKENS",
     "95th-percentile sample length (the spread of the lengths)", kSameHelp},
    {"--packing", "/workload/dataset/packing", kNumber, "BOOL", "Samples packed into full sequences (default true)",
     kSameHelp},
    {"--pad-to", "/workload/dataset/pad_to", kText, "NAME",
     "Unpacked samples padded to the micro-batch's longest (longest, default) or to seq_len (max)", kSameHelp},
    {"--document-mask", "/workload/dataset/document_mask", kNumber, "BOOL",
     "Packed samples attend only within themselves (default: the recipe's)", kSameHelp},
    {"--layer-pattern", "/model/layer_pattern", kText, "PATTERN",
     "Hybrid model: one symbol per layer, M (Mamba-2), * (attention), - (MLP), E (MoE) (Megatron-Core's "
     "hybrid_override_pattern); sets --layers to its length",
     kSameHelp},
    {"--moe-dispatcher", "/model/moe/dispatcher", kText, "NAME",
     "MoE token dispatch with expert parallelism: alltoall (Megatron-Core's NCCL all-to-all, default) or deepep "
     "(DeepEP / HybridEP fused kernels, Megatron-Core's flex dispatcher)",
     kSameHelp},
};

// After the training and cluster fields (data::training_fields, data::cluster_fields), before the
// strategy options (sim::kStrategyOptions).
constexpr Row kStrategyRows[] = {
    {"--tp", "/strategy/tp", kNumber, "INT|auto", "Tensor-parallel size, or auto",
     "Fix the tensor-parallel size (default: searched)"},
    {"--pp", "/strategy/pp", kNumber, "INT|auto", "Pipeline-parallel size, or auto", "Fix the pipeline-parallel size"},
    {"--dp", "/strategy/dp", kNumber, "INT|auto", "Data-parallel size, or auto", "Fix the data-parallel size"},
    {"--cp", "/strategy/cp", kNumber, "INT|auto", "Context-parallel size, or auto", "Fix the context-parallel size"},
    {"--ep", "/strategy/ep", kNumber, "INT|auto", "Expert-parallel size, or auto", "Fix the expert-parallel size"},
    {"--etp", "/strategy/etp", kNumber, "INT|auto", "Expert tensor-parallel size (1), or auto",
     "Fix the expert tensor-parallel size"},
    {"--micro-batch", "/strategy/micro_batch", kNumber, "INT|auto", "Sequences per micro-batch, or auto",
     "Fix the sequences per micro-batch"},
    {"--virtual-stages", "/strategy/virtual_stages", kNumber, "INT|auto",
     "Interleaved pipeline chunks per rank, or auto", "Fix the interleaved pipeline chunks per rank"},
    {"--zero", "/strategy/zero", kNumber, "INT|auto", "ZeRO stage 0-3, or auto", "Fix the ZeRO stage 0-3"},
    {"--recompute", "/strategy/recompute", kText, "NAME|auto", "none, selective, full or auto",
     "Fix recomputation: none, selective or full"},
    {"--first-stage-layers", "/strategy/first_stage_layers", kNumber, "INT",
     "Layers on the first pipeline stage (Megatron-Core --decoder-first-pipeline-num-layers; default: even split)",
     "Fix the layers on the first pipeline stage"},
    {"--last-stage-layers", "/strategy/last_stage_layers", kNumber, "INT",
     "Layers on the last pipeline stage (Megatron-Core --decoder-last-pipeline-num-layers; default: even split)",
     "Fix the layers on the last pipeline stage"},
};

// After the strategy options.
constexpr Row kLaterRows[] = {
    {"--usd-per-gpu-hour", "/pricing/usd_per_gpu_hour", kNumber, "USD", "Price per GPU-hour (overrides the catalog)",
     "Price per GPU-hour of the scenario's own instance (others: catalog or --price)"},
    {"--usd-per-node-hour", "/pricing/usd_per_node_hour", kNumber, "USD", "Price per node-hour (overrides the catalog)",
     "Price per node-hour of the scenario's own instance (others: catalog or --price)"},
    {"--purchase", "/pricing/purchase", kText, "NAME", "on_demand (default), spot, reserved or on_prem", "on_demand (default), spot, reserved or on_prem, for every offering: one without a price of that model (its own terms, or a catalog price of that type) has an unknown cost"},
    {"--currency", "/pricing/currency", kText, "CODE",
     "ISO 4217 code the prices of the pricing section (and its flags) are in (default USD)", "ISO 4217 code of the scenario's own prices (pricing section and its flags; default USD)"},
    {"--usd-per-unit", "/pricing/usd_per_unit", kNumber, "RATE", "US dollars per unit of --currency, e.g. 0.14",
     "US dollars per unit of --currency, e.g. 0.14 (the scenario's own prices)"},
    {"--usd-per-unit-date", "/pricing/usd_per_unit_date", kText, "DATE", "Day the rate was read, YYYY-MM-DD", "Day the rate was read, YYYY-MM-DD"},
    {"--spot-usd-per-gpu-hour", "/pricing/spot/usd_per_gpu_hour", kNumber, "USD", "Spot price per GPU-hour", "Spot price per GPU-hour of the scenario's own instance"},
    {"--spot-preemptions-per-node-hour", "/pricing/spot/preemptions_per_node_hour", kNumber, "FRACTION",
     "Probability a spot node is preempted in an hour (0..1)", "Probability a spot node is preempted in an hour (0..1); every offering under spot"},
    {"--reserved-usd-per-gpu-hour", "/pricing/reserved/usd_per_gpu_hour", kNumber, "USD",
     "Reserved (committed) price per GPU-hour", "Reserved (committed) price per GPU-hour of the scenario's own instance"},
    {"--reserved-term-months", "/pricing/reserved/term_months", kNumber, "MONTHS",
     "Commitment term, paid whether used or not", "Commitment term, paid whether used or not; every offering under reserved"},
    {"--reserved-idle-usd-per-gpu-hour", "/pricing/reserved/idle_usd_per_gpu_hour", kNumber, "USD",
     "Rate for committed but unused GPU-hours (default: the reserved rate)", "Rate for committed but unused GPU-hours of the scenario's own instance"},
    {"--reserved-committed-gpus", "/pricing/reserved/committed_gpus", kNumber, "INT",
     "GPUs committed (default: the cluster's)", "GPUs committed on the scenario's own instance (default: each plan's)"},
    {"--reserved-utilisation", "/pricing/reserved/utilisation", kNumber, "FRACTION",
     "Share of the committed term doing useful work; a run pays its share (default 1)",
     "Share of the committed term doing useful work; a run pays its share (default 1); every offering under reserved"},
    {"--on-prem-usd-per-node", "/pricing/on_prem/usd_per_node", kNumber, "USD", "Purchase price of one node", "Purchase price of one node of the scenario's own instance"},
    {"--on-prem-amortisation-years", "/pricing/on_prem/amortisation_years", kNumber, "YEARS",
     "Years over which the purchase is written off", "Years over which a purchase is written off; every offering under on_prem"},
    {"--on-prem-node-power-w", "/pricing/on_prem/node_power_w", kNumber, "W",
     "Power of one node under load (default: the catalog's system power, else GPU TDP x GPUs)", "Power of one node of the scenario's own instance under load"},
    {"--on-prem-pue", "/pricing/on_prem/pue", kNumber, "RATIO", "Power usage effectiveness (default 1.58)", "Power usage effectiveness (default 1.58); every offering under on_prem"},
    {"--on-prem-usd-per-kwh", "/pricing/on_prem/usd_per_kwh", kNumber, "USD", "Electricity price per kWh", "Electricity price per kWh; every offering under on_prem"},
    {"--on-prem-ops-usd-per-year", "/pricing/on_prem/ops_usd_per_year", kNumber, "USD",
     "Operations staff and support per year", "Operations staff and support per year; every offering under on_prem"},
    {"--on-prem-utilisation", "/pricing/on_prem/utilisation", kNumber, "FRACTION",
     "Share of the owned cluster's time doing useful work (default 1)", "Share of the owned cluster's time doing useful work (default 1); every offering under on_prem"},
    {"--failure-rate-per-gpu-hour", "/reliability/failure_rate_per_gpu_hour", kNumber, "RATE",
     "Job interruptions per GPU-hour (default: Llama 3 405B's 2.2e-5)", kSameHelp},
    {"--restart-s", "/reliability/restart_s", kNumber, "S",
     "Relaunch + initialisation seconds before the checkpoint load (default 600, an assumption)", kSameHelp},
    {"--node-replacement-s", "/reliability/node_replacement_s", kNumber, "S",
     "Seconds to get a replacement node when no hot spare is ready", kSameHelp},
    {"--hot-spares", "/reliability/hot_spares", kNumber, "NODES", "Spare nodes kept ready", kSameHelp},
    {"--checkpoint-interval-s", "/reliability/checkpoint_interval_s", kNumber, "S",
     "Seconds of training between checkpoints (default: Daly optimum, at least the minimum)", kSameHelp},
    {"--min-checkpoint-interval-s", "/reliability/min_checkpoint_interval_s", kNumber, "S",
     "Shortest interval the Daly optimum may give (default 900; 0 = none)", kSameHelp},
    {"--checkpoint", "/reliability/checkpoint", kText, "MODE", "sync (default) or async", kSameHelp},
    {"--checkpoints-kept", "/reliability/checkpoints_kept", kNumber, "INT",
     "Checkpoints retained on storage (default 2)", kSameHelp},
    {"--storage-tier", "/storage/tier", kText, "ID", "Storage tier id (capplan catalog storage)", kSameHelp},
    {"--storage-capacity-tib", "/storage/capacity_tib", kNumber, "TIB",
     "Provisioned capacity (tiers whose throughput scales with it)", kSameHelp},
    {"--storage-write-gb-per-s", "/storage/write_gb_per_s", kNumber, "GBPS", "Aggregate storage write bandwidth, GB/s",
     kSameHelp},
    {"--storage-read-gb-per-s", "/storage/read_gb_per_s", kNumber, "GBPS", "Aggregate storage read bandwidth, GB/s",
     kSameHelp},
    {"--storage-write-gb-per-s-per-node", "/storage/write_gb_per_s_per_node", kNumber, "GBPS",
     "Storage write bandwidth of one node, GB/s", kSameHelp},
    {"--storage-read-gb-per-s-per-node", "/storage/read_gb_per_s_per_node", kNumber, "GBPS",
     "Storage read bandwidth of one node, GB/s", kSameHelp},
    {"--storage-local", "/storage/local", kNumber, "BOOL", "Node-local storage (NVMe)", kSameHelp},
    {"--storage-upload-tier", "/storage/upload_tier", kText, "ID", "Tier node-local checkpoints are uploaded to",
     kSameHelp},
    {"--storage-usd-per-gb-month", "/storage/usd_per_gb_month", kNumber, "USD", "Storage price per GB-month", kSameHelp},
    {"--bytes-per-token", "/data/bytes_per_token", kNumber, "BYTES",
     "Bytes read per training token (default 2 or 4: pre-tokenised)", kSameHelp},
    {"--preprocessing-tokens-per-s-per-node", "/data/preprocessing_tokens_per_s_per_node", kNumber, "RATE",
     "Tokens one node's CPUs can load and preprocess per second", kSameHelp},
    {"--dataset-bytes", "/data/dataset_bytes", kNumber, "BYTES", "Stored dataset size", kSameHelp},
};

// A flag that drops the other spelling of its field from the file.
struct Replaces {
  const char* flag;
  const char* section;
  const char* key;
};
constexpr Replaces kReplaces[] = {
    {"--global-batch", "training", "global_batch_tokens"},
    {"--global-batch-tokens", "training", "global_batch"},
    {"--usd-per-gpu-hour", "pricing", "usd_per_node_hour"},
    {"--usd-per-node-hour", "pricing", "usd_per_gpu_hour"},
    // A fine-tuning job's tokens are its dataset's (workload.dataset.tokens x epochs).
    {"--dataset-tokens", "training", "tokens"},
};

ScenarioFlag from_row(const Row& r) { return {r.flag, r.pointer, r.value, r.type, r.help, r.search_help}; }

// Help groups follow the scenario file's sections.
std::string group(FlagCommand which, std::string_view pointer) {
  const std::string_view section = pointer.substr(1, pointer.find('/', 1) - 1);
  if (which == FlagCommand::search) {
    if (section == "strategy") return "Strategy fields to fix (default: searched)";
    if (section == "pricing") return "Pricing (rates: the scenario's own instance; --purchase: every offering)";
    if (section == "reliability" || section == "storage" || section == "data") {
      return "Reliability, storage and data loading (every offering)";
    }
    return "Model and training (override the scenario file)";
  }
  if (section == "workload") return "Workload (pretrain, or finetune: method, adapters, dataset)";
  if (section == "model") return "Model (override the scenario file)";
  if (section == "training") return "Training";
  if (section == "cluster") return "Cluster";
  if (section == "strategy") return "Strategy (a number or auto)";
  if (section == "reliability") return "Reliability (interruptions, restarts, checkpoints)";
  if (section == "storage") return "Storage (checkpoints and data)";
  if (section == "data") return "Data loading";
  return "Pricing";
}

// A flag's text as a JSON value; validation stays with data::parse_scenario.
json flag_value(const ScenarioFlag& flag, const std::string& text) {
  if (flag.value == FlagValue::list) {
    json items = json::array();
    std::size_t start = 0;
    while (start <= text.size()) {
      const std::size_t comma = std::min(text.find(',', start), text.size());
      items.push_back(text.substr(start, comma - start));
      start = comma + 1;
    }
    return items;
  }
  if (flag.value == FlagValue::number_or_text) {
    json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_number() || parsed.is_boolean()) return parsed;
  }
  return text;
}

// The flags a field table declares, its rows' pointers below `section` ("/model").
template <class T>
void add_table(std::deque<ScenarioFlag>& out, std::string_view section, std::span<const data::Field<T>> table) {
  for (const auto& f : table) {
    const data::FieldFlag& flag = f.spec.flag;
    if (flag.name == nullptr) continue;
    const bool text = f.spec.kind == data::FieldKind::text || f.spec.kind == data::FieldKind::choice;
    out.push_back({flag.name, std::string(section) + "/" + f.spec.pointer, text ? kText : kNumber, flag.type,
                   flag.help, flag.search_help});
  }
}

}  // namespace

const std::deque<ScenarioFlag>& scenario_flags() {
  static const std::deque<ScenarioFlag> rows = [] {
    std::deque<ScenarioFlag> out;
    out.push_back(from_row(kPresetRow));
    add_table(out, "/model", data::model_fields());
    for (const Row& r : kFieldRows) out.push_back(from_row(r));
    add_table(out, "/training", data::training_fields());
    add_table(out, "/cluster", data::cluster_fields());
    for (const Row& r : kStrategyRows) out.push_back(from_row(r));
    for (const auto& o : sim::kStrategyOptions) {
      out.push_back({o.flag, std::string("/strategy/") + o.key, kNumber, "BOOL|auto", o.help, kSameHelp});
    }
    for (const Row& r : kLaterRows) out.push_back(from_row(r));
    return out;
  }();
  return rows;
}

void ScenarioFlags::add(CLI::App& cmd, FlagCommand which, std::string* strategy) {
  const bool search = which == FlagCommand::search;
  for (const ScenarioFlag& f : scenario_flags()) {
    if (search && f.search_help == nullptr) continue;
    std::string type = f.type;
    if (search && type.ends_with("|auto")) type.resize(type.size() - 5);
    const std::string help = search && *f.search_help != '\0' ? std::string(f.search_help) : f.help;
    Bound& b = bound_.emplace_back(Bound{&f, {}, nullptr});
    b.option = cmd.add_option(f.flag, b.value, help)->type_name(type)->group(group(which, f.pointer));
    if (strategy != nullptr && f.flag == "--tp") {
      cmd.add_option("--strategy", *strategy, "auto: let capplan choose the whole strategy")
          ->type_name("auto")
          ->check(CLI::IsMember({"auto"}))
          ->group(group(which, f.pointer));
    }
  }
}

bool ScenarioFlags::given(std::string_view flag) const {
  for (const Bound& b : bound_) {
    if (b.row->flag == flag) return b.option->count() > 0;
  }
  return false;
}

bool ScenarioFlags::any_given() const {
  for (const Bound& b : bound_) {
    if (b.option->count() > 0) return true;
  }
  return false;
}

void ScenarioFlags::apply(json& doc) const {
  if (!doc.is_object()) return;                         // parse_scenario reports the wrong top-level type
  if (given("--model")) doc["model"] = json::object();  // a preset replaces the file's model
  for (const Replaces& r : kReplaces) {
    auto it = doc.find(r.section);
    if (given(r.flag) && it != doc.end() && it->is_object()) it->erase(r.key);
  }
  for (const Bound& b : bound_) {
    // A field set on an "auto" strategy makes it an object with that field, the rest left auto.
    if (b.option->count() > 0) set_at(doc, b.row->pointer, flag_value(*b.row, b.value));
  }
}

void ScenarioFlags::annotate(Diagnostics& diags, std::string_view where) const {
  for (auto& d : diags) {
    for (const Bound& b : bound_) {
      if (b.option->count() == 0) continue;
      const std::string prefix = std::string(where) + "#" + b.row->pointer;
      if (d.where == prefix || d.where.starts_with(prefix + "/")) {
        d.message += " (set by " + b.row->flag + ")";
        break;
      }
    }
  }
}

}  // namespace capplan::cli
