// SPDX-License-Identifier: Apache-2.0
#include "charts.hpp"

#include <QFileInfo>
#include <QPainter>
#include <QPixmap>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSeries>
#include <QtCharts/QStackedBarSeries>
#include <QtCharts/QBarSet>
#include <QtCharts/QHorizontalStackedBarSeries>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>
#include <algorithm>
#include <cmath>
#ifdef CAPPLAN_GUI_HAVE_SVG
#include <QSvgGenerator>
#endif

#include "capplan/data/currency.hpp"
#include "capplan/gui/format.hpp"
#include "capplan/gui/result_models.hpp"
#include "capplan/gui/serve_model.hpp"
#include "capplan/gui/tco_model.hpp"

namespace capplan::gui {

QColor color_for(const QString& key) {
  struct Entry {
    const char* key;
    QRgb rgb;
  };
  // Colour-blind-friendly (Okabe-Ito based) where it matters: compute vs communication vs idle.
  static constexpr Entry kColors[] = {
      {"compute", 0x0072B2},   {"recompute", 0x56B4E9}, {"tp_comm", 0xE69F00},   {"pp_comm", 0xD55E00},
      {"dp_comm", 0xCC79A7},   {"ep_comm", 0xF0E442},   {"cp_comm", 0x999933},   {"bubble", 0xBBBBBB},
      {"optimizer", 0x009E73}, {"variability", 0x882255}, {"host", 0xDDCC77}, {"other", 0x666666},     {"weights", 0x0072B2},   {"gradients", 0x56B4E9},
      {"optimizer_state", 0x009E73}, {"activations", 0xE69F00}, {"logits", 0xD55E00}, {"reserve", 0xBBBBBB},
      {"capacity", 0xDDDDDD},  {"own", 0x0072B2}, {"on_demand", 0xE69F00}, {"reserved", 0x009E73},
      {"spot", 0xCC79A7},      {"scenario", 0x666666},
  };
  for (const auto& e : kColors) {
    if (key == QLatin1String(e.key)) return QColor::fromRgb(e.rgb);
  }
  return QColor(Qt::darkGray);
}

QChartView* make_chart_view(const QString& title, QWidget* parent) {
  auto* chart = new QChart();
  chart->setTitle(title);
  QFont f = chart->titleFont();
  f.setPointSizeF(11);
  f.setBold(true);
  chart->setTitleFont(f);
  chart->setAnimationOptions(QChart::NoAnimation);
  chart->legend()->setAlignment(Qt::AlignRight);
  chart->setMargins(QMargins(4, 4, 4, 4));
  chart->setBackgroundRoundness(0);
  auto* view = new QChartView(chart, parent);
  view->setRenderHint(QPainter::Antialiasing);
  view->setMinimumHeight(220);
  return view;
}

namespace {

void clear_chart(QChart* chart) {
  chart->removeAllSeries();
  for (auto* axis : chart->axes()) {
    chart->removeAxis(axis);
    delete axis;
  }
}

// A round axis maximum: 1, 2, 2.5, 5 x 10^n at or above `v`, and a tick count that divides it.
std::pair<double, int> nice_range(double v) {
  if (!(v > 0) || !std::isfinite(v)) return {1.0, 5};
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0}) {
    if (m * p >= v * 1.0001) {
      const int ticks = (m == 1.2 || m == 6.0) ? 7 : (m == 1.5 || m == 3.0) ? 4 : (m == 2.5 || m == 5.0) ? 6 :
                        (m == 4.0 || m == 8.0) ? 5 : 6;
      return {m * p, ticks};
    }
  }
  return {10 * p, 6};
}

}  // namespace

int tick_decimals(double step) {
  if (!(step > 0) || !std::isfinite(step)) return 0;
  for (int d = 0; d < 6; ++d) {
    const double scaled = step * std::pow(10.0, d);
    if (std::fabs(scaled - std::round(scaled)) < 1e-6 * std::max(1.0, scaled)) return d;
  }
  return 6;
}

void nice_axis(QValueAxis* axis, double max, const QString& suffix) {
  const auto [top, ticks] = nice_range(max);
  axis->setRange(0, top);
  axis->setTickCount(ticks);
  QString escaped = suffix;
  escaped.replace(QLatin1Char('%'), QStringLiteral("%%"));
  axis->setLabelFormat(QStringLiteral("%.%1f").arg(tick_decimals(top / (ticks - 1))) + escaped);
}

