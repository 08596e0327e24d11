// SPDX-License-Identifier: Apache-2.0
// The JSON Schemas shipped in schema/ (scenario.schema.json, result.schema.json) against what
// capplan really reads and writes:
//  - every object of the scenario schema lists exactly the keys the reader accepts there (the
//    reader names its known keys when it rejects an unknown one, so a key added to one and not the
//    other fails here);
//  - the repository's good scenarios validate, the bad ones with an unknown key or a wrong type do not;
//  - estimate and search documents validate against the result schema, and every key they write
//    is listed in it (the schema allows new keys for its readers; it must not omit ours).
// The validator (json_schema_check.hpp) covers the subset of JSON Schema 2020-12 the two files use.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "capplan/data/fields.hpp"
#include "capplan/data/scenario_io.hpp"
#include "capplan/data/search_io.hpp"
#include "capplan/data/serve_io.hpp"
#include "capplan/data/tco_io.hpp"
#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/search/search.hpp"
#include "json_schema_check.hpp"
#include "test_support.hpp"

namespace capplan::data {
namespace {

using nlohmann::json;
using test::errors_of;
using test::resolve;
using test::good_catalogs;

std::filesystem::path schema_dir() { return std::filesystem::path(CAPPLAN_SOURCE_DIR) / "schema"; }
const json& scenario_schema() {
  static const json s = test::read_json(schema_dir() / "scenario.schema.json");
  return s;
}
const json& result_schema() {
  static const json s = test::read_json(schema_dir() / "result.schema.json");
  return s;
}

// The property schemas an object may have under `s`: its properties, and those of its allOf /
// anyOf / oneOf alternatives, with references followed.
void object_properties(const json& s_in, const json& root, std::vector<std::pair<std::string, const json*>>& out) {
  const json& s = resolve(s_in, root);
  if (s.contains("properties")) {
    const json& props = s["properties"];
    for (auto it = props.begin(); it != props.end(); ++it) out.emplace_back(it.key(), &it.value());
  }
  for (const char* combinator : {"allOf", "anyOf", "oneOf"}) {
    if (!s.contains(combinator)) continue;  // by reference: `out` points into the schema
    for (const auto& sub : s[combinator]) object_properties(sub, root, out);
  }
}

// Every key of `v` is listed somewhere under `s` (recursively).
void expect_keys_listed(const json& s, const json& v, const json& root, const std::string& at) {
  if (v.is_array()) {
    const json& r = resolve(s, root);
    std::vector<const json*> item_schemas;
    if (r.contains("items")) item_schemas.push_back(&r["items"]);
    for (const char* combinator : {"allOf", "anyOf", "oneOf"}) {
      if (!r.contains(combinator)) continue;
      for (const auto& sub : r[combinator]) {
        const json& rs = resolve(sub, root);
        if (rs.contains("items")) item_schemas.push_back(&rs["items"]);
      }
    }
    for (std::size_t i = 0; i < v.size() && !item_schemas.empty(); ++i) {
      expect_keys_listed(*item_schemas.front(), v[i], root, at + "/" + std::to_string(i));
    }
    return;
  }
  if (!v.is_object()) return;
  std::vector<std::pair<std::string, const json*>> props;
  object_properties(s, root, props);
  for (const auto& [k, x] : v.items()) {
    auto it = std::find_if(props.begin(), props.end(), [&](const auto& p) { return p.first == k; });
    if (it == props.end()) {
      ADD_FAILURE() << at << "/" << k << ": written by capplan, not listed in result.schema.json";
      continue;
    }
    expect_keys_listed(*it->second, x, root, at + "/" + k);
  }
}

// ---- the scenario schema against the reader ---------------------------------------------------

json minimal_scenario() {
  return json::parse(R"({"model": {"preset": "llama2-7b"},
                         "training": {"tokens": "1T", "global_batch": 512},
                         "cluster": {"instance": "aws-p5.48xlarge", "nodes": 2}})");
}

// The keys the reader names as known when `doc` has an unknown key at `pointer`.
std::set<std::string> reader_keys(json doc, const std::string& pointer) {
  doc[json::json_pointer(pointer + "/zz_unknown")] = 1;
  auto r = parse_scenario(doc, good_catalogs());
  EXPECT_FALSE(r.has_value()) << pointer;
  if (r.has_value()) return {};
  const std::string where = "scenario#" + pointer + "/zz_unknown";
  for (const auto& d : r.error()) {
    const auto open = d.message.find("(known: ");
    if (d.where != where || open == std::string::npos) continue;
    std::set<std::string> keys;
    std::string list = d.message.substr(open + 8, d.message.rfind(')') - open - 8);
    std::size_t start = 0;
    while (start <= list.size()) {
      const auto comma = list.find(", ", start);
      keys.insert(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 2;
    }
    return keys;
  }
  ADD_FAILURE() << "no unknown-field error at " << where << ": " << to_string(r.error());
  return {};
}

std::set<std::string> schema_keys(const json& s) {
  std::vector<std::pair<std::string, const json*>> props;
  object_properties(s, scenario_schema(), props);
  std::set<std::string> keys;
  for (const auto& p : props) keys.insert(p.first);
  return keys;
}

TEST(ScenarioSchema, EveryObjectListsExactlyTheKeysTheReaderAccepts) {
  const json& root = scenario_schema();
  const json& props = root["properties"];
  // Each object of the schema with a document that reaches it (its parents valid enough).
  json mla = minimal_scenario();
  mla["model"]["attention"] = "mla";
  mla["model"]["mla"] = {{"q_lora_rank", 0}, {"kv_lora_rank", 512}, {"qk_nope_head_dim", 128},
                         {"qk_rope_head_dim", 64}, {"v_head_dim", 128}};
  json tiers = minimal_scenario();
  tiers["cluster"] = {{"gpu", "h100-sxm-80gb"}, {"gpus", 16}, {"gpus_per_node", 8},
                      {"topology", json::array({{{"name", "nvlink"}, {"gpus", 8}, {"gbps_per_gpu", 3600}},
                                                {{"name", "ib"}, {"gbps_per_gpu", 400}}})}};
  json moe = minimal_scenario();
  moe["model"] = {{"preset", "mixtral-8x7b"}, {"moe", {{"top_k", 2}}}};
  // The fine-tuning workload with every sub-object the reader takes.
  json finetune = minimal_scenario();
  finetune["training"].erase("tokens");
  finetune["workload"] = {{"kind", "finetune"}, {"method", "lora"}, {"lora", {{"rank", 8}}},
                          {"dataset", {{"tokens", "1B"}}}};
  json full = finetune;
  full["workload"] = {{"kind", "finetune"}, {"method", "full"}, {"freeze", {{"layers", 1}}},
                      {"dataset", {{"tokens", "1B"}}}};
  json strategy = minimal_scenario();
  strategy["strategy"] = {{"tp", 8}};
  // The serve workload with every sub-object the reader takes (no training section).
  json serve = minimal_scenario();
  serve.erase("training");
  serve.erase("strategy");
  serve["workload"] = {{"kind", "serve"},
                       {"engine", {{"id", "vllm"}}},
                       {"traffic", {{"rate_per_s", 1}, {"input_tokens", {{"mean", 100}}}, {"output_tokens", {{"mean", 10}}}}},
                       {"slo", {{"e2e_s", 1}}}};
  // An engine's per-format efficiencies, each an object of one number (or null) per format.
  json per_format = serve;
  const json formats = {{"bf16", nullptr}, {"fp16", nullptr}, {"fp8", 0.9}, {"int8", nullptr}, {"int4", nullptr},
                        {"fp4", nullptr}};
  per_format["workload"]["engine"]["quant_efficiency"] = formats;
  per_format["workload"]["engine"]["quant_moe_efficiency"] = formats;
  json mamba = minimal_scenario();
  mamba["model"]["layer_pattern"] = "M*";
  mamba["model"]["mamba"] = {{"heads", 8}};
  struct Case {
    std::string pointer;
    json doc;
    const json* schema;
  };
  const json& pricing = props["pricing"]["properties"];
  const std::vector<Case> cases = {
      {"", minimal_scenario(), &root},
      {"/workload/engine", serve, &props["workload"]["properties"]["engine"]},
      {"/workload/engine/quant_efficiency", per_format,
       &props["workload"]["properties"]["engine"]["properties"]["quant_efficiency"]},
      {"/workload/engine/quant_moe_efficiency", per_format,
       &props["workload"]["properties"]["engine"]["properties"]["quant_moe_efficiency"]},
      {"/workload/traffic", serve, &props["workload"]["properties"]["traffic"]},
      {"/workload/traffic/input_tokens", serve, &props["workload"]["properties"]["traffic"]["properties"]["input_tokens"]},
      {"/workload/traffic/output_tokens", serve, &props["workload"]["properties"]["traffic"]["properties"]["output_tokens"]},
      {"/workload/slo", serve, &props["workload"]["properties"]["slo"]},
      {"/workload/lora", finetune, &props["workload"]["properties"]["lora"]},
      {"/workload/dataset", finetune, &props["workload"]["properties"]["dataset"]},
      {"/workload/freeze", full, &props["workload"]["properties"]["freeze"]},
      {"/model", minimal_scenario(), &props["model"]},
      {"/model/moe", moe, &props["model"]["properties"]["moe"]},
      {"/model/mla", mla, &props["model"]["properties"]["mla"]},
      {"/model/mamba", mamba, &props["model"]["properties"]["mamba"]},
      {"/training", minimal_scenario(), &props["training"]},
      {"/cluster", minimal_scenario(), &props["cluster"]},
      {"/cluster/topology/1", tiers, &props["cluster"]["properties"]["topology"]["items"]},
      {"/strategy", strategy, &props["strategy"]},
      {"/pricing", minimal_scenario(), &props["pricing"]},
      {"/pricing/spot", minimal_scenario(), &pricing["spot"]},
      {"/pricing/reserved", minimal_scenario(), &pricing["reserved"]},
      {"/pricing/on_prem", minimal_scenario(), &pricing["on_prem"]},
      {"/reliability", minimal_scenario(), &props["reliability"]},
      {"/storage", minimal_scenario(), &props["storage"]},
      {"/data", minimal_scenario(), &props["data"]},
      {"/tco", minimal_scenario(), &props["tco"]},
  };
  std::set<std::string> covered;
  {
    // The workload object is the union of its kinds' keys.
    std::set<std::string> keys = reader_keys(finetune, "/workload");
    for (const auto& k : reader_keys(serve, "/workload")) keys.insert(k);
    EXPECT_EQ(keys, schema_keys(props["workload"])) << "scenario#/workload";
    covered.insert("/workload");
  }
  for (const Case& c : cases) {
    EXPECT_EQ(reader_keys(c.doc, c.pointer), schema_keys(*c.schema)) << "scenario#" << c.pointer;
    covered.insert(c.pointer);
  }
  // Every object of the schema is one of the cases: a new section needs its case above.
  std::function<void(const json&, const std::string&)> walk = [&](const json& s_in, const std::string& at) {
    const json& s = resolve(s_in, root);
    std::vector<std::pair<std::string, const json*>> sub;
    object_properties(s, root, sub);
    if (!sub.empty()) {
      EXPECT_TRUE(covered.count(at)) << "schema object " << at << " has no reader case";
    }
    for (const auto& [k, x] : sub) {
      const json& r = resolve(*x, root);
      if (r.contains("items")) walk(r["items"], at + "/" + k + "/1");
      walk(*x, at + "/" + k);
    }
  };
  walk(root, "");
}

TEST(ScenarioSchema, TheRepositorysScenariosValidateAndTheBadOnesDoNot) {
  const json& root = scenario_schema();
  EXPECT_EQ(errors_of(root, example_scenario(), root), std::vector<std::string>{});
  const auto dir = std::filesystem::path(CAPPLAN_SOURCE_DIR) / "tests" / "cli" / "scenarios";
  int good = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("bad_", 0) == 0) continue;
    const json doc = test::read_json(entry.path());
    if (doc.contains("schema") && doc["schema"].is_string() &&
        doc["schema"].get<std::string>().rfind("capplan-price-sheet/", 0) == 0) {
      continue;  // a price sheet the scenarios there point to, not a scenario
    }
    EXPECT_EQ(errors_of(root, doc, root), std::vector<std::string>{}) << name;
    ++good;
  }
  EXPECT_GE(good, 15);
  // The README's worked example.
  const auto example = std::filesystem::path(CAPPLAN_SOURCE_DIR) / "examples" / "tencent-h800-100b" / "scenario.json";
  EXPECT_EQ(errors_of(root, test::read_json(example), root), std::vector<std::string>{});
  // Schema checks that can fail: an unknown key, a wrong type, an unknown enum value, a bad count.
  for (const char* bad : {"bad_unknown_key_top.json", "bad_unknown_key_nested.json", "bad_wrong_type.json"}) {
    EXPECT_FALSE(errors_of(root, test::read_json(dir / bad), root).empty()) << bad;
  }
  json enum_bad = minimal_scenario();
  enum_bad["training"]["precision"] = "bf17";
  EXPECT_FALSE(errors_of(root, enum_bad, root).empty());
  json count_bad = minimal_scenario();
  count_bad["training"]["tokens"] = "2 trillion";
  EXPECT_FALSE(errors_of(root, count_bad, root).empty());
  for (const char* count : {"2T", "4Mi", "1.5k", "2e12", " 4M"}) {
    json ok = minimal_scenario();
    ok["training"]["tokens"] = count;
    EXPECT_EQ(errors_of(root, ok, root), std::vector<std::string>{}) << count;
    EXPECT_TRUE(parse_scenario(ok, good_catalogs()).has_value()) << count << ": the reader accepts what the schema does";
  }
}

