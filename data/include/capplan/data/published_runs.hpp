// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "capplan/data/catalog.hpp"
#include "capplan/sim/workload/result.hpp"

namespace capplan::data {

// One row of a published-runs CSV (format of data/benchmarks/published_runs_dev.csv).
struct PublishedRun {
  std::string row_id;
  std::string model_name;
  std::string arch_type;  // dense / moe
  std::string gpu_model;  // as written in the CSV
  int num_gpus = 0;
  // Measured throughput (tokens/s per GPU). From the row, or derived from its step time,
  // or from its TFLOP/s using the source's own FLOP definition (Narayanan Eq. 3).
  double measured_tokens_per_s_per_gpu = 0;
  std::string measured_how;
  // The table's source group: one publication's table or benchmark family (the published table's
  // `group` column, the others' `source_group`).
  std::string source_group;
  // Peak memory per GPU where the row measures it (0: not measured), and what the table means by it
  // (peak allocated, reserved, active).
  double measured_peak_memory_gib = 0;
  std::string memory_definition;
  // Scenario JSON built from the row (model dimensions, GPU, layout, batch, precision).
  nlohmann::json scenario;
  bool usable = false;
  std::string skip_reason;  // why a row is not usable (full-run aggregate, unknown layout, ...)
  std::vector<std::string> assumptions;  // fields we had to assume, stated

  // Whole-run aggregate (total_gpu_hours with the run's token count), predicted with the goodput
  // model by `capplan validate-published --whole-run`; separate from the per-step fields above.
  bool whole_run = false;  // the row publishes whole-run GPU-hours and tokens
  double measured_gpu_hours = 0;
  nlohmann::json whole_run_scenario;  // the step scenario with the run's tokens (and stated assumptions)
  bool whole_run_usable = false;
  std::string whole_run_skip_reason;
  std::vector<std::string> whole_run_assumptions;
};

// Reads every row; rows that cannot become a scenario are returned with usable == false and
// the reason. Errors only for an unreadable file or a malformed CSV (named by line). A table
// with vTrain's columns (Bang et al., MICRO 2024: "# GPUs", ..., "iteration time (ms)") is read
// as vTrain's measured Megatron-DeepSpeed iterations, with the settings of its configs; one with
// the fine-tuning table's columns (method, frozen_base_weight_dtype, lora_rank, ...) as measured
// fine-tuning runs.
Result<std::vector<PublishedRun>> load_published_runs(const std::filesystem::path& csv,
                                                      const Catalogs& catalogs);
// The same for the text of a CSV file named `file` in messages (the fuzz target's entry point).
Result<std::vector<PublishedRun>> parse_published_runs(std::string_view text, const std::string& file,
                                                       const Catalogs& catalogs);

// Nodes a token's experts span under NeMo AutoModel's FakeBalancedGate benchmark routing (token i
// goes to experts i*k .. i*k+k-1 mod E), with E/ep experts per EP rank and EP ranks contiguous on
// nodes of `gpus_per_node`: the most over all tokens. 0 when the EP group fits in one node or the
// sizes are invalid (E not a multiple of ep, k > E).
// The recipe id (data/frameworks.json) for a published run's framework column: a small name table,
// with the publication year where the column names no version (Megatron-LM up to 2022) and the
// model where a framework's performance recipe is per model (Megatron-Bridge GPT-OSS);
// nullopt when no recipe matches (the row then uses "megatron": fused kernels, capplan's defaults).
std::optional<std::string> framework_recipe_for(const std::string& framework, std::optional<int> year,
                                                const std::string& model_name);

int fake_balanced_gate_nodes(int experts, int top_k, int ep, int gpus_per_node);

}  // namespace capplan::data
