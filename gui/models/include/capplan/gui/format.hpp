// SPDX-License-Identifier: Apache-2.0
// Display text for numbers that come from sim/ and data/: units always written out. Display only;
// no number is computed here. The GUI's one number formatter: every real number it shows is
// written by one of these (integers in layouts and counts print as themselves).
#pragma once
#include <QString>
#include <optional>

namespace capplan::sim {
struct Parallelism;
struct Currency;
enum class PurchaseModel;
}

namespace capplan::gui {

QString days_text(double days);                 // "31.4 days", "1,234 days"
// A length of time as the CLI prints it (data::format::duration): days from two days up, hours
// below, minutes below one hour: "33.4 days", "17.3 hours", "45.0 minutes".
QString duration_text(double days);
// `days` in the unit of `unit_days` (the number only), for a band beside its headline.
QString duration_number(double days, double unit_days);
QString usd_text(double usd);                   // "$1.23M", "$45,678", "$12.50"
QString usd_text(const std::optional<double>& usd);  // "unknown" when empty
// A US-dollar amount in the currency the user priced in: usd_text's form with "$" for USD and the
// ISO code otherwise ("CNY 1.23M"), as the CLI writes it (README "Currencies").
QString money_text(double usd, const sim::Currency& currency);
// "on demand", "spot", "reserved", "on prem".
QString purchase_text(sim::PurchaseModel model);
QString seconds_text(double seconds);           // "850 ms", "12.3 s", "45.0 us"
QString hours_text(double seconds);             // "5.25 h" from an hour up, else seconds_text; "never" if infinite
QString gib_text(double bytes);                 // "61.2 GiB"
QString bytes_text(double bytes);               // decimal SI, as the CLI's tables: "1.99 GB", "512 B"
QString gbit_text(double gbit_per_s);           // "3200 Gbit/s"
QString percent_text(double fraction, int decimals = 1);  // 0.412 -> "41.2 %"
QString count_text(double v);                   // 12,345,678
QString si_text(double v);                      // 2T, 4.19M
// A count of tokens as people write it (data::format::tokens, B for 1e9) with the word:
// "1.5 B tokens", "2 T tokens", "512 tokens".
QString tokens_text(double count);
QString fixed_text(double v, int decimals);     // 3.14159, 2 -> "3.14" (no grouping, no unit)
// "TP 8 · PP 4 · DP 16", with " · CP 2" and " · EP 8" when they are not 1: the head of every layout text.
QString degrees_text(const sim::Parallelism& p);
// "+12.3 %" / "-4.0 %" of `value` against `base`; empty when base is 0 or either is not finite.
QString delta_text(double value, double base);
// A number inside a sentence (findings): `decimals` < 0 for whole numbers as they are, else one
// decimal; otherwise rounded to `decimals` with trailing zeros dropped. "n/a" when not finite.
QString number_text(double v, int decimals = -1);

}  // namespace capplan::gui