void fill_breakdown_chart(QChart* chart, const BreakdownModel& model) {
  clear_chart(chart);
  const double step = model.step_seconds();
  const bool in_ms = step < 1.0;
  const double scale = in_ms ? 1e3 : 1.0;
  auto* series = new QHorizontalStackedBarSeries();
  series->setBarWidth(0.6);
  for (int r = 0; r < model.rowCount(); ++r) {
    const QModelIndex i = model.index(r, BreakdownModel::kTime);
    const double s = i.data(kSortRole).toDouble();
    QString label = model.index(r, BreakdownModel::kPart).data().toString();
    label.replace(QStringLiteral(" (exposed)"), QString());
    auto* set = new QBarSet(label);
    set->append(s * scale);
    const QColor c = color_for(i.data(kKeyRole).toString());
    set->setColor(c);
    set->setBorderColor(c.darker(115));
    series->append(set);
  }
  chart->addSeries(series);
  auto* y = new QBarCategoryAxis();
  y->append(QStringLiteral("step"));
  y->setVisible(false);
  chart->addAxis(y, Qt::AlignLeft);
  series->attachAxis(y);
  auto* x = new QValueAxis();
  const auto [max, ticks] = nice_range(step * scale);
  x->setRange(0, max);
  x->setTickCount(ticks);
  x->setLabelFormat(max >= 100 ? QStringLiteral("%.0f") : QStringLiteral("%.1f"));
  x->setTitleText(in_ms ? QObject::tr("milliseconds per optimizer step") : QObject::tr("seconds per optimizer step"));
  chart->addAxis(x, Qt::AlignBottom);
  series->attachAxis(x);
  chart->legend()->setVisible(true);
}

void fill_memory_chart(QChart* chart, const MemoryModel& model) {
  clear_chart(chart);
  constexpr double kGiB = 1073741824.0;
  auto* series = new QHorizontalStackedBarSeries();
  series->setBarWidth(0.7);
  for (int r = 0; r < model.rowCount(); ++r) {
    const QModelIndex i = model.index(r, MemoryModel::kSize);
    const double bytes = i.data(kSortRole).toDouble();
    QString key = i.data(kKeyRole).toString();
    if (key == QLatin1String("optimizer")) key = QStringLiteral("optimizer_state");
    auto* set = new QBarSet(model.index(r, MemoryModel::kPart).data().toString());
    set->append(0.0);  // capacity bar
    set->append(bytes / kGiB);
    const QColor c = color_for(key);
    set->setColor(c);
    set->setBorderColor(c.darker(115));
    series->append(set);
  }
  auto* cap = new QBarSet(QObject::tr("HBM capacity"));
  cap->append(model.capacity_bytes() / kGiB);
  cap->append(0.0);
  cap->setColor(color_for(QStringLiteral("capacity")));
  cap->setBorderColor(QColor(Qt::gray));
  series->append(cap);
  chart->addSeries(series);
  auto* y = new QBarCategoryAxis();
  // Categories run bottom to top in a horizontal bar chart.
  y->append({QObject::tr("capacity"), QObject::tr("needed")});
  chart->addAxis(y, Qt::AlignLeft);
  series->attachAxis(y);
  auto* x = new QValueAxis();
  const auto [max, ticks] = nice_range(std::max(model.capacity_bytes(), model.total_bytes()) / kGiB);
  x->setRange(0, max);
  x->setTickCount(ticks);
  x->setLabelFormat(QStringLiteral("%.0f"));
  x->setTitleText(QObject::tr("GiB per GPU (most loaded GPU)"));
  chart->addAxis(x, Qt::AlignBottom);
  series->attachAxis(x);
}

