#pragma once
// What a chart shows, as plain data (no Qt in this header): the GUI and the CLI fill
// these from core results and hand them to charts.hpp to build a QChart, or straight to
// export.hpp to write a PNG/SVG. Axis titles carry the unit: "decode throughput (tokens/s)".
#include <string>
#include <vector>

namespace hdlab::charts {

struct XY {
  double x = 0;
  double y = 0;
};

enum class LineStyle { solid, dashed, dotted, dash_dot, dash_dot_dot };

struct Axis {
  std::string title;  // with the unit in parentheses
  double log_base = 0;  // 0: linear; 2 or 10: logarithmic (non-positive values are dropped)
};

struct LineSeries {
  std::string name;
  std::vector<XY> points;
  LineStyle style = LineStyle::solid;
  bool markers = true;
  int colour = -1;  // index into palette(); -1: the series' position
  bool in_legend = true;  // false: drawn without a legend entry (a caption explains it)
  // Per point, in the order of `points` (empty: none): shown in the hover read-out under
  // the series name, e.g. the validation case "decode b=8 ctx=4096".
  std::vector<std::string> labels{};
  // Series of one group are shown and hidden together from the legend (a design's solid
  // and dashed parts); empty: the series' own name.
  std::string group{};
};

// A horizontal reference across the whole x range (e.g. "baseline = 1x", "device memory").
struct ReferenceLine {
  std::string name;
  double y = 0;
};

struct LineChart {
  std::string title;
  Axis x, y;
  std::vector<LineSeries> series;
  std::vector<ReferenceLine> references;
};

struct ScatterGroup {
  std::string name;  // one colour per group (design)
  std::vector<XY> points;
  // What each point is (a case label, "decode b=8 ctx=4096"), parallel to points; empty,
  // or one per point (hover read-outs show it).
  std::vector<std::string> labels{};
};

struct ScatterChart {
  std::string title;
  Axis x, y;
  std::vector<ScatterGroup> groups;
  bool identity_line = false;  // y = x
  double band = 0;             // > 0: also y = (1 +- band) x, e.g. 0.2 for +-20 %
};

// One bar of a Gantt chart: a task on a row (device) from start to end.
struct GanttBar {
  int row = 0;
  double start_s = 0;
  double end_s = 0;
  int category = 0;  // index into GanttChart::categories (colour and legend)
  int shade = 0;     // 0 or 1: alternates neighbouring bars of one category (micro-batches)
  // Shown in the hover read-out after the row and category, e.g. "micro-batch 3"; the
  // read-out adds the start and duration in the chart's time unit.
  std::string label{};
};

struct GanttChart {
  std::string title;
  std::string warning;                  // non-empty: under the title, in red (e.g. memory over capacity)
  std::vector<std::string> rows;        // top to bottom, e.g. "device 0"
  std::vector<std::string> categories;  // e.g. "forward", "backward"
  std::vector<GanttBar> bars;
  double time_end_s = 0;  // > 0: the time axis runs to here (shared by Gantts compared side by side)
};

}  // namespace hdlab::charts
