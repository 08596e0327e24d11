// SPDX-License-Identifier: Apache-2.0
// The tco section's fields (sim/tco/tco.hpp), below /tco: the years owned and the utilisation,
// the capital and its financing, power, space and staff. Amounts are in pricing.currency; the
// reader converts them and fills the node power's default (input/tco_io.cpp).
#include <string>

#include "capplan/data/fields.hpp"

namespace capplan::data {
namespace {

using nlohmann::json;

constexpr const char* kGroup = "TCO terms";
// An amount in pricing.currency: up to 1e13, beyond any fleet's cost.
constexpr double kMaxAmount = 1e13;
constexpr const char* kMaxAmountWhy = "beyond any fleet's cost";
constexpr const char* kFraction = "a share: no more than all of it";
constexpr const char* kYearsWhy = "beyond any hardware's life";

// An optional amount (null: unknown) stored in `member`.
#define CAPPLAN_AMOUNT(key, member, unit_, min_open_, help_, flag_, flag_help)                             \
  Field<sim::TcoInputs> {                                                                                  \
    {.pointer = key, .kind = FieldKind::number, .unit = unit_, .min = 0, .max = kMaxAmount,                \
     .min_open = min_open_, .help = help_, .bound = kMaxAmountWhy,                                         \
     .flag = {flag_, "AMOUNT", flag_help, kGroup, nullptr}, .nullable = true},                             \
        [](sim::TcoInputs& t, const json& v) { t.member = v.get<double>(); }                              \
  }

const Field<sim::TcoInputs> kTcoRows[] = {
    {{.pointer = "years",
      .kind = FieldKind::integer,
      .unit = "years",
      .min = 1,
      .max = 30,
      .help = "years the fleet is owned (1..30)",
      .bound = kYearsWhy,
      .flag = {"--years", "INT", "Years the fleet is owned", kGroup, nullptr},
      .required = true},
     [](sim::TcoInputs& t, const json& v) { t.years = static_cast<int>(v.get<double>()); }},
    {{.pointer = "utilisation",
      .min = 0,
      .max = 1,
      .min_open = true,
      .help = "share of the fleet's hours doing useful work, (0, 1]",
      .bound = kFraction,
      .flag = {"--utilisation", "FRACTION", "Share of the fleet's hours doing useful work, (0, 1]", kGroup, nullptr},
      .required = true},
     [](sim::TcoInputs& t, const json& v) { t.utilisation = v.get<double>(); }},
    CAPPLAN_AMOUNT("capex_per_node", usd_per_node, "per node in pricing.currency", true,
                   "purchase price of one node, in pricing.currency", "--capex-per-node",
                   "Purchase price of one node (pricing.currency)"),
    CAPPLAN_AMOUNT("network_capex_per_node", network_usd_per_node, "per node in pricing.currency", false,
                   "network (fabric, switches, cables) per node, in pricing.currency", "--network-capex-per-node",
                   "Network capital per node"),
    CAPPLAN_AMOUNT("storage_capex", storage_usd, "pricing.currency", false,
                   "storage system for the fleet, in pricing.currency", "--storage-capex",
                   "Storage capital for the fleet"),
    {{.pointer = "residual_fraction",
      .min = 0,
      .max = 1,
      .help = "resale value after the years owned, share of the capital (default 0)",
      .bound = kFraction,
      .flag = {"--residual-fraction", "FRACTION", "Resale value after the years owned (default 0)", kGroup, nullptr}},
     [](sim::TcoInputs& t, const json& v) { t.residual_fraction = v.get<double>(); }},
    {{.pointer = "interest_rate",
      .unit = "per year",
      .min = 0,
      .max = 1,
      .help = "annual interest rate of the loan (absent: bought outright)",
      .bound = "100% a year, beyond any loan",
      .flag = {"--interest-rate", "RATE", "Annual loan interest (absent: bought outright)", kGroup, nullptr},
      .nullable = true},
     [](sim::TcoInputs& t, const json& v) { t.interest_rate = v.get<double>(); }},
    {{.pointer = "loan_years",
      .kind = FieldKind::integer,
      .unit = "years",
      .min = 1,
      .max = 30,
      .help = "years of the loan (default: the years owned)",
      .bound = kYearsWhy,
      .flag = {"--loan-years", "INT", "Years of the loan (default: the years owned)", kGroup, nullptr},
      .nullable = true},
     [](sim::TcoInputs& t, const json& v) { t.loan_years = static_cast<int>(v.get<double>()); }},
    {{.pointer = "node_power_w",
      .unit = "W",
      .min = 0,
      .max = 1e6,
      .min_open = true,
      .help = "maximum system power of one node, W (default: the catalog's system power)",
      .bound = "a megawatt, beyond any node",
      .flag = {"--node-power-w", "W", "Maximum system power of one node (default: the catalog's)", kGroup, nullptr},
      .nullable = true},
     [](sim::TcoInputs& t, const json& v) { t.node_power_w = v.get<double>(); }},
    {{.pointer = "power_factor",
      .min = 0,
      .max = 1,
      .min_open = true,
      .help = "a busy node's mean draw as a share of its maximum power (default 1)",
      .bound = "no node draws more than its maximum",
      .flag = {"--power-factor", "FRACTION", "A busy node's mean draw / its maximum (default 1)", kGroup, nullptr}},
     [](sim::TcoInputs& t, const json& v) { t.power_factor = v.get<double>(); }},
    {{.pointer = "pue",
      .min = 1,
      .max = 5,
      .help = "power usage effectiveness (default: pricing.on_prem.pue, 1.58)",
      .bound = "no data centre uses less than its IT load, none five times it",
      .flag = {"--pue", "RATIO", "Power usage effectiveness (default 1.58)", kGroup, nullptr}},
     [](sim::TcoInputs& t, const json& v) { t.pue = v.get<double>(); }},
    {{.pointer = "price_per_kwh",
      .unit = "per kWh in pricing.currency",
      .min = 0,
      .max = 1e4,
      .help = "electricity price per kWh, in pricing.currency",
      .bound = "far beyond any electricity price",
      .flag = {"--price-per-kwh", "AMOUNT", "Electricity price per kWh", kGroup, nullptr},
      .nullable = true},
     [](sim::TcoInputs& t, const json& v) { t.usd_per_kwh = v.get<double>(); }},
    CAPPLAN_AMOUNT("space_per_kw_month", space_usd_per_kw_month, "per kW-month in pricing.currency", false,
                   "space (colocation) per provisioned kW and month, in pricing.currency", "--space-per-kw-month",
                   "Space per provisioned kW and month"),
    // No flag: the rack-unit spelling of the space price.
    {{.pointer = "space_per_rack_unit_month",
      .unit = "per rack unit-month in pricing.currency",
      .min = 0,
      .max = kMaxAmount,
      .help = "space per rack unit and month, in pricing.currency",
      .bound = kMaxAmountWhy,
      .nullable = true},
     [](sim::TcoInputs& t, const json& v) { t.space_usd_per_rack_unit_month = v.get<double>(); }},
    {{.pointer = "rack_units_per_node",
      .unit = "rack units",
      .min = 0,
      .max = 100,
      .min_open = true,
      .help = "height of one node in rack units (DGX H100: 8)",
      .bound = "taller than any rack",
      .nullable = true},
     [](sim::TcoInputs& t, const json& v) { t.rack_units_per_node = v.get<double>(); }},
    CAPPLAN_AMOUNT("staff_per_year", staff_usd_per_year, "per year in pricing.currency", false,
                   "operations staff and support per year, in pricing.currency", "--staff-per-year",
                   "Operations staff and support per year"),
};

#undef CAPPLAN_AMOUNT

}  // namespace

std::span<const Field<sim::TcoInputs>> tco_fields() { return kTcoRows; }

}  // namespace capplan::data
