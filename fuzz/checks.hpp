// SPDX-License-Identifier: Apache-2.0
// The fuzz targets' checks, one per parser a user feeds (README "Fuzzing and sanitizers"): each
// parses one input and checks what any input must give. A parse either succeeds or returns at
// least one diagnostic, each with a message; what it accepts has finite numbers where the checks
// can see them. A broken invariant throws InvariantBroken: under libFuzzer the uncaught
// exception aborts and the input is kept; the corpus test (tests/data/reading/fuzz_corpus_test.cpp)
// replays fuzz/corpus/ with every build.
#pragma once
#include <span>
#include <stdexcept>
#include <string_view>

namespace capplan::fuzz {

struct InvariantBroken : std::logic_error {
  using std::logic_error::logic_error;
};

// The JSON reader every JSON input goes through (data/src/reading/json_reader.hpp).
void check_json_reader(std::string_view text);
// A scenario file (`capplan estimate FILE`), estimated when its layout is complete; a serving
// scenario's workload read as `capplan serve` reads it.
void check_scenario(std::string_view text);
// A calibration profile (`--profile FILE`).
void check_profile(std::string_view text);
// A calibration records file (`capplan calibrate --records FILE`).
void check_records(std::string_view text);
// A published-runs CSV (`capplan validate-published CSV`), capplan's layout or vTrain's.
void check_published_runs(std::string_view text);
// A price sheet (`--price-sheet FILE`).
void check_price_sheet(std::string_view text);
// A runs file of `capplan calibrate --from-runs FILE`, read as JSON and as CSV.
void check_runs(std::string_view text);
// A measured serving-runs CSV (`capplan validate-serving CSV`).
void check_serving_runs(std::string_view text);
// One catalog file of a data folder (`--data-dir DIR`): gpus.json, instances.json, models.json,
// storage.json, frameworks.json or engines.json.
void check_catalog(std::string_view file, std::string_view text);

struct Target {
  const char* name;  // fuzz_<name>, fuzz/corpus/<name>/, fuzz/dict/<name>.dict
  void (*check)(std::string_view text);
};
// Every target, in fuzz/run.sh's order.
std::span<const Target> targets();

}  // namespace capplan::fuzz
