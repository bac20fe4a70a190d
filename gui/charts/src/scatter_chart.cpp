#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_map>

#include <QPen>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QScatterSeries>

#include "chart_style.hpp"
#include "hdlab/charts/charts.hpp"

namespace hdlab::charts {
namespace {

// A straight line y = factor * x over [lo, hi] (a straight line on log-log axes too).
QLineSeries* proportional_line(const QString& name, double factor, double lo, double hi, Qt::PenStyle style) {
  auto* s = new QLineSeries();
  s->setName(name);
  // Many points so the line stays straight on a log axis whatever Qt interpolates.
  const int n = 32;
  for (int i = 0; i <= n; ++i) {
    const double x = lo * std::pow(hi / lo, static_cast<double>(i) / n);
    s->append(x, factor * x);
  }
  QPen pen(QColor(0x66, 0x66, 0x66));
  pen.setWidthF(1.2);
  pen.setStyle(style);
  s->setPen(pen);
  s->setProperty(detail::kNoHover, true);  // a guide, not data
  return s;
}

// Where a value falls on an axis, 0 at lo and 1 at hi, in the axis's own scale.
double axis_fraction(double v, const detail::Range& r, bool log) {
  if (log) return (std::log(v) - std::log(r.lo)) / std::max(std::log(r.hi) - std::log(r.lo), 1e-300);
  return (v - r.lo) / std::max(r.hi - r.lo, 1e-300);
}

// The markers one group draws, and the hover label of each. Qt Charts makes a graphics
// item per scatter marker and rebuilds them all on every geometry change (a 58k-row kernel
// report took 12 s to show, and cost grows faster than the count). So a chart of more than
// kMergeAbove points draws, per group, one marker per cell of a kCells x kCells grid over
// the axes: markers 10 px wide that close overlap anyway. The kept marker is the cell's
// first point; its label says how many points it stands for. Statistics and titles are
// computed from every point, before this.
constexpr std::size_t kMergeAbove = 5000;
constexpr int kCells = 100;

struct Markers {
  QList<QPointF> points;
  QStringList labels;
};

Markers group_markers(const ScatterGroup& g, const ScatterChart& spec, const detail::Range& xr,
                      const detail::Range& yr, bool merge) {
  Markers m;
  m.points.reserve(static_cast<qsizetype>(g.points.size()));
  std::unordered_map<long long, qsizetype> cell_marker;
  std::vector<long long> merged;  // points each marker stands for beyond itself
  for (std::size_t k = 0; k < g.points.size(); ++k) {
    const XY& p = g.points[k];
    if (!detail::drawable(p, spec.x, spec.y)) continue;
    if (merge) {
      const auto cell = [](double f) {
        return std::min<long long>(static_cast<long long>(std::max(f, 0.0) * kCells), kCells - 1);
      };
      const long long key = cell(axis_fraction(p.x, xr, spec.x.log_base > 0)) * kCells +
                            cell(axis_fraction(p.y, yr, spec.y.log_base > 0));
      const auto [it, fresh] = cell_marker.emplace(key, m.points.size());
      if (!fresh) {
        ++merged[static_cast<std::size_t>(it->second)];
        continue;
      }
      merged.push_back(0);
    }
    m.points.append(QPointF(p.x, p.y));
    m.labels << (k < g.labels.size() ? QString::fromStdString(g.labels[k]) : QString());
  }
  for (std::size_t i = 0; i < merged.size(); ++i)
    if (merged[i] > 0)
      m.labels[static_cast<qsizetype>(i)] += QString(" (one marker for %1 points close together)").arg(merged[i] + 1);
  return m;
}

}  // namespace

std::unique_ptr<QChart> build_scatter_chart(const ScatterChart& spec) {
  std::unique_ptr<QChart> chart(detail::new_chart(spec.title));
  const bool xlog = spec.x.log_base > 0, ylog = spec.y.log_base > 0;
  detail::Range xr, yr;
  std::size_t drawn = 0;
  for (const auto& g : spec.groups)
    for (const auto& p : g.points)
      if (detail::drawable(p, spec.x, spec.y)) {
        xr.add(p.x, xlog);
        yr.add(p.y, ylog);
        ++drawn;
      }
  const bool reference = spec.identity_line || spec.band > 0;
  if (reference && !xr.empty()) {
    // Predicted and measured share one range, so y = x is the diagonal.
    const double lo = std::min(xr.lo, yr.lo), hi = std::max(xr.hi, yr.hi);
    xr = yr = detail::Range{lo, hi};
  }
  QAbstractAxis* x = detail::make_axis(spec.x, xr);
  QAbstractAxis* y = detail::make_axis(spec.y, yr);
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  for (std::size_t i = 0; i < spec.groups.size(); ++i) {
    auto* series = new QScatterSeries();
    series->setName(QString::fromStdString(spec.groups[i].name));
    series->setMarkerSize(10);
    series->setColor(palette(static_cast<int>(i)));
    series->setBorderColor(palette(static_cast<int>(i)).darker(140));
    // One append of the whole list (appending point by point repaints per point). The
    // labels are of the markers drawn, so label k is the series' point k.
    const Markers m = group_markers(spec.groups[i], spec, xr, yr, drawn > kMergeAbove);
    series->append(m.points);
    series->setProperty(detail::kHoverLabels, m.labels);
    chart->addSeries(series);
    series->attachAxis(x);
    series->attachAxis(y);
  }
  if (reference && !xr.empty()) {
    // Draw across the whole visible axis range (make_axis rounds to powers of the base).
    const double lo = xlog ? std::max(xr.lo / 10, 1e-300) : xr.lo, hi = xr.hi * 10;
    std::vector<QLineSeries*> lines;
    if (spec.identity_line) lines.push_back(proportional_line("predicted = measured", 1.0, lo, hi, Qt::DashLine));
    if (spec.band > 0) {
      char name[64];
      std::snprintf(name, sizeof name, "+-%g %%", spec.band * 100);
      lines.push_back(proportional_line(name, 1.0 + spec.band, lo, hi, Qt::DotLine));
      lines.push_back(proportional_line("", 1.0 - spec.band, lo, hi, Qt::DotLine));
      lines.back()->setProperty(detail::kLegendGroup, QString(name));  // hidden with the upper line
    }
    for (QLineSeries* s : lines) {
      chart->addSeries(s);
      s->attachAxis(x);
      s->attachAxis(y);
    }
    // The lower band line repeats the upper one's legend entry.
    if (spec.band > 0) chart->legend()->markers(lines.back()).front()->setVisible(false);
  }
  return chart;
}

ScatterChart validation_scatter(const std::vector<gui_core::ValidationPoint>& points, const std::string& title) {
  ScatterChart spec;
  const gui_core::ValidationSummary sum = gui_core::summarize(points);
  char stats[160];
  std::snprintf(stats, sizeof stats, " (%lld points, median error %.1f %%, %.0f %% within 20 %%)",
                static_cast<long long>(sum.points), sum.median_abs_error * 100, sum.within_20_percent * 100);
  spec.title = title + (points.empty() ? std::string(" (no points)") : std::string(stats));
  spec.x = {"measured time (s)", 10};
  spec.y = {"predicted time (s)", 10};
  spec.identity_line = true;
  spec.band = 0.2;
  for (const auto& design : sum.designs) {
    ScatterGroup g{design, {}, {}};
    for (const auto& p : points)
      if (p.design == design) {
        g.points.push_back({p.measured_s, p.predicted_s});
        g.labels.push_back(p.label);
      }
    spec.groups.push_back(std::move(g));
  }
  return spec;
}

}  // namespace hdlab::charts
