// SPDX-License-Identifier: Apache-2.0
// Every input kept in fuzz/corpus/<target>/ (each crash the fuzz targets found, with what was
// worth keeping) replayed through the target's check with this build's compiler and sanitizers,
// so that a fixed parser bug stays fixed without Clang or libFuzzer (fuzz/checks.hpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "checks.hpp"

namespace capplan::fuzz {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(FuzzCorpus, EveryKeptInputKeepsTheParsersInvariants) {
  int replayed = 0;
  for (const auto& target : targets()) {
    const fs::path dir = fs::path(CAPPLAN_SOURCE_DIR) / "fuzz" / "corpus" / target.name;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (!entry.is_regular_file()) continue;
      SCOPED_TRACE(entry.path().string());
      EXPECT_NO_THROW(target.check(read(entry.path())));
      ++replayed;
    }
  }
  // fuzz/corpus/published_runs holds 31 seeds (rows of the shipped table, a vTrain table): the
  // test must see the folder, or it proves nothing.
  EXPECT_GE(replayed, 31);
}

}  // namespace
}  // namespace capplan::fuzz
