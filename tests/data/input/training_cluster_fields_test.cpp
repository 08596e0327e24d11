// SPDX-License-Identifier: Apache-2.0
// The training and cluster field tables (input/fields/training_fields.cpp, cluster_fields.cpp)
// against the scenario reader: every row's range is what the reader enforces, an error names the
// field and the value, the section accepts exactly the table's keys, and every row is documented.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>

#include "capplan/data/fields.hpp"
#include "capplan/data/json_pointer.hpp"
#include "capplan/data/scenario_io.hpp"
#include "reading/json_reader.hpp"
#include "test_support.hpp"

namespace capplan::data {
namespace {

using nlohmann::json;
using test::good_catalogs;
using test::has_diag;

// Valid against the good fixtures: Llama 2 7B on two p5.48xlarge, or on 16 H100s by GPU.
json by_instance() {
  return json::parse(R"({"model": {"preset": "llama2-7b"},
                         "training": {"tokens": "1T", "global_batch": 512},
                         "cluster": {"instance": "aws-p5.48xlarge", "nodes": 2}})");
}
json by_gpu() {
  json d = by_instance();
  d["cluster"] = {{"gpu", "h100-sxm-80gb"}, {"gpus", 16}, {"gpus_per_node", 8}};
  return d;
}

// The first error at `pointer` (or below it) when `doc` is read; "" when there is none.
std::string error_at(const json& doc, const std::string& pointer) {
  auto r = parse_scenario(doc, good_catalogs());
  if (r) return {};
  const std::string where = "scenario#" + pointer;
  for (const auto& d : r.error()) {
    if (d.where == where || d.where.starts_with(where + "/")) return d.message;
  }
  return {};
}

// `doc` with `value` at `section`/`pointer`; the cluster's sizes on the cluster form they belong
// to, one of the two global batch spellings.
json with(const std::string& section, const FieldSpec& f, const json& value) {
  const std::string key = f.pointer;
  json d = key == "gpus" || key == "gpus_per_node" ? by_gpu() : by_instance();
  if (key == "global_batch_tokens") d["training"].erase("global_batch");
  set_at(d, "/" + section + "/" + key, value);
  return d;
}

template <class T>
void expect_ranges_enforced(const std::string& section, std::span<const Field<T>> table) {
  int checked = 0;
  for (const auto& row : table) {
    const FieldSpec& f = row.spec;
    if (f.kind != FieldKind::number && f.kind != FieldKind::integer && f.kind != FieldKind::count) continue;
    const std::string pointer = "/" + section + "/" + f.pointer;
    ASSERT_TRUE(std::isfinite(f.max)) << pointer << ": a range without a maximum";
    EXPECT_EQ(error_at(with(section, f, f.max), pointer), "") << pointer << " at its maximum";
    const std::string above = error_at(with(section, f, f.max * 2 + 1), pointer);
    EXPECT_NE(above.find("must be at most " + detail::fmt(f.max)), std::string::npos) << pointer << ": " << above;
    EXPECT_NE(above.find("got "), std::string::npos) << pointer << ": " << above;
    const double lowest = f.least > f.min ? f.least : f.min;
    if (!f.min_open || f.least > f.min) {
      EXPECT_EQ(error_at(with(section, f, lowest), pointer), "") << pointer << " at its minimum";
    }
    const double below = f.least > f.min ? f.least / 10 : f.min - 1;
    EXPECT_NE(error_at(with(section, f, below), pointer), "") << pointer << " below its minimum";
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

TEST(TrainingFields, EveryRowsRangeIsWhatTheReaderEnforces) {
  expect_ranges_enforced("training", training_fields());
}

TEST(ClusterFields, EveryRowsRangeIsWhatTheReaderEnforces) {
  expect_ranges_enforced("cluster", cluster_fields());
}

TEST(ClusterFields, ALinkSlowerThanTheFloorIsRefusedWithItsReason) {
  json d = by_instance();
  d["cluster"]["inter_node_gbps_per_gpu"] = 0.0001;
  EXPECT_EQ(error_at(d, "/cluster/inter_node_gbps_per_gpu"),
            "must be at least 0.001 (1 Mbit/s: a slower link is no GPU interconnect); got 0.0001");
  d["cluster"]["inter_node_gbps_per_gpu"] = 0;
  EXPECT_EQ(error_at(d, "/cluster/inter_node_gbps_per_gpu"), "must be > 0; got 0");
}

TEST(TrainingFields, ACountTakesAnSiSuffixAndNamesTheFieldWhenOutOfRange) {
  json d = by_instance();
  d["training"]["tokens"] = "20P";
  EXPECT_EQ(error_at(d, "/training/tokens"), "must be at most 1e+16; got \"20P\"");
  d["training"]["tokens"] = "2x";
  EXPECT_NE(error_at(d, "/training/tokens").find("SI suffix"), std::string::npos);
  d["training"]["tokens"] = "2Ti";
  auto r = parse_scenario(d, good_catalogs());
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->scenario.training.tokens, 2.0 * 1024 * 1024 * 1024 * 1024);
}

TEST(TrainingFields, AChoiceNamesItsNounAndItsSpellings) {
  json d = by_instance();
  d["training"]["loss_kernel"] = "fusd";
  EXPECT_EQ(error_at(d, "/training/loss_kernel"),
            "unknown loss kernel 'fusd' (did you mean 'fused'? known: unfused, fused, te, eager)");
  d = by_instance();
  d["training"]["precision"] = "fp4";
  EXPECT_NE(error_at(d, "/training/precision").find("known: bf16, fp16, fp8, tf32, fp32"), std::string::npos);
}

// The keys the reader names as known when `section` has an unknown one.
template <class T>
void expect_exactly_the_tables_keys(const std::string& section, std::span<const Field<T>> table) {
  json d = by_instance();
  d[section]["zz_unknown"] = 1;
  std::string known = "known: ";
  for (std::size_t i = 0; i < table.size(); ++i) known += (i > 0 ? ", " : "") + std::string(table[i].spec.pointer);
  EXPECT_EQ(error_at(d, "/" + section + "/zz_unknown"), "unknown field (" + known + ")");
}

TEST(TrainingFields, TheSectionAcceptsExactlyTheTablesKeys) {
  expect_exactly_the_tables_keys("training", training_fields());
}

TEST(ClusterFields, TheSectionAcceptsExactlyTheTablesKeys) {
  expect_exactly_the_tables_keys("cluster", cluster_fields());
}

// Each row has help for the schema; a flag, or a reason here for none.
template <class T>
void expect_documented(std::span<const Field<T>> table, const std::map<std::string, std::string>& no_flag) {
  std::set<std::string> pointers;
  for (const auto& row : table) {
    const FieldSpec& f = row.spec;
    EXPECT_TRUE(pointers.insert(f.pointer).second) << f.pointer << ": two rows";
    EXPECT_NE(std::string(f.help), "") << f.pointer << ": no help";
    if (f.flag.name == nullptr) {
      EXPECT_TRUE(no_flag.contains(f.pointer)) << f.pointer << ": no flag and no reason for none";
      continue;
    }
    EXPECT_FALSE(no_flag.contains(f.pointer)) << f.pointer << ": has a flag now";
    EXPECT_TRUE(std::string(f.flag.name).starts_with("--")) << f.pointer;
    EXPECT_NE(std::string(f.flag.type), "") << f.pointer;
    EXPECT_NE(std::string(f.flag.help), "") << f.pointer;
  }
}

TEST(TrainingFields, EveryRowHasHelpAndAFlagOrAReasonForNone) {
  expect_documented(training_fields(),
                    {{"kernels", "the framework recipe's style; --framework picks it"},
                     {"host_us_per_op", "a calibration figure of the framework recipe"},
                     {"zero3_host_us_per_layer", "a calibration figure of the framework recipe"},
                     {"pp_p2p_batched", "a framework recipe's behaviour"},
                     {"tp_async_dgrad", "a framework recipe's behaviour"}});
}

TEST(ClusterFields, EveryRowHasHelpAndAFlagOrAReasonForNone) {
  expect_documented(cluster_fields(), {{"topology", "a list of tier objects, no single value"}});
}

// A row read by hand is still in the schema: the id rows as strings, the tiers by reference.
TEST(ClusterFields, TheSchemaOfRowsReadByHand) {
  for (const auto& row : cluster_fields()) {
    const auto s = field_schema(row.spec);
    if (std::string(row.spec.pointer) == "topology") {
      EXPECT_EQ(s["items"]["$ref"], "#/$defs/tier");
      EXPECT_EQ(s["minItems"], 1);
    }
    if (std::string(row.spec.pointer) == "intra_node_gbps") {
      EXPECT_EQ(s["minimum"], 0.001);
      EXPECT_EQ(s["x-unit"], "Gbit/s");
    }
  }
}

}  // namespace
}  // namespace capplan::data
