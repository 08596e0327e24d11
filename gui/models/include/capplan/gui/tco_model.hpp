// SPDX-License-Identifier: Apache-2.0
// The Own vs rent tab (`capplan tco` in the desktop app): the scenario's `tco`
// section read as the CLI reads it, the own-fleet cost per useful GPU-hour across utilisations,
// and a summary table of owning against each way of renting.
//
// Contract:
//  * tco_snapshot() takes the path of `capplan tco SCENARIO`: the price sheet the scenario names
//    (pricing.sheet, relative to the scenario file) merged over the catalogs, data::parse_scenario,
//    data::apply_price_sheet_rates, data::tco_request; errors come back in the CLI's wording.
//  * Every number is sim::tco's: the curve is sim::tco asked at each utilisation of the chart (5 %,
//    6 %, ..., 100 %), the table is sim::tco at the scenario's own utilisation. Nothing here
//    computes a cost; amounts stay in US dollars until display converts them to pricing.currency.
//  * A price the scenario does not give stays unknown and is listed (sim::Tco::missing), never
//    filled in: a rent option without a rate has no line, the own curve is empty when the own
//    cost is unknown.
#pragma once
#include <QString>
#include <QStringList>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "capplan/data/catalog.hpp"
#include "capplan/data/tco_io.hpp"
#include "capplan/gui/table_model.hpp"
#include "capplan/sim/workload/result.hpp"
#include "capplan/sim/tco/tco.hpp"

namespace capplan::gui {

// The chart's utilisations, in percent: kTcoCurveFromPercent, +1, ..., 100.
inline constexpr int kTcoCurveFromPercent = 5;

struct TcoPoint {
  double utilisation = 0;            // (0, 1]
  double usd_per_useful_gpu_hour = 0;  // sim::Tco::own_usd_per_useful_gpu_hour at that utilisation
};

struct TcoSnapshot {
  data::TcoRequest request;         // the inputs (US dollars) and the scenario's currency
  sim::Tco tco;                     // at the scenario's utilisation
  std::vector<TcoPoint> own_curve;  // empty when the own cost is unknown
  QString sheet;                    // the price sheet read (pricing.sheet), empty when none
  QStringList notes;                // what the sheet gave, and the warnings about the tco section
};

// Whether the scenario document has a `tco` section (the tab asks for one when it has not).
bool has_tco_section(const nlohmann::json& doc);

// The tab's figures for scenario document `doc`, its file at `scenario_file` (empty: not saved;
// pricing.sheet is then relative to the working directory, as for `capplan tco -`).
Result<TcoSnapshot> tco_snapshot(const nlohmann::json& doc, const data::Catalogs& catalogs,
                                 const std::string& scenario_file);

// The label of a rent option (sim::RentOption::name "on_demand"): "on demand".
QString rent_option_text(const std::string& name);

// One row of the summary: the own fleet, or one way of renting the same useful GPU-hours.
struct TcoRow {
  std::string key;  // "own", "on_demand", "reserved", "spot"
  QString option;
  std::optional<double> usd_per_gpu_hour;  // per useful GPU-hour (own) or the rent rate
  std::optional<double> total_usd;         // over the years owned
  std::optional<double> break_even;        // utilisation above which owning is cheaper
  QString break_even_text;                 // "64.4 %", "never at this rate", "unknown", "" (own)
  QString note;                            // the row's explanation (tooltip)
  sim::Currency currency;
};

class TcoModel final : public TableModel<TcoRow> {
  Q_OBJECT
 public:
  enum Column { kOption, kRate, kTotal, kBreakEven, kColumnCount };
  explicit TcoModel(QObject* parent = nullptr);

  void set_snapshot(const TcoSnapshot& snapshot);
  void clear();
  int row_of(const std::string& key) const;
};

}  // namespace capplan::gui
