// SPDX-License-Identifier: Apache-2.0
// `capplan tco [SCENARIO_FILE|-] [flags]`: the scenario's fleet owned for N years at utilisation U
// against renting the same GPU-hours (README "Own versus rent"). The fleet is the scenario's
// cluster, or for a serve scenario the nodes its serving plan needs. The flags patch the scenario's
// `tco` section, which data::tco_request validates like any file.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "capplan/data/fields.hpp"
#include "capplan/data/scenario_io.hpp"
#include "capplan/data/tco_io.hpp"
#include "capplan/sim/tco/tco.hpp"
#include "commands.hpp"
#include "price_sheet_option.hpp"

namespace capplan::cli {
namespace {

using nlohmann::json;

constexpr std::string_view kWhere = "scenario";

// One flag per main field of the `tco` section (data::tco_fields, the rows with a flag).
std::vector<const data::FieldSpec*> tco_flags() {
  std::vector<const data::FieldSpec*> out;
  for (const auto& f : data::tco_fields()) {
    if (f.spec.flag.name != nullptr) out.push_back(&f.spec);
  }
  return out;
}

struct TcoOptions {
  std::string scenario_arg;
  std::string scenario_opt;
  std::string format;
  std::string out;
  std::string prices;  // --prices FILE: a price sheet
  std::vector<const data::FieldSpec*> flags = tco_flags();
  std::vector<double> values = std::vector<double>(flags.size(), 0.0);
  std::vector<CLI::Option*> options;
};

int run_tco(const TcoOptions& opt, const GlobalOptions& global) {
  const auto file = one_scenario_file(opt.scenario_arg, opt.scenario_opt);
  if (!file) return code(Exit::invalid_input);
  if (!output_path_ok_or_report(opt.out)) return code(Exit::invalid_input);  // before any work
  const std::string format = choose_format(opt.format, opt.out);
  auto document = scenario_document_or_report(*file);
  if (!document) return code(Exit::invalid_input);
  json doc = std::move(*document);
  auto catalogs = load_catalogs_or_report(global);
  if (!catalogs) return code(Exit::invalid_input);

  for (std::size_t i = 0; i < opt.flags.size(); ++i) {
    if (opt.options[i]->count() == 0 || !doc.is_object()) continue;
    const double v = opt.values[i];
    json& section = doc["tco"];
    if (!section.is_object()) section = json::object();
    const bool whole = v == static_cast<double>(static_cast<long long>(v));
    section[opt.flags[i]->pointer] = whole ? json(static_cast<long long>(v)) : json(v);
  }
  // A price sheet (--prices, else the file's pricing.sheet): its on-demand price over the catalog's,
  // and every rent rate it has that the scenario leaves empty.
  std::optional<data::PriceSheet> sheet;
  if (!merge_price_sheet_or_report(opt.prices, doc, *file, *catalogs, sheet)) return code(Exit::invalid_input);
  // The model and training are not needed to own a fleet: a file may give the cluster alone.
  auto parsed = data::parse_fleet_scenario(doc, *catalogs, kWhere);
  if (!parsed) {
    print_diagnostics(parsed.error());
    return code(Exit::invalid_input);
  }
  std::vector<std::string> sheet_notes;
  if (sheet) {
    sheet_notes = data::apply_price_sheet_rates(parsed->scenario, *sheet, has_key(doc, "pricing", "currency"));
  }
  // A serving scenario owns the fleet its serving plan needs; any other the scenario's cluster.
  auto request = parsed->scenario.workload.kind == sim::WorkloadKind::serve
                     ? data::serving_tco_request(doc, *parsed, *catalogs, kWhere)
                     : data::tco_request(doc, *parsed, *catalogs, kWhere);
  if (!request) {
    print_diagnostics(request.error());
    return code(Exit::invalid_input);
  }
  const sim::Tco t = sim::tco(request->inputs);
  const std::string rendered = render_in_format(format, [&] { return data::tco_to_json(t, *request); },
                                                [&] { return data::tco_to_csv(t, *request); },
                                                [&] { return data::tco_to_table(t, *request); });
  if (!emit(opt.out, rendered)) return code(Exit::invalid_input);
  if (format != "json") {
    for (const auto& w : request->warnings) {
      if (format == "csv" || writes_file(opt.out)) print_warning(w);
    }
    for (const auto& n : sheet_notes) print_note(n);
  }
  return code(Exit::ok);
}

}  // namespace

Command add_tco_command(CLI::App& app, const GlobalOptions& global) {
  auto opt = std::make_shared<TcoOptions>();
  CLI::App* cmd = app.add_subcommand(
      "tco",
      "Own versus rent over years: the scenario's fleet (a serve scenario: the nodes its serving plan needs) "
      "bought, financed, powered and staffed, against renting the same GPU-hours; the break-even utilisation");
  cmd->footer(
      "The scenario's `tco` section holds the terms (README \"Own versus rent\"); flags override it. Amounts are in "
      "the scenario's pricing.currency; rent rates come from its pricing section and the catalog. A price not given "
      "is listed as missing, never invented.\nExit codes: 0 ok, 2 invalid input, 1 internal error.");
  add_scenario_file_options(*cmd, opt->scenario_arg, opt->scenario_opt);
  add_format_option(*cmd, opt->format, {"table", "json", "csv"});
  cmd->add_option("--prices", opt->prices,
                  "Price sheet (capplan-price-sheet/1): its on-demand, spot and reserved rates for the fleet's "
                  "instance; replaces the scenario's pricing.sheet")
      ->type_name("FILE");
  add_out_option(*cmd, opt->out);
  for (std::size_t i = 0; i < opt->flags.size(); ++i) {
    const data::FieldFlag& flag = opt->flags[i]->flag;
    opt->options.push_back(
        cmd->add_option(flag.name, opt->values[i], flag.help)->type_name(flag.type)->group(flag.group));
  }
  return Command{cmd, [opt, &global] { return run_tco(*opt, global); }};
}

}  // namespace capplan::cli
