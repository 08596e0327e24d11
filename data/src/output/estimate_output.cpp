// SPDX-License-Identifier: Apache-2.0
// Renderers of one estimate: JSON (CONTRACT.md keys plus extensions), CSV and a terminal table.
// The JSON object is the single source: CSV flattens its scalar fields, so the two never drift.
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

// ---- text helpers (g++ 12 has no <format>) ----




std::string seconds_text(double s) {
  if (!std::isfinite(s)) return "n/a";
  if (s < 1e-3) return fixed(s * 1e6, 1) + " us";
  if (s < 1.0) return fixed(s * 1e3, 1) + " ms";
  if (s >= 1000.0) return grouped(s) + " s";
  return fixed(s, 3) + " s";
}

std::string pad_right(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string pad_left(std::string s, size_t width) {
  if (s.size() < width) s.insert(0, width - s.size(), ' ');
  return s;
}

// Words into lines of at most `width` characters (a longer word gets a line of its own).
std::vector<std::string> wrap(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  std::string line;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t space = text.find(' ', pos);
    const std::string word = text.substr(pos, space == std::string::npos ? std::string::npos : space - pos);
    pos = space == std::string::npos ? text.size() : space + 1;
    if (word.empty()) continue;
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

std::string gib(units::Bytes b) { return fixed(units::to_gib(b), 1); }

std::string detail_join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// ---- CSV ----


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

std::string lora_targets_text(unsigned bits) {
  std::string out;
  for (sim::LoraTarget t : {sim::lora_q, sim::lora_k, sim::lora_v, sim::lora_o, sim::lora_gate, sim::lora_up,
                            sim::lora_down}) {
    if ((bits & t) != 0) out += (out.empty() ? "" : ",") + std::string(sim::lora_target_name(t));
  }
  return out;
}

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
  w["lora_targets"] = f.adapters() ? nlohmann::json(lora_targets_text(f.lora_targets)) : nlohmann::json(nullptr);
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

  out["workload"] = workload_json(sc);
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

std::string estimate_to_table(const sim::Estimate& e, const ParsedScenario& s) {
  const sim::Scenario& sc = s.scenario;
  const sim::Cluster& cl = sc.cluster;
  const sim::Parallelism& p = e.layout.strategy;
  std::string out;
  auto line = [&](const std::string& text) { out += text + "\n"; };
  auto row = [&](const std::string& label, const std::string& value) { line("  " + pad_right(label, 22) + value); };

  // What was estimated.
  std::string model = sc.model.name.empty() ? s.model_id : sc.model.name;
  if (!s.model_id.empty() && s.model_id != "custom" && s.model_id != model) model += " (" + s.model_id + ")";
  line("capplan estimate: " + model + ", " + format::parameters(sc.model.total_params(), sc.model.active_params()));
  if (sc.workload.kind == sim::WorkloadKind::finetune) {
    const sim::FinetuneSpec& f = sc.training.finetune;
    const double trained = sim::trainable_params(sc.model, f);
    std::string what = std::string("  fine-tuning: ") + sim::to_string(f.method);
    if (f.adapters()) what += " rank " + std::to_string(f.lora_rank) + " on " + lora_targets_text(f.lora_targets);
    if (f.quantized_base()) what += std::string(", ") + sim::to_string(f.base()) + " base";
    what += "; " + (trained < 1e9 ? fixed(trained / 1e6, 1) + "M" : fixed(trained / 1e9, 2) + "B") + " parameters trained (" + fixed(100.0 * trained / sc.model.total_params(), 2) +
            "%)";
    const sim::FinetuneData& d = sc.workload.dataset;
    const sim::FinetuneShape& r = sc.workload.shape;
    what += "; dataset " + format::tokens(d.tokens) + " x " + fixed(d.epochs, d.epochs == std::floor(d.epochs) ? 0 : 2) +
            " epochs, " + (d.packing ? "packed" : "unpacked, padded to " + std::to_string(r.step_tokens) + " tokens (" +
                                                      fixed(100.0 * r.useful_share, 1) + "% real)");
    line(what);
  }
  std::string where = std::to_string(cl.gpus) + " x " + (cl.gpu.name.empty() ? cl.gpu.id : cl.gpu.name);
  if (!cl.instance_id.empty()) {
    where += " (" + std::to_string(cl.nodes()) + " x " + cl.instance_id + ")";
  } else {
    where += " (" + std::to_string(cl.nodes()) + " node" + (cl.nodes() == 1 ? "" : "s") + " of " +
             std::to_string(cl.gpus_per_node) + ")";
  }
  line("  " + where + ", " + sim::to_string(sc.training.precision) + ", " + format::tokens(sc.training.tokens) +
       " tokens, global batch " + grouped(static_cast<double>(sc.training.global_batch)) + " x " +
       std::to_string(sc.model.seq_len) + " tokens");
  line("");

  // Headline.
  line("Result");
  const double days = units::to_days(e.totals.time_to_train);
  // " (p10-p90: 31.0-44.2)" after a value when the estimate has an error band.
  auto range = [](const std::optional<sim::Interval>& i, auto text) {
    return i ? " (p10-p90: " + text(i->low) + "-" + text(i->high) + ")" : std::string();
  };
  // A time in days, hours or minutes as its size asks (its band in the same unit): "17.3 hours".
  auto time_text = [&range](double d, const std::optional<sim::Interval>& band) {
    const format::DurationUnit unit = format::duration_unit(d);
    auto in_unit = [&unit](double x) { return format::duration(x, unit); };
    return in_unit(d) + " " + unit.name + range(band, in_unit);
  };
  row("time to train", time_text(days, e.uncertainty.time_to_train_days) + " (" + grouped(e.totals.steps) + " steps)");
  const sim::Currency& cur = sc.pricing.currency;
  auto usd = [&cur](double v) { return money(v, cur); };
  if (e.totals.cost) {
    row("cost", usd(e.totals.cost->base()) + range(e.uncertainty.cost_usd, usd) + " (" + grouped(e.totals.gpu_hours) + " GPU-hours)");
  } else {
    row("cost", "unknown: no price (" + grouped(e.totals.gpu_hours) + " GPU-hours); give --usd-per-gpu-hour");
  }
  if (e.totals.price_per_gpu) {
    std::string price = money_prefix(cur) + fixed(from_usd(units::to_usd_per_hour(*e.totals.price_per_gpu), cur), 2) +
                        " per GPU-hour";
    if (!cl.price_source.empty()) price += " (" + cl.price_source + ")";
    row("price", price);
  }
  if (!cur.is_usd()) row("currency", rate_text(cur));
  row("step time", seconds_text(e.step.time.base()) + range(e.uncertainty.step_time_s, seconds_text));
  row("throughput", si(e.step.tokens_per_s) + " tokens/s" + range(e.uncertainty.tokens_per_s, si) + " (" +
                        (cl.gpus > 0 ? grouped(e.step.tokens_per_s / cl.gpus) : std::string("n/a")) + " per GPU)");
  if (e.uncertainty.band) {
    row("error band", "measured/predicted " + fixed(e.uncertainty.band->ratio_p10, 2) + "-" + fixed(e.uncertainty.band->ratio_p90, 2) +
                          " (p10-p90, " + e.uncertainty.band->category + ")");
    for (const auto& text : wrap(error_band_basis(*e.uncertainty.band), 76)) row("", text);
  }
  row("model TFLOP/s per GPU", fixed(units::to_tflop_per_s(e.step.model_flops_per_gpu), 1));
  row("MFU / HFU", fixed(100.0 * e.step.mfu, 1) + "% / " + fixed(100.0 * e.step.hfu, 1) + "%" +
                       (sc.training.precision == sim::Precision::fp8 ? " of the FP8 peak" : ""));
  if (sc.training.precision == sim::Precision::fp8) {
    row("MFU vs BF16 peak", fixed(100.0 * e.step.mfu_bf16_peak, 1) + "%");
  }
  line("");

  // Goodput: interruptions, checkpoints, data loading, and the cost beyond the sticker.
  const sim::Goodput& g = e.goodput;
  if (g.modelled) {
    line("Goodput (expected, with interruptions and checkpoints)");
    row("time to train", (g.finite ? time_text(units::to_days(g.wall), e.uncertainty.wall_days) : std::string("unbounded")) +
                             " (" + fixed(100.0 * g.fraction, 1) + "% goodput: useful / wall time)");
    row("interruptions", (std::isfinite(g.mtbi.base())
                              ? fixed(g.expected_interruptions, 1) + " expected, one per " +
                                    fixed(g.mtbi.base() / 3600.0, 2) + " h"
                              : std::string("none (rate 0)")) +
                             " (" + si(g.interruptions_per_gpu_hour * 1e6) + " per 1M GPU-hours" +
                             (g.preemptions_per_node_hour > 0
                                  ? ", spot " + fixed(g.preemptions_per_node_hour, 4) + " per node-hour"
                                  : std::string()) + ")");
    row("checkpoint", si(g.checkpoint.total.base()) + "B total, " + si(g.checkpoint.per_rank_max.base()) +
                          "B per rank (" + grouped(static_cast<double>(g.checkpoint.writers)) + " writers), " +
                          sim::to_string(g.mode));
    std::string why;
    switch (g.interval_rule) {
      case sim::IntervalRule::scenario: why = " (given)"; break;
      case sim::IntervalRule::end_only: why = " (no interruptions: once, at the end)"; break;
      case sim::IntervalRule::daly: why = " (Daly optimum)"; break;
      case sim::IntervalRule::minimum:
        why = " (the minimum interval; Daly optimum " + seconds_text(g.daly_interval.base()) + ")";
        break;
      case sim::IntervalRule::step: why = " (one step)"; break;
      case sim::IntervalRule::persist: why = " (time to persist one checkpoint)"; break;
    }
    row("  every", seconds_text(g.checkpoint_interval.base()) + why + "; Young " + seconds_text(g.young_interval.base()));
    row("  write / stall", seconds_text(g.checkpoint_write.base()) + " / " + seconds_text(g.checkpoint_stall.base()));
    row("restart", seconds_text(g.restart.base()) + " each (load " + seconds_text(g.checkpoint_read.base()) + ")");
    const double wall = g.wall.base();
    const std::pair<const char*, units::Seconds> parts[] = {
        {"steady state", g.steady},           {"data loading stall", g.data_stall},
        {"checkpoint stalls", g.checkpoint_overhead}, {"restarts", g.restart_total},
        {"lost work", g.lost_work},
    };
    for (const auto& [name, t] : parts) {
      if (t.base() == 0.0 && std::string(name) == "data loading stall") continue;
      row("  " + std::string(name), pad_left(fixed(units::to_days(t), 2) + " d", 10) +
                                         pad_left(wall > 0 && std::isfinite(wall) ? fixed(100.0 * t.base() / wall, 1) + "%"
                                                                                  : std::string("n/a"),
                                                  8));
    }
    const sim::DataLoadingCheck& d = g.data;
    std::string data = si(d.required_bytes_per_s) + "B/s needed (" + fixed(d.bytes_per_token, 0) + " B/token)";
    if (d.storage_read_bytes_per_s) data += ", storage " + si(*d.storage_read_bytes_per_s) + "B/s";
    if (d.cpu_tokens_per_s) data += ", CPU " + si(*d.cpu_tokens_per_s) + " tokens/s";
    data += d.bound == "none" ? ": not a bottleneck" : ": BOUND by " + d.bound + " (x" + fixed(d.slowdown, 2) + ")";
    row("data loading", data);
    const sim::CostBreakdown& c = g.cost;
    // Reserved and on-prem: the run's share at the stated utilisation, the whole term beside it.
    std::string framing;
    if (c.utilisation) {
      framing = ": job's share at " + fixed(100.0 * *c.utilisation, 0) + "% utilisation; whole term " +
                (c.whole_term ? usd(c.whole_term->base()) : std::string("unknown"));
    }
    row("total cost", (c.total ? usd(c.total->base()) + range(e.uncertainty.total_cost_usd, usd) : std::string("unknown")) +
                          " (" + sim::to_string(c.model) + framing +
                          (c.missing.empty() ? std::string() : "; missing: " + detail_join(c.missing)) + ")");
    const std::pair<const char*, const std::optional<units::Usd>*> costs[] = {
        {"compute", &c.compute},   {"hot spares", &c.spares},   {"idle share", &c.idle_share},
        {"energy", &c.energy},     {"operations", &c.operations}, {"checkpoint storage", &c.checkpoint_storage},
        {"data storage", &c.data_storage},
    };
    for (const auto& [name, v] : costs) {
      if (*v && (*v)->base() != 0.0) row("  " + std::string(name), usd((*v)->base()));
    }
    if (c.whole_term && c.term_hours && c.committed_gpus) {
      const bool owned = c.model == sim::PurchaseModel::on_prem;
      row("  whole term", usd(c.whole_term->base()) + " (" + grouped(*c.committed_gpus) + " GPUs " +
                              (owned ? "owned" : "committed") + " for " +
                              fixed(*c.term_hours / (owned ? 8760.0 : 730.0), 1) + (owned ? " years" : " months") +
                              " at " + fixed(100.0 * *c.utilisation, 0) + "% utilisation; not in the total)");
    }
    line("");
  }

  // Memory.
  const sim::MemoryBreakdown& m = e.memory;
  line("Memory per GPU (peak, pipeline stage " + std::to_string(m.stage) + ")");
  row("total", gib(m.total()) + " of " + gib(m.capacity) + " GiB" + (m.fits() ? "  fits" : "  DOES NOT FIT"));
  const std::pair<const char*, units::Bytes> parts[] = {
      {"weights", m.weights},         {"gradients", m.gradients}, {"optimizer state", m.optimizer},
      {"activations", m.activations}, {"logits", m.logits},       {"reserve", m.reserve},
  };
  for (const auto& [name, bytes] : parts) row("  " + std::string(name), pad_left(gib(bytes), 8) + " GiB");
  line("");

  // Step breakdown.
  const sim::StepBreakdown& b = e.step.breakdown;
  const double total = e.step.time.base();
  line("Step time breakdown");
  const std::pair<const char*, units::Seconds> phases[] = {
      {"compute", b.compute},           {"  of which recompute", b.recompute},
      {"tp comm (exposed)", b.tp_comm}, {"pp comm (exposed)", b.pp_comm},
      {"dp comm (exposed)", b.dp_comm}, {"ep comm (exposed)", b.ep_comm},
      {"cp comm (exposed)", b.cp_comm}, {"pipeline bubble", b.bubble},
      {"optimizer", b.optimizer},       {"slowest GPU wait", b.variability},
      {"host-bound (launch)", b.host},  {"other", b.other},
  };
  for (const auto& [name, t] : phases) {
    const double v = t.base();
    if (v == 0.0 && std::string(name) != "compute") continue;  // hide parts this layout does not have
    const std::string share = total > 0 ? fixed(100.0 * v / total, 1) + "%" : "n/a";
    row(name, pad_left(seconds_text(v), 10) + pad_left(share, 8));
  }
  line("");

  // Strategy.
  std::string strategy = "tp " + std::to_string(p.tp) + ", pp " + std::to_string(p.pp) + ", dp " + std::to_string(p.dp);
  if (p.cp != 1) strategy += ", cp " + std::to_string(p.cp);
  if (p.ep != 1) strategy += ", ep " + std::to_string(p.ep);
  strategy += ", micro-batch " + std::to_string(p.micro_batch) + " x " + std::to_string(e.layout.micro_batches) +
              " accumulation steps";
  if (p.virtual_stages != 1) strategy += ", " + std::to_string(p.virtual_stages) + " virtual stages";
  strategy += ", ZeRO " + std::to_string(p.zero) + ", recompute " + sim::to_string(p.recompute);
  for (const auto& o : sim::kStrategyOptions) {
    if (o.tag != nullptr && p.*o.value) strategy += std::string(", ") + o.label;
  }
  line("Strategy" + std::string(e.layout.chosen_by_capplan
                                    ? " (chosen by capplan from " +
                                          grouped(static_cast<double>(e.layout.configurations_evaluated)) + " configurations)"
                                    : ""));
  line("  " + strategy);
  line("  cost model: " + (e.step.cost_model.empty() ? std::string("datasheet") : e.step.cost_model));

  const auto warnings = estimate_warnings(e, s);
  if (!warnings.empty()) {
    line("");
    line("Warnings");
    for (const auto& w : warnings) line("  - " + w);
  }
  return out;
}

}  // namespace capplan::data
