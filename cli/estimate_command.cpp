// SPDX-License-Identifier: Apache-2.0
// `capplan estimate [SCENARIO_FILE|-] [flags]`: one scenario in, one estimate out.
//
// Flags never bypass validation: they become a JSON patch over the scenario file (or the built-in
// example), and the patched document goes through data::parse_scenario like any file would.
#include <algorithm>
#include <array>
#include <filesystem>
#include <iterator>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "capplan/data/cost_model.hpp"
#include "capplan/data/error_bands.hpp"
#include "capplan/data/profile_io.hpp"
#include "capplan/data/scenario_io.hpp"
#include "capplan/sim/calibrated_cost.hpp"
#include "capplan/sim/datasheet_cost.hpp"
#include "capplan/sim/estimate.hpp"
#include "capplan/sim/step_model.hpp"
#include "capplan/sim/uncertainty.hpp"
#include "commands.hpp"
#include "json_pointer_set.hpp"

namespace capplan::cli {
namespace {

using nlohmann::json;

constexpr std::string_view kWhere = "scenario";

enum class FlagValue {
  text,            // always a JSON string (ids, enum names)
  number_or_text,  // a JSON number or bool when the text reads as one, else a string ("auto", "2T")
};

// One row per scenario field that has a flag (CONTRACT.md: "every scenario field also has a flag").
struct ScenarioFlag {
  const char* flag;
  const char* pointer;  // where the value goes in the scenario document
  FlagValue value;
  const char* type;  // shown in --help
  const char* help;
};

constexpr ScenarioFlag kScenarioFlags[] = {
    {"--model", "/model/preset", FlagValue::text, "ID",
     "Model preset id (capplan catalog models); replaces the file's model"},
    {"--layers", "/model/layers", FlagValue::number_or_text, "INT", "Transformer layers"},
    {"--hidden", "/model/hidden", FlagValue::number_or_text, "INT", "Hidden size"},
    {"--heads", "/model/heads", FlagValue::number_or_text, "INT", "Attention heads"},
    {"--kv-heads", "/model/kv_heads", FlagValue::number_or_text, "INT", "Key/value heads (GQA)"},
    {"--ffn-hidden", "/model/ffn_hidden", FlagValue::number_or_text, "INT", "FFN hidden size"},
    {"--vocab", "/model/vocab", FlagValue::number_or_text, "INT", "Vocabulary size"},
    {"--seq-len", "/model/seq_len", FlagValue::number_or_text, "INT", "Sequence length in tokens"},
    {"--gated-ffn", "/model/gated_ffn", FlagValue::number_or_text, "BOOL", "SwiGLU-style gated FFN"},
    {"--tied-embeddings", "/model/tied_embeddings", FlagValue::number_or_text, "BOOL",
     "Output layer shares the input embedding"},
    {"--dropout", "/model/dropout", FlagValue::number_or_text, "BOOL", "Dropout masks kept for backward"},
    {"--flash-attention", "/model/flash_attention", FlagValue::number_or_text, "BOOL",
     "Fused (flash) attention (default true)"},
    {"--rmsnorm", "/model/rmsnorm", FlagValue::number_or_text, "BOOL", "RMSNorm instead of LayerNorm"},
    {"--rope", "/model/rope", FlagValue::number_or_text, "BOOL", "Rotary position embedding"},
    {"--tokens", "/training/tokens", FlagValue::number_or_text, "SI", "Total training tokens, e.g. 2T"},
    {"--global-batch", "/training/global_batch", FlagValue::number_or_text, "INT", "Global batch in sequences"},
    {"--global-batch-tokens", "/training/global_batch_tokens", FlagValue::number_or_text, "SI",
     "Global batch in tokens, e.g. 4M"},
    {"--precision", "/training/precision", FlagValue::text, "NAME", "bf16, fp16, fp8, tf32 or fp32"},
    {"--framework", "/training/framework", FlagValue::text, "NAME",
     "Framework recipe id (capplan catalog frameworks; default megatron: fused kernels, capplan's defaults)"},
    {"--loss-kernel", "/training/loss_kernel", FlagValue::text, "NAME",
     "Loss kernels: unfused, fused, te or eager (default: fused for megatron, eager for pytorch)"},
    {"--fp8-recipe", "/training/fp8_recipe", FlagValue::text, "NAME",
     "FP8 scaling: delayed (default) or current (tensorwise: an extra amax pass per cast)"},
    {"--fp8-params", "/training/fp8_params", FlagValue::number_or_text, "BOOL",
     "FP8 weights, all-gathered in FP8 (Megatron --fp8-param-gather; default false)"},
    {"--grad-reduce-fp32", "/training/grad_reduce_in_fp32", FlagValue::number_or_text, "BOOL",
     "Accumulate and reduce gradients in fp32 (default: true for bf16/fp8, false for fp16)"},
    {"--overlap-compute-slowdown", "/training/overlap_compute_slowdown", FlagValue::number_or_text, "FRACTION",
     "Compute slowdown while it overlaps communication (default 0.189)"},
    {"--instance", "/cluster/instance", FlagValue::text, "ID", "Instance id (capplan catalog instances)"},
    {"--nodes", "/cluster/nodes", FlagValue::number_or_text, "INT", "Number of instances"},
    {"--gpu", "/cluster/gpu", FlagValue::text, "ID", "GPU id (capplan catalog gpus)"},
    {"--gpus", "/cluster/gpus", FlagValue::number_or_text, "INT", "Number of GPUs (with --gpu)"},
    {"--gpus-per-node", "/cluster/gpus_per_node", FlagValue::number_or_text, "INT", "GPUs per node (with --gpu)"},
    {"--intra-node-gbps", "/cluster/intra_node_gbps", FlagValue::number_or_text, "GBPS",
     "Intra-node link bandwidth per GPU, one direction, Gbit/s"},
    {"--inter-node-gbps-per-gpu", "/cluster/inter_node_gbps_per_gpu", FlagValue::number_or_text, "GBPS",
     "Inter-node bandwidth per GPU, one direction, Gbit/s"},
    {"--gpu-speed-spread", "/cluster/gpu_speed_spread", FlagValue::number_or_text, "FRACTION",
     "Relative spread of per-GPU speed; the step waits for the slowest GPU (default 0.015)"},
    {"--tp", "/strategy/tp", FlagValue::number_or_text, "INT|auto", "Tensor-parallel size, or auto"},
    {"--pp", "/strategy/pp", FlagValue::number_or_text, "INT|auto", "Pipeline-parallel size, or auto"},
    {"--dp", "/strategy/dp", FlagValue::number_or_text, "INT|auto", "Data-parallel size, or auto"},
    {"--cp", "/strategy/cp", FlagValue::number_or_text, "INT|auto", "Context-parallel size, or auto"},
    {"--ep", "/strategy/ep", FlagValue::number_or_text, "INT|auto", "Expert-parallel size, or auto"},
    {"--etp", "/strategy/etp", FlagValue::number_or_text, "INT|auto", "Expert tensor-parallel size (1), or auto"},
    {"--micro-batch", "/strategy/micro_batch", FlagValue::number_or_text, "INT|auto",
     "Sequences per micro-batch, or auto"},
    {"--virtual-stages", "/strategy/virtual_stages", FlagValue::number_or_text, "INT|auto",
     "Interleaved pipeline chunks per rank, or auto"},
    {"--zero", "/strategy/zero", FlagValue::number_or_text, "INT|auto", "ZeRO stage 0-3, or auto"},
    {"--recompute", "/strategy/recompute", FlagValue::text, "NAME|auto", "none, selective, full or auto"},
    {"--sequence-parallel", "/strategy/sequence_parallel", FlagValue::number_or_text, "BOOL|auto",
     "true, false or auto"},
    {"--overlap-dp-comm", "/strategy/overlap_dp_comm", FlagValue::number_or_text, "BOOL|auto",
     "Overlap the data-parallel gradient reduction with backward (default true)"},
    {"--tp-comm-overlap", "/strategy/tp_comm_overlap", FlagValue::number_or_text, "BOOL|auto",
     "Overlap tensor-parallel collectives with GEMMs, chunked (default false)"},
    {"--pp-comm-overlap", "/strategy/pp_comm_overlap", FlagValue::number_or_text, "BOOL|auto",
     "Overlap pipeline send/recv with compute (default false)"},
    {"--ep-comm-overlap", "/strategy/ep_comm_overlap", FlagValue::number_or_text, "BOOL|auto",
     "Overlap the expert-parallel all-to-all with another micro-batch's compute (default false)"},
    {"--recompute-norms", "/strategy/recompute_norms", FlagValue::number_or_text, "BOOL",
     "With selective recompute: recompute the norms in backward instead of keeping their outputs (default false)"},
    {"--recompute-moe-act", "/strategy/recompute_moe_act", FlagValue::number_or_text, "BOOL",
     "With selective recompute: recompute the experts' activation instead of keeping it (default false)"},
    {"--usd-per-gpu-hour", "/pricing/usd_per_gpu_hour", FlagValue::number_or_text, "USD",
     "Price per GPU-hour (overrides the catalog)"},
    {"--usd-per-node-hour", "/pricing/usd_per_node_hour", FlagValue::number_or_text, "USD",
     "Price per node-hour (overrides the catalog)"},
    {"--purchase", "/pricing/purchase", FlagValue::text, "NAME", "on_demand (default), spot, reserved or on_prem"},
    {"--spot-usd-per-gpu-hour", "/pricing/spot/usd_per_gpu_hour", FlagValue::number_or_text, "USD",
     "Spot price per GPU-hour"},
    {"--spot-preemptions-per-node-hour", "/pricing/spot/preemptions_per_node_hour", FlagValue::number_or_text,
     "FRACTION", "Probability a spot node is preempted in an hour (0..1)"},
    {"--reserved-usd-per-gpu-hour", "/pricing/reserved/usd_per_gpu_hour", FlagValue::number_or_text, "USD",
     "Reserved (committed) price per GPU-hour"},
    {"--reserved-term-months", "/pricing/reserved/term_months", FlagValue::number_or_text, "MONTHS",
     "Commitment term, paid whether used or not"},
    {"--reserved-idle-usd-per-gpu-hour", "/pricing/reserved/idle_usd_per_gpu_hour", FlagValue::number_or_text, "USD",
     "Rate for committed but unused GPU-hours (default: the reserved rate)"},
    {"--reserved-committed-gpus", "/pricing/reserved/committed_gpus", FlagValue::number_or_text, "INT",
     "GPUs committed (default: the cluster's)"},
    {"--on-prem-usd-per-node", "/pricing/on_prem/usd_per_node", FlagValue::number_or_text, "USD",
     "Purchase price of one node"},
    {"--on-prem-amortisation-years", "/pricing/on_prem/amortisation_years", FlagValue::number_or_text, "YEARS",
     "Years over which the purchase is written off"},
    {"--on-prem-node-power-w", "/pricing/on_prem/node_power_w", FlagValue::number_or_text, "W",
     "Power of one node under load (default GPU TDP x GPUs)"},
    {"--on-prem-pue", "/pricing/on_prem/pue", FlagValue::number_or_text, "RATIO", "Power usage effectiveness (default 1.58)"},
    {"--on-prem-usd-per-kwh", "/pricing/on_prem/usd_per_kwh", FlagValue::number_or_text, "USD", "Electricity price per kWh"},
    {"--on-prem-ops-usd-per-year", "/pricing/on_prem/ops_usd_per_year", FlagValue::number_or_text, "USD",
     "Operations staff and support per year"},
    {"--on-prem-utilisation", "/pricing/on_prem/utilisation", FlagValue::number_or_text, "FRACTION",
     "Share of the owned cluster's time doing useful work (default 1)"},
    {"--failure-rate-per-gpu-hour", "/reliability/failure_rate_per_gpu_hour", FlagValue::number_or_text, "RATE",
     "Job interruptions per GPU-hour (default: Llama 3 405B's 2.2e-5)"},
    {"--restart-s", "/reliability/restart_s", FlagValue::number_or_text, "S",
     "Relaunch + initialisation seconds before the checkpoint load (default 600, an assumption)"},
    {"--node-replacement-s", "/reliability/node_replacement_s", FlagValue::number_or_text, "S",
     "Seconds to get a replacement node when no hot spare is ready"},
    {"--hot-spares", "/reliability/hot_spares", FlagValue::number_or_text, "NODES", "Spare nodes kept ready"},
    {"--checkpoint-interval-s", "/reliability/checkpoint_interval_s", FlagValue::number_or_text, "S",
     "Seconds of training between checkpoints (default: Daly optimum)"},
    {"--checkpoint", "/reliability/checkpoint", FlagValue::text, "MODE", "sync (default) or async"},
    {"--checkpoints-kept", "/reliability/checkpoints_kept", FlagValue::number_or_text, "INT",
     "Checkpoints retained on storage (default 2)"},
    {"--storage-tier", "/storage/tier", FlagValue::text, "ID", "Storage tier id (capplan catalog storage)"},
    {"--storage-capacity-tib", "/storage/capacity_tib", FlagValue::number_or_text, "TIB",
     "Provisioned capacity (tiers whose throughput scales with it)"},
    {"--storage-write-gb-per-s", "/storage/write_gb_per_s", FlagValue::number_or_text, "GBPS",
     "Aggregate storage write bandwidth, GB/s"},
    {"--storage-read-gb-per-s", "/storage/read_gb_per_s", FlagValue::number_or_text, "GBPS",
     "Aggregate storage read bandwidth, GB/s"},
    {"--storage-write-gb-per-s-per-node", "/storage/write_gb_per_s_per_node", FlagValue::number_or_text, "GBPS",
     "Storage write bandwidth of one node, GB/s"},
    {"--storage-read-gb-per-s-per-node", "/storage/read_gb_per_s_per_node", FlagValue::number_or_text, "GBPS",
     "Storage read bandwidth of one node, GB/s"},
    {"--storage-local", "/storage/local", FlagValue::number_or_text, "BOOL", "Node-local storage (NVMe)"},
    {"--storage-upload-tier", "/storage/upload_tier", FlagValue::text, "ID",
     "Tier node-local checkpoints are uploaded to"},
    {"--storage-usd-per-gb-month", "/storage/usd_per_gb_month", FlagValue::number_or_text, "USD",
     "Storage price per GB-month"},
    {"--bytes-per-token", "/data/bytes_per_token", FlagValue::number_or_text, "BYTES",
     "Bytes read per training token (default 2 or 4: pre-tokenised)"},
    {"--preprocessing-tokens-per-s-per-node", "/data/preprocessing_tokens_per_s_per_node", FlagValue::number_or_text,
     "RATE", "Tokens one node's CPUs can load and preprocess per second"},
    {"--dataset-bytes", "/data/dataset_bytes", FlagValue::number_or_text, "BYTES", "Stored dataset size"},
};
constexpr size_t kFlagCount = std::size(kScenarioFlags);

struct EstimateOptions {
  std::string scenario_arg;  // positional
  std::string scenario_opt;  // --scenario
  std::array<std::string, kFlagCount> values;
  std::array<CLI::Option*, kFlagCount> options{};
  std::string strategy;  // --strategy auto
  std::string format;    // empty = table on a terminal, else json (or from --out's extension)
  std::string out;
  std::string profile;
  bool require_fit = false;
  CLI::Option* profile_option = nullptr;
};

// Help groups follow the scenario file's sections.
std::string flag_group(std::string_view pointer) {
  const std::string_view section = pointer.substr(1, pointer.find('/', 1) - 1);
  if (section == "model") return "Model (override the scenario file)";
  if (section == "training") return "Training";
  if (section == "cluster") return "Cluster";
  if (section == "strategy") return "Strategy (a number or auto)";
  if (section == "reliability") return "Reliability (interruptions, restarts, checkpoints)";
  if (section == "storage") return "Storage (checkpoints and data)";
  if (section == "data") return "Data loading";
  return "Pricing";
}

bool given(const EstimateOptions& opt, std::string_view flag) {
  for (size_t i = 0; i < kFlagCount; ++i) {
    if (flag == kScenarioFlags[i].flag) return opt.options[i]->count() > 0;
  }
  return false;
}

// A flag's text as a JSON value; validation stays with data::parse_scenario.
json flag_value(const ScenarioFlag& flag, const std::string& text) {
  if (flag.value == FlagValue::number_or_text) {
    json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_number() || parsed.is_boolean()) return parsed;
  }
  return text;
}

void erase_at(json& root, std::string_view section, std::string_view key) {
  auto it = root.find(section);
  if (it != root.end() && it->is_object()) it->erase(std::string(key));
}

bool has_key(const json& root, std::string_view section, std::string_view key) {
  auto it = root.find(section);
  return it != root.end() && it->is_object() && it->contains(key);
}

// Applies every given flag to the scenario document (CONTRACT.md: a flag overrides the file).
void apply_flags(json& doc, const EstimateOptions& opt) {
  if (!doc.is_object()) return;                               // parse_scenario reports the wrong top-level type
  if (given(opt, "--model")) doc["model"] = json::object();   // a preset replaces the file's model
  if (!opt.strategy.empty()) doc["strategy"] = opt.strategy;  // "auto"
  // Switching the kind of cluster drops the other kind's fields (instance+nodes vs gpu+gpus).
  if ((given(opt, "--gpu") && has_key(doc, "cluster", "instance")) ||
      (given(opt, "--instance") && has_key(doc, "cluster", "gpu"))) {
    doc["cluster"] = json::object();
  }
  if (given(opt, "--global-batch")) erase_at(doc, "training", "global_batch_tokens");
  if (given(opt, "--global-batch-tokens")) erase_at(doc, "training", "global_batch");
  if (given(opt, "--usd-per-gpu-hour")) erase_at(doc, "pricing", "usd_per_node_hour");
  if (given(opt, "--usd-per-node-hour")) erase_at(doc, "pricing", "usd_per_gpu_hour");
  for (size_t i = 0; i < kFlagCount; ++i) {
    if (opt.options[i]->count() == 0) continue;
    // A field set on an "auto" strategy makes it an object with that field, the rest left auto.
    set_at(doc, kScenarioFlags[i].pointer, flag_value(kScenarioFlags[i], opt.values[i]));
  }
}

// "scenario#/strategy/tp: must divide heads (64); got 3 (set by --tp)".
void annotate_flags(Diagnostics& diags, const EstimateOptions& opt) {
  for (auto& d : diags) {
    for (size_t i = 0; i < kFlagCount; ++i) {
      if (opt.options[i]->count() == 0) continue;
      const std::string prefix = std::string(kWhere) + "#" + kScenarioFlags[i].pointer;
      if (d.where == prefix || d.where.starts_with(prefix + "/")) {
        d.message += std::string(" (set by ") + kScenarioFlags[i].flag + ")";
        break;
      }
    }
  }
}

std::string describe(const data::ParsedScenario& s) {
  const auto& sc = s.scenario;
  std::string text = s.model_id + " on " + std::to_string(sc.cluster.gpus) + " x " + sc.cluster.gpu.id;
  if (!sc.cluster.instance_id.empty()) {
    text += " (" + std::to_string(sc.cluster.nodes()) + " x " + sc.cluster.instance_id + ")";
  }
  return text;
}

int run_estimate(const EstimateOptions& opt, const GlobalOptions& global) {
  if (!opt.scenario_arg.empty() && !opt.scenario_opt.empty()) {
    print_error("scenario file given twice ('" + opt.scenario_arg + "' and --scenario '" + opt.scenario_opt +
                "'); give one");
    return code(Exit::invalid_input);
  }
  const std::string format = choose_format(opt.format, opt.out);
  const std::string file = opt.scenario_arg.empty() ? opt.scenario_opt : opt.scenario_arg;

  // Read the document before the catalogs so that a missing file is reported first.
  std::string text;
  if (!file.empty()) {
    auto read = read_input(file);
    if (!read) {
      print_error((file == "-" ? std::string("scenario from standard input") : "scenario file '" + file + "'") + ": " +
                  read.error());
      return code(Exit::invalid_input);
    }
    text = std::move(*read);
  }

  // A calibration profile (--profile) is validated before anything is estimated: a bad or
  // truncated file is invalid input naming the field (or the file, line and column).
  std::optional<sim::Profile> profile;
  if (opt.profile_option->count() > 0) {
    auto read = read_input(opt.profile);
    if (!read) {
      print_error("profile file '" + opt.profile + "': " + read.error());
      return code(Exit::invalid_input);
    }
    auto parsed_profile = data::parse_profile(*read, opt.profile == "-" ? std::string("profile") : opt.profile);
    if (!parsed_profile) {
      print_diagnostics(parsed_profile.error());
      return code(Exit::invalid_input);
    }
    profile = std::move(*parsed_profile);
  }

  auto catalogs = load_catalogs_or_report(global);
  if (!catalogs) return code(Exit::invalid_input);
  // The model's error bars (docs/accuracy.md, "Error bars"); a missing file means no interval.
  const std::filesystem::path bands_file = data::error_bands_path(data_dir(global));
  auto bands = data::load_error_bands(bands_file);
  if (!bands) {
    print_diagnostics(bands.error());
    return code(Exit::invalid_input);
  }

  bool any_flag = !opt.strategy.empty();
  for (const auto* o : opt.options) any_flag = any_flag || o->count() > 0;

  std::string example_note;
  Result<data::ParsedScenario> parsed;
  if (!file.empty() && !any_flag) {
    // The file as it is: data::parse_scenario_text also reports syntax errors by line and column
    // and duplicate keys.
    parsed = data::parse_scenario_text(text, *catalogs, kWhere);
  } else {
    json doc;
    if (!file.empty()) {
      doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (doc.is_discarded()) {
        // data::parse_scenario_text words the syntax error (line, column) for us.
        auto syntax = data::parse_scenario_text(text, *catalogs, kWhere);
        print_diagnostics(syntax ? Diagnostics{{Diagnostic::Severity::error, std::string(kWhere), "invalid JSON"}}
                                 : syntax.error());
        return code(Exit::invalid_input);
      }
    } else {
      doc = data::example_scenario();
      if (given(opt, "--model")) {
        // The example's strategy was chosen for its own model: let capplan choose for this one.
        doc.erase("name");
        doc["strategy"] = "auto";
        example_note = "no scenario file given: using the built-in example's training and cluster";
      } else {
        example_note = "no scenario file given: using the built-in example scenario";
      }
    }
    apply_flags(doc, opt);
    parsed = data::parse_scenario(doc, *catalogs, kWhere);
  }
  if (!parsed) {
    Diagnostics diags = std::move(parsed.error());
    annotate_flags(diags, opt);
    print_diagnostics(diags);
    return code(Exit::invalid_input);
  }
  if (!example_note.empty() && format == "table") print_note(example_note + " (" + describe(*parsed) + ")");

  // Datasheet roofline, or the calibrated profile with the datasheet outside its measured range
  // (the same choice and coverage warnings as the desktop app: data/cost_model.hpp).
  auto estimate = data::estimate_with_profile(parsed->scenario, profile ? &*profile : nullptr);
  if (!estimate) {
    Diagnostics diags = std::move(estimate.error());
    annotate_flags(diags, opt);
    print_diagnostics(diags);
    return code(Exit::invalid_input);
  }
  if (*bands) {
    sim::apply_error_band(*estimate, parsed->scenario, (*bands)->table);
    if (profile && estimate->band) estimate->warnings.push_back(data::kProfileBandNote);
    if (!estimate->band) {
      estimate->warnings.push_back("no error band: " + bands_file.string() + " has no entry for '" +
                                   sim::error_category(parsed->scenario) +
                                   "' (nor a fallback), so the estimate carries no p10-p90 interval");
    }
  } else {
    estimate->warnings.push_back("no error band: " + bands_file.string() +
                                 " not found, so the estimate carries no p10-p90 interval (capplan "
                                 "validate-published --write-error-bands FILE makes one)");
  }

  std::string rendered;
  if (format == "json") {
    rendered = data::estimate_to_json(*estimate, *parsed).dump(2) + "\n";
  } else if (format == "csv") {
    rendered = data::estimate_to_csv(*estimate, *parsed);
  } else {
    rendered = data::estimate_to_table(*estimate, *parsed);
  }
  if (!emit(opt.out, rendered)) return code(Exit::invalid_input);

  // The table lists its warnings; when it went to a file, repeat them where the user looks.
  if (format == "table" && writes_file(opt.out)) {
    std::vector<std::string> warnings = parsed->warnings;
    for (const auto& w : estimate->warnings) {
      if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
    }
    for (const auto& w : warnings) print_warning(w);
  }

  if (opt.require_fit && !estimate->memory.fits()) {
    const auto& m = estimate->memory;
    print_error("does not fit in memory (--require-fit): needs " + fixed(units::to_gib(m.total()), 1) +
                " GiB on the most loaded GPU, has " + fixed(units::to_gib(m.capacity), 1) + " GiB");
    return code(Exit::infeasible);
  }
  return code(Exit::ok);
}

}  // namespace

