// SPDX-License-Identifier: Apache-2.0
// Scenario files (CONTRACT.md) -> sim::Scenario, with every problem named by its JSON pointer.
// Layout divisibility (heads % tp, ...) is sim::check_layout's job; here: keys, types, ranges,
// catalog ids, and the GPU-count identity tp*pp*dp*cp == GPUs with ep inside tp*dp*cp (Megatron-Core;
// see check_gpu_count for CONTRACT.md's tp*pp*dp*cp*ep spelling).
#include "capplan/data/scenario_io.hpp"
#include "capplan/data/serve_io.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "capplan/sim/estimate/global_batch.hpp"
#include "capplan/data/currency.hpp"
#include "capplan/data/tco_io.hpp"
#include "catalog/hybrid_model.hpp"
#include "catalog/topology_io.hpp"
#include "input/fields/read_table.hpp"
#include "input/scenario/parser.hpp"

namespace capplan::data::scenario_detail {

Result<ParsedScenario> ScenarioParser::run(const json& j) {
  if (!r_.object(j, "")) return std::unexpected(std::move(diags_));
  r_.unknown_keys(j, "", {"name", "description", "workload", "model", "training", "cluster", "strategy", "pricing",
                         "reliability", "storage", "data", "tco"});
  const json* workload = find(j, "workload");
  if (workload != nullptr) parse_workload(*workload);
  for (const char* key : {"name", "description"}) {
    if (const json* v = find(j, key)) r_.string(*v, child("", key));
  }
  // A fleet without a model: its cluster, pricing and tco terms; what would run on it needs the model.
  const bool fleet_only = fleet_ && find(j, "model") == nullptr;
  if (fleet_only) {
    for (const char* key : {"workload", "training", "strategy"}) {
      if (find(j, key) != nullptr) r_.error(child("", key), "describes a run on the fleet: give the model too");
    }
  }
  const json* model = fleet_only ? nullptr : required(j, "model", "the model: a preset or explicit dimensions");
  // A serving scenario has no training section (its workload section says what is served).
  const json* training = serve_ || fleet_only ? find(j, "training")
                                              : required(j, "training", "tokens, global batch and precision");
  if (serve_ && training != nullptr) r_.error("/training", "not used by a serve workload (remove it)");
  const json* cluster = required(j, "cluster", "instance + nodes, or gpu + gpus");

  auto m = model ? parse_model(*model) : std::nullopt;
  auto t = training && !serve_ ? parse_training(*training, m) : std::nullopt;
  if (serve_) t = sim::TrainingJob{};
  if (t && workload != nullptr && out_.scenario.workload.kind == sim::WorkloadKind::finetune) {
    parse_finetune(*workload, *t);
  }
  auto c = cluster ? parse_cluster(*cluster) : std::nullopt;
  if (c && t && !serve_) check_precision(*c, t->precision);
  if (c && t && !serve_ && t->precision == sim::Precision::fp8 && t->fp8_recipe == sim::Fp8Recipe::mxfp8) {
    // MXFP8's block-scaled GEMMs run on Blackwell's tensor cores only (Transformer Engine
    // MXFP8BlockScaling needs compute capability 10.0 or newer).
    if (c->gpu.tensor_cores != sim::TensorCoreGeneration::blackwell) {
      const GpuEntry* g = cat_.find_gpu(c->gpu.id);
      const std::string arch = g != nullptr ? g->arch : std::string();
      r_.error("/training/fp8_recipe", "MXFP8 needs Blackwell tensor cores; GPU '" + c->gpu.id + "' is " +
                                           (arch.empty() ? std::string("of unknown architecture") : arch) +
                                           "; got \"mxfp8\"");
    }
  }
  if (c && m && m->is_moe() && m->moe.dispatcher == sim::MoeDispatcher::deepep &&
      !(c->gpu.nvlink_bandwidth.base() > 0)) {
    // DeepEP's and HybridEP's intranode kernels move tokens over NVLink (loads and stores to
    // the peers' buffers, or TMA); a node joined by PCIe only cannot run them.
    r_.error("/model/moe/dispatcher", "deepep needs NVLink between the GPUs of a node; GPU '" + c->gpu.id +
                                          "' has none; got \"deepep\"");
  }
  if (m && recipe_ && model->is_object()) {
    // Attention kernel and dropout: the framework's default unless the model says.
    if (recipe_->flash_attention && !find(*model, "flash_attention")) m->flash_attention = *recipe_->flash_attention;
    if (recipe_->dropout && !find(*model, "dropout")) m->dropout = *recipe_->dropout;
  }
  if (const json* pricing = find(j, "pricing")) {
    parse_pricing(*pricing, c);
  } else if (c) {
    catalog_price(*c);
  }
  if (const json* v = find(j, "reliability")) {
    read_section(*v, "/reliability", reliability_fields(), out_.scenario.reliability, r_);
  }
  if (const json* v = find(j, "storage")) {
    parse_storage(*v);
  } else {
    default_storage();
  }
  if (const json* v = find(j, "data")) {
    read_section(*v, "/data", data_fields(), out_.scenario.data, r_);
  }
  if (const json* v = find(j, "tco")) check_tco_section(*v, where_, diags_);  // used by capplan tco
  if (c) on_prem_power(*c);
  sim::StrategyRequest s;
  if (const json* strategy = find(j, "strategy"); strategy != nullptr && serve_) {
    r_.error("/strategy", "not used by a serve workload (workload.tp, pp and ep give the replica's layout)");
  } else if (strategy != nullptr) {
    s = parse_strategy(*strategy, c, m);
  } else {
    out_.strategy_all_auto = true;  // no strategy given: search for the best, like "auto"
    if (recipe_) apply_recipe(json::object(), s, m);  // within the recipe's defaults, as for absent keys
  }
  // The ZeRO stage of the recipe's full-parameter fine-tuning script, unless the strategy gives
  // one or asks for a search ("auto").
  const json* given = find(j, "strategy");
  if (recipe_ && recipe_->zero_full_finetune && (given == nullptr || find(*given, "zero") == nullptr) && t &&
      t->finetune.method == sim::TuneMethod::full && out_.scenario.workload.kind == sim::WorkloadKind::finetune) {
    s.zero = recipe_->zero_full_finetune;
  }
  if (t && !serve_) apply_support(s, *t);
  if (fleet_only && !has_errors(diags_) && c) {
    out_.scenario.cluster = std::move(*c);
    return std::move(out_);
  }
  if (has_errors(diags_) || !m || !t || !c) return std::unexpected(std::move(diags_));
  out_.scenario.model = std::move(*m);
  out_.scenario.training = *t;
  out_.scenario.cluster = std::move(*c);
  out_.scenario.strategy = s;
  warn_unused(j);
  if (serve_) return std::move(out_);  // the serve section is read by data::serve_request
  // Fine-tuning: the dataset against the model's sequence length (padding needs the
  // micro-batch: the strategy's, or 1 when the search picks it; sim/scenario.hpp).
  sim::resolve_workload(out_.scenario, s.micro_batch.value_or(1));
  // A batch asked in tokens: the sequences this cluster and strategy can use (sim/global_batch.hpp;
  // the estimate carries the finding that says which).
  sim::resolve_global_batch(out_.scenario);
  const sim::TrainingJob& job = out_.scenario.training;
  if (job.global_batch * static_cast<double>(out_.scenario.model.seq_len) > job.tokens) {
    warn(out_.scenario.workload.kind == sim::WorkloadKind::finetune ? "/workload/dataset/tokens" : "/training/tokens", "fewer tokens (" + fmt(job.tokens) + ") than one global batch (" +
                                 fmt(job.global_batch * static_cast<double>(out_.scenario.model.seq_len)) +
                                 "): less than one step");
  }
  return std::move(out_);
}

const json* ScenarioParser::required(const json& obj, const char* key, const char* help) {
  const json* v = find(obj, key);
  if (v == nullptr) r_.error(child("", key), std::string("required (") + help + ") is missing");
  return v;
}
void ScenarioParser::warn(const std::string& pointer, const std::string& message) {
  out_.warnings.push_back(r_.where(pointer) + ": " + message);
}

// Inputs given where nothing reads them: accepted, each with a warning naming the field and why.
// A table's rows say when they apply (FieldSpec::applies); a serving plan sizes its own replicas
// and has no checkpoints or data loading, so it reads none of the goodput sections nor the
// cluster's size (which capplan tco does read).
void ScenarioParser::warn_unused(const json& j) {
  const FieldUse use{.scenario = out_.scenario, .tco = find(j, "tco") != nullptr};
  auto unused = [&](const std::string& pointer, const std::string& message) {
    warn(pointer, message);
    out_.unused_inputs.push_back(out_.warnings.back());
  };
  auto warn_all = [&](const std::vector<std::pair<std::string, std::string>>& rows) {
    for (const auto& [pointer, message] : rows) unused(pointer, message);
  };
  if (const json* v = find(j, "training"); v != nullptr && !serve_) {
    warn_all(fields_detail::unused_fields(*v, "/training", training_fields(), use));
  }
  if (const json* v = find(j, "workload"); v != nullptr && out_.scenario.workload.kind == sim::WorkloadKind::finetune) {
    warn_all(fields_detail::unused_fields(*v, "/workload", finetune_fields(), use));
  }
  if (const json* v = find(j, "pricing")) warn_all(fields_detail::unused_fields(*v, "/pricing", pricing_fields(), use));
  if (!serve_) return;
  for (const char* key : {"reliability", "storage", "data"}) {
    if (find(j, key) != nullptr) {
      unused(child("", key), "not used by a serve workload: a serving plan has no checkpoints or data loading (remove it)");
    }
  }
  const json* cluster = find(j, "cluster");
  if (cluster == nullptr || !cluster->is_object() || use.tco) return;
  for (const char* key : {"nodes", "gpus"}) {
    if (find(*cluster, key) != nullptr) {
      unused(child("/cluster", key), "not used by a serve workload: capplan serve sizes the replicas the traffic needs "
                                   "(remove it; capplan tco reads it)");
    }
  }
}

// A count of tokens given as a number or as a string with an SI suffix ("2T") or a binary one
// ("4Mi" = 2^22).
std::optional<double> ScenarioParser::si_number(const json& v, const std::string& p, double max) {
  const FieldSpec count{.kind = FieldKind::count, .unit = "tokens", .min = 1, .max = max};
  if (!fields_detail::check_value(count, v, p, r_)) return std::nullopt;
  return fields_detail::count_of(v);
}

}  // namespace capplan::data::scenario_detail

