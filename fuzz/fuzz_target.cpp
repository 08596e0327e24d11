// SPDX-License-Identifier: Apache-2.0
// One libFuzzer target: CAPPLAN_FUZZ_TARGET names the entry of capplan::fuzz::targets() it runs.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto check = [] {
    for (const auto& t : capplan::fuzz::targets()) {
      if (std::string_view(t.name) == CAPPLAN_FUZZ_TARGET) return t.check;
    }
    throw capplan::fuzz::InvariantBroken("no fuzz target named " CAPPLAN_FUZZ_TARGET);
  }();
  check({reinterpret_cast<const char*>(data), size});
  return 0;
}