namespace {

QLineSeries* tco_line(QChart* chart, const QString& name, const QString& key, qreal width, Qt::PenStyle style) {
  auto* line = new QLineSeries();
  line->setName(name);
  QPen pen(color_for(key));
  pen.setWidthF(width);
  pen.setStyle(style);
  line->setPen(pen);
  chart->addSeries(line);
  return line;
}

// A point with `label` written above it, left out of the legend.
QScatterSeries* marked_point(QChart* chart, QPointF at, const QString& key, const QString& label) {
  auto* point = new QScatterSeries();
  point->setName(label);
  point->setMarkerSize(11);
  point->setColor(color_for(key));
  point->setBorderColor(Qt::white);
  point->append(at);
  point->setPointLabelsFormat(label);  // no @xPoint/@yPoint: the text itself
  point->setPointLabelsVisible(true);
  point->setPointLabelsClipping(false);
  point->setPointLabelsColor(color_for(key).darker(140));
  QFont f = point->pointLabelsFont();
  f.setBold(true);
  point->setPointLabelsFont(f);
  chart->addSeries(point);
  for (auto* marker : chart->legend()->markers(point)) marker->setVisible(false);
  return point;
}

}  // namespace

void fill_tco_chart(QChart* chart, const TcoSnapshot& snapshot) {
  clear_chart(chart);
  const sim::Currency& cur = snapshot.request.currency;
  const sim::Tco& t = snapshot.tco;
  const double u = snapshot.request.inputs.utilisation;
  auto in_currency = [&cur](double usd) { return data::from_usd(usd, cur); };
  // The y range: every rent rate, and the own cost at the scenario's utilisation and at 100 %, with
  // room above; the own curve rises past it at low utilisation and is cut at the top.
  double top = 0;
  for (const sim::RentOption& o : t.rent) {
    if (o.usd_per_gpu_hour) top = std::max(top, in_currency(*o.usd_per_gpu_hour));
  }
  if (t.own_usd_per_useful_gpu_hour) top = std::max(top, in_currency(*t.own_usd_per_useful_gpu_hour));
  if (!snapshot.own_curve.empty()) top = std::max(top, in_currency(snapshot.own_curve.back().usd_per_useful_gpu_hour));
  auto* x = new QValueAxis();
  x->setRange(0, 100);
  x->setTickCount(11);
  x->setLabelFormat(QStringLiteral("%.0f %%"));
  x->setTitleText(QObject::tr("utilisation of the owned fleet (share of its hours doing useful work)"));
  auto* y = new QValueAxis();
  nice_axis(y, top > 0 ? top * 1.5 : 1.0);
  y->setTitleText(QObject::tr("%1 per useful GPU-hour").arg(QString::fromStdString(cur.code)));
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  auto attach = [x, y](QAbstractSeries* s) {
    s->attachAxis(x);
    s->attachAxis(y);
  };

  // The scenario's own utilisation: a vertical line, first, under the labels drawn later; the own
  // cost there is in its legend entry (a marker on the curve would hide a break-even label near it).
  QLineSeries* at = tco_line(chart,
                             t.own_usd_per_useful_gpu_hour
                                 ? QObject::tr("scenario %1: own %2")
                                       .arg(percent_text(u), money_text(*t.own_usd_per_useful_gpu_hour, cur))
                                 : QObject::tr("scenario %1").arg(percent_text(u)),
                             QStringLiteral("scenario"), 1.5, Qt::DotLine);
  at->append(100.0 * u, 0);
  at->append(100.0 * u, y->max());
  attach(at);
  if (!snapshot.own_curve.empty()) {
    QLineSeries* own = tco_line(chart, QObject::tr("own, %1 years").arg(snapshot.request.inputs.years),
                                QStringLiteral("own"), 3.0, Qt::SolidLine);
    for (const TcoPoint& p : snapshot.own_curve) {
      own->append(100.0 * p.utilisation, in_currency(p.usd_per_useful_gpu_hour));
    }
    attach(own);
  }
  for (const sim::RentOption& o : t.rent) {
    if (!o.usd_per_gpu_hour) continue;  // no rate: listed as missing, not drawn
    const QString key = QString::fromStdString(o.name);
    const double rate = in_currency(*o.usd_per_gpu_hour);
    QLineSeries* line = tco_line(
        chart, QObject::tr("%1 %2").arg(rent_option_text(o.name), money_text(*o.usd_per_gpu_hour, cur)), key, 2.0,
        Qt::DashLine);
    line->append(0, rate);
    line->append(100, rate);
    attach(line);
  }
  // The break-even points last: their labels are drawn over every line.
  for (const sim::RentOption& o : t.rent) {
    if (!o.usd_per_gpu_hour || !o.break_even_utilisation) continue;
    const QString label =
        QObject::tr("%1 vs %2").arg(percent_text(*o.break_even_utilisation), rent_option_text(o.name));
    attach(marked_point(chart, QPointF(100.0 * *o.break_even_utilisation, in_currency(*o.usd_per_gpu_hour)),
                        QString::fromStdString(o.name), label));
  }
  chart->legend()->setVisible(true);
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setTitle(QObject::tr("Cost per useful GPU-hour: owning %1 against renting")
                      .arg(QString::fromStdString(snapshot.request.fleet)));
}

