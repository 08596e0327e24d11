// SPDX-License-Identifier: Apache-2.0
// The scenario's `tco` section and the output of `capplan tco` (README "Own versus rent"). The
// section's values are checked by its field table (input/fields/tco_fields.cpp).
#include "capplan/data/tco_io.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "capplan/data/currency.hpp"
#include "capplan/data/findings.hpp"
#include "capplan/data/format.hpp"
#include "input/fields/read_table.hpp"
#include "reading/json_reader.hpp"

namespace capplan::data {
namespace {

using detail::json;
using format::fixed;
using format::grouped;
using format::number;

}  // namespace

void check_tco_section(const json& section, std::string_view where, Diagnostics& diags) {
  detail::Reader r(std::string(where), diags);
  sim::TcoInputs ignored;
  fields_detail::read_rows(section, "/tco", tco_fields(), "", ignored, r);
}

Result<TcoRequest> tco_request(const json& doc, const ParsedScenario& parsed, const Catalogs& catalogs,
                               std::string_view where) {
  Diagnostics diags;
  detail::Reader r(std::string(where), diags);
  const auto it = doc.is_object() ? doc.find("tco") : doc.end();
  if (it == doc.end()) {
    return fail(r.where("/tco"),
                "required by capplan tco (years, utilisation, capex_per_node, price_per_kwh, ...; "
                "or --years and --utilisation) is missing");
  }
  sim::TcoInputs given;
  fields_detail::read_rows(*it, "/tco", tco_fields(), "", given, r);
  if (given.space_usd_per_kw_month && given.space_usd_per_rack_unit_month) {
    r.error("/tco/space_per_rack_unit_month", "give space per kW-month or per rack unit, not both");
  }
  if (has_errors(diags)) return std::unexpected(std::move(diags));

  const sim::Scenario& s = parsed.scenario;
  TcoRequest out;
  out.warnings = parsed.warnings;
  out.currency = s.pricing.currency;
  out.inputs = given;
  sim::TcoInputs& in = out.inputs;
  const double rate = out.currency.usd_per_unit;
  for (std::optional<double>* a :
       {&in.usd_per_node, &in.network_usd_per_node, &in.storage_usd, &in.usd_per_kwh, &in.space_usd_per_kw_month,
        &in.space_usd_per_rack_unit_month, &in.staff_usd_per_year}) {
    if (*a) **a *= rate;
  }
  const sim::Cluster& c = s.cluster;
  in.nodes = c.nodes();
  in.gpus_per_node = c.gpus_per_node;
  out.fleet = std::to_string(c.nodes()) + " x " + (c.instance_id.empty() ? "node" : c.instance_id) + " (" +
              std::to_string(c.gpus) + " x " + c.gpu.id + ")";

  // Node power: the section's, the scenario's on-prem one, else the catalog's system power.
  const sim::OnPremTerms& op = s.pricing.on_prem;
  if (!it->contains("pue")) in.pue = op.pue;
  if (in.node_power_w) {
    out.node_power_source = "tco.node_power_w";
  } else if (doc.contains(json::json_pointer("/pricing/on_prem/node_power_w")) && op.node_power_w) {
    in.node_power_w = op.node_power_w;
    out.node_power_source = "pricing.on_prem.node_power_w";
  } else if (auto p = default_node_power(catalogs, c)) {
    in.node_power_w = p->w;
    out.node_power_source = p->said;
    out.warnings.push_back(std::string(where) + "#/tco/node_power_w: not given: " + p->said);
  }

  // Renting the same work: the scenario's (or the catalog's) on-demand price, its reserved and spot rates.
  if (c.price_per_gpu) in.on_demand_usd_per_gpu_hour = units::to_usd_per_hour(*c.price_per_gpu);
  in.reserved_usd_per_gpu_hour = s.pricing.reserved.usd_per_gpu_hour;
  in.spot_usd_per_gpu_hour = s.pricing.spot.usd_per_gpu_hour;
  return out;
}

Result<TcoRequest> serving_tco_request(const json& doc, const ParsedScenario& parsed, const Catalogs& catalogs,
                                       std::string_view where) {
  auto request = serve_request(doc, parsed, catalogs, where);
  if (!request) return std::unexpected(std::move(request.error()));
  const ServeResult planned = plan_request(*request);
  const ServeOption& chosen = planned.recommended();
  if (!chosen.plan.feasible) {
    std::string why = "no layout meets the serving target; " + sim::layout_name(chosen.job);
    if (chosen.plan.reason) why += ": " + render(*chosen.plan.reason);
    return fail(std::string(where) + "#/workload", why);
  }
  // The fleet: the chosen layout's cluster (its instance, GPU and price), as many whole nodes as
  // the replicas occupy.
  ParsedScenario fleet = parsed;
  sim::Cluster& c = fleet.scenario.cluster;
  c = chosen.cluster;
  c.gpus = chosen.plan.instances * c.gpus_per_node;
  auto out = tco_request(doc, fleet, catalogs, where);
  if (!out) return out;
  // The serving request's warnings (the scenario's among them, which tco_request has already).
  for (const auto& w : request->warnings) {
    if (std::find(out->warnings.begin(), out->warnings.end(), w) == out->warnings.end()) out->warnings.push_back(w);
  }
  out->serving = ServingFleet{request->model_id, sim::layout_name(chosen.job), chosen.plan.replicas, chosen.plan.gpus,
                              chosen.plan.instances};
  out->fleet += " serving " + request->model_id + ": " + std::to_string(chosen.plan.replicas) + " x " +
                sim::layout_name(chosen.job) + " on " + std::to_string(chosen.plan.gpus) + " GPUs";
  return out;
}

namespace {

json money_or_null(const std::optional<double>& usd, const sim::Currency& c) {
  return usd ? number(from_usd(*usd, c)) : json(nullptr);
}

}  // namespace

json tco_to_json(const sim::Tco& t, const TcoRequest& r) {
  const sim::Currency& c = r.currency;
  const sim::TcoInputs& in = r.inputs;
  auto m = [&](double usd) { return number(from_usd(usd, c)); };
  json years = json::array();
  for (const sim::TcoYear& y : t.per_year) {
    years.push_back({{"year", y.year},
                     {"depreciation", m(y.depreciation)},
                     {"interest", m(y.interest)},
                     {"energy", m(y.energy)},
                     {"space", m(y.space)},
                     {"staff", m(y.staff)},
                     {"total", m(y.total)}});
  }
  json rent = json::array();
  for (const sim::RentOption& o : t.rent) {
    rent.push_back({{"purchase", o.name},
                    {"per_gpu_hour", money_or_null(o.usd_per_gpu_hour, c)},
                    {"total", money_or_null(o.total, c)},
                    {"break_even_utilisation", number(o.break_even_utilisation)}});
  }
  json out = {
      {"command", "tco"},
      {"currency", c.code},
      {"usd_per_unit", number(c.usd_per_unit)},
      {"fleet",
       {{"nodes", in.nodes},
        {"gpus_per_node", in.gpus_per_node},
        {"gpus", in.nodes * in.gpus_per_node},
        {"description", r.fleet},
        {"node_power_w", number(in.node_power_w)},
        {"node_power_source", r.node_power_source},
        {"provisioned_kw", number(t.provisioned_kw)}}},
      {"years", in.years},
      {"utilisation", number(in.utilisation)},
      {"capital", m(t.capital)},
      {"residual", m(t.residual)},
      {"loan_payment_per_year", m(t.loan_payment)},
      {"loan_years", t.loan_years},
      {"interest", m(t.interest)},
      {"pue", number(in.pue)},
      {"power_factor", number(in.power_factor)},
      {"energy_kwh_per_year", number(t.energy_kwh_per_year)},
      {"per_year", years},
      {"useful_gpu_hours", number(t.useful_gpu_hours)},
      {"own_total", money_or_null(t.own_total, c)},
      {"own_fixed", money_or_null(t.own_fixed, c)},
      {"own_energy_at_full_utilisation", money_or_null(t.own_energy_at_full, c)},
      {"own_per_useful_gpu_hour", money_or_null(t.own_usd_per_useful_gpu_hour, c)},
      {"rent", rent},
      {"missing_inputs", t.missing},
      {"warnings", r.warnings},
  };
  if (r.serving) {
    out["serving"] = {{"model", r.serving->model},
                      {"layout", r.serving->layout},
                      {"replicas", r.serving->replicas},
                      {"gpus", r.serving->gpus},
                      {"instances", r.serving->instances}};
  }
  format::stamp(out);
  return out;
}

std::string tco_to_table(const sim::Tco& t, const TcoRequest& r) {
  const sim::Currency& c = r.currency;
  const sim::TcoInputs& in = r.inputs;
  auto cash = [&](double usd) { return money(usd, c); };
  auto cash_or = [&](const std::optional<double>& usd) { return usd ? cash(*usd) : std::string("unknown"); };
  auto pct = [](double u) { return fixed(100.0 * u, 1) + "%"; };
  auto rate_of = [&](const std::optional<double>& usd) {
    return usd ? money_prefix(c) + fixed(from_usd(*usd, c), 2) : std::string("unknown");
  };
  std::string s;
  auto line = [&](const std::string& text) { s += text + "\n"; };
  auto row = [&](const std::string& label, const std::string& value) {
    std::string l = "  " + label;
    if (l.size() < 28) l.resize(28, ' ');
    line(l + value);
  };
  line("Own versus rent: " + r.fleet + ", owned " + std::to_string(in.years) + " years at " + pct(in.utilisation) +
       " utilisation");
  if (!c.is_usd()) line("  amounts in " + rate_text(c));
  line("");
  line("Owning");
  row("capital", cash(t.capital) + " (nodes, network, storage); residual " + cash(t.residual));
  row("financing", t.loan_years > 0 ? pct(*in.interest_rate) + " over " + std::to_string(t.loan_years) +
                                          " years: " + cash(t.loan_payment) + " a year, interest " + cash(t.interest)
                                    : std::string("none (bought outright)"));
  row("power", in.node_power_w
                   ? fixed(t.provisioned_kw, 1) + " kW provisioned, PUE " + fixed(in.pue, 2) + ", power factor " +
                         fixed(in.power_factor, 2) + ": " + grouped(t.energy_kwh_per_year) + " kWh a year"
                   : std::string("unknown"));
  s += "\n    year  depreciation      interest        energy         space         staff         total\n";
  for (const sim::TcoYear& y : t.per_year) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "    %4d  %12s  %12s  %12s  %12s  %12s  %12s\n", y.year,
                  cash(y.depreciation).c_str(), cash(y.interest).c_str(), cash(y.energy).c_str(), cash(y.space).c_str(),
                  cash(y.staff).c_str(), cash(y.total).c_str());
    s += buf;
  }
  line("");
  row("own total", cash_or(t.own_total) + " for " + grouped(t.useful_gpu_hours) + " useful GPU-hours");
  row("own per useful GPU-hour", rate_of(t.own_usd_per_useful_gpu_hour));
  line("");
  line("Renting the same GPU-hours");
  for (const sim::RentOption& o : t.rent) {
    std::string text = rate_of(o.usd_per_gpu_hour) + " /GPU-h";
    if (o.total) {
      text += ": " + cash(*o.total);
      if (o.break_even_utilisation) {
        text += "; owning is cheaper above " + pct(*o.break_even_utilisation) + " utilisation";
      } else if (t.own_total) {
        text += "; owning never breaks even at this rate";
      }
    } else {
      text += " (give " + o.field + ")";
    }
    row(o.name, text);
  }
  if (!t.missing.empty()) {
    line("");
    std::string list;
    for (const auto& f : t.missing) list += (list.empty() ? "" : ", ") + f;
    line("Missing (not invented; the parts they price are left out): " + list);
  }
  if (!r.warnings.empty()) {
    line("");
    for (const auto& w : r.warnings) line("warning: " + w);
  }
  return s;
}

std::string tco_to_csv(const sim::Tco& t, const TcoRequest& r) {
  const sim::Currency& c = r.currency;
  auto cell = [&](double usd) { return format::number(from_usd(usd, c)).dump(); };
  std::string s = "year,currency,depreciation,interest,energy,space,staff,total\n";
  for (const sim::TcoYear& y : t.per_year) {
    s += std::to_string(y.year) + "," + c.code + "," + cell(y.depreciation) + "," + cell(y.interest) + "," +
         cell(y.energy) + "," + cell(y.space) + "," + cell(y.staff) + "," + cell(y.total) + "\n";
  }
  s += "total," + c.code + ",,,,,," + (t.own_total ? cell(*t.own_total) : std::string()) + "\n";
  return s;
}

}  // namespace capplan::data
