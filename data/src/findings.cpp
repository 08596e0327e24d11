// SPDX-License-Identifier: Apache-2.0
#include "capplan/data/findings.hpp"

#include <cmath>
#include <cstdlib>
#include <iterator>
#include <string>

#include "capplan/data/format.hpp"
#include "capplan/sim/uncertainty.hpp"

namespace capplan::data {

namespace {

using sim::FindingCode;

// The input a cost finding asks for, by its field.
std::string_view cost_input_name(std::string_view field) {
  struct Named {
    std::string_view field, what;
  };
  static constexpr Named kNames[] = {
      {"pricing.usd_per_gpu_hour", "the on-demand price"},
      {"pricing.spot.usd_per_gpu_hour", "the spot price"},
      {"pricing.reserved.usd_per_gpu_hour", "the reserved (committed) price"},
      {"pricing.reserved.term_months", "the commitment term"},
      {"pricing.on_prem.usd_per_node", "the purchase price per node"},
      {"pricing.on_prem.amortisation_years", "the amortisation period"},
      {"pricing.on_prem.usd_per_kwh", "the electricity price"},
      {"pricing.on_prem.node_power_w", "the node power"},
      {"pricing.on_prem.ops_usd_per_year", "the operations (staff) cost"},
      {"storage.usd_per_gb_month", "the storage price for checkpoints and data"},
  };
  for (const auto& n : kNames) {
    if (n.field == field) return n.what;
  }
  return "an input";
}

// One template per code, in the order of sim::FindingCode (checked at compile time). The cost
// findings are completed with the name of the input their field asks for.
struct Template {
  FindingCode code;
  std::string_view text;
};
constexpr Template kTemplates[] = {
    {FindingCode::no_layout_fits,
     "no layout fits in memory: showing the one that needs the least ({evaluated} layouts evaluated)"},
    {FindingCode::uneven_stages,
     "layers ({layers}) do not divide evenly into pp*virtual_stages ({stages}): uneven stages, the slowest "
      "sets the pace"},
    {FindingCode::tp_wider_than_node,
     "tp ({tp}) is wider than a node ({gpus_per_node} GPUs): tensor-parallel traffic crosses the network"},
    {FindingCode::sequence_parallel_without_tp,
     "sequence_parallel has no effect with tp = 1"},
    {FindingCode::interleave_micro_batches,
     "interleaved schedule with micro-batches ({micro_batches}) not a multiple of pp ({pp}): Megatron-LM "
      "requires it"},
    {FindingCode::zero_with_pipeline,
     "ZeRO stage >= 2 with pipeline parallelism is not supported by DeepSpeed"},
    {FindingCode::pipeline_never_fills,
     "fewer micro-batches ({micro_batches}) than pipeline stages ({pp}): the pipeline never fills"},
    {FindingCode::does_not_fit,
     "does not fit in memory: needs {need_gib} GiB per GPU, the GPU has {have_gib} GiB"},
    {FindingCode::no_storage_tier,
     "no storage tier given: checkpoints and data assumed to move at the node's network bandwidth "
      "({node_gb_per_s:1} GB/s per node), an optimistic bound; give storage.tier or storage.write_gb_per_s / "
      "storage.read_gb_per_s (storage cost not included)"},
    {FindingCode::storage_tier_assumed,
     "no storage tier given: assumed the catalog's default tier '{tier}' ({write_gb_per_s:1} GB/s write, "
      "{read_gb_per_s:1} GB/s read for the whole cluster), a conservative shared-file-system figure; give "
      "storage.tier or storage.write_gb_per_s / storage.read_gb_per_s (storage cost not included)"},
    {FindingCode::data_loading_bound,
     "data loading is the bottleneck ({bound}): it needs {gb_per_s:2} GB/s ({bytes_per_token:1} "
      "bytes/token); training slows by x{slowdown:2}"},
    {FindingCode::spot_preemptions_unknown,
     "spot: the preemption rate is unknown, so no preemptions are modelled; give {field}"},
    {FindingCode::local_tier_without_upload,
     "storage tier '{tier}' is node-local and no upload tier is given: a checkpoint on a failed node is lost "
      "with it (modelled as durable; give {field})"},
    {FindingCode::checkpoint_interval_below_step,
     "{field} ({given_s:1} s) is shorter than one step ({floor_s:1} s): using {floor_s:1} s"},
    {FindingCode::checkpoint_interval_below_persist,
     "{field} ({given_s:1} s) is shorter than the time to persist a checkpoint ({floor_s:1} s): using "
      "{floor_s:1} s"},
    {FindingCode::checkpoint_every_few_steps,
     "a checkpoint every {steps:1} steps ({interval_s:0} s) is more often than runs checkpoint (fewer than "
      "{min_steps:0} steps apart): the storage, interruption or interval inputs are likely off; check {field}"},
    {FindingCode::checkpoint_stalls_dominate,
     "checkpoint stalls take {stall_pct:1}% of the time between checkpoints (over {max_pct:0}%, more than "
      "runs accept): the storage is too slow for this checkpoint size and interruption rate; give a faster "
      "{field} or use async checkpoints"},
    {FindingCode::restart_overhead_assumed,
     "restart overhead (relaunch + initialisation) assumed {restart_s:0} s before the checkpoint load; "
      "measure yours and give {field}"},
    {FindingCode::interruptions_unbounded,
     "interruptions come faster (every {mtbi_h:2} h) than the job can restart and make progress: the "
      "expected time to train is unbounded"},
    {FindingCode::recovery_dominates,
     "checkpoint interval + restart is more than half the mean time between interruptions ({mtbi_h:2} h): "
      "most time goes to recovery"},
    {FindingCode::cost_input_unknown,
     "total cost: {input} is unknown; give {field}"},
    {FindingCode::cost_part_unknown,
     "total cost: {input} is unknown, so it is left out of the total; give {field}"},
    {FindingCode::reserved_commitment_short,
     "{field} ({committed:0}) is less than the GPUs used ({used:0}): the extra GPUs are priced at the "
      "reserved rate too"},
    {FindingCode::reserved_term_short,
     "the run ({run_months:1} months) outlasts the reserved term ({term_months:1} months): hours beyond it "
      "priced at the reserved rate"},
    {FindingCode::no_price,
     "no price known for this cluster: cost_usd is null (give {field})"},
    {FindingCode::offering_network_unknown,
     "{offering}: multi-node shapes skipped, its network bandwidth is unknown (give the inter-node bandwidth "
      "per GPU)"},
    {FindingCode::offering_price_unknown,
     "{offering}: price unknown; its plans are ranked on time only and never meet a budget (give a price)"},
    {FindingCode::pareto_without_prices,
     "no plan that meets the constraints has a known price, so there is no (time, cost) front: plans ranked by "
     "time (give a price)"},
    {FindingCode::note,
     "{text}"},
};
constexpr bool in_code_order() {
  for (std::size_t i = 0; i < std::size(kTemplates); ++i) {
    if (static_cast<std::size_t>(kTemplates[i].code) != i) return false;
  }
  return std::size(kTemplates) == static_cast<std::size_t>(FindingCode::note) + 1;
}
static_assert(in_code_order(), "kTemplates must list every FindingCode once, in order");

}  // namespace

std::string finding_template(const sim::Finding& f) {
  std::string t(kTemplates[static_cast<std::size_t>(f.code)].text);
  if (f.code == FindingCode::cost_input_unknown || f.code == FindingCode::cost_part_unknown) {
    t.replace(t.find("{input}"), 7, cost_input_name(f.field));
  }
  return t;
}

std::string fill(std::string_view tmpl, const sim::Finding& f, const NumberText& number) {
  std::string out;
  out.reserve(tmpl.size() + 32);
  std::size_t i = 0;
  while (i < tmpl.size()) {
    const std::size_t open = tmpl.find('{', i);
    const std::size_t close = open == std::string_view::npos ? open : tmpl.find('}', open);
    if (close == std::string_view::npos) {
      out.append(tmpl.substr(i));
      break;
    }
    out.append(tmpl.substr(i, open - i));
    std::string_view key = tmpl.substr(open + 1, close - open - 1);
    int decimals = -1;
    if (const std::size_t colon = key.find(':'); colon != std::string_view::npos) {
      decimals = std::atoi(std::string(key.substr(colon + 1)).c_str());
      key = key.substr(0, colon);
    }
    const sim::FindingValue* value = nullptr;
    for (const auto& v : f.values) {
      if (v.name == key) value = &v;
    }
    if (key == "field") {
      out += f.field;
    } else if (value) {
      out += value->is_text ? value->text : number(value->number, decimals);
    } else {
      out.append(tmpl.substr(open, close - open + 1));
    }
    i = close + 1;
  }
  return out;
}

std::string render(const sim::Finding& f) { return fill(finding_template(f), f, format::in_sentence); }

std::vector<std::string> render(const std::vector<sim::Finding>& findings) {
  std::vector<std::string> out;
  out.reserve(findings.size());
  for (const auto& f : findings) out.push_back(render(f));
  return out;
}

std::string error_band_basis(const sim::ErrorBand& b) {
  using format::fixed;
  std::string s = "p10-p90 of measured/predicted tokens/s over " + std::to_string(b.runs) + " validated ";
  s += b.category == sim::kAllCategory ? std::string("runs") : b.category + " runs";
  if (!b.asked.empty() && b.asked != b.category) s += " (too few validated " + b.asked + " runs for their own band)";
  if (const auto& w = b.widened) {
    std::string what;
    if (w->gemm) what = "GEMM " + fixed(w->gemm_low, 2) + "-" + fixed(w->gemm_high, 2);
    if (w->attention) {
      what += what.empty() ? "" : ", ";
      what += "attention " + fixed(w->attention_low, 2) + "-" + fixed(w->attention_high, 2);
    }
    s += "; widened x" + fixed(w->down, 2) + " / x" + fixed(w->up, 2) + ": no published ";
    s += w->gemm && w->attention ? "GEMM or attention" : (w->gemm ? "GEMM" : "attention");
    s += " efficiency for this GPU (other GPUs' published range: " + what + " of peak)";
  }
  return s;
}

}  // namespace capplan::data