namespace capplan::data {

using scenario_detail::ScenarioParser;

Result<ParsedScenario> parse_scenario(const nlohmann::json& j, const Catalogs& catalogs, std::string_view where) {
  return ScenarioParser(catalogs, where).run(j);
}

Result<ParsedScenario> parse_fleet_scenario(const nlohmann::json& j, const Catalogs& catalogs, std::string_view where) {
  return ScenarioParser(catalogs, where, /*fleet=*/true).run(j);
}

Result<nlohmann::json> parse_scenario_document(std::string_view text, std::string_view where) {
  return detail::parse_json_text(text, std::string(where));
}

Result<ParsedScenario> parse_scenario_text(std::string_view text, const Catalogs& catalogs, std::string_view where) {
  auto j = parse_scenario_document(text, where);
  if (!j) return std::unexpected(std::move(j.error()));
  return parse_scenario(*j, catalogs, where);
}

nlohmann::json example_scenario() {
  // 4M tokens would not divide by Llama 3's 8192-token sequences: the batch is given in sequences
  // (512 x 8192 = 4.2M tokens, Llama 3's first-stage batch).
  return nlohmann::json{
      {"name", "example: Llama 3 70B, 2T tokens on 64 x AWS p5.48xlarge (512 H100)"},
      {"model", {{"preset", "llama3-70b"}}},
      {"training", {{"tokens", "2T"}, {"global_batch", 512}, {"precision", "bf16"}}},
      {"cluster", {{"instance", "aws-p5.48xlarge"}, {"nodes", 64}}},
      {"strategy", "auto"},
  };
}

}  // namespace capplan::data
