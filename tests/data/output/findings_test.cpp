// SPDX-License-Identifier: Apache-2.0
// The words of the model's findings: every code has a template whose placeholders all name a
// value the model gives, and the sentences are the ones `capplan estimate` has always printed.
#include "capplan/data/findings.hpp"

#include "capplan/data/format.hpp"
#include "capplan/sim/estimate/uncertainty.hpp"

#include <cmath>
#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace capplan::data {
namespace {

using sim::Finding;
using sim::FindingCode;
using sim::finding;

TEST(Findings, NumbersAreWholeOrOneDecimalByDefaultAndRoundedToTheDecimalsAsked) {
  EXPECT_EQ(format::in_sentence(16, -1), "16");
  EXPECT_EQ(format::in_sentence(194.37, -1), "194.4");
  EXPECT_EQ(format::in_sentence(0.05, -1), "0.1");  // llround(0.5) rounds half away from zero
  EXPECT_EQ(format::in_sentence(2.3456, 2), "2.35");
  EXPECT_EQ(format::in_sentence(2.5, 2), "2.5");   // trailing zeros dropped
  EXPECT_EQ(format::in_sentence(600, 0), "600");
  EXPECT_EQ(format::in_sentence(std::numeric_limits<double>::infinity(), 1), "inf");
  EXPECT_EQ(format::in_sentence(std::numeric_limits<double>::quiet_NaN(), -1), "inf");
}

TEST(Findings, LayoutSentencesNameTheirValues) {
  EXPECT_EQ(render(finding(FindingCode::tp_wider_than_node, "strategy.tp", {{"tp", 16}, {"gpus_per_node", 8}})),
            "tp (16) is wider than a node (8 GPUs): tensor-parallel traffic crosses the network");
  EXPECT_EQ(render(finding(FindingCode::does_not_fit, "", {{"need_gib", 194.37}, {"have_gib", 141}})),
            "does not fit in memory: needs 194.4 GiB per GPU, the GPU has 141 GiB");
  EXPECT_EQ(render(finding(FindingCode::no_layout_fits, "", {{"evaluated", 1234}})),
            "no layout fits in memory: showing the one that needs the least (1234 layouts evaluated)");
}

TEST(Findings, BatchSentencesNameTheTokensAskedAndTheSequencesChosen) {
  Finding chosen = finding(FindingCode::batch_chosen_for_dp, "training.global_batch_tokens",
                           {{"tokens", 4e6}, {"exact", 4e6 / 4096}, {"seq_len", 4096}, {"sequences", 1024},
                            {"used_tokens", 1024 * 4096}, {"dp", 512}, {"within_pct", 5}});
  EXPECT_EQ(render(chosen),
            "training.global_batch_tokens: 4000000 tokens are 976.56 sequences of 4096: using 1024 sequences = "
            "4194304 tokens, the count within 5% that lets data parallelism take the most GPUs (dp up to 512); give "
            "global_batch (sequences) or a binary suffix (4Mi = 4194304) for an exact batch");
  Finding rounded = finding(FindingCode::batch_rounded_to_layout, "training.global_batch_tokens",
                            {{"tokens", 16e6}, {"exact", 16e6 / 4096}, {"seq_len", 4096}, {"sequences", 3968},
                             {"used_tokens", 3968 * 4096}, {"granule", 128}});
  EXPECT_EQ(render(rounded),
            "training.global_batch_tokens: 16000000 tokens are 3906.25 sequences of 4096: using 3968 sequences = "
            "16252928 tokens, the nearest multiple of micro_batch*dp (128)");
  const Finding prime = finding(FindingCode::batch_forces_one_replica, "training.global_batch",
                                {{"sequences", 977}, {"replicas", 512}, {"suggested", 1024}});
  EXPECT_EQ(render(prime),
            "the global batch (977 sequences) shares no factor with the 512 data-parallel ways the GPUs allow: dp = "
            "1, one model replica spread over every GPU, which is far slower; use a batch such as 1024 sequences");
  EXPECT_TRUE(sim::loud(prime.code));
  EXPECT_FALSE(sim::loud(rounded.code));
}

TEST(Findings, CostSentencesNameTheInputByItsField) {
  EXPECT_EQ(render(finding(FindingCode::cost_input_unknown, "pricing.spot.usd_per_gpu_hour")),
            "total cost: the spot price is unknown; give pricing.spot.usd_per_gpu_hour");
  EXPECT_EQ(render(finding(FindingCode::cost_part_unknown, "storage.usd_per_gb_month")),
            "total cost: the storage price for checkpoints and data is unknown, so it is left out of the total; "
            "give storage.usd_per_gb_month");
  EXPECT_EQ(render(finding(FindingCode::checkpoint_interval_below_step, "reliability.checkpoint_interval_s",
                           {{"given_s", 0.5}, {"floor_s", 2.25}})),
            "reliability.checkpoint_interval_s (0.5 s) is shorter than one step (2.3 s): using 2.3 s");
}

TEST(Findings, TextValuesAreInsertedAsTheyAreEvenWhenEmpty) {
  Finding f = sim::text_finding(FindingCode::local_tier_without_upload, "tier", "");
  f.field = "storage.upload_tier";
  EXPECT_EQ(render(f).rfind("storage tier '' is node-local", 0), 0u) << render(f);
  EXPECT_EQ(render(sim::note("profile: gemm fp8 not measured; datasheet used")),
            "profile: gemm fp8 not measured; datasheet used");
}

TEST(Findings, FillKeepsUnknownPlaceholdersAndUsesTheSurfacesNumbers) {
  const Finding f = finding(FindingCode::pipeline_never_fills, "strategy.pp", {{"micro_batches", 4}, {"pp", 8}});
  const auto stars = [](double v, int) {
    std::string s(1, '*');  // built piecewise: g++ 12 warns (-Wrestrict) falsely on "*" + string
    s += std::to_string(static_cast<int>(v));
    s += '*';
    return s;
  };
  EXPECT_EQ(fill("{micro_batches} < {pp} in {field}; {other}", f, stars), "*4* < *8* in strategy.pp; {other}");
  EXPECT_EQ(fill("unclosed {pp", f, stars), "unclosed {pp");
}

using Numbers = std::initializer_list<std::pair<std::string_view, double>>;

Finding with(Finding f, std::string_view name, std::string text) {
  sim::with_text(f, name, std::move(text));
  return f;
}

// Each layout rule's finding (as sim::check_layout gives it) and the sentence `capplan estimate`
// has always printed for it (after "scenario#/strategy/<field>: ").
std::vector<std::pair<Finding, std::string>> layout_sentences() {
  const auto n = [](FindingCode c, const char* field, Numbers v) { return finding(c, field, v); };
  using C = FindingCode;
  return {
      {n(C::layout_not_positive, "strategy.tp", {{"got", 0}}), "must be a positive integer; got 0"},
      {n(C::layout_zero_out_of_range, "strategy.zero", {{"got", 5}}), "must be 0, 1, 2 or 3; got 5"},
      {n(C::layout_etp_needs_moe, "strategy.etp", {{"got", 2}}),
       "expert tensor parallelism needs an MoE model; got 2"},
      {n(C::layout_etp_divides_expert_ffn, "strategy.etp", {{"expert_ffn_hidden", 14336}, {"got", 3}}),
       "must divide expert_ffn_hidden (14336); got 3"},
      {n(C::layout_ep_needs_moe, "strategy.ep", {{"got", 2}}), "expert parallelism needs an MoE model; got 2"},
      {n(C::layout_ep_divides_experts, "strategy.ep", {{"experts", 8}, {"got", 16}}),
       "must divide the number of routed experts (8); got 16"},
      {n(C::layout_ep_divides_ranks, "strategy.ep", {{"ranks", 32}, {"ep", 3}, {"etp", 1}}),
       "ep*etp must divide tp*dp*cp (32); got 3*1"},
      {n(C::layout_moe_tp_needs_sequence_parallel, "strategy.sequence_parallel", {}),
       "MoE with tp > 1 needs sequence parallelism (Megatron-Core); got false"},
      {with(n(C::layout_module_recompute_needs_selective, "strategy.recompute_norms", {}), "recompute", "full"),
       "module recompute needs recompute selective; got recompute full"},
      {n(C::layout_moe_act_recompute_needs_moe, "strategy.recompute_moe_act", {}),
       "recomputing the experts' activation or the MoE layer needs an MoE model; got true"},
      {n(C::layout_offload_params_needs_zero3, "strategy.offload_params", {{"zero", 1}}),
       "offloading the parameters needs zero 3 (sharded parameters); got true with zero 1"},
      {n(C::layout_cp_divides_sequence, "strategy.cp", {{"seq_len", 4096}, {"cp", 3}}),
       "seq_len (4096) must be a multiple of 2*cp; got cp 3"},
      {n(C::layout_tp_divides_heads, "strategy.tp", {{"heads", 64}, {"got", 6}}),
       "must divide the number of attention heads (64); got 6"},
      {n(C::layout_tp_divides_ffn, "strategy.tp", {{"ffn_hidden", 28672}, {"got", 6}}),
       "must divide ffn_hidden (28672); got 6"},
      {n(C::layout_product_is_not_the_gpus, "strategy",
         {{"gpus", 64}, {"tp", 3}, {"pp", 5}, {"dp", 7}, {"cp", 1}, {"product", 105}}),
       "tp*pp*dp*cp must equal the number of GPUs (64); got 3*5*7*1 = 105"},
      {n(C::layout_pp_exceeds_layers, "strategy.pp", {{"layers", 24}, {"got", 32}}),
       "more pipeline stages than layers (24); got 32"},
      {n(C::layout_stages_exceed_layers, "strategy.virtual_stages", {{"layers", 24}, {"pp", 2}, {"virtual_stages", 13}}),
       "pp*virtual_stages must not exceed the layers (24); got 2*13"},
      {n(C::layout_stage_layers_negative, "strategy.first_stage_layers", {{"got", -1}}),
       "must be a positive number of layers (or 0 for an even split); got -1"},
      {n(C::layout_stage_layers_need_pipeline, "strategy.first_stage_layers", {{"pp", 1}}),
       "setting the layers of the first or last stage needs pp >= 2; got pp 1"},
      {n(C::layout_stage_layers_leave_none, "strategy.first_stage_layers",
         {{"first", 20}, {"last", 10}, {"layers", 24}, {"middle", 0}}),
       "first_stage_layers + last_stage_layers (20 + 10) must leave at least one layer per remaining stage and chunk "
       "of the 24 layers (0 stages: they must add up to the layers)"},
      {n(C::layout_stage_layers_leave_too_few, "strategy.first_stage_layers",
         {{"first", 120}, {"last", 0}, {"layers", 126}, {"middle", 15}}),
       "first_stage_layers + last_stage_layers (120 + 0) must leave at least one layer per remaining stage and chunk "
       "of the 126 layers (15 stages)"},
      {n(C::layout_stage_layers_below_virtual, "strategy.last_stage_layers", {{"virtual_stages", 4}}),
       "each stage needs at least one layer per virtual stage (4)"},
      {n(C::layout_interleaving_needs_pipeline, "strategy.virtual_stages", {{"got", 2}}),
       "interleaving needs pipeline parallelism (pp > 1); got 2"},
      {n(C::layout_batch_not_divisible, "strategy.micro_batch",
         {{"global_batch", 512}, {"micro_batch", 3}, {"dp", 8}, {"per_step", 24}}),
       "global batch (512 sequences) must be a multiple of micro_batch*dp (3*8 = 24)"},
      {n(C::no_valid_layout, "strategy", {{"gpus", 128}}),
       "no valid parallel layout exists for 128 GPUs with the fixed strategy fields and this model/batch"},
      {n(C::step_not_positive, "step.seq_len", {{"got", 0}}), "must be a positive integer; got 0"},
      {n(C::step_heads_divide_hidden, "step.heads", {{"hidden", 512}, {"got", 6}}), "must divide hidden (512); got 6"},
      {n(C::step_kv_heads_divide_heads, "step.kv_heads", {{"heads", 8}, {"got", 3}}),
       "must divide heads (8), or be 0 for heads; got 3"},
  };
}
// The planner's note on a chosen plan of dense/megatron/>512 runs (0.83-0.98 measured/predicted).
Finding optimistic_plan() {
  Finding f = finding(FindingCode::plan_regime_optimistic, "",
                      {{"ratio_p10", 0.83}, {"ratio_p90", 0.98}, {"runs", 14}, {"time_days", 64},
                       {"likely_days", 64 / std::sqrt(0.83 * 0.98)}, {"has_alternative", 1}});
  return with(f, "category", "dense/megatron/>512");
}

std::vector<Finding> layout_cases() {
  std::vector<Finding> out;
  for (const auto& [f, words] : layout_sentences()) out.push_back(f);
  return out;
}

// The search request's input errors, as sim::search gives them, and their sentences.
std::vector<std::pair<Finding, std::string>> search_cases() {
  using C = FindingCode;
  const auto n = [](FindingCode c, const char* field, Numbers v) { return finding(c, field, v); };
  return {
      {n(C::search_below_one, "search.top_k", {{"got", 0}}), "must be at least 1; got 0"},
      {n(C::search_threads_negative, "search.threads", {{"got", -1}}), "must be >= 0 (0 = all cores); got -1"},
      {n(C::search_max_gpus_negative, "search.max_gpus", {{"got", -1}}), "must be >= 0 (0 = no limit); got -1"},
      {n(C::search_deadline_not_positive, "search.deadline", {{"days", -0.5}}),
       "must be a positive time; got -0.500 days"},
      {n(C::search_deadline_not_positive, "search.deadline", {{"days", std::numeric_limits<double>::infinity()}}),
       "must be a positive time; got ? days"},
      {n(C::search_budget_not_positive, "search.budget", {{"usd", -5}}), "must be a positive amount; got -5.00 USD"},
      {with(n(C::search_gpu_without_memory, "search.offerings/0/gpu", {}), "gpu", "h100-sxm"),
       "GPU 'h100-sxm' has no memory capacity"},
      {n(C::search_price_negative, "search.offerings/0/price", {}), "must be a non-negative price"},
      {n(C::search_batch_empty, "search.base/training/global_batch", {}), "must be at least 1 sequence"},
      {n(C::search_currency_rate_invalid, "search.offerings/0/pricing/currency", {{"got", -1}}),
       "needs a positive rate to US dollars; got -1.000000"},
      {n(C::search_no_shape_left, "search.max_gpus", {{"max_gpus", 8}}),
       "no cluster shape is left to search: every offering x node count exceeds max_gpus (8) or lacks a network "
       "bandwidth for several nodes"},
  };
}

// What a profile did not cover, as sim::CalibratedCost::coverage gives it (field empty), and the
// sentences calibrate's validate prints (estimate prints them after "profile: ").
std::vector<std::pair<Finding, std::string>> profile_cases() {
  using C = FindingCode;
  const auto t = [](FindingCode c, std::string_view name, std::string text, Numbers v = {}) {
    Finding f = sim::text_finding(c, name, std::move(text));
    for (const auto& [k, x] : v) f.values.push_back({k, x, {}});
    return f;
  };
  const Finding poor_gemm = t(C::profile_gemm_poor_fit, "dtype", "fp32", {{"residual_pct", 100 * 0.3149}, {"r2", 0.9}});
  Finding other = t(C::profile_other_device, "device", "AMD EPYC 7763", {{"operations", 30}, {"datasheet", 12}});
  sim::with_text(other, "backend", "host");
  sim::with_text(other, "gpu", "h800-sxm-80gb");
  return {
      {other,
       "profile measured on AMD EPYC 7763 (host), scenario GPU is h800-sxm-80gb: 30 operations priced from another "
       "device's measurements (12 from the datasheet); treat the result as that device's, not this GPU's"},
      {sim::finding(C::profile_fused_attention), "fused (flash) attention not measured; datasheet used"},
      {t(C::profile_gemm_not_measured, "dtype", "fp8"), "gemm fp8 not measured; datasheet used"},
      {t(C::profile_gemm_too_few_shapes, "dtype", "fp16", {{"shapes", 1}}),
       "gemm fp16: 1 measured shapes, too few for a fit, and this shape is not one of them; datasheet used"},
      {t(C::profile_gemm_outside_range, "dtype", "bf16",
         {{"m", 32768}, {"n", 16384}, {"k", 8192}, {"min_m", 256}, {"max_m", 16384}, {"min_n", 256},
          {"max_n", 16384}, {"min_k", 256}, {"max_k", 16384}}),
       "gemm bf16 m=32768 n=16384 k=8192 outside the measured range (m 256..16384, n 256..16384, k 256..16384); "
       "datasheet used"},
      {poor_gemm,
       "gemm fp32 fit is poor (RMS relative residual 31%, R^2 0.90); used, but treat these times as rough"},
      {t(C::profile_gemm_above_peak, "dtype", "bf16", {{"tflops", 2199.0}, {"peak_tflops", 989.4}, {"operations", 7}}),
       "gemm bf16 measured at up to 2199 TFLOP/s, above this GPU's datasheet peak of 989: the profile comes from a "
       "faster device or its fit is wrong; those 7 GEMMs are priced at the peak"},
      {with(t(C::profile_memory_outside_range, "op", "adam_step", {{"min_bytes", 1e3}, {"max_bytes", 1e10}}),
            "pattern", "elementwise"),
       "memory 'adam_step' (elementwise) outside the measured range (1 kB..10 GB); datasheet used"},
      {with(t(C::profile_memory_outside_range, "op", "gelu_fwd", {{"min_bytes", 512}, {"max_bytes", 1.5e9}}),
            "pattern", "gelu"),
       "memory 'gelu_fwd' (gelu) outside the measured range (512 B..1.5 GB); datasheet used"},
      {with(t(C::profile_memory_outside_sizes, "op", "softmax_fwd"), "pattern", "norm"),
       "memory 'softmax_fwd' (norm) outside the measured sizes and no fit; datasheet used"},
      {with(t(C::profile_memory_not_measured, "op", "rmsnorm"), "pattern", "norm"),
       "memory pattern 'norm' not measured ('rmsnorm'); datasheet used"},
      {t(C::profile_memory_poor_fit, "pattern", "copy", {{"residual_pct", 40}, {"r2", 0.5}}),
       "memory pattern 'copy' fit is poor (RMS relative residual 40%, R^2 0.50); used, but treat these times as rough"},
      {t(C::profile_memory_above_peak, "pattern", "elementwise", {{"gbps", 8917.4}, {"peak_gbps", 3350}, {"operations", 56}}),
       "memory pattern 'elementwise' measured at up to 8917 GB/s, above this GPU's datasheet HBM bandwidth of 3350 GB/s: "
       "the profile comes from a faster device, a cache or a wrong fit; 56 memory ops are priced at the HBM bandwidth"},
      {with(t(C::profile_tier_not_scalable, "kind", "all_gather"), "tier", "spine"),
       "all_gather across tier 'spine': no network measurement to scale; datasheet used"},
      {with(t(C::profile_tier_scaled, "kind", "all_reduce"), "tier", "spine"),
       "all_reduce across tier 'spine' is beyond the measured tiers; measured network busbw scaled by the "
       "topology's tier bandwidths"},
      {t(C::profile_collective_not_measured, "kind", "all_gather", {{"across_nodes", 1}}),
       "all_gather across nodes not measured; datasheet used"},
      {t(C::profile_collective_not_measured, "kind", "all_to_all", {{"across_nodes", 0}}),
       "all_to_all inside a node not measured; datasheet used"},
      {t(C::profile_collective_outside_range, "kind", "all_reduce",
         {{"across_nodes", 1}, {"bytes", 2.5e9}, {"ranks", 16}, {"min_bytes", 8}, {"max_bytes", 1.07e9}}),
       "all_reduce across nodes 2.5 GB over 16 ranks outside the measured range (8 B..1.07 GB); datasheet used"},
      {with(t(C::profile_collective_ranks_not_measured, "kind", "all_reduce", {{"across_nodes", 0}, {"ranks", 16}}),
            "measured", "2, 8"),
       "all_reduce inside a node over 16 ranks not measured (measured: 2, 8 ranks); datasheet used"},
      {t(C::profile_collective_poor_fit, "kind", "all_reduce",
         {{"across_nodes", 0}, {"ranks", 8}, {"residual_pct", 55.00000000000001}, {"r2", 0.87}}),
       "all_reduce inside a node over 8 ranks fit is poor (RMS relative residual 55%, R^2 0.87); used, but treat "
       "these times as rough"},
      {t(C::profile_collective_above_link, "kind", "all_gather",
         {{"across_nodes", 0}, {"ranks", 8}, {"busbw_gbps", 1562.4}, {"ceiling_gbps", 450}, {"operations", 4}}),
       "all_gather inside a node over 8 ranks measured at up to 1562 GB/s busbw, above what this GPU's links carry "
       "(450 GB/s): the profile comes from a faster fabric or its fit is wrong; 4 collectives are priced at the "
       "links' ceiling"},
  };
}

// The planner explanation's pieces (data::explanation_parts) and what each adds to the sentence.
std::vector<std::pair<Finding, std::string>> why_cases() {
  using C = FindingCode;
  const auto n = [](FindingCode c, Numbers v = {}) { return finding(c, "", v); };
  return {
      {n(C::why_closest), "Closest plan"},
      {n(C::why_cheapest), "Cheapest plan"},
      {n(C::why_fastest), "Fastest plan"},
      {n(C::why_fastest_on_front), "Fastest plan on the Pareto front"},
      {n(C::why_meets_deadline, {{"days", 30}}), " that meets the deadline of 30.0 days"},
      {n(C::why_within_budget, {{"usd", 2.5e6}}), " within the budget of $2.50M"},
      {n(C::why_and_within_budget, {{"usd", 950}}), " and within the budget of $950.00"},
      {with(with(n(C::why_plan, {{"days", 142.4}}), "shape", "aws-p5.48xlarge x 16 nodes (128 GPUs)"), "layout",
            "tp 4 pp 1 dp 32"),
       ": aws-p5.48xlarge x 16 nodes (128 GPUs), tp 4 pp 1 dp 32: 142 days"},
      {n(C::why_with_failures, {{"steady_days", 9.876}}), " with failures and checkpoints (9.88 days steady)"},
      {with(n(C::why_cost, {{"amount", 3.344e9}}), "unit", "$"), ", $3.34B"},
      {with(n(C::why_cost, {{"amount", 23.9e6}}), "unit", "CNY "), ", CNY 23.9M"},
      {n(C::why_step, {{"step_s", 12.34}, {"compute", 0.623}}), ". Step 12.3 s: compute 62%"},
      {n(C::why_recompute, {{"share", 0.04}}), " (recompute 4.0%)"},
      {n(C::why_bubble, {{"share", 0.1}}), ", pipeline bubble 10%"},
      {n(C::why_tp_comm, {{"share", 0.005}}), ", tp comm 0.5%"},
      {n(C::why_pp_comm, {{"share", 0.2}}), ", pp comm 20%"},
      {n(C::why_dp_comm, {{"share", 0.2}}), ", dp comm 20%"},
      {n(C::why_ep_comm, {{"share", 0.2}}), ", ep comm 20%"},
      {n(C::why_cp_comm, {{"share", 0.2}}), ", cp comm 20%"},
      {n(C::why_optimizer, {{"share", 0.0994}}), ", optimizer 9.9%"},
      {n(C::why_mfu_and_memory, {{"mfu", 0.41}, {"memory_gib", 61.25}, {"capacity_gib", 80}}),
       "; MFU 41%; memory 61.2 of 80 GiB per GPU."},
  };
}

// The pieces of a runner-up's and an unmet constraint's sentence.
std::vector<std::pair<Finding, std::string>> runner_up_and_unmet_cases() {
  using C = FindingCode;
  const auto n = [](FindingCode c, Numbers v = {}) { return finding(c, "", v); };
  const auto t = [](FindingCode c, std::string_view name, std::string text) {
    return sim::text_finding(c, name, std::move(text));
  };
  return {
      {n(C::runner_up_more_nodes, {{"times", 2}, {"from", 16}, {"to", 32}}), "2x the nodes (16 -> 32)"},
      {n(C::runner_up_fewer_nodes, {{"times", 2}, {"from", 16}, {"to", 8}}), "1/2 the nodes (16 -> 8)"},
      {n(C::runner_up_other_nodes, {{"from", 16}, {"to", 24}}), "24 nodes instead of 16"},
      {with(t(C::runner_up_offering, "shape", "b x 2 nodes (16 GPUs)"), "chosen_shape", "a x 4 nodes (32 GPUs)"),
       "b x 2 nodes (16 GPUs) instead of a x 4 nodes (32 GPUs)"},
      {t(C::runner_up_layout, "diff", "tp 8 instead of 4"), "tp 8 instead of 4"},
      {n(C::runner_up_same_layout), "another layout"},
      {t(C::runner_up_fastest, "shape", "a x 4 nodes (32 GPUs)"), "the fastest plan, a x 4 nodes (32 GPUs)"},
      {t(C::runner_up_cheapest, "shape", "a x 1 node (8 GPUs)"), "the cheapest plan, a x 1 node (8 GPUs)"},
      {t(C::runner_up_regime, "shape", "a x 8 nodes (64 GPUs)"),
       "the best plan where the model is not known to be optimistic, a x 8 nodes (64 GPUs)"},
      {t(C::runner_up_dimension, "dimension", "zero"), "zero"},
      {n(C::runner_up_faster, {{"share", 0.41}}), ": 41% faster"},
      {n(C::runner_up_slower, {{"share", 0.004}}), ": 0.4% slower"},
      {n(C::runner_up_cheaper, {{"share", 0.12}}), ", 12% cheaper"},
      {n(C::runner_up_dearer, {{"share", 0.12}}), ", 12% dearer"},
      {n(C::runner_up_cost_unknown), ", cost not comparable (price unknown)"},
      {n(C::runner_up_misses_deadline), " (misses the deadline)"},
      {n(C::runner_up_over_budget), " (over the budget)"},
      {n(C::runner_up_price_unknown), " (price unknown)"},
      {n(C::unmet_no_layout),
       "no valid parallel layout exists for any cluster shape searched with this model, batch and the fixed strategy "
       "fields"},
      {n(C::unmet_memory), "no layout fits in GPU memory on any cluster shape searched"},
      {with(with(n(C::unmet_memory_closest, {{"need_gib", 91.26}, {"have_gib", 80}}), "shape", "a x 1 node (8 GPUs)"),
            "layout", "tp 8 pp 1 dp 1"),
       "; the closest, a x 1 node (8 GPUs) with tp 8 pp 1 dp 1, needs 91.3 GiB per GPU of 80"},
      {with(n(C::unmet_memory_remedy), "remedy", "with full recompute that layout would fit"),
       "; with full recompute that layout would fit"},
      {n(C::unmet_deadline, {{"deadline_days", 1}, {"took_days", 142.2}}),
       "no plan meets the deadline of 1.00 days: the fastest takes 142 days"},
      {n(C::unmet_deadline_nor_budget, {{"deadline_days", 1}, {"budget_usd", 5e5}, {"took_days", 14.2}}),
       "no plan meets the deadline of 1.00 days (nor the budget of $500k): the fastest takes 14.2 days"},
      {n(C::unmet_budget, {{"budget_usd", 1000}}), "no plan meets the budget of $1.00k"},
      {n(C::unmet_budget_cheapest, {{"cost_usd", 2.5e6}}), ": the cheapest costs $2.50M"},
      {n(C::unmet_budget_no_price), ": no offering searched has a known price (give one)"},
      {n(C::unmet_both, {{"deadline_days", 10}, {"budget_usd", 1e6}, {"took_days", 12}}),
       "no plan meets both the deadline of 10.0 days and the budget of $1.00M: the closest takes 12.0 days"},
      {n(C::unmet_both_cost, {{"cost_usd", 1.2e6}}), " and costs $1.20M"},
      {n(C::unmet_both_unknown_price), " at an unknown price"},
      {with(with(n(C::unmet_closest_plan), "shape", "a x 1 node (8 GPUs)"), "layout", "tp 8 pp 1 dp 1"),
       " (a x 1 node (8 GPUs), tp 8 pp 1 dp 1)"},
  };
}

TEST(Findings, EveryPieceOfARunnerUpAndAnUnmetConstraintReadsAsItsPartOfTheSentence) {
  for (const auto& [f, words] : runner_up_and_unmet_cases()) EXPECT_EQ(render(f), words);
}

TEST(Findings, EveryPieceOfThePlannersExplanationReadsAsItsPartOfTheSentence) {
  for (const auto& [f, words] : why_cases()) EXPECT_EQ(render(f), words);
  EXPECT_EQ(spec_number(std::numeric_limits<double>::quiet_NaN(), "pct"), "?%");
  EXPECT_EQ(spec_number(-1234, "usd"), "$-1.23k");
}

TEST(Findings, EveryLayoutRuleReadsAsCheckLayoutHasAlwaysWordedIt) {
  for (const auto& [f, words] : layout_sentences()) EXPECT_EQ(render(f), words);
}

TEST(Findings, EverySearchInputErrorReadsAsBefore) {
  for (const auto& [f, words] : search_cases()) EXPECT_EQ(render(f), words);
}

TEST(Findings, EveryProfileGapReadsAsBeforeAndOnAnEstimateSaysItComesFromTheProfile) {
  for (const auto& [f, words] : profile_cases()) {
    EXPECT_EQ(render(f), words);
    Finding on_estimate = f;
    on_estimate.field = "profile";
    EXPECT_EQ(render(on_estimate), "profile: " + words);
  }
}

TEST(Findings, ADiagnosticsMessageIsItsOwnOrItsFindingsSentence) {
  Diagnostics d = {{Diagnostic::Severity::error, "scenario#/strategy/tp", {},
                    finding(FindingCode::layout_tp_divides_heads, "strategy.tp", {{"heads", 64}, {"got", 6}})},
                   {Diagnostic::Severity::error, "x.json#/a", "must be > 0; got -1"}};
  EXPECT_EQ(message(d[0]), "must divide the number of attention heads (64); got 6");
  EXPECT_EQ(message(d[1]), "must be > 0; got -1");
  word(d);
  EXPECT_EQ(d[0].message, "must divide the number of attention heads (64); got 6");
  EXPECT_EQ(d[1].message, "must be > 0; got -1");
  EXPECT_EQ(to_string(d), "scenario#/strategy/tp: must divide the number of attention heads (64); got 6\n"
                          "x.json#/a: must be > 0; got -1");
}

TEST(Findings, FixedAndByteSpecsKeepTheirDigitsOnEverySurface) {
  const Finding f = finding(FindingCode::note, "", {{"r2", 0.5}, {"b", 1.024e3}, {"big", 5e13}});
  const auto stars = [](double, int) { return std::string("*"); };
  EXPECT_EQ(fill("{r2:f2} {r2:2} {b:B} {big:B} {r2}", f, stars), "0.50 * 1.02 kB 50 TB *");
}

// Every code has a template, and each placeholder in it is a value the finding carries (so a
// Every serving reason with the values its producer gives, and its words.
std::vector<std::pair<Finding, std::string>> serve_cases() {
  using F = FindingCode;
  const auto texts = [](Finding f, std::initializer_list<std::pair<std::string_view, std::string>> t) {
    for (const auto& [name, v] : t) sim::with_text(f, name, v);
    return f;
  };
  return {
      {finding(F::serve_tp_pp_below_one, "", {{"tp", 0}, {"pp", 1}}), "tp and pp must be at least 1"},
      {finding(F::serve_tp_divides_heads, "", {{"tp", 3}, {"heads", 32}}),
       "tp 3 does not divide the model's 32 attention heads"},
      {finding(F::serve_tp_and_kv_heads, "", {{"tp", 4}, {"kv_heads", 6}}),
       "tp 4 and the model's 6 KV heads: one must divide the other"},
      {finding(F::serve_pp_exceeds_layers, "", {{"pp", 64}, {"layers", 32}}), "pp 64 exceeds the model's layers"},
      {finding(F::serve_ep_layout, "", {{"ep", 2}, {"tp", 4}}),
       "ep must be 1 (experts split over TP) or equal tp (whole experts per rank) for an MoE model"},
      {finding(F::serve_ep_divides_experts, "", {{"ep", 3}, {"experts", 8}}), "ep 3 does not divide the model's 8 experts"},
      {finding(F::serve_hybrid_unsupported, "", {{"mamba_layers", 27}}),
       "serving hybrid Mamba models is not supported yet (their decode state update is not modelled)"},
      {texts(finding(F::serve_weights_need_tensor_cores), {{"weights", "fp8"}, {"compute", "fp8"}, {"gpu", "NVIDIA A100"}}),
       "fp8 weights need fp8 tensor cores, which NVIDIA A100 does not have (or the catalog does not know their rate)"},
      {texts(finding(F::serve_purchase_unsupported), {{"purchase", "spot"}}),
       "serve plans on_demand, reserved or on_prem capacity, not spot: the provider reclaims spot instances at will, "
       "taking their replicas' requests with them, so no latency target holds on them"},
      {texts(finding(F::serve_kv_precision), {{"kv", "fp4"}}), "KV-cache precision fp4 is not one of bf16, fp16, fp8"},
      {finding(F::serve_tp_spans_nodes, "", {{"tp", 16}, {"gpus_per_node", 8}}),
       "tp 16 spans more than one node of 8 GPUs (tensor parallelism needs the scale-up domain)"},
      {finding(F::serve_lengths_below_one, "", {{"input", 0}, {"output", 5}}),
       "input and output lengths must be at least 1 token"},
      {finding(F::serve_rate_needed, "", {{"rate", 0}}), "a request rate above 0 is needed"},
      {finding(F::serve_concurrency_needed, "", {{"concurrency", 0}}), "a concurrency of at least 1 is needed"},
      {finding(F::serve_prefix_hit_out_of_range, "", {{"prefix_hit", 1}}), "the prefix-cache hit rate must be in [0, 1)"},
      {finding(F::serve_engine_limits, "", {{"max_num_seqs", 0}, {"max_num_batched_tokens", 8192}}),
       "the engine needs max_num_seqs and max_num_batched_tokens >= 1"},
      {finding(F::serve_prompt_exceeds_batch, "", {{"tokens", 9000}, {"max_num_batched_tokens", 8192}}),
       "prompts of 9000 tokens exceed max_num_batched_tokens 8192 without chunked prefill"},
      {texts(finding(F::serve_weights_leave_no_kv, "",
                     {{"weights_gib", 131.41234}, {"activations_gib", 1.24}, {"reserve_gib", 2.5}}),
             {{"gpu", "NVIDIA H100"}}),
       "the weights (131.4 GiB per GPU), the engine's profiled activations (1.2 GiB) and its reserve (2.5 GiB) "
       "leave no room for a KV cache on NVIDIA H100"},
      {finding(F::serve_kv_below_one_request, "", {{"kv_tokens", 4000}, {"longest", 6100}}),
       "the KV cache holds 4000 tokens, less than one p99 request (6100)"},
      {texts(finding(F::serve_one_request_misses, "", {{"percentile", 95}}), {{"metric", "ttft"}}),
       "one request alone misses the ttft target on this layout (p95)"},
      {texts(finding(F::serve_simulation_misses, "", {{"rate", 3.14159}}), {{"metric", "e2e"}}),
       "the simulation misses the e2e target even at 3.14 requests/s per replica"},
  };
}

// sentence never shows a raw "{name}"): checked with the values each code's producer gives.
TEST(Findings, EveryTemplatesPlaceholdersAreFilled) {
  const auto n = [](FindingCode c, std::initializer_list<std::pair<std::string_view, double>> v) {
    return finding(c, "some.field", v);
  };
  const std::initializer_list<std::pair<std::string_view, double>> batch = {
      {"tokens", 4e6}, {"exact", 976.5625}, {"seq_len", 4096}, {"sequences", 1024}, {"used_tokens", 4194304}};
  Finding rounded = n(FindingCode::batch_rounded_to_layout, batch);
  rounded.values.push_back({"granule", 16, {}});
  Finding chosen = n(FindingCode::batch_chosen_for_dp, batch);
  chosen.values.push_back({"dp", 512, {}});
  chosen.values.push_back({"within_pct", 5, {}});
  std::vector<Finding> all = {
      rounded,
      chosen,
      n(FindingCode::batch_forces_one_replica, {{"sequences", 977}, {"replicas", 512}, {"suggested", 1024}}),
      n(FindingCode::no_layout_fits, {{"evaluated", 1}}),
      n(FindingCode::recompute_would_fit, {{"need_gib", 59.4}, {"have_gib", 80}}),
      n(FindingCode::offload_optimizer_would_fit, {{"need_gib", 70}, {"have_gib", 80}}),
      n(FindingCode::offload_params_would_fit, {{"need_gib", 20}, {"have_gib", 80}}),
      n(FindingCode::uneven_stages, {{"layers", 30}, {"stages", 4}}),
      n(FindingCode::tp_wider_than_node, {{"tp", 16}, {"gpus_per_node", 8}}),
      n(FindingCode::sequence_parallel_without_tp, {}),
      n(FindingCode::interleave_micro_batches, {{"micro_batches", 6}, {"pp", 4}}),
      n(FindingCode::zero_with_pipeline, {{"zero", 2}, {"pp", 2}}),
      n(FindingCode::pipeline_never_fills, {{"micro_batches", 2}, {"pp", 4}}),
      n(FindingCode::does_not_fit, {{"need_gib", 90}, {"have_gib", 80}}),
      n(FindingCode::offload_host_step, {{"optimizer_s", 25}, {"step_s", 36}, {"host_gbps", 83}, {"host_gib", 1100}}),
      n(FindingCode::zero3_hooks_host_bound, {{"hooks_s", 1.6}, {"host_s", 1.2}, {"step_s", 2.0}, {"ms_per_layer", 2.8}}),
      n(FindingCode::lora_adapters_cost_more_than_skipped_gradients,
        {{"lora_step_s", 3.05}, {"full_step_s", 2.23}, {"adapter_s", 1.1}, {"skipped_s", 0.3}, {"rank", 8}, {"tp", 8}}),
      n(FindingCode::mamba1_priced_as_mamba2, {{"mamba_layers", 27}}),
      n(FindingCode::no_storage_tier, {{"node_gb_per_s", 400}}),
      n(FindingCode::spot_preemptions_unknown, {}),
      n(FindingCode::checkpoint_interval_below_step, {{"given_s", 1}, {"floor_s", 2}}),
      n(FindingCode::checkpoint_interval_below_persist, {{"given_s", 1}, {"floor_s", 2}}),
      n(FindingCode::checkpoint_every_few_steps, {{"interval_s", 11}, {"steps", 1.8}, {"min_steps", 10}}),
      n(FindingCode::checkpoint_stalls_dominate, {{"stall_pct", 12}, {"max_pct", 10}}),
      n(FindingCode::restart_overhead_assumed, {{"restart_s", 600}}),
      n(FindingCode::interruptions_unbounded, {{"mtbi_h", 0.5}}),
      n(FindingCode::recovery_dominates, {{"mtbi_h", 2}}),
      n(FindingCode::cost_input_unknown, {}),
      n(FindingCode::cost_part_unknown, {}),
      n(FindingCode::reserved_commitment_short, {{"committed", 8}, {"used", 16}}),
      n(FindingCode::reserved_term_short, {{"run_months", 14}, {"term_months", 12}}),
      n(FindingCode::no_price, {}),
  };
  Finding bound = n(FindingCode::data_loading_bound, {{"gb_per_s", 3}, {"bytes_per_token", 4}, {"slowdown", 1.5}});
  bound.values.push_back({"bound", 0, "storage", true});
  all.push_back(bound);
  Finding assumed = n(FindingCode::storage_tier_assumed, {{"write_gb_per_s", 57.5}, {"read_gb_per_s", 57.5}});
  assumed.values.push_back({"tier", 0, "idris-jean-zay-gpfs", true});
  all.push_back(assumed);
  Finding tier = sim::text_finding(FindingCode::local_tier_without_upload, "tier", "nvme");
  all.push_back(tier);
  all.push_back(sim::text_finding(FindingCode::offering_network_unknown, "offering", "a"));
  all.push_back(sim::text_finding(FindingCode::offering_price_unknown, "offering", "a"));
  all.push_back(sim::finding(FindingCode::pareto_without_prices));
  Finding band = n(FindingCode::band_extended_to_estimate, {{"ratio_p10", 1.02}, {"ratio_p90", 1.34}, {"runs", 7}});
  band.values.push_back({"category", 0, "dense/pytorch", true});
  all.push_back(band);
  all.push_back(optimistic_plan());
  for (const Finding& f : layout_cases()) all.push_back(f);
  for (const auto& [f, words] : search_cases()) all.push_back(f);
  for (const auto& [f, words] : profile_cases()) all.push_back(f);
  for (const auto& [f, words] : why_cases()) all.push_back(f);
  for (const auto& [f, words] : runner_up_and_unmet_cases()) all.push_back(f);
  Finding no_rate = sim::text_finding(FindingCode::catalog_price_without_rate, "offering", "a");
  no_rate.values.push_back({"currency", 0, "CNY", true});
  all.push_back(no_rate);
  all.push_back(sim::text_finding(FindingCode::scenario_pricing_not_offered, "instance", "a"));
  Finding replaced = n(FindingCode::price_replaces_scenario_price, {{"given_usd", 3}, {"file_usd", 3.5}});
  replaced.values.push_back({"offering", 0, "a", true});
  replaced.values.push_back({"purchase", 0, "spot", true});
  all.push_back(replaced);
  for (const auto& [f, words] : serve_cases()) all.push_back(f);
  all.push_back(sim::note("words"));
  for (const Finding& f : all) {
    const std::string s = render(f);
    EXPECT_EQ(s.find('{'), std::string::npos) << s;
    EXPECT_FALSE(s.empty());
  }
  std::vector<bool> seen(static_cast<std::size_t>(FindingCode::note) + 1);
  for (const Finding& f : all) seen[static_cast<std::size_t>(f.code)] = true;
  for (std::size_t c = 0; c < seen.size(); ++c) EXPECT_TRUE(seen[c]) << "code " << c << " has no case here";
}

// Why a serving layout cannot run or meets no target (sim check_serve_job, plan_serving), in words.
TEST(Findings, ServingReasonsAreWorded) {
  for (const auto& [f, words] : serve_cases()) EXPECT_EQ(render(f), words);
}

// A band moved to hold the estimate (the runs' p10-p90 on one side of it), in the words the CLI prints.
TEST(Findings, ABandExtendedToTheEstimateIsWorded) {
  Finding f = finding(FindingCode::band_extended_to_estimate, "", {{"ratio_p10", 1.0213}, {"ratio_p90", 1.34}, {"runs", 7}});
  f.values.push_back({"category", 0, "dense/pytorch", true});
  EXPECT_EQ(render(f),
            "the band is the 80% of runs nearest the estimate: measured/predicted p10-p90 was 1.02-1.34 on the 7 "
            "validated dense/pytorch runs, on one side of the model; the estimate is the model's own figure, the band "
            "is how far such runs have been from it");
}

// A chosen plan where every validated run of its kind was slower than the model: how much longer
// it likely takes (64.0 days at the runs' middle ratio sqrt(0.83 x 0.98) = 0.902 is 71.0 days). Three
// decimals, so that a slow end just under 1 (0.998) does not read as 1.
TEST(Findings, APlanWhereTheModelIsOptimisticSaysHowMuchLongerItLikelyTakes) {
  EXPECT_EQ(render(optimistic_plan()),
            "the model is optimistic for this plan's kind of run: the 14 validated dense/megatron/>512 runs measured "
            "0.830-0.980 of its throughput, so the chosen plan's 64.0 days are likely about 71.0; plans are ranked on "
            "the model's figures (--deadline-quantile p90 checks a deadline against the band's slow end)");
}

// The error band's basis, worded from its structure (the words estimate's JSON and table print).
TEST(Findings, AnErrorBandsBasisNamesItsRunsItsFallbackAndItsWidening) {
  sim::ErrorBand b;
  b.category = "dense";
  b.asked = "dense/pytorch";
  b.runs = 12;
  EXPECT_EQ(error_band_basis(b),
            "p10-p90 of measured/predicted tokens/s over 12 validated dense runs (too few validated dense/pytorch "
            "runs for their own band)");
  b.asked = "dense";
  b.widened = sim::BandWidening{0.8123, 1.2, true, true, 0.6, 0.87, 0.3, 0.5};
  EXPECT_EQ(error_band_basis(b),
            "p10-p90 of measured/predicted tokens/s over 12 validated dense runs; widened x0.81 / x1.20: no "
            "published GEMM or attention efficiency for this GPU (other GPUs' published range: GEMM 0.60-0.87, "
            "attention 0.30-0.50 of peak)");
  b.category = sim::kAllCategory;
  b.widened->gemm = false;
  EXPECT_EQ(error_band_basis(b),
            "p10-p90 of measured/predicted tokens/s over 12 validated runs (too few validated dense runs for their "
            "own band); widened x0.81 / x1.20: no published attention efficiency for this GPU (other GPUs' "
            "published range: attention 0.30-0.50 of peak)");
  b.widened->host = true;
  b.widened->host_us_per_op = 80;
  EXPECT_EQ(error_band_basis(b),
            "p10-p90 of measured/predicted tokens/s over 12 validated runs (too few validated dense runs for their "
            "own band); widened x0.81 / x1.20: no published attention efficiency for this GPU (other GPUs' "
            "published range: attention 0.30-0.50 of peak); no host time per op for this framework (priced at the "
            "kernel launch alone; the step is host-bound at 80 us per op, the most a catalog recipe carries)");
  b.widened = sim::BandWidening{.down = 0.9, .host = true, .host_us_per_op = 80};
  EXPECT_EQ(error_band_basis(b),
            "p10-p90 of measured/predicted tokens/s over 12 validated runs (too few validated dense runs for their "
            "own band); widened x0.90 / x1.00: no host time per op for this framework (priced at the kernel launch "
            "alone; the step is host-bound at 80 us per op, the most a catalog recipe carries)");
  b.widened.reset();
  b.unextended = sim::Interval{0.7512, 0.98};
  EXPECT_EQ(error_band_basis(b),
            "the 80% of measured/predicted tokens/s nearest the estimate over 12 validated runs (too few validated "
            "dense runs for their own band); their p10-p90 (0.75-0.98) lay on one side of it");
}

}  // namespace
}  // namespace capplan::data
