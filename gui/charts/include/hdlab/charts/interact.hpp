#pragma once
// What makes a built chart a planning instrument rather than a picture: the read-out of
// the point or bar under the mouse, zoom and pan that keep log axes valid and reset
// exactly, and legend entries that hide and show their series. The builders of charts.hpp
// leave what the read-out needs on the series (per-point labels, Gantt bars in data
// coordinates); these functions work on any chart they built, whatever view shows it.
#include <vector>

#include <QPointF>
#include <QString>
#include <QtCharts/QAbstractAxis>
#include <QtCharts/QChart>
#include <QtCharts/QLegendMarker>

namespace hdlab::charts {

// The read-out at `position` (chart item coordinates, as QChart::mapToPosition gives):
// the Gantt bar under it, else the nearest visible data point within `radius_px`; empty
// when there is none. One item a line:
//   point: series name (the design), the point's label if any, then x and y with the units
//          of the axis titles ("batch: 32 sequences", "1234.5 tokens/s")
//   bar:   device, micro-batch, pass, "start: 1.25 ms", "duration: 0.5 ms"
// Values are printed with 6 significant digits (read_out_number).
QString read_out(QChart& chart, QPointF position, double radius_px = 12);
QString read_out_number(double v);

// The visible range of every value axis (log ones included), to put back exactly.
struct AxisRange {
  QAbstractAxis* axis = nullptr;
  double min = 0;
  double max = 0;
};
std::vector<AxisRange> axis_ranges(const QChart& chart);
// With `forget_history`, Qt's own zoom history goes too (QChart::zoomReset), so a later
// zoom starts from these ranges.
void restore_axis_ranges(QChart& chart, const std::vector<AxisRange>& ranges, bool forget_history = true);
// True when some axis of `now` shows more than its range in `original` (zoomed out past
// the builder's view), false when the axes differ.
bool wider_than(const std::vector<AxisRange>& now, const std::vector<AxisRange>& original);

// Ticks for the range shown: a linear axis zoomed away from its `built` range gets ticks
// at round multiples (1, 2 or 5 x 10^k, about 5 of them) instead of fractions of the new
// range; one back at its built range gets the builder's ticks again. Call before fit_labels.
void round_zoomed_ticks(QChart& chart, const std::vector<AxisRange>& built);

// Zooms by `factor` (> 1 in, < 1 out) about `centre` (chart item coordinates) so the value
// under it stays put; on a log axis in log space, so its range stays positive.
void zoom_about(QChart& chart, QPointF centre, double factor);
// Moves the view with the content dragged by `delta` pixels (log axes in log space).
void pan_by(QChart& chart, QPointF delta);

// Clicking a legend entry hides its series (every series of its group: a design's dashed
// part, a Gantt category's bars on every device) and greys the entry; clicking it again
// shows them. Call once, after the chart is built.
void enable_legend_toggling(QChart& chart);
// What a click on `marker` does; returns whether its series are now visible.
bool toggle_legend_entry(QChart& chart, QLegendMarker& marker);

}  // namespace hdlab::charts
