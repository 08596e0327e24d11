// SPDX-License-Identifier: Apache-2.0
// Own versus rent over years; the formulas are written out in docs/model.md ("Own versus rent").
#include "capplan/sim/tco/tco.hpp"

#include <algorithm>
#include <cmath>

namespace capplan::sim {

namespace {

constexpr double kHoursPerYear = 8760.0;

}  // namespace

double annuity_payment(double principal, double rate, int years) {
  if (years <= 0) return principal;
  if (rate == 0.0) return principal / years;
  return principal * rate / (1.0 - std::pow(1.0 + rate, -years));
}

std::optional<double> break_even_utilisation(double fixed, double energy_at_full, double gpu_hours, double rate) {
  const double margin = rate * gpu_hours - energy_at_full;
  if (!(margin > 0)) return std::nullopt;
  const double u = fixed / margin;
  if (u > 1.0) return std::nullopt;
  return u;
}

Tco tco(const TcoInputs& in) {
  Tco out;
  auto need = [&](const char* field) { out.missing.emplace_back(field); };
  const double n = in.nodes, years = in.years, u = in.utilisation;
  bool known = true;

  // Capital: the nodes, their network and the storage; depreciated straight-line to the residual.
  if (in.usd_per_node) {
    out.capital += n * *in.usd_per_node;
  } else {
    need("tco.capex_per_node");
    known = false;
  }
  if (in.network_usd_per_node) {
    out.capital += n * *in.network_usd_per_node;
  } else {
    need("tco.network_capex_per_node");
  }
  if (in.storage_usd) {
    out.capital += *in.storage_usd;
  } else {
    need("tco.storage_capex");
  }
  out.residual = out.capital * in.residual_fraction;
  const double depreciation = (out.capital - out.residual) / years;

  // Financing: an annuity over the loan's years; the balance left at the end of the period is
  // repaid then (principal, already in the depreciation), so only the interest of the N years counts.
  std::vector<double> interest(in.years, 0.0);
  if (in.interest_rate) {
    out.loan_years = in.loan_years.value_or(in.years);
    out.loan_payment = annuity_payment(out.capital, *in.interest_rate, out.loan_years);
    double balance = out.capital;
    for (int y = 0; y < std::min(in.years, out.loan_years); ++y) {
      interest[y] = balance * *in.interest_rate;
      balance -= out.loan_payment - interest[y];
      out.interest += interest[y];
    }
  }

  // Energy: system power x PUE x the busy hours x the power factor; idle nodes are not charged.
  double energy_full = 0;  // per year at U = 1
  if (in.node_power_w) {
    out.provisioned_kw = n * *in.node_power_w / 1000.0;
    out.energy_kwh_per_year = out.provisioned_kw * in.pue * kHoursPerYear * u * in.power_factor;
    if (in.usd_per_kwh) {
      energy_full = out.provisioned_kw * in.pue * kHoursPerYear * in.power_factor * *in.usd_per_kwh;
    } else {
      need("tco.price_per_kwh");
      known = false;
    }
  } else {
    need("tco.node_power_w");
    known = false;
  }

  // Space: per provisioned kW, or per rack unit; paid whether used or not.
  double space = 0;
  if (in.space_usd_per_kw_month) {
    space = out.provisioned_kw * *in.space_usd_per_kw_month * 12.0;
  } else if (in.space_usd_per_rack_unit_month && in.rack_units_per_node) {
    space = n * *in.rack_units_per_node * *in.space_usd_per_rack_unit_month * 12.0;
  } else if (in.space_usd_per_rack_unit_month) {
    need("tco.rack_units_per_node");
  } else {
    need("tco.space_per_kw_month");
  }
  const double staff = in.staff_usd_per_year.value_or(0.0);
  if (!in.staff_usd_per_year) need("tco.staff_per_year");

  for (int y = 0; y < in.years; ++y) {
    TcoYear row;
    row.year = y + 1;
    row.depreciation = depreciation;
    row.interest = interest[y];
    row.energy = energy_full * u;
    row.space = space;
    row.staff = staff;
    row.total = row.depreciation + row.interest + row.energy + row.space + row.staff;
    out.per_year.push_back(row);
  }

  out.gpu_hours_per_year = n * in.gpus_per_node * kHoursPerYear;
  const double fleet_hours = out.gpu_hours_per_year * years;
  out.useful_gpu_hours = fleet_hours * u;
  std::optional<double> fixed;
  if (known) {
    fixed = (out.capital - out.residual) + out.interest + (space + staff) * years;
    out.own_fixed = fixed;
    out.own_energy_at_full = energy_full * years;
    out.own_total = *fixed + energy_full * years * u;
    out.own_usd_per_useful_gpu_hour = *out.own_total / out.useful_gpu_hours;
  }

  // Renting the same useful GPU-hours at each rate.
  const struct {
    const char* name;
    const char* field;
    const std::optional<double>* rate;
  } options[] = {
      {"on_demand", "pricing.usd_per_gpu_hour", &in.on_demand_usd_per_gpu_hour},
      {"reserved", "pricing.reserved.usd_per_gpu_hour", &in.reserved_usd_per_gpu_hour},
      {"spot", "pricing.spot.usd_per_gpu_hour", &in.spot_usd_per_gpu_hour},
  };
  for (const auto& o : options) {
    RentOption r;
    r.name = o.name;
    r.field = o.field;
    r.usd_per_gpu_hour = *o.rate;
    if (*o.rate) {
      r.total = out.useful_gpu_hours * **o.rate;
      if (fixed) r.break_even_utilisation = break_even_utilisation(*fixed, energy_full * years, fleet_hours, **o.rate);
    } else {
      need(o.field);
    }
    out.rent.push_back(r);
  }
  return out;
}

}  // namespace capplan::sim
