// SPDX-License-Identifier: Apache-2.0
#include "capplan/gui/tco_model.hpp"

#include <optional>
#include <utility>

#include "capplan/data/price_sheet.hpp"
#include "capplan/data/scenario_io.hpp"
#include "capplan/gui/format.hpp"

namespace capplan::gui {

namespace {

constexpr std::string_view kWhere = "scenario";

// Whether the document names pricing.currency itself (a sheet's currency then does not replace it).
bool names_currency(const nlohmann::json& doc) {
  const auto pricing = doc.find("pricing");
  return pricing != doc.end() && pricing->is_object() && pricing->contains("currency");
}

}  // namespace

bool has_tco_section(const nlohmann::json& doc) { return doc.is_object() && doc.contains("tco"); }

Result<TcoSnapshot> tco_snapshot(const nlohmann::json& doc, const data::Catalogs& catalogs,
                                 const std::string& scenario_file) {
  TcoSnapshot out;
  // The sheet first, over a copy of the catalogs: the scenario is then read as `capplan tco` reads it.
  std::optional<data::Catalogs> merged;
  std::optional<data::PriceSheet> sheet;
  if (const auto file = doc.is_object() ? data::scenario_price_sheet(doc, scenario_file) : std::nullopt) {
    merged = catalogs;
    auto loaded = data::load_price_sheet(*file, *merged);
    if (!loaded) return std::unexpected(std::move(loaded.error()));
    data::merge_price_sheet(*merged, *loaded);
    out.sheet = QString::fromStdString(file->string());
    sheet = std::move(*loaded);
  }
  const data::Catalogs& used = merged ? *merged : catalogs;
  auto parsed = data::parse_scenario(doc, used, kWhere);
  if (!parsed) return std::unexpected(std::move(parsed.error()));
  if (sheet) {
    for (auto& n : data::apply_price_sheet_rates(parsed->scenario, *sheet, names_currency(doc))) {
      out.notes << QString::fromStdString(n);
    }
  }
  auto request = data::tco_request(doc, *parsed, used, kWhere);
  if (!request) return std::unexpected(std::move(request.error()));
  for (const auto& w : request->warnings) {
    // The scenario's other warnings are the Estimate tab's; these are about owning.
    if (w.find("#/tco") != std::string::npos) out.notes << QString::fromStdString(w);
  }
  out.request = std::move(*request);
  out.tco = sim::tco(out.request.inputs);

  sim::TcoInputs at = out.request.inputs;
  for (int percent = kTcoCurveFromPercent; percent <= 100; ++percent) {
    at.utilisation = percent / 100.0;
    const sim::Tco t = sim::tco(at);
    if (!t.own_usd_per_useful_gpu_hour) break;  // unknown at one utilisation: unknown at all
    out.own_curve.push_back({at.utilisation, *t.own_usd_per_useful_gpu_hour});
  }
  return out;
}

QString rent_option_text(const std::string& name) {
  return QString::fromStdString(name).replace(QLatin1Char('_'), QLatin1Char(' '));
}

namespace {

QVariant money_or_unknown(const std::optional<double>& usd, const sim::Currency& c) {
  return usd ? money_text(*usd, c) : TcoModel::tr("unknown");
}

QVariant raw(const std::optional<double>& v) { return v ? QVariant(*v) : QVariant(); }

TableSpec<TcoRow> tco_spec() {
  auto note = [](const TcoRow& r) -> QVariant { return r.note; };
  return {.fields = {{TcoModel::tr("Option"), [](const TcoRow& r) -> QVariant { return r.option; }},
                     {TcoModel::tr("Per useful GPU-hour"),
                      [](const TcoRow& r) { return money_or_unknown(r.usd_per_gpu_hour, r.currency); },
                      [](const TcoRow& r) { return raw(r.usd_per_gpu_hour); }, kAlignNumber},
                     {TcoModel::tr("Total"), [](const TcoRow& r) { return money_or_unknown(r.total_usd, r.currency); },
                      [](const TcoRow& r) { return raw(r.total_usd); }, kAlignNumber},
                     {TcoModel::tr("Owning is cheaper above"),
                      [](const TcoRow& r) -> QVariant { return r.break_even_text; },
                      [](const TcoRow& r) { return raw(r.break_even); }, kAlignNumber}},
          .key = [](const TcoRow& r) { return QString::fromStdString(r.key); },
          .tooltip = note};
}

}  // namespace

TcoModel::TcoModel(QObject* parent) : TableModel(tco_spec(), parent) {}

void TcoModel::set_snapshot(const TcoSnapshot& snapshot) {
  const sim::Tco& t = snapshot.tco;
  const sim::Currency& c = snapshot.request.currency;
  const QString hours = count_text(t.useful_gpu_hours);
  std::vector<TcoRow> rows;
  auto row = [&c](std::string key, QString option, std::optional<double> rate, std::optional<double> total) {
    TcoRow r;
    r.key = std::move(key);
    r.option = std::move(option);
    r.usd_per_gpu_hour = rate;
    r.total_usd = total;
    r.currency = c;
    return r;
  };
  TcoRow own = row("own", tr("Own the fleet"), t.own_usd_per_useful_gpu_hour, t.own_total);
  own.note = t.own_total ? tr("%1 years at %2 utilisation: %3 useful GPU-hours")
                               .arg(snapshot.request.inputs.years)
                               .arg(percent_text(snapshot.request.inputs.utilisation), hours)
                         : tr("unknown: give the missing inputs listed below");
  rows.push_back(std::move(own));
  for (const sim::RentOption& o : t.rent) {
    TcoRow r = row(o.name, tr("Rent %1").arg(rent_option_text(o.name)), o.usd_per_gpu_hour, o.total);
    r.break_even = o.break_even_utilisation;
    if (!o.usd_per_gpu_hour) {
      r.break_even_text = tr("unknown");
      r.note = tr("no rate: give %1").arg(QString::fromStdString(o.field));
    } else if (o.break_even_utilisation) {
      r.break_even_text = percent_text(*o.break_even_utilisation);
      r.note = tr("owning is cheaper above %1 utilisation").arg(r.break_even_text);
    } else if (t.own_fixed) {
      r.break_even_text = tr("never at this rate");
      r.note = tr("owning never breaks even at this rate");
    } else {
      r.break_even_text = tr("unknown");
      r.note = tr("the own cost is unknown: give the missing inputs listed below");
    }
    rows.push_back(std::move(r));
  }
  set_rows(std::move(rows));
}

void TcoModel::clear() { set_rows({}); }

int TcoModel::row_of(const std::string& key) const { return row_of_key(QString::fromStdString(key)); }

}  // namespace capplan::gui
