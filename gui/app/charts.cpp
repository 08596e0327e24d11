// SPDX-License-Identifier: Apache-2.0
#include "charts.hpp"

#include <QFileInfo>
#include <QPainter>
#include <QPixmap>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QHorizontalStackedBarSeries>
#include <QtCharts/QLegend>
#include <QtCharts/QValueAxis>
#include <algorithm>
#include <cmath>
#ifdef CAPPLAN_GUI_HAVE_SVG
#include <QSvgGenerator>
#endif

#include "capplan/gui/result_models.hpp"

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
      {"capacity", 0xDDDDDD},
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
