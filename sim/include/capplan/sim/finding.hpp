// SPDX-License-Identifier: Apache-2.0
// What the model wants a user to know about an estimate or a plan, as data: a code, the scenario
// field it is about, and the values it names. sim/ never words a finding; data/ (findings.hpp)
// renders the English the CLI prints, the GUI renders the same templates through tr().
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace capplan::sim {

enum class FindingCode : std::uint8_t {
  // The layout (estimate/estimate.cpp, search/strategy_search.cpp).
  no_layout_fits,                // evaluated: layouts evaluated; the least-memory one is shown
  uneven_stages,                 // layers, stages (pp x virtual stages)
  tp_wider_than_node,            // tp, gpus_per_node
  sequence_parallel_without_tp,  //
  interleave_micro_batches,      // micro_batches, pp: Megatron-LM requires a multiple
  zero_with_pipeline,            // ZeRO >= 2 with pp > 1 (DeepSpeed refuses it)
  pipeline_never_fills,          // micro_batches, pp
  does_not_fit,                  // need_gib, have_gib
  // Goodput and cost (goodput/goodput.cpp).
  no_storage_tier,                // node_gb_per_s: the network stand-in (no default tier known)
  storage_tier_assumed,           // tier (text), write_gb_per_s, read_gb_per_s: the catalog's default tier
  data_loading_bound,             // bound (text: storage, cpu), gb_per_s, bytes_per_token, slowdown
  spot_preemptions_unknown,       // field: pricing.spot.preemptions_per_node_hour
  local_tier_without_upload,      // tier (text)
  checkpoint_interval_below_step,     // given_s, floor_s: shorter than one step
  checkpoint_interval_below_persist,  // given_s, floor_s: shorter than persisting one checkpoint
  checkpoint_every_few_steps,     // interval_s, steps, min_steps: fewer steps between checkpoints than plausible
  checkpoint_stalls_dominate,     // stall_pct, max_pct: checkpoint stalls take more compute time than plausible
  restart_overhead_assumed,       // restart_s
  interruptions_unbounded,        // mtbi_h
  recovery_dominates,             // mtbi_h
  cost_input_unknown,             // field: the input to give; no total without it
  cost_part_unknown,              // field: the input to give; the total leaves this part out
  reserved_commitment_short,      // committed, used (GPUs)
  reserved_term_short,            // run_months, term_months
  no_price,                       // field: pricing.usd_per_gpu_hour
  // The planner (search/search.cpp).
  offering_network_unknown,  // offering (text): multi-node shapes skipped
  offering_price_unknown,    // offering (text): ranked on time only
  pareto_without_prices,     // no plan that meets the constraints has a price: ranked by time
  // Words from data/ or a front end (profile coverage, error bands), carried with the estimate.
  note,  // text
};

// One named value of a finding: a number, or a text (a tier id, a bound, a note).
struct FindingValue {
  std::string_view name;
  double number = 0;
  std::string text;
  bool is_text = false;
  bool operator==(const FindingValue&) const = default;
};

struct Finding {
  FindingCode code = FindingCode::note;
  std::string field;  // the scenario field it is about ("strategy.tp"), or empty
  std::vector<FindingValue> values;

  // The value named `name` (0 / empty when absent).
  double number(std::string_view name) const {
    for (const auto& v : values) {
      if (v.name == name) return v.number;
    }
    return 0;
  }
  const std::string& text(std::string_view name) const {
    static const std::string kEmpty;
    for (const auto& v : values) {
      if (v.name == name) return v.text;
    }
    return kEmpty;
  }
  bool operator==(const Finding&) const = default;
};

// A finding with numeric values: finding(code, field, {{"tp", 16}, {"gpus_per_node", 8}}).
inline Finding finding(FindingCode code, std::string field = {},
                       std::initializer_list<std::pair<std::string_view, double>> numbers = {}) {
  Finding f{code, std::move(field), {}};
  for (const auto& [name, v] : numbers) f.values.push_back({name, v, {}});
  return f;
}

// A finding with one text value: text_finding(code, "offering", "aws-p5.48xlarge").
inline Finding text_finding(FindingCode code, std::string_view name, std::string text) {
  return Finding{code, {}, {{name, 0, std::move(text), true}}};
}

// A note in words from data/ or a front end (never from sim/).
inline Finding note(std::string text) { return Finding{FindingCode::note, {}, {{"text", 0, std::move(text), true}}}; }

inline bool has(const std::vector<Finding>& findings, FindingCode code) {
  for (const auto& f : findings) {
    if (f.code == code) return true;
  }
  return false;
}

}  // namespace capplan::sim