// The schema's parts that field tables declare are written from them (capplan-schema): the
// committed file is what the generator writes from it.
TEST(ScenarioSchema, IsWrittenFromTheFieldTables) {
  std::ifstream in(schema_dir() / "scenario.schema.json");
  std::stringstream text;
  text << in.rdbuf();
  const auto committed = nlohmann::ordered_json::parse(text.str());
  const std::string generated = generate_scenario_schema(committed).dump(2) + "\n";
  EXPECT_TRUE(generated == text.str())
      << "schema/scenario.schema.json differs from the field tables; regenerate it: cmake --build --preset release "
         "--target capplan-schema && build/release/tests/data/capplan-schema schema/scenario.schema.json";
}

// Every scenario shipped in examples/ (training, fine-tuning, hybrid, serving) validates.
TEST(ScenarioSchema, EveryShippedExampleValidates) {
  const json& root = scenario_schema();
  int scenarios = 0;
  const auto dir = std::filesystem::path(CAPPLAN_SOURCE_DIR) / "examples";
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    const json doc = test::read_json(entry.path());
    if (!doc.is_object() || !doc.contains("model")) continue;  // price sheets, runs, profiles
    EXPECT_EQ(errors_of(root, doc, root), std::vector<std::string>{}) << entry.path();
    ++scenarios;
  }
  EXPECT_GE(scenarios, 9);
}

