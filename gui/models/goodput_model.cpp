// SPDX-License-Identifier: Apache-2.0
#include "capplan/gui/goodput_model.hpp"

#include <cmath>
#include <utility>

#include "capplan/gui/format.hpp"

namespace capplan::gui {

namespace {

// Every cell of the panel is also its own tooltip: the view cuts long notes.
Field<GoodputRow> text_field(QString header, QString GoodputRow::*text) {
  auto show = [text](const GoodputRow& r) -> QVariant { return r.*text; };
  return {std::move(header), show, {}, {}, show};
}

TableSpec<GoodputRow> goodput_spec() {
  Field<GoodputRow> value = text_field(GoodputModel::tr("Value"), &GoodputRow::value);
  value.sort = [](const GoodputRow& r) -> QVariant { return r.raw; };
  value.alignment = kAlignNumber;
  return {.fields = {text_field(GoodputModel::tr("Goodput"), &GoodputRow::item), std::move(value),
                     text_field(GoodputModel::tr("Detail"), &GoodputRow::note)},
          .key = [](const GoodputRow& r) { return QString::fromStdString(r.key); }};
}

}  // namespace

GoodputModel::GoodputModel(QObject* parent) : TableModel(goodput_spec(), parent) {}

void GoodputModel::set_snapshot(const EstimateSnapshot& snapshot) {
  std::vector<GoodputRow> rows;
  const sim::Goodput& g = snapshot.estimate.goodput;
  if (g.modelled) {
    const double mtbi = g.mtbi.base();
    rows.push_back({"interruptions", tr("Expected interruptions"), fixed_text(g.expected_interruptions, 1),
                    g.expected_interruptions,
                    tr("%1 per 1M GPU-hours%2")
                        .arg(si_text(g.interruptions_per_gpu_hour * 1e6))
                        .arg(g.preemptions_per_node_hour > 0
                                 ? tr(", spot %1 per node-hour").arg(fixed_text(g.preemptions_per_node_hour, 4))
                                 : QString())});
    rows.push_back({"mtbi", tr("Mean time between interruptions"), hours_text(mtbi),
                    std::isfinite(mtbi) ? mtbi : 0.0, tr("whole cluster")});
    QString how;
    switch (g.interval_rule) {
      case sim::IntervalRule::scenario: how = tr("given (reliability)"); break;
      case sim::IntervalRule::end_only: how = tr("no interruptions: once, at the end"); break;
      case sim::IntervalRule::daly: how = tr("Daly optimum"); break;
      case sim::IntervalRule::minimum:
        how = tr("the minimum interval; Daly optimum %1").arg(hours_text(g.daly_interval.base()));
        break;
      case sim::IntervalRule::step: how = tr("one step"); break;
      case sim::IntervalRule::persist: how = tr("time to persist one checkpoint"); break;
    }
    rows.push_back({"checkpoint_interval", tr("Checkpoint interval"), hours_text(g.checkpoint_interval.base()),
                    g.checkpoint_interval.base(),
                    tr("%1; Young %2").arg(how, hours_text(g.young_interval.base()))});
    rows.push_back({"checkpoint_write", tr("Checkpoint write"), seconds_text(g.checkpoint_write.base()),
                    g.checkpoint_write.base(),
                    tr("per checkpoint, until durable (%1)").arg(QString::fromLatin1(sim::to_string(g.mode)))});
    rows.push_back({"checkpoint_stall", tr("Checkpoint stall"), seconds_text(g.checkpoint_stall.base()),
                    g.checkpoint_stall.base(), tr("per checkpoint, GPUs paused; %1 in all")
                                                   .arg(days_text(units::to_days(g.checkpoint_overhead)))});
    rows.push_back({"checkpoint_size", tr("Checkpoint size per rank"), bytes_text(g.checkpoint.per_rank_max.base()),
                    g.checkpoint.per_rank_max.base(),
                    tr("%1 total, %2 writers").arg(bytes_text(g.checkpoint.total.base()),
                                                   count_text(static_cast<double>(g.checkpoint.writers)))});
    rows.push_back({"restart", tr("Restart"), seconds_text(g.restart.base()), g.restart.base(),
                    tr("per interruption (checkpoint load %1); %2 in all")
                        .arg(seconds_text(g.checkpoint_read.base()), days_text(units::to_days(g.restart_total)))});
    rows.push_back({"lost_work", tr("Lost work"), days_text(units::to_days(g.lost_work)), g.lost_work.base(),
                    tr("recomputed since the last checkpoint; %1 per interruption")
                        .arg(seconds_text(g.lost_per_interruption.base()))});
    const sim::DataLoadingCheck& d = g.data;
    rows.push_back({"data_loading", tr("Data loading"),
                    d.bound == "none" ? tr("not a bottleneck") : tr("bound by %1").arg(QString::fromStdString(d.bound)),
                    d.slowdown,
                    tr("%1/s needed (%2 B/token)%3")
                        .arg(bytes_text(d.required_bytes_per_s))
                        .arg(fixed_text(d.bytes_per_token, 0))
                        .arg(d.bound == "none" ? QString() : tr("; steps x%1").arg(fixed_text(d.slowdown, 2)))});
    rows.push_back({"fraction", tr("Goodput"), percent_text(g.fraction), g.fraction,
                    g.finite ? tr("useful time / wall time") : tr("interruptions outpace progress: wall is a bound")});
  }
  set_rows(std::move(rows));
}

void GoodputModel::clear() { set_rows({}); }

int GoodputModel::row_of(const std::string& key) const { return row_of_key(QString::fromStdString(key)); }

}  // namespace capplan::gui
