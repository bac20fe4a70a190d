// Hover read-out, zoom and pan, legend toggling over the charts the builders made
// (interact.hpp); the builders' series properties (chart_style.hpp) carry what a read-out
// shows beyond the point's coordinates.
#include "hdlab/charts/interact.hpp"

#include <cmath>
#include <limits>

#include <QBrush>
#include <QRegularExpression>
#include <QtCharts/QAreaSeries>
#include <QtCharts/QCategoryAxis>
#include <QtCharts/QLegend>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QValueAxis>
#include <QtCharts/QXYSeries>

#include "chart_style.hpp"

namespace hdlab::charts {
namespace {

using detail::kHoverBars;
using detail::kHoverLabels;
using detail::kLegendGroup;
using detail::kNoHover;

const char* const kEntry = "hdlab_legend_entry";  // the builder's choice: marker shown in the legend
const char* const kBrush = "hdlab_marker_brush";
const char* const kLabelBrush = "hdlab_marker_label_brush";

QAbstractAxis* attached(QAbstractSeries& series, Qt::Orientation o) {
  for (QAbstractAxis* a : series.attachedAxes())
    if (a->orientation() == o) return a;
  return nullptr;
}

// "batch (sequences)" and 32 -> "batch: 32 sequences"; a title that is only a unit
// ("tokens/s", "x baseline") follows the value: "1234.5 tokens/s".
QString axis_line(const QAbstractAxis* axis, double v) {
  const QString title = axis ? axis->titleText() : QString();
  static const QRegularExpression with_unit(R"(^(.*\S)\s*\(([^()]*)\)$)");
  const QRegularExpressionMatch m = with_unit.match(title);
  if (m.hasMatch()) return QString("%1: %2 %3").arg(m.captured(1), read_out_number(v), m.captured(2));
  return title.isEmpty() ? read_out_number(v) : QString("%1 %2").arg(read_out_number(v), title);
}

bool hoverable(const QAbstractSeries& s) { return s.isVisible() && !s.property(kNoHover).toBool(); }

// The read-out of the Gantt bar (of any visible area) that holds `position`.
QString bar_at(QChart& chart, QPointF position) {
  for (QAbstractSeries* s : chart.series()) {
    const QVariantList bars = s->property(kHoverBars).toList();
    if (bars.isEmpty() || !hoverable(*s)) continue;
    const QPointF v = chart.mapToValue(position, s);
    const QStringList texts = s->property(kHoverLabels).toStringList();
    for (qsizetype i = 0; i < bars.size() && i < texts.size(); ++i)
      if (bars[i].toRectF().contains(v)) return texts[i];
  }
  return {};
}

QString point_at(QChart& chart, QPointF position, double radius_px) {
  double best = radius_px;
  QXYSeries* best_series = nullptr;
  qsizetype best_index = -1;
  for (QAbstractSeries* s : chart.series()) {
    auto* xy = qobject_cast<QXYSeries*>(s);
    if (!xy || !hoverable(*xy)) continue;
    const QList<QPointF> points = xy->points();
    for (qsizetype i = 0; i < points.size(); ++i) {
      const double d = QLineF(chart.mapToPosition(points[i], xy), position).length();
      if (d < best) {  // the first of equals: a solid part before its dashed continuation
        best = d;
        best_series = xy;
        best_index = i;
      }
    }
  }
  if (!best_series) return {};
  const QPointF p = best_series->at(best_index);
  QStringList lines;
  lines << best_series->name();  // the design ("... (no fit)" on a dashed part)
  const QStringList labels = best_series->property(kHoverLabels).toStringList();
  if (best_index < labels.size() && !labels[best_index].isEmpty()) lines << labels[best_index];
  lines << axis_line(attached(*best_series, Qt::Horizontal), p.x());
  lines << axis_line(attached(*best_series, Qt::Vertical), p.y());
  lines.removeAll(QString());
  return lines.join('\n');
}

QString group_of(const QAbstractSeries& s) {
  const QString g = s.property(kLegendGroup).toString();
  return g.isEmpty() ? s.name() : g;
}

// A marker greyed out while its series are hidden; the builder's brushes come back after.
void grey(QLegendMarker& m, bool hidden) {
  if (!m.property(kBrush).isValid()) {
    m.setProperty(kBrush, QVariant::fromValue(m.brush()));
    m.setProperty(kLabelBrush, QVariant::fromValue(m.labelBrush()));
  }
  QBrush brush = m.property(kBrush).value<QBrush>();
  QBrush label = m.property(kLabelBrush).value<QBrush>();
  if (hidden) {
    QColor c = brush.color();
    c.setAlphaF(0.25);
    brush.setColor(c);
    label.setColor(QColor(0x99, 0x99, 0x99));
  }
  m.setBrush(brush);
  m.setLabelBrush(label);
}

}  // namespace

QString read_out_number(double v) { return QString::number(v, 'g', 6); }

QString read_out(QChart& chart, QPointF position, double radius_px) {
  if (!chart.plotArea().contains(position)) return {};
  const QString bar = bar_at(chart, position);
  return bar.isEmpty() ? point_at(chart, position, radius_px) : bar;
}

std::vector<AxisRange> axis_ranges(const QChart& chart) {
  std::vector<AxisRange> out;
  for (QAbstractAxis* a : chart.axes()) {
    if (auto* v = qobject_cast<QValueAxis*>(a)) out.push_back({a, v->min(), v->max()});
    else if (auto* l = qobject_cast<QLogValueAxis*>(a)) out.push_back({a, l->min(), l->max()});
  }
  return out;
}

void restore_axis_ranges(QChart& chart, const std::vector<AxisRange>& ranges, bool forget_history) {
  if (forget_history) chart.zoomReset();
  const QList<QAbstractAxis*> axes = chart.axes();
  for (const AxisRange& r : ranges) {
    if (!axes.contains(r.axis)) continue;
    if (auto* v = qobject_cast<QValueAxis*>(r.axis)) v->setRange(r.min, r.max);
    else if (auto* l = qobject_cast<QLogValueAxis*>(r.axis)) l->setRange(r.min, r.max);
  }
}

bool wider_than(const std::vector<AxisRange>& now, const std::vector<AxisRange>& original) {
  for (const AxisRange& n : now)
    for (const AxisRange& o : original)
      if (n.axis == o.axis && (n.min < o.min || n.max > o.max)) return true;
  return false;
}

void round_zoomed_ticks(QChart& chart, const std::vector<AxisRange>& built) {
  for (const AxisRange& b : built) {
    auto* axis = qobject_cast<QValueAxis*>(b.axis);
    // Category axes (Gantt rows) label bands, not ticks.
    if (!axis || qobject_cast<QCategoryAxis*>(b.axis) || !chart.axes().contains(b.axis)) continue;
    const double span = axis->max() - axis->min();
    if ((axis->min() == b.min && axis->max() == b.max) || !(span > 0)) {
      axis->setTickType(QValueAxis::TicksFixed);
      continue;
    }
    const double raw = span / 5, decade = std::pow(10.0, std::floor(std::log10(raw)));
    const double step = raw / decade < 1.5 ? decade : raw / decade < 3.5 ? 2 * decade : raw / decade < 7.5 ? 5 * decade
                                                                                                       : 10 * decade;
    axis->setTickAnchor(0);
    axis->setTickInterval(step);
    axis->setTickType(QValueAxis::TicksDynamic);
  }
}

void zoom_about(QChart& chart, QPointF centre, double factor) {
  if (!(factor > 0) || !std::isfinite(factor)) return;
  const QRectF plot = chart.plotArea();
  // The plot rectangle scaled by 1 / factor about the centre; Qt maps it to values per
  // axis (log axes in log space), so the value under the centre stays under it.
  const QPointF c = plot.contains(centre) ? centre : plot.center();
  const QRectF rect(c + (plot.topLeft() - c) / factor, c + (plot.bottomRight() - c) / factor);
  chart.zoomIn(rect);
}

void pan_by(QChart& chart, QPointF delta) {
  // scroll(dx, dy) moves the view right and up; dragging moves the content, so the other way.
  chart.scroll(-delta.x(), delta.y());
}

void enable_legend_toggling(QChart& chart) {
  for (QLegendMarker* m : chart.legend()->markers()) {
    m->setProperty(kEntry, m->isVisible());
    QObject::connect(m, &QLegendMarker::clicked, &chart, [&chart, m] { toggle_legend_entry(chart, *m); });
  }
}

bool toggle_legend_entry(QChart& chart, QLegendMarker& marker) {
  if (!marker.series()) return false;
  const QString group = group_of(*marker.series());
  const bool show = !marker.series()->isVisible();
  for (QAbstractSeries* s : chart.series()) {
    if (group_of(*s) != group) continue;
    s->setVisible(show);
    // Qt hides a hidden series' marker too; keep the entry so it can be clicked back.
    for (QLegendMarker* m : chart.legend()->markers(s)) {
      const QVariant entry = m->property(kEntry);
      m->setVisible(entry.isValid() ? entry.toBool() : true);
      grey(*m, !show);
    }
  }
  return show;
}

}  // namespace hdlab::charts
