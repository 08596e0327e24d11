// SPDX-License-Identifier: Apache-2.0
// The words of every finding: one template per sim::FindingCode, in the code's order
// (finding_text.cpp fills them).
#include "capplan/data/findings.hpp"

#include <cmath>
#include <cstdlib>
#include <iterator>
#include <string>

#include "capplan/data/format.hpp"
#include "capplan/sim/estimate/uncertainty.hpp"

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
    {FindingCode::batch_rounded_to_layout,
     "{field}: {tokens} tokens are {exact:2} sequences of {seq_len}: using {sequences} sequences = {used_tokens} "
      "tokens, the nearest multiple of micro_batch*dp ({granule})"},
    {FindingCode::batch_chosen_for_dp,
     "{field}: {tokens} tokens are {exact:2} sequences of {seq_len}: using {sequences} sequences = {used_tokens} "
      "tokens, the count within {within_pct:0}% that lets data parallelism take the most GPUs (dp up to {dp}); "
      "give global_batch (sequences) or a binary suffix (4Mi = 4194304) for an exact batch"},
    {FindingCode::batch_forces_one_replica,
     "the global batch ({sequences} sequences) shares no factor with the {replicas} data-parallel ways the GPUs "
      "allow: dp = 1, one model replica spread over every GPU, which is far slower; use a batch such as "
      "{suggested} sequences"},
    {FindingCode::no_layout_fits,
     "no layout fits in memory: showing the one that needs the least ({evaluated} layouts evaluated)"},
    {FindingCode::recompute_would_fit,
     "with full recompute (strategy.recompute: \"full\") that layout would fit: {need_gib} GiB of {have_gib} GiB "
      "per GPU, at the cost of a second forward pass in backward"},
    {FindingCode::offload_optimizer_would_fit,
     "with the optimizer offloaded to the host (strategy.offload_optimizer: true) that layout would fit: "
      "{need_gib} GiB of {have_gib} GiB per GPU, at the cost of a CPU optimizer step"},
    {FindingCode::offload_params_would_fit,
     "with ZeRO-3 and the parameters offloaded to the host (strategy.zero: 3, strategy.offload_params: true) that "
      "layout would fit: {need_gib} GiB of {have_gib} GiB per GPU, at the cost of host copies and a CPU optimizer "
      "step"},
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
    {FindingCode::offload_host_step,
     "offload: the optimizer runs on the CPU, {optimizer_s} s of each {step_s} s step at an assumed {host_gbps} GB/s "
      "of host memory per node (measured CPU Adam: 42-83 GB/s per node; hosts differ), and each node holds "
      "{host_gib} GiB of optimizer state, gradients and offloaded parameters in host memory"},
    {FindingCode::zero3_hooks_host_bound,
     "ZeRO-3: DeepSpeed's parameter hooks take {hooks_s} s of host time per step ({ms_per_layer} ms per layer and "
      "pass, the recipe's figure), and the {step_s} s step waits {host_s} s for its host; ZeRO-2, where it fits, "
      "has no such hooks"},
    {FindingCode::lora_adapters_cost_more_than_skipped_gradients,
     "LoRA is slower here than full fine-tuning of the same layout would be ({lora_step_s} s against {full_step_s} s "
      "per step): the rank-{rank} adapters take {adapter_s} s of each step and the frozen weights' gradients they "
      "skip only {skipped_s} s, because the adapters' GEMMs and adds are memory-bound passes over whole activations "
      "(the gathered sequence, the full hidden width) that tensor parallelism (tp {tp}) does not split; a narrower "
      "tensor-parallel layout makes them cheaper, and LoRA still saves the base's gradients and optimizer state in "
      "memory"},
    {FindingCode::mamba1_priced_as_mamba2,
     "the model's {mamba_layers:0} Mamba layers are Mamba-1 (selective scan), priced with Mamba-2's SSD kernels: "
      "capplan lowers only the Mamba-2 mixer, so treat their time as Mamba-2's"},
    {FindingCode::layout_not_positive, "must be a positive integer; got {got}"},
    {FindingCode::layout_zero_out_of_range, "must be 0, 1, 2 or 3; got {got}"},
    {FindingCode::layout_etp_needs_moe, "expert tensor parallelism needs an MoE model; got {got}"},
    {FindingCode::layout_etp_divides_expert_ffn, "must divide expert_ffn_hidden ({expert_ffn_hidden}); got {got}"},
    {FindingCode::layout_ep_needs_moe, "expert parallelism needs an MoE model; got {got}"},
    {FindingCode::layout_ep_divides_experts, "must divide the number of routed experts ({experts}); got {got}"},
    {FindingCode::layout_ep_divides_ranks, "ep*etp must divide tp*dp*cp ({ranks}); got {ep}*{etp}"},
    {FindingCode::layout_moe_tp_needs_sequence_parallel,
     "MoE with tp > 1 needs sequence parallelism (Megatron-Core); got false"},
    {FindingCode::layout_module_recompute_needs_selective,
     "module recompute needs recompute selective; got recompute {recompute}"},
    {FindingCode::layout_moe_act_recompute_needs_moe,
     "recomputing the experts' activation or the MoE layer needs an MoE model; got true"},
    {FindingCode::layout_offload_params_needs_zero3,
     "offloading the parameters needs zero 3 (sharded parameters); got true with zero {zero}"},
    {FindingCode::layout_cp_divides_sequence, "seq_len ({seq_len}) must be a multiple of 2*cp; got cp {cp}"},
    {FindingCode::layout_tp_divides_heads, "must divide the number of attention heads ({heads}); got {got}"},
    {FindingCode::layout_tp_divides_ffn, "must divide ffn_hidden ({ffn_hidden}); got {got}"},
    {FindingCode::layout_product_is_not_the_gpus,
     "tp*pp*dp*cp must equal the number of GPUs ({gpus}); got {tp}*{pp}*{dp}*{cp} = {product}"},
    {FindingCode::layout_pp_exceeds_layers, "more pipeline stages than layers ({layers}); got {got}"},
    {FindingCode::layout_stages_exceed_layers,
     "pp*virtual_stages must not exceed the layers ({layers}); got {pp}*{virtual_stages}"},
    {FindingCode::layout_stage_layers_negative,
     "must be a positive number of layers (or 0 for an even split); got {got}"},
    {FindingCode::layout_stage_layers_need_pipeline,
     "setting the layers of the first or last stage needs pp >= 2; got pp {pp}"},
    {FindingCode::layout_stage_layers_leave_none,
     "first_stage_layers + last_stage_layers ({first} + {last}) must leave at least one layer per remaining stage "
     "and chunk of the {layers} layers ({middle} stages: they must add up to the layers)"},
    {FindingCode::layout_stage_layers_leave_too_few,
     "first_stage_layers + last_stage_layers ({first} + {last}) must leave at least one layer per remaining stage "
     "and chunk of the {layers} layers ({middle} stages)"},
    {FindingCode::layout_stage_layers_below_virtual,
     "each stage needs at least one layer per virtual stage ({virtual_stages})"},
    {FindingCode::layout_interleaving_needs_pipeline, "interleaving needs pipeline parallelism (pp > 1); got {got}"},
    {FindingCode::layout_batch_not_divisible,
     "global batch ({global_batch} sequences) must be a multiple of micro_batch*dp ({micro_batch}*{dp} = "
     "{per_step})"},
    {FindingCode::no_valid_layout,
     "no valid parallel layout exists for {gpus} GPUs with the fixed strategy fields and this model/batch"},
    {FindingCode::step_not_positive, "must be a positive integer; got {got}"},
    {FindingCode::step_heads_divide_hidden, "must divide hidden ({hidden}); got {got}"},
    {FindingCode::step_kv_heads_divide_heads, "must divide heads ({heads}), or be 0 for heads; got {got}"},
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
    {FindingCode::band_extended_to_estimate,
     "the band is the 80% of runs nearest the estimate: measured/predicted p10-p90 was {ratio_p10:2}-{ratio_p90:2} "
     "on the {runs} validated {category} runs, on one side of the model; the estimate is the model's own figure, "
     "the band is how far such runs have been from it"},
    {FindingCode::plan_regime_optimistic,
     "the model is optimistic for this plan's kind of run: the {runs} validated {category} runs measured "
     "{ratio_p10:f3}-{ratio_p90:f3} of its throughput, so the chosen plan's {time_days:f1} days are likely about "
     "{likely_days:f1}; plans are ranked on the model's figures (--deadline-quantile p90 checks a deadline "
     "against the band's slow end)"},
    {FindingCode::search_below_one, "must be at least 1; got {got}"},
    {FindingCode::search_threads_negative, "must be >= 0 (0 = all cores); got {got}"},
    {FindingCode::search_max_gpus_negative, "must be >= 0 (0 = no limit); got {got}"},
    {FindingCode::search_deadline_not_positive, "must be a positive time; got {days:f3} days"},
    {FindingCode::search_budget_not_positive, "must be a positive amount; got {usd:f2} USD"},
    {FindingCode::search_gpu_without_memory, "GPU '{gpu}' has no memory capacity"},
    {FindingCode::search_price_negative, "must be a non-negative price"},
    {FindingCode::search_batch_empty, "must be at least 1 sequence"},
    {FindingCode::search_currency_rate_invalid, "needs a positive rate to US dollars; got {got:f6}"},
    {FindingCode::search_no_shape_left,
     "no cluster shape is left to search: every offering x node count exceeds max_gpus ({max_gpus}) or lacks a "
     "network bandwidth for several nodes"},
    {FindingCode::profile_other_device,
     "profile measured on {device} ({backend}), scenario GPU is {gpu}: {operations:f0} operations priced from another "
     "device's measurements ({datasheet:f0} from the datasheet); treat the result as that device's, not this GPU's"},
    {FindingCode::profile_fused_attention, "fused (flash) attention not measured; datasheet used"},
    {FindingCode::profile_gemm_not_measured, "gemm {dtype} not measured; datasheet used"},
    {FindingCode::profile_gemm_too_few_shapes,
     "gemm {dtype}: {shapes} measured shapes, too few for a fit, and this shape is not one of them; datasheet used"},
    {FindingCode::profile_gemm_outside_range,
     "gemm {dtype} m={m} n={n} k={k} outside the measured range (m {min_m}..{max_m}, n {min_n}..{max_n}, k "
     "{min_k}..{max_k}); datasheet used"},
    {FindingCode::profile_gemm_poor_fit, "gemm {dtype} "
     "fit is poor (RMS relative residual {residual_pct:f0}%, R^2 {r2:f2}); used, but treat these times as rough"},
    {FindingCode::profile_gemm_above_peak,
     "gemm {dtype} measured at up to {tflops:f0} TFLOP/s, above this GPU's datasheet peak of {peak_tflops:f0}: the "
     "profile comes from a faster device or its fit is wrong; those {operations:f0} GEMMs are priced at the peak"},
    {FindingCode::profile_memory_outside_range,
     "memory '{op}' ({pattern}) outside the measured range ({min_bytes:B}..{max_bytes:B}); datasheet used"},
    {FindingCode::profile_memory_outside_sizes,
     "memory '{op}' ({pattern}) outside the measured sizes and no fit; datasheet used"},
    {FindingCode::profile_memory_not_measured, "memory pattern '{pattern}' not measured ('{op}'); datasheet used"},
    {FindingCode::profile_memory_poor_fit, "memory pattern '{pattern}' "
     "fit is poor (RMS relative residual {residual_pct:f0}%, R^2 {r2:f2}); used, but treat these times as rough"},
    {FindingCode::profile_memory_above_peak,
     "memory pattern '{pattern}' measured at up to {gbps:f0} GB/s, above this GPU's datasheet HBM bandwidth of "
     "{peak_gbps:f0} GB/s: the profile comes from a faster device, a cache or a wrong fit; {operations:f0} memory "
     "ops are priced at the HBM bandwidth"},
    {FindingCode::profile_tier_not_scalable,
     "{kind} across tier '{tier}': no network measurement to scale; datasheet used"},
    {FindingCode::profile_tier_scaled,
     "{kind} across tier '{tier}' is beyond the measured tiers; measured network busbw scaled by the topology's "
     "tier bandwidths"},
    {FindingCode::profile_collective_not_measured, "{kind} {scope} not measured; datasheet used"},
    {FindingCode::profile_collective_outside_range,
     "{kind} {scope} {bytes:B} over {ranks} ranks outside the measured range ({min_bytes:B}..{max_bytes:B}); "
     "datasheet used"},
    {FindingCode::profile_collective_ranks_not_measured,
     "{kind} {scope} over {ranks} ranks not measured (measured: {measured} ranks); datasheet used"},
    {FindingCode::profile_collective_poor_fit, "{kind} {scope} over {ranks} ranks "
     "fit is poor (RMS relative residual {residual_pct:f0}%, R^2 {r2:f2}); used, but treat these times as rough"},
    {FindingCode::profile_collective_above_link,
     "{kind} {scope} over {ranks} ranks measured at up to {busbw_gbps:f0} GB/s busbw, above what this GPU's links "
     "carry ({ceiling_gbps:f0} GB/s): the profile comes from a faster fabric or its fit is wrong; {operations:f0} "
     "collectives are priced at the links' ceiling"},
    {FindingCode::why_closest, "Closest plan"},
    {FindingCode::why_cheapest, "Cheapest plan"},
    {FindingCode::why_fastest, "Fastest plan"},
    {FindingCode::why_fastest_on_front, "Fastest plan on the Pareto front"},
    {FindingCode::why_meets_deadline, " that meets the deadline of {days:s3} days"},
    {FindingCode::why_within_budget, " within the budget of {usd:usd}"},
    {FindingCode::why_and_within_budget, " and within the budget of {usd:usd}"},
    {FindingCode::why_plan, ": {shape}, {layout}: {days:s3} days"},
    {FindingCode::why_with_failures, " with failures and checkpoints ({steady_days:s3} days steady)"},
    {FindingCode::why_cost, ", {unit}{amount:money}"},
    {FindingCode::why_step, ". Step {step_s:s3} s: compute {compute:pct}"},
    {FindingCode::why_recompute, " (recompute {share:pct})"},
    {FindingCode::why_bubble, ", pipeline bubble {share:pct}"},
    {FindingCode::why_tp_comm, ", tp comm {share:pct}"},
    {FindingCode::why_pp_comm, ", pp comm {share:pct}"},
    {FindingCode::why_dp_comm, ", dp comm {share:pct}"},
    {FindingCode::why_ep_comm, ", ep comm {share:pct}"},
    {FindingCode::why_cp_comm, ", cp comm {share:pct}"},
    {FindingCode::why_optimizer, ", optimizer {share:pct}"},
    {FindingCode::why_mfu_and_memory, "; MFU {mfu:pct}; memory {memory_gib:f1} of {capacity_gib:f0} GiB per GPU."},
    {FindingCode::runner_up_more_nodes, "{times}x the nodes ({from} -> {to})"},
    {FindingCode::runner_up_fewer_nodes, "1/{times} the nodes ({from} -> {to})"},
    {FindingCode::runner_up_other_nodes, "{to} nodes instead of {from}"},
    {FindingCode::runner_up_offering, "{shape} instead of {chosen_shape}"},
    {FindingCode::runner_up_layout, "{diff}"},
    {FindingCode::runner_up_same_layout, "another layout"},
    {FindingCode::runner_up_fastest, "the fastest plan, {shape}"},
    {FindingCode::runner_up_cheapest, "the cheapest plan, {shape}"},
    {FindingCode::runner_up_regime, "the best plan where the model is not known to be optimistic, {shape}"},
    {FindingCode::runner_up_dimension, "{dimension}"},
    {FindingCode::runner_up_faster, ": {share:pct} faster"},
    {FindingCode::runner_up_slower, ": {share:pct} slower"},
    {FindingCode::runner_up_cheaper, ", {share:pct} cheaper"},
    {FindingCode::runner_up_dearer, ", {share:pct} dearer"},
    {FindingCode::runner_up_cost_unknown, ", cost not comparable (price unknown)"},
    {FindingCode::runner_up_misses_deadline, " (misses the deadline)"},
    {FindingCode::runner_up_over_budget, " (over the budget)"},
    {FindingCode::runner_up_price_unknown, " (price unknown)"},
    {FindingCode::unmet_no_layout,
     "no valid parallel layout exists for any cluster shape searched with this model, batch and the fixed strategy "
     "fields"},
    {FindingCode::unmet_memory, "no layout fits in GPU memory on any cluster shape searched"},
    {FindingCode::unmet_memory_closest,
     "; the closest, {shape} with {layout}, needs {need_gib:f1} GiB per GPU of {have_gib:f0}"},
    {FindingCode::unmet_memory_remedy, "; {remedy}"},
    {FindingCode::unmet_deadline, "no plan meets the deadline of {deadline_days:s3} days: the fastest takes "
                                  "{took_days:s3} days"},
    {FindingCode::unmet_deadline_nor_budget,
     "no plan meets the deadline of {deadline_days:s3} days (nor the budget of {budget_usd:usd}): the fastest takes "
     "{took_days:s3} days"},
    {FindingCode::unmet_budget, "no plan meets the budget of {budget_usd:usd}"},
    {FindingCode::unmet_budget_cheapest, ": the cheapest costs {cost_usd:usd}"},
    {FindingCode::unmet_budget_no_price, ": no offering searched has a known price (give one)"},
    {FindingCode::unmet_both,
     "no plan meets both the deadline of {deadline_days:s3} days and the budget of {budget_usd:usd}: the closest "
     "takes {took_days:s3} days"},
    {FindingCode::unmet_both_cost, " and costs {cost_usd:usd}"},
    {FindingCode::unmet_both_unknown_price, " at an unknown price"},
    {FindingCode::unmet_closest_plan, " ({shape}, {layout})"},
    {FindingCode::catalog_price_without_rate,
     "{offering}: its catalog price is in {currency} with no rate to US dollars (price.usd_per_unit), so it is "
     "treated as unknown, never as dollars (give a price)"},
    {FindingCode::scenario_pricing_not_offered,
     "the scenario's pricing (price, purchase terms, currency) applies to its own instance {instance}, which is not "
     "among the offerings searched: they are priced on demand at catalog prices"},
    {FindingCode::price_replaces_scenario_price,
     "{offering}: the price given ({given_usd:2} USD per GPU-hour) replaces the scenario's ({file_usd:2} USD); the "
     "scenario's purchase terms ({purchase}) and currency still apply"},
    {FindingCode::serve_tp_pp_below_one, "tp and pp must be at least 1"},
    {FindingCode::serve_tp_divides_heads, "tp {tp:0} does not divide the model's {heads:0} attention heads"},
    {FindingCode::serve_tp_and_kv_heads, "tp {tp:0} and the model's {kv_heads:0} KV heads: one must divide the other"},
    {FindingCode::serve_pp_exceeds_layers, "pp {pp:0} exceeds the model's layers"},
    {FindingCode::serve_ep_layout,
     "ep must be 1 (experts split over TP) or equal tp (whole experts per rank) for an MoE model"},
    {FindingCode::serve_ep_divides_experts, "ep {ep:0} does not divide the model's {experts:0} experts"},
    {FindingCode::serve_hybrid_unsupported,
     "serving hybrid Mamba models is not supported yet (their decode state update is not modelled)"},
    {FindingCode::serve_weights_need_tensor_cores,
     "{weights} weights need {compute} tensor cores, which {gpu} does not have (or the catalog does not know their "
     "rate)"},
    {FindingCode::serve_purchase_unsupported,
     "serve plans on_demand, reserved or on_prem capacity, not {purchase}: the provider reclaims {purchase} "
      "instances at will, taking their replicas' requests with them, so no latency target holds on them"},
    {FindingCode::serve_kv_precision, "KV-cache precision {kv} is not one of bf16, fp16, fp8"},
    {FindingCode::serve_tp_spans_nodes,
     "tp {tp:0} spans more than one node of {gpus_per_node:0} GPUs (tensor parallelism needs the scale-up domain)"},
    {FindingCode::serve_lengths_below_one, "input and output lengths must be at least 1 token"},
    {FindingCode::serve_rate_needed, "a request rate above 0 is needed"},
    {FindingCode::serve_concurrency_needed, "a concurrency of at least 1 is needed"},
    {FindingCode::serve_prefix_hit_out_of_range, "the prefix-cache hit rate must be in [0, 1)"},
    {FindingCode::serve_engine_limits, "the engine needs max_num_seqs and max_num_batched_tokens >= 1"},
    {FindingCode::serve_prompt_exceeds_batch,
     "prompts of {tokens:0} tokens exceed max_num_batched_tokens {max_num_batched_tokens:0} without chunked prefill"},
    {FindingCode::serve_weights_leave_no_kv,
     "the weights ({weights_gib:1} GiB per GPU), the engine's profiled activations ({activations_gib:1} GiB) and "
     "its reserve ({reserve_gib:1} GiB) leave no room for a KV cache on {gpu}"},
    {FindingCode::serve_kv_below_one_request,
     "the KV cache holds {kv_tokens:0} tokens, less than one p99 request ({longest:0})"},
    {FindingCode::serve_one_request_misses, "one request alone misses the {metric} target on this layout (p{percentile:0})"},
    {FindingCode::serve_simulation_misses,
     "the simulation misses the {metric} target even at {rate:2} requests/s per replica"},
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
  if (sim::is_profile_gap(f.code)) {
    // A collective's side of the node boundary; and, on an estimate, the "profile: " it comes from.
    if (const std::size_t at = t.find("{scope}"); at != std::string::npos) {
      t.replace(at, 7, f.number("across_nodes") != 0 ? "across nodes" : "inside a node");
    }
    if (!f.field.empty()) t.insert(0, "{field}: ");
  }
  return t;
}

}  // namespace capplan::data
