// SPDX-License-Identifier: Apache-2.0
// The runs file of calibrate --from-runs: JSON and CSV, and every bad input named by file, run
// (index or line), field and value.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <string>

#include "capplan/data/runs_io.hpp"
#include "test_support.hpp"

namespace capplan::data {
namespace {

namespace fs = std::filesystem;

constexpr const char* kScenario = R"({
  "model":    { "preset": "llama3-8b" },
  "training": { "tokens": "1T", "global_batch_tokens": 4194304, "precision": "bf16" },
  "cluster":  { "gpu": "h800-sxm-80gb", "gpus": 8 },
  "strategy": { "tp": 1, "pp": 1, "dp": 8 }
})";

// A scratch folder with base.json (the scenario above) and `name` holding `text`.
fs::path write_runs(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / ("capplan-runs-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "base.json") << kScenario;
  std::ofstream(dir / name) << text;
  return dir / name;
}

std::string errors_of(const std::string& name, const std::string& text) {
  auto r = load_runs(write_runs(name, text), test::real_catalogs());
  return r ? std::string("(parsed)") : to_string(r.error());
}

TEST(RunsFile, ReadsJsonWithFileAndInlineScenariosAndOverrides) {
  const std::string text = std::string(R"({"format": "capplan-runs/1", "note": "synthetic", "runs": [
    {"label": "a", "scenario": "base.json", "step_time_s": 1.5},
    {"scenario": "base.json", "override": {"cluster": {"gpus": 16}, "strategy": {"dp": 16}}, "tokens_per_s": 2e6},
    {"scenario": )") + kScenario + R"(, "tokens_per_s_per_gpu": 9000}]})";
  auto r = load_runs(write_runs("runs.json", text), test::real_catalogs());
  ASSERT_TRUE(r.has_value()) << to_string(r.error());
  ASSERT_EQ(r->runs.size(), 3u);
  EXPECT_EQ(r->gpu_id, "h800-sxm-80gb");
  EXPECT_EQ(r->note, "synthetic");
  EXPECT_EQ(r->runs[0].label, "a");
  EXPECT_EQ(r->runs[0].metric, RunMetric::step_time_s);
  EXPECT_DOUBLE_EQ(r->runs[0].value, 1.5);
  EXPECT_EQ(r->runs[1].label, "run 2");
  EXPECT_EQ(r->runs[1].scenario.cluster.gpus, 16);  // the override applied
  EXPECT_EQ(r->runs[1].metric, RunMetric::tokens_per_s);
  EXPECT_EQ(r->runs[2].metric, RunMetric::tokens_per_s_per_gpu);
  EXPECT_EQ(r->runs[2].where, "runs.json#/runs/2");
}

TEST(RunsFile, ReadsCsv) {
  auto r = load_runs(write_runs("runs.csv", "label,scenario,step_time_s\nfirst,base.json,1.25\n,base.json,2\n"),
                     test::real_catalogs());
  ASSERT_TRUE(r.has_value()) << to_string(r.error());
  ASSERT_EQ(r->runs.size(), 2u);
  EXPECT_EQ(r->runs[0].label, "first");
  EXPECT_DOUBLE_EQ(r->runs[0].value, 1.25);
  EXPECT_EQ(r->runs[1].label, "run 2");
  EXPECT_EQ(r->runs[1].where, "runs.csv:3");
}

TEST(RunsFile, BadMeasurementsAreNamedByRunFieldAndValue) {
  const std::string d = errors_of("runs.json", R"({"format": "capplan-runs/1", "runs": [
    {"scenario": "base.json", "step_time_s": -1},
    {"scenario": "base.json", "step_time_s": 0},
    {"scenario": "base.json", "tokens_per_s": "fast"},
    {"scenario": "base.json", "step_time_s": 1, "tokens_per_s": 5},
    {"scenario": "base.json"},
    {"scenario": "base.json", "step_time_s": 5e-324},
    {"scenario": "base.json", "step_time": 1}]})");
  EXPECT_NE(d.find("runs.json#/runs/0/step_time_s: must be a positive measurement; got -1"), std::string::npos) << d;
  EXPECT_NE(d.find("runs.json#/runs/1/step_time_s: must be a positive measurement; got 0"), std::string::npos) << d;
  EXPECT_NE(d.find("runs.json#/runs/2/tokens_per_s: expected a number; got string \"fast\""), std::string::npos) << d;
  EXPECT_NE(d.find("runs.json#/runs/3: needs exactly one measurement"), std::string::npos) << d;
  EXPECT_NE(d.find("runs.json#/runs/4: needs exactly one measurement (one of step_time_s, tokens_per_s, "
                   "tokens_per_s_per_gpu); got 0"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("runs.json#/runs/5/step_time_s: must be a positive measurement"), std::string::npos) << d;
  EXPECT_NE(d.find("runs.json#/runs/6/step_time: unknown field"), std::string::npos) << d;
}

