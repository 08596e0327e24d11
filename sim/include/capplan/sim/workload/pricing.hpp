// SPDX-License-Identifier: Apache-2.0
// The scenario's `pricing` section: the purchase model and its terms (on demand, spot, reserved,
// on premises), and the currency the user's prices are written in.
#pragma once
#include <optional>
#include <string>

namespace capplan::sim {

enum class PurchaseModel { on_demand, spot, reserved, on_prem };
const char* to_string(PurchaseModel m);
std::optional<PurchaseModel> purchase_model_from_string(const std::string& s);

// A billing month: 8,760 h a year / 12 (monthly subscriptions, reserved terms in months).
inline constexpr double kBillingHoursPerMonth = 8760.0 / 12.0;

// Uptime Institute Global Data Center Survey 2023: average annual PUE 1.58.
inline constexpr double kDefaultPue = 1.58;

// The currency prices are written in and its rate to US dollars. sim/ computes every amount in US
// dollars (units::Usd, the `usd_` fields below): data/ converts the user's prices when it reads
// them and converts amounts back to show them, so plans priced in different currencies are
// compared (and ranked) in US dollars.
struct Currency {
  std::string code = "USD";   // ISO 4217
  double usd_per_unit = 1.0;  // US dollars for one unit of `code` (1 for USD)
  std::string rate_date;      // when the rate was read, YYYY-MM-DD; empty when not given
  bool is_usd() const { return code == "USD"; }
  bool operator==(const Currency&) const = default;
};

struct SpotTerms {
  std::optional<double> usd_per_gpu_hour;
  std::optional<double> preemptions_per_node_hour;  // probability per node-hour, 0..1
};
struct ReservedTerms {
  std::optional<double> usd_per_gpu_hour;
  std::optional<double> term_hours;     // commitment paid whether used or not
  // Without term_hours: the commitment is bought in whole blocks of this length, as many as the
  // run needs (a monthly subscription, Tencent/Alibaba "包年包月": 730 h, a 42-day run pays 2).
  std::optional<double> term_block_hours;
  std::optional<int> committed_gpus;    // default: the cluster's GPUs
  // Rate at which committed but unused GPU-hours are billed, where the provider bills idle
  // capacity differently (Tencent Cloud CVM billing doc 560/8025: an idle reserved pool at 0.3x
  // on-demand). Default: the reserved rate (the whole commitment is paid).
  std::optional<double> idle_usd_per_gpu_hour;
  // Share of the committed capacity's term doing useful work. A run is charged its used GPU-hours
  // plus its share of the idle ones, (1 - u) / u of its hours at the idle rate, the way an owned
  // fleet's amortisation is shared (OnPremTerms::utilisation); the whole term is shown beside it.
  double utilisation = 1.0;
};
struct OnPremTerms {
  std::optional<double> usd_per_node;          // purchase price of one node
  std::optional<double> amortisation_years;
  std::optional<double> node_power_w;          // default: the catalog's system power, else GPU TDP x GPUs
  bool node_power_from_tdp = false;            // the default fell back to the GPUs' TDP (GPUs only)
  double pue = kDefaultPue;
  std::optional<double> usd_per_kwh;
  std::optional<double> ops_usd_per_year;      // operations staff and support for the cluster
  double utilisation = 1.0;                    // share of the owned cluster's time doing useful work
};

struct PricingTerms {
  PurchaseModel model = PurchaseModel::on_demand;
  SpotTerms spot;
  ReservedTerms reserved;
  OnPremTerms on_prem;
  Currency currency;  // what the user's prices were written in (amounts here are already US dollars)
};

}  // namespace capplan::sim
