// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <expected>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "capplan/sim/workload/finding.hpp"

namespace capplan {

// One finding about user input: where (file + JSON pointer, or a flag), and what is wrong with
// the value that was given. Libraries collect all of them and return them; they never print.
// sim/ gives a coded `finding` and no message (data/findings.hpp words it: data::word, data::message);
// data/ and the front ends write the message themselves.
struct Diagnostic {
  enum class Severity { error, warning };
  Severity severity = Severity::error;
  std::string where;    // "scenario#/strategy/tp" or "gpus.json#/gpus/3/hbm_GiB"
  std::string message;  // "must divide heads (64); got 6"; empty when `finding` says it
  std::optional<sim::Finding> finding = std::nullopt;
};
using Diagnostics = std::vector<Diagnostic>;

template <class T>
using Result = std::expected<T, Diagnostics>;

inline std::unexpected<Diagnostics> fail(std::string where, std::string message) {
  return std::unexpected(Diagnostics{{Diagnostic::Severity::error, std::move(where), std::move(message)}});
}

inline bool has_errors(const Diagnostics& d) {
  for (const auto& x : d) {
    if (x.severity == Diagnostic::Severity::error) return true;
  }
  return false;
}

// "where: message" lines, one per diagnostic; a coded diagnostic without a message shows its finding
// as data ("[code 42 field strategy.tp heads=16 got=6]"): data::word gives it words.
std::string to_string(const Diagnostics& diags);

}  // namespace capplan
