// SPDX-License-Identifier: Apache-2.0
// `capplan estimate [SCENARIO_FILE|-] [flags]`: one scenario in, one estimate out.
//
// Flags never bypass validation: they become a JSON patch over the scenario file (or the built-in
// example), and the patched document goes through data::parse_scenario like any file would
// (cli/scenario_flags.hpp: the table estimate shares with search).
#include <algorithm>
#include <filesystem>
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
#include "capplan/sim/cost/calibrated_cost.hpp"
#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/lowering/step_model.hpp"
#include "capplan/sim/estimate/uncertainty.hpp"
#include "commands.hpp"
#include "price_sheet_option.hpp"
#include "scenario_flags.hpp"

namespace capplan::cli {
namespace {

using nlohmann::json;

constexpr std::string_view kWhere = "scenario";

struct EstimateOptions {
  std::string scenario_arg;  // positional
  std::string scenario_opt;  // --scenario
  ScenarioFlags flags;
  std::string strategy;  // --strategy auto
  std::string format;    // empty = table on a terminal, else json (or from --out's extension)
  std::string out;
  std::string profile;
  std::string prices;  // --prices FILE: a price sheet
  bool require_fit = false;
  CLI::Option* profile_option = nullptr;
};

// Applies every given flag to the scenario document (CONTRACT.md: a flag overrides the file).
void apply_flags(json& doc, const EstimateOptions& opt) {
  if (!doc.is_object()) return;                               // parse_scenario reports the wrong top-level type
  if (!opt.strategy.empty()) doc["strategy"] = opt.strategy;  // "auto"
  // Switching the kind of cluster drops the other kind's fields (instance+nodes vs gpu+gpus).
  if ((opt.flags.given("--gpu") && has_key(doc, "cluster", "instance")) ||
      (opt.flags.given("--instance") && has_key(doc, "cluster", "gpu"))) {
    doc["cluster"] = json::object();
  }
  opt.flags.apply(doc);
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
  const auto given = one_scenario_file(opt.scenario_arg, opt.scenario_opt);
  if (!given) return code(Exit::invalid_input);
  if (!output_path_ok_or_report(opt.out)) return code(Exit::invalid_input);  // before any work
  const std::string format = choose_format(opt.format, opt.out);
  const std::string& file = *given;

  // Read the document before the catalogs so that a missing file is reported first.
  std::string text;
  if (!file.empty() && !read_scenario_or_report(file, text)) return code(Exit::invalid_input);

  std::optional<sim::Profile> profile;
  if (!load_optional_profile(opt.profile_option->count() > 0, opt.profile, profile)) return code(Exit::invalid_input);

  auto catalogs = load_catalogs_or_report(global);
  if (!catalogs) return code(Exit::invalid_input);
  // The model's error bars (docs/accuracy.md, "Error bars"); a missing file means no interval.
  const std::filesystem::path bands_file = data::error_bands_path(data_dir(global));
  std::optional<data::ErrorBands> bands;
  if (!load_error_bands_or_report(global, bands)) return code(Exit::invalid_input);

  // A price sheet (--prices, else the file's pricing.sheet) is merged over the catalog first.
  json sheet_doc = json::object();
  if (!file.empty() && (!opt.prices.empty() || text.find("\"sheet\"") != std::string::npos)) {
    if (auto d = data::parse_scenario_document(text, kWhere)) sheet_doc = std::move(*d);
  }
  std::optional<data::PriceSheet> sheet;
  if (!merge_price_sheet_or_report(opt.prices, sheet_doc, file, *catalogs, sheet)) return code(Exit::invalid_input);

  const bool any_flag = !opt.strategy.empty() || opt.flags.any_given();

  std::string example_note;
  Result<data::ParsedScenario> parsed;
  if (!file.empty() && !any_flag) {
    // The file as it is: data::parse_scenario_text also reports syntax errors by line and column
    // and duplicate keys.
    parsed = data::parse_scenario_text(text, *catalogs, kWhere);
  } else {
    auto document = scenario_text_document_or_report(file, text);
    if (!document) return code(Exit::invalid_input);
    json doc = std::move(*document);
    if (file.empty()) {
      if (opt.flags.given("--model")) {
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
    opt.flags.annotate(diags, kWhere);
    print_diagnostics(diags);
    return code(Exit::invalid_input);
  }
  if (!training_scenario_or_report(*parsed, "estimate")) return code(Exit::invalid_input);
  if (!example_note.empty() && format == "table") print_note(example_note + " (" + describe(*parsed) + ")");
  std::vector<std::string> sheet_notes;
  if (sheet) {
    const bool currency_given = has_key(sheet_doc, "pricing", "currency") || opt.flags.given("--currency");
    sheet_notes = data::apply_price_sheet_to_scenario(parsed->scenario, *sheet, currency_given);
  }

  // Datasheet roofline, or the calibrated profile with the datasheet outside its measured range
  // (the same choice and coverage warnings as the desktop app: data/cost_model.hpp).
  auto estimate = data::estimate_with_profile(parsed->scenario, profile ? &*profile : nullptr);
  if (!estimate) {
    Diagnostics diags = std::move(estimate.error());
    opt.flags.annotate(diags, kWhere);
    print_diagnostics(diags);
    return code(Exit::invalid_input);
  }
  for (const auto& n : sheet_notes) estimate->findings.push_back(sim::note(n));
  if (bands) {
    sim::apply_error_band(*estimate, parsed->scenario, bands->table);
    if (profile && estimate->uncertainty.band) estimate->findings.push_back(sim::note(data::kProfileBandNote));
    if (!estimate->uncertainty.band) {
      estimate->findings.push_back(sim::note("no error band: " + bands_file.string() + " has no entry for '" +
                                             sim::error_category(parsed->scenario) +
                                             "' (nor a fallback), so the estimate carries no p10-p90 interval"));
    }
  } else {
    estimate->findings.push_back(sim::note("no error band: " + bands_file.string() +
                                           " not found, so the estimate carries no p10-p90 interval (capplan "
                                           "validate-published --write-error-bands FILE makes one)"));
  }

  const std::string rendered =
      render_in_format(format, [&] { return data::estimate_to_json(*estimate, *parsed); },
                       [&] { return data::estimate_to_csv(*estimate, *parsed); },
                       [&] { return data::estimate_to_table(*estimate, *parsed); });
  if (!emit(opt.out, rendered)) return code(Exit::invalid_input);

  // The table lists its warnings; when it went to a file, repeat them where the user looks.
  if (format == "table" && writes_file(opt.out)) {
    for (const auto& w : data::estimate_warnings(*estimate, *parsed)) print_warning(w);
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

  add_scenario_file_options(*cmd, opt->scenario_arg, opt->scenario_opt);
  add_format_option(*cmd, opt->format, {"table", "json", "csv"});
  add_out_option(*cmd, opt->out);
  cmd->add_flag("--require-fit", opt->require_fit, "Exit with code 3 when the estimate does not fit in memory");
  opt->profile_option =
      cmd->add_option("--profile", opt->profile,
                      "Calibration profile (capplan calibrate --out) to price operations with; the datasheet "
                      "model is used, with a warning, for what it did not measure")
          ->type_name("FILE");
  cmd->add_option("--prices", opt->prices,
                  "Price sheet (README: Keeping negotiated prices) merged over the catalog; replaces the "
                  "scenario's pricing.sheet")
      ->type_name("FILE");
  opt->flags.add(*cmd, FlagCommand::estimate, &opt->strategy);
  return Command{cmd, [opt, &global] { return run_estimate(*opt, global); }};
}

}  // namespace capplan::cli
