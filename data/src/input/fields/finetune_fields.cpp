// SPDX-License-Identifier: Apache-2.0
// The fine-tuning workload's fields (workload.kind finetune): the method, the adapters, the frozen
// parts and the dataset, below /workload.
#include <string>

#include "capplan/data/fields.hpp"
#include "capplan/data/scenario_io.hpp"

namespace capplan::data {
namespace {

using nlohmann::json;

constexpr const char* kKinds[] = {"pretrain", "finetune", "serve"};
constexpr const char* kMethods[] = {"full", "lora", "qlora"};
constexpr const char* kTargets[] = {"q", "k", "v", "o", "gate", "up", "down"};
constexpr const char* kBases[] = {"same", "nf4", "int4"};
constexpr const char* kPadding[] = {"longest", "max"};

constexpr const char* kGroup = "Workload (pretrain, or finetune: method, adapters, dataset)";

// Tokens of one epoch: the scenario's absurd-size limit for token counts.
constexpr double kMaxTokens = 1e16;
// A sample: beyond any model's context.
constexpr double kMaxSampleTokens = 1e8;

sim::FinetuneSpec& spec(sim::Scenario& s) { return s.training.finetune; }
sim::FinetuneData& data(sim::Scenario& s) { return s.workload.dataset; }

const Field<sim::Scenario> kFinetune[] = {
    {{.pointer = "kind",
      .kind = FieldKind::choice,
      .help = "what the scenario plans: pretrain (default), finetune or serve",
      .flag = {"--workload", "NAME", "pretrain (default) or finetune", kGroup},
      .choices = kKinds,
      .noun = "workload kind"},
     nullptr},  // read by hand: it picks which keys the workload accepts
    {{.pointer = "method",
      .kind = FieldKind::choice,
      .help = "fine-tuning method: full, lora or qlora",
      .flag = {"--method", "NAME", "Fine-tuning method: full, lora or qlora", kGroup},
      .choices = kMethods,
      .noun = "method"},
     [](sim::Scenario& s, const json& v) { spec(s).method = *sim::tune_method_from_string(v.get<std::string>()); }},
    {{.pointer = "lora/rank",
      .kind = FieldKind::integer,
      .min = 1,
      .max = 65536,
      .help = "LoRA rank (default: the framework recipe's)",
      .bound = "beyond any adapter's rank (2^16)",
      .flag = {"--lora-rank", "INT", "LoRA rank (default: the framework recipe's)", kGroup}},
     [](sim::Scenario& s, const json& v) { spec(s).lora_rank = static_cast<int>(v.get<double>()); }},
    {{.pointer = "lora/targets",
      .kind = FieldKind::list,
      .help = "linears adapted (default: the recipe's)",
      .flag = {"--lora-targets", "LIST",
               "Linears LoRA adapts, comma-separated: q,k,v,o,gate,up,down (default: the recipe's)", kGroup},
      .choices = kTargets,
      .noun = "LoRA target"},
     nullptr},  // read by hand: the names become the adapter's target bits
    // alpha scales the adapter's output and dropout masks its input: accepted, no cost of their own.
    {{.pointer = "lora/alpha",
      .kind = FieldKind::number,
      .min = 0,
      .max = 1e6,
      .help = "LoRA scaling; accepted, no cost of its own",
      .bound = "far beyond any adapter's scaling"},
     [](sim::Scenario&, const json&) {}},
    {{.pointer = "lora/dropout",
      .kind = FieldKind::number,
      .min = 0,
      .max = 1,
      .help = "dropout on the adapter's input; accepted, no cost of its own"},
     [](sim::Scenario&, const json&) {}},
    {{.pointer = "lora/train_embeddings",
      .kind = FieldKind::boolean,
      .help = "embedding and output layer trained too (PEFT modules_to_save)",
      .flag = {"--lora-train-embeddings", "BOOL",
               "Train the embedding and output layer beside the adapters (PEFT modules_to_save)", kGroup}},
     [](sim::Scenario& s, const json& v) { spec(s).train_embeddings = v.get<bool>(); }},
    {{.pointer = "base_weights",
      .kind = FieldKind::choice,
      .help = "qlora: the frozen base's 4-bit format (default nf4)",
      .flag = {"--base-weights", "NAME", "QLoRA's frozen base: nf4 (default) or int4", kGroup},
      .choices = kBases,
      .noun = "base format"},
     [](sim::Scenario& s, const json& v) { spec(s).base_format = sim::base_format_from_string(v.get<std::string>()); }},
    {{.pointer = "double_quant",
      .kind = FieldKind::boolean,
      .help = "qlora: double quantisation of the block scales (default true)",
      .flag = {"--double-quant", "BOOL", "QLoRA double quantisation (default true)", kGroup},
      .applies = [](const FieldUse& u) { return u.scenario.training.finetune.method == sim::TuneMethod::qlora; },
      .unused = "double quantisation of the 4-bit base applies only with method qlora"},
     [](sim::Scenario& s, const json& v) { spec(s).double_quant = v.get<bool>(); }},
    {{.pointer = "freeze/embeddings",
      .kind = FieldKind::boolean,
      .help = "full: the embedding and output layer kept frozen",
      .flag = {"--freeze-embeddings", "BOOL", "Full fine-tuning: keep the embedding and output layer frozen", kGroup}},
     [](sim::Scenario& s, const json& v) { spec(s).freeze_embeddings = v.get<bool>(); }},
    {{.pointer = "freeze/layers",
      .kind = FieldKind::integer,
      .unit = "layers",
      .min = 0,
      .max = 1e6,
      .help = "full: the first N layers frozen",
      .bound = "beyond any model's depth",
      .flag = {"--frozen-layers", "INT", "Full fine-tuning: the first INT layers frozen", kGroup}},
     [](sim::Scenario& s, const json& v) { spec(s).frozen_layers = static_cast<int>(v.get<double>()); }},
    {{.pointer = "dataset/tokens",
      .kind = FieldKind::count,
      .unit = "tokens",
      .min = 1,
      .max = kMaxTokens,
      .help = "tokens of one epoch, e.g. \"2B\"",
      .bound = "far beyond any run, low enough that products stay exact in doubles",
      .flag = {"--dataset-tokens", "SI", "Fine-tuning data: tokens of one epoch, e.g. 2B", kGroup}},
     [](sim::Scenario& s, const json& v) {
       data(s).tokens = v.is_number() ? v.get<double>() : *parse_count(v.get<std::string>());
     }},
    {{.pointer = "dataset/epochs",
      .kind = FieldKind::number,
      .min = 0,
      .max = 1e4,
      .min_open = true,
      .help = "passes over the dataset (default 1)",
      .bound = "beyond any fine-tuning schedule",
      .flag = {"--epochs", "N", "Fine-tuning epochs (default 1)", kGroup}},
     [](sim::Scenario& s, const json& v) { data(s).epochs = v.get<double>(); }},
    {{.pointer = "dataset/mean_sample_tokens",
      .kind = FieldKind::number,
      .unit = "tokens",
      .min = 1,
      .max = kMaxSampleTokens,
      .help = "mean sample length (needed when unpacked)",
      .bound = "beyond any model's context",
      .flag = {"--mean-sample-tokens", "TOKENS", "Mean sample length (needed when unpacked)", kGroup}},
     [](sim::Scenario& s, const json& v) { data(s).mean_sample_tokens = v.get<double>(); }},
    {{.pointer = "dataset/p95_sample_tokens",
      .kind = FieldKind::number,
      .unit = "tokens",
      .min = 1,
      .max = kMaxSampleTokens,
      .help = "95th-percentile sample length (the spread of the lengths)",
      .bound = "beyond any model's context",
      .flag = {"--p95-sample-tokens", "TOKENS", "95th-percentile sample length (the spread of the lengths)", kGroup}},
     [](sim::Scenario& s, const json& v) { data(s).p95_sample_tokens = v.get<double>(); }},
    {{.pointer = "dataset/packing",
      .kind = FieldKind::boolean,
      .help = "samples packed into full sequences (default true)",
      .flag = {"--packing", "BOOL", "Samples packed into full sequences (default true)", kGroup}},
     [](sim::Scenario& s, const json& v) { data(s).packing = v.get<bool>(); }},
    {{.pointer = "dataset/pad_to",
      .kind = FieldKind::choice,
      .help = "unpacked samples padded to the micro-batch's longest (longest, default) or to seq_len (max)",
      .flag = {"--pad-to", "NAME",
               "Unpacked samples padded to the micro-batch's longest (longest, default) or to seq_len (max)", kGroup},
      .choices = kPadding,
      .noun = "padding",
      .applies = [](const FieldUse& u) { return !u.scenario.workload.dataset.packing; },
      .unused = "padding applies only to unpacked samples (dataset.packing false)"},
     [](sim::Scenario& s, const json& v) { data(s).pad_to_max = v.get<std::string>() == "max"; }},
    {{.pointer = "dataset/document_mask",
      .kind = FieldKind::boolean,
      .help = "packed samples attend only within themselves (default: the recipe's)",
      .flag = {"--document-mask", "BOOL", "Packed samples attend only within themselves (default: the recipe's)",
               kGroup}},
     [](sim::Scenario& s, const json& v) { data(s).document_mask = v.get<bool>(); }},
};

}  // namespace

std::span<const Field<sim::Scenario>> finetune_fields() { return kFinetune; }

}  // namespace capplan::data
