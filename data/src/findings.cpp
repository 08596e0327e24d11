// SPDX-License-Identifier: Apache-2.0
#include "capplan/data/findings.hpp"

#include <cmath>
#include <cstdlib>
#include <string>

#include "capplan/data/format.hpp"

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

}  // namespace

std::string finding_template(const sim::Finding& f) {
  switch (f.code) {
    case FindingCode::no_layout_fits:
      return "no layout fits in memory: showing the one that needs the least ({evaluated} layouts evaluated)";
    case FindingCode::uneven_stages:
      return "layers ({layers}) do not divide evenly into pp*virtual_stages ({stages}): uneven stages, the slowest "
             "sets the pace";
    case FindingCode::tp_wider_than_node:
      return "tp ({tp}) is wider than a node ({gpus_per_node} GPUs): tensor-parallel traffic crosses the network";
    case FindingCode::sequence_parallel_without_tp: return "sequence_parallel has no effect with tp = 1";
    case FindingCode::interleave_micro_batches:
      return "interleaved schedule with micro-batches ({micro_batches}) not a multiple of pp ({pp}): Megatron-LM "
             "requires it";
    case FindingCode::zero_with_pipeline:
      return "ZeRO stage >= 2 with pipeline parallelism is not supported by DeepSpeed";
    case FindingCode::pipeline_never_fills:
      return "fewer micro-batches ({micro_batches}) than pipeline stages ({pp}): the pipeline never fills";
    case FindingCode::does_not_fit:
      return "does not fit in memory: needs {need_gib} GiB per GPU, the GPU has {have_gib} GiB";
    case FindingCode::no_storage_tier:
      return "no storage tier given: checkpoints and data assumed to move at the node's network bandwidth "
             "({node_gb_per_s:1} GB/s per node), an optimistic bound; give storage.tier or storage.write_gb_per_s / "
             "storage.read_gb_per_s (storage cost not included)";
    case FindingCode::data_loading_bound:
      return "data loading is the bottleneck ({bound}): it needs {gb_per_s:2} GB/s ({bytes_per_token:1} "
             "bytes/token); training slows by x{slowdown:2}";
    case FindingCode::spot_preemptions_unknown:
      return "spot: the preemption rate is unknown, so no preemptions are modelled; give {field}";
    case FindingCode::local_tier_without_upload:
      return "storage tier '{tier}' is node-local and no upload tier is given: a checkpoint on a failed node is lost "
             "with it (modelled as durable; give {field})";
    case FindingCode::checkpoint_interval_below_step:
      return "{field} ({given_s:1} s) is shorter than one step ({floor_s:1} s): using {floor_s:1} s";
    case FindingCode::checkpoint_interval_below_persist:
      return "{field} ({given_s:1} s) is shorter than the time to persist a checkpoint ({floor_s:1} s): using "
             "{floor_s:1} s";
    case FindingCode::restart_overhead_assumed:
      return "restart overhead (relaunch + initialisation) assumed {restart_s:0} s before the checkpoint load; "
             "measure yours and give {field}";
    case FindingCode::interruptions_unbounded:
      return "interruptions come faster (every {mtbi_h:2} h) than the job can restart and make progress: the "
             "expected time to train is unbounded";
    case FindingCode::recovery_dominates:
      return "checkpoint interval + restart is more than half the mean time between interruptions ({mtbi_h:2} h): "
             "most time goes to recovery";
    case FindingCode::cost_input_unknown:
      return "total cost: " + std::string(cost_input_name(f.field)) + " is unknown; give {field}";
    case FindingCode::cost_part_unknown:
      return "total cost: " + std::string(cost_input_name(f.field)) +
             " is unknown, so it is left out of the total; give {field}";
    case FindingCode::reserved_commitment_short:
      return "{field} ({committed:0}) is less than the GPUs used ({used:0}): the extra GPUs are priced at the "
             "reserved rate too";
    case FindingCode::reserved_term_short:
      return "the run ({run_months:1} months) outlasts the reserved term ({term_months:1} months): hours beyond it "
             "priced at the reserved rate";
    case FindingCode::no_price: return "no price known for this cluster: cost_usd is null (give {field})";
    case FindingCode::offering_network_unknown:
      return "{offering}: multi-node shapes skipped, its network bandwidth is unknown (give the inter-node bandwidth "
             "per GPU)";
    case FindingCode::offering_price_unknown:
      return "{offering}: price unknown; its plans are ranked on time only and never meet a budget (give a price)";
    case FindingCode::note: return "{text}";
  }
  return "{text}";
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

}  // namespace capplan::data
