// SPDX-License-Identifier: Apache-2.0
// The pricing section: the price per GPU-hour or instance, spot, reserved and on-premises
// terms, and the currency. Its values are checked by the section's field table
// (input/fields/pricing_fields.cpp); what depends on the cluster or on other keys is read here.
#include "input/scenario/parser.hpp"

#include "capplan/data/currency.hpp"

namespace capplan::data::scenario_detail {

namespace {

// The value `v` (at `path`) of the row at `pointer` checked and stored.
void read_row(std::span<const Field<sim::PricingTerms>> rows, std::string_view pointer, const json& v,
              const std::string& path, sim::PricingTerms& out, Reader& r) {
  for (const auto& row : rows) {
    if (pointer != row.spec.pointer) continue;
    if (fields_detail::check_value(row.spec, v, path, r) && row.set != nullptr) row.set(out, v);
    return;
  }
}

}  // namespace

// --- pricing ----------------------------------------------------------------------------
void ScenarioParser::parse_pricing(const json& j, std::optional<sim::Cluster>& c) {
  const std::string p = "/pricing";
  const auto rows = pricing_fields();
  if (!r_.object(j, p)) return;
  std::vector<std::string> keys;
  fields_detail::add_keys(rows, "", keys);
  r_.unknown_keys(j, p, keys);
  // pricing.sheet: a price sheet (data/price_sheet.hpp) the command merges over the catalog
  // before this is read; here only its value is checked.
  if (const json* sheet = find(j, "sheet")) {
    fields_detail::check_value(fields_detail::spec_of(rows, "sheet"), *sheet, child(p, "sheet"), r_);
  }
  sim::PricingTerms& terms = out_.scenario.pricing;
  const double rate = parse_currency(j, p, terms.currency);
  const json* purchase = find(j, "purchase");
  if (purchase != nullptr) read_row(rows, "purchase", *purchase, child(p, "purchase"), terms, r_);
  // The spot, reserved and on-premises terms: objects of the table's "spot/...", ... rows.
  for (const char* terms_key : {"spot", "reserved", "on_prem"}) {
    if (const json* v = find(j, terms_key)) fields_detail::read_rows(*v, child(p, terms_key), rows, terms_key, terms, r_);
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
  // Which of the two prices applies, and the cluster's GPUs per node: read by hand.
  std::optional<double> per_gpu;
  const char* key = gpu_hour != nullptr ? "usd_per_gpu_hour" : "usd_per_node_hour";
  const json& price = gpu_hour != nullptr ? *gpu_hour : *node_hour;
  if (fields_detail::check_value(fields_detail::spec_of(rows, key), price, child(p, key), r_)) {
    if (gpu_hour != nullptr) {
      per_gpu = price.get<double>();
    } else if (c) {
      per_gpu = price.get<double>() / c->gpus_per_node;
    }
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
  const auto rows = pricing_fields();
  // The value checked by its row (a string, a number in range), its meaning here.
  auto checked = [&](const json* v, const char* key) {
    return v != nullptr && fields_detail::check_value(fields_detail::spec_of(rows, key), *v, child(p, key), r_);
  };
  if (checked(code, "currency")) {
    const auto text = code->get<std::string>();
    if (is_currency_code(text)) {
      out.code = text;
      currency_given_ = true;
    } else {
      r_.error(child(p, "currency"), currency_code_error(text));
    }
  }
  if (checked(date, "usd_per_unit_date")) {
    const auto text = date->get<std::string>();
    if (detail::is_date(text, false)) {
      out.rate_date = text;
    } else {
      r_.error(child(p, "usd_per_unit_date"), "must be a date YYYY-MM-DD; got " + describe(*date));
    }
  }
  if (rate != nullptr) {
    if (checked(rate, "usd_per_unit")) {
      const double v = rate->get<double>();
      if (out.is_usd() && v != 1.0) {
        r_.error(child(p, "usd_per_unit"), "must be 1 (or absent) with currency USD; got " + fmt(v) +
                                               " (give pricing.currency: the code your prices are in)");
      } else {
        out.usd_per_unit = v;
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
