// SPDX-License-Identifier: Apache-2.0
// `capplan search`: what to rent, how much of it, and how to lay the job out. Searches layouts x
// node counts x offerings (catalog instances with their prices) for the cheapest plan that meets a
// deadline, the fastest within a budget, or the (time, cost) Pareto front (docs/planner.md).
//
// Model, training and strategy flags patch the scenario document as `capplan estimate`'s do, and
// the patched document goes through data::parse_scenario.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "capplan/data/findings.hpp"
#include "capplan/data/cost_model.hpp"
#include "capplan/data/error_bands.hpp"
#include "capplan/data/plan_text.hpp"
#include "capplan/data/profile_io.hpp"
#include "capplan/data/scenario_io.hpp"
#include "capplan/data/search_io.hpp"
#include "capplan/sim/search/search.hpp"
#include "capplan/sim/estimate/uncertainty.hpp"
#include "commands.hpp"
#include "price_sheet_option.hpp"
#include "scenario_flags.hpp"

namespace capplan::cli {
namespace {

using nlohmann::json;

constexpr std::string_view kWhere = "scenario";

struct SearchOptions {
  std::string scenario_arg, scenario_opt;
  ScenarioFlags flags;  // the model, the training job and the strategy fields to fix (the cluster is searched)
  std::vector<std::string> instances, gpus, providers, regions, prices;
  std::string nodes;
  int max_gpus = 0;
  std::string deadline_days, budget_usd;
  std::string deadline_quantile;  // empty: the point estimate
  bool even_stages = false;
  std::string objective = "cheapest";
  int top = 5;
  int threads = 0;
  std::string inter_node_gbps;
  bool all_layouts = false;
  std::string space = "standard";
  std::string format, out;
  std::string profile;
  std::string price_sheet;  // --prices FILE
};

// "a,b" given once or the flag repeated: one flat list.
std::vector<std::string> flatten(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const auto& v : values) {
    size_t pos = 0;
    while (pos <= v.size()) {
      const size_t comma = v.find(',', pos);
      std::string item = v.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      if (!item.empty()) out.push_back(item);
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
  }
  return out;
}

// A positive number (SI suffixes allowed), or an error naming the flag and the text.
std::optional<double> positive(const std::string& flag, const std::string& text) {
  const auto v = data::parse_si(text);
  if (!v || !std::isfinite(*v) || *v <= 0) {
    print_error(flag + ": must be a positive number; got '" + text + "'");
    return std::nullopt;
  }
  return v;
}

// Error bands as `capplan estimate` applies them, so each plan prints as estimate would.
void apply_bands(sim::Plan& plan, const sim::SearchRequest& request, const std::optional<data::ErrorBands>& bands,
                 const std::filesystem::path& file) {
  const sim::Scenario s = sim::plan_scenario(request, plan);
  if (!bands) {
    plan.estimate.findings.push_back(sim::note("no error band: " + file.string() +
                                               " not found, so the estimate carries no p10-p90 interval (capplan "
                                               "validate-published --write-error-bands FILE makes one)"));
    return;
  }
  sim::apply_error_band(plan.estimate, s, bands->table);
  if (!plan.estimate.uncertainty.band) {
    plan.estimate.findings.push_back(sim::note("no error band: " + file.string() + " has no entry for '" +
                                               sim::error_category(s) +
                                               "' (nor a fallback), so the estimate carries no p10-p90 interval"));
  }
}

// ---- helpers: the deadline's quantile and even pipeline stages ----
// The first pricing flag given that sets a rate of the scenario's own instance, or "".
std::string own_rate_flag(const ScenarioFlags& flags) {
  for (const char* f : {"--usd-per-gpu-hour", "--usd-per-node-hour", "--spot-usd-per-gpu-hour",
                        "--reserved-usd-per-gpu-hour", "--reserved-idle-usd-per-gpu-hour", "--on-prem-usd-per-node"}) {
    if (flags.given(f)) return f;
  }
  return "";
}

// Why --even-stages cannot hold for the fixed strategy fields, or "".
std::string even_stages_conflict(const ScenarioFlags& flags, const sim::SearchRequest& request) {
  if (!request.even_stages) return "";
  const sim::StrategyRequest& r = request.base.strategy;
  const int layers = request.base.model.layers;
  if (r.first_stage_layers || r.last_stage_layers) {
    const char* which = r.first_stage_layers ? "--first-stage-layers" : "--last-stage-layers";
    return std::string("--even-stages: every stage holds the same layers, so it cannot be combined with ") + which +
           (flags.given(which) ? "" : " (the scenario's strategy)");
  }
  const int v = std::max(1, r.virtual_stages.value_or(1));
  if (r.pp && (*r.pp < 1 || layers % (*r.pp * v) != 0)) {
    return "--even-stages: the fixed pp " + std::to_string(*r.pp) + (v > 1 ? " x " + std::to_string(v) + " virtual stages" : "") +
           " does not divide the model's " + std::to_string(layers) + " layers";
  }
  return "";
}
// ---- end point 9 helpers ----

// A one-line bar on stderr for searches that run more than a second on a terminal.
class ProgressBar {
 public:
  explicit ProgressBar(bool enabled) : enabled_(enabled), start_(std::chrono::steady_clock::now()) {}
  bool operator()(const sim::SearchProgress& p) {
    if (!enabled_) return true;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (elapsed < 1.0) return true;
    const double f = p.total > 0 ? static_cast<double>(p.done) / static_cast<double>(p.total) : 1.0;
    const int width = 30;
    const int filled = static_cast<int>(f * width);
    std::cerr << "\rsearching [" << std::string(static_cast<size_t>(filled), '#')
              << std::string(static_cast<size_t>(width - filled), '.') << "] " << static_cast<int>(f * 100) << "% ("
              << p.done << "/" << p.total << " layout groups, " << fixed(elapsed, 1) << " s)" << std::flush;
    drawn_ = true;
    return true;
  }
  void finish() const {
    if (drawn_) std::cerr << "\r" << std::string(90, ' ') << "\r" << std::flush;
  }