namespace {

// Large amounts on an axis in thousands or millions: the divisor and the labels' suffix.
std::pair<double, QString> axis_scale(double top) {
  if (top >= 1e6) return {1e6, QStringLiteral("M")};
  if (top >= 1e4) return {1e3, QStringLiteral("k")};
  return {1.0, QString()};
}

QString layout_text(const sim::ServeJob& j) {
  QString s = QStringLiteral("TP%1").arg(j.tp);
  if (j.pp > 1) s += QStringLiteral(" PP%1").arg(j.pp);
  if (j.ep > 1) s += QStringLiteral(" EP%1").arg(j.ep);
  return s + QLatin1Char(' ') + QString::fromLatin1(sim::to_string(j.weights));
}

// The options the charts draw: compare mode's list (an offering search's 20 cheapest and its
// Pareto front: hundreds of bars are not read), else the asked layout alone.
std::vector<const data::ServeOption*> drawn_options(const ServeSnapshot& s) {
  std::vector<const data::ServeOption*> out;
  const auto& all = s.result.options;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const bool front = std::find(s.result.pareto.begin(), s.result.pareto.end(), i) != s.result.pareto.end();
    if (all.size() <= 24 || i < 20 || front) out.push_back(&all[i]);
  }
  if (out.empty()) out.push_back(&s.result.asked);
  return out;
}

bool on_front(const ServeSnapshot& s, const data::ServeOption* o) {
  for (std::size_t i : s.result.pareto) {
    if (&s.result.options[i] == o) return true;
  }
  return false;
}

}  // namespace

void fill_serve_curve_chart(QChart* chart, const ServeSnapshot& snapshot) {
  clear_chart(chart);
  const sim::ServeJob& job = snapshot.request.job;
  const SloMetric metric = slo_metric(job);
  const double q = job.slo.percentile;
  const QString pq = QStringLiteral("p%1").arg(fixed_text(q * 100, 0));
  // TPOT is milliseconds; the others seconds.
  const bool ms = metric.kind == SloMetric::kTpot;
  const double scale = ms ? 1e3 : 1.0;
  auto* p50 = new QLineSeries();
  p50->setName(QStringLiteral("p50"));
  auto* pct = new QLineSeries();
  pct->setName(pq);
  auto* ttft = new QLineSeries();
  ttft->setName(QObject::tr("TTFT %1").arg(pq));
  double top_x = 0, top_y = 0;
  int saturated = 0;
  for (const sim::CurvePoint& p : snapshot.result.curve) {
    top_x = std::max(top_x, p.rate);
    if (p.load.saturated) {
      ++saturated;
      continue;
    }
    p50->append(p.rate, scale * metric.at(p.load, 0.5));
    pct->append(p.rate, scale * metric.at(p.load, q));
    if (metric.kind != SloMetric::kTtft && !ms) ttft->append(p.rate, p.load.ttft.at(q));
    top_y = std::max({top_y, scale * metric.at(p.load, q), ttft->count() > 0 ? p.load.ttft.at(q) : 0.0});
  }
  if (metric.target_s > 0) top_y = std::max(top_y, scale * metric.target_s);
  auto* x = new QValueAxis();
  nice_axis(x, top_x > 0 ? top_x : 1.0);
  x->setTitleText(QObject::tr("requests/s offered to one replica (%1)").arg(layout_text(job)));
  auto* y = new QValueAxis();
  nice_axis(y, top_y > 0 ? top_y * 1.1 : 1.0);
  y->setTitleText(ms ? QObject::tr("ms per output token") : QObject::tr("seconds"));
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  const auto add = [&](QLineSeries* s, QRgb rgb, qreal width, Qt::PenStyle style) {
    QPen pen{QColor::fromRgb(rgb)};
    pen.setWidthF(width);
    pen.setStyle(style);
    s->setPen(pen);
    chart->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
  };
  add(p50, 0x56B4E9, 2.0, Qt::SolidLine);
  add(pct, 0x0072B2, 3.0, Qt::SolidLine);
  if (ttft->count() > 0) {
    add(ttft, 0xE69F00, 2.0, Qt::SolidLine);
  } else {
    delete ttft;
  }
  if (metric.target_s > 0) {
    auto* target = new QLineSeries();
    target->setName(QObject::tr("target %1").arg(ms ? fixed_text(metric.target_s * 1e3, 1) + QStringLiteral(" ms")
                                                    : seconds_text(metric.target_s)));
    target->append(0, scale * metric.target_s);
    target->append(x->max(), scale * metric.target_s);
    add(target, 0xD55E00, 1.5, Qt::DashLine);
  }
  const sim::ServePlan& plan = snapshot.result.asked.plan;
  if (plan.max_rate > 0 && std::isfinite(plan.max_rate)) {
    auto* limit = new QLineSeries();
    limit->setName(QObject::tr("max %1 req/s").arg(fixed_text(plan.max_rate, 2)));
    limit->append(plan.max_rate, 0);
    limit->append(plan.max_rate, y->max());
    add(limit, 0x009E73, 1.5, Qt::DotLine);
  }
  chart->legend()->setVisible(true);
  chart->legend()->setAlignment(Qt::AlignBottom);
  const QString head = QObject::tr("%1 latency under load").arg(metric.name);
  chart->setTitle(saturated > 0 ? QObject::tr("%1 (saturated rates not drawn: %2)").arg(head).arg(saturated) : head);
}

