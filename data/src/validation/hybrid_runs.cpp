// SPDX-License-Identifier: Apache-2.0
#include "validation/hybrid_runs.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>

#include "capplan/data/scenario_io.hpp"
#include "reading/json_reader.hpp"
#include "validation/vtrain_runs.hpp"

namespace capplan::data::detail {

namespace {

using nlohmann::json;

constexpr const char* kColumns[] = {"row_id",       "source_group", "framework", "model",      "arch_summary",
                                    "gpu",          "num_gpus",     "precision", "seq_len",    "global_batch",
                                    "micro_batch",  "tp",           "pp",        "cp",         "vp",
                                    "ep",           "tokens_per_s_per_gpu",      "step_time_s", "metric_definition",
                                    "verification"};

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
bool has(const std::string& text, std::string_view needle) { return lower(text).find(needle) != std::string::npos; }

std::optional<long long> whole(const std::string& text) { return positive_whole(text, 1LL << 30); }

std::optional<double> positive(const std::string& text) { return positive_number(text, 1e12); }

// The catalog preset a model name refers to, or why none does. Nemotron 3 Super and 3.5
// Lightning stay unknown here: Super's LatentMoE (routed experts on a 1024-wide latent between
// fc1/fc2_latent_proj, Megatron-Core moe_layer.py @d98e8a6) and multi-token prediction
// (mtp_num_layers 2 in Megatron-Bridge's recipe) are not in the op list and its layer order is
// not in the stored sources; Lightning's architecture is not verified (the row says so).
struct ModelMatch {
  const char* preset = nullptr;
  const char* why_not = nullptr;
};
ModelMatch match_model(const std::string& name) {
  if (has(name, "lightning")) return {nullptr, "Nemotron 3.5 Lightning: architecture not verified in the stored sources"};
  if (has(name, "super")) {
    return {nullptr,
            "Nemotron 3 Super: LatentMoE (experts on a latent of moe_latent_size between fc1/fc2_latent_proj) and "
            "multi-token prediction are not modelled, and its layer order is not in the stored sources"};
  }
  if (has(name, "nemotron_3_nano") || has(name, "nemotron 3 nano") || has(name, "nemotron-3-nano")) {
    return {"nemotron-3-nano-30b-a3b", nullptr};
  }
  if (has(name, "nemotron-h")) {
    if (has(name, "56b")) return {"nemotron-h-56b", nullptr};
    if (has(name, "47b")) return {"nemotron-h-47b", nullptr};
    if (has(name, "8b")) return {"nemotron-h-8b", nullptr};
  }
  return {nullptr, "no catalog preset of this model"};
}

// The catalog GPU of a system name ("DGX-GB200", "GB200", "DGX-B300"), Grace-Blackwell first.
struct GpuMatch {
  std::string id;  // empty: none
  bool nvl72 = false;
};
GpuMatch match_gpu(const std::string& text, const Catalogs& cat) {
  struct Name {
    const char* needle;
    const char* id;
    bool nvl72;
  };
  constexpr Name kNames[] = {{"gb300", "gb300-nvl72", true}, {"gb200", "gb200-nvl72", true}, {"b300", "b300-hgx", false},
                             {"b200", "b200-hgx", false},    {"h100", "h100-sxm-80gb", false}};
  for (const auto& n : kNames) {
    if (!has(text, n.needle)) continue;
    return {cat.find_gpu(n.id) != nullptr ? n.id : "", n.nvl72};
  }
  return {};
}

}  // namespace

bool is_hybrid_runs_header(const CsvRow& header) {
  return has_columns(header, {"source_group", "arch_summary"});
}

Result<std::vector<PublishedRun>> hybrid_runs(const std::vector<CsvRow>& rows, const Catalogs& catalogs,
                                              const std::string& file) {
  return table_runs(rows, kColumns, catalogs, file,
                    [&](const CsvRow& row, const std::map<std::string, std::size_t>& col, PublishedRun& run,
                        std::vector<std::string>& bad) {
    auto cell = [&](const char* name) { return trim(row.cells[col.at(name)]); };
    run.row_id = cell("row_id");
    run.model_name = cell("model");
    run.gpu_model = cell("gpu");
    auto assume = [&](std::string a) { run.assumptions.push_back(std::move(a)); };
    auto integer = [&](const char* name) {
      const auto v = whole(cell(name));
      if (!v) bad.push_back(std::string(name) + " = '" + cell(name) + "' is not a positive whole number");
      return v.value_or(1);
    };
    // vp / cp: "n/a", "None" or empty mean no interleaving / no context parallelism.
    auto optional_one = [&](const char* name) {
      const std::string c = lower(cell(name));
      if (c.empty() || c == "n/a" || c == "none") return 1LL;
      return integer(name);
    };
    const long long gpus = integer("num_gpus"), seq = integer("seq_len"), batch = integer("global_batch");
    const long long micro = integer("micro_batch"), tp = integer("tp"), pp = integer("pp");
    const long long cp = optional_one("cp"), vp = optional_one("vp");
    run.num_gpus = static_cast<int>(gpus);

    const ModelMatch model = match_model(run.model_name);
    const ModelEntry* preset = model.preset != nullptr ? catalogs.find_model(model.preset) : nullptr;
    if (preset == nullptr) bad.push_back(model.why_not != nullptr ? model.why_not : "model preset missing from the catalog");
    const bool moe = preset != nullptr && preset->spec.is_moe();
    run.arch_type = moe ? "hybrid-moe" : "hybrid";

    const GpuMatch gpu = match_gpu(run.gpu_model, catalogs);
    if (gpu.id.empty()) bad.push_back("GPU '" + run.gpu_model + "' not in the catalog");

    // Precision: MXFP8 (block-scaled FP8, Transformer Engine MXFP8BlockScaling) runs the FP8
    // tensor cores; its scales come from the cast kernel itself (the mxfp8 recipe). NVFP4 is not
    // modelled.
    const std::string prec = lower(cell("precision"));
    json training{{"tokens", 1e12}, {"global_batch", batch}, {"framework", "megatron-bridge-perf"}};
    if (has(prec, "fp4")) {
      bad.push_back("precision '" + cell("precision") + "': FP4 training is not modelled");
    } else if (has(prec, "mxfp8")) {
      training["precision"] = "fp8";
      training["fp8_recipe"] = "mxfp8";
      assume("precision MXFP8: FP8 tensor cores, the mxfp8 recipe (block scales computed in the cast kernel, no "
             "amax pass; one cast launch per expert)");
    } else if (has(prec, "fp8")) {
      // Megatron-Bridge's perf recipes run FP8 as current scaling (_perf_precision("fp8_cs"),
      // perf_recipes/_common.py @067f987).
      training["precision"] = "fp8";
      training["fp8_recipe"] = "current";
      assume("precision '" + cell("precision") + "': FP8 current (tensorwise) scaling, Megatron-Bridge's fp8_cs");
    } else {
      training["precision"] = "bf16";
    }
    assume("framework '" + cell("framework") + "': recipe 'megatron-bridge-perf' (data/frameworks.json)");

    // The NVLink domain: an NVL72 rack joins 72 GPUs; a run of more GPUs than one rack is taken
    // as racks of 64 (Megatron-Bridge's GB300 recipes count 16 nodes x 4 GPUs = 64 per NVLink
    // domain, perf_recipes/nemotronh/common.py @067f987). HGX / DGX systems: 8 GPUs a node.
    const long long domain = gpu.nvl72 ? (gpus <= 72 ? gpus : 64) : std::min<long long>(gpus, 8);
    if (gpu.nvl72 && gpus > 72) assume("NVLink domains of 64 GPUs (the run spans more than one NVL72 rack)");
    // Scale-out per GPU: 400 Gbit/s (one ConnectX-7 NDR port per GPU on DGX H100 / B200 and per
    // GB200 compute-tray GPU), 800 Gbit/s on Blackwell Ultra (ConnectX-8) systems.
    const bool ultra = has(run.gpu_model, "b300");
    const double gbps = ultra ? 800.0 : 400.0;
    assume("inter-node network " + fmt(gbps) + " Gbit/s per GPU (" + (ultra ? "ConnectX-8" : "ConnectX-7") +
           "); not in the row");
    json cluster{{"gpus", gpus}, {"gpus_per_node", domain}, {"inter_node_gbps_per_gpu", gbps}};
    if (!gpu.id.empty()) cluster["gpu"] = gpu.id;

    // Layout: the row's; dp the rest of the GPUs. Megatron-Bridge's Nemotron recipes: experts not
    // split by TP (expert_tensor_parallel_size 1), sequence parallelism with TP, the distributed
    // optimizer; the Nemotron 3 Nano perf configs switch recomputation off except on H100, where
    // the containers of the rows (NeMo 26.02.01 and 26.04.01: Megatron-Bridge v0.3.1 and v0.4.1)
    // recompute modules selectively: FP8 ["moe", "layernorm", "core_attn", "moe_act"], BF16
    // ["moe", "layernorm"] (scripts/performance/configs/nemotronh/
    // nemotron_3_nano_workload_base_configs.py @v0.3.1, nemotron_3_workload_base_configs.py
    // @v0.4.1, NEMOTRON_3_NANO_PRETRAIN_CONFIG_H100_*_V1); the Nemotron-H 56B recipe recomputes
    // nothing (recompute_granularity None).
    const long long model_ranks = tp * pp * cp;
    const long long dp = model_ranks > 0 && gpus % model_ranks == 0 ? gpus / model_ranks : 0;
    if (dp == 0) bad.push_back("tp x pp x cp (" + std::to_string(model_ranks) + ") does not divide the GPUs");
    json strategy{{"tp", tp},         {"pp", pp},           {"cp", cp},        {"dp", std::max(1LL, dp)},
                  {"micro_batch", micro}, {"virtual_stages", vp}, {"zero", 1},
                  {"sequence_parallel", tp > 1}, {"recompute", "none"}};
    const bool h100 = gpu.id == "h100-sxm-80gb";
    if (h100 && moe) {
      strategy["recompute"] = "selective";
      strategy["recompute_norms"] = true;
      strategy["recompute_moe"] = true;
      const bool fp8 = training.value("precision", "") == "fp8";
      if (fp8) strategy["recompute_moe_act"] = true;
      assume(std::string("recompute: selective, modules moe, layernorm") + (fp8 ? ", core_attn, moe_act" : "") +
             " (Megatron-Bridge's H100 Nemotron 3 Nano perf configs of v0.3.1 and v0.4.1)");
    } else {
      assume("recompute: none (Megatron-Bridge's Nemotron perf recipes)");
    }
    assume("distributed optimizer (ZeRO-1) and sequence parallelism with TP, as Megatron-Bridge's recipes");
    json model_j{{"preset", model.preset != nullptr ? model.preset : ""}, {"seq_len", seq}};
    if (moe) {
      if (auto ep = whole(cell("ep"))) {
        strategy["ep"] = *ep;
      } else {
        bad.push_back("ep = '" + cell("ep") + "' not published for an MoE model");
      }
      strategy["etp"] = 1;
      // Force-balanced benchmark routing (moe_router_force_load_balancing, the row's metric note)
      // through Megatron-Core's flex dispatcher with the HybridEP backend: fused dispatch and
      // combine kernels, priced as DeepEP's.
      model_j["moe"] = {{"capacity_factor", 1.0}, {"random_routing", true}, {"dispatcher", "deepep"}};
      assume("MoE: force-balanced random routing (moe_router_force_load_balancing), dropless; the flex dispatcher's "
             "HybridEP backend priced as DeepEP's fused dispatch and combine");
    }
    if (has(cell("verification"), "unverified")) assume("the row's own verification: " + cell("verification"));

    if (const auto v = positive(cell("tokens_per_s_per_gpu"))) {
      run.measured_tokens_per_s_per_gpu = *v;
      run.measured_how = "tokens_per_s_per_gpu column";
    } else if (const auto st = positive(cell("step_time_s"))) {
      run.measured_tokens_per_s_per_gpu = static_cast<double>(batch) * static_cast<double>(seq) / *st /
                                          static_cast<double>(gpus);
      run.measured_how = "global_batch x seq_len / step_time_s / num_gpus";
    } else {
      bad.push_back("measured throughput not published (tokens_per_s_per_gpu, step_time_s)");
    }
    run.scenario = json{{"name", run.row_id + " " + run.model_name},
                        {"model", model_j},
                        {"training", training},
                        {"cluster", cluster},
                        {"strategy", strategy}};
  });
}

}  // namespace capplan::data::detail
