// SPDX-License-Identifier: Apache-2.0
// The workload section: its kind, and fine-tuning (method, adapters, dataset).
#include "input/scenario/parser.hpp"

#include <algorithm>
#include <string_view>
#include <vector>

namespace capplan::data::scenario_detail {

namespace {

// The keys the fine-tuning table names directly below `parent` ("" the workload section).
std::vector<std::string> finetune_keys(std::string_view parent) {
  std::vector<std::string> keys;
  fields_detail::add_keys(finetune_fields(), parent, keys);
  return keys;
}

}  // namespace

// --- workload ---------------------------------------------------------------------------
// workload: { kind, ... } (CONTRACT.md). pretrain is the default; finetune adds the method,
// adapters and dataset (parse_finetune, once the training section's recipe is known); serving is
// named but not available in this version.
void ScenarioParser::parse_workload(const json& w) {
  if (!w.is_object()) {
    r_.error("/workload", std::string("expected an object such as {\"kind\": \"pretrain\"}; got ") + w.type_name());
    return;
  }
  const json* kind = find(w, "kind");
  std::string k = "pretrain";
  if (kind != nullptr) {
    if (!kind->is_string()) {
      r_.error("/workload/kind", std::string("expected a string (pretrain, finetune or serve); got ") + kind->type_name());
      return;
    }
    k = kind->get<std::string>();
  }
  if (auto parsed = sim::workload_kind_from_string(k)) {
    out_.scenario.workload.kind = *parsed;
  } else {
    r_.error("/workload/kind", "unknown workload kind '" + k + "' (known: pretrain, finetune, serve)");
  }
  serve_ = out_.scenario.workload.kind == sim::WorkloadKind::serve;
  if (serve_) {
    check_serve_section(w, where_, diags_);  // its fields: data/serve_io.hpp
    return;
  }
  if (out_.scenario.workload.kind == sim::WorkloadKind::finetune) {
    r_.unknown_keys(w, "/workload", finetune_keys(""));
  } else {
    r_.unknown_keys(w, "/workload", {"kind"});
  }
}

// workload (finetune): its values through the table (input/fields/finetune_fields.cpp); beside
// it the recipe's defaults (LoRA rank, targets, document masking), the LoRA targets' names, what
// must be given and the rules between fields.
void ScenarioParser::parse_finetune(const json& w, sim::TrainingJob& t) {
  const std::string p = "/workload";
  // The table's rows land in the scenario's training.finetune and workload.dataset.
  sim::FinetuneSpec& f = out_.scenario.training.finetune;
  sim::FinetuneData& d = out_.scenario.workload.dataset;
  f = {};
  if (recipe_ && recipe_->lora_rank) f.lora_rank = *recipe_->lora_rank;
  if (recipe_ && recipe_->lora_targets) f.lora_targets = *recipe_->lora_targets;
  if (recipe_ && recipe_->packed_document_mask) d.document_mask = *recipe_->packed_document_mask;
  required_in(w, p, "method", "full, lora or qlora");
  const json* lora = find(w, "lora");
  const json* freeze = find(w, "freeze");
  const json* ds = required_in(w, p, "dataset", "the fine-tuning data: tokens, epochs, sample lengths, packing");
  for (const auto& [obj, key] : {std::pair{lora, "lora"}, std::pair{freeze, "freeze"}, std::pair{ds, "dataset"}}) {
    if (obj != nullptr && r_.object(*obj, child(p, key))) r_.unknown_keys(*obj, child(p, key), finetune_keys(key));
  }
  if (ds != nullptr && ds->is_object()) {
    required_in(*ds, child(p, "dataset"), "tokens", "tokens of one epoch, e.g. \"2B\"");
  }
  fields_detail::read_table(w, p, finetune_fields(), out_.scenario, r_);
  if (lora != nullptr) {
    const std::string lp = child(p, "lora");
    if (!f.adapters()) {
      r_.error(lp, "LoRA settings need method lora or qlora (method is " + std::string(sim::to_string(f.method)) + ")");
    }
    if (const json* v = Reader::find(*lora, "targets")) {
      if (auto bits = detail::lora_targets_from_json(*v, r_, child(lp, "targets"))) f.lora_targets = *bits;
    }
  }
  if (const json* v = find(w, "base_weights"); v != nullptr && f.base_format) {
    const std::string s = v->get<std::string>();
    if (f.method != sim::TuneMethod::qlora && *f.base_format != sim::BaseFormat::same) {
      r_.error(child(p, "base_weights"), "a 4-bit base ('" + s + "') is method qlora");
    } else if (f.method == sim::TuneMethod::qlora && *f.base_format == sim::BaseFormat::same) {
      r_.error(child(p, "base_weights"), "method qlora quantises the base: nf4 or int4, not 'same'");
    }
  }
  if (freeze != nullptr && f.adapters()) {
    r_.error(child(p, "freeze"),
             "freezing parts of the model is for method full (lora and qlora freeze the whole base)");
  }
  if (ds != nullptr && ds->is_object()) check_dataset(d, child(p, "dataset"));
  t.finetune = f;
}

// The sample lengths and padding of a dataset whose values passed their rows.
void ScenarioParser::check_dataset(const sim::FinetuneData& d, const std::string& dp) {
  if (d.p95_sample_tokens > 0 && d.mean_sample_tokens <= 0) {
    r_.error(child(dp, "mean_sample_tokens"), "required with p95_sample_tokens (the lengths' mean) is missing");
  } else if (d.p95_sample_tokens > 0 && d.p95_sample_tokens < d.mean_sample_tokens) {
    r_.error(child(dp, "p95_sample_tokens"), "must be at least mean_sample_tokens (" + fmt(d.mean_sample_tokens) +
                                                 "); got " + fmt(d.p95_sample_tokens));
  }
  if (!d.packing && d.mean_sample_tokens <= 0 && !d.pad_to_max) {
    r_.error(child(dp, "mean_sample_tokens"),
             "required when packing is false (unpacked samples are padded to their micro-batch's longest; or "
             "give pad_to \"max\") is missing");
  }
}

}  // namespace capplan::data::scenario_detail