// ---- the result schema against what capplan writes --------------------------------------------

TEST(ResultSchema, EstimatesValidateAndEveryKeyWrittenIsListed) {
  const json& root = result_schema();
  json moe = minimal_scenario();
  moe["model"] = {{"preset", "mixtral-8x7b"}};
  moe["strategy"] = {{"tp", 2}, {"pp", 1}, {"dp", 8}, {"ep", 8}, {"micro_batch", 1}};
  json spot = minimal_scenario();
  spot["pricing"] = {{"purchase", "spot"},
                     {"currency", "CNY"},
                     {"usd_per_unit", 0.14},
                     {"spot", {{"usd_per_gpu_hour", 20}, {"preemptions_per_node_hour", 0.01}}}};
  spot["storage"] = {{"tier", "aws-fsx-lustre-persistent2-1000"}, {"capacity_tib", 100}};
  // The shipped catalogs (error bands and storage tiers included) and the test ones (no bands).
  auto shipped = load_catalogs(test::source_data_dir());
  ASSERT_TRUE(shipped.has_value()) << to_string(shipped.error());
  for (const json& doc : {json(example_scenario()), minimal_scenario(), moe, spot}) {
    auto parsed = parse_scenario(doc, *shipped);
    ASSERT_TRUE(parsed.has_value()) << to_string(parsed.error());
    auto e = sim::estimate(parsed->scenario, sim::DatasheetCost(parsed->scenario.cluster));
    ASSERT_TRUE(e.has_value()) << to_string(e.error());
    const json out = estimate_to_json(*e, *parsed);
    EXPECT_EQ(errors_of(root, out, root), std::vector<std::string>{}) << doc.dump();
    expect_keys_listed(root, out, root, "#");
    auto bare = parse_scenario(doc == spot ? minimal_scenario() : doc, good_catalogs());
    ASSERT_TRUE(bare.has_value()) << to_string(bare.error());
    const json without_bands =
        estimate_to_json(*sim::estimate(bare->scenario, sim::DatasheetCost(bare->scenario.cluster)), *bare);
    EXPECT_EQ(errors_of(root, without_bands, root), std::vector<std::string>{}) << doc.dump();
  }
  // It can fail: a plan's place keys are not an estimate document's, a stamp is required.
  auto parsed = parse_scenario(minimal_scenario(), good_catalogs());
  ASSERT_TRUE(parsed.has_value());
  json out = estimate_to_json(*sim::estimate(parsed->scenario, sim::DatasheetCost(parsed->scenario.cluster)), *parsed);
  out.erase("schema_version");
  EXPECT_FALSE(errors_of(root, out, root).empty());
  out = estimate_to_json(*sim::estimate(parsed->scenario, sim::DatasheetCost(parsed->scenario.cluster)), *parsed);
  out["step_time_s"] = "fast";
  EXPECT_FALSE(errors_of(root, out, root).empty());
}

