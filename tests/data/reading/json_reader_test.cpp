// SPDX-License-Identifier: Apache-2.0
// The one JSON reading idiom of data/ (data/src/reading/json_reader.hpp): what each helper reports, by
// pointer and with the value given, so every loader that uses it words an error the same way.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "reading/json_reader.hpp"
#include "test_support.hpp"

namespace capplan::data {
namespace {

using detail::json;
using detail::Object;
using detail::Reader;

enum class Colour { red, green };
std::optional<Colour> colour_from_string(const std::string& s) {
  if (s == "red") return Colour::red;
  if (s == "green") return Colour::green;
  return std::nullopt;
}

TEST(JsonReader, AnEnumFromAStringNamesThePointerTheValueAndTheClosestName) {
  Diagnostics d;
  Reader r("f.json", d);
  EXPECT_EQ(r.one_of(json("green"), "/c", colour_from_string, {"red", "green"}, "colour"), Colour::green);
  EXPECT_EQ(r.one_of(json("gren"), "/c", colour_from_string, {"red", "green"}, "colour"), std::nullopt);
  EXPECT_EQ(r.one_of(json(3), "/c", colour_from_string, {"red", "green"}, "colour"), std::nullopt);
  ASSERT_EQ(d.size(), 2u) << to_string(d);
  EXPECT_EQ(d[0].where, "f.json#/c");
  EXPECT_EQ(d[0].message, "unknown colour 'gren' (did you mean 'green'? known: red, green)");
  EXPECT_EQ(d[1].message, "expected a string; got number 3");
}

TEST(JsonReader, AMissingRequiredKeyIsNamedWithItsHelpWhenThereIsOne) {
  Diagnostics d;
  Reader r("f.json", d);
  const json obj = {{"a", 1}};
  EXPECT_NE(r.required(obj, "/x", "a"), nullptr);
  EXPECT_EQ(r.required(obj, "/x", "b"), nullptr);
  EXPECT_EQ(r.required(obj, "/x", "c", "the c of x"), nullptr);
  ASSERT_EQ(d.size(), 2u) << to_string(d);
  EXPECT_EQ(to_string(d), "f.json#/x/b: required field is missing\nf.json#/x/c: required (the c of x) is missing");
}

TEST(JsonReader, ASchemaVersionOtherThanTheOneReadIsNamed) {
  Diagnostics d;
  Reader r("f.json", d);
  EXPECT_EQ(r.schema_version(json(1), "/schema", 1), 1);
  EXPECT_EQ(r.schema_version(json(2), "/schema", 1), std::nullopt);
  EXPECT_EQ(r.schema_version(json("1"), "/schema", 1), std::nullopt);
  ASSERT_EQ(d.size(), 2u) << to_string(d);
  EXPECT_EQ(d[0].message, "unsupported schema version (this capplan reads 1); got 2");
  EXPECT_EQ(d[1].message, "must be a positive integer; got \"1\"");
}

TEST(JsonReader, AnObjectReadsEveryKeyAndCollectsEveryFinding) {
  const json doc = json::parse(R"({"n": 0, "s": "", "list": {"x": 1}, "extra": true,
                                  "names": {"a": "1", "b": 2}, "kind": "blue"})");
  Diagnostics d;
  Reader r("f.json", d);
  Object o{doc, "", r};
  EXPECT_EQ(o.integer("n", 1, 7), 7);
  EXPECT_EQ(o.string("s", true, "a label"), "");
  EXPECT_EQ(o.number("missing", 0, true), 0);
  EXPECT_EQ(o.string_map("names"), (std::map<std::string, std::string>{{"a", "1"}}));
  EXPECT_EQ(o.one_of("kind", colour_from_string, {"red", "green"}, "colour", Colour::red), Colour::red);
  int items = 0;
  o.list("list", [&](Object&) { ++items; });
  EXPECT_EQ(items, 0);
  o.known({"n", "s", "list", "names", "kind", "missing"});
  EXPECT_EQ(to_string(d), "f.json#/n: must be a positive integer; got 0\n"
                          "f.json#/s: must not be empty (a label)\n"
                          "f.json#/missing: required field is missing\n"
                          "f.json#/names/b: expected a string; got number 2\n"
                          "f.json#/kind: unknown colour 'blue' (known: red, green)\n"
                          "f.json#/list: expected a list; got object {\"x\":1}\n"
                          "f.json#/extra: unknown field (known: n, s, list, names, kind, missing)");
}

TEST(JsonReader, AListOfObjectsReportsTheElementsThatAreNot) {
  const json doc = json::parse(R"({"items": [{"v": 1}, 5, {"v": 2}]})");
  Diagnostics d;
  Reader r("f.json", d);
  Object o{doc, "", r};
  std::vector<std::string> seen;
  o.list("items", [&](Object& item) { seen.push_back(item.path + "=" + std::to_string(item.integer("v", 0))); });
  EXPECT_EQ(seen, (std::vector<std::string>{"/items/0=1", "/items/2=2"}));
  EXPECT_EQ(to_string(d), "f.json#/items/1: expected an object; got number 5");
}

struct Record {
  int count = 0;
  std::optional<double> rate;
  std::string name;
  std::optional<bool> flag;
  std::vector<std::string> tags;
};

constexpr detail::Field<Record> kRecordFields[] = {
    {"count", detail::Kind::integer, detail::Need::required, false, {1, 10, false}, "how many",
     detail::store<&Record::count>},
    {"rate", detail::Kind::number, detail::Need::optional, true, detail::kPositive, "per second",
     detail::store<&Record::rate>},
    {"name", detail::Kind::string, detail::Need::required, false, {}, "a name", detail::store<&Record::name>},
    {"flag", detail::Kind::boolean, detail::Need::optional, false, {}, "a flag", detail::store<&Record::flag>},
    {"tags", detail::Kind::string_list, detail::Need::optional, false, {}, "tags", detail::store<&Record::tags>},
};

TEST(JsonReader, AFieldTableStoresCheckedValuesInTheirMembers) {
  Diagnostics d;
  Reader r("f.json", d);
  Record rec;
  detail::read_fields<Record>(json::parse(R"({"count": 3.0, "rate": 2.5, "name": "x", "flag": true, "tags": ["a"]})"),
                              "", kRecordFields, rec, r);
  EXPECT_TRUE(d.empty()) << to_string(d);
  EXPECT_EQ(rec.count, 3);
  EXPECT_EQ(rec.rate, 2.5);
  EXPECT_EQ(rec.name, "x");
  EXPECT_EQ(rec.flag, true);
  EXPECT_EQ(rec.tags, std::vector<std::string>{"a"});

  Record bad;
  detail::read_fields<Record>(json::parse(R"({"count": 11, "rate": null, "nmae": "x"})"), "/r", kRecordFields, bad, r);
  EXPECT_EQ(to_string(d), "f.json#/r/count: must be at most 10; got 11\n"
                          "f.json#/r/name: required (a name) is missing\n"
                          "f.json#/r/nmae: unknown field (did you mean 'name'? known: count, rate, name, flag, tags)");
  EXPECT_EQ(bad.count, 0);
  EXPECT_EQ(bad.rate, std::nullopt);
}

}  // namespace
}  // namespace capplan::data
