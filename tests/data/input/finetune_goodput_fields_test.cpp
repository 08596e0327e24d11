// SPDX-License-Identifier: Apache-2.0
// The field tables of the fine-tuning workload and the goodput sections (reliability, storage,
// data) against the scenario reader: each row's range is what the reader enforces, an unknown key
// is refused in every object the tables describe, nullable rows take null, and every row says
// what it is.
#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "capplan/data/fields.hpp"
#include "capplan/data/json_pointer.hpp"
#include "capplan/data/scenario_io.hpp"
#include "reading/json_reader.hpp"
#include "test_support.hpp"

namespace capplan::data {
namespace {

using nlohmann::json;

json finetune_doc() {
  return json::parse(R"({
    "workload": {"kind": "finetune", "method": "lora", "lora": {"rank": 16},
                 "dataset": {"tokens": "2B", "epochs": 3}},
    "model": {"preset": "qwen2.5-7b", "seq_len": 4096},
    "training": {"global_batch": 64, "precision": "bf16", "framework": "megatron"},
    "cluster": {"gpu": "h800-sxm-80gb", "gpus": 8}
  })");
}

Result<ParsedScenario> parse(const json& doc) { return parse_scenario(doc, test::real_catalogs(), "t"); }

// The first message of an error at `pointer` or below it; "" when there is none.
std::string error_at(const Result<ParsedScenario>& r, const std::string& pointer) {
  if (r) return {};
  const std::string where = "t#" + pointer;
  for (const auto& d : r.error()) {
    if (d.where == where || d.where.starts_with(where + "/")) return d.message;
  }
  return {};
}

// Every checked row of `rows` with a range: its bounds accepted, a value past either refused at
// the row's field, the message naming the bound. Returns the rows checked.
template <class T>
int check_ranges(std::span<const Field<T>> rows, const std::string& section, const json& doc) {
  int checked = 0;
  for (const auto& row : rows) {
    const FieldSpec& f = row.spec;
    const bool ranged = f.kind == FieldKind::number || f.kind == FieldKind::integer || f.kind == FieldKind::count;
    if (row.set == nullptr || !ranged) continue;
    const std::string pointer = section + "/" + f.pointer;
    SCOPED_TRACE(pointer);
    const auto with = [&](double v) {
      json d = doc;
      set_at(d, pointer, v);
      return parse(d);
    };
    if (std::isfinite(f.max)) {
      EXPECT_EQ(error_at(with(f.max), pointer), "") << "at its maximum";
      EXPECT_NE(error_at(with(f.max * 2 + 1), pointer).find("must be at most " + detail::fmt(f.max) + "; got"),
                std::string::npos);
    }
    if (std::isfinite(f.min)) {
      // The rule the message names: a count below 1 here is 0, refused as not positive.
      std::string rule = std::string(f.min_open ? "must be > " : "must be >= ") + detail::fmt(f.min);
      if (f.kind == FieldKind::integer) rule = detail::Reader::integer_text(f.min);
      if (f.kind == FieldKind::count) rule = "must be > 0";
      const std::string below = error_at(with(f.min_open ? f.min : f.min - 1), pointer);
      EXPECT_NE(below.find(rule + "; got"), std::string::npos) << "below its minimum: " << below;
      if (!f.min_open) {
        EXPECT_EQ(error_at(with(f.min), pointer), "") << "at its minimum";
      }
    }
    ++checked;
  }
  return checked;
}

TEST(FinetuneFields, EveryRowsRangeIsWhatTheReaderEnforces) {
  EXPECT_GE(check_ranges(finetune_fields(), "/workload", finetune_doc()), 6);
}

TEST(GoodputFields, EveryRowsRangeIsWhatTheReaderEnforces) {
  const json doc = example_scenario();
  EXPECT_EQ(check_ranges(reliability_fields(), "/reliability", doc), 7);
  EXPECT_EQ(check_ranges(storage_fields(), "/storage", doc), 6);
  EXPECT_EQ(check_ranges(data_fields(), "/data", doc), 3);
}

// Each object the tables describe accepts exactly their keys: a key of none is refused there.
TEST(FinetuneAndGoodputFields, AnUnknownKeyIsRefusedInEveryObject) {
  json full = finetune_doc();
  full["workload"]["method"] = "full";
  full["workload"].erase("lora");
  full["workload"]["freeze"] = {{"layers", 1}};
  const struct {
    const char* object;
    json doc;
  } cases[] = {{"/workload", finetune_doc()},         {"/workload/lora", finetune_doc()},
               {"/workload/dataset", finetune_doc()}, {"/workload/freeze", full},
               {"/reliability", example_scenario()},  {"/storage", example_scenario()},
               {"/data", example_scenario()}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.object);
    json d = c.doc;
    set_at(d, std::string(c.object) + "/bogus", 1);
    auto r = parse(d);
    ASSERT_FALSE(r);
    EXPECT_TRUE(test::has_diag(r.error(), std::string("t#") + c.object + "/bogus", "unknown field"));
  }
}