TEST(ResultSchema, SearchesValidateAndEveryKeyWrittenIsListed) {
  const json& root = result_schema();
  json doc = minimal_scenario();
  doc["strategy"] = "auto";
  auto parsed = parse_scenario(doc, good_catalogs());
  ASSERT_TRUE(parsed.has_value());
  OfferingFilter f;
  f.instances = {"aws-p5.48xlarge", "aws-p4de.24xlarge"};
  auto offerings = offerings_from_catalog(good_catalogs(), f);
  ASSERT_TRUE(offerings.has_value());
  for (double deadline_days : {0.0, 1e-3}) {  // a plan; nothing meets the deadline (failure, closest)
    sim::SearchRequest r;
    r.base = parsed->scenario;
    r.offerings = offerings->offerings;
    r.node_counts = {1, 2};
    r.threads = 1;
    if (deadline_days > 0) r.deadline = units::seconds(deadline_days * 86400.0);
    auto result = sim::search(r);
    ASSERT_TRUE(result.has_value()) << to_string(result.error());
    const json out = search_result_to_json(*result, r, *parsed);
    EXPECT_EQ(errors_of(root, out, root), std::vector<std::string>{}) << deadline_days;
    expect_keys_listed(root, out, root, "#");
  }
}

// Serving plans (one layout, compared layouts) and own-versus-rent documents, for a training
// fleet and a serving one, validate and list every key they write.
TEST(ResultSchema, ServePlansAndTcoValidateAndEveryKeyWrittenIsListed) {
  const json& root = result_schema();
  const json serve_doc = {
      {"workload",
       {{"kind", "serve"},
        {"weights", "fp8"},
        {"tp", 1},
        {"traffic", {{"rate_per_s", 20}, {"input_tokens", 1000}, {"output_tokens", 300}}},
        {"slo", {{"ttft_s", 1.0}, {"percentile", 0.95}}}}},
      {"model", {{"preset", "llama3.1-8b"}}},
      {"cluster", {{"instance", "tencent-hccpnv5"}}},
      {"pricing", {{"usd_per_gpu_hour", 2}}},
      {"tco", {{"years", 3}, {"utilisation", 0.6}, {"capex_per_node", 300000}}}};
  const auto& catalogs = test::real_catalogs();
  for (bool compare : {false, true}) {
    json doc = serve_doc;
    doc["workload"]["compare"] = compare;
    auto parsed = parse_scenario(doc, catalogs);
    ASSERT_TRUE(parsed.has_value()) << to_string(parsed.error());
    auto request = serve_request(doc, *parsed, catalogs);
    ASSERT_TRUE(request.has_value()) << to_string(request.error());
    const json out = serve_to_json(plan_request(*request, nullptr, 3), *request);
    EXPECT_EQ(errors_of(root["$defs"]["serve"], out, root), std::vector<std::string>{}) << compare;
    EXPECT_TRUE(out.contains("schema_version") && out.contains("capplan_version"));
    expect_keys_listed(root["$defs"]["serve"], out, root, "#");
  }
  auto parsed = parse_fleet_scenario(serve_doc, catalogs);
  ASSERT_TRUE(parsed.has_value()) << to_string(parsed.error());
  auto serving = serving_tco_request(serve_doc, *parsed, catalogs);
  ASSERT_TRUE(serving.has_value()) << to_string(serving.error());
  json training = minimal_scenario();
  training["tco"] = serve_doc["tco"];
  auto trained = parse_scenario(training, catalogs);
  ASSERT_TRUE(trained.has_value());
  auto owned = tco_request(training, *trained, catalogs);
  ASSERT_TRUE(owned.has_value()) << to_string(owned.error());
  for (const TcoRequest* r : {&*serving, &*owned}) {
    const json out = tco_to_json(sim::tco(r->inputs), *r);
    EXPECT_EQ(errors_of(root["$defs"]["tco"], out, root), std::vector<std::string>{}) << r->fleet;
    expect_keys_listed(root["$defs"]["tco"], out, root, "#");
  }
}