void fill_serve_layouts_chart(QChart* chart, const ServeSnapshot& snapshot) {
  clear_chart(chart);
  const auto options = drawn_options(snapshot);
  const sim::Currency& cur = snapshot.request.currency;
  bool priced = true;
  for (const auto* o : options) {
    if (o->plan.feasible && !o->plan.usd_per_month) priced = false;
  }
  auto* front = new QBarSet(QObject::tr("on the Pareto front"));
  front->setColor(color_for(QStringLiteral("compute")));
  auto* rest = new QBarSet(QObject::tr("other layouts"));
  rest->setColor(QColor::fromRgb(0xBBBBBB));
  QStringList labels;
  double top = 0;
  for (const auto* o : options) {
    if (!o->plan.feasible) continue;
    top = std::max(top, priced ? data::from_usd(*o->plan.usd_per_month, cur) : static_cast<double>(o->plan.gpus));
  }
  const auto [div, suffix] = priced ? axis_scale(top) : std::pair<double, QString>{1.0, QString()};
  for (const auto* o : options) {
    if (!o->plan.feasible) continue;
    const double v = (priced ? data::from_usd(*o->plan.usd_per_month, cur) : static_cast<double>(o->plan.gpus)) / div;
    // Without compare mode the one layout drawn is the plan itself: in the front's colour.
    const bool f = snapshot.result.options.empty() || on_front(snapshot, o);
    *front << (f ? v : 0.0);
    *rest << (f ? 0.0 : v);
    const QString where = o->instance_id.empty() ? QString() : QString::fromStdString(o->instance_id) + QLatin1Char(' ');
    labels << QObject::tr("%1%2 x%3").arg(where, layout_text(o->job)).arg(o->plan.replicas);
  }
  auto* series = new QHorizontalStackedBarSeries();  // one of the two sets is zero per layout
  series->append(front);
  series->append(rest);
  series->setBarWidth(0.7);
  chart->addSeries(series);
  auto* x = new QBarCategoryAxis();
  x->append(labels);
  x->setTruncateLabels(false);

  auto* y = new QValueAxis();
  nice_axis(y, top > 0 ? top * 1.05 / div : 1.0, suffix);
  y->setTitleText(priced ? QObject::tr("%1 per month").arg(QString::fromStdString(cur.code))
                         : QObject::tr("GPUs (no price: cost unknown)"));
  chart->addAxis(x, Qt::AlignLeft);
  chart->addAxis(y, Qt::AlignBottom);
  series->attachAxis(x);
  series->attachAxis(y);
  chart->legend()->setVisible(!snapshot.result.options.empty());
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setTitle(priced ? QObject::tr("Replicas and cost per month by layout") : QObject::tr("GPUs by layout"));
}

