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
// strategy options (sim::kStrategyOptions) and the pricing fields (data::pricing_fields).
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
    add_table(out, "/pricing", data::pricing_fields());
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
