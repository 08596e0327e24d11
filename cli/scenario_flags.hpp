// SPDX-License-Identifier: Apache-2.0
// The scenario flags `capplan estimate` and `capplan search` share: one table (CONTRACT.md: "every
// scenario field also has a command-line flag"), the strategy options taken from
// sim::kStrategyOptions. A flag never bypasses validation: it patches the scenario document, and
// the patched document goes through data::parse_scenario like any file would.
#pragma once
#include <CLI/CLI.hpp>
#include <deque>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "capplan/sim/workload/result.hpp"

namespace capplan::cli {

enum class FlagCommand { estimate, search };

enum class FlagValue {
  text,            // always a JSON string (ids, enum names)
  number_or_text,  // a JSON number or bool when the text reads as one, else a string ("auto", "2T")
  list,            // comma-separated names as a JSON array of strings ("q,k,v,o")
};

// One scenario field with a flag.
struct ScenarioFlag {
  std::string flag;
  std::string pointer;  // where the value goes in the scenario document
  FlagValue value;
  std::string type;         // shown in --help (estimate's; search drops "|auto": its fields are fixed or searched)
  std::string help;         // estimate's
  const char* search_help;  // nullptr: not a search flag; kSameHelp: search shows `help`
};
inline constexpr const char* kSameHelp = "";

// Every row, in --help order.
const std::deque<ScenarioFlag>& scenario_flags();

// The rows one command offers, registered on it; what the user gave, applied to a document.
class ScenarioFlags {
 public:
  // Registers the command's rows on `cmd`, once. For estimate, `strategy` receives --strategy
  // (auto), registered after --tp in the strategy group.
  void add(CLI::App& cmd, FlagCommand which, std::string* strategy = nullptr);

  bool given(std::string_view flag) const;
  bool any_given() const;
  // Sets every given flag in `doc` (a flag overrides the file); --model replaces the file's
  // model, and a flag drops the other spelling of its field (global_batch vs global_batch_tokens).
  void apply(nlohmann::json& doc) const;
  // "scenario#/strategy/tp: must divide heads (64); got 3 (set by --tp)".
  void annotate(Diagnostics& diags, std::string_view where) const;

 private:
  struct Bound {
    const ScenarioFlag* row;
    std::string value;
    CLI::Option* option = nullptr;
  };
  std::deque<Bound> bound_;  // stable addresses: CLI11 writes into `value`
};

}  // namespace capplan::cli
