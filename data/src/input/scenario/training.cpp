// SPDX-License-Identifier: Apache-2.0
// The training section: tokens, global batch, precision, framework and its recipe.
#include "input/scenario/parser.hpp"

#include <algorithm>

#include "capplan/data/fields.hpp"
#include "capplan/sim/estimate/global_batch.hpp"
#include "input/fields/read_table.hpp"

namespace capplan::data::scenario_detail {

constexpr sim::Precision kPrecisions[] = {sim::Precision::bf16, sim::Precision::fp16, sim::Precision::fp8,
                                          sim::Precision::tf32, sim::Precision::fp32};

// --- training ---------------------------------------------------------------------------
// Read through its field table (input/fields/training_fields.cpp); tokens, the global batch and
// the framework are read by hand in their rows' places, so errors come in the table's order.
std::optional<sim::TrainingJob> ScenarioParser::parse_training(const json& j, const std::optional<sim::ModelSpec>& model) {
  const std::string p = "/training";
  if (!r_.object(j, p)) return std::nullopt;
  const auto before = r_.count();
  const std::span<const Field<sim::TrainingJob>> rows = training_fields();
  std::vector<std::string> known;
  fields_detail::add_keys(rows, "", known);
  r_.unknown_keys(j, p, known);
  // A value read by hand, checked against its row.
  auto checked = [&](const json& v, const char* key) {
    return fields_detail::check_value(fields_detail::spec_of(rows, key), v, child(p, key), r_);
  };
  sim::TrainingJob t;
  if (out_.scenario.workload.kind == sim::WorkloadKind::finetune) {
    // A fine-tuning job's tokens come from its dataset (workload.dataset: tokens x epochs).
    if (find(j, "tokens") != nullptr) {
      r_.error(child(p, "tokens"), "a fine-tuning job's tokens are workload.dataset.tokens (one epoch) x epochs; "
                                   "remove training.tokens");
    }
  } else if (const json* v = required_in(j, p, "tokens", "total training tokens, e.g. \"2T\"")) {
    if (checked(*v, "tokens")) t.tokens = fields_detail::count_of(*v);
  }
  const json* gbt = find(j, "global_batch_tokens");
  const json* gb = find(j, "global_batch");
  if (gbt != nullptr && gb != nullptr) {
    r_.error(p, "give either global_batch_tokens or global_batch (sequences), not both");
  } else if (gbt == nullptr && gb == nullptr) {
    r_.error(child(p, "global_batch_tokens"),
             "required (the global batch: global_batch_tokens, or global_batch in sequences) is missing");
  } else if (gb != nullptr) {
    if (checked(*gb, "global_batch")) t.global_batch = static_cast<std::int64_t>(gb->get<double>());
  } else if (checked(*gbt, "global_batch_tokens") && model) {
    // "4M" tokens is how people write a batch of 1024 x 4096 (4Mi) as often as 976.6 x 4096: the
    // sequences are chosen once the cluster and strategy are known (sim/global_batch.hpp).
    t.global_batch_tokens = fields_detail::count_of(*gbt);
    t.global_batch = std::max<std::int64_t>(1, std::llround(t.global_batch_tokens / model->seq_len));
  }
  // The rows before the framework; then the framework's recipe; then the rows after it, whose
  // values override the recipe's (kernels its kernel style).
  const auto framework_row = static_cast<std::size_t>(
      std::find_if(rows.begin(), rows.end(), [](const auto& f) { return std::string_view(f.spec.pointer) == "framework"; }) -
      rows.begin());
  fields_detail::read_table(j, p, rows.first(framework_row), t, r_);
  // The framework recipe (data/frameworks.json) gives the defaults of the keys below that the
  // scenario leaves out; "megatron" (fused kernels, capplan's defaults) when none is named.
  recipe_ = cat_.framework_recipe("megatron");
  if (const json* v = find(j, "framework")) {
    if (checked(*v, "framework")) {
      const std::string s = v->get<std::string>();
      recipe_ = cat_.framework_recipe(s);
      if (!recipe_) {
        const std::string hint = suggest(s, cat_.framework_ids());
        const auto known_at = hint.find("known: ");
        r_.error(child(p, "framework"), "unknown framework '" + s + "'; " + hint.substr(0, known_at) + "(" +
                                            hint.substr(known_at) + ")");
      }
    }
  }
  if (recipe_) {
    t.framework = recipe_->kernels;
    t.framework_id = recipe_->id;
  }
  fields_detail::read_table(j, p, rows.subspan(framework_row + 1), t, r_);
  if (recipe_) {  // the recipe's defaults for what the scenario leaves out
    if (!find(j, "host_us_per_op") && recipe_->host_us_per_op) {
      t.host_s_per_op = *recipe_->host_us_per_op * 1e-6;
      t.host_time_known = true;
    }
    if (!find(j, "pp_p2p_batched") && recipe_->pp_p2p_batched) t.pp_p2p_batched = *recipe_->pp_p2p_batched;
    if (!find(j, "tp_async_dgrad") && recipe_->tp_async_dgrad) t.tp_async_dgrad = *recipe_->tp_async_dgrad;
    if (recipe_->zero3_prefetch_params) t.zero3_prefetch_params = *recipe_->zero3_prefetch_params;
    if (recipe_->zero3_regather_recompute) t.zero3_regather_recompute = *recipe_->zero3_regather_recompute;
    if (!find(j, "zero3_host_us_per_layer") && recipe_->zero3_host_us_per_layer) {
      t.zero3_host_s_per_layer = *recipe_->zero3_host_us_per_layer * 1e-6;
    }
    if (!find(j, "loss_kernel") && recipe_->loss_kernel) t.loss_kernel = recipe_->loss_kernel;
    if (!find(j, "attention_kernel") && recipe_->attention_kernel) t.attention_kernel = *recipe_->attention_kernel;
    if (!find(j, "grad_reduce_in_fp32")) {
      if (auto g = recipe_->grad_reduce_in_fp32(t.precision)) t.grad_reduce_in_fp32 = g;
    }
    if (!find(j, "fp8_params") && recipe_->fp8_param_gather) t.fp8_params = *recipe_->fp8_param_gather;
    if (!find(j, "master_weights") && recipe_->master_weights) t.master_weights = *recipe_->master_weights;
    if (!find(j, "fp8_recipe") && recipe_->fp8_recipe) t.fp8_recipe = *recipe_->fp8_recipe;
  }
  if (r_.count() != before || !model) return std::nullopt;
  return t;
}

const json* ScenarioParser::required_in(const json& obj, const std::string& p, const char* key, const char* help) {
  const json* v = find(obj, key);
  if (v == nullptr) r_.error(child(p, key), std::string("required (") + help + ") is missing");
  return v;
}

void ScenarioParser::check_precision(const sim::Cluster& c, sim::Precision prec) {
  if (c.gpu.peak.for_precision(prec).base() > 0) return;
  std::vector<std::string> supported;
  for (auto q : kPrecisions) {
    if (c.gpu.peak.for_precision(q).base() > 0) supported.emplace_back(sim::to_string(q));
  }
  r_.error("/training/precision", "GPU '" + c.gpu.id + "' has no dense " + sim::to_string(prec) +
                                      " peak in gpus.json (supported: " + detail::join(supported) + "); got \"" +
                                      sim::to_string(prec) + "\"");
}

}  // namespace capplan::data::scenario_detail