void fill_serve_pareto_chart(QChart* chart, const ServeSnapshot& snapshot) {
  clear_chart(chart);
  const auto options = drawn_options(snapshot);
  const sim::Currency& cur = snapshot.request.currency;
  const sim::ServeJob& job = snapshot.request.job;
  const SloMetric metric = slo_metric(job);
  const double q = job.slo.percentile;
  bool priced = true;
  for (const auto* o : options) {
    if (o->plan.feasible && !o->plan.usd_per_million_output) priced = false;
  }
  auto* others = new QScatterSeries();
  others->setName(QObject::tr("layouts"));
  others->setMarkerSize(9);
  others->setColor(QColor::fromRgb(0x999999));
  auto* front = new QScatterSeries();
  front->setName(QObject::tr("Pareto front"));
  front->setMarkerSize(13);
  front->setColor(color_for(QStringLiteral("compute")));
  auto* line = new QLineSeries();
  line->setName(QObject::tr("front"));
  line->setPen(QPen(color_for(QStringLiteral("compute")), 1.5, Qt::DashLine));
  std::vector<std::pair<QPointF, QString>> front_points;
  double top_x = 0, top_y = 0;
  for (const auto* o : options) {
    if (!o->plan.feasible) continue;
    const double lat = metric.at(o->plan.at_rate, q) * (metric.kind == SloMetric::kTpot ? 1e3 : 1.0);
    const double v = priced ? data::from_usd(*o->plan.usd_per_million_output, cur) : static_cast<double>(o->plan.gpus);
    top_x = std::max(top_x, lat);
    top_y = std::max(top_y, v);
    if (on_front(snapshot, o)) {
      const QString where = o->instance_id.empty() ? QString() : QString::fromStdString(o->instance_id) + QLatin1Char(' ');
      front_points.emplace_back(QPointF(lat, v), where + layout_text(o->job));
    } else {
      others->append(lat, v);
    }
  }
  std::sort(front_points.begin(), front_points.end(),
            [](const auto& a, const auto& b) { return a.first.x() < b.first.x(); });
  QStringList names;
  for (const auto& [pt, name] : front_points) {
    front->append(pt);
    line->append(pt);
    names << name;
  }
  auto* x = new QValueAxis();
  nice_axis(x, top_x > 0 ? top_x * 1.1 : 1.0);
  x->setTitleText(QObject::tr("%1 p%2 at the planned load (%3)")
                      .arg(metric.name, fixed_text(q * 100, 0),
                           metric.kind == SloMetric::kTpot ? QObject::tr("ms") : QObject::tr("s")));
  auto* y = new QValueAxis();
  nice_axis(y, top_y > 0 ? top_y * 1.15 : 1.0);
  y->setTitleText(priced ? QObject::tr("%1 per 1M output tokens").arg(QString::fromStdString(cur.code))
                         : QObject::tr("GPUs (no price: cost unknown)"));
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  for (QXYSeries* s : {static_cast<QXYSeries*>(line), static_cast<QXYSeries*>(others), static_cast<QXYSeries*>(front)}) {
    chart->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
  }
  // Each front point labelled with its layout: one invisible one-point series per label (a series'
  // label format is one text for all its points in Qt 6.4).
  for (int i = 0; i < static_cast<int>(front_points.size()); ++i) {
    auto* label = new QScatterSeries();
    label->setName(names[i]);
    label->setMarkerSize(1);
    label->setColor(Qt::transparent);
    label->setBorderColor(Qt::transparent);
    label->append(front_points[static_cast<std::size_t>(i)].first);
    label->setPointLabelsFormat(names[i]);
    label->setPointLabelsVisible(true);
    label->setPointLabelsClipping(false);
    label->setPointLabelsColor(color_for(QStringLiteral("compute")).darker(140));
    chart->addSeries(label);
    label->attachAxis(x);
    label->attachAxis(y);
    for (auto* marker : chart->legend()->markers(label)) marker->setVisible(false);
  }
  for (auto* marker : chart->legend()->markers(line)) marker->setVisible(false);
  chart->legend()->setVisible(true);
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setTitle(QObject::tr("Cost against latency: the Pareto front"));
}

