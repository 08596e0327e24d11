// SPDX-License-Identifier: Apache-2.0
// Currencies: ISO 4217 codes as the scenario and the catalogs write them, and money as every
// surface shows it. sim/ works in US dollars (sim::Currency); these turn its amounts back into the
// currency the user priced in.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "capplan/sim/workload/pricing.hpp"

namespace capplan::data {

// Whether `code` is an ISO 4217 currency code in use (upper case: "USD", "CNY", "EUR").
bool is_currency_code(std::string_view code);

// "unknown ISO 4217 currency code 'RMB' (did you mean 'CNY'?)": the error text for a bad code.
std::string currency_code_error(std::string_view code);

// The text before an amount: "$" for US dollars (as capplan has always written them), else the
// ISO code and a space ("CNY 1.23M"): symbols such as "¥" name several currencies.
std::string money_prefix(const sim::Currency& c);

// A US-dollar amount in `c`'s units (rounded to 12 significant digits when converted, so a price
// typed as 15 reads back as 15); US dollars are returned unchanged.
double from_usd(double usd, const sim::Currency& c);
std::optional<double> from_usd(const std::optional<double>& usd, const sim::Currency& c);

// A US-dollar amount in `c`'s units for a table: "$1.23M", "$45,678", "CNY 12.50" (README "Currencies").
std::string money(double usd, const sim::Currency& c);

// "CNY at 0.1389 USD per unit (2026-12-01)": how a non-USD currency was converted; empty for USD.
std::string rate_text(const sim::Currency& c);

}  // namespace capplan::data