// null means "unknown" where a row is nullable, and is refused where it is not.
TEST(GoodputFields, NullIsUnknownOnlyWhereTheRowSaysSo) {
  int nullable = 0;
  const auto check = [&](const auto& rows, const std::string& section) {
    for (const auto& row : rows) {
      json d = example_scenario();
      set_at(d, section + "/" + row.spec.pointer, nullptr);
      const std::string error = error_at(parse(d), section + "/" + row.spec.pointer);
      if (row.spec.nullable) {
        EXPECT_EQ(error, "") << row.spec.pointer;
        ++nullable;
      } else {
        EXPECT_NE(error, "") << row.spec.pointer;
      }
    }
  };
  check(reliability_fields(), "/reliability");
  check(storage_fields(), "/storage");
  check(data_fields(), "/data");
  EXPECT_EQ(nullable, 4);
  json d = example_scenario();
  d["reliability"] = {{"checkpoint_interval_s", nullptr}, {"node_replacement_s", 120}};
  auto r = parse(d);
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_FALSE(r->scenario.reliability.checkpoint_interval.has_value());
  EXPECT_DOUBLE_EQ(r->scenario.reliability.node_replacement->base(), 120.0);
}

// The dataset's tokens are a count: a number or an SI-suffixed string.
TEST(FinetuneFields, DatasetTokensAreACountWithSuffixes) {
  json d = finetune_doc();
  d["workload"]["dataset"]["tokens"] = "4Mi";
  auto r = parse(d);
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_DOUBLE_EQ(r->scenario.workload.dataset.tokens, 4194304.0);
  d["workload"]["dataset"]["tokens"] = "2X";
  r = parse(d);
  ASSERT_FALSE(r);
  EXPECT_TRUE(test::has_diag(r.error(), "t#/workload/dataset/tokens", "SI suffix"));
  d["workload"]["dataset"]["tokens"] = 0.5;
  r = parse(d);
  ASSERT_FALSE(r);
  EXPECT_TRUE(test::has_diag(r.error(), "t#/workload/dataset/tokens", "must be at least 1 (a number of tokens)"));
}

// Every row says what it is (the schema's description, the form's tooltip); a flag has its help
// and type; a range that is not the kind's own says why it is what it is.
TEST(FinetuneAndGoodputFields, EveryRowHasHelpAndItsFlagsAreDescribed) {
  int rows = 0, flags = 0;
  const auto check = [&](const auto& table) {
    for (const auto& row : table) {
      const FieldSpec& f = row.spec;
      SCOPED_TRACE(f.pointer);
      EXPECT_STRNE(f.help, "");
      if (std::isfinite(f.max) && f.max > 1) {
        EXPECT_STRNE(f.bound, "");
      }
      if (f.kind == FieldKind::choice || f.kind == FieldKind::list) {
        EXPECT_FALSE(f.choices.empty());
      }
      if (f.flag.name != nullptr) {
        EXPECT_STRNE(f.flag.help, "");
        EXPECT_STRNE(f.flag.type, "");
        ++flags;
      }
      ++rows;
    }
  };
  check(finetune_fields());
  check(reliability_fields());
  check(storage_fields());
  check(data_fields());
  EXPECT_EQ(rows, 18 + 8 + 9 + 3);
  EXPECT_EQ(flags, 16 + 8 + 9 + 3);
}

// The list kind's schema names its choices; the count kind's takes a number or a string.
TEST(FinetuneFields, ListAndCountRowsWriteTheirSchema) {
  for (const auto& row : finetune_fields()) {
    const std::string pointer = row.spec.pointer;
    if (pointer == "lora/targets") {
      const auto s = field_schema(row.spec);
      EXPECT_EQ(s["type"], "array");
      EXPECT_EQ(s["items"]["enum"].size(), 7u);
      EXPECT_EQ(s["minItems"], 1);
    }
    if (pointer == "dataset/tokens") {
      const auto s = field_schema(row.spec);
      // A number in range, or a string with an SI or binary suffix ("2B", "4Mi").
      ASSERT_EQ(s["oneOf"].size(), 2u);
      EXPECT_EQ(s["oneOf"][0]["type"], "number");
      EXPECT_EQ(s["oneOf"][0]["minimum"], 1);
      EXPECT_EQ(s["oneOf"][1]["type"], "string");
      EXPECT_TRUE(s["oneOf"][1].contains("pattern"));
      EXPECT_EQ(s["x-unit"], "tokens");
    }
  }
}

}  // namespace
}  // namespace capplan::data
