// SPDX-License-Identifier: Apache-2.0
// Hybrid Mamba-2 models in the data layer: the catalog's presets, the scenario's
// layer_pattern and mamba keys with their errors, and the hybrid-runs CSV layout that
// validate-published recognises by its header.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "capplan/data/published_runs.hpp"
#include "capplan/data/scenario_io.hpp"
#include "capplan/data/validation.hpp"
#include "test_support.hpp"

namespace capplan::data {
namespace {

// The presets' pattern counts as Megatron-Bridge's recipes give them (@067f987): Nemotron-H 56B
// 54 Mamba + 54 MLP + 10 attention = 118; Nemotron 3 Nano 23 Mamba + 23 MoE + 6 attention = 52.
TEST(HybridPresets, PatternCountsFollowTheRecipes) {
  const auto& c = test::real_catalogs();
  const ModelEntry* h56 = c.find_model("nemotron-h-56b");
  ASSERT_NE(h56, nullptr);
  EXPECT_EQ(h56->spec.layers, 118);
  EXPECT_EQ(h56->spec.mamba_layer_count(), 54);
  EXPECT_EQ(h56->spec.dense_ffn_layer_count(), 54);
  EXPECT_EQ(h56->spec.attention_layer_count(), 10);
  EXPECT_EQ(h56->spec.mamba.heads, 256);
  EXPECT_EQ(h56->spec.mamba.state, 256);
  const ModelEntry* nano = c.find_model("nemotron-3-nano-30b-a3b");
  ASSERT_NE(nano, nullptr);
  EXPECT_EQ(nano->spec.mamba_layer_count(), 23);
  EXPECT_EQ(nano->spec.moe_layer_count(), 23);
  EXPECT_EQ(nano->spec.attention_layer_count(), 6);
  EXPECT_EQ(nano->spec.dense_ffn_layer_count(), 0);
  // Mamba in_proj width 2 x 4096 + 2 x 8 x 128 + 64 = 10304 (the Nano's projection size).
  EXPECT_EQ(nano->spec.mamba.in_proj_dim(), 10304);
  // The shapes give 31.6B (the name's 30B within 6%, the catalog test's bound).
  EXPECT_NEAR(nano->spec.total_params() / 1e9, 31.58, 0.01);
}

nlohmann::json hybrid_scenario(nlohmann::json model) {
  return {{"model", std::move(model)},
          {"training", {{"tokens", 1e9}, {"global_batch", 16}}},
          {"cluster", {{"gpu", "h100-sxm-80gb"}, {"gpus", 8}}},
          {"strategy", {{"tp", 1}, {"pp", 1}, {"dp", 8}, {"micro_batch", 1}}}};
}

TEST(HybridScenario, APatternOverAPresetSetsTheLayersAndRoundTrips) {
  auto s = parse_scenario(hybrid_scenario({{"preset", "nemotron-h-8b"}, {"layer_pattern", "M*-M"}}),
                          test::real_catalogs(), "t");
  ASSERT_TRUE(s) << to_string(s.error());
  EXPECT_EQ(s->scenario.model.layers, 4);
  EXPECT_EQ(s->scenario.model.mamba_layer_count(), 2);
  const nlohmann::json back = model_to_json(s->scenario.model);
  EXPECT_EQ(back["layer_pattern"], "M*-M");
  EXPECT_EQ(back["mamba"]["heads"], 128);
}

TEST(HybridScenario, BadPatternsAndShapesAreErrorsNamingTheKey) {
  const auto& c = test::real_catalogs();
  auto bad_symbol = parse_scenario(hybrid_scenario({{"preset", "nemotron-h-8b"}, {"layer_pattern", "M*X"}}), c, "t");
  ASSERT_FALSE(bad_symbol);
  EXPECT_NE(to_string(bad_symbol.error()).find("t#/model/layer_pattern"), std::string::npos);
  EXPECT_NE(to_string(bad_symbol.error()).find("got 'X' at position 2"), std::string::npos);
  // E needs experts; the 8B has none.
  auto no_moe = parse_scenario(hybrid_scenario({{"preset", "nemotron-h-8b"}, {"layer_pattern", "ME"}}), c, "t");
  ASSERT_FALSE(no_moe);
  EXPECT_NE(to_string(no_moe.error()).find("no `moe` experts"), std::string::npos);
  // Groups must divide the heads (Megatron-Core's assert).
  auto groups = parse_scenario(
      hybrid_scenario({{"preset", "nemotron-h-8b"}, {"mamba", {{"heads", 128}, {"groups", 3}}}}), c, "t");
  ASSERT_FALSE(groups);
  EXPECT_NE(to_string(groups.error()).find("t#/model/mamba/groups"), std::string::npos);
  // A layers count that disagrees with the pattern.
  auto layers = parse_scenario(
      hybrid_scenario({{"preset", "nemotron-h-8b"}, {"layer_pattern", "M*"}, {"layers", 3}}), c, "t");
  ASSERT_FALSE(layers);
  EXPECT_NE(to_string(layers.error()).find("must equal the layer_pattern's length (2); got 3"), std::string::npos);
}

constexpr const char* kHeader =
    "row_id,source_group,source,source_locator,framework,framework_version,task,model,arch_summary,gpu,num_gpus,"
    "precision,seq_len,global_batch,micro_batch,tp,pp,cp,vp,ep,fsdp,tokens_per_s_per_gpu,tokens_per_s_total,"
    "step_time_s,model_tflops_per_gpu,metric_definition,verification,notes\n";

// A Nemotron 3 Nano row becomes the preset with the row's layout and the recipe's settings; a
// Nemotron 3 Super row and an NVFP4 row are kept, unusable, with their reasons.
TEST(HybridRuns, RowsBecomeScenariosOrSayWhyNot) {
  auto file = test::scratch_dir() / "hybrid.csv";
  test::write_file(file,
                   std::string(kHeader) +
                       "H1,g,s,l,Megatron-Bridge,26.04,pre-training,Nemotron_3_Nano,a,DGX-GB200,8,MXFP8,8192,512,2,1,1,1,"
                       "n/a,8,,32727,,,729,m,verified,\n"
                       "H2,g,s,l,Megatron-Bridge,26.04,pre-training,Nemotron_3_Super,a,DGX-GB200,64,MXFP8,8192,512,1,"
                       "2,1,1,1,64,,6674,,,565,m,verified,\n"
                       "H3,g,s,l,Megatron-Bridge,26.04,pre-training,Nemotron_3_Nano,a,DGX-H100,16,NVFP4,8192,1024,1,1,"
                       "1,1,1,8,,14336,,,321,m,verified,\n"
                       "H4,g,s,l,llmb,,pre-training,Nemotron-H 56B,a,GB200,128,FP8 (current scaling),8192,384,2,4,1,1,"
                       "None,,,,,5.31,1961.5,m,UNVERIFIED,\n"
                       "H5,g,s,l,Megatron-Bridge,26.04.01,pre-training,Nemotron_3_Nano,a,DGX-H100,16,FP8,8192,1024,1,1,"
                       "1,1,n/a,8,0,14336,,,321,m,verified,\n"
                       "H6,g,s,l,Megatron-Bridge,26.04.01,pre-training,Nemotron_3_Nano,a,DGX-H100,16,BF16,8192,1024,1,1,"
                       "1,1,n/a,8,0,12000,,,300,m,verified,\n");
  auto r = load_published_runs(file, test::real_catalogs());
  ASSERT_TRUE(r) << to_string(r.error());
  ASSERT_EQ(r->size(), 6u);
  const PublishedRun& nano = (*r)[0];
  ASSERT_TRUE(nano.usable) << nano.skip_reason;
  EXPECT_EQ(nano.arch_type, "hybrid-moe");
  EXPECT_DOUBLE_EQ(nano.measured_tokens_per_s_per_gpu, 32727);
  const auto& s = nano.scenario;
  EXPECT_EQ(s["model"]["preset"], "nemotron-3-nano-30b-a3b");
  EXPECT_EQ(s["cluster"]["gpu"], "gb200-nvl72");
  EXPECT_EQ(s["cluster"]["gpus_per_node"], 8);  // all 8 GPUs in one NVL72 rack's NVLink domain
  EXPECT_EQ(s["strategy"]["ep"], 8);
  EXPECT_EQ(s["strategy"]["dp"], 8);
  EXPECT_EQ(s["strategy"]["micro_batch"], 2);
  EXPECT_EQ(s["strategy"]["recompute"], "none");
  EXPECT_EQ(s["training"]["precision"], "fp8");
  EXPECT_EQ(s["training"]["fp8_recipe"], "mxfp8");  // the row's MXFP8
  EXPECT_EQ(s["model"]["moe"]["dispatcher"], "deepep");
  EXPECT_FALSE(nano.assumptions.empty());
  EXPECT_FALSE((*r)[1].usable);
  EXPECT_NE((*r)[1].skip_reason.find("LatentMoE"), std::string::npos) << (*r)[1].skip_reason;
  EXPECT_FALSE((*r)[2].usable);
  EXPECT_NE((*r)[2].skip_reason.find("FP4"), std::string::npos) << (*r)[2].skip_reason;
  // Throughput from the step time: 384 x 8192 / 5.31 s / 128 GPUs; racks of 64 GPUs.
  const PublishedRun& h56 = (*r)[3];
  ASSERT_TRUE(h56.usable) << h56.skip_reason;
  EXPECT_NEAR(h56.measured_tokens_per_s_per_gpu, 384.0 * 8192 / 5.31 / 128, 1e-9);
  EXPECT_EQ(h56.scenario["cluster"]["gpus_per_node"], 64);
  EXPECT_EQ(h56.scenario["training"]["fp8_recipe"], "current");
  EXPECT_EQ(h56.scenario["strategy"]["sequence_parallel"], true);
  // H100: the perf configs of the rows' containers (Megatron-Bridge v0.3.1, v0.4.1) recompute the
  // modules moe and layernorm, plus core_attn and moe_act in FP8.
  for (const std::size_t i : {std::size_t{4}, std::size_t{5}}) {
    const PublishedRun& h100 = (*r)[i];
    ASSERT_TRUE(h100.usable) << h100.skip_reason;
    EXPECT_EQ(h100.scenario["strategy"]["recompute"], "selective") << i;
    EXPECT_EQ(h100.scenario["strategy"]["recompute_norms"], true) << i;
    EXPECT_EQ(h100.scenario["strategy"]["recompute_moe"], true) << i;
    EXPECT_EQ(h100.scenario["strategy"].value("recompute_moe_act", false), i == 4) << i;
  }
  // Each usable row is predicted end to end (finite).
  const ValidationRow row = evaluate_row(nano, test::real_catalogs());
  ASSERT_TRUE(row.predicted) << row.error;
  EXPECT_GT(row.estimate, 0);
  EXPECT_TRUE(std::isfinite(row.estimate));
}

TEST(HybridRuns, AMissingColumnOrAShortRowIsAnErrorNamingTheLine) {
  auto file = test::scratch_dir() / "hybrid.csv";
  test::write_file(file, "row_id,source_group,arch_summary,model\nH1,g,a,Nemotron_3_Nano\n");
  auto r = load_published_runs(file, test::real_catalogs());
  ASSERT_FALSE(r);
  EXPECT_NE(to_string(r.error()).find("hybrid.csv:1: missing column 'gpu'"), std::string::npos) << to_string(r.error());
  test::write_file(file, std::string(kHeader) + "H1,g\n");
  auto short_row = load_published_runs(file, test::real_catalogs());
  ASSERT_FALSE(short_row);
  EXPECT_NE(to_string(short_row.error()).find("hybrid.csv:2: malformed CSV"), std::string::npos);
}

}  // namespace
}  // namespace capplan::data
