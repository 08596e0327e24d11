// SPDX-License-Identifier: Apache-2.0
// Own versus rent over years (`capplan tco`): a fleet of nodes bought, financed, depreciated,
// powered, housed and staffed for N years at utilisation U, against renting the same useful
// GPU-hours on demand, reserved or on spot; and the utilisation at which owning breaks even.
//
// Contract: pure functions of plain inputs; every amount is in US dollars (data/ converts the
// user's currency both ways, as for `estimate`). A price the user did not give is never guessed:
// it is listed in Tco::missing by its scenario field, and the part it prices is left out (or, for
// the purchase price and electricity, the own cost is empty). Formulas: docs/model.md ("Own versus
// rent").
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace capplan::sim {

struct TcoInputs {
  int nodes = 0;
  int gpus_per_node = 0;
  int years = 0;           // ownership period N (whole years)
  double utilisation = 0;  // U: share of the fleet's hours doing useful work, (0, 1]

  // Capital: depreciated straight-line over N years down to residual_fraction, and financed.
  std::optional<double> usd_per_node;          // purchase price of one node
  std::optional<double> network_usd_per_node;  // fabric, switches and cables per node
  std::optional<double> storage_usd;           // storage system for the fleet
  double residual_fraction = 0;                // resale value after N years, share of the capital
  std::optional<double> interest_rate;         // annual; empty: bought outright (no financing)
  std::optional<int> loan_years;               // annuity term; default N

  // Running costs.
  std::optional<double> node_power_w;  // maximum system power of one node
  double pue = 1.0;
  double power_factor = 1.0;  // a busy node's mean draw / its maximum power
  std::optional<double> usd_per_kwh;
  std::optional<double> space_usd_per_kw_month;         // space priced per provisioned kW (IT load)
  std::optional<double> space_usd_per_rack_unit_month;  // or per rack unit,
  std::optional<double> rack_units_per_node;            // with the nodes' height
  std::optional<double> staff_usd_per_year;

  // Renting the same useful GPU-hours.
  std::optional<double> on_demand_usd_per_gpu_hour;
  std::optional<double> reserved_usd_per_gpu_hour;
  std::optional<double> spot_usd_per_gpu_hour;
};

struct TcoYear {
  int year = 0;
  double depreciation = 0;
  double interest = 0;
  double energy = 0;
  double space = 0;
  double staff = 0;
  double total = 0;
};

struct RentOption {
  std::string name;   // on_demand, reserved, spot
  std::string field;  // the scenario field of its rate
  std::optional<double> usd_per_gpu_hour;
  std::optional<double> total;  // the useful GPU-hours of N years at that rate
  // Utilisation above which owning costs less per useful GPU-hour than this rate; empty when
  // owning never does (the rate is below the running cost) or a price is unknown.
  std::optional<double> break_even_utilisation;
};

struct Tco {
  double capital = 0;       // nodes x (purchase + network) + storage (known parts)
  double residual = 0;      // capital x residual_fraction
  double loan_payment = 0;  // annual annuity payment; 0 when not financed
  int loan_years = 0;
  double interest = 0;  // paid within the N years (the balance is repaid at the end)
  double energy_kwh_per_year = 0;
  double provisioned_kw = 0;  // nodes x node power
  std::vector<TcoYear> per_year;
  double gpu_hours_per_year = 0;             // fleet GPUs x 8,760
  double useful_gpu_hours = 0;               // over N years: x U
  std::optional<double> own_total;           // empty when the purchase price or electricity is unknown
  std::optional<double> own_fixed;           // the part that does not grow with U
  std::optional<double> own_energy_at_full;  // energy over N years at U = 1
  std::optional<double> own_usd_per_useful_gpu_hour;
  std::vector<RentOption> rent;
  std::vector<std::string> missing;  // scenario fields to give ("tco.staff_per_year")
};

// Annual payment of an annuity: P r / (1 - (1 + r)^-n); P / n when r = 0.
double annuity_payment(double principal, double rate, int years);

// Utilisation at which own cost per useful GPU-hour, (F + E U) / (U H), equals `rate`:
// U* = F / (rate H - E), with F the fixed cost, E the energy at U = 1 and H the fleet's GPU-hours
// over the period; empty when rate H <= E (owning never breaks even) or U* > 1.
std::optional<double> break_even_utilisation(double fixed, double energy_at_full, double gpu_hours, double rate);

Tco tco(const TcoInputs& in);

}  // namespace capplan::sim
