#pragma once
// Shared look of every chart: fonts, legend, axes from an Axis spec and a data range.
#include <limits>
#include <string>

#include <QtCharts/QAbstractAxis>
#include <QtCharts/QChart>

#include "hdlab/charts/chart_data.hpp"

namespace hdlab::charts::detail {

// The data extent of one axis; values outside a log axis's domain are ignored.
struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double v, bool log);
  bool empty() const { return !(lo <= hi); }
};

// What the builders leave on a series for interact.hpp (Qt dynamic properties):
//   kHoverLabels  QStringList, one per point of an XY series (labels of the spec, empty
//                 strings where none) or one read-out per bar of a Gantt area
//   kHoverBars    QVariantList of QRectF: the Gantt bars of an area in data coordinates
//   kNoHover      true: a guide (reference line, y = x) that has no read-out
//   kLegendGroup  QString: series toggled together from the legend (default: the name)
inline constexpr const char* kHoverLabels = "hdlab_hover_labels";
inline constexpr const char* kHoverBars = "hdlab_hover_bars";
inline constexpr const char* kNoHover = "hdlab_no_hover";
inline constexpr const char* kLegendGroup = "hdlab_legend_group";

// A fresh chart with the house style and a title.
QChart* new_chart(const std::string& title);
// An axis for `spec` over `range` (padded; powers of the base for log axes).
QAbstractAxis* make_axis(const Axis& spec, Range range);
// True when a point can be drawn on axes of these kinds.
bool drawable(const XY& p, const Axis& x, const Axis& y);

}  // namespace hdlab::charts::detail
