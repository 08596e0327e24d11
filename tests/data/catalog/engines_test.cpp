// SPDX-License-Identifier: Apache-2.0
// data/engines.json: the serving engines' recipes loaded into sim::EngineSpec. Every value below is
// the one the engine's source gives (the file's `source` strings name where); a null default leaves
// the EngineSpec member at its C++ default.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <functional>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "capplan/data/catalog.hpp"
#include "test_support.hpp"

namespace capplan::data {
namespace {

using nlohmann::json;
using sim::KvBudget;
using sim::WeightFormat;
using test::catalogs_with;
using test::has_diag;
using test::read_json;
using test::real_catalogs;
using test::source_data_dir;
using test::write_file;

const sim::EngineSpec& engine(const std::string& id) {
  const auto* e = real_catalogs().find_engine(id);
  if (e == nullptr) {
    ADD_FAILURE() << "no engine '" << id << "' in data/engines.json";
    static const sim::EngineSpec kNone;
    return kNone;
  }
  return e->spec;
}

const std::vector<std::string> kKeys = {"max_num_seqs",     "max_num_batched_tokens", "chunked_prefill",
                                        "reserve_full_sequence",
                                        "kv_budget",        "kv_memory_fraction",     "kv_block_tokens",
                                        "cuda_graphs",      "kernel_gap_us",          "step_overhead_us",
                                        "runtime_reserve_gib", "quant_efficiency",    "quant_moe_efficiency"};

void expect_every_format_is_one(const std::array<double, sim::kWeightFormats>& eff, const std::string& what) {
  for (double x : eff) EXPECT_EQ(x, 1.0) << what;
}

TEST(EngineCatalog, TheShippedFileLoadsWithTheFourEnginesInItsOrder) {
  EXPECT_EQ(real_catalogs().engine_ids(),
            (std::vector<std::string>{"vllm", "sglang", "tensorrt-llm", "tensorrt-llm-pytorch"}));
  EXPECT_EQ(real_catalogs().find_engine("tgi"), nullptr);
}

TEST(EngineCatalog, EveryEngineGivesEveryDefaultWithASourceOrANote) {
  for (const auto& e : real_catalogs().engines) {
    EXPECT_FALSE(e.spec.name.empty()) << e.spec.id;
    EXPECT_FALSE(e.spec.version.empty()) << e.spec.id;
    EXPECT_FALSE(e.spec.source.empty()) << e.spec.id;
    EXPECT_FALSE(e.summary.empty()) << e.spec.id;
    std::vector<std::string> keys;
    for (const auto& d : e.defaults) {
      keys.push_back(d.key);
      if (d.value == "null") {
        EXPECT_FALSE(d.note.empty()) << e.spec.id << "/" << d.key;
      } else {
        EXPECT_FALSE(d.source.empty()) << e.spec.id << "/" << d.key;
      }
    }
    EXPECT_EQ(keys, kKeys) << e.spec.id;  // all of them, in the loader's order
  }
}

// vllm-project/vllm@99d7eb5d6a51 vllm/engine/arg_utils.py EngineArgs._set_default_args (>= 70 GiB
// non-A100 GPUs, API server), vllm/entrypoints/llm.py @10fdb8f0d75a, vllm/platforms/cuda.py @1c0d9ecf5bad.
TEST(EngineCatalog, VllmV1Defaults) {
  const auto& e = engine("vllm");
  EXPECT_EQ(e.name, "vLLM");
  EXPECT_EQ(e.max_num_seqs, 1024);
  EXPECT_EQ(e.max_num_batched_tokens, 8192);
  EXPECT_TRUE(e.chunked_prefill);
  EXPECT_EQ(e.kv_budget, KvBudget::total_memory);
  EXPECT_DOUBLE_EQ(e.kv_memory_fraction, 0.9);
  EXPECT_EQ(e.kv_block_tokens, 16);
  EXPECT_TRUE(e.cuda_graphs);
  EXPECT_FALSE(e.reserve_full_sequence);  // v1/core/sched/scheduler.py: grow, preempt the newest
}

// sgl-project/sglang@a82da8da159e arg_groups/memory_hook.py handle_gpu_memory_settings, H100 80GB, TP 1:
// reserved = 512 + 1.5 * 8192 + 2 * 256 + 1/8 * 1024 = 13440 MiB of 81559 MiB.
TEST(EngineCatalog, SglangDefaultsForAnH100AtTp1) {
  const auto& e = engine("sglang");
  EXPECT_EQ(e.max_num_seqs, 2048);
  EXPECT_EQ(e.max_num_batched_tokens, 8192);
  EXPECT_TRUE(e.chunked_prefill);
  EXPECT_EQ(e.kv_budget, KvBudget::total_memory);
  EXPECT_DOUBLE_EQ(e.kv_memory_fraction, 0.835);
  EXPECT_NEAR((81559.0 - (512 + 1.5 * 8192 + 2 * 256 + 1024.0 / 8)) / 81559.0, e.kv_memory_fraction, 5e-4);
  EXPECT_EQ(e.kv_block_tokens, 1);
  EXPECT_TRUE(e.cuda_graphs);
  EXPECT_FALSE(e.reserve_full_sequence);  // schedule_policy.py: new_token_ratio estimate, retract
}

// NVIDIA/TensorRT-LLM v0.17 perf overview: the KV cache takes 0.90 of the memory free after the engine
// loads (the benchmark tables mostly ran at 0.95); BuildConfig's 2048 / 8192; tokens_per_block 32.
TEST(EngineCatalog, TensorRtLlmEngineDefaults) {
  const auto& e = engine("tensorrt-llm");
  EXPECT_EQ(e.max_num_seqs, 2048);
  EXPECT_EQ(e.max_num_batched_tokens, 8192);
  EXPECT_FALSE(e.chunked_prefill);
  EXPECT_EQ(e.kv_budget, KvBudget::free_memory);
  EXPECT_DOUBLE_EQ(e.kv_memory_fraction, 0.9);
  EXPECT_EQ(e.kv_block_tokens, 32);
  EXPECT_FALSE(e.cuda_graphs);
  EXPECT_TRUE(e.reserve_full_sequence);  // capacity_scheduler_policy GUARANTEED_NO_EVICT
}

TEST(EngineCatalog, TensorRtLlmPytorchBackendDefaults) {
  const auto& e = engine("tensorrt-llm-pytorch");
  EXPECT_EQ(e.max_num_seqs, 2048);
  EXPECT_EQ(e.max_num_batched_tokens, 8192);
  EXPECT_FALSE(e.chunked_prefill);
  EXPECT_EQ(e.kv_budget, KvBudget::free_memory);
  EXPECT_DOUBLE_EQ(e.kv_memory_fraction, 0.9);
  EXPECT_EQ(e.kv_block_tokens, 32);
  EXPECT_TRUE(e.cuda_graphs);
  EXPECT_TRUE(e.reserve_full_sequence);
}

// No published figure was found for most measured characteristics: each is null with its note, and
// the EngineSpec keeps its C++ default (0 s, 0 bytes, efficiency 1). The per-kernel cost inside a
// CUDA graph is the derived 2 us (NVIDIA's CUDA Graphs post: 3.4 us per short kernel from a graph)
// for the engines that replay graphs, the C++ default 0 for the one that does not. The one sourced
// efficiency: SGLang's GPTQ-Int4 MoE GEMMs at 0.13 of their roofline (sglang issue #6313: 40% of
// FP8's throughput on Qwen3-30B-A3B; the derivation is in the entry's note).
TEST(EngineCatalog, UnsourcedMeasurementsAreNullAndKeepTheCppDefaults) {
  for (const auto& e : real_catalogs().engines) {
    EXPECT_EQ(e.spec.step_overhead.base(), 0.0) << e.spec.id;
    EXPECT_DOUBLE_EQ(e.spec.kernel_gap.base(), e.spec.cuda_graphs ? 2e-6 : 0.0) << e.spec.id;
    EXPECT_EQ(e.spec.runtime_reserve.base(), 0.0) << e.spec.id;
    expect_every_format_is_one(e.spec.quant_efficiency, e.spec.id);
    if (e.spec.id == "sglang") {
      auto moe = e.spec.quant_moe_efficiency;
      EXPECT_DOUBLE_EQ(moe[static_cast<std::size_t>(sim::index(sim::WeightFormat::int4))], 0.13);
      moe[static_cast<std::size_t>(sim::index(sim::WeightFormat::int4))] = 1.0;
      expect_every_format_is_one(moe, e.spec.id);
    } else {
      expect_every_format_is_one(e.spec.quant_moe_efficiency, e.spec.id);
    }
  }
}

// A one-engine engines.json beside the good fixtures, its defaults edited by `edit`.
std::filesystem::path engines_with(const std::function<void(json& defaults)>& edit) {
  auto dir = catalogs_with("none", [](json&) {});
  json defaults = {
      {"max_num_seqs", {{"value", 128}, {"source", "s"}}},
      {"max_num_batched_tokens", {{"value", 4096}, {"source", "s"}}},
      {"chunked_prefill", {{"value", false}, {"source", "s"}}},
      {"reserve_full_sequence", {{"value", true}, {"source", "s"}}},
      {"kv_budget", {{"value", "free_memory"}, {"source", "s"}}},
      {"kv_memory_fraction", {{"value", 0.8}, {"source", "s"}}},
      {"kv_block_tokens", {{"value", 64}, {"source", "s"}}},
      {"cuda_graphs", {{"value", false}, {"source", "s"}}},
      {"kernel_gap_us", {{"value", 1.5}, {"source", "s"}}},
      {"step_overhead_us", {{"value", 250}, {"source", "s"}}},
      {"runtime_reserve_gib", {{"value", 2.5}, {"source", "s"}}},
      {"quant_efficiency",
       {{"value", {{"bf16", nullptr}, {"fp16", nullptr}, {"fp8", 0.9}, {"int8", 0.8}, {"int4", 0.7}, {"fp4", nullptr}}},
        {"source", "s"}}},
      {"quant_moe_efficiency", {{"value", nullptr}, {"note", "n"}}},
  };
  edit(defaults);
  json file = {{"schema", 1},
               {"engines",
                {{{"id", "x"}, {"name", "X"}, {"version", "1"}, {"summary", "s"}, {"source", "s"},
                  {"defaults", defaults}}}}};
  write_file(dir / "engines.json", file.dump(2));
  return dir;
}

TEST(EngineCatalog, EveryKeySetsItsEngineSpecMember) {
  auto c = load_catalogs(engines_with([](json&) {}));
  ASSERT_TRUE(c) << to_string(c.error());
  ASSERT_EQ(c->engines.size(), 1u);
  const auto& e = c->engines[0].spec;
  EXPECT_EQ(e.id, "x");
  EXPECT_EQ(e.max_num_seqs, 128);
  EXPECT_EQ(e.max_num_batched_tokens, 4096);
  EXPECT_FALSE(e.chunked_prefill);
  EXPECT_TRUE(e.reserve_full_sequence);
  EXPECT_EQ(e.kv_budget, KvBudget::free_memory);
  EXPECT_DOUBLE_EQ(e.kv_memory_fraction, 0.8);
  EXPECT_EQ(e.kv_block_tokens, 64);
  EXPECT_FALSE(e.cuda_graphs);
  EXPECT_DOUBLE_EQ(e.kernel_gap.base(), 1.5e-6);
  EXPECT_DOUBLE_EQ(e.step_overhead.base(), 250e-6);
  EXPECT_DOUBLE_EQ(units::to_gib(e.runtime_reserve), 2.5);
  EXPECT_EQ(e.quant_efficiency[sim::index(WeightFormat::bf16)], 1.0);  // null = 1
  EXPECT_EQ(e.quant_efficiency[sim::index(WeightFormat::fp8)], 0.9);
  EXPECT_EQ(e.quant_efficiency[sim::index(WeightFormat::int8)], 0.8);
  EXPECT_EQ(e.quant_efficiency[sim::index(WeightFormat::int4)], 0.7);
  EXPECT_EQ(e.quant_efficiency[sim::index(WeightFormat::fp4)], 1.0);
  expect_every_format_is_one(e.quant_moe_efficiency, "whole object null");
  EXPECT_EQ(c->engines[0].defaults.size(), kKeys.size());
  EXPECT_EQ(c->engines[0].defaults[5].value, "0.8");
}

TEST(EngineCatalog, WithoutTheFileThereAreNoEngines) {
  auto c = load_catalogs(catalogs_with("none", [](json&) {}));
  ASSERT_TRUE(c) << to_string(c.error());
  EXPECT_TRUE(c->engines.empty());
  EXPECT_TRUE(c->engine_ids().empty());
  EXPECT_EQ(c->find_engine("vllm"), nullptr);
}

TEST(EngineCatalog, EveryBadValueIsReportedAtItsPointerInOnePass) {
  auto dir = engines_with([](json& d) {
    d["max_num_seqs"]["value"] = 0;
    d["max_num_batched_tokens"]["value"] = 8192.5;
    d["chunked_prefill"]["value"] = "yes";
    d["kv_budget"]["value"] = "total";
    d["kv_memory_fraction"]["value"] = 1.5;
    d["kv_block_tokens"] = {{"value", 16}};                 // no source
    d["cuda_graphs"] = {{"value", nullptr}};                // null without a note
    d["kernel_gap_us"]["value"] = 5000;                     // above 1 ms
    d["step_overhead_us"]["value"] = -1;
    d["runtime_reserve_gib"]["value"] = "2 GiB";
    d["quant_efficiency"]["value"] = {{"bf16", nullptr}, {"fp16", nullptr}, {"fp8", 0}, {"int8", 1.2},
                                      {"int4", 0.5}, {"fp6", 1}};  // fp4 missing, fp6 unknown
    d["quant_moe_efficiency"]["comment"] = "x";
    d["kv_block_size"] = {{"value", 16}, {"source", "s"}};
  });
  auto c = load_catalogs(dir);
  ASSERT_FALSE(c);
  const auto& diags = c.error();
  const std::string p = "engines.json#/engines/0/defaults/";
  EXPECT_TRUE(has_diag(diags, p + "max_num_seqs/value", "must be a positive integer; got 0"));
  EXPECT_TRUE(has_diag(diags, p + "max_num_batched_tokens/value", "must be a positive integer; got 8192.5"));
  EXPECT_TRUE(has_diag(diags, p + "chunked_prefill/value", "expected true or false; got string"));
  EXPECT_TRUE(has_diag(diags, p + "kv_budget/value", "unknown KV budget 'total' (did you mean 'total_memory'?"));
  EXPECT_TRUE(has_diag(diags, p + "kv_memory_fraction/value", "must be at most 1; got 1.5"));
  EXPECT_TRUE(has_diag(diags, p + "kv_block_tokens/source", "required (where the value was read"));
  EXPECT_TRUE(has_diag(diags, p + "cuda_graphs/note", "required where the value is null"));
  EXPECT_TRUE(has_diag(diags, p + "kernel_gap_us/value", "must be at most 1000; got 5000"));
  EXPECT_TRUE(has_diag(diags, p + "step_overhead_us/value", "must be >= 0; got -1"));
  EXPECT_TRUE(has_diag(diags, p + "runtime_reserve_gib/value", "expected a number; got string"));
  EXPECT_TRUE(has_diag(diags, p + "quant_efficiency/value/fp8", "must be > 0; got 0"));
  EXPECT_TRUE(has_diag(diags, p + "quant_efficiency/value/int8", "must be at most 1; got 1.2"));
  EXPECT_TRUE(has_diag(diags, p + "quant_efficiency/value/fp4", "required (a number or null) is missing"));
  EXPECT_TRUE(has_diag(diags, p + "quant_efficiency/value/fp6", "unknown field (did you mean 'fp16'?"));
  EXPECT_TRUE(has_diag(diags, p + "quant_moe_efficiency/comment", "unknown field"));
  EXPECT_TRUE(has_diag(diags, p + "kv_block_size", "unknown field (did you mean 'kv_block_tokens'?"));
  EXPECT_EQ(diags.size(), 16u) << to_string(diags);
}

TEST(EngineCatalog, AMissingDefaultAndADuplicateIdAreErrors) {
  auto dir = engines_with([](json& d) { d.erase("kv_budget"); });
  auto file = read_json(dir / "engines.json");
  file["engines"].push_back(file["engines"][0]);
  write_file(dir / "engines.json", file.dump(2));
  auto c = load_catalogs(dir);
  ASSERT_FALSE(c);
  EXPECT_TRUE(has_diag(c.error(), "engines.json#/engines/0/defaults/kv_budget",
                       "required (what kv_memory_fraction is a fraction of: total_memory or free_memory; null with a "
                       "note when there is none) is missing"));
  EXPECT_TRUE(has_diag(c.error(), "engines.json#/engines/1/id", "duplicate id 'x' (first at #/engines/0)"));
}

// The shipped file with one value changed, as the other catalogs' edit tests: the loader names the
// value's JSON pointer (and the CLI exits 2 with it: cli.catalog_engines_bad_value_names_its_pointer).
struct EngineEdit {
  const char* name;
  const char* pointer;  // in data/engines.json
  json value;
  const char* message;
};
class ShippedEngineEdit : public testing::TestWithParam<EngineEdit> {};

TEST_P(ShippedEngineEdit, NamesThePointer) {
  const auto& e = GetParam();
  auto dir = catalogs_with("none", [](json&) {});
  auto file = read_json(source_data_dir() / "engines.json");
  file[json::json_pointer(e.pointer)] = e.value;
  write_file(dir / "engines.json", file.dump(2));
  auto c = load_catalogs(dir);
  ASSERT_FALSE(c) << e.name;
  EXPECT_TRUE(has_diag(c.error(), std::string("engines.json#") + e.pointer, e.message));
}

const EngineEdit kEngineEdits[] = {
    {"FractionAboveOne", "/engines/0/defaults/kv_memory_fraction/value", 1.01, "must be at most 1; got 1.01"},
    {"FractionZero", "/engines/2/defaults/kv_memory_fraction/value", 0, "must be > 0; got 0"},
    {"NoSequences", "/engines/1/defaults/max_num_seqs/value", 0, "must be a positive integer; got 0"},
    {"FractionalBlock", "/engines/3/defaults/kv_block_tokens/value", 16.5, "must be a positive integer; got 16.5"},
    {"UnknownBudget", "/engines/2/defaults/kv_budget/value", "free", "unknown KV budget 'free' (did you mean 'free_memory'?"},
    {"NegativeOverhead", "/engines/0/defaults/step_overhead_us/value", -5, "must be >= 0; got -5"},
    {"SourceMissing", "/engines/1/defaults/chunked_prefill/source", "", "required (where the value was read"},
    {"UnknownEngineKey", "/engines/0/engine", "v1", "unknown field"},
};

INSTANTIATE_TEST_SUITE_P(EngineCatalog, ShippedEngineEdit, testing::ValuesIn(kEngineEdits),
                         [](const testing::TestParamInfo<EngineEdit>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace capplan::data