void fill_lifecycle_chart(QChart* chart, const ServeSnapshot& snapshot) {
  clear_chart(chart);
  const auto& life = snapshot.result.lifecycle;
  if (!life) {
    chart->setTitle(QObject::tr("Train, then serve: tick the box to add the Estimate tab's training"));
    return;
  }
  const sim::Currency& cur = snapshot.request.currency;
  if (!life->total_usd || !life->training_usd || !life->serving_usd_per_month) {
    chart->setTitle(QObject::tr("Train, then serve: cost unknown (%1)")
                        .arg(!life->training_usd ? QObject::tr("the training scenario has no price")
                                                 : QObject::tr("the serving scenario has no price")));
    return;
  }
  auto* training = new QBarSet(QObject::tr("%1 (%2)").arg(QString::fromStdString(life->training_workload),
                                                         money_text(*life->training_usd, cur)));
  training->setColor(color_for(QStringLiteral("compute")));
  auto* serving = new QBarSet(QObject::tr("serving %1 (%2 per month)")
                                  .arg(QString::fromStdString(life->serving_layout),
                                       money_text(*life->serving_usd_per_month, cur)));
  serving->setColor(color_for(QStringLiteral("tp_comm")));
  QStringList months;
  const double top = data::from_usd(*life->total_usd, cur);
  const auto [div, suffix] = axis_scale(top);
  for (std::size_t m = 0; m < life->cumulative_usd.size(); ++m) {
    const double total = life->cumulative_usd[m].value_or(0.0);
    *training << data::from_usd(*life->training_usd, cur) / div;
    *serving << data::from_usd(total - *life->training_usd, cur) / div;
    months << (m == 0 ? QObject::tr("trained") : QString::number(m));
  }
  auto* series = new QStackedBarSeries();
  series->append(training);
  series->append(serving);
  series->setBarWidth(0.7);
  chart->addSeries(series);
  auto* x = new QBarCategoryAxis();
  x->append(months);
  x->setTruncateLabels(false);
  x->setTitleText(QObject::tr("months of serving"));
  auto* y = new QValueAxis();
  nice_axis(y, top > 0 ? top * 1.05 / div : 1.0, suffix);
  y->setTitleText(QObject::tr("%1, cumulative").arg(QString::fromStdString(cur.code)));
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  series->attachAxis(x);
  series->attachAxis(y);
  chart->legend()->setVisible(true);
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setTitle(QObject::tr("Train, then serve: %1 after %2 months").arg(money_text(*life->total_usd, cur)).arg(life->months));
}

bool svg_export_available() {
#ifdef CAPPLAN_GUI_HAVE_SVG
  return true;
#else
  return false;
#endif
}

QString export_chart(QChartView* view, const QString& file) {
  const QString ext = QFileInfo(file).suffix().toLower();
  if (ext == QLatin1String("svg")) {
#ifdef CAPPLAN_GUI_HAVE_SVG
    QSvgGenerator svg;
    svg.setFileName(file);
    svg.setSize(view->size());
    svg.setViewBox(QRect(QPoint(0, 0), view->size()));
    svg.setTitle(view->chart()->title());
    QPainter painter;
    if (!painter.begin(&svg)) return QObject::tr("cannot write %1").arg(file);
    view->render(&painter, QRectF(QPointF(0, 0), QSizeF(view->size())), view->viewport()->rect());
    painter.end();
    return {};
#else
    return QObject::tr("SVG export needs QtSvg (qt6-svg-dev), which this build lacks; save as .png");
#endif
  }
  const qreal dpr = 2.0;  // crisp on high-density screens and in documents
  QPixmap pixmap(view->size() * dpr);
  pixmap.setDevicePixelRatio(dpr);
  pixmap.fill(Qt::white);
  QPainter painter(&pixmap);
  painter.setRenderHint(QPainter::Antialiasing);
  // Target in logical pixels: the painter scales by the pixmap's device pixel ratio.
  view->render(&painter, QRectF(QPointF(0, 0), QSizeF(view->size())), view->viewport()->rect());
  painter.end();
  if (!pixmap.save(file, "PNG")) return QObject::tr("cannot write %1").arg(file);
  return {};
}

}  // namespace capplan::gui
