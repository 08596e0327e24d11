// SPDX-License-Identifier: Apache-2.0
#include "validation/finetune_runs.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>

#include "capplan/data/scenario_io.hpp"
#include "reading/json_reader.hpp"
#include "validation/vtrain_runs.hpp"

namespace capplan::data::detail {

namespace {

using nlohmann::json;

constexpr const char* kColumns[] = {
    "row_id", "source_group", "framework", "framework_version", "method", "model", "gpu", "num_gpus", "num_nodes",
    "tp", "pp", "cp", "vp", "dp_or_fsdp", "precision", "frozen_base_weight_dtype", "lora_rank", "lora_targets", "seq_len", "micro_batch",
    "global_batch", "grad_accum", "other_opts", "tokens_per_s_per_gpu", "step_time_s", "peak_memory_gb",
    "memory_definition", "metric_definition", "verification", "notes"};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool contains(const std::string& text, const char* what) { return lower(text).find(lower(what)) != std::string::npos; }

// The leading whole number of a cell ("2048 (packed)" -> 2048); empty when there is none.
std::optional<long long> leading_int(const std::string& cell) {
  const std::string t = trim(cell);
  std::size_t i = 0;
  long long v = 0;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])) && v < (1LL << 40)) v = v * 10 + (t[i++] - '0');
  if (i == 0 || v <= 0) return std::nullopt;
  return v;
}

// The table's model names as preset ids: lower case, spaces and underscores as dashes, "llama 2"
// written "llama2", a chat/instruct suffix or a node count dropped ("Llama 3.1 8B Instruct" ->
// llama3.1-8b, "LLAMA3_70B" -> llama3-70b, "Qwen2.5 32B 2-node" -> qwen2.5-32b).
std::string preset_id(const std::string& model) {
  std::string s = lower(trim(model));
  for (const char* drop : {" instruct", " 2-node"}) {
    if (auto at = s.find(drop); at != std::string::npos) s.erase(at, std::string(drop).size());
  }
  for (char& c : s) c = (c == ' ' || c == '_') ? '-' : c;
  if (s.rfind("llama-", 0) == 0 && s.size() > 6 && std::isdigit(static_cast<unsigned char>(s[6]))) s.erase(5, 1);
  return s;
}

// The table's GPU names as catalog ids.
std::optional<std::string> gpu_id(const std::string& gpu) {
  if (contains(gpu, "GB300")) return "gb300-nvl72";
  if (contains(gpu, "GB200")) return "gb200-nvl72";
  if (contains(gpu, "H200")) return "h200-sxm-141gb";
  if (contains(gpu, "H100")) return "h100-sxm-80gb";
  if (contains(gpu, "A100")) return "a100-80gb-sxm";
  if (contains(gpu, "L40S")) return "l40s-48gb";
  return std::nullopt;
}

// The table's framework names (and NeMo's container release) as recipe ids (data/frameworks.json):
// NeMo Framework releases 24.0x ran NeMo 1's YAML configs (recipe "nemo-1"), later ones NeMo 2.
std::string recipe_id(const std::string& framework, const std::string& version) {
  if (contains(framework, "Qwen finetune")) return "qwen-finetune";
  if (contains(framework, "Megatron-Bridge")) return "megatron-bridge-perf";
  if (contains(framework, "Automodel")) return "nemo-automodel";
  if (contains(framework, "NeMo")) {
    for (const char* release : {"24.01", "24.03", "24.04", "24.05", "24.07"}) {
      if (contains(framework, release) || contains(version, release)) return "nemo-1";
    }
    return "nemo-2-perf";
  }
  if (contains(framework, "torchtune")) return "torchtune";
  return "hf-trainer";
}

}  // namespace

bool is_finetune_header(const CsvRow& header) {
  return has_columns(header, {"lora_rank", "frozen_base_weight_dtype"});
}

