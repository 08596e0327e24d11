// SPDX-License-Identifier: Apache-2.0
// Display text for numbers that come from sim/ and data/: units always written out. Display only;
// no number is computed here.
#pragma once
#include <QString>
#include <optional>

namespace capplan::gui {

QString days_text(double days);                 // "31.4 days", "1,234 days"
QString usd_text(double usd);                   // "$1.23M", "$45,678", "$12.50"
QString usd_text(const std::optional<double>& usd);  // "unknown" when empty
QString seconds_text(double seconds);           // "850 ms", "12.3 s", "45.0 us"
QString gib_text(double bytes);                 // "61.2 GiB"
QString percent_text(double fraction, int decimals = 1);  // 0.412 -> "41.2 %"
QString count_text(double v);                   // 12,345,678
QString si_text(double v);                      // 2T, 4.19M
// "+12.3 %" / "-4.0 %" of `value` against `base`; empty when base is 0 or either is not finite.
QString delta_text(double value, double base);

}  // namespace capplan::gui

namespace capplan::gui {

// A number inside a sentence: `decimals` < 0 for whole numbers as they are, else one decimal;
// otherwise rounded to `decimals` with trailing zeros dropped. "n/a" when not finite.
QString number_text(double v, int decimals = -1);

}  // namespace capplan::gui
