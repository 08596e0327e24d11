// SPDX-License-Identifier: Apache-2.0
// The training section: tokens, global batch, precision, framework and its recipe.
#include "input/scenario/parser.hpp"

#include <algorithm>

#include "capplan/sim/estimate/global_batch.hpp"

namespace capplan::data::scenario_detail {

constexpr sim::Precision kPrecisions[] = {sim::Precision::bf16, sim::Precision::fp16, sim::Precision::fp8,
                                          sim::Precision::tf32, sim::Precision::fp32};

std::vector<std::string> precision_names() {
  std::vector<std::string> names;
  for (auto p : kPrecisions) names.emplace_back(sim::to_string(p));
  return names;
}

// --- training ---------------------------------------------------------------------------
std::optional<sim::TrainingJob> ScenarioParser::parse_training(const json& j, const std::optional<sim::ModelSpec>& model) {
  const std::string p = "/training";
  if (!r_.object(j, p)) return std::nullopt;
  const auto before = r_.count();
  r_.unknown_keys(j, p,
                  {"tokens", "global_batch_tokens", "global_batch", "precision", "framework", "kernels",
                   "overlap_compute_slowdown", "loss_kernel", "attention_kernel", "grad_reduce_in_fp32", "master_weights", "fp8_recipe", "fp8_params",
                   "host_us_per_op", "zero3_host_us_per_layer", "pp_p2p_batched", "tp_async_dgrad"});
  sim::TrainingJob t;
  if (out_.scenario.workload.kind == sim::WorkloadKind::finetune) {
    // A fine-tuning job's tokens come from its dataset (workload.dataset: tokens x epochs).
    if (find(j, "tokens") != nullptr) {
      r_.error(child(p, "tokens"), "a fine-tuning job's tokens are workload.dataset.tokens (one epoch) x epochs; "
                                   "remove training.tokens");
    }
  } else if (const json* v = required_in(j, p, "tokens", "total training tokens, e.g. \"2T\"")) {
    if (auto x = si_number(*v, child(p, "tokens"), kMaxTokens)) t.tokens = *x;
  }
  const json* gbt = find(j, "global_batch_tokens");
  const json* gb = find(j, "global_batch");
  if (gbt != nullptr && gb != nullptr) {
    r_.error(p, "give either global_batch_tokens or global_batch (sequences), not both");
  } else if (gbt == nullptr && gb == nullptr) {
    r_.error(child(p, "global_batch_tokens"),
             "required (the global batch: global_batch_tokens, or global_batch in sequences) is missing");
  } else if (gb != nullptr) {
    if (auto x = r_.integer(*gb, child(p, "global_batch"), 1, kMaxBatchSequences)) t.global_batch = *x;
  } else if (auto x = si_number(*gbt, child(p, "global_batch_tokens"), kMaxBatchTokens); x && model) {
    // "4M" tokens is how people write a batch of 1024 x 4096 (4Mi) as often as 976.6 x 4096: the
    // sequences are chosen once the cluster and strategy are known (sim/global_batch.hpp).
    t.global_batch_tokens = *x;
    t.global_batch = std::max<std::int64_t>(1, std::llround(*x / model->seq_len));
  }
  if (const json* v = find(j, "precision")) {
    if (auto s = r_.string(*v, child(p, "precision"))) {
      auto prec = sim::precision_from_string(*s);
      if (!prec || std::find(std::begin(kPrecisions), std::end(kPrecisions), *prec) == std::end(kPrecisions)) {
        // fp4 is a serving (weight) format, not a training precision.
        r_.error(child(p, "precision"), "unknown precision '" + *s + "' (" + suggest(*s, precision_names()) + ")");
      } else {
        t.precision = *prec;
      }
    }
  }
  // The framework recipe (data/frameworks.json) gives the defaults of the keys below that the
  // scenario leaves out; "megatron" (fused kernels, capplan's defaults) when none is named.
  recipe_ = cat_.framework_recipe("megatron");
  if (const json* v = find(j, "framework")) {
    if (auto s = r_.string(*v, child(p, "framework"))) {
      recipe_ = cat_.framework_recipe(*s);
      if (!recipe_) {
        const std::string hint = suggest(*s, cat_.framework_ids());
        const auto known = hint.find("known: ");
        r_.error(child(p, "framework"), "unknown framework '" + *s + "'; " + hint.substr(0, known) + "(" +
                                            hint.substr(known) + ")");
      }
    }
  }
  if (recipe_) {
    t.framework = recipe_->kernels;
    t.framework_id = recipe_->id;
  }
  if (const json* v = find(j, "kernels")) {
    // Overrides the recipe's kernel style: fused (Megatron/TE) or eager PyTorch element-wise kernels.
    if (auto s = r_.string(*v, child(p, "kernels"))) {
      if (*s == "fused") {
        t.framework = sim::Framework::megatron;
      } else if (*s == "eager") {
        t.framework = sim::Framework::pytorch;
      } else {
        r_.error(child(p, "kernels"), "unknown kernels '" + *s + "' (" + suggest(*s, {"fused", "eager"}) + ")");
      }
    }
  }
  if (const json* v = find(j, "loss_kernel")) {
    if (auto s = r_.string(*v, child(p, "loss_kernel"))) {
      if (auto k = sim::loss_kernel_from_string(*s)) {
        t.loss_kernel = *k;
      } else {
        r_.error(child(p, "loss_kernel"),
                 "unknown loss kernel '" + *s + "' (" + suggest(*s, {"unfused", "fused", "te", "eager"}) + ")");
      }
    }
  }
  if (const json* v = find(j, "attention_kernel")) {
    if (auto s = r_.string(*v, child(p, "attention_kernel"))) {
      if (auto k = sim::attention_kernel_from_string(*s)) {
        t.attention_kernel = *k;
      } else {
        r_.error(child(p, "attention_kernel"),
                 "unknown attention kernel '" + *s + "' (" + suggest(*s, {"flash2", "flash1"}) + ")");
      }
    }
  }
  if (const json* v = find(j, "fp8_recipe")) {
    if (auto s = r_.string(*v, child(p, "fp8_recipe"))) {
      if (auto k = sim::fp8_recipe_from_string(*s)) {
        t.fp8_recipe = *k;
      } else {
        r_.error(child(p, "fp8_recipe"), "unknown FP8 recipe '" + *s + "' (" + suggest(*s, {"delayed", "current", "mxfp8"}) + ")");
      }
    }
  }
  if (const json* v = find(j, "fp8_params")) {
    if (auto b = r_.boolean(*v, child(p, "fp8_params"))) t.fp8_params = *b;
  }
  if (const json* v = find(j, "grad_reduce_in_fp32")) {
    if (auto b = r_.boolean(*v, child(p, "grad_reduce_in_fp32"))) t.grad_reduce_in_fp32 = *b;
  }
  if (const json* v = find(j, "master_weights")) {
    // false: pure 16-bit training (no fp32 master copy; the optimizer state in the training dtype).
    if (auto b = r_.boolean(*v, child(p, "master_weights"))) t.master_weights = *b;
  }
  if (const json* v = find(j, "overlap_compute_slowdown")) {
    // Fraction by which compute slows while it overlaps communication (0 = ideal overlap).
    if (auto x = r_.number(*v, child(p, "overlap_compute_slowdown"), 0.0, 1.0, false)) {
      t.overlap_compute_slowdown = *x;
    }
  }
  if (const json* v = find(j, "host_us_per_op")) {
    // Host time per op of the op list (launch plus framework dispatch), microseconds.
    if (auto x = r_.number(*v, child(p, "host_us_per_op"), 0.0, 10000.0, false)) t.host_s_per_op = *x * 1e-6;
  }
  if (const json* v = find(j, "zero3_host_us_per_layer")) {
    // DeepSpeed ZeRO-3's hook time per layer and pass, microseconds (TrainingJob::zero3_host_s_per_layer).
    if (auto x = r_.number(*v, child(p, "zero3_host_us_per_layer"), 0.0, 1e6, false)) {
      t.zero3_host_s_per_layer = *x * 1e-6;
    }
  }
  if (const json* v = find(j, "pp_p2p_batched")) {
    // A micro-batch's pipeline send and receive in one batched call (false: blocking calls each).
    if (auto b = r_.boolean(*v, child(p, "pp_p2p_batched"))) t.pp_p2p_batched = *b;
  }
  if (const json* v = find(j, "tp_async_dgrad")) {
    // A column-parallel linear's input-gradient collective overlapped with its wgrad GEMM.
    if (auto b = r_.boolean(*v, child(p, "tp_async_dgrad"))) t.tp_async_dgrad = *b;
  }
  if (recipe_) {  // the recipe's defaults for what the scenario leaves out
    if (!find(j, "host_us_per_op") && recipe_->host_us_per_op) t.host_s_per_op = *recipe_->host_us_per_op * 1e-6;
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
