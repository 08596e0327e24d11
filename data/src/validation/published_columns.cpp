// SPDX-License-Identifier: Apache-2.0
// The published-runs table's model columns beyond the dense transformer (MoE, MLA, the
// configuration's caveats) and its whole-run rows (GPU-hours over a run's tokens).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "capplan/data/scenario_io.hpp"
#include "validation/published_cells.hpp"

namespace capplan::data::published {

// MoE columns -> model.moe. Routing imbalance is not a CSV column: balanced routing
// (capacity_factor 1.0) is assumed and said so, with the reason when the benchmark forces it.
void read_moe(RowReader& rr, json& model) {
  struct Col {
    const char* column;
    const char* key;
    int lo;
  };
  constexpr Col kCols[] = {{"moe_num_experts", "experts", 1},
                           {"moe_top_k", "top_k", 1},
                           {"moe_expert_ffn_size", "expert_ffn_hidden", 1},
                           {"moe_shared_experts", "shared_experts", 0},
                           {"moe_dense_layers", "dense_layers", 0}};
  json moe = json::object();
  std::vector<std::string> missing;
  for (const auto& c : kCols) {
    if (auto v = rr.integer(c.column); v && *v >= c.lo) {
      moe[c.key] = *v;
    } else {
      missing.push_back(std::string(c.column) + " = '" + rr.cell(c.column) + "'");
    }
  }
  if (!missing.empty()) {
    rr.skip("MoE dimensions not published (" + detail::join(missing) + ")");
    return;
  }
  moe["capacity_factor"] = 1.0;
  const std::string name = rr.cell("model_name");
  if (contains(name, "token-drop")) {
    // Megatron-Bridge's token drop (scripts/performance/utils/overrides.py#L455 use_tokendrop ->
    // src/megatron/bridge/training/utils/moe_token_drop.py#L25-L28 apply_moe_token_drop: capacity
    // factor 1.0, moe_pad_expert_input_to_capacity True, @067f987): every expert runs exactly its
    // capacity.
    moe["pad_to_capacity"] = true;
    rr.assume("capacity_factor 1.0, padded to capacity: token-drop benchmark routing (Megatron-Bridge "
              "apply_moe_token_drop: factor 1.0, moe_pad_expert_input_to_capacity) runs every expert at capacity");
  } else if (contains(name, "force-balanced")) {
    // Megatron-Bridge without token drop (scripts/performance/utils/overrides.py#L458-L462
    // @067f987): dropless, moe_router_force_load_balancing = True (random router logits).
    moe["random_routing"] = true;
    rr.assume("capacity_factor 1.0: force-balanced benchmark routing: balanced on average, each token's experts "
              "drawn at random (Megatron-Core moe_router_force_load_balancing); dropless (token counts exchanged "
              "and copied to the host every MoE layer)");
  } else {
    rr.assume("capacity_factor 1.0 (balanced routing): the run's real routing imbalance is not published");
  }
  if (!model.contains("ffn_hidden")) {
    if (moe["dense_layers"].get<int>() == 0) {
      model["ffn_hidden"] = moe["expert_ffn_hidden"];
      rr.assume("ffn_hidden_size = '" + rr.cell("ffn_hidden_size") +
                "': set to the expert size (not used: every layer is MoE)");
    } else {
      rr.skip("ffn_hidden_size of the dense layers not published ('" + rr.cell("ffn_hidden_size") + "')");
    }
  }
  model["moe"] = std::move(moe);
}

// MLA rows list no latent dimensions: they come from the model's preset, when capplan has one
// of the same shape, and the row says so.
void read_mla(RowReader& rr, const Catalogs& cat, json& model) {
  const std::string name = rr.cell("model_name");
  const char* preset_id = nullptr;
  if (contains(name, "deepseek-v3") || contains(name, "deepseek v3")) preset_id = "deepseek-v3";
  if (contains(name, "deepseek-v2") || contains(name, "deepseek v2")) preset_id = "deepseek-v2";
  const ModelEntry* preset = preset_id != nullptr ? cat.find_model(preset_id) : nullptr;
  if (preset == nullptr || preset->spec.attention != sim::Attention::mla) {
    rr.skip("MLA latent dimensions not published and no MLA preset of this model in the catalog");
    return;
  }
  const auto& s = preset->spec;
  const bool same_shape = model.value("layers", 0) == s.layers && model.value("hidden", 0) == s.hidden &&
                          model.value("heads", 0) == s.heads;
  if (!same_shape) {
    rr.skip("MLA latent dimensions not published, and the row's shape differs from the " + std::string(preset_id) +
            " preset");
    return;
  }
  const auto& m = s.mla;
  model["attention"] = "mla";
  model["mla"] = {{"q_lora_rank", m.q_lora_rank},
                  {"kv_lora_rank", m.kv_lora_rank},
                  {"qk_nope_head_dim", m.qk_nope_head_dim},
                  {"qk_rope_head_dim", m.qk_rope_head_dim},
                  {"v_head_dim", m.v_head_dim}};
  if (s.moe.max_nodes_per_token > 0 && model.contains("moe")) {
    model["moe"]["max_nodes_per_token"] = s.moe.max_nodes_per_token;
    rr.assume("node-limited routing of the " + std::string(preset_id) + " preset (at most " +
              std::to_string(s.moe.max_nodes_per_token) + " nodes per token)");
  }
  rr.assume("num_kv_heads = '" + rr.cell("num_kv_heads") + "': multi-head latent attention with the " + preset_id +
            " preset's latent dimensions (q_lora_rank " + std::to_string(m.q_lora_rank) + ", kv_lora_rank " +
            std::to_string(m.kv_lora_rank) + ", qk_nope/rope/v head dims " + std::to_string(m.qk_nope_head_dim) + "/" +
            std::to_string(m.qk_rope_head_dim) + "/" + std::to_string(m.v_head_dim) + "); the row does not list them");
}

// Model details the CSV has no column for (attention head size when it is not hidden/heads,
// gpt-oss's clamped activation and expert biases): set from the model's config,
// stated as an assumption.
void read_config_caveats(RowReader& rr, json& model) {
  const std::string name = rr.cell("model_name");
  int head_dim = 0;
  const char* source = "";
  if (contains(name, "qwen3")) {
    head_dim = 128;
    source = "Qwen/Qwen3 config.json head_dim";
  } else if (contains(name, "gpt-oss")) {
    head_dim = 64;
    source = "openai/gpt-oss config.json head_dim";
  }
  if (contains(name, "gpt-oss") && model.contains("moe")) {
    // gpt-oss's clamped SwiGLU (swiglu_limit 7.0) and expert biases, as the gpt-oss-120b preset.
    model["moe"]["activation_clamp"] = 7.0;
    model["moe"]["expert_bias"] = true;
    rr.assume("gpt-oss experts: SwiGLU clamped at 7 (config.json swiglu_limit) and biased linears, run by "
              "Megatron-Core as eager clamp + cat and a per-expert bias add");
  }
  if (head_dim == 0 || !model.contains("hidden") || !model.contains("heads")) return;
  const int derived = model["hidden"].get<int>() / model["heads"].get<int>();
  if (derived == head_dim) return;
  model["head_dim"] = head_dim;
  rr.assume("attention head size " + std::to_string(head_dim) + " (" + source + "), not hidden/heads = " +
            std::to_string(derived) + "; the row does not list it");
}

// A cell's leading number with an optional SI suffix ("30.84M (model card)" -> 30.84e6,
// "15.6e12 (whole run)" -> 15.6e12); nullopt for "unknown" and text.
std::optional<double> leading_si(const std::string& cell) {
  std::string s = strip_notes(cell);
  if (auto sp = s.find_first_of(" ,;'"); sp != std::string::npos) s = s.substr(0, sp);
  auto v = parse_si(s);
  if (!v || !std::isfinite(*v) || *v <= 0) return std::nullopt;
  return v;
}

// GPU count used when a whole-run row does not publish it: LLaMA-1 65B's 2,048 A100 (Touvron et
// al. 2023, Sec. 2.4), the only cluster size the Llama 1/2 papers state.
constexpr int kAssumedWholeRunGpus = 2048;

// Whole-run rows: total GPU-hours and the run's tokens. The step scenario (with its own
// assumptions) gets the tokens; an unpublished GPU count is assumed and an unpublished layout is
// left to capplan. Reasons that block the per-step benchmark but not the whole run are ignored.
void read_whole_run(RowReader& rr, PublishedRun& run, const Catalogs& cat, const std::string& file) {
  const auto gpu_hours = leading_si(rr.cell("total_gpu_hours"));
  const auto tokens = leading_si(rr.cell("training_tokens"));
  if (!gpu_hours || !tokens) return;
  run.whole_run = true;
  run.measured_gpu_hours = *gpu_hours;
  std::vector<std::string> reasons;
  for (const auto& reason : rr.reasons()) {
    const bool not_blocking = reason.starts_with("whole-run aggregate") || reason.starts_with("GPU count not") ||
                              reason.starts_with("parallel layout not") || reason.starts_with("measured throughput") ||
                              reason.starts_with("scenario rejected");
    // A batch in tokens that is not whole sequences: the scenario's own rounding (with its warning).
    const auto batch_tokens = leading_si(rr.cell("global_batch_tokens"));
    if (reason == "global batch not published" && batch_tokens) continue;
    if (!not_blocking) reasons.push_back(reason);
  }
  json scenario = run.scenario;
  scenario["name"] = run.row_id + " " + run.model_name + " (whole run)";
  scenario["training"]["tokens"] = *tokens;
  if (!scenario["training"].contains("global_batch")) {
    if (const auto batch_tokens = leading_si(rr.cell("global_batch_tokens"))) {
      scenario["training"]["global_batch_tokens"] = *batch_tokens;
      run.whole_run_assumptions.push_back("global_batch_tokens = " + fmt(*batch_tokens) +
                                          " is not whole sequences: rounded as capplan estimate does");
    }
  }
  if (!scenario["cluster"].contains("gpus")) {
    scenario["cluster"]["gpus"] = kAssumedWholeRunGpus;
    run.whole_run_assumptions.push_back("num_gpus = '" + rr.cell("num_gpus") + "': " +
                                        std::to_string(kAssumedWholeRunGpus) +
                                        " assumed (LLaMA-1 65B's cluster, Touvron et al. 2023 Sec. 2.4)");
  }
  for (const char* col : {"tp", "pp", "dp"}) {
    if (!scenario["strategy"].contains(col)) {
      run.whole_run_assumptions.push_back("parallel layout not published: chosen by capplan");
      break;
    }
  }
  if (reasons.empty()) {
    auto parsed = parse_scenario(scenario, cat, file + "#" + run.row_id);
    if (!parsed) {
      const auto& d = parsed.error().front();
      reasons.push_back("scenario rejected: " + d.where + ": " + d.message);
    }
  }
  run.whole_run_scenario = std::move(scenario);
  run.whole_run_usable = reasons.empty();
  run.whole_run_skip_reason = detail::join(reasons, "; ");
}


}  // namespace capplan::data::published
