// SPDX-License-Identifier: Apache-2.0
// The pricing section: the price per GPU-hour or instance, spot, reserved and on-premises
// terms, and the currency.
#include "input/scenario/parser.hpp"

#include "capplan/data/currency.hpp"

namespace capplan::data::scenario_detail {

constexpr detail::Field<sim::SpotTerms> kSpotFields[] = {
    {"usd_per_gpu_hour", detail::Kind::number, detail::Need::optional, true, {0, kMaxUsdPerGpuHour, false},
     "spot price per GPU-hour, USD",
     detail::store<&sim::SpotTerms::usd_per_gpu_hour>},
    {"preemptions_per_node_hour", detail::Kind::number, detail::Need::optional, true, {0, 1, false},
     "probability that a node is preempted in an hour (0..1)",
     detail::store<&sim::SpotTerms::preemptions_per_node_hour>},
};

constexpr detail::Field<sim::ReservedTerms> kReservedFields[] = {
    {"usd_per_gpu_hour", detail::Kind::number, detail::Need::optional, true, {0, kMaxUsdPerGpuHour, false},
     "committed price per GPU-hour, USD",
     detail::store<&sim::ReservedTerms::usd_per_gpu_hour>},
    {"term_months", detail::Kind::number, detail::Need::optional, true, {0, 240, true},
     "commitment term, months (paid whether used or not)",
     [](sim::ReservedTerms& t, const json& v, Reader&, const std::string&) {
       t.term_hours = num_of(v) * 8760.0 / 12.0;
     }},
    {"idle_usd_per_gpu_hour", detail::Kind::number, detail::Need::optional, true, {0, kMaxUsdPerGpuHour, false},
     "rate for committed but unused GPU-hours, where billed differently (default: the reserved rate)",
     detail::store<&sim::ReservedTerms::idle_usd_per_gpu_hour>},
    {"committed_gpus", detail::Kind::integer, detail::Need::optional, true, {1, kMaxGpus, false},
     "GPUs committed (default: the cluster's GPUs and hot spares)",
     [](sim::ReservedTerms& t, const json& v, Reader&, const std::string&) {
       t.committed_gpus = static_cast<int>(num_of(v));
     }},
    {"utilisation", detail::Kind::number, detail::Need::optional, false, {0, 1, true},
     "share of the committed capacity's term doing useful work; a run pays its share (default 1)",
     detail::store<&sim::ReservedTerms::utilisation>},
};

constexpr detail::Field<sim::OnPremTerms> kOnPremFields[] = {
    {"usd_per_node", detail::Kind::number, detail::Need::optional, true, {0, 1e9, true},
     "purchase price of one node, USD",
     detail::store<&sim::OnPremTerms::usd_per_node>},
    {"amortisation_years", detail::Kind::number, detail::Need::optional, true, {0, 50, true},
     "years over which the purchase is written off",
     detail::store<&sim::OnPremTerms::amortisation_years>},
    {"node_power_w", detail::Kind::number, detail::Need::optional, true, {0, 1e6, true},
     "power of one node under load, W (default: the catalog's system power, else GPU TDP x GPUs per node)",
     detail::store<&sim::OnPremTerms::node_power_w>},
    {"pue", detail::Kind::number, detail::Need::optional, false, {1, 5, false},
     "power usage effectiveness (default 1.58, Uptime Institute 2023 average)",
     detail::store<&sim::OnPremTerms::pue>},
    {"usd_per_kwh", detail::Kind::number, detail::Need::optional, true, {0, 100, false},
     "electricity price, USD per kWh",
     detail::store<&sim::OnPremTerms::usd_per_kwh>},
    {"ops_usd_per_year", detail::Kind::number, detail::Need::optional, true, {0, 1e12, false},
     "operations staff and support for the cluster, USD per year",
     detail::store<&sim::OnPremTerms::ops_usd_per_year>},
    {"utilisation", detail::Kind::number, detail::Need::optional, false, {0, 1, true},
     "share of the owned cluster's time doing useful work (default 1)",
     detail::store<&sim::OnPremTerms::utilisation>},
};

// --- pricing ----------------------------------------------------------------------------
void ScenarioParser::parse_pricing(const json& j, std::optional<sim::Cluster>& c) {
  const std::string p = "/pricing";
  if (!r_.object(j, p)) return;
  r_.unknown_keys(j, p, {"usd_per_gpu_hour", "usd_per_node_hour", "purchase", "spot", "reserved", "on_prem",
                         "currency", "usd_per_unit", "usd_per_unit_date", "sheet"});
  // pricing.sheet: a price sheet (data/price_sheet.hpp) the command merges over the catalog
  // before this is read; here only its type is checked.
  if (const json* sheet = find(j, "sheet")) r_.string(*sheet, child(p, "sheet"));
  sim::PricingTerms& terms = out_.scenario.pricing;
  const double rate = parse_currency(j, p, terms.currency);
  const json* purchase = find(j, "purchase");
  if (purchase != nullptr) {
    if (auto name = r_.string(*purchase, child(p, "purchase"))) {
      if (auto m = sim::purchase_model_from_string(*name)) {
        terms.model = *m;
      } else {
        r_.error(child(p, "purchase"), "unknown purchase model '" + *name + "' (" +
                                           suggest(*name, {"on_demand", "spot", "reserved", "on_prem"}) + ")");
      }
    }
  }
  if (const json* v = find(j, "spot")) detail::read_fields<sim::SpotTerms>(*v, child(p, "spot"), kSpotFields, terms.spot, r_);
  if (const json* v = find(j, "reserved")) {
    detail::read_fields<sim::ReservedTerms>(*v, child(p, "reserved"), kReservedFields, terms.reserved, r_);
  }
  if (const json* v = find(j, "on_prem")) {
    detail::read_fields<sim::OnPremTerms>(*v, child(p, "on_prem"), kOnPremFields, terms.on_prem, r_);
  }
  // Every price of this section is written in its currency; sim/ computes in US dollars.
  for (std::optional<double>* price : {&terms.spot.usd_per_gpu_hour, &terms.reserved.usd_per_gpu_hour,
                                       &terms.reserved.idle_usd_per_gpu_hour, &terms.on_prem.usd_per_node,
                                       &terms.on_prem.usd_per_kwh, &terms.on_prem.ops_usd_per_year}) {
    if (*price) **price *= rate;
  }
  const json* gpu_hour = find(j, "usd_per_gpu_hour");
  const json* node_hour = find(j, "usd_per_node_hour");
  if (gpu_hour != nullptr && node_hour != nullptr) {
    r_.error(p, "give either usd_per_gpu_hour or usd_per_node_hour, not both");
    return;
  }
  if (gpu_hour == nullptr && node_hour == nullptr) {
    const bool other = purchase != nullptr || find(j, "spot") || find(j, "reserved") || find(j, "on_prem") ||
                       find(j, "currency") || find(j, "sheet");
    if (!other) {
      r_.error(child(p, "usd_per_gpu_hour"), "required (usd_per_gpu_hour or usd_per_node_hour) is missing");
    } else if (c) {
      catalog_price(*c);  // the on-demand reference price, when the catalog has one
    }
    return;
  }
  std::optional<double> per_gpu;
  if (gpu_hour != nullptr) {
    per_gpu = r_.number(*gpu_hour, child(p, "usd_per_gpu_hour"), 0, kMaxUsdPerGpuHour, false);
  } else if (auto node = r_.number(*node_hour, child(p, "usd_per_node_hour"), 0, kMaxUsdPerGpuHour * 1024, false);
             node && c) {
    per_gpu = *node / c->gpus_per_node;
  }
  if (per_gpu && c) {
    c->price_per_gpu = units::usd_per_hour(*per_gpu * rate);
    c->price_source = "scenario pricing";
  }
}

// pricing.currency (ISO 4217, default USD) and its rate to US dollars, required for any other
// currency. Returns the rate the section's prices are converted at (1 when unknown: the error
// is reported and nothing is estimated).
double ScenarioParser::parse_currency(const json& j, const std::string& p, sim::Currency& out) {
  const json* code = find(j, "currency");
  const json* rate = find(j, "usd_per_unit");
  const json* date = find(j, "usd_per_unit_date");
  if (code != nullptr) {
    if (auto text = r_.string(*code, child(p, "currency"))) {
      if (is_currency_code(*text)) {
        out.code = *text;
        currency_given_ = true;
      } else {
        r_.error(child(p, "currency"), currency_code_error(*text));
      }
    }
  }
  if (date != nullptr) {
    if (auto text = r_.string(*date, child(p, "usd_per_unit_date"))) {
      if (detail::is_date(*text, false)) {
        out.rate_date = *text;
      } else {
        r_.error(child(p, "usd_per_unit_date"), "must be a date YYYY-MM-DD; got " + describe(*date));
      }
    }
  }
  if (rate != nullptr) {
    if (auto v = r_.number(*rate, child(p, "usd_per_unit"), 0, 1e6, true)) {
      if (out.is_usd() && *v != 1.0) {
        r_.error(child(p, "usd_per_unit"), "must be 1 (or absent) with currency USD; got " + fmt(*v) +
                                               " (give pricing.currency: the code your prices are in)");
      } else {
        out.usd_per_unit = *v;
      }
    }
  } else if (!out.is_usd()) {
    r_.error(child(p, "usd_per_unit"), "required with currency " + out.code + " (US dollars per " + out.code +
                                           ", e.g. 0.14; with usd_per_unit_date, the day it was read) is missing");
  } else if (date != nullptr) {
    r_.error(child(p, "usd_per_unit_date"), "only used with a non-USD currency and its usd_per_unit");
  }
  return out.usd_per_unit;
}

}  // namespace capplan::data::scenario_detail
