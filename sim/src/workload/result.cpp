// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/result.hpp"

namespace capplan {

std::string to_string(const Diagnostics& diags) {
  std::string out;
  for (const auto& d : diags) {
    if (!out.empty()) out += '\n';
    out += d.where.empty() ? d.message : d.where + ": " + d.message;
  }
  return out;
}

}  // namespace capplan