Result<std::vector<PublishedRun>> finetune_runs(const std::vector<CsvRow>& rows, const Catalogs& catalogs,
                                                const std::string& file) {
  // Tables whose rows each add an option to the row before ("each row adds to the previous one"):
  // the options so far, per source group.
  std::map<std::string, std::string> cumulative_opts;
  return table_runs(rows, kColumns, catalogs, file,
                    [&](const CsvRow& row, const std::map<std::string, std::size_t>& col, PublishedRun& run,
                        std::vector<std::string>& bad) {
    auto cell = [&](const char* name) { return trim(row.cells[col.at(name)]); };
    std::string opts = cell("other_opts");
    const bool cumulative = contains(cell("notes"), "each row adds to the previous one");
    if (cumulative) {
      std::string& so_far = cumulative_opts[cell("source_group")];
      if (!contains(cell("method"), "LoRA")) so_far += " " + opts;
      opts = so_far;
    }
    run.row_id = cell("row_id");
    run.source_group = cell("source_group");
    run.model_name = cell("model");
    run.gpu_model = cell("gpu");
    run.arch_type = "dense";
    const std::string method_text = cell("method");
    const std::string method = contains(method_text, "Q-LoRA") || contains(method_text, "QLoRA") ? "qlora"
                               : contains(method_text, "LoRA")                                    ? "lora"
                                                                                                  : "full";
    const auto gpus = leading_int(cell("num_gpus"));
    if (!gpus) bad.push_back("num_gpus '" + cell("num_gpus") + "' is not a whole number");
    run.num_gpus = static_cast<int>(std::min<long long>(gpus.value_or(1), 1 << 20));
    const std::string preset = preset_id(run.model_name);
    if (catalogs.find_model(preset) == nullptr) bad.push_back("model '" + run.model_name + "' has no preset (" + preset + ")");
    const auto gpu = gpu_id(run.gpu_model);
    if (!gpu) bad.push_back("GPU '" + run.gpu_model + "' is not in the catalog");
    // Rows their own verification calls unverified (a fork's copy whose cells look shifted) are left
    // out, with the reason.
    if (contains(cell("verification"), "UNVERIFIED")) {
      bad.push_back("unverified against its source (" + cell("verification") + ")");
    }
    if (contains(cell("memory_definition"), "budget") || contains(cell("memory_definition"), "claim")) {
      bad.push_back("a memory budget or claim, not a measurement (" + cell("memory_definition") + ")");
    }
    const auto seq = leading_int(cell("seq_len"));
    if (!seq) bad.push_back("seq_len '" + cell("seq_len") + "' is not a length");
    const long long mb = leading_int(cell("micro_batch")).value_or(1);
    const auto ga = leading_int(cell("grad_accum"));

    // Throughput: the row's tokens/s per GPU, or its step time under its metric definition (the
    // Qwen table: s/iter of micro-batch x grad-accum sequences per GPU).
    if (const auto tps = positive_number(cell("tokens_per_s_per_gpu"))) {
      run.measured_tokens_per_s_per_gpu = *tps;
      run.measured_how = "tokens/s per GPU as published";
    } else if (const auto step = positive_number(cell("step_time_s")); step && seq) {
      const double sequences = static_cast<double>(mb) * static_cast<double>(ga.value_or(1));
      run.measured_tokens_per_s_per_gpu = sequences * static_cast<double>(*seq) / *step;
      run.measured_how = "micro_batch x grad_accum x seq_len / step time (" + cell("metric_definition") + ")";
    }
    // Options that change memory in ways capplan does not model (chunked loss, activations offloaded to
    // the host, the optimizer step fused into backward): the row's throughput is compared, its memory not.
    const bool unmodelled_memory = contains(opts, "Chunked Cross Entropy") || contains(opts, "Offloading") ||
                                   contains(opts, "optimizer step into backward");
    if (unmodelled_memory) run.assumptions.push_back("memory not compared: " + trim(opts) + " (not modelled)");
    const bool recompute = contains(opts, "Activation Checkpointing");
    if (const auto mem = positive_number(cell("peak_memory_gb"));
        mem && !unmodelled_memory && !contains(cell("memory_definition"), "budget")) {
      // Summed over the GPUs where the table says so (Qwen's multi-GPU rows).
      run.measured_peak_memory_gib = contains(cell("memory_definition"), "summed") ? *mem / run.num_gpus : *mem;
      run.memory_definition = cell("memory_definition");
      if (!contains(run.memory_definition, "GiB")) run.assumptions.push_back("memory in GB read as GiB");
    }
    if (!(run.measured_tokens_per_s_per_gpu > 0) && !(run.measured_peak_memory_gib > 0)) {
      bad.push_back("no measured throughput or peak memory");
    }

    const std::string precision_text = cell("precision");
    const bool fp8 = contains(precision_text, "FP8");
    if (contains(precision_text, "MXFP8")) run.assumptions.push_back("MXFP8 priced as FP8");
    if (!fp8 && !contains(precision_text, "bf16")) run.assumptions.push_back("precision '" + precision_text + "' taken as bf16");
    json workload = {{"kind", "finetune"}, {"method", method}, {"dataset", {{"tokens", 1e9}, {"packing", true}}}};
    if (const auto rank = leading_int(cell("lora_rank")); rank && method != "full") workload["lora"]["rank"] = *rank;
    if (method != "full" && contains(cell("lora_targets"), "attention")) {
      workload["lora"]["targets"] = json::array({"q", "k", "v", "o"});
    }
    if (contains(method_text, "(emb)")) workload["lora"]["train_embeddings"] = true;
    if (method == "qlora" && contains(cell("frozen_base_weight_dtype"), "int4")) workload["base_weights"] = "int4";

    // Layout: what the row gives; the rest is the estimate's own choice.
    json strategy = json::object();
    for (const char* key : {"tp", "pp", "cp"}) {
      if (const auto v = leading_int(cell(key))) strategy[key] = *v;
    }
    if (const auto vp = leading_int(cell("vp"))) strategy["virtual_stages"] = *vp;
    if (leading_int(cell("micro_batch"))) strategy["micro_batch"] = mb;
    // A table whose rows each add one technique to the row before states every row's techniques:
    // activation checkpointing is off until the row that adds it.
    if (recompute) {
      strategy["recompute"] = "full";
    } else if (cumulative) {
      strategy["recompute"] = "none";
    }
    const std::string dp_text = cell("dp_or_fsdp");
    if (contains(dp_text, "FSDP") || contains(method_text, "Zero3")) strategy["zero"] = 3;
    if (const auto dp = leading_int(dp_text)) strategy["dp"] = *dp;
    // FSDP's CPU offload (torchtune's fsdp_cpu_offload): parameter shards, gradients and the
    // optimizer on the host.
    if (contains(cell("notes"), "CPU offload") || contains(opts, "CPU offload")) {
      strategy["zero"] = 3;
      strategy["offload_params"] = true;
    }
    const std::string recipe = recipe_id(cell("framework"), cell("framework_version"));
    const bool data_parallel_only = recipe == "hf-trainer" || recipe == "qwen-finetune" || recipe == "torchtune";
    if (data_parallel_only && !strategy.contains("dp") && !strategy.contains("tp") && !strategy.contains("pp")) {
      // Data-parallel scripts (HF Trainer, DeepSpeed, torchtune): every GPU a replica.
      strategy["tp"] = 1;
      strategy["pp"] = 1;
      strategy["dp"] = run.num_gpus;
    }
    long long global_batch = 0;
    if (const auto gb = leading_int(cell("global_batch"))) {
      global_batch = *gb;
    } else {
      const long long dp = strategy.contains("dp") ? strategy["dp"].get<long long>() : run.num_gpus;
      global_batch = mb * ga.value_or(1) * dp;
    }
    json cluster = {{"gpu", gpu.value_or("?")}, {"gpus", run.num_gpus}};
    // The nodes the row ran on: GPUs per node where they divide evenly (4-GPU L40S servers).
    if (const auto nodes = leading_int(cell("num_nodes")); nodes && *nodes > 1 && run.num_gpus % *nodes == 0) {
      cluster["gpus_per_node"] = run.num_gpus / *nodes;
    }
    run.scenario = json{{"name", run.row_id + " " + run.model_name},
                        {"workload", workload},
                        {"model", {{"preset", preset}, {"seq_len", seq.value_or(1)}}},
                        {"training",
                         {{"global_batch", std::max<long long>(1, global_batch)},
                          {"precision", fp8 ? "fp8" : "bf16"},
                          {"framework", recipe}}},
                        {"cluster", cluster},
                        {"strategy", strategy}};
  });
}

}  // namespace capplan::data::detail