 private:
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
};

int run_search(const SearchOptions& opt, const GlobalOptions& global) {
  const auto given = one_scenario_file(opt.scenario_arg, opt.scenario_opt);
  if (!given) return code(Exit::invalid_input);
  const std::string& file = *given;
  if (!output_path_ok_or_report(opt.out)) return code(Exit::invalid_input);  // before any work
  const std::string format = choose_format(opt.format, opt.out);

  // Flags of the search itself, checked before any file is read.
  sim::SearchRequest request;
  const auto objective = sim::objective_from_string(opt.objective);
  if (!objective) {
    print_error("--objective: must be cheapest, fastest or pareto; got '" + opt.objective + "'");
    return code(Exit::invalid_input);
  }
  request.objective = *objective;
  if (opt.top < 1) {
    print_error("--top: must be at least 1; got " + std::to_string(opt.top));
    return code(Exit::invalid_input);
  }
  request.top_k = opt.top;
  if (opt.threads < 0) {
    print_error("--threads: must be >= 0 (0 = all cores); got " + std::to_string(opt.threads));
    return code(Exit::invalid_input);
  }
  request.threads = opt.threads;
  if (opt.max_gpus < 0) {
    print_error("--max-gpus: must be >= 0 (0 = no limit); got " + std::to_string(opt.max_gpus));
    return code(Exit::invalid_input);
  }
  request.max_gpus = opt.max_gpus;
  request.one_plan_per_shape = !opt.all_layouts;
  const auto space = sim::layout_space_from_string(opt.space);
  if (!space) {
    print_error("--space: must be standard or exhaustive; got '" + opt.space + "'");
    return code(Exit::invalid_input);
  }
  request.space = *space;
  if (!opt.deadline_days.empty()) {
    auto d = positive("--deadline-days", opt.deadline_days);
    if (!d) return code(Exit::invalid_input);
    request.deadline = units::seconds(*d * 86400.0);
  }
  // ---- the deadline's quantile and even pipeline stages ----
  if (!opt.deadline_quantile.empty()) {
    const auto q = sim::deadline_quantile_from_string(opt.deadline_quantile);
    if (!q || *q == sim::DeadlineQuantile::point) {
      print_error("--deadline-quantile: must be p50 or p90; got '" + opt.deadline_quantile + "'");
      return code(Exit::invalid_input);
    }
    if (!request.deadline) {
      print_error("--deadline-quantile " + opt.deadline_quantile + " needs --deadline-days");
      return code(Exit::invalid_input);
    }
    request.deadline_quantile = *q;
  }
  request.even_stages = opt.even_stages;
  // ---- end point 9 ----
  if (!opt.budget_usd.empty()) {
    auto b = positive("--budget-usd", opt.budget_usd);
    if (!b) return code(Exit::invalid_input);
    request.budget = units::usd(*b);
  }
  if (!opt.nodes.empty()) {
    auto n = data::parse_node_counts(opt.nodes, "--nodes");
    if (!n) {
      print_diagnostics(n.error());
      return code(Exit::invalid_input);
    }
    request.node_counts = std::move(*n);
  }
  std::map<std::string, double> prices;
  for (const auto& text : opt.prices) {
    auto p = data::parse_price_override(text);
    if (!p) {
      print_diagnostics(p.error());
      return code(Exit::invalid_input);
    }
    prices[p->first] = p->second;
  }
  std::optional<double> inter_node;
  if (!opt.inter_node_gbps.empty()) {
    inter_node = positive("--inter-node-gbps-per-gpu", opt.inter_node_gbps);
    if (!inter_node) return code(Exit::invalid_input);
  }

  // A calibration profile prices every offering's operations (datasheet outside its measured
  // range), exactly as `capplan estimate --profile` does; checked before the scenario is read.
  if (!opt.profile.empty()) {
    auto parsed_profile = load_profile_or_report(opt.profile);
    if (!parsed_profile) return code(Exit::invalid_input);
    request.cost_model = data::cost_model_factory(std::make_shared<const sim::Profile>(std::move(*parsed_profile)));
  }

  std::string text;
  if (!file.empty() && !read_scenario_or_report(file, text)) return code(Exit::invalid_input);
  auto catalogs = load_catalogs_or_report(global);
  if (!catalogs) return code(Exit::invalid_input);
  const std::filesystem::path bands_file = data::error_bands_path(data_dir(global));
  std::optional<data::ErrorBands> bands;
  if (!load_error_bands_or_report(global, bands)) return code(Exit::invalid_input);
  if (request.deadline_quantile == sim::DeadlineQuantile::p90) {
    if (!bands) {
      print_error("--deadline-quantile p90 needs the error band file " + bands_file.string() +
                  ", which was not found (capplan validate-published --write-error-bands FILE makes one)");
      return code(Exit::invalid_input);
    }
  }
  // The band estimate prints: a p90 deadline is checked on it, and the chosen plan is said to be
  // where the model is optimistic from it.
  if (bands) request.error_band = bands->table;
  // The scenario: the file (or the built-in example) patched by the flags. Its cluster is only
  // needed to parse it when the offerings come from the catalog.
  auto document = scenario_text_document_or_report(file, text);
  if (!document) return code(Exit::invalid_input);
  json doc = std::move(*document);
  if (file.empty()) {
    doc.erase("name");
    if (opt.flags.given("--model")) doc["strategy"] = "auto";
  }
  // A price sheet (--prices, else the file's pricing.sheet) is merged over the catalog first.
  std::optional<data::PriceSheet> sheet;
  if (!merge_price_sheet_or_report(opt.price_sheet, doc, file, *catalogs, sheet)) return code(Exit::invalid_input);

  // Offerings: the catalog instances the filters select, or the scenario's own cluster.
  data::OfferingFilter filter;
  filter.instances = flatten(opt.instances);
  filter.gpus = flatten(opt.gpus);
  filter.providers = flatten(opt.providers);
  filter.regions = flatten(opt.regions);
  const bool from_catalog = !filter.instances.empty() || !filter.gpus.empty() || !filter.providers.empty() ||
                            !filter.regions.empty() || !prices.empty();
  std::vector<std::string> notes;
  std::vector<sim::Finding> offering_findings;
  if (from_catalog) {
    auto list = data::offerings_from_catalog(*catalogs, filter, prices, inter_node);
    if (!list) {
      print_diagnostics(list.error());
      return code(Exit::invalid_input);
    }
    request.offerings = std::move(list->offerings);
    notes = std::move(list->notes);
    offering_findings = std::move(list->findings);
  }

  // The scenario's pricing stays: it applies to its own instance among the offerings
  // (data::apply_scenario_pricing); a file without a cluster has no instance of its own.
  bool pricing_given = false;
  if (doc.is_object()) {
    if (!doc.contains("strategy")) doc["strategy"] = "auto";
    if (!doc.contains("cluster") && !request.offerings.empty()) {
      if (const std::string rate = own_rate_flag(opt.flags); !rate.empty()) {
        print_error(rate + " prices the scenario's own instance, and the scenario has no cluster (give the file a "
                    "cluster, or --price ID=USD for a catalog instance)");
        return code(Exit::invalid_input);
      }
      doc["cluster"] = {{"instance", request.offerings.front().instance_id}, {"nodes", 1}};
      if (from_catalog && doc.contains("pricing")) {
        doc.erase("pricing");
        notes.push_back("the scenario has no cluster, so its pricing has no instance to apply to and was not used "
                        "(give --price ID=USD)");
      }
    }
    pricing_given = doc.contains("pricing");
  }
  opt.flags.apply(doc);
  auto parsed = data::parse_scenario(doc, *catalogs, kWhere);
  if (!parsed) {
    Diagnostics diags = std::move(parsed.error());
    opt.flags.annotate(diags, kWhere);
    print_diagnostics(diags);
    return code(Exit::invalid_input);
  }
  if (!training_scenario_or_report(*parsed, "search")) return code(Exit::invalid_input);
  notes.insert(notes.end(), parsed->unused_inputs.begin(), parsed->unused_inputs.end());
  request.base = parsed->scenario;
  if (const std::string why = even_stages_conflict(opt.flags, request); !why.empty()) {
    print_error(why);
    return code(Exit::invalid_input);
  }
  if (from_catalog) {
    auto found = data::apply_scenario_pricing(request.offerings, request.base, pricing_given, prices);
    // --purchase: the model for every offering; the "priced on demand" note does not hold.
    if (opt.flags.given("--purchase") && request.base.pricing.model != sim::PurchaseModel::on_demand) {
      std::erase_if(found, [](const sim::Finding& f) { return f.code == sim::FindingCode::scenario_pricing_not_offered; });
      auto all = data::apply_purchase_to_all(request.offerings, request.base);
      found.insert(found.end(), all.begin(), all.end());
    }
    offering_findings.insert(offering_findings.end(), found.begin(), found.end());
  }
  if (sheet) {  // the sheet's purchase-model columns, where the scenario gives none
    const bool currency_given = has_key(doc, "pricing", "currency");
    auto found = from_catalog ? data::apply_price_sheet_to_offerings(request.offerings, *sheet)
                              : data::apply_price_sheet_to_scenario(request.base, *sheet, currency_given);
    notes.insert(notes.end(), found.begin(), found.end());
  }
  if (request.node_counts.empty()) request.node_counts.push_back(request.base.cluster.nodes());

  ProgressBar bar(::isatty(2) != 0);
  auto result = sim::search(request, [&bar](const sim::SearchProgress& p) { return bar(p); });
  bar.finish();
  if (!result) {
    Diagnostics diags = std::move(result.error());
    data::word(diags);
    opt.flags.annotate(diags, kWhere);
    print_diagnostics(diags);
    return code(Exit::invalid_input);
  }
  result->notes.insert(result->notes.begin(), offering_findings.begin(), offering_findings.end());
  // The library's notes name what to give; here that is a flag.
  for (auto& n : result->notes) {
    std::string words = data::render(n);
    for (const auto& [from, to] : {std::pair<std::string, std::string>{"(give the inter-node bandwidth per GPU)",
                                                                       "(give --inter-node-gbps-per-gpu)"},
                                   {"(give a price)", "(give --price ID=USD_PER_GPU_HOUR)"},
                                   {"the price given (", "--price ("}}) {
      if (const size_t at = words.find(from); at != std::string::npos) words.replace(at, from.size(), to);
    }
    n = sim::note(std::move(words));
  }
  for (auto it = notes.rbegin(); it != notes.rend(); ++it) result->notes.insert(result->notes.begin(), sim::note(*it));
  const std::optional<data::ErrorBands>& table = bands;
  for (auto& p : result->plans) apply_bands(p, request, table, bands_file);
  for (auto& p : result->pareto) apply_bands(p, request, table, bands_file);
  for (auto& u : result->runner_ups) apply_bands(u.plan, request, table, bands_file);
  if (result->failure && result->failure->closest) apply_bands(*result->failure->closest, request, table, bands_file);

  const std::string rendered =
      render_in_format(format, [&] { return data::search_result_to_json(*result, request, *parsed); },
                       [&] { return data::search_result_to_csv(*result, request, *parsed); },
                       [&] { return data::search_result_to_table(*result, request, *parsed); });
  if (!emit(opt.out, rendered)) return code(Exit::invalid_input);

  if (result->failure) {
    print_error(data::failure_message(*result->failure, request));
    return code(Exit::infeasible);
  }
  return code(Exit::ok);
}

}  // namespace

Command add_search_command(CLI::App& app, const GlobalOptions& global) {
  auto opt = std::make_shared<SearchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "search", "Plan: search layouts, node counts and instance types for the cheapest or fastest plan");
  cmd->footer(
      "Example: capplan search --scenario s.json --instances 'aws-*' --gpu h100-sxm-80gb,h200-sxm-141gb \\\n"
      "           --nodes 8-64 --deadline-days 30 --objective cheapest\n"
      "Without --instances/--gpu/--provider/--region/--price the scenario's own cluster is the only offering.\n"
      "Exit codes: 0 ok, 2 invalid input, 3 nothing meets the deadline, budget or memory, 1 internal error.");
  add_scenario_file_options(*cmd, opt->scenario_arg, opt->scenario_opt);
  const char* space = "Search space";
  cmd->add_option("--instances", opt->instances, "Instance ids to offer, globs allowed: 'aws-*' (comma-separated)")
      ->type_name("GLOB")
      ->group(space);
  cmd->add_option("--gpu", opt->gpus, "GPU ids to offer: h100-sxm-80gb,h200-sxm-141gb")->type_name("ID")->group(space);
  cmd->add_option("--provider", opt->providers, "Providers to offer: aws,gcp")->type_name("NAME")->group(space);
  cmd->add_option("--region", opt->regions, "Price regions to offer, globs allowed: 'us-*'")
      ->type_name("GLOB")
      ->group(space);
  cmd->add_option("--nodes", opt->nodes, "Node counts: a range 8-64 or a list 8,16,32 (default: the scenario's)")
      ->type_name("RANGE|LIST")
      ->group(space);
  cmd->add_option("--space", opt->space,
                  "Layouts per shape: standard (as estimate's auto) or exhaustive (TP across nodes, every "
                  "micro-batch, ZeRO 2/3 with PP, overlap switches)")
      ->type_name("NAME")
      ->group(space);
  cmd->add_flag("--even-stages", opt->even_stages,
               "Only pipeline depths (with virtual stages) that divide the layers: every stage holds the same layers")
      ->group(space);
  cmd->add_option("--max-gpus", opt->max_gpus, "Skip cluster shapes with more GPUs (0 = no limit)")
      ->type_name("INT")
      ->group(space);
  cmd->add_option("--prices", opt->price_sheet,
                  "Price sheet (README: Keeping negotiated prices) merged over the catalog; replaces the "
                  "scenario's pricing.sheet")
      ->type_name("FILE")
      ->group(space);
  cmd->add_option("--price", opt->prices, "Price for an instance, USD per GPU-hour: tencent-hccpnv5=2.1 (repeatable)")
      ->type_name("ID=USD")
      ->group(space);
  cmd->add_option("--inter-node-gbps-per-gpu", opt->inter_node_gbps,
                  "Inter-node bandwidth per GPU, Gbit/s, for every offering (fills the catalog's unknowns)")
      ->type_name("GBPS")
      ->group(space);
  const char* goal = "Goal";
  cmd->add_option("--deadline-days", opt->deadline_days, "Time-to-train limit in days")->type_name("DAYS")->group(goal);
  cmd->add_option("--deadline-quantile", opt->deadline_quantile,
                  "Which time to train meets the deadline: p50 (the point estimate, the default) or p90 (the error "
                  "band's slow end, with failures)")
      ->type_name("p50|p90")
      ->group(goal);
  cmd->add_option("--budget-usd", opt->budget_usd, "Total cost limit in USD, e.g. 2.5M")->type_name("USD")->group(goal);
  cmd->add_option("--objective", opt->objective, "cheapest (meeting the deadline), fastest (within the budget) or pareto")
      ->type_name("NAME")
      ->group(goal);
  cmd->add_option("--top", opt->top, "Plans to list (default 5)")->type_name("K")->group(goal);
  cmd->add_flag("--all-layouts", opt->all_layouts, "List the top layouts even on the same shape (default: one per shape)")
      ->group(goal);
  cmd->add_option("--threads", opt->threads, "Worker threads (0 = all cores)")->type_name("N");
  cmd->add_option("--profile", opt->profile,
                  "Calibration profile (capplan calibrate --out) to price operations with; the datasheet model "
                  "outside its measured range. It applies to every offering searched, whatever its GPU")
      ->type_name("FILE");
  add_format_option(*cmd, opt->format, {"table", "json", "csv"});
  add_out_option(*cmd, opt->out);
  opt->flags.add(*cmd, FlagCommand::search);
  return Command{cmd, [opt, &global] { return run_search(*opt, global); }};
}

}  // namespace capplan::cli
