// SPDX-License-Identifier: Apache-2.0
// `capplan serve [SCENARIO_FILE|-] [flags]`: a serving deployment planned for its traffic and
// latency target (README "Serving"). The flags patch the scenario's workload (kind serve), model,
// cluster and pricing sections; the patched document goes through data::parse_scenario and
// data::serve_request like any file would.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "capplan/data/fields.hpp"
#include "capplan/data/findings.hpp"
#include "capplan/data/json_pointer.hpp"
#include "capplan/data/scenario_io.hpp"
#include "capplan/data/serve_io.hpp"
#include "commands.hpp"
#include "capplan/data/cost_model.hpp"
#include "capplan/data/price_sheet.hpp"
#include "capplan/sim/cost/profile.hpp"
#include "io.hpp"

namespace capplan::cli {
namespace {

using data::set_at;
using nlohmann::json;

constexpr std::string_view kWhere = "scenario";

struct ServeFlag {
  std::string flag;
  std::string pointer;
  bool text;  // always a string (ids, names); else a number or bool when it reads as one
  std::string type;
  std::string help;
  std::string group;
};

// The model and cluster flags, kept here; the serve workload's flags come from its tables
// (data/fields.hpp), then the pricing flags.
const ServeFlag kModelAndCluster[] = {
    {"--model", "/model/preset", true, "ID", "Model preset id (capplan catalog models); replaces the file's model",
     "Model and cluster"},
    {"--instance", "/cluster/instance", true, "ID", "Instance id (capplan catalog instances)", "Model and cluster"},
    {"--gpu", "/cluster/gpu", true, "ID", "GPU id (capplan catalog gpus)", "Model and cluster"},
    {"--gpus-per-node", "/cluster/gpus_per_node", false, "INT", "GPUs per node (with --gpu)", "Model and cluster"},
};
// The pricing flags: the pricing table's rows (data::pricing_fields) give the flag and the kind,
// serve words its own type and help (its prices are in --currency).
struct ServePrice {
  const char* pointer;
  const char* type;
  const char* help;
};
constexpr ServePrice kPrice[] = {
    {"usd_per_gpu_hour", "AMOUNT", "Price per GPU-hour in --currency (overrides the catalog)"},
    {"usd_per_node_hour", "AMOUNT", "Price per node-hour in --currency (overrides the catalog)"},
    {"currency", "CODE", "Currency of the prices (ISO 4217, default USD)"},
    {"usd_per_unit", "RATE", "US dollars per unit of --currency"},
};

// Every flag, in --help order.
const std::vector<ServeFlag>& serve_flags() {
  static const std::vector<ServeFlag> rows = [] {
    std::vector<ServeFlag> out(std::begin(kModelAndCluster), std::end(kModelAndCluster));
    const auto add = [&out](const data::FieldSpec& s, const std::string& pointer) {
      const bool text = s.kind == data::FieldKind::text || s.kind == data::FieldKind::choice;
      const bool length = s.kind == data::FieldKind::length;
      if (s.flag.name != nullptr) {
        out.push_back({s.flag.name, length ? pointer + "/mean" : pointer, text, s.flag.type, s.flag.help,
                       s.flag.group});
      }
      if (s.p95_flag.name != nullptr) {
        out.push_back({s.p95_flag.name, pointer + "/p95", text, s.p95_flag.type, s.p95_flag.help, s.p95_flag.group});
      }
    };
    for (const auto& table : data::serve_field_tables()) {
      for (const auto& f : table) add(f.spec, std::string("/workload/") + f.spec.pointer);
      // The engine's own settings follow its id.
      if (table.data() == data::serve_engine_fields().data()) {
        for (const auto& f : data::engine_fields()) add(f.spec, std::string("/workload/engine/") + f.spec.pointer);
      }
    }
    for (const ServePrice& price : kPrice) {
      for (const auto& f : data::pricing_fields()) {
        if (std::string_view(f.spec.pointer) != price.pointer) continue;
        const bool text = f.spec.kind == data::FieldKind::text || f.spec.kind == data::FieldKind::choice;
        out.push_back({f.spec.flag.name, std::string("/pricing/") + price.pointer, text, price.type, price.help,
                       "Price"});
      }
    }
    return out;
  }();
  return rows;
}

struct ServeOptions {
  std::string scenario_arg;
  std::string scenario_opt;
  std::string format;
  std::string out;
  std::string profile;
  std::string prices;
  std::string train;
  std::vector<std::string> instances;
  std::vector<std::string> engines;
  int months = 12;
  int curve_points = 12;
  CLI::Option* profile_option = nullptr;
  CLI::Option* months_option = nullptr;
  std::vector<std::string> values = std::vector<std::string>(serve_flags().size());
  std::vector<CLI::Option*> options;
};

json flag_value(const ServeFlag& f, const std::string& text) {
  if (f.text) return text;
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_number() || parsed.is_boolean()) return parsed;
  return text;  // the parser names the field and the value
}

int run_serve(const ServeOptions& opt, const GlobalOptions& global) {
  const auto file = one_scenario_file(opt.scenario_arg, opt.scenario_opt);
  if (!file) return code(Exit::invalid_input);
  if (!output_path_ok_or_report(opt.out)) return code(Exit::invalid_input);  // before any work
  const std::string format = choose_format(opt.format, opt.out);
  if (opt.months_option->count() > 0 && opt.train.empty()) {
    print_error("--months: the months of serving after training need --train FILE (a training or fine-tuning scenario)");
    return code(Exit::invalid_input);
  }
  json doc;
  if (file->empty()) {
    doc = data::example_serve_scenario();
  } else {
    auto document = scenario_document_or_report(*file);
    if (!document) return code(Exit::invalid_input);
    doc = std::move(*document);
  }
  std::optional<sim::Profile> profile;
  if (!load_optional_profile(opt.profile_option->count() > 0, opt.profile, profile)) return code(Exit::invalid_input);
  auto catalogs = load_catalogs_or_report(global);
  if (!catalogs) return code(Exit::invalid_input);
  // The training scenario's own price sheet (its pricing.sheet, relative to its file) is merged
  // over a copy of the catalogs, so that it prices the training and nothing else.
  std::optional<data::ParsedScenario> training;
  std::optional<sim::Estimate> training_estimate;
  if (!opt.train.empty()) {
    std::string text;
    if (!read_scenario_or_report(opt.train, text)) return code(Exit::invalid_input);
    auto train_doc = data::parse_scenario_document(text, "train");
    if (!train_doc) {
      print_diagnostics(train_doc.error());
      return code(Exit::invalid_input);
    }
    // Its own price sheet (pricing.sheet relative to its file, or --prices) prices the training only.
    auto priced = data::parse_priced_scenario(*train_doc, *catalogs, opt.train, opt.prices, "train");
    if (!priced) {
      print_diagnostics(priced.error());
      return code(Exit::invalid_input);
    }
    if (!training_scenario_or_report(priced->parsed, "serve --train")) return code(Exit::invalid_input);
    auto estimate = data::estimate_with_profile(priced->parsed.scenario, profile ? &*profile : nullptr);
    if (!estimate) {
      // The estimate names fields from "scenario#": here they are the --train file's.
      Diagnostics diags = std::move(estimate.error());
      for (auto& d : diags) {
        if (d.where.rfind("scenario", 0) == 0) d.where = "train" + d.where.substr(8);
      }
      print_diagnostics(diags);
      return code(Exit::invalid_input);
    }
    training = std::move(priced->parsed);
    training_estimate = std::move(*estimate);
  }
  if (doc.is_object()) {
    const auto given = [&](const char* flag) {
      for (std::size_t i = 0; i < serve_flags().size(); ++i) {
        if (serve_flags()[i].flag == flag) return opt.options[i]->count() > 0;
      }
      return false;
    };
    if (given("--model")) doc["model"] = json::object();
    // Switching the kind of cluster drops the other kind's fields.
    if ((given("--gpu") && has_key(doc, "cluster", "instance")) || (given("--instance") && has_key(doc, "cluster", "gpu"))) {
      doc["cluster"] = json::object();
    }
    // An engine given as an id string becomes {id} so that overrides can join it.
    if (doc.contains("workload") && doc["workload"].is_object() && doc["workload"].contains("engine") &&
        doc["workload"]["engine"].is_string()) {
      doc["workload"]["engine"] = json{{"id", doc["workload"]["engine"]}};
    }
    for (std::size_t i = 0; i < serve_flags().size(); ++i) {
      if (opt.options[i]->count() == 0) continue;
      set_at(doc, serve_flags()[i].pointer, flag_value(serve_flags()[i], opt.values[i]));
    }
    if (given("--rate") && !given("--arrival")) set_at(doc, "/workload/traffic/arrival", "poisson");
    if (given("--concurrency") && !given("--arrival")) set_at(doc, "/workload/traffic/arrival", "closed_loop");
    if (given("--concurrency") && !given("--rate") && doc["workload"]["traffic"].contains("rate_per_s")) {
      doc["workload"]["traffic"].erase("rate_per_s");
    }
    if (doc.contains("workload") && doc["workload"].is_object() && !doc["workload"].contains("kind")) {
      doc["workload"]["kind"] = "serve";
    }
  }
  std::optional<data::OfferingFilter> filter;
  if (!opt.instances.empty()) {
    filter.emplace();
    filter->instances = opt.instances;
  }
  auto planned = data::plan_serve_document(doc, *catalogs, *file, opt.prices, profile ? &*profile : nullptr,
                                           opt.curve_points, kWhere, filter ? &*filter : nullptr, opt.engines);
  if (!planned) {
    print_diagnostics(planned.error());
    return code(Exit::invalid_input);
  }
  const data::ServeRequest* request = &planned->request;
  data::ServeResult& result = planned->result;
  if (training) data::train_then_serve(result, *request, *training, *training_estimate, opt.months);
  const std::string rendered = render_in_format(format, [&] { return data::serve_to_json(result, *request); },
                                                [&] { return data::serve_to_csv(result, *request); },
                                                [&] { return data::serve_to_table(result, *request); });
  if (!emit(opt.out, rendered)) return code(Exit::invalid_input);
  if (format != "json") {
    for (const auto& w : request->warnings) print_warning(w);
    if (file->empty()) print_note("no scenario file given: using the built-in serving example");
  }
  // Nothing meets what was asked (compare mode: no layout at all): exit 3 as search does, naming
  // the limit that binds. Compared layouts: that of the one with the most GPUs per replica, the
  // likeliest to meet a latency target (a smaller one fails for that reason too, or sooner).
  if (!result.recommended().plan.feasible) {
    const sim::ServeOption* largest = &result.recommended();
    for (const auto& o : result.options) {
      if (o.job.gpus() > largest->job.gpus()) largest = &o;
    }
    const sim::ServeOption& chosen = *largest;
    std::string why = "no layout meets the serving target";
    if (result.options.size() > 1) {
      why = "none of the " + std::to_string(result.options.size()) + " layouts meets the serving target";
    }
    why += "; " + sim::layout_name(chosen.job);
    if (chosen.plan.reason) why += ": " + data::render(*chosen.plan.reason);
    print_error(why);
    return code(Exit::infeasible);
  }
  return code(Exit::ok);
}

}  // namespace