TEST(RunsFile, TheFileItselfIsChecked) {
  EXPECT_NE(errors_of("r.json", R"({"runs": [], "extra": 1})").find("r.json#/format: required"), std::string::npos);
  EXPECT_NE(errors_of("r.json", R"({"format": "capplan-runs/1", "runs": [], "extra": 1})")
                .find("r.json#/extra: unknown field (known: format, runs, note)"),
            std::string::npos);
  EXPECT_NE(errors_of("r.json", R"({"format": "capplan-runs/2", "runs": []})")
                .find("r.json#/format: must be \"capplan-runs/1\"; got \"capplan-runs/2\""),
            std::string::npos);
  EXPECT_NE(errors_of("r.json", R"({"format": "capplan-runs/1", "runs": []})")
                .find("r.json#/runs: expected a non-empty list of runs"),
            std::string::npos);
  EXPECT_NE(errors_of("r.json", R"({"format": "capplan-runs/1", "runs": [)").find("r.json"), std::string::npos);
  EXPECT_NE(errors_of("r.json", "").find("r.json: empty file"), std::string::npos);
}

TEST(RunsFile, ScenarioErrorsNameTheRun) {
  const std::string d = errors_of("runs.json", R"({"format": "capplan-runs/1", "runs": [
    {"scenario": "missing.json", "step_time_s": 1},
    {"scenario": {"model": {"preset": "llama3-8b"}, "training": {"tokens": "1T", "global_batch": 8},
                  "cluster": {"gpu": "h800-sxm-80gb", "gpus": -4}}, "step_time_s": 1},
    {"scenario": "base.json", "override": {"strategy": {"tp": 3}}, "step_time_s": 1}]})");
  EXPECT_NE(d.find("runs.json#/runs/0/scenario: cannot read"), std::string::npos) << d;
  EXPECT_NE(d.find("runs.json#/runs/1/scenario#/cluster/gpus"), std::string::npos) << d;
  // A scenario file's own errors name the file, and which run (with its override) read it.
  EXPECT_NE(d.find("base.json#/strategy: tp*pp*dp*cp = 3*1*8*1 = 24 must equal the number of GPUs (8) (scenario of "
                   "runs.json run 3, with its override)"),
            std::string::npos)
      << d;
}

TEST(RunsFile, AllRunsMustBeOnOneGpuType) {
  const std::string d = errors_of("runs.json", R"({"format": "capplan-runs/1", "runs": [
    {"scenario": "base.json", "step_time_s": 1},
    {"scenario": "base.json", "override": {"cluster": {"gpu": "h100-sxm-80gb"}}, "step_time_s": 1}]})");
  EXPECT_NE(d.find("runs.json#/runs/1/scenario: GPU 'h100-sxm-80gb' differs from run 1's 'h800-sxm-80gb': all runs "
                   "must be on the same GPU type"),
            std::string::npos)
      << d;
}

TEST(RunsFile, CsvErrorsNameLineColumnAndValue) {
  std::string d = errors_of("runs.csv", "scenario,step_time_s,gpu\nbase.json,1,x\n");
  EXPECT_NE(d.find("runs.csv:1: unknown column 'gpu'"), std::string::npos) << d;
  d = errors_of("runs.csv", "scenario,step_time_s,tokens_per_s\nbase.json,1,2\n");
  EXPECT_NE(d.find("runs.csv:1: two measurement columns ('step_time_s' and 'tokens_per_s'); give one"),
            std::string::npos)
      << d;
  d = errors_of("runs.csv", "label,step_time_s\na,1\n");
  EXPECT_NE(d.find("runs.csv:1: missing column 'scenario'"), std::string::npos) << d;
  d = errors_of("runs.csv", "scenario,step_time_s\nbase.json,1\nbase.json,abc\nbase.json,1e999\nbase.json,-2\n");
  EXPECT_NE(d.find("runs.csv:3: step_time_s: must be a positive measurement; got 'abc'"), std::string::npos) << d;
  EXPECT_NE(d.find("runs.csv:4: step_time_s: must be a positive measurement; got '1e999'"), std::string::npos) << d;
  EXPECT_NE(d.find("runs.csv:5: step_time_s: must be a positive measurement; got '-2'"), std::string::npos) << d;
  d = errors_of("runs.csv", "scenario,step_time_s\nbase.json,nan\nbase.json,inf\n");
  EXPECT_NE(d.find("runs.csv:2: step_time_s: must be a positive measurement; got 'nan'"), std::string::npos) << d;
  EXPECT_NE(d.find("runs.csv:3: step_time_s: must be a positive measurement; got 'inf'"), std::string::npos) << d;
}

}  // namespace
}  // namespace capplan::data
