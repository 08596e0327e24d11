// SPDX-License-Identifier: Apache-2.0
// The workload section: its kind, and fine-tuning (method, adapters, dataset).
#include "input/scenario/parser.hpp"

#include <algorithm>

namespace capplan::data::scenario_detail {

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
    r_.unknown_keys(w, "/workload", {"kind", "method", "lora", "base_weights", "double_quant", "freeze", "dataset"});
  } else {
    r_.unknown_keys(w, "/workload", {"kind"});
  }
}

// workload (finetune): method, lora {rank, targets, alpha, dropout, train_embeddings},
// base_weights, double_quant, freeze {embeddings, layers}, dataset {tokens, epochs,
// mean_sample_tokens, p95_sample_tokens, packing, pad_to, document_mask}. The recipe gives the
// LoRA rank, targets and document masking the scenario leaves out.
void ScenarioParser::parse_finetune(const json& w, sim::TrainingJob& t) {
  const std::string p = "/workload";
  sim::FinetuneSpec f;
  if (const json* v = required_in(w, p, "method", "full, lora or qlora")) {
    if (auto s = r_.string(*v, child(p, "method"))) {
      if (auto mth = sim::tune_method_from_string(*s)) {
        f.method = *mth;
      } else {
        r_.error(child(p, "method"), "unknown method '" + *s + "' (" + suggest(*s, {"full", "lora", "qlora"}) + ")");
      }
    }
  }
  if (recipe_ && recipe_->lora_rank) f.lora_rank = *recipe_->lora_rank;
  if (recipe_ && recipe_->lora_targets) f.lora_targets = *recipe_->lora_targets;
  if (const json* lora = find(w, "lora")) {
    const std::string lp = child(p, "lora");
    if (!f.adapters()) r_.error(lp, "LoRA settings need method lora or qlora (method is " + std::string(sim::to_string(f.method)) + ")");
    if (r_.object(*lora, lp)) {
      r_.unknown_keys(*lora, lp, {"rank", "targets", "alpha", "dropout", "train_embeddings"});
      if (const json* v = find(*lora, "rank")) {
        if (auto x = r_.integer(*v, child(lp, "rank"), 1, 65536)) f.lora_rank = static_cast<int>(*x);
      }
      if (const json* v = find(*lora, "targets")) {
        if (auto bits = detail::lora_targets_from_json(*v, r_, child(lp, "targets"))) f.lora_targets = *bits;
      }
      // alpha scales the adapter's output and dropout masks its input: accepted, no cost of their own.
      if (const json* v = find(*lora, "alpha")) r_.number(*v, child(lp, "alpha"), 0.0, 1e6, false);
      if (const json* v = find(*lora, "dropout")) r_.number(*v, child(lp, "dropout"), 0.0, 1.0, false);
      if (const json* v = find(*lora, "train_embeddings")) {
        if (auto b = r_.boolean(*v, child(lp, "train_embeddings"))) f.train_embeddings = *b;
      }
    }
  }
  if (const json* v = find(w, "base_weights")) {
    if (auto s = r_.string(*v, child(p, "base_weights"))) {
      if (auto fmt_ = sim::base_format_from_string(*s)) {
        f.base_format = *fmt_;
        if (f.method != sim::TuneMethod::qlora && *fmt_ != sim::BaseFormat::same) {
          r_.error(child(p, "base_weights"), "a 4-bit base ('" + *s + "') is method qlora");
        } else if (f.method == sim::TuneMethod::qlora && *fmt_ == sim::BaseFormat::same) {
          r_.error(child(p, "base_weights"), "method qlora quantises the base: nf4 or int4, not 'same'");
        }
      } else {
        r_.error(child(p, "base_weights"), "unknown base format '" + *s + "' (" + suggest(*s, {"same", "nf4", "int4"}) + ")");
      }
    }
  }
  if (const json* v = find(w, "double_quant")) {
    if (auto b = r_.boolean(*v, child(p, "double_quant"))) f.double_quant = *b;
  }
  if (const json* fr = find(w, "freeze")) {
    const std::string fp = child(p, "freeze");
    if (f.adapters()) r_.error(fp, "freezing parts of the model is for method full (lora and qlora freeze the whole base)");
    if (r_.object(*fr, fp)) {
      r_.unknown_keys(*fr, fp, {"embeddings", "layers"});
      if (const json* v = find(*fr, "embeddings")) {
        if (auto b = r_.boolean(*v, child(fp, "embeddings"))) f.freeze_embeddings = *b;
      }
      if (const json* v = find(*fr, "layers")) {
        if (auto x = r_.integer(*v, child(fp, "layers"), 0, 1e6)) f.frozen_layers = static_cast<int>(*x);
      }
    }
  }
  sim::FinetuneData& d = out_.scenario.workload.dataset;
  if (recipe_ && recipe_->packed_document_mask) d.document_mask = *recipe_->packed_document_mask;
  if (const json* ds = required_in(w, p, "dataset", "the fine-tuning data: tokens, epochs, sample lengths, packing")) {
    const std::string dp = child(p, "dataset");
    if (r_.object(*ds, dp)) {
      r_.unknown_keys(*ds, dp, {"tokens", "epochs", "mean_sample_tokens", "p95_sample_tokens", "packing", "pad_to",
                                "document_mask"});
      if (const json* v = required_in(*ds, dp, "tokens", "tokens of one epoch, e.g. \"2B\"")) {
        if (auto x = si_number(*v, child(dp, "tokens"), kMaxTokens)) d.tokens = *x;
      }
      if (const json* v = find(*ds, "epochs")) {
        if (auto x = r_.number(*v, child(dp, "epochs"), 0.0, 1e4, true)) d.epochs = *x;
      }
      for (auto [key, out] : {std::pair{"mean_sample_tokens", &d.mean_sample_tokens},
                              std::pair{"p95_sample_tokens", &d.p95_sample_tokens}}) {
        if (const json* v = find(*ds, key)) {
          if (auto x = r_.number(*v, child(dp, key), 1.0, 1e8, false)) *out = *x;
        }
      }
      if (const json* v = find(*ds, "packing")) {
        if (auto b = r_.boolean(*v, child(dp, "packing"))) d.packing = *b;
      }
      if (const json* v = find(*ds, "pad_to")) {
        if (auto s = r_.string(*v, child(dp, "pad_to"))) {
          if (*s == "longest" || *s == "max") {
            d.pad_to_max = *s == "max";
          } else {
            r_.error(child(dp, "pad_to"), "unknown padding '" + *s + "' (" + suggest(*s, {"longest", "max"}) + ")");
          }
        }
      }
      if (const json* v = find(*ds, "document_mask")) {
        if (auto b = r_.boolean(*v, child(dp, "document_mask"))) d.document_mask = *b;
      }
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
  }
  t.finetune = f;
}

}  // namespace capplan::data::scenario_detail
