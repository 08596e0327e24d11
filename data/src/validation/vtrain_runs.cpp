// SPDX-License-Identifier: Apache-2.0
#include "validation/vtrain_runs.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>

#include "capplan/data/scenario_io.hpp"
#include "reading/json_reader.hpp"

namespace capplan::data::detail {

namespace {

using nlohmann::json;

// The columns of both tables (the multi-node one adds "Parameters (billion)" first).
constexpr const char* kGpus = "# GPUs";
constexpr const char* kColumns[] = {kGpus,
                                    "global batch",
                                    "micro batch",
                                    "hidden size",
                                    "attention heads",
                                    "# layers",
                                    "sequence length",
                                    "tensor parallelism",
                                    "data parallelism",
                                    "pipeline parallelism",
                                    "iteration time (ms)"};

std::optional<long long> whole(const std::string& text) { return positive_whole(text); }

std::optional<double> positive(const std::string& text) { return positive_number(text); }

// The settings every record shares, from vTrain's configs (src/config.py defaults and
// config/validation/*): what the loader states for each run.
constexpr const char* kSettings[] = {
    "vTrain (github VIA-Research/vTrain @f8dda84) configs: GPT of vocab 50257 (src/config.py), GeLU MLP 4h, "
    "learned positions, LayerNorm, tied embeddings",
    "fp16, activation checkpointing of every layer (use_checkpoint true), 1F1B without interleaving",
    "framework: Megatron-DeepSpeed (recipe 'megatron-deepspeed'; PyTorch DDP without gradient buckets, "
    "use_gradient_bucket false)",
    "A100-SXM4-80GB, 8 GPUs per node (node_size 8); inter-node 800 Gbit/s per node = 100 Gbit/s per GPU "
    "(inter_node_bandwidth 800)",
};

}  // namespace

void settle_run(PublishedRun& run, std::vector<std::string>& reasons, const Catalogs& catalogs,
                const std::string& file) {
  if (reasons.empty()) {
    auto parsed = parse_scenario(run.scenario, catalogs, file + "#" + run.row_id);
    if (!parsed) {
      reasons.push_back("scenario rejected: " + parsed.error().front().where + ": " + parsed.error().front().message);
    }
  }
  run.usable = reasons.empty();
  run.skip_reason = join(reasons, "; ");
}

bool is_vtrain_header(const CsvRow& header) {
  return has_columns(header, {"iteration time (ms)"});
}

Result<std::vector<PublishedRun>> vtrain_runs(const std::vector<CsvRow>& rows, const Catalogs& catalogs,
                                              const std::string& file) {
  return table_runs(rows, kColumns, catalogs, file,
                    [&](const CsvRow& row, const std::map<std::string, std::size_t>& col, PublishedRun& run,
                        std::vector<std::string>& bad) {
    auto cell = [&](const char* name) { return row.cells[col.at(name)]; };
    run.row_id = "V" + std::to_string(row.line);
    run.arch_type = "dense";
    run.gpu_model = "A100-SXM4-80GB";
    auto integer = [&](const char* name) {
      const auto v = whole(cell(name));
      if (!v) bad.push_back(std::string(name) + " = '" + cell(name) + "' is not a positive whole number");
      return v.value_or(1);
    };
    const long long gpus = integer(kGpus), batch = integer("global batch"), micro = integer("micro batch");
    const long long hidden = integer("hidden size"), heads = integer("attention heads"), layers = integer("# layers");
    const long long seq = integer("sequence length"), tp = integer("tensor parallelism");
    const long long dp = integer("data parallelism"), pp = integer("pipeline parallelism");
    const auto ms = positive(cell("iteration time (ms)"));
    if (!ms) bad.push_back("iteration time (ms) = '" + cell("iteration time (ms)") + "' is not a positive number");
    run.num_gpus = static_cast<int>(std::min<long long>(gpus, 1 << 30));
    run.model_name = "GPT h" + std::to_string(hidden) + " L" + std::to_string(layers) + " s" + std::to_string(seq);
    run.assumptions.assign(std::begin(kSettings), std::end(kSettings));
    if (ms) {
      run.measured_tokens_per_s_per_gpu = static_cast<double>(batch) * static_cast<double>(seq) / (*ms / 1e3) /
                                          static_cast<double>(gpus);
      run.measured_how = "global batch x sequence length / iteration time / GPUs";
    }
    run.scenario = json{
        {"name", run.row_id + " " + run.model_name},
        {"model",
         {{"name", run.model_name},
          {"layers", layers},
          {"hidden", hidden},
          {"heads", heads},
          {"kv_heads", heads},
          {"ffn_hidden", 4 * hidden},
          {"vocab", 50257},
          {"seq_len", seq},
          {"gated_ffn", false},
          {"tied_embeddings", true},
          {"rmsnorm", false},
          {"rope", false}}},
        {"training", {{"tokens", 1e9}, {"global_batch", batch}, {"precision", "fp16"}, {"framework", "megatron-deepspeed"}}},
        {"cluster",
         {{"gpu", "a100-80gb-sxm"},
          {"gpus", gpus},
          {"gpus_per_node", std::min<long long>(gpus, 8)},
          {"inter_node_gbps_per_gpu", 100.0}}},
        {"strategy",
         {{"tp", tp},
          {"pp", pp},
          {"dp", dp},
          {"cp", 1},
          {"micro_batch", micro},
          {"virtual_stages", 1},
          {"recompute", "full"},
          {"zero", 0},
          {"sequence_parallel", false}}}};
  });
}

}  // namespace capplan::data::detail
