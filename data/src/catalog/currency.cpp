// SPDX-License-Identifier: Apache-2.0
#include "capplan/data/currency.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cctype>
#include <iterator>

#include "capplan/data/format.hpp"

namespace capplan::data {
namespace {

// ISO 4217 codes of currencies in circulation (the list of the ISO 4217 maintenance agency,
// without the fund, metal and testing codes), sorted.
constexpr std::string_view kCodes[] = {
    "AED", "AFN", "ALL", "AMD", "ANG", "AOA", "ARS", "AUD", "AWG", "AZN", "BAM", "BBD", "BDT", "BGN", "BHD",
    "BIF", "BMD", "BND", "BOB", "BRL", "BSD", "BTN", "BWP", "BYN", "BZD", "CAD", "CDF", "CHF", "CLP", "CNY",
    "COP", "CRC", "CUP", "CVE", "CZK", "DJF", "DKK", "DOP", "DZD", "EGP", "ERN", "ETB", "EUR", "FJD", "FKP",
    "GBP", "GEL", "GHS", "GIP", "GMD", "GNF", "GTQ", "GYD", "HKD", "HNL", "HTG", "HUF", "IDR", "ILS", "INR",
    "IQD", "IRR", "ISK", "JMD", "JOD", "JPY", "KES", "KGS", "KHR", "KMF", "KPW", "KRW", "KWD", "KYD", "KZT",
    "LAK", "LBP", "LKR", "LRD", "LSL", "LYD", "MAD", "MDL", "MGA", "MKD", "MMK", "MNT", "MOP", "MRU", "MUR",
    "MVR", "MWK", "MXN", "MYR", "MZN", "NAD", "NGN", "NIO", "NOK", "NPR", "NZD", "OMR", "PAB", "PEN", "PGK",
    "PHP", "PKR", "PLN", "PYG", "QAR", "RON", "RSD", "RUB", "RWF", "SAR", "SBD", "SCR", "SDG", "SEK", "SGD",
    "SHP", "SLE", "SOS", "SRD", "SSP", "STN", "SVC", "SYP", "SZL", "THB", "TJS", "TMT", "TND", "TOP", "TRY",
    "TTD", "TWD", "TZS", "UAH", "UGX", "USD", "UYU", "UZS", "VES", "VND", "VUV", "WST", "XAF", "XCD", "XCG",
    "XOF", "XPF", "YER", "ZAR", "ZMW", "ZWG",
};
static_assert(std::is_sorted(std::begin(kCodes), std::end(kCodes)), "kCodes must stay sorted");

// Names people write instead of the code.
struct Alias {
  std::string_view name, code;
};
constexpr Alias kAliases[] = {{"RMB", "CNY"}, {"CNH", "CNY"}, {"YUAN", "CNY"}, {"NTD", "TWD"}};

}  // namespace

bool is_currency_code(std::string_view code) {
  return std::binary_search(std::begin(kCodes), std::end(kCodes), code);
}

std::string currency_code_error(std::string_view code) {
  std::string upper(code);
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  std::string hint;
  if (is_currency_code(upper)) {
    hint = "did you mean '" + upper + "'? codes are upper case";
  } else if (auto a = std::find_if(std::begin(kAliases), std::end(kAliases), [&](const Alias& x) { return x.name == upper; });
             a != std::end(kAliases)) {
    hint = "did you mean '" + std::string(a->code) + "'?";
  } else {
    hint = "give a three-letter ISO 4217 code such as USD, CNY, EUR";
  }
  return "unknown ISO 4217 currency code '" + std::string(code) + "' (" + hint + ")";
}

std::string money_prefix(const sim::Currency& c) { return c.is_usd() ? "$" : c.code + " "; }

double from_usd(double usd, const sim::Currency& c) {
  if (c.is_usd() || !std::isfinite(usd) || !(c.usd_per_unit > 0)) return usd;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.12g", usd / c.usd_per_unit);
  return std::strtod(buf, nullptr);
}

std::optional<double> from_usd(const std::optional<double>& usd, const sim::Currency& c) {
  return usd ? std::optional<double>(from_usd(*usd, c)) : std::nullopt;
}

std::string rate_text(const sim::Currency& c) {
  if (c.is_usd()) return {};
  std::string s = c.code + " at " + format::in_sentence(c.usd_per_unit, 6) + " USD per unit";
  if (!c.rate_date.empty()) s += " (" + c.rate_date + ")";
  return s;
}

std::string money(double usd, const sim::Currency& c) {
  if (!std::isfinite(usd)) return "n/a";
  const double v = from_usd(usd, c);
  const std::string prefix = money_prefix(c);
  if (std::fabs(v) >= 1e6) return prefix + format::fixed(v / 1e6, 2) + "M";
  if (std::fabs(v) >= 1e3) return prefix + format::grouped(v);
  return prefix + format::fixed(v, 2);
}

}  // namespace capplan::data
