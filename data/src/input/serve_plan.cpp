// SPDX-License-Identifier: Apache-2.0
// capplan serve's pipeline: a serve scenario read (serve_io.cpp), its layouts planned
// (sim::plan_serve_options), and a training estimate followed by months of serving.
#include <algorithm>
#include <string>
#include <utility>

#include "capplan/data/cost_model.hpp"
#include "capplan/data/findings.hpp"
#include "capplan/data/price_sheet.hpp"
#include "capplan/data/serve_io.hpp"
#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/search/search.hpp"
#include "output/serve_words.hpp"

namespace capplan::data {

using nlohmann::json;
using sim::layout_name;
using serve_words::explain_choice;
using serve_words::reason_text;

const ServeOption& ServeResult::recommended() const {
  if (!options.empty() && options.front().plan.feasible) return options.front();
  return asked;
}

ServeResult plan_request(const ServeRequest& r, const sim::Profile* profile, int curve_points) {
  sim::ServePlanRequest ask;
  ask.job = r.job;
  ask.cluster = r.cluster;
  ask.compare = r.compare;
  ask.offerings = r.offerings;
  ask.engines = r.engines;
  ask.curve_points = curve_points;
  // Each engine's assumptions (CUDA-graph kernel gaps) hold for its layouts.
  const sim::ServeCostFactory cost = [profile](const sim::Cluster& c, const sim::EngineSpec& e) {
    return make_cost_model(c, profile, sim::serving_assumptions(e));
  };
  sim::ServePlanning planned = sim::plan_serve_options(ask, cost);
  ServeResult out;
  out.asked = std::move(planned.asked);
  out.options = std::move(planned.options);
  out.pareto = std::move(planned.pareto);
  out.curve = std::move(planned.curve);
  out.cost_model = std::move(planned.cost_source);
  out.explanation = explain_choice(out.options);
  return out;
}

Result<ServePlanned> plan_serve_document(const json& doc, const Catalogs& catalogs, std::string_view scenario_file,
                                         const std::string& sheet_file, const sim::Profile* profile, int curve_points,
                                         std::string_view where, const OfferingFilter* offerings,
                                         const std::vector<std::string>& engines) {
  ServePlanned out;
  auto priced = parse_priced_scenario(doc, catalogs, scenario_file, sheet_file, where);
  if (!priced) return std::unexpected(std::move(priced.error()));
  out.sheet = priced->sheet;
  const Catalogs& used = priced->catalogs(catalogs);
  const ParsedScenario& parsed = priced->parsed;
  if (parsed.scenario.workload.kind != sim::WorkloadKind::serve) {
    return std::unexpected(Diagnostics{{.where = std::string(where) + "#/workload/kind",
                                        .message = "capplan serve plans a serve workload; got '" +
                                                   std::string(to_string(parsed.scenario.workload.kind)) +
                                                   "' (capplan estimate plans training)"}});
  }
  auto request = serve_request(doc, parsed, used, where);
  if (!request) return std::unexpected(std::move(request.error()));
  for (auto& n : priced->sheet_notes) request->warnings.push_back(std::move(n));
  if (request->job.pricing.model != sim::PurchaseModel::on_demand) {
    for (const auto& field : sim::serve_cost_missing(request->job.pricing, request->cluster)) {
      request->warnings.push_back(render(sim::finding(sim::FindingCode::cost_input_unknown, field)));
    }
  }
  for (const auto& id : engines) {
    const EngineEntry* e = used.find_engine(id);
    if (e == nullptr) {
      return std::unexpected(Diagnostics{{.where = "--engines",
                                          .message = "unknown engine '" + id + "' (" + suggest(id, used.engine_ids()) + ")"}});
    }
    request->engines.push_back(e->spec);
    request->compare = true;
  }
  if (offerings != nullptr) {
    auto list = offerings_from_catalog(used, *offerings);
    if (!list) return std::unexpected(std::move(list.error()));
    request->offerings = std::move(list->offerings);
    for (auto& n : list->notes) request->warnings.push_back(std::move(n));
    request->compare = true;
  }
  if (profile != nullptr && !sim::profile_measured_on(*profile, request->cluster.gpu)) {
    request->warnings.push_back("profile: measured on " + profile->context_value("device") + ", not on " +
                                request->cluster.gpu.id + "; the datasheet model prices what it did not measure");
  }
  out.result = plan_request(*request, profile, curve_points);
  out.request = std::move(*request);
  return out;
}

void train_then_serve(ServeResult& result, const ServeRequest& r, const ParsedScenario& training,
                      const sim::Estimate& estimate, int months) {
  TrainThenServe t;
  const sim::Scenario& s = training.scenario;
  t.training_workload = to_string(s.workload.kind);
  t.training_model = s.model.name.empty() ? training.model_id : s.model.name;
  t.training_gpus = static_cast<int>(std::min<long long>(s.cluster.gpus, 1 << 30));
  const double wall_s = sim::plan_time(estimate).base();
  t.training_days = wall_s / 86400.0;
  t.training_gpu_hours = wall_s * static_cast<double>(s.cluster.gpus) / 3600.0;
  if (const auto c = sim::plan_cost(estimate)) t.training_usd = c->base();
  const ServeOption& o = result.recommended();
  t.serving_layout = layout_name(o.job);
  t.serving_gpus = o.plan.gpus;
  t.serving_gpu_hours_per_month = o.plan.gpu_hours_per_month;
  t.serving_usd_per_month = o.plan.usd_per_month;
  t.months = std::max(months, 1);
  std::optional<double> total = t.training_usd;
  t.cumulative_usd.push_back(total);
  for (int m = 1; m <= t.months; ++m) {
    if (total && t.serving_usd_per_month) {
      *total += *t.serving_usd_per_month;
    } else {
      total.reset();
    }
    t.cumulative_usd.push_back(total);
  }
  t.total_usd = total;
  if (!o.plan.feasible) t.notes.push_back("the serving layout is not feasible: " + reason_text(o.plan));
  if (!t.training_usd) t.notes.push_back("the training scenario has no price: its cost and the total are unknown");
  if (!t.serving_usd_per_month) t.notes.push_back("the serving scenario has no price: the serving cost and the total are unknown");
  if (s.model.name != r.job.model.name) {
    t.notes.push_back("the training scenario's model (" + t.training_model + ") is not the served model (" +
                      (r.job.model.name.empty() ? r.model_id : r.job.model.name) + ")");
  }
  if (s.cluster.gpu.id != r.cluster.gpu.id) {
    t.notes.push_back("trained on " + s.cluster.gpu.id + ", served on " + r.cluster.gpu.id);
  }
  if (!(s.pricing.currency == r.currency) && s.pricing.currency.code != r.currency.code) {
    t.notes.push_back("the training scenario prices in " + s.pricing.currency.code + ": its cost is converted to " +
                      r.currency.code + " through US dollars");
  }
  result.lifecycle = std::move(t);
}

}  // namespace capplan::data
