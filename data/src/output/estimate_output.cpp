// SPDX-License-Identifier: Apache-2.0
// Renderers of one estimate: JSON (CONTRACT.md keys plus extensions) and CSV; the terminal table
// is in estimate_table.cpp. The JSON object is the single source: CSV flattens its scalar
// fields, so the two never drift.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "capplan/data/currency.hpp"
#include "capplan/data/findings.hpp"
#include "capplan/data/format.hpp"
#include "capplan/data/scenario_io.hpp"

namespace capplan::data {
namespace {

using nlohmann::json;
// Every double written by capplan passes through format::number: NaN and Inf become null.
using format::csv_field;
using format::fixed;
using format::grouped;
using format::si;
using format::number;

}  // namespace

std::vector<std::string> estimate_warnings(const sim::Estimate& e, const ParsedScenario& s) {
  std::vector<std::string> out;
  // Loud findings first (sim::loud: the result is probably not what the user meant), then the
  // scenario's warnings, then the other findings in the estimate's order.
  auto add = [&](std::string w) {
    if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(std::move(w));
  };
  for (const auto& f : e.findings) {
    if (sim::loud(f.code)) add(render(f));
  }
  for (const auto& w : s.warnings) add(w);
  for (const auto& f : e.findings) {
    if (!sim::loud(f.code)) add(render(f));
  }
  return out;
}

namespace {

// A JSON scalar as one CSV cell.
std::string csv_value(const json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return v.dump();  // numbers: shortest round-trip text
}

}  // namespace

namespace {

json optional_usd(const std::optional<units::Usd>& v) { return v ? number(v->base()) : json(nullptr); }
json optional_number(const std::optional<double>& v) { return v ? number(*v) : json(nullptr); }
// The same amount in the scenario's currency (README "Currencies").
json optional_money(const std::optional<units::Usd>& v, const sim::Currency& c) {
  return v ? number(from_usd(v->base(), c)) : json(nullptr);
}

// time_to_train_with_failures_days, total_cost_usd, and the goodput and cost_breakdown_usd objects.
// total_cost and cost_breakdown: the same in the scenario's currency.
void goodput_to_json(json& out, const sim::Estimate& e, const sim::Currency& cur) {
  const sim::Goodput& g = e.goodput;
  out["time_to_train_with_failures_days"] = g.modelled ? number(units::to_days(g.wall)) : json(nullptr);
  out["total_cost_usd"] = g.modelled ? optional_usd(g.cost.total) : json(nullptr);
  out["total_cost"] = g.modelled ? optional_money(g.cost.total, cur) : json(nullptr);
  if (!g.modelled) {
    out["goodput"] = nullptr;
    out["cost_breakdown_usd"] = nullptr;
    out["cost_breakdown"] = nullptr;
    return;
  }
  const sim::DataLoadingCheck& d = g.data;
  out["goodput"] = {
      {"fraction", number(g.fraction)},
      {"expected_interruptions", number(g.expected_interruptions)},
      {"interruptions_per_gpu_hour", number(g.interruptions_per_gpu_hour)},
      {"spot_preemptions_per_node_hour", number(g.preemptions_per_node_hour)},
      {"mtbi_s", number(g.mtbi.base())},
      {"checkpoint_mode", sim::to_string(g.mode)},
      {"checkpoint_interval_s", number(g.checkpoint_interval.base())},
      {"checkpoint_interval_source",
       g.interval_given ? "scenario" : (g.expected_interruptions == 0.0 ? "no_interruptions" : "daly")},
      {"checkpoint_interval_rule", sim::to_string(g.interval_rule)},
      {"daly_interval_s", std::isfinite(g.daly_interval.base()) ? number(g.daly_interval.base()) : json(nullptr)},
      {"min_checkpoint_interval_s", number(g.min_interval.base())},
      {"young_interval_s", number(g.young_interval.base())},
      {"checkpoint_write_s", number(g.checkpoint_write.base())},
      {"checkpoint_stall_s", number(g.checkpoint_stall.base())},
      {"checkpoint_read_s", number(g.checkpoint_read.base())},
      {"checkpoints", number(g.checkpoints)},
      {"restart_s", number(g.restart.base())},
      {"lost_work_per_interruption_s", number(g.lost_per_interruption.base())},
      {"steady_s", number(g.steady.base())},
      {"data_stall_s", number(g.data_stall.base())},
      {"checkpoint_overhead_s", number(g.checkpoint_overhead.base())},
      {"restart_total_s", number(g.restart_total.base())},
      {"lost_work_s", number(g.lost_work.base())},
      {"wall_s", number(g.wall.base())},
      {"checkpoint_bytes", number(g.checkpoint.total.base())},
      {"checkpoint_bytes_per_rank", number(g.checkpoint.per_rank_max.base())},
      {"checkpoint_bytes_per_node", number(g.checkpoint.per_node_max.base())},
      {"checkpoint_writers", g.checkpoint.writers},
      {"data_loading",
       {{"bytes_per_token", number(d.bytes_per_token)},
        {"required_bytes_per_s", number(d.required_bytes_per_s)},
        {"storage_read_bytes_per_s", d.storage_read_bytes_per_s ? number(*d.storage_read_bytes_per_s) : json(nullptr)},
        {"cpu_tokens_per_s", d.cpu_tokens_per_s ? number(*d.cpu_tokens_per_s) : json(nullptr)},
        {"bound", d.bound},
        {"slowdown", number(d.slowdown)}}},
  };
  const sim::CostBreakdown& c = g.cost;
  out["cost_breakdown_usd"] = {
      {"purchase", sim::to_string(c.model)},
      {"usd_per_gpu_hour", c.usd_per_gpu_hour ? number(*c.usd_per_gpu_hour) : json(nullptr)},
      {"compute", optional_usd(c.compute)},
      {"spares", optional_usd(c.spares)},
      {"idle_commitment", optional_usd(c.idle_commitment)},
      {"idle_share", optional_usd(c.idle_share)},
      {"whole_term", optional_usd(c.whole_term)},
      {"utilisation", optional_number(c.utilisation)},
      {"term_hours", optional_number(c.term_hours)},
      {"committed_gpus", optional_number(c.committed_gpus)},
      {"energy", optional_usd(c.energy)},
      {"operations", optional_usd(c.operations)},
      {"checkpoint_storage", optional_usd(c.checkpoint_storage)},
      {"data_storage", optional_usd(c.data_storage)},
      {"total", optional_usd(c.total)},
      {"missing_inputs", c.missing},
  };
  out["cost_breakdown"] = {
      {"currency", cur.code},
      {"purchase", sim::to_string(c.model)},
      {"per_gpu_hour", c.usd_per_gpu_hour ? number(from_usd(*c.usd_per_gpu_hour, cur)) : json(nullptr)},
      {"compute", optional_money(c.compute, cur)},
      {"spares", optional_money(c.spares, cur)},
      {"idle_commitment", optional_money(c.idle_commitment, cur)},
      {"idle_share", optional_money(c.idle_share, cur)},
      {"whole_term", optional_money(c.whole_term, cur)},
      {"utilisation", optional_number(c.utilisation)},
      {"term_hours", optional_number(c.term_hours)},
      {"committed_gpus", optional_number(c.committed_gpus)},
      {"energy", optional_money(c.energy, cur)},
      {"operations", optional_money(c.operations, cur)},
      {"checkpoint_storage", optional_money(c.checkpoint_storage, cur)},
      {"data_storage", optional_money(c.data_storage, cur)},
      {"total", optional_money(c.total, cur)},
  };
}

}  // namespace

json parallelism_to_json(const sim::Parallelism& p, int micro_batches) {
  json s = strategy_to_json(p);
  s["grad_accumulation"] = micro_batches;
  return s;
}

namespace {

// The fine-tuning job as the output shows it: method, what is trained, the dataset as resolved.
nlohmann::json workload_json(const sim::Scenario& sc) {
  nlohmann::json w = {{"kind", sim::to_string(sc.workload.kind)}};
  if (sc.workload.kind != sim::WorkloadKind::finetune) return w;
  const sim::FinetuneSpec& f = sc.training.finetune;
  const double trained = sim::trainable_params(sc.model, f);
  w["method"] = sim::to_string(f.method);
  w["trainable_params"] = number(trained);
  w["trainable_share"] = number(trained / sc.model.total_params());
  w["adapter_params"] = number(sim::lora_params(sc.model, f));
  w["lora_rank"] = f.adapters() ? nlohmann::json(f.lora_rank) : nlohmann::json(nullptr);
  w["lora_targets"] = f.adapters() ? nlohmann::json(format::lora_targets(f.lora_targets)) : nlohmann::json(nullptr);
  w["base_weights"] = sim::to_string(f.base());
  const sim::FinetuneData& d = sc.workload.dataset;
  const sim::FinetuneShape& r = sc.workload.shape;
  w["dataset"] = {{"tokens", number(d.tokens)},
                  {"epochs", number(d.epochs)},
                  {"packing", d.packing},
                  {"document_mask", d.document_mask},
                  {"step_tokens", r.step_tokens},
                  {"useful_share", number(r.useful_share)},
                  {"processed_tokens", number(r.processed_tokens)},
                  {"attention_tokens", r.attention_tokens > 0 ? number(r.attention_tokens) : nlohmann::json(nullptr)}};
  return w;
}

}  // namespace

json estimate_to_json(const sim::Estimate& e, const ParsedScenario& s) {
  const sim::Scenario& sc = s.scenario;
  const sim::Cluster& cl = sc.cluster;
  const int gpus = cl.gpus;
  json out = json::object();
  format::stamp(out);

  out["step_time_s"] = number(e.step.time.base());
  out["tokens_per_s"] = number(e.step.tokens_per_s);
  out["tokens_per_s_per_gpu"] = gpus > 0 ? number(e.step.tokens_per_s / gpus) : json(nullptr);
  out["model_tflops_per_gpu"] = number(units::to_tflop_per_s(e.step.model_flops_per_gpu));
  out["mfu"] = number(e.step.mfu);
  out["mfu_bf16_peak"] = number(e.step.mfu_bf16_peak);  // the same model FLOPs against the BF16 dense peak
  out["hfu"] = number(e.step.hfu);
  out["time_to_train_days"] = number(units::to_days(e.totals.time_to_train));
  out["steps"] = format::count(e.totals.steps);
  out["gpu_hours"] = number(e.totals.gpu_hours);
  out["cost_usd"] = e.totals.cost ? number(e.totals.cost->base()) : json(nullptr);
  out["usd_per_gpu_hour"] = e.totals.price_per_gpu ? number(units::to_usd_per_hour(*e.totals.price_per_gpu)) : json(nullptr);
  out["price_source"] = cl.price_source.empty() ? json(nullptr) : json(cl.price_source);
  // Money in the currency the user priced in (README "Currencies"): the *_usd keys stay US dollars.
  const sim::Currency& cur = sc.pricing.currency;
  out["currency"] = cur.code;
  out["usd_per_unit"] = number(cur.usd_per_unit);
  out["usd_per_unit_date"] = cur.rate_date.empty() ? json(nullptr) : json(cur.rate_date);
  out["purchase"] = sim::to_string(sc.pricing.model);
  out["cost"] = e.totals.cost ? number(from_usd(e.totals.cost->base(), cur)) : json(nullptr);
  out["price_per_gpu_hour"] =
      e.totals.price_per_gpu ? number(from_usd(units::to_usd_per_hour(*e.totals.price_per_gpu), cur)) : json(nullptr);

  // p10-p90 intervals (sim/uncertainty.hpp); null when no error band is known.
  auto bounds = [&](const char* key, const std::optional<sim::Interval>& i) {
    out[std::string(key) + "_p10"] = i ? number(i->low) : json(nullptr);
    out[std::string(key) + "_p90"] = i ? number(i->high) : json(nullptr);
  };
  bounds("step_time_s", e.uncertainty.step_time_s);
  bounds("tokens_per_s", e.uncertainty.tokens_per_s);
  bounds("time_to_train_days", e.uncertainty.time_to_train_days);
  bounds("cost_usd", e.uncertainty.cost_usd);
  out["cost_p10"] = e.uncertainty.cost_usd ? number(from_usd(e.uncertainty.cost_usd->low, cur)) : json(nullptr);
  out["cost_p90"] = e.uncertainty.cost_usd ? number(from_usd(e.uncertainty.cost_usd->high, cur)) : json(nullptr);
  bounds("time_to_train_with_failures_days", e.uncertainty.wall_days);
  bounds("total_cost_usd", e.uncertainty.total_cost_usd);
  out["total_cost_p10"] = e.uncertainty.total_cost_usd ? number(from_usd(e.uncertainty.total_cost_usd->low, cur)) : json(nullptr);
  out["total_cost_p90"] = e.uncertainty.total_cost_usd ? number(from_usd(e.uncertainty.total_cost_usd->high, cur)) : json(nullptr);
  if (e.uncertainty.band) {
    out["error_band"] = {{"category", e.uncertainty.band->category},
                         {"ratio_p10", number(e.uncertainty.band->ratio_p10)},
                         {"ratio_p90", number(e.uncertainty.band->ratio_p90)},
                         {"basis", error_band_basis(*e.uncertainty.band)}};
  } else {
    out["error_band"] = nullptr;
  }

  goodput_to_json(out, e, cur);

  const sim::MemoryBreakdown& m = e.memory;
  out["memory_per_gpu_bytes"] = number(m.total().base());
  out["memory_capacity_bytes"] = number(m.capacity.base());
  out["memory_breakdown_bytes"] = {
      {"weights", number(m.weights.base())},     {"gradients", number(m.gradients.base())},
      {"optimizer", number(m.optimizer.base())}, {"activations", number(m.activations.base())},
      {"logits", number(m.logits.base())},       {"reserve", number(m.reserve.base())},
  };
  out["memory_peak_stage"] = m.stage;
  out["fits_in_memory"] = m.fits();

  const sim::StepBreakdown& b = e.step.breakdown;
  out["breakdown_s"] = {
      {"compute", number(b.compute.base())},     {"recompute", number(b.recompute.base())},
      {"tp_comm", number(b.tp_comm.base())},     {"pp_comm", number(b.pp_comm.base())},
      {"dp_comm", number(b.dp_comm.base())},     {"ep_comm", number(b.ep_comm.base())},
      {"cp_comm", number(b.cp_comm.base())},     {"bubble", number(b.bubble.base())},
      {"optimizer", number(b.optimizer.base())}, {"variability", number(b.variability.base())},
      {"host", number(b.host.base())},
      {"other", number(b.other.base())},
  };
  out["flops_per_step"] = {{"model", number(e.step.flops.model.base())}, {"hardware", number(e.step.flops.hardware.base())}};

  out["strategy"] = parallelism_to_json(e.layout.strategy, e.layout.micro_batches);
  out["strategy"]["chosen_by_capplan"] = e.layout.chosen_by_capplan;
  out["strategy"]["configurations_evaluated"] = e.layout.configurations_evaluated;

  out["workload"] = workload_json(sim::at_micro_batch(sc, e.layout.strategy.micro_batch));
  out["scenario"] = {
      {"model", s.model_id},
      {"model_name", sc.model.name},
      {"model_params_b", number(sc.model.total_params() / 1e9)},
      {"model_active_params_b", number(sc.model.active_params() / 1e9)},
      {"gpu", cl.gpu.id},
      {"instance", cl.instance_id.empty() ? json(nullptr) : json(cl.instance_id)},
      {"gpus", gpus},
      {"gpus_per_node", cl.gpus_per_node},
      {"nodes", cl.nodes()},
      {"precision", sim::to_string(sc.training.precision)},
      {"framework", sc.training.framework_id.empty() ? std::string(sim::to_string(sc.training.framework))
                                                     : sc.training.framework_id},
      {"kernels", sc.training.framework == sim::Framework::pytorch ? "eager" : "fused"},
      {"loss_kernel", sim::to_string(sc.training.loss())},
      {"attention_kernel", sc.model.flash_attention ? json(sim::to_string(sc.training.attention_kernel)) : json(nullptr)},
      {"grad_reduce_in_fp32", sc.training.fp32_gradients()},
      {"master_weights", sc.training.mixed_precision()},
      {"fp8_recipe", sc.training.precision == sim::Precision::fp8 ? json(sim::to_string(sc.training.fp8_recipe))
                                                                   : json(nullptr)},
      {"fp8_params", sc.training.fp8_weights()},
      {"host_us_per_op", number(sc.training.host_s_per_op * 1e6)},
      {"zero3_host_us_per_layer", number(sc.training.zero3_host_s_per_layer * 1e6)},
      {"tokens", number(sc.training.tokens)},
      {"global_batch", sc.training.global_batch},
      {"global_batch_tokens", number(static_cast<double>(sc.training.global_batch) * sc.model.seq_len)},
      {"seq_len", sc.model.seq_len},
  };
  if (!cl.topology.empty()) {
    // Only a cluster given with tiers shows them; the two-tier form prints as it always has.
    json tiers = json::array();
    for (const auto& t : cl.topology.tiers) {
      json row = {{"name", t.name},
                  {"kind", sim::to_string(t.kind)},
                  {"gpus", t.gpus > 0 ? json(t.gpus) : json(nullptr)},
                  {"gbps_per_gpu", number(t.bandwidth.base() * 8.0 / 1e9)}};
      if (t.latency.base() > 0) row["latency_us"] = number(t.latency.base() * 1e6);
      if (t.kind == sim::TierKind::scale_out) {
        row["rails"] = t.rails;
        row["oversubscription"] = number(t.oversubscription);
      }
      tiers.push_back(std::move(row));
    }
    out["scenario"]["topology"] = std::move(tiers);
  }
  out["cost_model"] = e.step.cost_model.empty() ? std::string("datasheet") : e.step.cost_model;
  out["warnings"] = estimate_warnings(e, s);
  return out;
}

std::string estimate_to_csv(const sim::Estimate& e, const ParsedScenario& s) {
  const json j = estimate_to_json(e, s);
  std::vector<std::pair<std::string, json>> cols;
  for (const char* key : {"step_time_s", "tokens_per_s", "tokens_per_s_per_gpu", "model_tflops_per_gpu", "mfu",
                          "mfu_bf16_peak", "hfu",
                          "time_to_train_days", "steps", "gpu_hours", "cost_usd", "usd_per_gpu_hour", "price_source",
                          "currency", "usd_per_unit", "purchase", "cost", "price_per_gpu_hour", "total_cost",
                          "memory_per_gpu_bytes", "memory_capacity_bytes", "fits_in_memory"}) {
    cols.emplace_back(key, j.at(key));
  }
  for (const char* key : {"step_time_s_p10", "step_time_s_p90", "tokens_per_s_p10", "tokens_per_s_p90",
                          "time_to_train_days_p10", "time_to_train_days_p90", "cost_usd_p10", "cost_usd_p90"}) {
    cols.emplace_back(key, j.at(key));
  }
  for (const char* key : {"category", "ratio_p10", "ratio_p90", "basis"}) {
    const json& band = j.at("error_band");
    cols.emplace_back(std::string("error_band_") + key, band.is_object() ? band.at(key) : json(nullptr));
  }
  for (const char* key : {"time_to_train_with_failures_days", "total_cost_usd", "time_to_train_with_failures_days_p10",
                          "time_to_train_with_failures_days_p90", "total_cost_usd_p10", "total_cost_usd_p90"}) {
    cols.emplace_back(key, j.at(key));
  }
  if (j.at("goodput").is_object()) {
    for (const auto& [k, v] : j.at("goodput").items()) {
      if (k == "data_loading") {
        for (const auto& [dk, dv] : v.items()) cols.emplace_back("goodput_data_loading_" + dk, dv);
      } else {
        cols.emplace_back("goodput_" + k, v);
      }
    }
    for (const auto& [k, v] : j.at("cost_breakdown_usd").items()) {
      if (k == "missing_inputs") {
        std::string list;
        for (const auto& x : v) list += (list.empty() ? "" : "; ") + x.get<std::string>();
        cols.emplace_back("cost_missing_inputs", list);
      } else if (k == "purchase" || k == "utilisation" || k == "term_hours" || k == "committed_gpus") {
        cols.emplace_back("cost_" + k, v);  // not amounts
      } else {
        cols.emplace_back(k == "usd_per_gpu_hour" ? std::string("cost_usd_per_gpu_hour") : "cost_" + k + "_usd", v);
      }
    }
  }
  for (const auto& [k, v] : j.at("memory_breakdown_bytes").items()) cols.emplace_back("memory_" + k + "_bytes", v);
  for (const auto& [k, v] : j.at("breakdown_s").items()) cols.emplace_back("breakdown_" + k + "_s", v);
  for (const auto& [k, v] : j.at("flops_per_step").items()) cols.emplace_back("flops_per_step_" + k, v);
  for (const auto& [k, v] : j.at("strategy").items()) cols.emplace_back("strategy_" + k, v);
  for (const auto& [k, v] : j.at("scenario").items()) cols.emplace_back("scenario_" + k, v);
  cols.emplace_back("cost_model", j.at("cost_model"));
  std::string warnings;
  for (const auto& w : j.at("warnings")) warnings += (warnings.empty() ? "" : "; ") + w.get<std::string>();
  cols.emplace_back("warnings", warnings);

  std::string header;
  std::string values;
  for (size_t i = 0; i < cols.size(); ++i) {
    header += (i ? "," : "") + csv_field(cols[i].first);
    values += (i ? "," : "") + csv_field(csv_value(cols[i].second));
  }
  return header + "\n" + values + "\n";
}

}  // namespace capplan::data
