// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/workload/result.hpp"

#include <charconv>

namespace capplan {

namespace {

// A coded finding as data, for logs and test failures (the words are data/'s):
// "[code 42 field strategy.tp heads=16 got=6]".
std::string dump(const sim::Finding& f) {
  std::string s = "[code " + std::to_string(static_cast<int>(f.code));
  if (!f.field.empty()) s += " field " + f.field;
  for (const auto& v : f.values) {
    s += ' ';
    s += v.name;
    s += '=';
    if (v.is_text) {
      s += v.text;
    } else {
      char buf[32];
      const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v.number);
      s.append(buf, ec == std::errc() ? end : buf);
    }
  }
  return s + "]";
}

}  // namespace

std::string to_string(const Diagnostics& diags) {
  std::string out;
  for (const auto& d : diags) {
    if (!out.empty()) out += '\n';
    const std::string message = d.message.empty() && d.finding ? dump(*d.finding) : d.message;
    out += d.where.empty() ? message : d.where + ": " + message;
  }
  return out;
}

}  // namespace capplan
