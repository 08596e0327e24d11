// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <expected>
#include <string>
#include <utility>
#include <vector>

namespace capplan {

// One finding about user input: where (file + JSON pointer, or a flag), and what is wrong with
// the value that was given. Libraries collect all of them and return them; they never print.
struct Diagnostic {
  enum class Severity { error, warning };
  Severity severity = Severity::error;
  std::string where;    // "scenario#/strategy/tp" or "gpus.json#/gpus/3/hbm_GiB"
  std::string message;  // "must divide heads (64); got 6"
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

// "where: message" lines, one per diagnostic.
std::string to_string(const Diagnostics& diags);

}  // namespace capplan
