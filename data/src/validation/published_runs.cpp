// SPDX-License-Identifier: Apache-2.0
// Published training runs (data/benchmarks/published_runs_dev.csv and its .md) -> scenarios with
// a measured throughput, for validating capplan against reality. Rows that cannot become a
// like-for-like scenario are kept, marked unusable, with the reason; every value we had to
// assume is stated in PublishedRun::assumptions.
#include "capplan/data/published_runs.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "capplan/data/scenario_io.hpp"
#include "reading/csv.hpp"
#include "validation/finetune_runs.hpp"
#include "validation/hybrid_runs.hpp"
#include "validation/vtrain_runs.hpp"
#include "reading/json_reader.hpp"
#include "validation/published_cells.hpp"


namespace capplan::data {

namespace {

using namespace published;
using detail::parse_csv;
using detail::trim;

PublishedRun read_row(const CsvRow& row, const std::map<std::string, std::size_t>& columns, const Catalogs& cat,
                      const std::string& file, Diagnostics& errors) {
  PublishedRun run;
  RowReader rr(row, columns, run);
  run.row_id = rr.cell("row_id");
  run.model_name = rr.cell("model_name");
  run.arch_type = rr.cell("arch_type");
  run.gpu_model = rr.cell("gpu_model");
  run.source_group = rr.cell("group");

  const bool moe_row = starts_with_word(run.arch_type, "moe");
  // DeepSeek rows write "MLA" (or "n/a (MLA)") where other rows give the KV head count.
  const bool mla_row = contains(rr.cell("num_kv_heads"), "mla") || starts_with_word(rr.cell("attention_notes"), "mla");
  const std::string kind = lower(rr.cell("measurement_kind"));
  if (kind.starts_with("full run") || kind.starts_with("cost rate")) {
    rr.skip("whole-run aggregate: needs the goodput model");
  }

  auto gpus = rr.integer("num_gpus");
  if (!gpus || *gpus < 1) rr.skip("GPU count not published");
  run.num_gpus = gpus.value_or(0);

  // Model dimensions.
  struct Dim {
    const char* column;
    const char* key;
  };
  constexpr Dim kDims[] = {{"num_layers", "layers"},   {"hidden_size", "hidden"},   {"num_attention_heads", "heads"},
                           {"num_kv_heads", "kv_heads"}, {"ffn_hidden_size", "ffn_hidden"}, {"vocab_size", "vocab"},
                           {"seq_len", "seq_len"}};
  json model{{"name", run.model_name}};
  std::vector<std::string> missing;
  for (const auto& d : kDims) {
    const std::string key = d.key;
    if (key == "kv_heads" && mla_row) continue;  // MLA: no separate key/value heads
    if (auto v = rr.integer(d.column); v && *v > 0) {
      model[d.key] = *v;
    } else if (!(key == "ffn_hidden" && moe_row)) {  // all-MoE rows: from the expert size below
      missing.push_back(std::string(d.column) + " = '" + rr.cell(d.column) + "'");
    }
  }
  if (!missing.empty()) rr.skip("model dimensions not published (" + detail::join(missing) + ")");
  const std::string act = rr.cell("ffn_activation");
  model["gated_ffn"] = contains(act, "swiglu") || contains(act, "geglu") || contains(act, "gated");
  const std::string name = rr.cell("model_name");
  if (contains(name, "grok-1") && !model["gated_ffn"].get<bool>()) {
    // xai-org/grok-1 model.py, MoELayer: gelu(linear(x)) * linear_v(x) -> linear_1, three matrices
    // per expert of ffn_size(6144, 8) = 32768; only the gated count reproduces the published 314B.
    model["gated_ffn"] = true;
    rr.assume("ffn_activation '" + act + "' read as gated GeLU (GeGLU): Grok-1's experts multiply gelu(linear) by "
              "linear_v (xai-org/grok-1 model.py), which is what reproduces its published 314B parameters");
  }
  if (moe_row) read_moe(rr, model);
  if (mla_row) read_mla(rr, cat, model);
  read_config_caveats(rr, model);
  if (contains(rr.cell("attention_notes"), "alternating") && contains(rr.cell("attention_notes"), "sliding window")) {
    static const std::regex kWindow(R"((\d+)-token sliding window)");
    std::smatch wm;
    const std::string notes = rr.cell("attention_notes");
    if (std::regex_search(notes, wm, kWindow)) {
      model["attention"] = "sliding_window";
      model["sliding_window"] = static_cast<int>(rr.number_in("attention_notes", wm.str(1), 1e8).value_or(1));
      model["sliding_window_every"] = 2;
      rr.assume("attention_notes '" + notes + "': every second layer attends within a " + wm.str(1) +
                "-token window, the others to the whole sequence");
    }
  }
  model["tied_embeddings"] = false;
  const std::string attention_text = rr.cell("attention_notes") + " " + rr.cell("framework");
  const auto year = publication_year(rr.cell("source"), rr.cell("source_url"));
  // The framework column names a recipe (data/frameworks.json); its defaults (kernels, loss,
  // gradient dtype, overlap, recompute, attention kernel, dropout, ...) apply through the scenario.
  const std::string framework = rr.cell("framework");
  const auto mapped = framework_recipe_for(framework, year, name);
  std::string recipe_id = mapped.value_or("megatron");
  if (recipe_id == "llm-foundry" && contains(rr.cell("source"), "llm-foundry") &&
      contains(rr.cell("source"), "benchmarking") && !contains(rr.cell("source_locator"), "large scale")) {
    // llm-foundry's benchmark README: its tables of 2023 (A100 in May, H100 in October) were run by
    // the v0.1-v0.3 benchmark scripts (recipe llm-foundry-2023: Triton FlashAttention); its "Large
    // Scale" table was added in January 2024 (5e85bd6) by sweep.py on main with flash-attn 2.
    recipe_id = "llm-foundry-2023";
  }
  const auto recipe = cat.framework_recipe(recipe_id);
  if (mapped) {
    rr.assume("framework '" + framework + "': recipe '" + recipe_id + "' (data/frameworks.json)");
  } else {
    rr.assume("framework '" + framework + "' has no recipe: 'megatron' (fused kernels, capplan's defaults)");
  }
  if (recipe && !recipe->flash_attention && year && *year <= 2022 && !contains(attention_text, "flash") &&
      !contains(attention_text, "sdpa")) {
    // The recipe does not know the attention kernel (the model code decides): FlashAttention
    // (arXiv:2205.14135) appeared in May 2022.
    model["flash_attention"] = false;
    rr.assume("published " + std::to_string(*year) +
              ", before fused (flash) attention was in use: unfused attention assumed");
  }
  // Norm and position embedding: from the attention notes where they say so, else the model
  // family (Llama-family models use RMSNorm and RoPE).
  // Families whose published configs use RMSNorm and rotary embeddings in every layer.
  constexpr std::pair<const char*, const char*> kFamilies[] = {
      {"llama", "Llama"}, {"mixtral", "Mixtral"}, {"mistral", "Mistral"}, {"qwen", "Qwen"},
      {"deepseek", "DeepSeek"}, {"gpt-oss", "gpt-oss"}, {"grok", "Grok"}};
  std::string family;
  for (const auto& [key, label] : kFamilies) {
    if (family.empty() && contains(name, key)) family = label;
  }
  model["rmsnorm"] = !family.empty() || contains(attention_text, "rmsnorm");
  model["rope"] = !family.empty() || contains(attention_text, "rope") || contains(attention_text, "rotary");
  if (family == "Llama") {
    rr.assume("Llama-family model: RMSNorm and RoPE");
  } else if (!family.empty()) {
    rr.assume(family + "-family model: RMSNorm and RoPE (its published config)");
  }
  const int seq_len = model.contains("seq_len") ? model["seq_len"].get<int>() : 0;

  // Batch and precision.
  json training{{"tokens", 1e12}};  // irrelevant for throughput; a full run is not modelled
  if (auto gb = rr.integer("global_batch_seqs"); gb && *gb > 0) {
    training["global_batch"] = *gb;
  } else if (auto gbt = rr.number("global_batch_tokens"); gbt && seq_len > 0 && std::fmod(*gbt, seq_len) == 0) {
    training["global_batch"] = static_cast<std::int64_t>(*gbt / seq_len);
    rr.assume("global batch = global_batch_tokens / seq_len = " + fmt(*gbt / seq_len) + " sequences");
  } else {
    rr.skip("global batch not published");
  }
  training["precision"] = map_precision(rr.cell("precision"), rr);
  if (training["precision"] == "fp8" && contains(lower(rr.cell("precision")), "current")) {
    // "FP8 current-scaling" (Megatron-Bridge's fp8 "cs": Transformer Engine's tensorwise
    // Float8CurrentScaling); other FP8 rows keep TE's DelayedScaling default.
    training["fp8_recipe"] = "current";
    rr.assume("precision '" + rr.cell("precision") + "': FP8 current (tensorwise) scaling, an amax pass before each cast");
  }
  training["framework"] = recipe_id;
  // NeMo AutoModel's benchmark configs with "kernel opts: TE" select Transformer Engine's fused
  // RMSNorm, attention and RoPE (examples/benchmark/configs/*_te_*.yaml: backend rms_norm: te,
  // attn: te, rope_fusion: true): a published setting over the recipe's eager kernels.
  const bool automodel_te = recipe_id == "nemo-automodel" && contains(rr.cell("other_settings"), "kernel opts: te");
  if (automodel_te) {
    training["kernels"] = "fused";
    rr.assume("framework '" + framework + "' with kernel opts TE: Transformer Engine's fused RMSNorm, RoPE and "
              "attention (NeMo AutoModel benchmark configs: rms_norm te, rope_fusion true)");
  }
  if ((recipe_id == "llm-foundry" || recipe_id == "llm-foundry-2023") && contains(rr.cell("precision"), "pure")) {
    // The row's FSDP mixed precision PURE (Composer get_mixed_precision): reductions in bf16.
    training["grad_reduce_in_fp32"] = false;
    rr.assume("precision '" + rr.cell("precision") + "': FSDP mixed precision PURE, gradients reduced in bf16");
  }

  // Hardware.
  json cluster;
  const std::size_t reasons_before = rr.reasons().size();
  auto gpu_id = map_gpu(run.gpu_model, cat, rr);
  if (!gpu_id && rr.reasons().size() == reasons_before) rr.skip("GPU '" + run.gpu_model + "' not in the catalog");
  int gpn = 8;
  if (auto v = rr.integer("gpus_per_node"); v && *v > 0) {
    gpn = *v;
  } else {
    rr.assume("gpus_per_node not published: 8 assumed");
  }
  if (gpu_id) cluster["gpu"] = *gpu_id;
  if (gpus) cluster["gpus"] = *gpus;
  cluster["gpus_per_node"] = gpn;
  cluster["inter_node_gbps_per_gpu"] = parse_network(rr.cell("inter_node_network"), gpn, gpu_id.value_or(""), rr);

  // Parallel layout.
  json strategy = json::object();
  std::vector<std::string> unpublished;
  for (const char* col : {"tp", "pp", "dp"}) {
    if (auto v = rr.integer(col); v && *v > 0) {
      strategy[col] = *v;
    } else {
      unpublished.push_back(std::string(col) + " = '" + rr.cell(col) + "'");
    }
  }
  if (!unpublished.empty()) rr.skip("parallel layout not published (" + detail::join(unpublished) + ")");
  // The CSV's sizes follow Megatron-Core: tp*pp*dp*cp = GPUs, ep within tp*dp*cp.
  if (auto cp = rr.integer("cp"); cp && *cp > 0) {
    strategy["cp"] = *cp;
  } else {
    strategy["cp"] = 1;
    rr.assume("cp = '" + rr.cell("cp") + "': 1 assumed");
  }
  if (auto ep = rr.integer("ep"); ep && *ep > 0) {
    strategy["ep"] = *ep;
  } else if (moe_row) {
    rr.assume("ep = '" + rr.cell("ep") + "': expert-parallel size left to capplan");
  }
  if (auto etp = rr.integer("etp"); etp && *etp > 0) {
    strategy["etp"] = *etp;
  } else if (moe_row && recipe && recipe->expert_tp_follows_tp.value_or(false)) {
    rr.assume("etp = '" + rr.cell("etp") + "': recipe '" + recipe_id +
              "' default (Megatron-Core: the tensor-parallel size when --expert-tensor-parallel-size is not given)");
  } else if (moe_row) {
    strategy["etp"] = 1;
    rr.assume("etp = '" + rr.cell("etp") + "': 1 assumed (experts not split by tensor parallelism)");
  }
  if (auto v = rr.integer("micro_batch_size"); v && *v > 0) {
    strategy["micro_batch"] = *v;
  } else {
    strategy["micro_batch"] = "auto";
  }
  if (auto v = rr.integer("virtual_pipeline_stages"); v && *v > 0) {
    strategy["virtual_stages"] = *v;
  } else {
    strategy["virtual_stages"] = "auto";
  }
  // An uneven pipeline stated in words ("first/last pipeline stages have one fewer transformer
  // layer", Llama 3, Dubey et al. 2024 Sec. 3.3.2: the stages holding the embedding and the output
  // layer get one layer less), mapped to Megatron-Core's --decoder-first/last-pipeline-num-layers.
  if (contains(rr.cell("other_settings"), "first/last pipeline stages have one fewer") && strategy.contains("pp") &&
      strategy["pp"].is_number_integer() && model.contains("layers")) {
    const int pp = strategy["pp"].get<int>();
    const int layers = model["layers"].get<int>();
    if (pp > 2 && (layers + 2) % pp == 0) {
      strategy["first_stage_layers"] = (layers + 2) / pp - 1;
      strategy["last_stage_layers"] = (layers + 2) / pp - 1;
      rr.assume("first and last pipeline stages " + std::to_string((layers + 2) / pp - 1) + " layers, the other " +
                std::to_string(pp - 2) + " stages " + std::to_string((layers + 2) / pp) + " (other_settings)");
    }
  }
  const std::string sp = rr.cell("sequence_parallel");
  if (starts_with_word(sp, "yes")) {
    strategy["sequence_parallel"] = true;
    rr.note_weak("sequence_parallel");
  } else if (starts_with_word(sp, "no")) {
    strategy["sequence_parallel"] = false;
  } else {
    strategy["sequence_parallel"] = "auto";
  }
  const std::string rc = rr.cell("activation_recompute");
  strategy["recompute"] = "auto";
  for (const char* word : {"none", "selective", "full"}) {
    if (starts_with_word(rc, word)) {
      strategy["recompute"] = word;
      rr.note_weak("activation_recompute");
    }
  }
  if (strategy["recompute"] == "auto" && recipe && recipe->recompute && *recipe->recompute != sim::Recompute::none) {
    // A preset that states its recompute (not an argument parser's "none", which says nothing
    // about what a large run used): the recipe's.
    strategy.erase("recompute");
    rr.assume("activation_recompute = '" + rc + "': recipe '" + recipe_id + "' (" + sim::to_string(*recipe->recompute) +
              ")");
  }
  if (auto z = map_zero(rr.cell("zero_or_fsdp"), rr)) {
    strategy["zero"] = *z;
  } else {
    strategy["zero"] = "auto";
  }
  if (model.contains("moe") && contains(rr.cell("other_settings"), "deepep")) {
    // A published DeepEP dispatch (NeMo AutoModel's *_te_deepep.yaml benchmark configs): fused
    // dispatch and combine, not Megatron-Core's all-to-all dispatcher.
    model["moe"]["dispatcher"] = "deepep";
    rr.assume("other_settings name DeepEP: tokens dispatched and combined by DeepEP's fused kernels (no separate "
              "probability all-to-all, token-count exchange or chunk sort)");
  }
  if (automodel_te && model.contains("moe") && strategy.contains("ep")) {
    // NeMo AutoModel's MoE benchmark configs route with FakeBalancedGate (fake_balanced_gate: true
    // in examples/benchmark/configs/*_te_deepep.yaml): token i goes to experts i*k .. i*k+k-1
    // (mod E). DeepEP sends a token over the network once per node that holds one of its experts,
    // so the network bytes follow the nodes these k consecutive experts span.
    const int nodes = fake_balanced_gate_nodes(model["moe"]["experts"].get<int>(), model["moe"]["top_k"].get<int>(),
                                               strategy["ep"].get<int>(), gpn);
    if (nodes > 0) {
      model["moe"]["max_nodes_per_token"] = nodes;
      std::erase_if(run.assumptions, [](const std::string& a) {
        return a.starts_with("node-limited routing") || a.starts_with("capacity_factor 1.0 (balanced routing)");
      });
      rr.assume("NeMo AutoModel benchmark routing (FakeBalancedGate, fake_balanced_gate: true): token i goes to "
                "experts i*k..i*k+k-1, which lie on " + std::to_string(nodes) +
                " node(s); DeepEP sends it over the network once per node; every expert gets exactly the same "
                "number of tokens (capacity_factor 1.0)");
    }
  }

  // Measured throughput, tokens/s per GPU.
  const bool derived_in_csv = contains(rr.cell("derived_fields"), "tokens_per_s_per_gpu");
  const auto step = rr.number("step_time_s");
  const auto tflops = rr.number("tflops_per_gpu");
  if (auto v = rr.number("tokens_per_s_per_gpu"); v && *v > 0) {
    run.measured_tokens_per_s_per_gpu = *v;
    run.measured_how = "tokens_per_s_per_gpu column" + std::string(derived_in_csv ? " (derived in the CSV)" : "");
  } else if (auto total = rr.number("tokens_per_s_total"); total && *total > 0 && gpus && *gpus > 0) {
    run.measured_tokens_per_s_per_gpu = *total / *gpus;
    run.measured_how = "tokens_per_s_total / num_gpus";
  } else if (step && *step > 0 && training.contains("global_batch") && seq_len > 0 && gpus && *gpus > 0) {
    run.measured_tokens_per_s_per_gpu =
        training["global_batch"].get<double>() * seq_len / *step / static_cast<double>(*gpus);
    run.measured_how = "global_batch_seqs x seq_len / step_time_s / num_gpus";
  } else if (tflops && *tflops > 0 && contains(rr.cell("tflops_definition"), "eq.3") && missing.empty()) {
    const double per_token = eq3_flops_per_token(model["layers"].get<double>(), model["hidden"].get<double>(),
                                                 model["seq_len"].get<double>(), model["vocab"].get<double>());
    run.measured_tokens_per_s_per_gpu = *tflops * 1e12 / per_token;
    run.measured_how =
        "tflops_per_gpu (" + fmt(*tflops) +
        ") / Narayanan et al. SC'21 Eq. 3 FLOPs per token, 96 l h^2 (1 + s/6h + V/16lh) (counts the recompute "
        "forward pass)";
    rr.assume("throughput derived from TFLOP/s through the source's Eq. 3, which assumes full recomputation");
  } else if (const auto params_b = rr.number("params_total_b");
             tflops && *tflops > 0 && params_b && *params_b > 0 && contains(rr.cell("mfu_definition"), "Chowdhery") &&
             contains(rr.cell("tflops_definition"), "model TFLOP/s") && missing.empty()) {
    const double heads = model["heads"].get<double>();
    const double head_dim = model.contains("head_dim") ? model["head_dim"].get<double>()
                                                       : model["hidden"].get<double>() / heads;
    const double per_token = chowdhery_flops_per_token(*params_b * 1e9, model["layers"].get<double>(),
                                                       heads * head_dim, model["seq_len"].get<double>());
    run.measured_tokens_per_s_per_gpu = *tflops * 1e12 / per_token;
    run.measured_how = "tflops_per_gpu (" + fmt(*tflops) +
                       ") / Chowdhery et al. 2022 App. B model FLOPs per token, 6N + 12 L H Q T (N = params_total_b)";
    rr.assume("throughput derived from model TFLOP/s through the source's MFU definition (Chowdhery et al.); N "
              "counted with the embeddings (params_total_b)");
  } else {
    rr.skip("measured throughput not derivable (no tokens/s, no step time, and TFLOP/s without a FLOP definition "
            "we can invert)");
  }

  run.scenario = json{{"name", run.row_id + " " + run.model_name},
                      {"model", model},
                      {"training", training},
                      {"cluster", cluster},
                      {"strategy", strategy}};

  // A row is usable only if capplan accepts its scenario as it stands.
  if (rr.reasons().empty()) {
    auto parsed = parse_scenario(run.scenario, cat, file + "#" + run.row_id);
    if (!parsed) {
      const auto& d = parsed.error().front();
      rr.skip("scenario rejected: " + d.where + ": " + d.message);
    }
  }
  // A throughput from tiny or huge cells (a step of 1e-300 s) is no measurement: never NaN or
  // Inf in the report.
  if (!std::isfinite(run.measured_tokens_per_s_per_gpu) || run.measured_tokens_per_s_per_gpu > 1e12) {
    rr.error("tokens_per_s_per_gpu", "the measured throughput (" + run.measured_how + ") is out of range; got " +
                                         fmt(run.measured_tokens_per_s_per_gpu) + " tokens/s per GPU");
  }
  run.usable = rr.reasons().empty();
  run.skip_reason = detail::join(rr.reasons(), "; ");
  read_whole_run(rr, run, cat, file);
  for (auto d : rr.errors()) {
    d.where = file + ":" + std::to_string(rr.line());
    errors.push_back(std::move(d));
  }
  return run;
}


}  // namespace

int fake_balanced_gate_nodes(int experts, int top_k, int ep, int gpus_per_node) {
  if (experts <= 0 || top_k <= 0 || top_k > experts || ep <= 0 || gpus_per_node <= 0) return 0;
  if (experts % ep != 0 || ep <= gpus_per_node) return 0;
  const int per_rank = experts / ep;
  int most = 0;
  // Token i starts at expert (i*k) mod E: E tokens cover every start the pattern takes.
  for (int i = 0; i < experts; ++i) {
    const long long first = (static_cast<long long>(i) * top_k) % experts;
    std::vector<int> nodes;
    for (int j = 0; j < top_k; ++j) {
      const int expert = static_cast<int>((first + j) % experts);
      const int node = (expert / per_rank) / gpus_per_node;
      if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
    }
    most = std::max(most, static_cast<int>(nodes.size()));
  }
  return most;
}

Result<std::vector<PublishedRun>> load_published_runs(const std::filesystem::path& csv, const Catalogs& catalogs) {
  const std::string file = csv.filename().string();
  auto text = detail::read_text_file(csv, file);
  if (!text) return std::unexpected(std::move(text.error()));
  return parse_published_runs(*text, file, catalogs);
}

Result<std::vector<PublishedRun>> parse_published_runs(std::string_view text, const std::string& file,
                                                       const Catalogs& catalogs) {
  auto rows = parse_csv(text, file);
  if (!rows) return std::unexpected(std::move(rows.error()));
  if (rows->empty()) return fail(file, "malformed CSV: no header line");

  const CsvRow& header = rows->front();
  if (detail::is_vtrain_header(header)) return detail::vtrain_runs(*rows, catalogs, file);
  if (detail::is_finetune_header(header)) return detail::finetune_runs(*rows, catalogs, file);
  if (detail::is_hybrid_runs_header(header)) return detail::hybrid_runs(*rows, catalogs, file);
  std::map<std::string, std::size_t> columns;
  for (std::size_t i = 0; i < header.cells.size(); ++i) columns.emplace(trim(header.cells[i]), i);
  Diagnostics diags;
  for (const char* c : kColumns) {
    if (!columns.contains(c))
      diags.push_back({Diagnostic::Severity::error, file + ":1", "missing column '" + std::string(c) + "'"});
  }
  for (std::size_t i = 1; i < rows->size(); ++i) {
    const auto& r = (*rows)[i];
    if (r.cells.size() != header.cells.size()) {
      diags.push_back({Diagnostic::Severity::error, file + ":" + std::to_string(r.line),
                       "malformed CSV: expected " + std::to_string(header.cells.size()) +
                           " fields (as the header); got " + std::to_string(r.cells.size())});
    }
  }
  if (!diags.empty()) return std::unexpected(std::move(diags));

  std::vector<PublishedRun> runs;
  for (std::size_t i = 1; i < rows->size(); ++i) runs.push_back(read_row((*rows)[i], columns, catalogs, file, diags));
  if (!diags.empty()) return std::unexpected(std::move(diags));
  return runs;
}

}  // namespace capplan::data
