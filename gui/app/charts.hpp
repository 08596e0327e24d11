// SPDX-License-Identifier: Apache-2.0
// Charts of one estimate and of own versus rent, drawn from the read-only models (no numbers
// computed here).
#pragma once
#include <QColor>
#include <QString>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QValueAxis>

namespace capplan::gui {

class BreakdownModel;
class MemoryModel;
struct TcoSnapshot;
struct ServeSnapshot;

// A colour per row key ("compute", "tp_comm", "weights", ...), the same in every chart.
QColor color_for(const QString& key);

// A chart view set up for screenshots and export: antialiased, no animation, readable fonts.
QChartView* make_chart_view(const QString& title, QWidget* parent);

// One horizontal stacked bar: the step time split by where it goes (ms or s per step).
void fill_breakdown_chart(QChart* chart, const BreakdownModel& model);
// Two horizontal bars: memory needed per GPU by kind, and the GPU's HBM capacity (GiB).
void fill_memory_chart(QChart* chart, const MemoryModel& model);

// Own versus rent (capplan tco): cost per useful GPU-hour against utilisation in the scenario's
// currency: the own fleet's curve (sim::tco at each utilisation), a horizontal line per rent option
// with a rate, a labelled point at each break-even utilisation, and the scenario's utilisation.
void fill_tco_chart(QChart* chart, const TcoSnapshot& snapshot);

// Serving (capplan serve): the asked layout's latency against the offered rate (p50 and p95 of
// the SLO's latency and TTFT p95; saturated rates left out), the target as a line and the plan's
// max_rate as a marker.
void fill_serve_curve_chart(QChart* chart, const ServeSnapshot& snapshot);
// Every layout planned (compare mode; else the asked one): the cost per month of its replicas, or
// its GPUs when the price is unknown, Pareto-front layouts in their own colour.
void fill_serve_layouts_chart(QChart* chart, const ServeSnapshot& snapshot);
// The feasible layouts as points of latency (the SLO's percentile) against cost per million output
// tokens (GPUs when unknown), the Pareto front joined by a line.
void fill_serve_pareto_chart(QChart* chart, const ServeSnapshot& snapshot);
// Train, then serve: the cumulative cost after training and after each month of serving, the
// training and the serving parts stacked. Empty (with a title saying why) without a lifecycle.
void fill_lifecycle_chart(QChart* chart, const ServeSnapshot& snapshot);

// Sets a value axis to 0..a round maximum at or above `max`, with ticks on round numbers and
// labels with the decimals the tick step needs ("0, 0.5, 1, 1.5", never "0, 0, 1, 1"), each
// followed by `suffix` ("M" for millions).
void nice_axis(QValueAxis* axis, double max, const QString& suffix = {});
// The decimals a label needs to tell ticks `step` apart: 0 for 1, 2, 5; 1 for 0.5; 2 for 0.25.
int tick_decimals(double step);

// Writes the chart view as PNG (any other extension) or SVG (".svg", when built with QtSvg).
// Returns an empty string on success, else the reason.
QString export_chart(QChartView* view, const QString& file);
bool svg_export_available();

}  // namespace capplan::gui
