// SPDX-License-Identifier: Apache-2.0
#include "capplan/gui/format.hpp"

#include <QLocale>
#include <cmath>

#include "capplan/data/currency.hpp"
#include "capplan/data/format.hpp"
#include "capplan/sim/workload/strategy.hpp"

namespace capplan::gui {

namespace {
QString grouped(double v) { return QLocale(QLocale::English).toString(std::round(v), 'f', 0); }
}  // namespace

QString days_text(double days) {
  if (!std::isfinite(days)) return QStringLiteral("n/a");
  if (days >= 1000) return grouped(days) + QStringLiteral(" days");
  if (days < 1.0) return QString::number(days * 24.0, 'f', 1) + QStringLiteral(" hours");
  return QString::number(days, 'f', 1) + QStringLiteral(" days");
}

QString duration_text(double days) {
  if (!std::isfinite(days)) return QStringLiteral("n/a");
  const data::format::DurationUnit unit = data::format::duration_unit(days);
  return QString::fromStdString(data::format::duration(days, unit)) + QLatin1Char(' ') + QString::fromLatin1(unit.name);
}

QString duration_number(double days, double unit_days) {
  return QString::fromStdString(data::format::duration(days, data::format::duration_unit(unit_days)));
}

QString usd_text(double usd) { return money_text(usd, sim::Currency{}); }

QString money_text(double usd, const sim::Currency& currency) {
  if (!std::isfinite(usd)) return QStringLiteral("n/a");
  const double v = data::from_usd(usd, currency);
  const QString prefix = QString::fromStdString(data::money_prefix(currency));
  if (std::fabs(v) >= 1e9) return prefix + QString::number(v / 1e9, 'f', 2) + QStringLiteral("B");
  if (std::fabs(v) >= 1e6) return prefix + QString::number(v / 1e6, 'f', 2) + QStringLiteral("M");
  if (std::fabs(v) >= 1e3) return prefix + grouped(v);
  return prefix + QString::number(v, 'f', 2);
}

QString purchase_text(sim::PurchaseModel model) {
  return QString::fromLatin1(sim::to_string(model)).replace(QLatin1Char('_'), QLatin1Char(' '));
}

QString usd_text(const std::optional<double>& usd) { return usd ? usd_text(*usd) : QStringLiteral("unknown"); }

QString seconds_text(double s) {
  if (!std::isfinite(s)) return QStringLiteral("n/a");
  if (s == 0) return QStringLiteral("0 s");
  if (s < 1e-3) return QString::number(s * 1e6, 'f', 1) + QStringLiteral(" us");
  if (s < 1.0) return QString::number(s * 1e3, 'f', 1) + QStringLiteral(" ms");
  if (s >= 1000.0) return grouped(s) + QStringLiteral(" s");
  return QString::number(s, 'f', 2) + QStringLiteral(" s");
}

QString hours_text(double seconds) {
  if (!std::isfinite(seconds)) return QStringLiteral("never");
  return seconds >= 3600 ? fixed_text(seconds / 3600.0, 2) + QStringLiteral(" h") : seconds_text(seconds);
}

QString gib_text(double bytes) {
  if (!std::isfinite(bytes)) return QStringLiteral("n/a");
  return QString::number(bytes / 1073741824.0, 'f', 1) + QStringLiteral(" GiB");
}

QString bytes_text(double bytes) {
  const QString s = si_text(bytes);  // "1.99G", or "512" below a thousand
  return !s.isEmpty() && s.back().isLetter() ? s.chopped(1) + QLatin1Char(' ') + s.back() + QLatin1Char('B')
                                             : s + QStringLiteral(" B");
}

QString gbit_text(double gbit_per_s) { return fixed_text(gbit_per_s, 0) + QStringLiteral(" Gbit/s"); }

QString percent_text(double fraction, int decimals) {
  if (!std::isfinite(fraction)) return QStringLiteral("n/a");
  return QString::number(100.0 * fraction, 'f', decimals) + QStringLiteral(" %");
}

QString count_text(double v) {
  if (!std::isfinite(v)) return QStringLiteral("n/a");
  return grouped(v);
}

QString si_text(double v) {
  if (!std::isfinite(v)) return QStringLiteral("n/a");
  struct Prefix {
    double scale;
    const char* name;
  };
  static constexpr Prefix kPrefixes[] = {{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  for (const auto& p : kPrefixes) {
    if (std::fabs(v) >= p.scale) {
      const double x = v / p.scale;
      return QString::number(x, 'f', std::fabs(x) >= 100 ? 0 : (std::fabs(x) >= 10 ? 1 : 2)) +
             QString::fromLatin1(p.name);
    }
  }
  return QString::number(v, 'g', 3);
}

QString tokens_text(double count) {
  if (!std::isfinite(count)) return QStringLiteral("n/a");
  QString s = QString::fromStdString(data::format::tokens(count));  // "1.5B", "512"
  if (!s.isEmpty() && s.back().isLetter()) s.insert(s.size() - 1, QLatin1Char(' '));
  return s + QStringLiteral(" tokens");
}

QString fixed_text(double v, int decimals) { return QString::number(v, 'f', decimals); }

QString degrees_text(const sim::Parallelism& p) {
  QString text = QStringLiteral("TP %1 · PP %2 · DP %3").arg(p.tp).arg(p.pp).arg(p.dp);
  if (p.cp != 1) text += QStringLiteral(" · CP %1").arg(p.cp);
  if (p.ep != 1) text += QStringLiteral(" · EP %1").arg(p.ep);
  return text;
}

QString delta_text(double value, double base) {
  if (!std::isfinite(value) || !std::isfinite(base) || base == 0) return {};
  const double d = 100.0 * (value - base) / base;
  return (d >= 0 ? QStringLiteral("+") : QString()) + QString::number(d, 'f', 1) + QStringLiteral(" %");
}

QString number_text(double v, int decimals) {
  if (!std::isfinite(v)) return QStringLiteral("n/a");
  if (decimals < 0) {
    if (v == std::floor(v) && std::fabs(v) < 1e15) return QString::number(static_cast<long long>(v));
    decimals = 1;
  }
  QString s = fixed_text(v, decimals);
  if (s.contains(QLatin1Char('.'))) {
    while (s.endsWith(QLatin1Char('0'))) s.chop(1);
    if (s.endsWith(QLatin1Char('.'))) s.chop(1);
  }
  return s;
}

}  // namespace capplan::gui
