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

// After the strategy options, before the goodput sections' fields (reliability, storage, data).
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
    const FlagValue value = f.spec.kind == data::FieldKind::list ? kList : text ? kText : kNumber;
    out.push_back({flag.name, std::string(section) + "/" + f.spec.pointer, value, flag.type, flag.help,
                   flag.search_help});
  }
}

}  // namespace

const std::deque<ScenarioFlag>& scenario_flags() {
  static const std::deque<ScenarioFlag> rows = [] {
    std::deque<ScenarioFlag> out;
    out.push_back(from_row(kPresetRow));
    add_table(out, "/model", data::model_fields());
    add_table(out, "/model/moe", data::moe_fields());
    add_table(out, "/workload", data::finetune_fields());
    add_table(out, "/training", data::training_fields());
    add_table(out, "/cluster", data::cluster_fields());
    for (const Row& r : kStrategyRows) out.push_back(from_row(r));
    for (const auto& o : sim::kStrategyOptions) {
      out.push_back({o.flag, std::string("/strategy/") + o.key, kNumber, "BOOL|auto", o.help, kSameHelp});
    }
    for (const Row& r : kLaterRows) out.push_back(from_row(r));
    add_table(out, "/reliability", data::reliability_fields());
    add_table(out, "/storage", data::storage_fields());
    add_table(out, "/data", data::data_fields());
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
