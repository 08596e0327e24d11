// SPDX-License-Identifier: Apache-2.0
// Scenario sections of the goodput model: reliability, storage, data and the pricing extensions,
// and the shipped storage catalog.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "capplan/data/catalog.hpp"
#include "capplan/data/cost_model.hpp"
#include "capplan/data/scenario_io.hpp"
#include "test_support.hpp"

namespace capplan::data {
namespace {

using nlohmann::json;

const Catalogs& shipped() {
  static const Catalogs c = [] {
    auto r = load_catalogs(test::source_data_dir());
    EXPECT_TRUE(r.has_value()) << (r ? "" : to_string(r.error()));
    return r ? *r : Catalogs{};
  }();
  return c;
}

// The built-in example (Llama 3 70B on 64 x p5.48xlarge) with `patch` merged in.
Result<ParsedScenario> parse_with(const json& patch) {
  json j = example_scenario();
  j.merge_patch(patch);
  return parse_scenario(j, shipped());
}

// The first error's "where: message".
std::string first_error(const Result<ParsedScenario>& r) {
  if (r) return "(no error)";
  return r.error().front().where + ": " + r.error().front().message;
}

TEST(StorageCatalog, ShippedTiersLoadWithSources) {
  ASSERT_FALSE(shipped().storage.empty());
  for (const auto& t : shipped().storage) {
    EXPECT_FALSE(t.sources.empty()) << t.id;
    EXPECT_FALSE(t.date.empty()) << t.id;
    EXPECT_FALSE(t.currency.empty()) << t.id;
  }
  const StorageEntry* tectonic = shipped().find_storage("meta-tectonic-llama3");
  ASSERT_NE(tectonic, nullptr);
  EXPECT_EQ(tectonic->write_gb_per_s, 2000.0);  // Llama 3 paper Sec. 3.3.1: 2 TB/s sustained
}

TEST(StorageCatalog, DefaultTierIsTheSourcedSharedFileSystemFigure) {
  const StorageEntry* d = shipped().default_storage();
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->id, "idris-jean-zay-gpfs");
  EXPECT_EQ(d->kind, "parallel_fs");
  // BLOOM-176B: a 2.3 TB checkpoint written in about 40 s = 57.5 GB/s.
  EXPECT_DOUBLE_EQ(*d->write_gb_per_s, 2.3e12 / 40 / 1e9);
  EXPECT_FALSE(d->sources.empty());
  // Conservative: slower than every other tier with a published aggregate write figure.
  for (const auto& t : shipped().storage) {
    if (t.write_gb_per_s && t.id != d->id && t.kind == "parallel_fs") {
      EXPECT_GT(*t.write_gb_per_s, *d->write_gb_per_s) << t.id;
    }
  }
}

TEST(StorageCatalog, TencentAndAlibabaTiersCarryPublishedFiguresOrNone) {
  for (const char* id : {"tencent-cfs-turbo-standard", "tencent-cfs-turbo-performance", "tencent-goosefs",
                         "tencent-cos-standard", "alibaba-cpfs-lingjun-400", "alibaba-oss-standard-shanghai"}) {
    const StorageEntry* t = shipped().find_storage(id);
    ASSERT_NE(t, nullptr) << id;
    EXPECT_FALSE(t->sources.empty()) << id;
    EXPECT_FALSE(t->date.empty()) << id;
    EXPECT_FALSE(t->is_default) << id;
    EXPECT_FALSE(t->usd_per_gb_month.has_value()) << id << ": no price was read from a published page";
  }
  // Tencent publishes no throughput per TiB or per account for these: unknown stays unknown.
  for (const char* id : {"tencent-cfs-turbo-standard", "tencent-cfs-turbo-performance", "tencent-goosefs",
                         "tencent-cos-standard"}) {
    const StorageEntry* t = shipped().find_storage(id);
    EXPECT_FALSE(t->write_gb_per_s || t->read_gb_per_s || t->gb_per_s_per_tib || t->write_gb_per_s_per_tib) << id;
    EXPECT_EQ(t->provider, "tencent");
    EXPECT_EQ(t->currency, "CNY");
  }
  // CPFS for Lingjun: read min{400 MB/s x TiB, 400 GB/s}, write min{200 MB/s x TiB, 200 GB/s}, 25 GB/s a client.
  const StorageEntry* cpfs = shipped().find_storage("alibaba-cpfs-lingjun-400");
  EXPECT_DOUBLE_EQ(*cpfs->write_gb_per_s_per_tib, 0.2);
  EXPECT_DOUBLE_EQ(*cpfs->read_gb_per_s_per_tib, 0.4);
  EXPECT_DOUBLE_EQ(*cpfs->max_write_gb_per_s, 200);
  EXPECT_DOUBLE_EQ(*cpfs->max_read_gb_per_s, 400);
  EXPECT_DOUBLE_EQ(*cpfs->write_gb_per_s_per_node, 25);
  // OSS, one account in China (Shanghai): 20 Gbit/s up, 100 Gbit/s down.
  const StorageEntry* oss = shipped().find_storage("alibaba-oss-standard-shanghai");
  EXPECT_DOUBLE_EQ(*oss->write_gb_per_s, 20.0 / 8);
  EXPECT_DOUBLE_EQ(*oss->read_gb_per_s, 100.0 / 8);
}

// A storage.json of `tiers` beside the shipped GPUs, instances and models.
Result<Catalogs> with_tiers(const json& tiers) {
  auto dir = test::catalogs_with("gpus.json", [](json&) {});
  test::write_file(dir / "storage.json", json{{"schema", 1}, {"tiers", tiers}}.dump());
  return load_catalogs(dir);
}

json tier(const char* id, json fields) {
  json t{{"id", id}, {"provider", "x"}, {"name", "X"}, {"kind", "parallel_fs"}, {"date", "2026-11-30"},
         {"currency", "USD"}, {"source", {"test"}}, {"confidence", "low"}};
  t.merge_patch(fields);
  return t;
}

TEST(StorageCatalog, AtMostOneDefaultTierWithACapacityFreeBandwidth) {
  auto two = with_tiers(json::array({tier("x-a", {{"default", true}, {"write_GBps", 10}}),
                                     tier("x-b", {{"default", true}, {"write_GBps", 20}})}));
  ASSERT_FALSE(two.has_value());
  EXPECT_NE(to_string(two.error()).find("storage.json#/tiers/1/default: a second default tier ('x-b')"),
            std::string::npos)
      << to_string(two.error());
  auto per_tib = with_tiers(json::array({tier("x-a", {{"default", true}, {"GBps_per_TiB", 0.25}})}));
  ASSERT_FALSE(per_tib.has_value());
  EXPECT_NE(to_string(per_tib.error()).find("storage.json#/tiers/0/default: the default tier needs write_GBps"),
            std::string::npos)
      << to_string(per_tib.error());
  auto cap_alone = with_tiers(json::array({tier("x-a", {{"write_GBps", 10}, {"max_write_GBps", 20}})}));
  ASSERT_FALSE(cap_alone.has_value());
  EXPECT_NE(to_string(cap_alone.error()).find("tiers/0/max_write_GBps: caps a per-TiB throughput"), std::string::npos)
      << to_string(cap_alone.error());
  auto one = with_tiers(
      json::array({tier("x-a", {{"default", true}, {"write_GBps", 10}}), tier("x-b", {{"write_GBps", 20}})}));
  ASSERT_TRUE(one.has_value()) << to_string(one.error());
  EXPECT_EQ(one->default_storage()->id, "x-a");
}

TEST(StorageCatalog, RejectsZeroBandwidthAndUnknownKind) {
  auto dir = test::catalogs_with("gpus.json", [](json&) {});
  test::write_file(dir / "storage.json", json{{"schema", 1},
                                              {"tiers",
                                               {{{"id", "x-fs"},
                                                 {"provider", "x"},
                                                 {"name", "X"},
                                                 {"kind", "tape"},
                                                 {"write_GBps", 0},
                                                 {"date", "2026-11-30"},
                                                 {"currency", "USD"},
                                                 {"source", {"test"}},
                                                 {"confidence", "low"}}}}}
                                                 .dump());
  auto r = load_catalogs(dir);
  ASSERT_FALSE(r.has_value());
  const std::string all = to_string(r.error());
  EXPECT_NE(all.find("storage.json#/tiers/0/kind: unknown kind"), std::string::npos) << all;
  EXPECT_NE(all.find("storage.json#/tiers/0/write_GBps: must be > 0; got 0"), std::string::npos) << all;
}

TEST(ReliabilitySection, DefaultsAreTheLlama3RateAndSyncCheckpoints) {
  auto r = parse_with(json::object());
  ASSERT_TRUE(r) << first_error(r);
  const auto& rel = r->scenario.reliability;
  EXPECT_DOUBLE_EQ(rel.interruptions_per_gpu_hour, 466.0 / (16384.0 * 54 * 24));
  EXPECT_EQ(rel.checkpoint_mode, sim::CheckpointMode::sync);
  EXPECT_FALSE(rel.checkpoint_interval.has_value());
  EXPECT_DOUBLE_EQ(rel.min_checkpoint_interval.base(), sim::kDefaultMinCheckpointIntervalS);
  EXPECT_FALSE(r->scenario.storage.given);
}

TEST(ReliabilitySection, MinimumIntervalOfZeroIsAllowed) {
  auto r = parse_with({{"reliability", {{"min_checkpoint_interval_s", 0}}}});
  ASSERT_TRUE(r) << first_error(r);
  EXPECT_DOUBLE_EQ(r->scenario.reliability.min_checkpoint_interval.base(), 0);
}

TEST(ReliabilitySection, EveryFieldIsRead) {
  auto r = parse_with({{"reliability",
                        {{"failure_rate_per_gpu_hour", 3e-5},
                         {"restart_s", 300},
                         {"node_replacement_s", 1200},
                         {"hot_spares", 2},
                         {"checkpoint_interval_s", 1800},
                         {"min_checkpoint_interval_s", 1200},
                         {"checkpoint", "async"},
                         {"checkpoints_kept", 3}}}});
  ASSERT_TRUE(r) << first_error(r);
  const auto& rel = r->scenario.reliability;
  EXPECT_DOUBLE_EQ(rel.interruptions_per_gpu_hour, 3e-5);
  EXPECT_DOUBLE_EQ(rel.restart_overhead.base(), 300);
  EXPECT_TRUE(rel.restart_overhead_given);
  EXPECT_DOUBLE_EQ(rel.node_replacement->base(), 1200);
  EXPECT_EQ(rel.hot_spare_nodes, 2);
  EXPECT_DOUBLE_EQ(rel.checkpoint_interval->base(), 1800);
  EXPECT_DOUBLE_EQ(rel.min_checkpoint_interval.base(), 1200);
  EXPECT_EQ(rel.checkpoint_mode, sim::CheckpointMode::async);
  EXPECT_EQ(rel.checkpoints_kept, 3);
}

struct BadInput {
  const char* name;
  json patch;
  const char* where;
  const char* message;
};

// Test names and failure messages show the case's name, not the struct's bytes.
void PrintTo(const BadInput& b, std::ostream* os) { *os << b.name; }

class GoodputBadInput : public testing::TestWithParam<BadInput> {};

TEST_P(GoodputBadInput, IsAnErrorNamingTheFieldAndValue) {
  const BadInput& b = GetParam();
  auto r = parse_with(b.patch);
  ASSERT_FALSE(r.has_value()) << b.name;
  const std::string e = first_error(r);
  EXPECT_NE(e.find(b.where), std::string::npos) << e;
  EXPECT_NE(e.find(b.message), std::string::npos) << e;
}

INSTANTIATE_TEST_SUITE_P(
    Scenario, GoodputBadInput,
    testing::Values(
        BadInput{"NegativeFailureRate", {{"reliability", {{"failure_rate_per_gpu_hour", -1e-5}}}},
                 "scenario#/reliability/failure_rate_per_gpu_hour", "must be >= 0; got -1e-05"},
        BadInput{"UnknownCheckpointMode", {{"reliability", {{"checkpoint", "lazy"}}}},
                 "scenario#/reliability/checkpoint", "unknown checkpoint mode"},
        BadInput{"ZeroInterval", {{"reliability", {{"checkpoint_interval_s", 0}}}},
                 "scenario#/reliability/checkpoint_interval_s", "must be > 0; got 0"},
        BadInput{"NegativeMinInterval", {{"reliability", {{"min_checkpoint_interval_s", -60}}}},
                 "scenario#/reliability/min_checkpoint_interval_s", "must be >= 0; got -60"},
        BadInput{"TextMinInterval", {{"reliability", {{"min_checkpoint_interval_s", "15min"}}}},
                 "scenario#/reliability/min_checkpoint_interval_s", "expected a number"},
        BadInput{"ReliabilityTypo", {{"reliability", {{"mtbf", 3}}}}, "scenario#/reliability/mtbf", "unknown field"},
        BadInput{"ZeroStorageBandwidth", {{"storage", {{"write_gb_per_s", 0}}}}, "scenario#/storage/write_gb_per_s",
                 "must be > 0; got 0"},
        BadInput{"StorageWithoutBandwidth", {{"storage", {{"usd_per_gb_month", 0.02}}}},
                 "scenario#/storage/write_gb_per_s", "is missing"},
        BadInput{"UnknownTier", {{"storage", {{"tier", "aws-s4"}}}}, "scenario#/storage/tier", "unknown storage tier"},
        BadInput{"PerTibTierNeedsCapacity", {{"storage", {{"tier", "aws-fsx-lustre-persistent2-250"}}}},
                 "scenario#/storage/capacity_tib", "is missing"},
        BadInput{"UploadTierNeedsALocalTier", {{"storage", {{"write_gb_per_s", 5}, {"upload_tier", "aws-s3-standard"}}}},
                 "scenario#/storage/upload_tier", "only used with a node-local tier"},
        BadInput{"SpotRateAboveOne", {{"pricing", {{"purchase", "spot"}, {"spot", {{"preemptions_per_node_hour", 1.5}}}}}},
                 "scenario#/pricing/spot/preemptions_per_node_hour", "must be at most 1; got 1.5"},
        BadInput{"UnknownPurchase", {{"pricing", {{"purchase", "lease"}}}}, "scenario#/pricing/purchase",
                 "unknown purchase model 'lease'"},
        BadInput{"PueBelowOne", {{"pricing", {{"purchase", "on_prem"}, {"on_prem", {{"pue", 0.9}}}}}},
                 "scenario#/pricing/on_prem/pue", "must be >= 1; got 0.9"},
        BadInput{"ZeroUtilisation", {{"pricing", {{"purchase", "on_prem"}, {"on_prem", {{"utilisation", 0}}}}}},
                 "scenario#/pricing/on_prem/utilisation", "must be > 0; got 0"},
        BadInput{"NegativeElectricity", {{"pricing", {{"purchase", "on_prem"}, {"on_prem", {{"usd_per_kwh", -0.1}}}}}},
                 "scenario#/pricing/on_prem/usd_per_kwh", "must be >= 0; got -0.1"},
        BadInput{"ZeroBytesPerToken", {{"data", {{"bytes_per_token", 0}}}}, "scenario#/data/bytes_per_token",
                 "must be > 0; got 0"}),
    [](const testing::TestParamInfo<BadInput>& i) { return i.param.name; });

TEST(StorageSection, PerTibTierScalesWithCapacity) {
  // 250 MB/s per TiB x 400 TiB = 100 GB/s, read and write.
  auto r = parse_with({{"storage", {{"tier", "aws-fsx-lustre-persistent2-250"}, {"capacity_tib", 400}}}});
  ASSERT_TRUE(r) << first_error(r);
  const auto& t = r->scenario.storage.tier;
  EXPECT_TRUE(r->scenario.storage.given);
  EXPECT_NEAR(t.write.aggregate.base(), 100e9, 1e-3);
  EXPECT_NEAR(t.read.aggregate.base(), 100e9, 1e-3);
  EXPECT_FALSE(t.usd_per_gb_month.has_value());  // not in the catalog: the user must give it
}

TEST(StorageSection, NoSectionAssumesTheCatalogsDefaultTier) {
  auto r = parse_with(json::object());
  ASSERT_TRUE(r) << first_error(r);
  const auto& st = r->scenario.storage;
  EXPECT_FALSE(st.given);
  EXPECT_TRUE(st.assumed);
  EXPECT_EQ(st.tier.id, "idris-jean-zay-gpfs");
  EXPECT_NEAR(st.tier.write.aggregate.base(), 57.5e9, 1e-3);
  EXPECT_NEAR(st.tier.read.aggregate.base(), 57.5e9, 1e-3);  // read not published: taken as the write
  // A storage section replaces it.
  auto given = parse_with({{"storage", {{"write_gb_per_s", 100}}}});
  ASSERT_TRUE(given) << first_error(given);
  EXPECT_TRUE(given->scenario.storage.given);
  EXPECT_FALSE(given->scenario.storage.assumed);
}

TEST(StorageSection, CpfsScalesEachDirectionWithCapacityUpToItsCap) {
  // 100 TiB: write 0.2 x 100 = 20 GB/s, read 0.4 x 100 = 40 GB/s; 2,000 TiB: capped at 200 / 400 GB/s.
  auto r = parse_with({{"storage", {{"tier", "alibaba-cpfs-lingjun-400"}, {"capacity_tib", 100}}}});
  ASSERT_TRUE(r) << first_error(r);
  EXPECT_NEAR(r->scenario.storage.tier.write.aggregate.base(), 20e9, 1e-3);
  EXPECT_NEAR(r->scenario.storage.tier.read.aggregate.base(), 40e9, 1e-3);
  EXPECT_NEAR(r->scenario.storage.tier.write.per_node.base(), 25e9, 1e-3);
  auto big = parse_with({{"storage", {{"tier", "alibaba-cpfs-lingjun-400"}, {"capacity_tib", 2000}}}});
  ASSERT_TRUE(big) << first_error(big);
  EXPECT_NEAR(big->scenario.storage.tier.write.aggregate.base(), 200e9, 1e-3);
  EXPECT_NEAR(big->scenario.storage.tier.read.aggregate.base(), 400e9, 1e-3);
  auto none = parse_with({{"storage", {{"tier", "alibaba-cpfs-lingjun-400"}}}});
  EXPECT_NE(first_error(none).find("scenario#/storage/capacity_tib"), std::string::npos) << first_error(none);
}

// Without a storage section the node NIC must not stand in for storage (the Daly optimum would
// fall to a checkpoint every few steps). With the default tier and the 900 s minimum, both a
// 100B-class run on Tencent H800 and the built-in example with Llama 3.1 405B checkpoint at least
// 900 s and at least ten steps apart, and say nothing implausible.
void expect_plausible_cadence(const json& scenario) {
  auto r = parse_scenario(scenario, shipped());
  ASSERT_TRUE(r) << first_error(r);
  auto e = estimate_with_profile(r->scenario, nullptr);
  ASSERT_TRUE(e.has_value()) << to_string(e.error());
  const sim::Goodput& g = e->goodput;
  ASSERT_TRUE(g.modelled);
  EXPECT_GE(g.checkpoint_interval.base(), sim::kDefaultMinCheckpointIntervalS);
  EXPECT_GE(g.checkpoint_interval.base() / e->step.time.base(), sim::kMinPlausibleStepsPerCheckpoint);
  EXPECT_EQ(g.interval_rule, sim::IntervalRule::daly);  // the slower default tier makes the optimum long
  EXPECT_NEAR(g.checkpoint_stall.base(), g.checkpoint.total.base() / 57.5e9, 1e-6);
  EXPECT_TRUE(sim::has(e->findings, sim::FindingCode::storage_tier_assumed));
  EXPECT_FALSE(sim::has(e->findings, sim::FindingCode::no_storage_tier));
  EXPECT_FALSE(sim::has(e->findings, sim::FindingCode::checkpoint_every_few_steps));
  EXPECT_FALSE(sim::has(e->findings, sim::FindingCode::checkpoint_stalls_dominate));
}

TEST(CheckpointCadence, HundredBillionOnTencentH800IsNotCheckpointedEveryFewSteps) {
  expect_plausible_cadence(json::parse(R"({
    "model": { "layers": 80, "hidden": 10240, "heads": 80, "kv_heads": 8, "ffn_hidden": 27648,
               "vocab": 128256, "seq_len": 4096, "gated_ffn": true },
    "training": { "tokens": "2T", "global_batch": 1024, "precision": "bf16" },
    "cluster": { "instance": "tencent-hccpnv5", "nodes": 128 },
    "strategy": { "tp": 8, "pp": 4, "dp": 32, "micro_batch": 1, "zero": 1, "recompute": "selective",
                  "sequence_parallel": true }
  })"));
}

TEST(CheckpointCadence, BuiltInExampleWithLlama405bIsNotCheckpointedEveryFewSteps) {
  json j = example_scenario();
  j["model"] = {{"preset", "llama3.1-405b"}};
  expect_plausible_cadence(j);
}

TEST(StorageSection, ExplicitFiguresOverrideTheTierAndReadsDefaultToWrites) {
  auto r = parse_with({{"storage",
                        {{"tier", "aws-s3-standard"}, {"write_gb_per_s_per_node", 3}, {"usd_per_gb_month", 0.021}}}});
  ASSERT_TRUE(r) << first_error(r);
  const auto& t = r->scenario.storage.tier;
  EXPECT_NEAR(t.write.per_node.base(), 3e9, 1e-3);
  EXPECT_NEAR(t.read.per_node.base(), 3e9, 1e-3);
  EXPECT_DOUBLE_EQ(*t.usd_per_gb_month, 0.021);
}

TEST(StorageSection, LocalTierWithUpload) {
  auto r = parse_with({{"storage",
                        {{"local", true}, {"write_gb_per_s_per_node", 10}, {"upload_tier", "meta-tectonic-llama3"}}}});
  ASSERT_TRUE(r) << first_error(r);
  EXPECT_TRUE(r->scenario.storage.tier.local);
  ASSERT_TRUE(r->scenario.storage.upload.has_value());
  EXPECT_EQ(r->scenario.storage.upload->id, "meta-tectonic-llama3");
}

TEST(PricingSection, PurchaseModelsAndTheirTerms) {
  auto r = parse_with({{"pricing",
                        {{"purchase", "reserved"},
                         {"reserved", {{"usd_per_gpu_hour", 3.1}, {"term_months", 12}, {"committed_gpus", 1024}}}}}});
  ASSERT_TRUE(r) << first_error(r);
  const auto& p = r->scenario.pricing;
  EXPECT_EQ(p.model, sim::PurchaseModel::reserved);
  EXPECT_DOUBLE_EQ(*p.reserved.usd_per_gpu_hour, 3.1);
  EXPECT_DOUBLE_EQ(*p.reserved.term_hours, 8760.0);
  EXPECT_EQ(*p.reserved.committed_gpus, 1024);
  // The catalog's on-demand price stays the steady-state reference.
  EXPECT_TRUE(r->scenario.cluster.price_per_gpu.has_value());
}

TEST(PricingSection, OnPremNodePowerDefaultsToTheSystemPowerWithItsSource) {
  // Not GPU TDP only (700 W x 8 = 5.6 kW): a DGX H100 draws 10.2 kW.
  auto r = parse_with({{"pricing", {{"purchase", "on_prem"}, {"on_prem", {{"usd_per_node", 250000}}}}}});
  ASSERT_TRUE(r) << first_error(r);
  const auto& op = r->scenario.pricing.on_prem;
  ASSERT_TRUE(op.node_power_w.has_value());
  EXPECT_DOUBLE_EQ(*op.node_power_w, 10200.0);  // NVIDIA DGX H100 datasheet: ~10.2 kW max
  EXPECT_FALSE(op.node_power_from_tdp);
  EXPECT_DOUBLE_EQ(op.pue, 1.58);
  ASSERT_EQ(r->warnings.size(), 1u);
  const std::string& w = r->warnings.front();
  EXPECT_NE(w.find("node_power_w"), std::string::npos) << w;
  EXPECT_NE(w.find("DGX H100 maximum system power 10200 W"), std::string::npos) << w;
  EXPECT_NE(w.find("datasheet"), std::string::npos) << w;  // its source
}

TEST(PricingSection, OnPremNodePowerFallsBackToTdpWhereTheSystemPowerIsUnknownAndSaysSo) {
  // No vendor figure for an H800 server in the catalog: GPU TDP x GPUs, said.
  auto r = parse_with({{"cluster", {{"instance", "tencent-hccpnv5"}, {"nodes", 2}}},
                       {"pricing", {{"purchase", "on_prem"}, {"on_prem", {{"usd_per_node", 250000}}}}}});
  ASSERT_TRUE(r) << first_error(r);
  const auto& op = r->scenario.pricing.on_prem;
  ASSERT_TRUE(op.node_power_w.has_value());
  EXPECT_DOUBLE_EQ(*op.node_power_w, 700.0 * 8);
  EXPECT_TRUE(op.node_power_from_tdp);
  bool said = false;
  for (const auto& w : r->warnings) said = said || w.find("GPUs only") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(PricingSection, ReservedUtilisationIsReadAndChecked) {
  auto r = parse_with({{"pricing", {{"purchase", "reserved"}, {"reserved", {{"utilisation", 0.6}}}}}});
  ASSERT_TRUE(r) << first_error(r);
  EXPECT_DOUBLE_EQ(r->scenario.pricing.reserved.utilisation, 0.6);
  auto bad = parse_with({{"pricing", {{"purchase", "reserved"}, {"reserved", {{"utilisation", 0}}}}}});
  EXPECT_NE(first_error(bad).find("pricing/reserved/utilisation"), std::string::npos) << first_error(bad);
}

TEST(PricingSection, EmptyPricingIsStillAnError) {
  auto r = parse_with({{"pricing", json::object()}});
  EXPECT_NE(first_error(r).find("scenario#/pricing/usd_per_gpu_hour"), std::string::npos);
}

TEST(DataSection, FieldsAreRead) {
  auto r = parse_with({{"data", {{"bytes_per_token", 3.5}, {"preprocessing_tokens_per_s_per_node", 2e6},
                                 {"dataset_bytes", 6e13}}}});
  ASSERT_TRUE(r) << first_error(r);
  EXPECT_DOUBLE_EQ(r->scenario.data.bytes_per_token, 3.5);
  EXPECT_DOUBLE_EQ(*r->scenario.data.cpu_tokens_per_s_per_node, 2e6);
  EXPECT_DOUBLE_EQ(*r->scenario.data.dataset_bytes, 6e13);
}

TEST(EstimateOutput, GoodputKeysAreInTheJson) {
  // Parsing is enough to exercise the renderer through a real estimate in tests/cli; here, the
  // keys of CONTRACT.md's goodput extension on a default estimate.
  auto r = parse_with(json::object());
  ASSERT_TRUE(r) << first_error(r);
  sim::Estimate e;
  e.goodput.modelled = true;
  e.goodput.wall = units::hours(48);
  const json j = estimate_to_json(e, *r);
  EXPECT_DOUBLE_EQ(j.at("time_to_train_with_failures_days").get<double>(), 2.0);
  for (const char* key : {"expected_interruptions", "checkpoint_interval_s", "checkpoint_write_s", "lost_work_s",
                          "restart_s", "fraction", "checkpoint_bytes_per_rank", "data_loading",
                          "checkpoint_interval_rule", "daly_interval_s", "min_checkpoint_interval_s"}) {
    EXPECT_TRUE(j.at("goodput").contains(key)) << key;
  }
  EXPECT_TRUE(j.at("cost_breakdown_usd").contains("total"));
}

TEST(StorageSection, NamedTierWithoutPublishedBandwidthIsRefusedNamingWhatToGive) {
  // Unknown is not zero: such a tier once wrote checkpoints at the network's speed.
  for (const char* id : {"tencent-cfs-turbo-standard", "tencent-cfs-turbo-performance", "tencent-goosefs",
                         "tencent-cos-standard"}) {
    auto r = parse_with({{"storage", {{"tier", id}}}});
    ASSERT_FALSE(r) << id;
    EXPECT_NE(first_error(r).find("/storage/tier: tier '" + std::string(id) + "' has no published write or read "
                                  "bandwidth"), std::string::npos) << first_error(r);
    EXPECT_NE(first_error(r).find("storage.write_gb_per_s"), std::string::npos) << first_error(r);
    // With the bandwidth given, the tier is priced at it.
    auto given = parse_with({{"storage", {{"tier", id}, {"write_gb_per_s", 10}}}});
    ASSERT_TRUE(given) << first_error(given);
    EXPECT_DOUBLE_EQ(given->scenario.storage.tier.write.aggregate.base(), 10e9);
    EXPECT_DOUBLE_EQ(given->scenario.storage.tier.read.aggregate.base(), 10e9);
  }
}

TEST(UnusedInputs, TermsNoPurchaseChoosesAreWarnedOnceAsTheirObject) {
  auto r = parse_with({{"pricing",
                        {{"usd_per_gpu_hour", 2.0},
                         {"spot", {{"usd_per_gpu_hour", 0.5}, {"preemptions_per_node_hour", 0.01}}},
                         {"reserved", {{"usd_per_gpu_hour", 1.0}}}}}});
  ASSERT_TRUE(r) << first_error(r);
  int spot = 0, reserved = 0;
  for (const auto& w : r->warnings) {
    spot += w.find("#/pricing/spot: not used: spot terms apply only with pricing.purchase spot") != std::string::npos;
    reserved += w.find("#/pricing/reserved: not used") != std::string::npos;
  }
  EXPECT_EQ(spot, 1);
  EXPECT_EQ(reserved, 1);
  EXPECT_EQ(r->unused_inputs.size(), 2u);
}

TEST(UnusedInputs, TermsThePurchaseChoosesOrATcoSectionReadsAreNotWarned) {
  auto spot = parse_with({{"pricing", {{"purchase", "spot"}, {"spot", {{"usd_per_gpu_hour", 0.5}}}}}});
  ASSERT_TRUE(spot) << first_error(spot);
  EXPECT_TRUE(spot->unused_inputs.empty());
  auto tco = parse_with({{"pricing", {{"usd_per_gpu_hour", 2.0}, {"reserved", {{"usd_per_gpu_hour", 1.0}}}}},
                         {"tco", {{"years", 3}, {"utilisation", 0.6}}}});
  ASSERT_TRUE(tco) << first_error(tco);
  EXPECT_TRUE(tco->unused_inputs.empty());
}

TEST(UnusedInputs, Fp8SettingsApplyOnlyToNarrowPrecisions) {
  auto bf16 = parse_with({{"training", {{"fp8_params", true}, {"fp8_recipe", "current"}}}});
  ASSERT_TRUE(bf16) << first_error(bf16);
  ASSERT_EQ(bf16->unused_inputs.size(), 2u);
  EXPECT_NE(bf16->unused_inputs[0].find("#/training/fp8_recipe: not used"), std::string::npos);
  EXPECT_NE(bf16->unused_inputs[1].find("#/training/fp8_params: not used"), std::string::npos);
  auto fp8 = parse_with({{"training", {{"precision", "fp8"}, {"fp8_params", true}, {"fp8_recipe", "current"}}}});
  ASSERT_TRUE(fp8) << first_error(fp8);
  EXPECT_TRUE(fp8->unused_inputs.empty());
}

}  // namespace
}  // namespace capplan::data