Command add_estimate_command(CLI::App& app, const GlobalOptions& global) {
  auto opt = std::make_shared<EstimateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "estimate", "Estimate step time, throughput, memory, time to train and cost of one training scenario");
  cmd->footer(
      "Without a scenario file the built-in example is used; flags override the file's fields.\n"
      "Exit codes: 0 ok, 2 invalid input, 3 does not fit in memory (with --require-fit), 1 internal error.");

  cmd->add_option("scenario", opt->scenario_arg, "Scenario JSON file, or - for standard input")->type_name("FILE");
  cmd->add_option("--scenario", opt->scenario_opt, "Scenario JSON file, or - for standard input")->type_name("FILE");
  cmd->add_option("--format", opt->format, "Output format (default: table on a terminal, else json)")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  cmd->add_option("--out", opt->out, "Write the output to this file (atomically) instead of stdout")->type_name("FILE");
  cmd->add_flag("--require-fit", opt->require_fit, "Exit with code 3 when the estimate does not fit in memory");
  opt->profile_option =
      cmd->add_option("--profile", opt->profile,
                      "Calibration profile (capplan calibrate --out) to price operations with; the datasheet "
                      "model is used, with a warning, for what it did not measure")
          ->type_name("FILE");
  for (size_t i = 0; i < kFlagCount; ++i) {
    const ScenarioFlag& f = kScenarioFlags[i];
    opt->options[i] = cmd->add_option(f.flag, opt->values[i], f.help)->type_name(f.type)->group(flag_group(f.pointer));
    if (std::string_view(f.flag) == "--tp") {
      cmd->add_option("--strategy", opt->strategy, "auto: let capplan choose the whole strategy")
          ->type_name("auto")
          ->check(CLI::IsMember({"auto"}))
          ->group(flag_group(f.pointer));
    }
  }
  return Command{cmd, [opt, &global] { return run_estimate(*opt, global); }};
}

}  // namespace capplan::cli
