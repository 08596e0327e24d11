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
  // The global batch (estimate/global_batch.cpp), asked in tokens: tokens, exact (tokens / seq_len),
  // seq_len, sequences (chosen), used_tokens, and granule / dp, within_pct.
  batch_rounded_to_layout,   // granule: dp x micro_batch (fixed, or 1 x micro_batch)
  batch_chosen_for_dp,       // dp: the data-parallel ways it allows; within_pct: the tolerance
  batch_forces_one_replica,  // sequences, replicas (DP room of the GPUs), suggested: loud
  // The layout (estimate/estimate.cpp, estimate/strategy_search.cpp).
  no_layout_fits,                // evaluated: layouts evaluated; the least-memory one is shown
  recompute_would_fit,           // need_gib, have_gib: the least-memory layout with full recompute
  offload_optimizer_would_fit,   // need_gib, have_gib: the least-memory layout with the optimizer on the host
  offload_params_would_fit,      // need_gib, have_gib: the same at ZeRO-3 with the parameters on the host too
  uneven_stages,                 // layers, stages (pp x virtual stages)
  tp_wider_than_node,            // tp, gpus_per_node
  sequence_parallel_without_tp,  //
  interleave_micro_batches,      // micro_batches, pp: Megatron-LM requires a multiple
  zero_with_pipeline,            // ZeRO >= 2 with pp > 1 (DeepSpeed refuses it)
  pipeline_never_fills,          // micro_batches, pp
  does_not_fit,                  // need_gib, have_gib
  offload_host_step,             // optimizer_s, step_s, host_gbps, host_gib (per node): the CPU step's rate is assumed
  zero3_hooks_host_bound,        // hooks_s, host_s, step_s, ms_per_layer: DeepSpeed's ZeRO-3 hooks on a host-bound step
  lora_adapters_cost_more_than_skipped_gradients,  // lora_step_s, full_step_s, adapter_s, skipped_s (per step, the
                                                   // busiest stage), rank, tp: LoRA slower than full fine-tuning
  mamba1_priced_as_mamba2,       // mamba_layers: a Mamba-1 mixer priced with Mamba-2's SSD kernels
  // A layout's rules (estimate/estimate.cpp check_layout; carried by Diagnostic::finding, the field
  // "strategy.<name>"). `got` is the value given.
  layout_not_positive,                    // got
  layout_zero_out_of_range,               // got
  layout_etp_needs_moe,                   // got
  layout_etp_divides_expert_ffn,          // expert_ffn_hidden, got
  layout_ep_needs_moe,                    // got
  layout_ep_divides_experts,              // experts, got
  layout_ep_divides_ranks,                // ranks (tp*dp*cp), ep, etp
  layout_moe_tp_needs_sequence_parallel,  //
  layout_module_recompute_needs_selective,  // recompute (text: the recompute given)
  layout_moe_act_recompute_needs_moe,     //
  layout_offload_params_needs_zero3,      // zero
  layout_cp_divides_sequence,             // seq_len, cp
  layout_tp_divides_heads,                // heads, got
  layout_tp_divides_ffn,                  // ffn_hidden, got
  layout_product_is_not_the_gpus,         // gpus, tp, pp, dp, cp, product
  layout_pp_exceeds_layers,               // layers, got
  layout_stages_exceed_layers,            // layers, pp, virtual_stages
  layout_stage_layers_negative,           // got
  layout_stage_layers_need_pipeline,      // pp
  layout_stage_layers_leave_none,         // first, last, layers, middle (0 stages left: they must add up)
  layout_stage_layers_leave_too_few,      // first, last, layers, middle
  layout_stage_layers_below_virtual,      // virtual_stages
  layout_interleaving_needs_pipeline,     // got
  layout_batch_not_divisible,             // global_batch, micro_batch, dp, per_step
  no_valid_layout,                        // gpus: estimate's auto search found no layout passing the rules
  // A measured layer step's shape (lowering/layer_step.cpp check; Diagnostic::finding, field "step.<name>").
  step_not_positive,           // got
  step_heads_divide_hidden,    // hidden, got
  step_kv_heads_divide_heads,  // heads, got (0 means heads)
  // Goodput and cost (goodput/goodput.cpp, data_loading.cpp, run_cost.cpp).
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
  // The planner (search/search.cpp, plan_ranking.cpp).
  offering_network_unknown,  // offering (text): multi-node shapes skipped
  offering_price_unknown,    // offering (text): ranked on time only
  pareto_without_prices,     // no plan that meets the constraints has a price: ranked by time
  // The error band (estimate/uncertainty.cpp).
  band_extended_to_estimate,  // ratio_p10, ratio_p90 (the runs' p10-p90), runs; text category: the
                              // category's p10-p90 lay on one side of the estimate, so the band is the 80%
                              // of runs nearest it (sim/uncertainty.hpp band_quantiles)
  // The planner (search/plan_ranking.cpp): the chosen plan's category is one where validated runs were
  // all (p90) slower than the model predicted.
  plan_regime_optimistic,     // ratio_p10, ratio_p90, runs, time_days (the plan's), likely_days (at the
                              // runs' middle ratio); text category; has_alternative (1: runner-up "regime")
  // A search request's input errors (search/search.cpp validate; Diagnostic::finding). `got` is the value given.
  search_below_one,           // got (top_k, a node count, an offering's gpus_per_node)
  search_threads_negative,    // got
  search_max_gpus_negative,   // got
  search_deadline_not_positive,  // days
  search_budget_not_positive,    // usd
  search_gpu_without_memory,     // gpu (text: its id)
  search_price_negative,         //
  search_batch_empty,            //
  search_currency_rate_invalid,  // got: an offering's rate to US dollars
  search_no_shape_left,          // max_gpus: every shape is too large or lacks a network bandwidth
  // What a calibrated profile did not cover (cost/calibrated_cost.cpp coverage(); field "profile" when
  // the finding rides on an estimate, empty otherwise). across_nodes: 1 across nodes, 0 inside a node.
  profile_other_device,               // device, gpu (text), operations (priced from the profile's measurements),
                                      // datasheet (priced from the datasheet): the only profile finding then
  profile_fused_attention,            // fused (flash) attention not measured
  profile_gemm_not_measured,          // dtype (text)
  profile_gemm_too_few_shapes,        // dtype (text), shapes
  profile_gemm_outside_range,         // dtype (text), m, n, k, min_m, max_m, min_n, max_n, min_k, max_k
  profile_gemm_poor_fit,              // dtype (text), residual_pct, r2
  profile_gemm_above_peak,            // dtype (text), tflops (the profile's fastest), peak_tflops (datasheet),
                                      // operations (GEMMs of that dtype held to the peak)
  profile_memory_outside_range,       // op, pattern (text), min_bytes, max_bytes
  profile_memory_outside_sizes,       // op, pattern (text)
  profile_memory_not_measured,        // op, pattern (text)
  profile_memory_poor_fit,            // pattern (text), residual_pct, r2
  profile_memory_above_peak,          // pattern (text), gbps (the profile's fastest against its ceiling),
                                      // peak_gbps (datasheet HBM), operations (memory ops held to it)
  profile_tier_not_scalable,          // kind, tier (text)
  profile_tier_scaled,                // kind, tier (text)
  profile_collective_not_measured,    // kind (text), across_nodes
  profile_collective_outside_range,   // kind (text), across_nodes, bytes, ranks, min_bytes, max_bytes
  profile_collective_ranks_not_measured,  // kind (text), across_nodes, ranks, measured (text: "8, 16")
  profile_collective_poor_fit,        // kind (text), across_nodes, ranks, residual_pct, r2
  profile_collective_above_link,      // kind (text), across_nodes, ranks, busbw_gbps (the profile's fastest
                                      // against its ceiling), ceiling_gbps, operations (collectives held to it)
  // The planner's explanation of its chosen plan, in order (data/plan_text.cpp explanation_parts):
  // a lead, its constraints, then the plan. Numbers: days, usd, fractions (share, mfu), GiB.
  why_closest,             // the lead when no plan meets the constraints
  why_cheapest,            //
  why_fastest,             //
  why_fastest_on_front,    //
  why_meets_deadline,      // days
  why_within_budget,       // usd
  why_and_within_budget,   // usd (after a deadline)
  why_plan,                // shape (text), layout (text), days
  why_with_failures,       // steady_days: the steady-state time, when failures and checkpoints add to it
  why_cost,                // usd
  why_step,                // step_s, compute (fraction of the step)
  why_recompute,           // share
  why_bubble,              // share
  why_tp_comm,             // share
  why_pp_comm,             // share
  why_dp_comm,             // share
  why_ep_comm,             // share
  why_cp_comm,             // share
  why_optimizer,           // share
  why_mfu_and_memory,      // mfu, memory_gib, capacity_gib
  // A runner-up against the chosen plan (data::runner_up_parts), in order: what changes, then what it does.
  runner_up_more_nodes,    // times, from, to (node counts)
  runner_up_fewer_nodes,   // times, from, to
  runner_up_other_nodes,   // from, to
  runner_up_offering,      // shape, chosen_shape (text)
  runner_up_layout,        // diff (text: "tp 8 instead of 4, ...")
  runner_up_same_layout,   // no field differs
  runner_up_fastest,       // shape (text)
  runner_up_cheapest,      // shape (text)
  runner_up_regime,        // shape (text): the best plan of a category the model is not known to be optimistic in
  runner_up_dimension,     // dimension (text: one this list does not know)
  runner_up_faster,        // share (of the chosen time)
  runner_up_slower,        // share
  runner_up_cheaper,       // share (of the chosen cost)
  runner_up_dearer,        // share
  runner_up_cost_unknown,  //
  runner_up_misses_deadline,  //
  runner_up_over_budget,      //
  runner_up_price_unknown,    //
  // The planner's unmet constraint (data::failure_parts), in order.
  unmet_no_layout,              //
  unmet_memory,                 //
  unmet_memory_closest,         // shape, layout (text), need_gib, have_gib
  unmet_memory_remedy,          // remedy (text): what would make the closest plan fit (a rendered *_would_fit)
  unmet_deadline,               // deadline_days, took_days
  unmet_deadline_nor_budget,    // deadline_days, budget_usd, took_days
  unmet_budget,                 // budget_usd
  unmet_budget_cheapest,        // cost_usd
  unmet_budget_no_price,        //
  unmet_both,                   // deadline_days, budget_usd, took_days
  unmet_both_cost,              // cost_usd
  unmet_both_unknown_price,     //
  unmet_closest_plan,           // shape, layout (text)
  // The planner's offerings (data/search_io: catalog prices, the scenario's own pricing).
  catalog_price_without_rate,    // offering, currency (text): a catalog price not in USD, no rate: unknown
  scenario_pricing_not_offered,  // instance (text): the scenario's pricing has no offering to apply to
  price_replaces_scenario_price, // offering, purchase (text), given_usd, file_usd: per GPU-hour
  // Why a serving layout cannot run (serve/replica.cpp check_serve_job) or meets no target
  // (serve/plan.cpp plan_serving): ServePlan::reason.
  serve_tp_pp_below_one,            // tp, pp
  serve_tp_divides_heads,           // tp, heads
  serve_tp_and_kv_heads,            // tp, kv_heads: one must divide the other
  serve_pp_exceeds_layers,          // pp, layers
  serve_ep_layout,                  // ep, tp: ep is 1 or tp, for an MoE model
  serve_ep_divides_experts,         // ep, experts
  serve_hybrid_unsupported,         // mamba_layers
  serve_weights_need_tensor_cores,  // weights, compute, gpu (texts)
  serve_purchase_unsupported,       // purchase (text): spot capacity under a latency-bound service
  serve_kv_precision,               // kv (text)
  serve_tp_spans_nodes,             // tp, gpus_per_node
  serve_lengths_below_one,          // input, output (mean tokens)
  serve_rate_needed,                // rate
  serve_concurrency_needed,         // concurrency
  serve_prefix_hit_out_of_range,    // prefix_hit
  serve_engine_limits,              // max_num_seqs, max_num_batched_tokens
  serve_prompt_exceeds_batch,       // tokens (p99 prompt), max_num_batched_tokens
  serve_weights_leave_no_kv,        // weights_gib, activations_gib, reserve_gib, gpu (text)
  serve_kv_below_one_request,       // kv_tokens, longest (p99 input + output)
  serve_one_request_misses,         // metric (text: ttft, tpot, e2e), percentile
  serve_simulation_misses,          // metric (text), rate (requests/s per replica)
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

// Adds a text value to f (an id, a dtype, a pattern name: never a sentence).
inline Finding& with_text(Finding& f, std::string_view name, std::string text) {
  f.values.push_back({name, 0, std::move(text), true});
  return f;
}

// A note in words from data/ or a front end (never from sim/).
inline Finding note(std::string text) { return Finding{FindingCode::note, {}, {{"text", 0, std::move(text), true}}}; }

// Findings a front end shows first among the warnings: the result is probably not what the user
// meant (a batch that leaves no data parallelism makes a run several times slower).
inline bool loud(FindingCode code) { return code == FindingCode::batch_forces_one_replica; }

// A gap in a calibrated profile's coverage (the profile_* group).
constexpr bool is_profile_gap(FindingCode c) {
  return c >= FindingCode::profile_other_device && c <= FindingCode::profile_collective_above_link;
}

inline bool has(const std::vector<Finding>& findings, FindingCode code) {
  for (const auto& f : findings) {
    if (f.code == code) return true;
  }
  return false;
}

}  // namespace capplan::sim
