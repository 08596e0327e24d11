// SPDX-License-Identifier: Apache-2.0
// The pricing section's fields (sim/workload/pricing.hpp), below /pricing: the price per GPU-hour
// or node-hour, the purchase model, the currency, and the spot, reserved and on-premises terms.
#include <string>

#include "capplan/data/fields.hpp"

namespace capplan::data {
namespace {

using nlohmann::json;

constexpr const char* kGroup = "Pricing";
constexpr const char* kPurchaseModels[] = {"on_demand", "spot", "reserved", "on_prem"};

// A price per GPU-hour: up to 1e5 (far beyond any GPU's rent).
constexpr double kMaxPerGpuHour = 1e5;
constexpr const char* kMaxPriceWhy = "far beyond any GPU's price";
constexpr const char* kPerGpuHour = "per GPU-hour in pricing.currency";
constexpr const char* kFraction = "a share: no more than all of it";

// A price per GPU-hour below `key`, stored in `member` (converted to US dollars by the reader).
#define CAPPLAN_GPU_HOUR(key, member, help_, flag_, flag_help, search, terms)                               \
  Field<sim::PricingTerms> {                                                                               \
    {.pointer = key, .kind = FieldKind::number, .unit = kPerGpuHour, .min = 0, .max = kMaxPerGpuHour,      \
     .help = help_, .bound = kMaxPriceWhy, .flag = {flag_, "USD", flag_help, kGroup, search},              \
     .nullable = true, .applies = terms.applies, .unused = terms.unused},                                  \
        [](sim::PricingTerms& t, const json& v) { t.member = v.get<double>(); }                           \
  }

// The spot, reserved and on-premises terms: used under their purchase model, and by capplan tco
// (a tco section) to compare owning with renting.
struct Terms {
  bool (*applies)(const FieldUse&);
  const char* unused;
};
template <sim::PurchaseModel M>
bool chosen(const FieldUse& u) {
  return u.tco || u.scenario.pricing.model == M;
}
constexpr Terms kSpot{chosen<sim::PurchaseModel::spot>, "spot terms apply only with pricing.purchase spot"};
constexpr Terms kReserved{chosen<sim::PurchaseModel::reserved>,
                          "reserved terms apply only with pricing.purchase reserved"};
constexpr Terms kOnPrem{chosen<sim::PurchaseModel::on_prem>,
                        "on-premises terms apply only with pricing.purchase on_prem"};

const Field<sim::PricingTerms> kPricingRows[] = {
    // Read by hand: which of the two applies, and the cluster's GPUs per node (input/scenario/pricing.cpp).
    {{.pointer = "usd_per_gpu_hour",
      .unit = kPerGpuHour,
      .min = 0,
      .max = kMaxPerGpuHour,
      .help = "price per GPU-hour (overrides the catalog), in pricing.currency",
      .bound = kMaxPriceWhy,
      .flag = {"--usd-per-gpu-hour", "USD", "Price per GPU-hour (overrides the catalog)", kGroup,
               "Price per GPU-hour of the scenario's own instance (others: catalog or --price)"}}},
    {{.pointer = "usd_per_node_hour",
      .unit = "per node-hour in pricing.currency",
      .min = 0,
      .max = kMaxPerGpuHour * 1024,
      .help = "price per node-hour (overrides the catalog), in pricing.currency",
      .bound = "the GPU-hour limit times 1024 GPUs per node",
      .flag = {"--usd-per-node-hour", "USD", "Price per node-hour (overrides the catalog)", kGroup,
               "Price per node-hour of the scenario's own instance (others: catalog or --price)"}}},
    {{.pointer = "purchase",
      .kind = FieldKind::choice,
      .help = "purchase model (default on_demand)",
      .flag = {"--purchase", "NAME", "on_demand (default), spot, reserved or on_prem", kGroup,
               "on_demand (default), spot, reserved or on_prem, for every offering: one without a price of that "
               "model (its own terms, or a catalog price of that type) has an unknown cost"},
      .choices = kPurchaseModels,
      .noun = "purchase model"},
     [](sim::PricingTerms& t, const json& v) { t.model = *sim::purchase_model_from_string(v.get<std::string>()); }},
    // The currency and its rate: read by hand (a known ISO code, a rate only with another currency).
    {{.pointer = "currency",
      .kind = FieldKind::text,
      .help = "ISO 4217 code the prices of this section are in (default USD); the usd_ keys keep their names",
      .flag = {"--currency", "CODE", "ISO 4217 code the prices of the pricing section (and its flags) are in (default USD)",
               kGroup, "ISO 4217 code of the scenario's own prices (pricing section and its flags; default USD)"},
      .pattern = "^[A-Z]{3}$"}},
    {{.pointer = "usd_per_unit",
      .unit = "USD per unit of pricing.currency",
      .min = 0,
      .max = 1e6,
      .min_open = true,
      .help = "US dollars for one unit of currency (required for a currency other than USD)",
      .bound = "beyond any currency's value",
      .flag = {"--usd-per-unit", "RATE", "US dollars per unit of --currency, e.g. 0.14", kGroup,
               "US dollars per unit of --currency, e.g. 0.14 (the scenario's own prices)"}}},
    {{.pointer = "usd_per_unit_date",
      .kind = FieldKind::text,
      .help = "day the rate was read",
      .flag = {"--usd-per-unit-date", "DATE", "Day the rate was read, YYYY-MM-DD", kGroup,
               "Day the rate was read, YYYY-MM-DD"},
      .pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}},
    CAPPLAN_GPU_HOUR("spot/usd_per_gpu_hour", spot.usd_per_gpu_hour, "spot price per GPU-hour, in pricing.currency",
                     "--spot-usd-per-gpu-hour", "Spot price per GPU-hour",
                     "Spot price per GPU-hour of the scenario's own instance", kSpot),
    {{.pointer = "spot/preemptions_per_node_hour",
      .unit = "per node-hour",
      .min = 0,
      .max = 1,
      .help = "probability that a node is preempted in an hour",
      .bound = "a probability",
      .flag = {"--spot-preemptions-per-node-hour", "FRACTION", "Probability a spot node is preempted in an hour (0..1)",
               kGroup, "Probability a spot node is preempted in an hour (0..1); every offering under spot"},
      .nullable = true,
      .applies = kSpot.applies,
      .unused = kSpot.unused},
     [](sim::PricingTerms& t, const json& v) { t.spot.preemptions_per_node_hour = v.get<double>(); }},
    CAPPLAN_GPU_HOUR("reserved/usd_per_gpu_hour", reserved.usd_per_gpu_hour,
                     "committed price per GPU-hour, in pricing.currency", "--reserved-usd-per-gpu-hour",
                     "Reserved (committed) price per GPU-hour",
                     "Reserved (committed) price per GPU-hour of the scenario's own instance", kReserved),
    {{.pointer = "reserved/term_months",
      .unit = "months",
      .min = 0,
      .max = 240,
      .min_open = true,
      .help = "commitment term, months (paid whether used or not)",
      .bound = "20 years, beyond any commitment",
      .flag = {"--reserved-term-months", "MONTHS", "Commitment term, paid whether used or not", kGroup,
               "Commitment term, paid whether used or not; every offering under reserved"},
      .nullable = true,
      .applies = kReserved.applies,
      .unused = kReserved.unused},
     [](sim::PricingTerms& t, const json& v) { t.reserved.term_hours = v.get<double>() * 8760.0 / 12.0; }},
    CAPPLAN_GPU_HOUR("reserved/idle_usd_per_gpu_hour", reserved.idle_usd_per_gpu_hour,
                     "rate for committed but unused GPU-hours, in pricing.currency (default: the reserved rate)",
                     "--reserved-idle-usd-per-gpu-hour",
                     "Rate for committed but unused GPU-hours (default: the reserved rate)",
                     "Rate for committed but unused GPU-hours of the scenario's own instance", kReserved),
    {{.pointer = "reserved/committed_gpus",
      .kind = FieldKind::integer,
      .unit = "GPUs",
      .min = 1,
      .max = 1e6,
      .help = "GPUs committed (default: the cluster's GPUs and hot spares)",
      .bound = "the scenario's limit on GPUs",
      .flag = {"--reserved-committed-gpus", "INT", "GPUs committed (default: the cluster's)", kGroup,
               "GPUs committed on the scenario's own instance (default: each plan's)"},
      .nullable = true,
      .applies = kReserved.applies,
      .unused = kReserved.unused},
     [](sim::PricingTerms& t, const json& v) { t.reserved.committed_gpus = static_cast<int>(v.get<double>()); }},
    {{.pointer = "reserved/utilisation",
      .min = 0,
      .max = 1,
      .min_open = true,
      .help = "share of the committed capacity's term doing useful work; a run pays its share (default 1)",
      .bound = kFraction,
      .flag = {"--reserved-utilisation", "FRACTION",
               "Share of the committed term doing useful work; a run pays its share (default 1)", kGroup,
               "Share of the committed term doing useful work; a run pays its share (default 1); every offering "
               "under reserved"},
      .applies = kReserved.applies,
      .unused = kReserved.unused},
     [](sim::PricingTerms& t, const json& v) { t.reserved.utilisation = v.get<double>(); }},
    {{.pointer = "on_prem/usd_per_node",
      .unit = "per node in pricing.currency",
      .min = 0,
      .max = 1e9,
      .min_open = true,
      .help = "purchase price of one node, in pricing.currency",
      .bound = "far beyond any node's price",
      .flag = {"--on-prem-usd-per-node", "USD", "Purchase price of one node", kGroup,
               "Purchase price of one node of the scenario's own instance"},
      .nullable = true,
      .applies = kOnPrem.applies,
      .unused = kOnPrem.unused},
     [](sim::PricingTerms& t, const json& v) { t.on_prem.usd_per_node = v.get<double>(); }},
    {{.pointer = "on_prem/amortisation_years",
      .unit = "years",
      .min = 0,
      .max = 50,
      .min_open = true,
      .help = "years over which the purchase is written off",
      .bound = "beyond any hardware's life",
      .flag = {"--on-prem-amortisation-years", "YEARS", "Years over which the purchase is written off", kGroup,
               "Years over which a purchase is written off; every offering under on_prem"},
      .nullable = true,
      .applies = kOnPrem.applies,
      .unused = kOnPrem.unused},
     [](sim::PricingTerms& t, const json& v) { t.on_prem.amortisation_years = v.get<double>(); }},
    {{.pointer = "on_prem/node_power_w",
      .unit = "W",
      .min = 0,
      .max = 1e6,
      .min_open = true,
      .help = "power of one node under load, W (default: the catalog's system power, else GPU TDP x GPUs per node)",
      .bound = "a megawatt, beyond any node",
      .flag = {"--on-prem-node-power-w", "W",
               "Power of one node under load (default: the catalog's system power, else GPU TDP x GPUs)", kGroup,
               "Power of one node of the scenario's own instance under load"},
      .nullable = true,
      .applies = kOnPrem.applies,
      .unused = kOnPrem.unused},
     [](sim::PricingTerms& t, const json& v) { t.on_prem.node_power_w = v.get<double>(); }},
    {{.pointer = "on_prem/pue",
      .min = 1,
      .max = 5,
      .help = "power usage effectiveness (default 1.58, Uptime Institute 2023 average)",
      .bound = "no data centre uses less than its IT load, none five times it",
      .flag = {"--on-prem-pue", "RATIO", "Power usage effectiveness (default 1.58)", kGroup,
               "Power usage effectiveness (default 1.58); every offering under on_prem"},
      .applies = kOnPrem.applies,
      .unused = kOnPrem.unused},
     [](sim::PricingTerms& t, const json& v) { t.on_prem.pue = v.get<double>(); }},
    {{.pointer = "on_prem/usd_per_kwh",
      .unit = "per kWh in pricing.currency",
      .min = 0,
      .max = 100,
      .help = "electricity price per kWh, in pricing.currency",
      .bound = "far beyond any electricity price",
      .flag = {"--on-prem-usd-per-kwh", "USD", "Electricity price per kWh", kGroup,
               "Electricity price per kWh; every offering under on_prem"},
      .nullable = true,
      .applies = kOnPrem.applies,
      .unused = kOnPrem.unused},
     [](sim::PricingTerms& t, const json& v) { t.on_prem.usd_per_kwh = v.get<double>(); }},
    {{.pointer = "on_prem/ops_usd_per_year",
      .unit = "per year in pricing.currency",
      .min = 0,
      .max = 1e12,
      .help = "operations staff and support per year, in pricing.currency",
      .bound = "far beyond any operations budget",
      .flag = {"--on-prem-ops-usd-per-year", "USD", "Operations staff and support per year", kGroup,
               "Operations staff and support per year; every offering under on_prem"},
      .nullable = true,
      .applies = kOnPrem.applies,
      .unused = kOnPrem.unused},
     [](sim::PricingTerms& t, const json& v) { t.on_prem.ops_usd_per_year = v.get<double>(); }},
    {{.pointer = "on_prem/utilisation",
      .min = 0,
      .max = 1,
      .min_open = true,
      .help = "share of the owned cluster's time doing useful work (default 1)",
      .bound = kFraction,
      .flag = {"--on-prem-utilisation", "FRACTION", "Share of the owned cluster's time doing useful work (default 1)",
               kGroup, "Share of the owned cluster's time doing useful work (default 1); every offering under on_prem"},
      .applies = kOnPrem.applies,
      .unused = kOnPrem.unused},
     [](sim::PricingTerms& t, const json& v) { t.on_prem.utilisation = v.get<double>(); }},
    // A price sheet the command merges over the catalog before the section is read.
    {{.pointer = "sheet",
      .kind = FieldKind::text,
      .help = "a price sheet file (capplan-price-sheet/1, e.g. data/price-sheets/tencent-template.json), relative to "
              "the scenario file; merged over the catalog; --prices replaces it"}},
};

#undef CAPPLAN_GPU_HOUR

}  // namespace

std::span<const Field<sim::PricingTerms>> pricing_fields() { return kPricingRows; }

}  // namespace capplan::data
