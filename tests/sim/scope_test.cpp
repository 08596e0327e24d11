// SPDX-License-Identifier: Apache-2.0
// The scope table (scope.hpp): one row per Scope, and layer counts that add up over the stages.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "capplan/sim/scope.hpp"
#include "capplan/sim/stage_layout.hpp"
#include "test_support.hpp"

namespace capplan::sim {
namespace {

using test::cluster_of;
using test::job_of;
using test::layout;

// A Scope added without its row, or a row out of order, does not compile.
static_assert(kScopeTraits.size() == kScopeCount);
static_assert(scope_table_complete());
static_assert(traits(Scope::mamba).scope == Scope::mamba);

TEST(ScopeTraits, OneNamedRowPerScope) {
  std::set<std::string> names;
  for (std::size_t i = 0; i < kScopeCount; ++i) {
    const auto s = static_cast<Scope>(i);
    EXPECT_EQ(traits(s).scope, s);
    EXPECT_TRUE(names.insert(to_string(s)).second) << to_string(s);
  }
  EXPECT_STREQ(to_string(Scope::moe_ffn), "moe_ffn");
  EXPECT_TRUE(traits(Scope::layer).per_layer());
  EXPECT_FALSE(traits(Scope::optimizer).per_layer());
}

// A small hybrid: attention, MLP, MoE and Mamba layers.
ModelSpec hybrid_model() {
  ModelSpec m{.name = "hybrid", .layers = 12, .hidden = 1024, .heads = 16, .kv_heads = 4, .ffn_hidden = 4096,
              .vocab = 32000, .seq_len = 2048};
  m.layer_pattern = "M*-M*EM-*EM-";
  m.moe.experts = 8;
  m.moe.top_k = 2;
  m.moe.expert_ffn_hidden = 1024;
  m.mamba = {.heads = 32, .head_dim = 64, .state = 64, .groups = 4, .conv_kernel = 4, .chunk = 128};
  return m;
}

std::vector<ModelSpec> models() { return {test::gpt_1_3b(), test::mixtral_8x7b(), hybrid_model()}; }

// Each per-layer scope's layers on the stages add up to the model's; the embedding and output
// run on one stage each.
TEST(ScopeTraits, StageCountsAddUpToTheModel) {
  for (const ModelSpec& m : models()) {
    for (int pp : {1, 2, 4}) {
      const Parallelism p = layout(1, pp, 1);
      for (const ScopeTraits& t : kScopeTraits) {
        int on_stages = 0;
        for (const StageRun& run : stage_runs(m, p)) on_stages += run.count * t.on_stage(run.layers);
        EXPECT_EQ(on_stages, t.in_model(m)) << m.name << " pp " << pp << " " << t.name;
      }
    }
  }
}

}  // namespace
}  // namespace capplan::sim