// Each workload kind's rules between sections are the reader's: what one refuses, so does the
// schema, and the schema accepts what the reader accepts.
TEST(ScenarioSchema, EachWorkloadKindRequiresAndRefusesWhatTheReaderDoes) {
  const json& root = scenario_schema();
  const json serve = json::parse(R"({"workload": {"kind": "serve", "traffic": {"rate_per_s": 5, "input_tokens": 100,
                                       "output_tokens": 100}},
                                     "model": {"preset": "llama3.1-8b"}, "cluster": {"gpu": "h100-sxm-80gb"}})");
  const json finetune = json::parse(R"({"workload": {"kind": "finetune", "method": "lora",
                                          "dataset": {"tokens": "1B", "epochs": 1}},
                                        "model": {"preset": "llama3-8b"}, "training": {"global_batch": 64},
                                        "cluster": {"gpu": "h100-sxm-80gb", "gpus": 8}})");
  const json fleet = json::parse(R"({"cluster": {"gpu": "h100-sxm-80gb", "gpus": 16},
                                     "tco": {"years": 3, "utilisation": 0.5}})");
  auto agree = [&](const json& doc, bool valid, const std::string& what) {
    const bool read = what.rfind("fleet", 0) == 0 ? parse_fleet_scenario(doc, test::real_catalogs()).has_value()
                                                  : parse_scenario(doc, test::real_catalogs()).has_value();
    EXPECT_EQ(read, valid) << what << ": the reader";
    EXPECT_EQ(errors_of(root, doc, root).empty(), valid) << what << ": the schema";
  };
  agree(minimal_scenario(), true, "pretrain");
  agree(serve, true, "serve");
  agree(finetune, true, "finetune");
  agree(fleet, true, "fleet");
  json d = serve;
  d["training"] = {{"precision", "bf16"}};
  agree(d, false, "serve with a training section");
  d = serve;
  d["strategy"] = {{"tp", 1}};
  agree(d, false, "serve with a strategy");
  d = serve;
  d["workload"].erase("traffic");
  agree(d, false, "serve without traffic");
  d = serve;
  d["workload"]["method"] = "lora";
  agree(d, false, "serve with a fine-tuning key");
  d = finetune;
  d["training"]["tokens"] = "1T";
  agree(d, false, "finetune with training.tokens");
  d = finetune;
  d["workload"].erase("dataset");
  agree(d, false, "finetune without a dataset");
  d = finetune;
  d["workload"]["traffic"] = {{"rate_per_s", 5}};
  agree(d, false, "finetune with a serving key");
  d = minimal_scenario();
  d.erase("training");
  agree(d, false, "pretrain without training");
  d = minimal_scenario();
  d["training"].erase("global_batch");
  agree(d, false, "pretrain without a global batch");
  d = minimal_scenario();
  d["training"]["global_batch_tokens"] = "4M";
  agree(d, false, "pretrain with both batch spellings");
  d = minimal_scenario();
  d["workload"] = {{"kind", "pretrain"}, {"method", "lora"}};
  agree(d, false, "pretrain with a fine-tuning key");
  d = minimal_scenario();
  d["pricing"] = {{"currency", "CNY"}, {"usd_per_gpu_hour", 20}};
  agree(d, false, "another currency without its rate");
  d = fleet;
  d["training"] = minimal_scenario()["training"];
  agree(d, false, "fleet with a training section and no model");
}

}  // namespace
}  // namespace capplan::data