Command add_serve_command(CLI::App& app, const GlobalOptions& global) {
  auto opt = std::make_shared<ServeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "Plan a serving deployment: replicas, GPUs and cost per million tokens for a request rate at a latency "
      "target, from a simulation of the engine's continuous batching");
  cmd->footer(
      "The scenario's workload section (kind serve) holds the engine, layout, traffic and latency target (README "
      "\"Serving\"); flags override it. Without a file, the built-in example. Prices are per GPU-hour in the "
      "scenario's pricing.currency; a price not known is shown as unknown, never invented.\n"
      "Exit codes: 0 ok, 2 invalid input, 3 no layout meets the latency target or fits, 1 internal error.");
  add_scenario_file_options(*cmd, opt->scenario_arg, opt->scenario_opt);
  add_format_option(*cmd, opt->format, {"table", "json", "csv"});
  add_out_option(*cmd, opt->out);
  opt->profile_option =
      cmd->add_option("--profile", opt->profile,
                      "Calibration profile (capplan calibrate --out) to price the passes with; the datasheet model "
                      "for what it did not measure")
          ->type_name("FILE");
  cmd->add_option("--prices", opt->prices,
                  "Price sheet (README: Keeping negotiated prices) merged over the catalog; replaces the scenario's "
                  "pricing.sheet (and the --train scenario's)")
      ->type_name("FILE");
  cmd->add_option("--instances", opt->instances,
                  "Also plan on every catalog instance matching these globs ('tencent-*,aws-p5*'): offerings x TP x "
                  "weight format, ranked by the closed form, the Pareto front and the cheapest confirmed by simulation")
      ->delimiter(',')
      ->type_name("GLOBS")
      ->group("Engine and layout");
  cmd->add_option("--engines", opt->engines,
                  "Also compare these serving engines (capplan catalog engines: vllm,sglang,tensorrt-llm,...), each "
                  "at its recipe's defaults")
      ->delimiter(',')
      ->type_name("IDS")
      ->group("Engine and layout");
  cmd->add_option("--train", opt->train,
                  "Training or fine-tuning scenario: its estimate, then --months of serving (train, then serve)")
      ->type_name("FILE")
      ->group("Train, then serve");
  opt->months_option = cmd->add_option("--months", opt->months, "Months of serving after training (default 12)")
                           ->check(CLI::Range(1, 120))
                           ->type_name("INT")
                           ->group("Train, then serve");
  cmd->add_option("--curve-points", opt->curve_points,
                  "Rates of the latency-throughput curve (0: none; default 12)")
      ->check(CLI::Range(0, 200))
      ->type_name("INT");
  for (std::size_t i = 0; i < serve_flags().size(); ++i) {
    const ServeFlag& f = serve_flags()[i];
    opt->options.push_back(cmd->add_option(f.flag, opt->values[i], f.help)->type_name(f.type)->group(f.group));
  }
  return Command{cmd, [opt, &global] { return run_serve(*opt, global); }};
}

}  // namespace capplan::cli
