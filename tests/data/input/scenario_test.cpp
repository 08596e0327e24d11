// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <span>
#include <string>

#include "capplan/data/fields.hpp"
#include "capplan/data/scenario_io.hpp"
#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/estimate/global_batch.hpp"
#include "test_support.hpp"

namespace capplan::data {
namespace {

using nlohmann::json;
using test::good_catalogs;
using test::has_diag;

// Valid against the good fixtures: Llama 3 70B on 64 p5.48xlarge (512 H100), 4M-token batches.
json base() {
  return json::parse(R"({
    "name": "test",
    "description": "a valid scenario that the bad cases edit",
    "model": {"preset": "llama3-70b"},
    "training": {"tokens": "2T", "global_batch_tokens": 4194304, "precision": "bf16"},
    "cluster": {"instance": "aws-p5.48xlarge", "nodes": 64},
    "strategy": {"tp": 8, "pp": 4, "dp": 16, "micro_batch": 1, "virtual_stages": 1, "zero": 1,
                 "recompute": "selective", "sequence_parallel": true, "overlap_dp_comm": true}
  })");
}

// base() with an RFC 7386 merge patch applied (null removes a key).
json patched(const json& patch) {
  json j = base();
  j.merge_patch(patch);
  return j;
}

Result<ParsedScenario> parse(const json& j) { return parse_scenario(j, good_catalogs()); }

TEST(ParseScenario, MapsEveryFieldOfAValidScenario) {
  auto r = parse(base());
  ASSERT_TRUE(r) << to_string(r.error());
  const auto& s = r->scenario;
  const auto& preset = good_catalogs().find_model("llama3-70b")->spec;
  EXPECT_EQ(r->model_id, "llama3-70b");
  EXPECT_EQ(s.model.name, "Llama 3 70B");
  EXPECT_EQ(s.model.layers, preset.layers);
  EXPECT_EQ(s.model.kv_heads, 8);
  EXPECT_EQ(s.model.seq_len, 8192);
  EXPECT_TRUE(s.model.gated_ffn);
  EXPECT_TRUE(s.model.flash_attention);

  EXPECT_EQ(s.training.tokens, 2e12);
  EXPECT_EQ(s.training.global_batch, 4194304 / 8192);
  EXPECT_EQ(s.training.precision, sim::Precision::bf16);

  const auto& c = s.cluster;
  EXPECT_EQ(c.gpu.id, "h100-sxm-80gb");
  EXPECT_EQ(c.gpus, 64 * 8);
  EXPECT_EQ(c.gpus_per_node, 8);
  EXPECT_EQ(c.nodes(), 64);
  EXPECT_EQ(c.instance_id, "aws-p5.48xlarge");
  EXPECT_EQ(c.intra_node_bandwidth, units::gb_per_s(900.0 / 2));  // NVLink, one direction
  EXPECT_EQ(c.inter_node_bandwidth, units::gbit_per_s(3200.0 / 8));  // the node's NICs shared by 8 GPUs
  ASSERT_TRUE(c.price_per_gpu);
  EXPECT_DOUBLE_EQ(c.price_per_gpu->base(), units::usd_per_hour(55.04 / 8).base());
  EXPECT_EQ(c.price_source, "catalog: aws-p5.48xlarge on-demand us-east-1 2026-11-09");

  const auto& st = s.strategy;
  EXPECT_EQ(st.tp, 8);
  EXPECT_EQ(st.pp, 4);
  EXPECT_EQ(st.dp, 16);
  EXPECT_FALSE(st.cp.has_value());
  EXPECT_EQ(st.micro_batch, 1);
  EXPECT_EQ(st.virtual_stages, 1);
  EXPECT_EQ(st.zero, 1);
  EXPECT_EQ(st.recompute, sim::Recompute::selective);
  EXPECT_EQ(st.sequence_parallel, true);
  EXPECT_EQ(st.overlap_dp_comm, true);
  EXPECT_TRUE(st.fully_specified());
  EXPECT_FALSE(r->strategy_all_auto);
  EXPECT_TRUE(r->warnings.empty());
}

TEST(ParseScenario, PresetWithOverrides) {
  auto r = parse(patched({{"model", {{"seq_len", 4096}, {"name", "Llama 3 70B, 4K context"}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.model.seq_len, 4096);
  EXPECT_EQ(r->scenario.model.name, "Llama 3 70B, 4K context");
  EXPECT_EQ(r->scenario.model.hidden, 8192);
  EXPECT_EQ(r->model_id, "llama3-70b");
  EXPECT_EQ(r->scenario.training.global_batch, 4194304 / 4096);  // the batch follows the new seq_len
}

TEST(ParseScenario, OverridingHeadsOfAnMhaPresetKeepsItMha) {
  auto mha = parse(patched({{"model", {{"preset", "llama2-7b"}, {"heads", 64}}},
                            {"training", {{"global_batch_tokens", 4096 * 512}}}}));
  ASSERT_TRUE(mha) << to_string(mha.error());
  EXPECT_EQ(mha->scenario.model.kv_heads, 64);
  auto gqa = parse(patched({{"model", {{"heads", 32}}}}));
  ASSERT_TRUE(gqa) << to_string(gqa.error());
  EXPECT_EQ(gqa->scenario.model.kv_heads, 8);
}

TEST(ParseScenario, ExplicitModelWithDefaults) {
  auto r = parse(patched({{"model",
                           {{"preset", nullptr},
                            {"layers", 24},
                            {"hidden", 2048},
                            {"heads", 16},
                            {"ffn_hidden", 8192},
                            {"vocab", 50304},
                            {"seq_len", 2048},
                            {"attention", "mha"}}},
                          {"training", {{"global_batch_tokens", "1.048576M"}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
  const auto& m = r->scenario.model;
  EXPECT_EQ(r->model_id, "custom");
  EXPECT_EQ(m.name, "custom");
  EXPECT_EQ(m.kv_heads, 16);  // default = heads
  EXPECT_FALSE(m.gated_ffn);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_FALSE(m.dropout);
  EXPECT_TRUE(m.flash_attention);
  EXPECT_FALSE(m.rmsnorm);
  EXPECT_FALSE(m.rope);
  EXPECT_EQ(r->scenario.training.framework, sim::Framework::megatron);  // default: fused kernels
  EXPECT_EQ(r->scenario.training.global_batch, 1048576 / 2048);
}

TEST(ParseScenario, GqaAttentionWithFewerKvHeads) {
  auto r = parse(patched({{"model", {{"attention", "gqa"}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
}

TEST(ParseScenario, IntegersMayBeWrittenWithAFractionOfZero) {
  auto r = parse(patched({{"cluster", {{"nodes", 64.0}}}, {"strategy", {{"tp", 8.0}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.cluster.gpus, 512);
  EXPECT_EQ(r->scenario.strategy.tp, 8);
}

TEST(ParseScenario, GlobalBatchInSequencesAndTokensAsNumber) {
  auto r =
      parse(patched({{"training", {{"tokens", 1.5e12}, {"global_batch_tokens", nullptr}, {"global_batch", 1024}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.training.tokens, 1.5e12);
  EXPECT_EQ(r->scenario.training.global_batch, 1024);
}

TEST(ParseScenario, PrecisionDefaultsToBf16) {
  auto r = parse(patched({{"training", {{"precision", nullptr}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.training.precision, sim::Precision::bf16);
  auto fp8 = parse(patched({{"training", {{"precision", "fp8"}}}}));
  ASSERT_TRUE(fp8) << to_string(fp8.error());
  EXPECT_EQ(fp8->scenario.training.precision, sim::Precision::fp8);
}

TEST(ParseScenario, GpuAndCountAssumesTheDgxNetworkAndSaysSo) {
  auto r =
      parse(patched({{"cluster", {{"instance", nullptr}, {"nodes", nullptr}, {"gpu", "a100-80gb-sxm"}, {"gpus", 64}}},
                     {"strategy", "auto"}}));
  ASSERT_TRUE(r) << to_string(r.error());
  const auto& c = r->scenario.cluster;
  EXPECT_EQ(c.gpus, 64);
  EXPECT_EQ(c.gpus_per_node, 8);
  EXPECT_TRUE(c.instance_id.empty());
  EXPECT_EQ(c.intra_node_bandwidth, units::gb_per_s(600.0 / 2));
  EXPECT_EQ(c.inter_node_bandwidth, units::gbit_per_s(400));
  EXPECT_FALSE(c.price_per_gpu.has_value());
  EXPECT_TRUE(c.price_source.empty());
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_EQ(r->warnings[0],
            "scenario#/cluster/inter_node_gbps_per_gpu: assumed 400 Gbit/s per GPU inter-node (DGX reference); set "
            "cluster.inter_node_gbps_per_gpu");
  EXPECT_TRUE(r->strategy_all_auto);
}

TEST(ParseScenario, GpuClusterOptions) {
  auto r = parse(patched({{"cluster",
                           {{"instance", nullptr},
                            {"nodes", nullptr},
                            {"gpu", "h100-sxm-80gb"},
                            {"gpus", 32},
                            {"gpus_per_node", 4},
                            {"intra_node_gbps", 800},
                            {"inter_node_gbps_per_gpu", 200}}},
                          {"strategy", "auto"}}));
  ASSERT_TRUE(r) << to_string(r.error());
  const auto& c = r->scenario.cluster;
  EXPECT_EQ(c.gpus_per_node, 4);
  EXPECT_EQ(c.nodes(), 8);
  EXPECT_EQ(c.intra_node_bandwidth, units::gbit_per_s(800));
  EXPECT_EQ(c.inter_node_bandwidth, units::gbit_per_s(200));
  EXPECT_TRUE(r->warnings.empty());
}

TEST(ParseScenario, FewerGpusThanANodeMakeAPartialNode) {
  auto r =
      parse(patched({{"cluster", {{"instance", nullptr}, {"nodes", nullptr}, {"gpu", "h100-sxm-80gb"}, {"gpus", 4}}},
                     {"strategy", "auto"}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.cluster.gpus_per_node, 4);
  EXPECT_EQ(r->scenario.cluster.nodes(), 1);
  EXPECT_TRUE(r->warnings.empty());  // one node: the network is not used
}

TEST(ParseScenario, GpuWithNodesCountsWholeNodes) {
  auto r = parse(patched({{"cluster", {{"instance", nullptr}, {"nodes", 4}, {"gpu", "h100-sxm-80gb"}}},
                          {"strategy", "auto"}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.cluster.gpus, 32);
}

TEST(ParseScenario, PcieOnlyGpuTalksOverPcieInsideTheNode) {
  auto r = parse(patched({{"cluster", {{"instance", nullptr}, {"nodes", nullptr}, {"gpu", "l4-24gb"}, {"gpus", 8}}},
                          {"strategy", "auto"}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.cluster.intra_node_bandwidth, units::gb_per_s(31.5));
}

TEST(ParseScenario, InstanceNetworkCanBeOverridden) {
  auto r = parse(patched({{"cluster", {{"inter_node_gbps_per_gpu", 100}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.cluster.inter_node_bandwidth, units::gbit_per_s(100));
}

TEST(ParseScenario, SingleInstanceWithUnknownNetworkIsFine) {
  auto r = parse(patched({{"cluster", {{"instance", "lambda-8x-a100-80gb"}, {"nodes", 1}}}, {"strategy", "auto"}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_DOUBLE_EQ(r->scenario.cluster.price_per_gpu->base(), units::usd_per_hour(2.79).base());
  EXPECT_EQ(r->scenario.cluster.price_source, "catalog: lambda-8x-a100-80gb on-demand 2026-09");
}

TEST(ParseScenario, ScenarioPricingOverridesTheCatalog) {
  auto per_gpu = parse(patched({{"pricing", {{"usd_per_gpu_hour", 2.5}}}}));
  ASSERT_TRUE(per_gpu) << to_string(per_gpu.error());
  EXPECT_DOUBLE_EQ(per_gpu->scenario.cluster.price_per_gpu->base(), units::usd_per_hour(2.5).base());
  EXPECT_EQ(per_gpu->scenario.cluster.price_source, "scenario pricing");

  auto per_node = parse(patched({{"pricing", {{"usd_per_node_hour", 20}}}}));
  ASSERT_TRUE(per_node) << to_string(per_node.error());
  EXPECT_DOUBLE_EQ(per_node->scenario.cluster.price_per_gpu->base(), units::usd_per_hour(20.0 / 8).base());

  auto free = parse(patched({{"pricing", {{"usd_per_gpu_hour", 0}}}}));
  ASSERT_TRUE(free) << to_string(free.error());
  EXPECT_EQ(free->scenario.cluster.price_per_gpu->base(), 0.0);
}

TEST(ParseScenario, InstanceWithoutCatalogPriceHasNoPrice) {
  auto r = parse(patched({{"cluster", {{"instance", "tencent-gn10xp.20xlarge320"}, {"nodes", 2}}},
                          {"training", {{"precision", "fp16"}}},
                          {"strategy", "auto"}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_FALSE(r->scenario.cluster.price_per_gpu.has_value());
  EXPECT_EQ(r->scenario.cluster.inter_node_bandwidth, units::gbit_per_s(100.0 / 8));
}

TEST(ParseScenario, StrategyAutoInEveryForm) {
  for (const json& strategy : {json("auto"), json{{"tp", "auto"}, {"zero", "auto"}, {"recompute", "auto"},
                                                  {"sequence_parallel", "auto"}},
                               json::object()}) {
    SCOPED_TRACE(strategy.dump());
    json j = base();
    j["strategy"] = strategy;
    auto r = parse(j);
    ASSERT_TRUE(r) << to_string(r.error());
    EXPECT_TRUE(r->strategy_all_auto);
    EXPECT_FALSE(r->scenario.strategy.tp.has_value());
    EXPECT_FALSE(r->scenario.strategy.recompute.has_value());
    EXPECT_FALSE(r->scenario.strategy.sequence_parallel.has_value());
  }
  json j = base();
  j.erase("strategy");
  auto r = parse(j);
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_TRUE(r->strategy_all_auto);
}

TEST(ParseScenario, PartialStrategyKeepsTheGivenFields) {
  auto r = parse(patched({{"strategy", {{"dp", nullptr}, {"micro_batch", "auto"}, {"zero", 0}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.strategy.tp, 8);
  EXPECT_FALSE(r->scenario.strategy.dp.has_value());
  EXPECT_FALSE(r->scenario.strategy.micro_batch.has_value());
  EXPECT_EQ(r->scenario.strategy.zero, 0);
  EXPECT_FALSE(r->strategy_all_auto);
}

TEST(ParseScenario, CpAndEpOfOneAreAccepted) {
  auto r = parse(patched({{"strategy", {{"cp", 1}, {"ep", 1}, {"etp", 1}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.strategy.cp, 1);
  EXPECT_EQ(r->scenario.strategy.ep, 1);
  EXPECT_EQ(r->scenario.strategy.etp, 1);
}

// Megatron-Core layout: tp*pp*dp*cp = GPUs (8*4*8*2 = 512).
TEST(ParseScenario, ContextParallelIsPartOfTheGpuCount) {
  auto r = parse(patched({{"strategy", {{"dp", 8}, {"cp", 2}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.strategy.cp, 2);
  EXPECT_EQ(r->scenario.strategy.dp, 8);
  EXPECT_TRUE(r->warnings.empty());
  auto partial = parse(patched({{"strategy", {{"dp", "auto"}, {"cp", 4}}}}));
  ASSERT_TRUE(partial) << to_string(partial.error());
  EXPECT_EQ(partial->scenario.strategy.cp, 4);
}

// Experts are spread over the tp*dp*cp ranks: ep = 8 divides 8*16*1 = 128 and leaves the GPU count
// tp*pp*dp*cp = 512 as it is.
TEST(ParseScenario, ExpertParallelWithinTheDataParallelRanks) {
  auto r = parse(patched({{"model", {{"preset", "mixtral-8x7b"}}}, {"strategy", {{"ep", 8}, {"etp", "auto"}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.strategy.ep, 8);
  EXPECT_EQ(r->scenario.strategy.dp, 16);
  EXPECT_FALSE(r->scenario.strategy.etp.has_value());
  EXPECT_TRUE(r->warnings.empty());
}

// CONTRACT.md writes "tp*pp*dp (times cp and ep where used) = GPUs": 8*4*2*1*8 = 512. dp = 2 is then
// the expert-data-parallel size and the attention's data-parallel size is dp*ep = 16.
TEST(ParseScenario, ContractStyleExpertParallelProductIsReadAsExpertDataParallel) {
  auto r = parse(patched({{"model", {{"preset", "mixtral-8x7b"}}}, {"strategy", {{"dp", 2}, {"cp", 1}, {"ep", 8}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.strategy.dp, 16);
  EXPECT_EQ(r->scenario.strategy.ep, 8);
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_EQ(r->warnings[0],
            "scenario#/strategy/dp: tp*pp*dp*cp = 8*4*2*1 = 64 is not the number of GPUs (512); read with CONTRACT's "
            "tp*pp*dp*cp*ep = GPUs: data-parallel size for attention is dp*ep = 16 (capplan's layout is "
            "Megatron-Core's: tp*pp*dp*cp = GPUs, ep within tp*dp*cp)");
}

TEST(ParseScenario, ContractStyleProductFixesTheBatchGranule) {
  // 4e6 tokens / 32768 = 122.07 sequences: rounded to a multiple of micro_batch*dp = 1*16 after the
  // dp*ep reading, not of the written dp = 2.
  auto r = parse(patched({{"model", {{"preset", "mixtral-8x7b"}}},
                          {"training", {{"global_batch_tokens", "4M"}}},
                          {"strategy", {{"dp", 2}, {"ep", 8}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.training.global_batch, 128);
}

TEST(ParseScenario, MoePresetCarriesItsExperts) {
  auto r = parse(patched({{"model", {{"preset", "mixtral-8x7b"}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
  const auto& m = r->scenario.model;
  test::expect_mixtral_8x7b_experts(m);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.sliding_window, 0);
}

TEST(ParseScenario, MoeOverridesMergeOverThePreset) {
  auto r = parse(patched({{"model", {{"preset", "mixtral-8x7b"}, {"seq_len", 4096}, {"moe", {{"capacity_factor", 1.25},
                                                                                            {"top_k", 1}}}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
  const auto& m = r->scenario.model;
  EXPECT_EQ(m.seq_len, 4096);
  EXPECT_EQ(m.moe.experts, 8);  // from the preset
  EXPECT_EQ(m.moe.expert_ffn_hidden, 14336);
  EXPECT_EQ(m.moe.top_k, 1);
  EXPECT_EQ(m.moe.capacity_factor, 1.25);
  EXPECT_EQ(r->scenario.training.global_batch, 4194304 / 4096);
}

TEST(ParseScenario, CustomMoeModelWithDefaults) {
  auto r = parse(patched({{"model",
                           {{"preset", nullptr},
                            {"layers", 28},
                            {"hidden", 2048},
                            {"heads", 16},
                            {"ffn_hidden", 10944},
                            {"vocab", 102400},
                            {"seq_len", 4096},
                            {"gated_ffn", true},
                            {"moe",
                             {{"experts", 64},
                              {"top_k", 6},
                              {"expert_ffn_hidden", 1408},
                              {"shared_experts", 2},
                              {"dense_layers", 1}}}}},
                          {"strategy", "auto"}}));
  ASSERT_TRUE(r) << to_string(r.error());
  const auto& m = r->scenario.model;
  EXPECT_EQ(m.ffn_hidden, 10944);
  EXPECT_EQ(m.moe.experts, 64);
  EXPECT_EQ(m.moe.shared_experts, 2);
  EXPECT_EQ(m.moe.dense_layers, 1);
  EXPECT_EQ(m.moe.every_n_layers, 1);
  EXPECT_EQ(m.moe.capacity_factor, 1.0);
  EXPECT_EQ(m.moe_layer_count(), 27);
}

TEST(ParseScenario, AllMoeCustomModelNeedsNoDenseFfnSize) {
  auto r = parse(patched({{"model",
                           {{"preset", nullptr},
                            {"layers", 24},
                            {"hidden", 2048},
                            {"heads", 16},
                            {"vocab", 50304},
                            {"seq_len", 2048},
                            {"moe", {{"experts", 16}, {"top_k", 2}, {"expert_ffn_hidden", 4096}}}}},
                          {"training", {{"global_batch_tokens", 2048 * 512}}},
                          {"strategy", "auto"}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.model.ffn_hidden, 4096);  // unused: every layer is MoE
}

TEST(ParseScenario, MlaPresetCarriesItsLatentDimensions) {
  auto r = parse(patched({{"model", {{"preset", "deepseek-v3"}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
  const auto& m = r->scenario.model;
  EXPECT_EQ(m.attention, sim::Attention::mla);
  EXPECT_EQ(m.mla.q_lora_rank, 1536);
  EXPECT_EQ(m.mla.kv_lora_rank, 512);
  EXPECT_EQ(m.mla.qk_nope_head_dim, 128);
  EXPECT_EQ(m.mla.qk_rope_head_dim, 64);
  EXPECT_EQ(m.mla.v_head_dim, 128);
  EXPECT_EQ(m.kv_heads, m.heads);
  EXPECT_EQ(m.moe.dense_layers, 3);
  EXPECT_EQ(m.moe.shared_experts, 1);
}

TEST(ParseScenario, MlaOverrideMergesOverThePreset) {
  auto r = parse(patched({{"model", {{"preset", "deepseek-v3"}, {"mla", {{"kv_lora_rank", 256}, {"q_lora_rank", 0}}}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.model.mla.kv_lora_rank, 256);
  EXPECT_EQ(r->scenario.model.mla.q_lora_rank, 0);  // 0 = queries projected directly
  EXPECT_EQ(r->scenario.model.mla.v_head_dim, 128);
}

TEST(ParseScenario, CustomMlaModelIgnoresKvHeadsWithAWarning) {
  auto r = parse(patched({{"model",
                           {{"attention", "mla"},
                            {"mla",
                             {{"q_lora_rank", 1536},
                              {"kv_lora_rank", 512},
                              {"qk_nope_head_dim", 128},
                              {"qk_rope_head_dim", 64},
                              {"v_head_dim", 128}}}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
  const auto& m = r->scenario.model;
  EXPECT_EQ(m.attention, sim::Attention::mla);
  EXPECT_EQ(m.kv_heads, 64);  // llama3-70b's heads; its 8 KV heads are not used by MLA
  EXPECT_TRUE(r->warnings.empty());  // kv_heads came from the preset, not from the scenario

  auto explicit_kv = parse(patched({{"model",
                                     {{"attention", "mla"},
                                      {"kv_heads", 8},
                                      {"mla",
                                       {{"q_lora_rank", 0},
                                        {"kv_lora_rank", 512},
                                        {"qk_nope_head_dim", 128},
                                        {"qk_rope_head_dim", 64},
                                        {"v_head_dim", 128}}}}}}));
  ASSERT_TRUE(explicit_kv) << to_string(explicit_kv.error());
  EXPECT_EQ(explicit_kv->scenario.model.kv_heads, 64);
  ASSERT_EQ(explicit_kv->warnings.size(), 1u);
  EXPECT_NE(explicit_kv->warnings[0].find("scenario#/model/kv_heads: not used with attention \"mla\""),
            std::string::npos)
      << explicit_kv->warnings[0];
}

TEST(ParseScenario, NamingAStandardAttentionOnAnMlaPresetDropsTheLatent) {
  auto r = parse(patched({{"model", {{"preset", "deepseek-v3"}, {"attention", "mha"}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.model.attention, sim::Attention::standard);
  EXPECT_EQ(r->scenario.model.mla.kv_lora_rank, 0);
}

TEST(ParseScenario, SlidingWindowAttention) {
  auto r = parse(patched({{"model", {{"attention", "sliding_window"}, {"sliding_window", 4096}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.model.sliding_window, 4096);
  EXPECT_EQ(r->scenario.model.attention, sim::Attention::standard);
  EXPECT_EQ(r->scenario.model.kv_heads, 8);
  // A window alone, or with gqa, is accepted too; a window of seq_len is allowed.
  auto gqa = parse(patched({{"model", {{"attention", "gqa"}, {"sliding_window", 8192}}}}));
  ASSERT_TRUE(gqa) << to_string(gqa.error());
  EXPECT_EQ(gqa->scenario.model.sliding_window, 8192);
  auto alone = parse(patched({{"model", {{"sliding_window", 1024}}}}));
  ASSERT_TRUE(alone) << to_string(alone.error());
  EXPECT_EQ(alone->scenario.model.sliding_window, 1024);
}

TEST(ParseScenario, PresetWindowIsKeptUnlessTheAttentionIsNamed) {
  auto kept = parse(patched({{"model", {{"preset", "mistral-7b"}}}}));
  ASSERT_TRUE(kept) << to_string(kept.error());
  EXPECT_EQ(kept->scenario.model.sliding_window, 4096);
  auto full = parse(patched({{"model", {{"preset", "mistral-7b"}, {"attention", "gqa"}}}}));
  ASSERT_TRUE(full) << to_string(full.error());
  EXPECT_EQ(full->scenario.model.sliding_window, 0);
  auto resized = parse(patched({{"model", {{"preset", "mistral-7b"}, {"sliding_window", 2048}}}}));
  ASSERT_TRUE(resized) << to_string(resized.error());
  EXPECT_EQ(resized->scenario.model.sliding_window, 2048);
}

TEST(ParseScenario, PresetWindowLongerThanAShorterSequenceBecomesFullAttention) {
  auto r = parse(patched({{"model", {{"preset", "mistral-7b"}, {"seq_len", 2048}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.model.sliding_window, 0);
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_EQ(r->warnings[0],
            "scenario#/model/sliding_window: the preset's window (4096 tokens) covers the whole sequence (seq_len "
            "2048): full causal attention");
}

TEST(ParseScenario, MqaMeansOneKvHead) {
  auto r = parse(patched({{"model", {{"attention", "mqa"}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.model.kv_heads, 1);
  auto explicit_one = parse(patched({{"model", {{"attention", "mqa"}, {"kv_heads", 1}}}}));
  ASSERT_TRUE(explicit_one) << to_string(explicit_one.error());
  EXPECT_EQ(explicit_one->scenario.model.kv_heads, 1);
}

// CONTRACT.md's own example writes "4M" tokens for a 4096-token model (976.6 sequences).
TEST(ParseScenario, BatchTokensResolveToSequencesDataParallelismCanUseWithAWarning) {
  // seq_len 8192 here: 4e6 / 8192 = 488.28 sequences; the nearest whole count, 488 = 8 * 61, leaves
  // dp at most 8 on 512 GPUs. With the strategy auto the count within 5% that the most GPUs divide
  // is the nearest multiple of 512: 512 sequences (4.86% more, 2^22 tokens).
  json j = patched({{"training", {{"global_batch", nullptr}, {"global_batch_tokens", "4M"}}}});
  j["strategy"] = "auto";
  auto r = parse(j);
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.training.global_batch, 512);
  EXPECT_EQ(r->scenario.training.global_batch_tokens, 4e6);
  EXPECT_TRUE(r->warnings.empty());  // the words travel as the estimate's finding
  const auto e = sim::estimate(r->scenario, sim::DatasheetCost(r->scenario.cluster));
  ASSERT_TRUE(e) << to_string(e.error());
  const auto warnings = estimate_warnings(*e, *r);
  ASSERT_FALSE(warnings.empty());
  EXPECT_EQ(warnings[0].rfind("training.global_batch_tokens: 4000000 tokens are 488.28 sequences of 8192: using "
                              "512 sequences = 4194304 tokens",
                              0),
            0u)
      << warnings[0];
}

TEST(ParseScenario, BinaryBatchTokensAreExactSequences) {
  // "4Mi" = 4 * 2^20 = 4194304 tokens = 1024 sequences of 4096, taken as asked.
  auto r = parse(patched({{"model", {{"seq_len", 4096}}},
                          {"training", {{"global_batch_tokens", "4Mi"}}},
                          {"strategy", "auto"}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.training.global_batch, 1024);
  EXPECT_EQ(r->scenario.training.global_batch_tokens, 4194304.0);
  EXPECT_FALSE(sim::choose_global_batch(r->scenario).finding);
  // A binary suffix for the run's tokens too.
  auto tokens = parse(patched({{"training", {{"tokens", "2Ti"}}}}));
  ASSERT_TRUE(tokens) << to_string(tokens.error());
  EXPECT_EQ(tokens->scenario.training.tokens, 2.0 * 1024 * 1024 * 1024 * 1024);
}

TEST(ParseScenario, ABadBatchSuffixNamesTheFieldAndTheValue) {
  auto r = parse(patched({{"training", {{"global_batch_tokens", "4Xi"}}}}));
  ASSERT_FALSE(r);
  EXPECT_TRUE(has_diag(r.error(), "scenario#/training/global_batch_tokens", "got \"4Xi\"")) << to_string(r.error());
  EXPECT_TRUE(has_diag(r.error(), "scenario#/training/global_batch_tokens", "Mi")) << to_string(r.error());
}

TEST(ParseScenario, ABatchInSequencesIsKeptEvenWhenItForcesDpOne) {
  auto r = parse(patched({{"training", {{"global_batch_tokens", nullptr}, {"global_batch", 977}}},
                          {"strategy", "auto"}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.training.global_batch, 977);
  EXPECT_EQ(r->scenario.training.global_batch_tokens, 0);
}

TEST(ParseScenario, BatchTokensRoundToAMultipleOfMicroBatchTimesDp) {
  // 4e6 / 8192 = 488.28 sequences; with dp = 16 and micro_batch = 1 the nearest multiple of 16
  // is 31 * 16 = 496 (488.28 / 16 = 30.5 rounds to 31).
  const double granule = 16.0;
  const auto expected = static_cast<std::int64_t>(std::round(4e6 / 8192 / granule) * granule);
  json patch = {{"training", {{"global_batch", nullptr}, {"global_batch_tokens", "4M"}}},
                {"strategy", {{"dp", 16}, {"micro_batch", 1}}}};
  auto r = parse(patched(patch));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.training.global_batch, expected);
}

TEST(ParseScenario, LossKernelIsOptionalAndChecked) {
  auto dflt = parse(base());
  ASSERT_TRUE(dflt) << to_string(dflt.error());
  EXPECT_FALSE(dflt->scenario.training.loss_kernel.has_value());
  EXPECT_EQ(dflt->scenario.training.loss(), sim::LossKernel::fused);
  auto te = parse(patched({{"training", {{"loss_kernel", "te"}}}}));
  ASSERT_TRUE(te) << to_string(te.error());
  EXPECT_EQ(te->scenario.training.loss(), sim::LossKernel::te);
  auto bad = parse(patched({{"training", {{"loss_kernel", "fusd"}}}}));
  ASSERT_FALSE(bad);
  EXPECT_TRUE(has_diag(bad.error(), "scenario#/training/loss_kernel", "unknown loss kernel 'fusd'"))
      << to_string(bad.error());
}

TEST(ParseScenario, GradReduceInFp32IsOptionalAndMustBeABoolean) {
  auto dflt = parse(base());
  ASSERT_TRUE(dflt) << to_string(dflt.error());
  EXPECT_FALSE(dflt->scenario.training.grad_reduce_in_fp32.has_value());
  EXPECT_TRUE(dflt->scenario.training.fp32_gradients());  // bf16: Megatron-LM's fp32 default
  auto off = parse(patched({{"training", {{"grad_reduce_in_fp32", false}}}}));
  ASSERT_TRUE(off) << to_string(off.error());
  EXPECT_DOUBLE_EQ(off->scenario.training.gradient_bytes(), 2.0);
  auto bad = parse(patched({{"training", {{"grad_reduce_in_fp32", "yes"}}}}));
  ASSERT_FALSE(bad);
  EXPECT_TRUE(has_diag(bad.error(), "scenario#/training/grad_reduce_in_fp32", "expected true or false")) << to_string(bad.error());
}

TEST(ParseScenario, Fp8RecipeDefaultsToDelayedAndIsChecked) {
  auto dflt = parse(base());
  ASSERT_TRUE(dflt) << to_string(dflt.error());
  EXPECT_EQ(dflt->scenario.training.fp8_recipe, sim::Fp8Recipe::delayed);
  auto cur = parse(patched({{"training", {{"fp8_recipe", "current"}}}}));
  ASSERT_TRUE(cur) << to_string(cur.error());
  EXPECT_EQ(cur->scenario.training.fp8_recipe, sim::Fp8Recipe::current);
  auto params = parse(patched({{"training", {{"precision", "fp8"}, {"fp8_params", true}}}}));
  ASSERT_TRUE(params) << to_string(params.error());
  EXPECT_TRUE(params->scenario.training.fp8_weights());
  auto bad_params = parse(patched({{"training", {{"fp8_params", "yes"}}}}));
  ASSERT_FALSE(bad_params);
  EXPECT_TRUE(has_diag(bad_params.error(), "scenario#/training/fp8_params", "expected true or false"))
      << to_string(bad_params.error());
  auto bad = parse(patched({{"training", {{"fp8_recipe", "curent"}}}}));
  ASSERT_FALSE(bad);
  EXPECT_TRUE(has_diag(bad.error(), "scenario#/training/fp8_recipe", "unknown FP8 recipe 'curent'"))
      << to_string(bad.error());
}

// MXFP8 runs on Blackwell's tensor cores only: on a Hopper cluster it is an error naming the
// field and the GPU's architecture; on B200 it parses.
TEST(ParseScenario, Mxfp8NeedsABlackwellGpu) {
  auto hopper = parse(patched({{"training", {{"precision", "fp8"}, {"fp8_recipe", "mxfp8"}}}}));
  ASSERT_FALSE(hopper);
  EXPECT_TRUE(has_diag(hopper.error(), "scenario#/training/fp8_recipe", "MXFP8 needs Blackwell tensor cores"))
      << to_string(hopper.error());
  EXPECT_TRUE(has_diag(hopper.error(), "scenario#/training/fp8_recipe", "Hopper")) << to_string(hopper.error());
  auto blackwell = parse_scenario(patched({{"training", {{"precision", "fp8"}, {"fp8_recipe", "mxfp8"}}},
                                           {"cluster", {{"instance", nullptr}, {"nodes", nullptr}, {"gpu", "b200-hgx"},
                                                        {"gpus", 512}}}}),
                                  test::real_catalogs());
  ASSERT_TRUE(blackwell) << to_string(blackwell.error());
  EXPECT_EQ(blackwell->scenario.training.fp8_recipe, sim::Fp8Recipe::mxfp8);
}

TEST(ParseScenario, MoeExpertDetailsAreOptionalAndChecked) {
  auto plain = parse(patched({{"model", {{"preset", "mixtral-8x7b"}}}}));
  ASSERT_TRUE(plain) << to_string(plain.error());
  EXPECT_DOUBLE_EQ(plain->scenario.model.moe.activation_clamp, 0.0);
  EXPECT_FALSE(plain->scenario.model.moe.expert_bias);
  auto oss = parse(patched({{"model", {{"preset", "mixtral-8x7b"}, {"moe", {{"activation_clamp", 7.0}, {"expert_bias", true}}}}}}));
  ASSERT_TRUE(oss) << to_string(oss.error());
  EXPECT_DOUBLE_EQ(oss->scenario.model.moe.activation_clamp, 7.0);
  EXPECT_TRUE(oss->scenario.model.moe.expert_bias);
  auto bad = parse(patched({{"model", {{"preset", "mixtral-8x7b"}, {"moe", {{"activation_clamp", -1}}}}}}));
  ASSERT_FALSE(bad);
  EXPECT_TRUE(has_diag(bad.error(), "scenario#/model/moe/activation_clamp", "")) << to_string(bad.error());
}

TEST(ParseScenario, MoeDispatcherSettingsAreOptionalAndChecked) {
  auto plain = parse(patched({{"model", {{"preset", "mixtral-8x7b"}}}}));
  ASSERT_TRUE(plain) << to_string(plain.error());
  EXPECT_EQ(plain->scenario.model.moe.dispatcher, sim::MoeDispatcher::alltoall);  // Megatron-Core's
  EXPECT_FALSE(plain->scenario.model.moe.pad_to_capacity);                       // dropless
  EXPECT_FALSE(plain->scenario.model.moe.random_routing);
  auto set = parse(patched({{"model", {{"preset", "mixtral-8x7b"},
                                       {"moe", {{"dispatcher", "deepep"}, {"pad_to_capacity", true},
                                                {"random_routing", true}}}}}}));
  ASSERT_TRUE(set) << to_string(set.error());
  EXPECT_EQ(set->scenario.model.moe.dispatcher, sim::MoeDispatcher::deepep);
  EXPECT_TRUE(set->scenario.model.moe.pad_to_capacity);
  EXPECT_TRUE(set->scenario.model.moe.random_routing);
  const auto json = model_to_json(set->scenario.model);
  EXPECT_EQ(json.at("moe").at("dispatcher"), "deepep");
  EXPECT_EQ(json.at("moe").at("pad_to_capacity"), true);
  EXPECT_EQ(json.at("moe").at("random_routing"), true);
  auto bad = parse(patched({{"model", {{"preset", "mixtral-8x7b"},
                                       {"moe", {{"dispatcher", "nccl"}, {"pad_to_capacity", "yes"}}}}}}));
  ASSERT_FALSE(bad);
  EXPECT_TRUE(has_diag(bad.error(), "scenario#/model/moe/dispatcher", "unknown dispatcher 'nccl'"))
      << to_string(bad.error());
  EXPECT_TRUE(has_diag(bad.error(), "scenario#/model/moe/pad_to_capacity", "")) << to_string(bad.error());
}

// The MoE, MLA and Mamba tables (capplan/data/fields.hpp) are what the reader enforces: for every
// number row, a value past its maximum or below its minimum is refused at the row's own field, and
// one inside lands in the model. Each object is merged over a preset that has one, so no other key
// is required; the strategy is left to the planner so that no layout rule objects.
template <class T>
void expect_rows_enforced(const char* preset, const char* object, std::span<const Field<T>> rows,
                          const T& (*of)(const sim::ModelSpec&)) {
  int checked = 0;
  for (const auto& row : rows) {
    const FieldSpec& f = row.spec;
    if (f.kind != FieldKind::integer && f.kind != FieldKind::number) continue;
    const std::string where = std::string("scenario#/model/") + object + "/" + f.pointer;
    const auto with = [&](double v) {
      return parse_scenario(patched({{"model", {{"preset", preset}, {object, {{f.pointer, v}}}}}, {"strategy", "auto"}}),
                            test::real_catalogs());
    };
    const auto message_at = [&](const Result<ParsedScenario>& r) {
      if (r) return std::string();
      for (const auto& d : r.error()) {
        if (d.where == where) return d.message;
      }
      return std::string();
    };
    EXPECT_NE(message_at(with(f.max * 2 + 1)).find("must be at most"), std::string::npos) << where;
    EXPECT_NE(message_at(with(f.min - 1)), "") << where;
    // The row's own value in the preset, given again, is accepted and kept.
    ASSERT_NE(row.get, nullptr) << where;
    const auto same = with(row.get(of(test::real_catalogs().find_model(preset)->spec)).template get<double>());
    EXPECT_TRUE(same) << where << ": " << (same ? std::string() : to_string(same.error()));
    ++checked;
  }
  EXPECT_GE(checked, 5) << object;
}

TEST(ModelFields, MoeMlaAndMambaRowsAreWhatTheReaderEnforces) {
  expect_rows_enforced<sim::MoeSpec>("mixtral-8x7b", "moe", moe_fields(),
                                     [](const sim::ModelSpec& m) -> const sim::MoeSpec& { return m.moe; });
  expect_rows_enforced<sim::MlaSpec>("deepseek-v3", "mla", mla_fields(),
                                     [](const sim::ModelSpec& m) -> const sim::MlaSpec& { return m.mla; });
  expect_rows_enforced<sim::MambaSpec>("nemotron-h-8b", "mamba", mamba_fields(),
                                       [](const sim::ModelSpec& m) -> const sim::MambaSpec& { return m.mamba; });
}

// The run's settings of an MoE model are scenario keys, not keys of the model catalog: a models.json
// record is read through the same table without them (the catalog test refuses capacity_factor).
TEST(ModelFields, RunOnlyRowsAreTheRoutingsSettings) {
  std::vector<std::string> run_only;
  for (const auto& row : moe_fields()) {
    if (row.spec.run_only) run_only.emplace_back(row.spec.pointer);
  }
  EXPECT_EQ(run_only, (std::vector<std::string>{"capacity_factor", "pad_to_capacity", "random_routing", "dispatcher"}));
  for (const auto& row : mla_fields()) EXPECT_FALSE(row.spec.run_only) << row.spec.pointer;
  for (const auto& row : mamba_fields()) EXPECT_FALSE(row.spec.run_only) << row.spec.pointer;
}

TEST(ParseScenario, ModuleRecomputeFlagsAreOptionalBooleans) {
  auto r = parse(patched({{"strategy", {{"recompute", "selective"}, {"recompute_norms", true}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.strategy.recompute_norms, true);
  EXPECT_FALSE(r->scenario.strategy.recompute_moe_act.has_value());
  auto bad = parse(patched({{"strategy", {{"recompute_moe_act", "yes"}}}}));
  ASSERT_FALSE(bad);
  EXPECT_TRUE(has_diag(bad.error(), "scenario#/strategy/recompute_moe_act", "expected true, false or \"auto\""))
      << to_string(bad.error());
}

// model_to_json writes every key the parser reads: each catalog model comes back the same.
TEST(ParseScenario, ModelToJsonReadsBackToTheSameModel) {
  for (const auto& entry : good_catalogs().models) {
    SCOPED_TRACE(entry.id);
    const sim::ModelSpec& m = entry.spec;
    json j = base();
    j["model"] = model_to_json(m);
    j["strategy"] = "auto";
    auto r = parse(j);
    ASSERT_TRUE(r) << to_string(r.error());
    EXPECT_EQ(r->model_id, "custom");
    EXPECT_EQ(model_to_json(r->scenario.model), model_to_json(m));
    EXPECT_EQ(r->scenario.model.attention, m.attention);
    EXPECT_EQ(r->scenario.model.total_params(), m.total_params());
  }
}

// sim::kStrategyOptions drives the strategy keys: each one is read, refused when not a boolean,
// and written back by strategy_to_json so that parse_scenario reads the same layout again.
TEST(ParseScenario, EveryStrategyOptionIsReadAndWrittenBack) {
  for (const auto& o : sim::kStrategyOptions) {
    SCOPED_TRACE(o.key);
    auto r = parse(patched({{"strategy", {{"recompute", "selective"}, {o.key, !o.fallback}}}}));
    if (r) {  // an option may need more of the layout (e.g. an MoE model): check_layout's business
      EXPECT_EQ(r->scenario.strategy.*o.request, !o.fallback);
    }
    auto bad = parse(patched({{"strategy", {{o.key, "yes"}}}}));
    ASSERT_FALSE(bad);
    EXPECT_TRUE(has_diag(bad.error(), std::string("scenario#/strategy/") + o.key, "expected true, false or \"auto\""))
        << to_string(bad.error());

    sim::Parallelism p;
    p.tp = 8;
    p.pp = 4;
    p.dp = 16;
    p.*o.value = !o.fallback;
    const json written = strategy_to_json(p);
    EXPECT_EQ(written.at(o.key), !o.fallback);
    json j = base();
    j["strategy"] = written;
    auto back = parse(j);
    if (back) {
      for (const auto& each : sim::kStrategyOptions) EXPECT_EQ(back->scenario.strategy.*each.request, p.*each.value);
    }
  }
}

TEST(ParseScenario, GpuSpeedSpreadDefaultsToTheDocumentedValueAndIsChecked) {
  auto dflt = parse(base());
  ASSERT_TRUE(dflt) << to_string(dflt.error());
  EXPECT_DOUBLE_EQ(dflt->scenario.cluster.gpu_speed_spread, sim::kDefaultGpuSpeedSpread);
  auto r = parse(patched({{"cluster", {{"gpu_speed_spread", 0.0}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.cluster.gpu_speed_spread, 0.0);
  for (double v : {-0.01, 0.6}) {
    auto bad = parse(patched({{"cluster", {{"gpu_speed_spread", v}}}}));
    ASSERT_FALSE(bad) << v;
    EXPECT_TRUE(has_diag(bad.error(), "scenario#/cluster/gpu_speed_spread", "")) << to_string(bad.error());
  }
}

TEST(ParseScenario, OverlapOptionsAndSlowdown) {
  auto r = parse(patched({{"strategy", {{"tp_comm_overlap", true}, {"pp_comm_overlap", false}}},
                          {"training", {{"overlap_compute_slowdown", 0.1}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.strategy.tp_comm_overlap, true);
  EXPECT_EQ(r->scenario.strategy.pp_comm_overlap, false);
  EXPECT_DOUBLE_EQ(r->scenario.training.overlap_compute_slowdown, 0.1);
  auto bad = parse(patched({{"training", {{"overlap_compute_slowdown", -0.5}}}}));
  ASSERT_FALSE(bad);
  EXPECT_TRUE(has_diag(bad.error(), "scenario#/training/overlap_compute_slowdown", "must be >= 0"))
      << to_string(bad.error());
  auto wrong_type = parse(patched({{"strategy", {{"tp_comm_overlap", "yes"}}}}));
  ASSERT_FALSE(wrong_type);
  EXPECT_TRUE(has_diag(wrong_type.error(), "scenario#/strategy/tp_comm_overlap", "")) << to_string(wrong_type.error());
}

TEST(ParseScenario, EpCommOverlapIsAStrategyFlag) {
  auto r = parse(patched({{"strategy", {{"ep_comm_overlap", true}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.strategy.ep_comm_overlap, true);
  auto unset = parse(base());
  ASSERT_TRUE(unset) << to_string(unset.error());
  EXPECT_FALSE(unset->scenario.strategy.ep_comm_overlap.has_value());  // off unless asked for
  auto wrong_type = parse(patched({{"strategy", {{"ep_comm_overlap", 3}}}}));
  ASSERT_FALSE(wrong_type);
  EXPECT_TRUE(has_diag(wrong_type.error(), "scenario#/strategy/ep_comm_overlap", "")) << to_string(wrong_type.error());
}

TEST(ParseScenario, FrameworkSelectsTheKernelStyle) {
  auto r = parse(patched({{"training", {{"framework", "pytorch"}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.training.framework, sim::Framework::pytorch);
  auto bad = parse(patched({{"training", {{"framework", "pytorh"}}}}));
  ASSERT_FALSE(bad);
  EXPECT_TRUE(has_diag(bad.error(), "scenario#/training/framework", "unknown framework 'pytorh'"))
      << to_string(bad.error());
}

TEST(ParseScenario, WarnsWhenTokensAreFewerThanOneBatch) {
  auto r = parse(patched({{"training", {{"tokens", "1M"}}}}));
  ASSERT_TRUE(r) << to_string(r.error());
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("scenario#/training/tokens: fewer tokens"), std::string::npos);
}

TEST(ParseScenario, WhereArgumentPrefixesEveryPointer) {
  auto r = parse_scenario(patched({{"cluster", {{"nodes", -4}}}}), good_catalogs(), "runs/a.json");
  ASSERT_FALSE(r);
  EXPECT_TRUE(has_diag(r.error(), "runs/a.json#/cluster/nodes", "must be a positive integer; got -4"));
}

// --- Bad input: each case names the exact field ---------------------------------------------

struct BadScenario {
  const char* name;
  json patch;  // merge patch on base()
  const char* where;
  const char* message;
};

class BadScenarioTest : public testing::TestWithParam<BadScenario> {};

TEST_P(BadScenarioTest, NamesTheField) {
  const auto& c = GetParam();
  auto r = parse(patched(c.patch));
  ASSERT_FALSE(r) << c.name << " was accepted";
  EXPECT_TRUE(has_diag(r.error(), c.where, c.message));
  for (const auto& d : r.error()) EXPECT_EQ(d.severity, Diagnostic::Severity::error) << d.message;
}

json gpu_cluster(json fields) {
  json c{{"instance", nullptr}, {"nodes", nullptr}, {"gpu", "h100-sxm-80gb"}, {"gpus", 512}};
  c.merge_patch(fields);
  return c;
}

const BadScenario kBad[] = {
    // Unknown keys at every level, with the closest known key.
    {"TopLevelTypo", {{"strategyy", "auto"}}, "scenario#/strategyy", "unknown field (did you mean 'strategy'?"},
    {"ModelTypo", {{"model", {{"layer", 80}}}}, "scenario#/model/layer", "unknown field (did you mean 'layers'?"},
    {"TrainingTypo",
     {{"training", {{"token", "2T"}}}},
     "scenario#/training/token",
     "unknown field (did you mean 'tokens'?"},
    {"ClusterTypo", {{"cluster", {{"node", 64}}}}, "scenario#/cluster/node", "unknown field (did you mean 'nodes'?"},
    {"StrategyTypo", {{"strategy", {{"tensor_parallel", 8}}}}, "scenario#/strategy/tensor_parallel", "unknown field"},
    {"PricingTypo", {{"pricing", {{"usd_per_hour", 3}}}}, "scenario#/pricing/usd_per_hour", "unknown field"},
    {"PricingEmpty", {{"pricing", json::object()}}, "scenario#/pricing/usd_per_gpu_hour", "is missing"},
    // Missing sections and wrong types.
    {"ModelMissing", {{"model", nullptr}}, "scenario#/model", "required (the model"},
    {"TrainingMissing", {{"training", nullptr}}, "scenario#/training", "required"},
    {"ClusterMissing", {{"cluster", nullptr}}, "scenario#/cluster", "required"},
    {"ModelNotObject", {{"model", "llama3-70b"}}, "scenario#/model", "expected an object; got string \"llama3-70b\""},
    {"NameNotString", {{"name", 5}}, "scenario#/name", "expected a string; got number 5"},
    {"StrategyWord", {{"strategy", "best"}}, "scenario#/strategy", "must be \"auto\" or an object"},
    // Model.
    {"UnknownPreset",
     {{"model", {{"preset", "llama3-7b"}}}},
     "scenario#/model/preset",
     "unknown model preset 'llama3-7b' (did you mean 'llama3-70b'? known: llama3-70b, llama2-7b, gpt3-175b, "
     "mixtral-8x7b, deepseek-v3, mistral-7b)"},
    {"PresetNotString", {{"model", {{"preset", 70}}}}, "scenario#/model/preset", "expected a string"},
    {"ExplicitModelMissingVocab",
     {{"model",
       {{"preset", nullptr}, {"layers", 2}, {"hidden", 256}, {"heads", 4}, {"ffn_hidden", 1024}, {"seq_len", 8192}}}},
     "scenario#/model/vocab",
     "required (vocabulary size) is missing; or give a preset"},
    {"ZeroLayers", {{"model", {{"layers", 0}}}}, "scenario#/model/layers", "must be a positive integer; got 0"},
    {"NegativeHidden",
     {{"model", {{"hidden", -8192}}}},
     "scenario#/model/hidden",
     "must be a positive integer; got -8192"},
    {"AbsurdLayers", {{"model", {{"layers", 20000}}}}, "scenario#/model/layers", "must be at most 10000; got 20000"},
    {"AbsurdHidden", {{"model", {{"hidden", 1e30}}}}, "scenario#/model/hidden", "must be at most 1000000; got 1e+30"},
    {"AbsurdVocab", {{"model", {{"vocab", 2e8}}}}, "scenario#/model/vocab", "must be at most 100000000"},
    {"AbsurdSeqLen", {{"model", {{"seq_len", 1e9}}}}, "scenario#/model/seq_len", "must be at most 100000000"},
    {"FractionalHeads",
     {{"model", {{"heads", 64.5}}}},
     "scenario#/model/heads",
     "must be a positive integer; got 64.5"},
    {"HeadsNotDividingHidden",
     {{"model", {{"heads", 60}, {"kv_heads", 6}}}},
     "scenario#/model/heads",
     "must divide hidden (8192); got 60"},
    {"KvHeadsNotDividingHeads",
     {{"model", {{"kv_heads", 7}}}},
     "scenario#/model/kv_heads",
     "must divide heads (64); got 7"},
    {"KvHeadsAboveHeads",
     {{"model", {{"kv_heads", 128}}}},
     "scenario#/model/kv_heads",
     "must divide heads (64); got 128"},
    {"GatedFfnString",
     {{"model", {{"gated_ffn", "yes"}}}},
     "scenario#/model/gated_ffn",
     "expected true or false; got string \"yes\""},
    {"DropoutNumber", {{"model", {{"dropout", 1}}}}, "scenario#/model/dropout", "expected true or false; got number 1"},
    // Mixture of experts.
    {"MoeWithoutExpertSize",
     {{"model", {{"moe", {{"experts", 8}, {"top_k", 2}}}}}},
     "scenario#/model/moe/expert_ffn_hidden",
     "required (inner size of one expert) is missing"},
    {"MoeWithoutExperts",
     {{"model", {{"moe", {{"top_k", 2}, {"expert_ffn_hidden", 1024}}}}}},
     "scenario#/model/moe/experts",
     "required (routed experts per MoE layer) is missing"},
    {"MoeTopKAboveExperts",
     {{"model", {{"moe", {{"experts", 8}, {"top_k", 9}, {"expert_ffn_hidden", 1024}}}}}},
     "scenario#/model/moe/top_k",
     "must be at most experts (8); got 9"},
    {"MoeZeroExperts",
     {{"model", {{"moe", {{"experts", 0}, {"top_k", 1}, {"expert_ffn_hidden", 1024}}}}}},
     "scenario#/model/moe/experts",
     "must be a positive integer; got 0"},
    {"MoeFractionalTopK",
     {{"model", {{"moe", {{"experts", 8}, {"top_k", 1.5}, {"expert_ffn_hidden", 1024}}}}}},
     "scenario#/model/moe/top_k",
     "must be a positive integer; got 1.5"},
    {"MoeNegativeSharedExperts",
     {{"model", {{"moe", {{"experts", 8}, {"top_k", 2}, {"expert_ffn_hidden", 1024}, {"shared_experts", -1}}}}}},
     "scenario#/model/moe/shared_experts",
     "must be a non-negative integer; got -1"},
    {"MoeAllLayersDense",
     {{"model", {{"moe", {{"experts", 8}, {"top_k", 2}, {"expert_ffn_hidden", 1024}, {"dense_layers", 80}}}}}},
     "scenario#/model/moe/dense_layers",
     "must be less than layers (80); got 80"},
    {"MoeEveryZeroLayers",
     {{"model", {{"moe", {{"experts", 8}, {"top_k", 2}, {"expert_ffn_hidden", 1024}, {"every_n_layers", 0}}}}}},
     "scenario#/model/moe/every_n_layers",
     "must be a positive integer; got 0"},
    {"MoeCapacityBelowOne",
     {{"model", {{"preset", "mixtral-8x7b"}, {"moe", {{"capacity_factor", 0.9}}}}}},
     "scenario#/model/moe/capacity_factor",
     "must be >= 1; got 0.9"},
    {"MoeCapacityAbsurd",
     {{"model", {{"preset", "mixtral-8x7b"}, {"moe", {{"capacity_factor", 11}}}}}},
     "scenario#/model/moe/capacity_factor",
     "must be at most 10; got 11"},
    {"MoeCapacityString",
     {{"model", {{"preset", "mixtral-8x7b"}, {"moe", {{"capacity_factor", "1.2"}}}}}},
     "scenario#/model/moe/capacity_factor",
     "expected a number; got string \"1.2\""},
    {"MoeTypo",
     {{"model", {{"preset", "mixtral-8x7b"}, {"moe", {{"capacity", 1.2}}}}}},
     "scenario#/model/moe/capacity",
     "unknown field (did you mean 'capacity_factor'?"},
    {"MoeNotAnObject", {{"model", {{"moe", 8}}}}, "scenario#/model/moe", "expected an object; got number 8"},
    {"MoeWithDenseLayersNeedsFfnHidden",
     {{"model",
       {{"preset", nullptr}, {"layers", 24}, {"hidden", 2048}, {"heads", 16}, {"vocab", 50304}, {"seq_len", 2048},
        {"moe", {{"experts", 64}, {"top_k", 6}, {"expert_ffn_hidden", 1408}, {"dense_layers", 1}}}}}},
     "scenario#/model/ffn_hidden",
     "required (FFN inner size of the dense layers"},
    // Attention.
    {"MlaWithoutDimensions",
     {{"model", {{"attention", "mla"}}}},
     "scenario#/model/mla",
     "required with attention \"mla\" (q_lora_rank, kv_lora_rank"},
    {"MlaObjectWithoutMlaAttention",
     {{"model", {{"mla", {{"kv_lora_rank", 512}}}}}},
     "scenario#/model/mla",
     "is only used with attention \"mla\"; got attention not given"},
    {"MlaObjectWithGqa",
     {{"model", {{"preset", "deepseek-v3"}, {"attention", "gqa"}, {"kv_heads", 8}, {"mla", {{"kv_lora_rank", 512}}}}}},
     "scenario#/model/mla",
     "is only used with attention \"mla\"; got attention \"gqa\""},
    {"MlaMissingDimension",
     {{"model",
       {{"attention", "mla"},
        {"mla", {{"q_lora_rank", 1536}, {"kv_lora_rank", 512}, {"qk_nope_head_dim", 128}, {"qk_rope_head_dim", 64}}}}}},
     "scenario#/model/mla/v_head_dim",
     "required (per-head value dimension) is missing"},
    {"MlaNegativeQueryRank",
     {{"model", {{"preset", "deepseek-v3"}, {"mla", {{"q_lora_rank", -1}}}}}},
     "scenario#/model/mla/q_lora_rank",
     "must be a non-negative integer; got -1"},
    {"MlaZeroKvRank",
     {{"model", {{"preset", "deepseek-v3"}, {"mla", {{"kv_lora_rank", 0}}}}}},
     "scenario#/model/mla/kv_lora_rank",
     "must be a positive integer; got 0"},
    {"MlaTypo",
     {{"model", {{"preset", "deepseek-v3"}, {"mla", {{"kv_lora_rnk", 256}}}}}},
     "scenario#/model/mla/kv_lora_rnk",
     "unknown field (did you mean 'kv_lora_rank'?"},
    {"SlidingWindowWithoutSize",
     {{"model", {{"attention", "sliding_window"}}}},
     "scenario#/model/sliding_window",
     "required with attention \"sliding_window\" (tokens each query attends to) is missing"},
    {"SlidingWindowAboveSeqLen",
     {{"model", {{"sliding_window", 10000}}}},
     "scenario#/model/sliding_window",
     "must be at most seq_len (8192); got 10000"},
    {"SlidingWindowZero",
     {{"model", {{"sliding_window", 0}}}},
     "scenario#/model/sliding_window",
     "must be a positive integer; got 0"},
    {"SlidingWindowWithMla",
     {{"model", {{"preset", "deepseek-v3"}, {"sliding_window", 1024}}}},
     "scenario#/model/sliding_window",
     "is not supported with attention \"mla\"; got 1024"},
    {"MqaWithSeveralKvHeads",
     {{"model", {{"attention", "mqa"}, {"kv_heads", 8}}}},
     "scenario#/model/attention",
     "'mqa' needs kv_heads == 1; got kv_heads 8"},
    {"GqaWithoutFewerKvHeads",
     {{"model", {{"attention", "gqa"}, {"kv_heads", 64}}}},
     "scenario#/model/attention",
     "'gqa' needs kv_heads < heads"},
    {"MhaWithFewerKvHeads",
     {{"model", {{"attention", "mha"}}}},
     "scenario#/model/attention",
     "'mha' needs kv_heads == heads"},
    {"UnknownAttention",
     {{"model", {{"attention", "flash"}}}},
     "scenario#/model/attention",
     "unknown attention 'flash'"},
    // Training.
    {"TokensMissing", {{"training", {{"tokens", nullptr}}}}, "scenario#/training/tokens", "is missing"},
    {"TokensNegative", {{"training", {{"tokens", "-2T"}}}}, "scenario#/training/tokens", "must be > 0; got \"-2T\""},
    {"TokensZero", {{"training", {{"tokens", 0}}}}, "scenario#/training/tokens", "must be > 0; got 0"},
    {"TokensWords",
     {{"training", {{"tokens", "2 trillion"}}}},
     "scenario#/training/tokens",
     "expected a number or a string with an SI suffix such as \"2T\""},
    {"TokensBool", {{"training", {{"tokens", true}}}}, "scenario#/training/tokens", "expected a number or a string"},
    {"TokensAbsurd", {{"training", {{"tokens", "100P"}}}}, "scenario#/training/tokens", "must be at most 1e+16"},
    {"BatchBothForms", {{"training", {{"global_batch", 512}}}}, "scenario#/training", "give either"},
    {"BatchMissing",
     {{"training", {{"global_batch_tokens", nullptr}}}},
     "scenario#/training/global_batch_tokens",
     "required (the global batch"},
    {"BatchSequencesZero",
     {{"training", {{"global_batch_tokens", nullptr}, {"global_batch", 0}}}},
     "scenario#/training/global_batch",
     "must be a positive integer; got 0"},
    {"BatchSequencesFraction",
     {{"training", {{"global_batch_tokens", nullptr}, {"global_batch", 1.5}}}},
     "scenario#/training/global_batch",
     "must be a positive integer; got 1.5"},
    {"BatchTokensNegative",
     {{"training", {{"global_batch_tokens", -8192}}}},
     "scenario#/training/global_batch_tokens",
     "must be > 0"},
    {"PrecisionTypo",
     {{"training", {{"precision", "bf17"}}}},
     "scenario#/training/precision",
     "unknown precision 'bf17' (did you mean 'bf16'?"},
    {"PrecisionNumber", {{"training", {{"precision", 16}}}}, "scenario#/training/precision", "expected a string"},
    {"PrecisionUnsupportedByGpu",
     {{"cluster", gpu_cluster({{"gpu", "v100-sxm2-32gb"}, {"gpus", 16}})}, {"strategy", "auto"}},
     "scenario#/training/precision",
     "GPU 'v100-sxm2-32gb' has no dense bf16 peak in gpus.json (supported: fp16, fp32); got \"bf16\""},
    // Cluster.
    {"UnknownInstance",
     {{"cluster", {{"instance", "aws-p5"}}}},
     "scenario#/cluster/instance",
     "unknown instance 'aws-p5' (did you mean 'aws-p5.48xlarge'?"},
    {"UnknownGpu",
     {{"cluster", gpu_cluster({{"gpu", "h100"}})}},
     "scenario#/cluster/gpu",
     "unknown GPU 'h100' (did you mean 'h100-sxm-80gb'?"},
    {"BothInstanceAndGpu",
     {{"cluster", {{"gpu", "h100-sxm-80gb"}}}},
     "scenario#/cluster",
     "give either instance (with nodes) or gpu (with gpus), not both"},
    {"NeitherInstanceNorGpu",
     {{"cluster", {{"instance", nullptr}, {"nodes", nullptr}}}},
     "scenario#/cluster/instance",
     "required (instance with nodes, or gpu with gpus) is missing"},
    {"NegativeGpus",
     {{"cluster", gpu_cluster({{"gpus", -4}})}},
     "scenario#/cluster/gpus",
     "must be a positive integer; got -4"},
    {"ZeroGpus",
     {{"cluster", gpu_cluster({{"gpus", 0}})}},
     "scenario#/cluster/gpus",
     "must be a positive integer; got 0"},
    {"AbsurdGpus",
     {{"cluster", gpu_cluster({{"gpus", 1e30}})}},
     "scenario#/cluster/gpus",
     "must be at most 1000000; got 1e+30"},
    {"GpusAsString",
     {{"cluster", gpu_cluster({{"gpus", "512"}})}},
     "scenario#/cluster/gpus",
     "must be a positive integer; got \"512\""},
    {"FractionalGpus",
     {{"cluster", gpu_cluster({{"gpus", 8.5}})}},
     "scenario#/cluster/gpus",
     "must be a positive integer; got 8.5"},
    {"GpusNotWholeNodes",
     {{"cluster", gpu_cluster({{"gpus", 12}})}},
     "scenario#/cluster/gpus",
     "must be a multiple of gpus_per_node (8) or fewer than one node; got 12"},
    {"GpuCountMissing", {{"cluster", gpu_cluster({{"gpus", nullptr}})}}, "scenario#/cluster/gpus", "is missing"},
    {"GpusDisagreeWithNodes",
     {{"cluster", gpu_cluster({{"nodes", 2}})}},
     "scenario#/cluster/gpus",
     "must equal nodes x gpus_per_node (16); got 512"},
    {"ZeroGpusPerNode",
     {{"cluster", gpu_cluster({{"gpus_per_node", 0}})}},
     "scenario#/cluster/gpus_per_node",
     "must be a positive integer; got 0"},
    {"GpusWithInstance", {{"cluster", {{"gpus", 512}}}}, "scenario#/cluster/gpus", "not used with instance"},
    {"NodesZero", {{"cluster", {{"nodes", 0}}}}, "scenario#/cluster/nodes", "must be a positive integer; got 0"},
    {"NodesAbsurd", {{"cluster", {{"nodes", 1e6}}}}, "scenario#/cluster/nodes", "must be at most 100000; got 1000000"},
    {"NodesMissing", {{"cluster", {{"nodes", nullptr}}}}, "scenario#/cluster/nodes", "is missing"},
    {"InterNodeZero",
     {{"cluster", {{"inter_node_gbps_per_gpu", 0}}}},
     "scenario#/cluster/inter_node_gbps_per_gpu",
     "must be > 0; got 0"},
    {"IntraNodeNegative",
     {{"cluster", {{"intra_node_gbps", -1}}}},
     "scenario#/cluster/intra_node_gbps",
     "must be > 0; got -1"},
    {"IntraNodeString",
     {{"cluster", {{"intra_node_gbps", "fast"}}}},
     "scenario#/cluster/intra_node_gbps",
     "expected a number; got string \"fast\""},
    {"UnknownNetworkAcrossNodes",
     {{"cluster", {{"instance", "lambda-8x-a100-80gb"}, {"nodes", 2}}}},
     "scenario#/cluster/instance",
     "network bandwidth of 'lambda-8x-a100-80gb' is unknown in the catalog; give cluster.inter_node_gbps_per_gpu"},
    // Pricing.
    {"PriceNegative",
     {{"pricing", {{"usd_per_gpu_hour", -1}}}},
     "scenario#/pricing/usd_per_gpu_hour",
     "must be >= 0; got -1"},
    {"PriceBoth",
     {{"pricing", {{"usd_per_gpu_hour", 2}, {"usd_per_node_hour", 16}}}},
     "scenario#/pricing",
     "give either usd_per_gpu_hour or usd_per_node_hour, not both"},
    {"PriceString",
     {{"pricing", {{"usd_per_node_hour", "$20"}}}},
     "scenario#/pricing/usd_per_node_hour",
     "expected a number"},
    // Strategy.
    {"ContextParallelCountsInTheProduct",
     {{"strategy", {{"cp", 2}}}},
     "scenario#/strategy",
     "tp*pp*dp*cp = 8*4*16*2 = 1024 must equal the number of GPUs (512)"},
    {"CpZero", {{"strategy", {{"cp", 0}}}}, "scenario#/strategy/cp", "must be a positive integer; got 0"},
    {"CpFraction", {{"strategy", {{"cp", 1.5}}}}, "scenario#/strategy/cp", "must be a positive integer; got 1.5"},
    {"ExpertParallelOnADenseModel",
     {{"strategy", {{"ep", 2}}}},
     "scenario#/strategy/ep",
     "expert parallelism needs an MoE model (model.moe or an MoE preset); got 2"},
    {"ExpertParallelNotDividingTpDpCp",
     {{"model", {{"preset", "mixtral-8x7b"}}}, {"strategy", {{"ep", 3}}}},
     "scenario#/strategy/ep",
     "must divide tp*dp*cp = 128 (experts are spread over the tensor-, data- and context-parallel ranks, as in "
     "Megatron-Core); got 3"},
    {"ExpertParallelProductMatchesNeitherReading",
     {{"model", {{"preset", "mixtral-8x7b"}}}, {"strategy", {{"dp", 8}, {"ep", 4}}}},
     "scenario#/strategy",
     "tp*pp*dp*cp = 8*4*8*1 = 256 must equal the number of GPUs (512); ep is carved out of the tp*dp*cp ranks"},
    {"ExpertTensorParallelOnADenseModel",
     {{"strategy", {{"etp", 2}}}},
     "scenario#/strategy/etp",
     "expert tensor parallelism needs an MoE model (model.moe or an MoE preset); got 2"},
    {"EtpZero", {{"strategy", {{"etp", 0}}}}, "scenario#/strategy/etp", "must be a positive integer; got 0"},
    {"TpZero", {{"strategy", {{"tp", 0}}}}, "scenario#/strategy/tp", "must be a positive integer; got 0"},
    {"TpNegative", {{"strategy", {{"tp", -8}}}}, "scenario#/strategy/tp", "must be a positive integer; got -8"},
    {"TpString", {{"strategy", {{"tp", "8"}}}}, "scenario#/strategy/tp", "must be a positive integer; got \"8\""},
    {"MicroBatchFraction",
     {{"strategy", {{"micro_batch", 0.5}}}},
     "scenario#/strategy/micro_batch",
     "must be a positive integer; got 0.5"},
    {"ZeroStageFour", {{"strategy", {{"zero", 4}}}}, "scenario#/strategy/zero", "must be at most 3; got 4"},
    {"ZeroStageNegative",
     {{"strategy", {{"zero", -1}}}},
     "scenario#/strategy/zero",
     "must be a non-negative integer; got -1"},
    {"RecomputeTypo",
     {{"strategy", {{"recompute", "selectve"}}}},
     "scenario#/strategy/recompute",
     "unknown recompute 'selectve' (did you mean 'selective'?"},
    {"SequenceParallelString",
     {{"strategy", {{"sequence_parallel", "yes"}}}},
     "scenario#/strategy/sequence_parallel",
     "expected true, false or \"auto\"; got string \"yes\""},
    {"OverlapNumber",
     {{"strategy", {{"overlap_dp_comm", 1}}}},
     "scenario#/strategy/overlap_dp_comm",
     "expected true, false or \"auto\"; got number 1"},
    {"LayoutDoesNotCoverGpus",
     {{"strategy", {{"dp", 8}}}},
     "scenario#/strategy",
     "tp*pp*dp*cp = 8*4*8*1 = 256 must equal the number of GPUs (512)"},
    {"PartialLayoutDoesNotDivideGpus",
     {{"strategy", {{"pp", 3}, {"dp", nullptr}}}},
     "scenario#/strategy",
     "the given parallel sizes multiply to 24, which does not divide the number of GPUs (512)"},
};

INSTANTIATE_TEST_SUITE_P(Scenario, BadScenarioTest, testing::ValuesIn(kBad),
                         [](const testing::TestParamInfo<BadScenario>& i) { return std::string(i.param.name); });

TEST(ParseScenario, RootMustBeAnObject) {
  auto r = parse(json::array());
  ASSERT_FALSE(r);
  EXPECT_TRUE(has_diag(r.error(), "scenario#", "expected an object; got array"));
}

TEST(ParseScenario, CollectsAllErrorsInOnePass) {
  auto r = parse(patched({{"model", {{"layers", -1}}},
                          {"training", {{"tokens", "lots"}, {"precision", "int4"}}},
                          {"cluster", {{"nodes", 0}}},
                          {"strategy", {{"tp", 0}, {"etp", 0}, {"zero", 9}}},
                          {"extra", true}}));
  ASSERT_FALSE(r);
  const auto& d = r.error();
  EXPECT_TRUE(has_diag(d, "scenario#/extra", "unknown field"));
  EXPECT_TRUE(has_diag(d, "scenario#/model/layers", "must be a positive integer; got -1"));
  EXPECT_TRUE(has_diag(d, "scenario#/training/tokens", "expected a number or a string"));
  EXPECT_TRUE(has_diag(d, "scenario#/training/precision", "unknown precision 'int4'"));
  EXPECT_TRUE(has_diag(d, "scenario#/cluster/nodes", "must be a positive integer; got 0"));
  EXPECT_TRUE(has_diag(d, "scenario#/strategy/tp", "must be a positive integer; got 0"));
  EXPECT_TRUE(has_diag(d, "scenario#/strategy/etp", "must be a positive integer; got 0"));
  EXPECT_TRUE(has_diag(d, "scenario#/strategy/zero", "must be at most 3; got 9"));
  EXPECT_EQ(d.size(), 8u) << to_string(d);
}

TEST(ParseScenario, NonFiniteNumbersAreRejected) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    json patch;
    const char* where;
    const char* message;
  };
  const Case cases[] = {
      {{{"training", {{"tokens", inf}}}}, "scenario#/training/tokens", "must be a finite number; got inf"},
      {{{"training", {{"tokens", nan}}}}, "scenario#/training/tokens", "must be a finite number; got nan"},
      {{{"pricing", {{"usd_per_gpu_hour", inf}}}},
       "scenario#/pricing/usd_per_gpu_hour",
       "must be a finite number; got inf"},
      {{{"cluster", {{"inter_node_gbps_per_gpu", -inf}}}},
       "scenario#/cluster/inter_node_gbps_per_gpu",
       "must be a finite number; got -inf"},
      {{{"cluster", {{"nodes", inf}}}}, "scenario#/cluster/nodes", "must be a positive integer; got inf"},
      {{{"strategy", {{"tp", nan}}}}, "scenario#/strategy/tp", "must be a positive integer; got nan"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.where);
    auto r = parse(patched(c.patch));
    ASSERT_FALSE(r);
    EXPECT_TRUE(has_diag(r.error(), c.where, c.message));
  }
}

TEST(ParseScenarioText, ParsesValidText) {
  auto r = parse_scenario_text(base().dump(2), good_catalogs());
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.cluster.gpus, 512);
}

TEST(ParseScenarioText, MalformedJsonNamesLineAndColumn) {
  const char* text = "{\n  \"model\": {\n    \"preset\": llama3\n  }\n}\n";
  auto r = parse_scenario_text(text, good_catalogs());
  ASSERT_FALSE(r);
  ASSERT_EQ(r.error().size(), 1u);
  EXPECT_EQ(r.error()[0].where, "scenario");
  EXPECT_EQ(r.error()[0].message.rfind("invalid JSON at line 3, column 15: syntax error", 0), 0u)
      << r.error()[0].message;
}

TEST(ParseScenarioText, TruncatedAndEmptyTextAreErrors) {
  for (const char* text : {"", "{", "{\"model\": ", "[1, 2", "nul"}) {
    auto r = parse_scenario_text(text, good_catalogs(), "in.json");
    ASSERT_FALSE(r) << text;
    EXPECT_TRUE(has_diag(r.error(), "in.json", "invalid JSON at line 1")) << text;
  }
}

TEST(ParseScenarioText, NumberOverflowIsAnError) {
  std::string text = base().dump(2);
  const std::string from = "\"tokens\": \"2T\"";
  text.replace(text.find(from), from.size(), "\"tokens\": 1e400");
  auto r = parse_scenario_text(text, good_catalogs());
  ASSERT_FALSE(r);
  ASSERT_EQ(r.error().size(), 1u);
  EXPECT_NE(r.error()[0].message.find("number overflow parsing '1e400' (numbers must be finite)"), std::string::npos)
      << r.error()[0].message;
  EXPECT_NE(r.error()[0].message.find("invalid JSON at line"), std::string::npos) << r.error()[0].message;
}

TEST(ParseScenarioText, DuplicateKeysAreErrors) {
  const char* text = R"({"model": {"preset": "llama3-70b", "preset": "gpt3-175b"}, "strategy": "auto",
    "training": {"tokens": "2T", "global_batch": 8}, "cluster": {"instance": "aws-p5.48xlarge", "nodes": 1}})";
  auto r = parse_scenario_text(text, good_catalogs());
  ASSERT_FALSE(r);
  EXPECT_TRUE(has_diag(r.error(), "scenario#/model/preset", "duplicate key"));
}

}  // namespace
}  // namespace capplan::data
