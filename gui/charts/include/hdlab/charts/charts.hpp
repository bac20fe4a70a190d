#pragma once
// QChart builders over the plain data of chart_data.hpp. The caller owns the chart
// (hand it to a QChartView, or to export.hpp). A QApplication must exist (export.hpp's
// OffscreenApplication makes one where there is none).
#include <memory>
#include <vector>

#include <QColor>
#include <QtCharts/QChart>

#include "hdlab/charts/chart_data.hpp"
#include "hdlab/gui_core/validation_points.hpp"

namespace hdlab::charts {

// Colour-blind-safe palette (Okabe-Ito order); index wraps around.
QColor palette(int index);

std::unique_ptr<QChart> build_line_chart(const LineChart& spec);
std::unique_ptr<QChart> build_scatter_chart(const ScatterChart& spec);
std::unique_ptr<QChart> build_gantt_chart(const GanttChart& spec);

// Thins the ticks (every k-th of a linear axis, a coarser base of a log axis) and moves a
// legend that does not fit in one row to the right, so that no label is elided at the
// chart's current size; call after sizing the chart (export.hpp and the GUI's chart
// panels do). Undone as the chart grows again: the builders' choices are the starting point.
void fit_labels(QChart& chart);

// Predicted against measured seconds, log-log, one colour per design, the y = x line
// and a +-20 % band; the title carries the median error (gui_core::summarize).
ScatterChart validation_scatter(const std::vector<gui_core::ValidationPoint>& points,
                                const std::string& title = "Predicted vs measured");

}  // namespace hdlab::charts
