#include <QPen>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>

#include "chart_style.hpp"
#include "hdlab/charts/charts.hpp"

namespace hdlab::charts {
namespace {

Qt::PenStyle pen_style(LineStyle s) {
  switch (s) {
    case LineStyle::solid: return Qt::SolidLine;
    case LineStyle::dashed: return Qt::DashLine;
    case LineStyle::dotted: return Qt::DotLine;
    case LineStyle::dash_dot: return Qt::DashDotLine;
    case LineStyle::dash_dot_dot: return Qt::DashDotDotLine;
  }
  return Qt::SolidLine;
}

void attach(QChart* chart, QXYSeries* series, QAbstractAxis* x, QAbstractAxis* y) {
  chart->addSeries(series);
  series->attachAxis(x);
  series->attachAxis(y);
}

}  // namespace

std::unique_ptr<QChart> build_line_chart(const LineChart& spec) {
  std::unique_ptr<QChart> chart(detail::new_chart(spec.title));
  detail::Range xr, yr;
  const bool xlog = spec.x.log_base > 0, ylog = spec.y.log_base > 0;
  for (const auto& s : spec.series)
    for (const auto& p : s.points)
      if (detail::drawable(p, spec.x, spec.y)) {
        xr.add(p.x, xlog);
        yr.add(p.y, ylog);
      }
  for (const auto& r : spec.references) yr.add(r.y, ylog);
  QAbstractAxis* x = detail::make_axis(spec.x, xr);
  QAbstractAxis* y = detail::make_axis(spec.y, yr);
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  for (std::size_t i = 0; i < spec.series.size(); ++i) {
    const LineSeries& s = spec.series[i];
    auto* series = new QLineSeries();
    series->setName(QString::fromStdString(s.name));
    QStringList labels;  // of the points drawn, so index i is the series' point i
    for (std::size_t k = 0; k < s.points.size(); ++k)
      if (detail::drawable(s.points[k], spec.x, spec.y)) {
        series->append(s.points[k].x, s.points[k].y);
        labels << (k < s.labels.size() ? QString::fromStdString(s.labels[k]) : QString());
      }
    series->setProperty(detail::kHoverLabels, labels);
    if (!s.group.empty()) series->setProperty(detail::kLegendGroup, QString::fromStdString(s.group));
    QPen pen(palette(s.colour >= 0 ? s.colour : static_cast<int>(i)));
    pen.setWidthF(2.0);
    pen.setStyle(pen_style(s.style));
    series->setPen(pen);
    series->setPointsVisible(s.markers);
    attach(chart.get(), series, x, y);
    if (!s.in_legend)
      for (QLegendMarker* m : chart->legend()->markers(series)) m->setVisible(false);
  }
  // References span the x range the axis shows, drawn thin and grey-dark.
  const double x0 = xr.empty() ? 0 : xr.lo, x1 = xr.empty() ? 1 : xr.hi;
  for (const auto& r : spec.references) {
    if (ylog && r.y <= 0) continue;
    auto* series = new QLineSeries();
    series->setName(QString::fromStdString(r.name));
    series->append(x0, r.y);
    series->append(x1, r.y);
    QPen pen(QColor(0x55, 0x55, 0x55));
    pen.setWidthF(1.2);
    pen.setStyle(Qt::DashDotLine);
    series->setPen(pen);
    series->setProperty(detail::kNoHover, true);  // its value is in its name
    attach(chart.get(), series, x, y);
  }
  // Many entries do not fit in one row under the plot; a column on the right does
  // (fit_labels also moves a row that is too wide for the size the chart is drawn at).
  std::size_t entries = spec.references.size();
  for (const auto& s : spec.series) entries += s.in_legend ? 1 : 0;
  if (entries > 4) chart->legend()->setAlignment(Qt::AlignRight);
  return chart;
}

}  // namespace hdlab::charts
