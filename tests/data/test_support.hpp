// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "capplan/data/catalog.hpp"

namespace capplan::data::test {

// The mixtral-8x7b entry's MoE block (catalogs and scenario presets): 8 experts of 14336, top-2,
// the rest the defaults, standard (GQA) attention.
inline void expect_mixtral_8x7b_experts(const sim::ModelSpec& m) {
  EXPECT_TRUE(m.is_moe());
  EXPECT_EQ(m.moe.experts, 8);
  EXPECT_EQ(m.moe.top_k, 2);
  EXPECT_EQ(m.moe.expert_ffn_hidden, 14336);
  EXPECT_EQ(m.moe.shared_experts, 0);     // default
  EXPECT_EQ(m.moe.dense_layers, 0);       // default
  EXPECT_EQ(m.moe.every_n_layers, 1);     // default
  EXPECT_EQ(m.moe.capacity_factor, 1.0);  // a scenario parameter, not a catalog key
  EXPECT_EQ(m.attention, sim::Attention::standard);
}

inline std::filesystem::path fixtures() { return std::filesystem::path(CAPPLAN_TEST_DATA_DIR) / "data"; }
inline std::filesystem::path source_data_dir() { return std::filesystem::path(CAPPLAN_SOURCE_DIR) / "data"; }

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
inline nlohmann::json read_json(const std::filesystem::path& p) { return nlohmann::json::parse(read_file(p)); }

inline void write_file(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// A fresh folder named after the running test.
inline std::filesystem::path scratch_dir() {
  const auto* info = testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->test_suite_name()) + "_" + info->name();
  for (auto& c : name) {
    if (c == '/') c = '_';
  }
  auto dir = std::filesystem::path(testing::TempDir()) / ("capplan_data_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Copies the good catalog fixtures into a scratch folder, letting `edit` change one file's JSON.
inline std::filesystem::path catalogs_with(const std::string& file,
                                           const std::function<void(nlohmann::json&)>& edit) {
  auto dir = scratch_dir();
  for (const char* f : {"gpus.json", "instances.json", "models.json"}) {
    auto j = read_json(fixtures() / "good" / f);
    if (file == f) edit(j);
    write_file(dir / f, j.dump(2));
  }
  return dir;
}

inline const Catalogs& good_catalogs() {
  static const Catalogs c = [] {
    auto r = load_catalogs(fixtures() / "good");
    if (!r) {
      ADD_FAILURE() << "good fixtures do not load:\n" << to_string(r.error());
      return Catalogs{};
    }
    return *r;
  }();
  return c;
}

inline const Catalogs& real_catalogs() {
  static const Catalogs c = [] {
    auto r = load_catalogs(source_data_dir());
    if (!r) {
      ADD_FAILURE() << "data/ catalogs do not load:\n" << to_string(r.error());
      return Catalogs{};
    }
    return *r;
  }();
  return c;
}

// True when some diagnostic sits exactly at `where` and its message contains `text`.
inline testing::AssertionResult has_diag(const Diagnostics& diags, const std::string& where, const std::string& text) {
  for (const auto& d : diags) {
    if (d.where == where && d.message.find(text) != std::string::npos) return testing::AssertionSuccess();
  }
  return testing::AssertionFailure() << "no diagnostic at '" << where << "' containing '" << text << "'; got:\n"
                                     << to_string(diags);
}

}  // namespace capplan::data::test
